/* matrix-matrix product, i-j-k order */
double A[N][N], B[N][N], C[N][N];
for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j)
        for (int k = 0; k < N; ++k)
            C[i][j] += A[i][k] * B[k][j];
