double a[L][M][N];
double b[L][M][N];
double c[L][M][N];
float d[L][M][N];
for (int k = 0; k < L; ++k)
  for (int j = 2; j < M-2; ++j)
    for (int i = 1; i < N-1; ++i)
      a[k][j][i] = (b[k][j][i] + b[k][j][i] + c[k][j][i] + c[k][j+2][i] + c[k][j][i+1] + d[k][j][i] + d[k][j][i+1]) / 2.0;
