double a[M][N];
double b[M][N];
for (int i = 1; i < N - 1; ++i)
  for (int j = 1; j < M - 1; ++j)
    b[j][i] = (a[j][i - 1] + a[j][i + 1] + a[j - 1][i] + a[j + 1][i]) * 0.25;
