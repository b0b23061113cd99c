double a[M][N];
float b[M][N];
double c[M][N];
double d[M][N];
for (int j = 1; j < M-1; ++j)
  for (int i = 1; i < N-1; ++i)
    a[j][i] = b[j][i] + b[j-1][i] + b[j][i+1] + c[j][i] + c[j-1][i] + c[j+1][i] + d[j][i] + d[j][i] + d[j][i];
