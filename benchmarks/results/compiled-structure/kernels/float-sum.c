/* float sum: gcc -O3 keeps the source order (no -ffast-math) */
float a[N];
float s;
for (int i = 0; i < N; ++i)
    s += a[i];
