float a[M][2*N];
double b[M][N];
float c[M][2*N];
double s;
for (int j = 2; j < M-2; ++j)
  for (int i = 2; i < N-2; ++i)
    s = s + a[j-2][2*i+1] + a[j][2*i+1] + a[j-2][2*i+1] * b[j+2][i+2] * c[j-1][2*i+1] - sqrt(c[j][2*i]);
