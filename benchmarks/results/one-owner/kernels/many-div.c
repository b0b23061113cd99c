double a[N], b[N];
for (int i = 0; i < N; ++i)
    a[i] = b[i] / (b[i] / (b[i] / (b[i] / (b[i] / (b[i] / (b[i] / (b[i] / 3.0)))))));
