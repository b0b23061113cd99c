float a[N];
double b[N];
double c[N];
double d[N];
for (int i = 1; i < N-1; ++i)
  a[i] = (b[i] + c[i] + d[i] + d[i+1]) / 2.0;
