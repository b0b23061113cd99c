/* PCG: matrix-free SpMVM, 2D 5-point stencil (cross-architecture-machine-models.txt §5.1,
   Algorithm 2): two FMAs, two additions, one multiplication, one store, five loads. */
double x[M][N], y[M][N];
double a, b, c;

for (int j = 1; j < M - 1; ++j)
    for (int i = 1; i < N - 1; ++i)
        y[j][i] = a * x[j][i] + b * (x[j][i - 1] + x[j][i + 1]) + c * (x[j - 1][i] + x[j + 1][i]);
