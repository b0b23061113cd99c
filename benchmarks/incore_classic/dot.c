/* dot product: s += a[i] * b[i] */
double a[N];
double b[N];
double s;

for (int i = 0; i < N; ++i)
    s = s + a[i] * b[i];
