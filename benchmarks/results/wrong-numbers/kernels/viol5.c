double a[M][N];
double b[M][N];
float c[M][N];
double c0, c1;
for (int j = 2; j < M-2; ++j)
  for (int i = 2; i < N-2; ++i)
    a[j][i] = b[j][i+2] - b[j+1][i-2] + sqrt(b[j][i+1]) - c[j+2][i-1] * c[j+1][i+2] + sqrt(c[j-2][i]);
