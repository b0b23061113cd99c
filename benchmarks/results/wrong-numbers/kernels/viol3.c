float a[M][N];
double b[M][N];
float c[M][N];
float d[M][N];
double c0, c1;
for (int j = 1; j < M-1; ++j)
  for (int i = 2; i < N-2; ++i)
    a[j][i] = b[j+1][i-1] + b[j][i-2] + c0 * c[j+1][i-1] * d[j-1][i-2];
