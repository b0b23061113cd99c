/* Schoenauer triad: a[i] = b[i] + c[i] * d[i] */
double a[N];
double b[N];
double c[N];
double d[N];

for (int i = 0; i < N; ++i)
    a[i] = b[i] + c[i] * d[i];
