double a[N], b[4*N];
for (int i = 0; i < N; ++i)
  a[i] = b[4*i] + 1.0;
