double a[N], b[2*N];
for (int i = 0; i < N; ++i)
  a[i] = b[2*i] + 1.0;
