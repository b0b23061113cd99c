/* Hand-written timing harness for benchmarks/bench_vs_hand.py: the kernel in its own
 * noinline function, arrays from aligned_alloc, one warm-up call, calls per run doubled until
 * a run lasts 10 ms, 10 runs, the fastest printed as seconds per iteration. Pinned with
 * taskset by the script. Independent of loopmodel's code generator. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double *arr(size_t n)
{
    double *p = aligned_alloc(4096, ((n * sizeof(double) + 4095) / 4096) * 4096);
    if (!p) { fprintf(stderr, "out of memory\n"); exit(2); }
    for (size_t i = 0; i < n; ++i) p[i] = 1.0 + (double)(i % 7) / 7;
    return p;
}

#define TIME_IT(CALL, ITERATIONS)                                              \
    do {                                                                       \
        CALL;                                                                  \
        long reps = 1;                                                         \
        for (;; reps *= 2) {                                                   \
            double t0 = now();                                                 \
            for (long r = 0; r < reps; ++r) CALL;                              \
            if (now() - t0 >= 0.01) break;                                     \
        }                                                                      \
        double best = 1e300;                                                   \
        for (int run = 0; run < 10; ++run) {                                   \
            double t0 = now();                                                 \
            for (long r = 0; r < reps; ++r) CALL;                              \
            double t = now() - t0;                                             \
            if (t < best) best = t;                                            \
        }                                                                      \
        printf("%.6e\n", best / reps / (double)(ITERATIONS));                  \
    } while (0)
