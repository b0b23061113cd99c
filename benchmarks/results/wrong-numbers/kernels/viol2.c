float a[L][M][N];
float b[L][M][N];
for (int k = 1; k < L-1; ++k)
  for (int j = 2; j < M-2; ++j)
    for (int i = 2; i < N-2; ++i)
      a[k][j][i] = b[k-1][j-2][i-2] + b[k][j-1][i+2];
