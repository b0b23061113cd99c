/* dense matrix-vector product y = A x (row-major A) */
double A[M][N];
double x[N], y[M];

for (int j = 0; j < M; ++j)
    for (int i = 0; i < N; ++i)
        y[j] += A[j][i] * x[i];
