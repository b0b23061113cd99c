float a[L][M][N];
double b[L][M][N];
double c[L][M][N];
float d[L][M][N];
for (int k = 2; k < L-2; ++k)
  for (int j = 1; j < M-1; ++j)
    for (int i = 0; i < N; ++i)
      a[k][j][i] = (b[k][j][i] + b[k][j][i] + c[k][j+1][i] + c[k-2][j][i] + c[k][j][i] + d[k][j][i] + d[k][j][i]) / 2.0;
