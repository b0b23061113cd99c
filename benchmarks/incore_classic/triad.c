/* STREAM triad: a[i] = b[i] + s * c[i] */
double a[N];
double b[N];
double c[N];
double s;

for (int i = 0; i < N; ++i)
    a[i] = b[i] + s * c[i];
