/* 2-D 5-point Gauss-Seidel, in place */
double a[M][N];
double s;

for (int j = 1; j < M-1; ++j)
    for (int i = 1; i < N-1; ++i)
        a[j][i] = (a[j][i-1] + a[j][i+1] + a[j-1][i] + a[j+1][i]) * s;
