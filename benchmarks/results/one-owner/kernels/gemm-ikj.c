/* gemm in i-k-j order: the row C[i][:] is reused across k */
double A[N][N], B[N][N], C[N][N];

for (int i = 0; i < N; ++i)
    for (int k = 0; k < N; ++k)
        for (int j = 0; j < N; ++j)
            C[i][j] += A[i][k] * B[k][j];
