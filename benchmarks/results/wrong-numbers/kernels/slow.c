double a[M][N];
double b[M][N];
double c[M][3*N];
double c0, c1, s;
for (int j = 2; j < M-2; ++j)
  for (int i = 2; i < N-2; ++i)
    s = s + c1 * a[j-1][i+2] - a[j+2][i+1] * a[j-2][i+1] * b[j-2][i-2] + b[j+1][i+2] + c[j][3*i];
