/* 4D 9-point star stencil: one cache line of b is less than a row of a (N=20 doubles: 2.5 CL) */
double a[N][N][N][N];
double b[N][N][N][N];

for (int l = 1; l < N-1; ++l)
    for (int k = 1; k < N-1; ++k)
        for (int j = 1; j < N-1; ++j)
            for (int i = 1; i < N-1; ++i)
                b[l][k][j][i] = a[l][k][j][i-1] + a[l][k][j][i+1]
                              + a[l][k][j-1][i] + a[l][k][j+1][i]
                              + a[l][k-1][j][i] + a[l][k+1][j][i]
                              + a[l-1][k][j][i] + a[l+1][k][j][i];
