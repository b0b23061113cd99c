/* vector add: a[i] = b[i] + c[i] */
double a[N];
double b[N];
double c[N];

for (int i = 0; i < N; ++i)
    a[i] = b[i] + c[i];
