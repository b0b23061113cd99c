/* daxpby (cross-architecture-machine-models.txt §5.1): y[i] = a*x[i] + b*y[i] */
double x[N], y[N];
double a, b;

for (int i = 0; i < N; ++i)
    y[i] = a * x[i] + b * y[i];
