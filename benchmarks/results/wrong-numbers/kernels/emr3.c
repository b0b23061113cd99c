double a[L][M][N];
double b[L][M][N];
double c[L][M][N];
float d[L][M][N];
for (int k = 0; k < L; ++k)
  for (int j = 0; j < M; ++j)
    for (int i = 0; i < N; ++i)
      a[k][j][i] = (b[k][j][i] + b[k][j][i] + c[k][j][i] + c[k][j][i] + c[k][j][i] + d[k][j][i]) / 2.0;
