double a[M];
double s;
for (int j = 0; j < M; ++j)
  for (int i = 0; i < N; ++i)
    s = s + a[j] * 1.5;
