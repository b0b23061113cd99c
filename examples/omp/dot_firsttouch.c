/* Dot product with first-touch initialisation: x and y are written by a static parallel
 * for with the same schedule as the reduction, so each thread reads back the chunk it wrote
 * itself (Modified in its own cache: no coherence traffic), unlike dot_thread0.c. The reduction is 'simd' (vectorized
 * partial sums), as in dot_thread0.c. */
#define N 1000000
double x[N], y[N];
double s;

#pragma omp parallel for schedule(static)
for (int i = 0; i < N; ++i) {
    x[i] = 1.0;
    y[i] = 2.0;
}

s = 0.0;
#pragma omp parallel for simd reduction(+:s) schedule(static)
for (int i = 0; i < N; ++i)
    s += x[i] * y[i];
