double x[M][N];
for (int j = 1; j < M - 1; ++j)
    for (int i = 1; i < N - 1; ++i)
        x[j][i] = 0.25 * (x[j - 1][i] + x[j + 1][i] + x[j][i - 1] + x[j][i + 1]);
