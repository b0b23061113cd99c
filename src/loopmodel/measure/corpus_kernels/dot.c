/* dot product, reduction into a scalar */
double x[N], y[N];
double s;

for (int i = 0; i < N; ++i)
    s += x[i] * y[i];
