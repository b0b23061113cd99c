/* copy: a[i] = b[i] */
double a[N];
double b[N];

for (int i = 0; i < N; ++i)
    a[i] = b[i];
