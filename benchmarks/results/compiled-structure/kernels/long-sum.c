/* long sum: integer addition is associative, gcc vectorises it */
long a[N];
long s;
for (int i = 0; i < N; ++i)
    s += a[i];
