double a[L][M][N];
double b[L][M][N];
double c[L][M][N];
for (int k = 0; k < L; ++k)
  for (int j = 2; j < M-2; ++j)
    for (int i = 0; i < N; ++i)
      a[k][j][i] = (a[k][j][i] + b[k][j+2][i] + c[k][j][i]) / 2.0;
