/* element-wise division: a[i] = b[i] / c[i] (double) */
double a[N], b[N], c[N];

for (int i = 0; i < N; ++i)
    a[i] = b[i] / c[i];
