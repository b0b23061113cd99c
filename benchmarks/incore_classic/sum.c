/* sum reduction: s += a[i] */
double a[N];
double s;

for (int i = 0; i < N; ++i)
    s = s + a[i];
