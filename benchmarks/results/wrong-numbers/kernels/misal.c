float a[2*N];
double s;
for (int i = 0; i < N; ++i)
  s = s + a[2*i+1];
