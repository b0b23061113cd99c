/* 3-D radius-3 star stencil (19 points) */
double a[M][L][N];
double b[M][L][N];
double c0, c1, c2, c3;

for (int k = 3; k < M-3; ++k)
    for (int j = 3; j < L-3; ++j)
        for (int i = 3; i < N-3; ++i)
            b[k][j][i] = c0 * a[k][j][i]
                       + c1 * (a[k][j][i-1] + a[k][j][i+1] + a[k][j-1][i] + a[k][j+1][i] + a[k-1][j][i] + a[k+1][j][i])
                       + c2 * (a[k][j][i-2] + a[k][j][i+2] + a[k][j-2][i] + a[k][j+2][i] + a[k-2][j][i] + a[k+2][j][i])
                       + c3 * (a[k][j][i-3] + a[k][j][i+3] + a[k][j-3][i] + a[k][j+3][i] + a[k-3][j][i] + a[k+3][j][i]);
