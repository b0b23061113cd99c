double a[M][N];
double b[M][N];
float c[M][N];
for (int j = 1; j < M-1; ++j)
  for (int i = 1; i < N-1; ++i)
    a[j][i] = (a[j][i] + b[j][i] + b[j][i] + b[j][i-1] + c[j+1][i]) / 2.0;
