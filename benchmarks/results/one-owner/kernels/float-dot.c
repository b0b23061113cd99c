/* float dot product: two arrays of N floats reduced into a scalar */
float a[N], b[N];
float s;

for (int i = 0; i < N; ++i)
    s = s + a[i] * b[i];
