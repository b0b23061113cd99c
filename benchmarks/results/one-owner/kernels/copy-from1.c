/* copy starting at index 1 */
double a[N], b[N];

for (int i = 1; i < N; ++i)
    a[i] = b[i];
