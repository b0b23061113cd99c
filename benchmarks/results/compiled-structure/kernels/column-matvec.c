/* matrix-vector product, column-wise traversal (inner loop down a column of A) */
double A[N][M], x[N], y[M];
for (int j = 0; j < M; ++j)
    for (int i = 0; i < N; ++i)
        y[j] += A[i][j] * x[i];
