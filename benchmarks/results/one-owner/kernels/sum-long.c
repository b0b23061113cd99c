/* integer sum reduction */
long a[N];
long s;

for (int i = 0; i < N; ++i)
    s += a[i];
