/* float sum reduction */
float a[N];
float s;

for (int i = 0; i < N; ++i)
    s += a[i];
