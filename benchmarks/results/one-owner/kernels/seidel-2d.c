/* PolyBench seidel-2d, one time step: the inner two loops (Gauss-Seidel, 9-point) */
double a[N][N];

for (int i = 1; i < N - 1; ++i)
    for (int j = 1; j < N - 1; ++j)
        a[i][j] = (a[i-1][j-1] + a[i-1][j] + a[i-1][j+1]
                 + a[i][j-1] + a[i][j] + a[i][j+1]
                 + a[i+1][j-1] + a[i+1][j] + a[i+1][j+1]) / 9.0;
