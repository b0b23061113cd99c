float a[L][M][N];
double b[L][M][4*N];
double c0, c1;
for (int k = 2; k < L-2; ++k)
  for (int j = 1; j < M-1; ++j)
    for (int i = 2; i < N-2; ++i)
      a[k][j][i] = a[k][j][i] - a[k][j][i] - b[k][j-1][4*i-2] - b[k+1][j+1][4*i+1] - b[k-2][j][4*i-2];
