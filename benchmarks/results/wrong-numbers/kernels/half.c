double a[N], b[N];
for (int i = 0; i < N; ++i)
  a[i] = b[i] / 2.0 + b[i] / 3.0;
