/* int32 triad: a[i] = b[i] + s * c[i] (no floating-point operations) */
int a[N], b[N], c[N];
int s;

for (int i = 0; i < N; ++i)
    a[i] = b[i] + s * c[i];
