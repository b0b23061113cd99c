double a[N];
double b[N];
float c[3*N];
for (int i = 2; i < N-2; ++i)
  a[i] = (b[i-2] - b[i] * b[i-2] + c[3*i-1]) / (1.0 + c[3*i-1]);
