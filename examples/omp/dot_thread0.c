/* Dot product whose arrays are first touched by thread 0: the initialisation is a sequential
 * loop, so every chunk of x and y starts Modified in thread 0's cache (and its NUMA node);
 * the parallel reduction then reads chunks that other threads do not own
 * (benchmark-based-coherence-model.txt §III: M_{0} -> S transitions for threads t > 0). The reduction is 'simd', so gcc
 * vectorizes it (partial sums) as a BLAS ddot would; without it the loop is bound by the
 * add latency, and loopmodel omp says so (in-core bound). */
#define N 1000000
double x[N], y[N];
double s;

for (int i = 0; i < N; ++i) {
    x[i] = 1.0;
    y[i] = 2.0;
}

s = 0.0;
#pragma omp parallel for simd reduction(+:s) schedule(static)
for (int i = 0; i < N; ++i)
    s += x[i] * y[i];
