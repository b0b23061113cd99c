/* y reused across the outer loop: y[j] += A[i][j] */
double A[M][N];
double y[N];

for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
        y[j] = y[j] + A[i][j];
