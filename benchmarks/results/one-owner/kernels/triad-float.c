/* STREAM triad in single precision */
float a[N], b[N], c[N];
float s;

for (int i = 0; i < N; ++i)
    a[i] = b[i] + s * c[i];
