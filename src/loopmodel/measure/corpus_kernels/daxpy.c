/* daxpy: y[i] = a * x[i] + y[i] */
double x[N], y[N];
double a;

for (int i = 0; i < N; ++i)
    y[i] = a * x[i] + y[i];
