double a[M][N];
double b[M][N];
for (int i = 0; i < N; ++i)
  for (int j = 0; j < M; ++j)
    b[j][i] = a[j][i];
