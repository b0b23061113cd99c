double a[N], b[N];
for (int i = 0; i < N; ++i)
    a[i] = sqrt(b[i]) / b[i] / b[i];
