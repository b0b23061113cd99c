/* copy from a neighbour */
double a[N], b[N];

for (int i = 0; i < N - 1; ++i)
    a[i] = b[i + 1];
