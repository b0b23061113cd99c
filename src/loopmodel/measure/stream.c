/* loopmodel streaming benchmark (OpenMP, double precision).
 *
 *   daxpby:  y[i] = a*x[i] + b*y[i]      (2 arrays)
 *   triad:   a[i] = b[i] + s*c[i]        (3 arrays)
 *
 * Usage:  stream KERNEL N REPETITIONS MIN_TIME_S
 *
 * The arrays (N elements each) are allocated page aligned and initialised in parallel with
 * the same schedule(static) loop as the kernel, so that every thread first-touches the pages
 * it streams later (NUMA placement). One untimed sweep warms up; then each of REPETITIONS
 * repetitions runs the kernel until at least MIN_TIME_S seconds have passed and records the
 * time per sweep. An opaque call after every sweep keeps the compiler from merging or
 * eliding sweeps; the values are chosen so that every sweep reproduces the same data
 * (daxpby: 1*1 + 0.5*2 = 2, triad: 1 + 3*2 = 7) and are checked after the last sweep.
 *
 * Output: one JSON line on stdout (times in seconds); errors: one line on stderr, exit status
 * 2 (usage, allocation) or 3 (wrong results).
 */
#ifndef _OPENMP
#error "loopmodel measure needs OpenMP: add -fopenmp (gcc, clang) or -qopenmp (icx) to the flags"
#endif
#define _POSIX_C_SOURCE 200112L
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef LM_ALIGN
#define LM_ALIGN 4096
#endif

/* Opaque to the optimiser: the arrays may be read and written here, so no sweep can be
   dropped or merged with the next one. */
__attribute__((noinline)) static void lm_sink(void *p, void *q, void *r)
{
    __asm__ volatile("" : : "r"(p), "r"(q), "r"(r) : "memory");
}

static double *lm_alloc(long n)
{
    void *p = NULL;
    if (posix_memalign(&p, LM_ALIGN, (size_t)n * sizeof(double)) != 0)
        return NULL;
    return (double *)p;
}

static void init_daxpby(long n, double *restrict x, double *restrict y)
{
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) {
        x[i] = 1.0;
        y[i] = 2.0;
    }
}

static void sweep_daxpby(long n, double a, double b, const double *restrict x, double *restrict y)
{
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i)
        y[i] = a * x[i] + b * y[i];
}

static void init_triad(long n, double *restrict a, double *restrict b, double *restrict c)
{
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) {
        a[i] = 0.0;
        b[i] = 1.0;
        c[i] = 2.0;
    }
}

static void sweep_triad(long n, double s, double *restrict a, const double *restrict b,
                        const double *restrict c)
{
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i)
        a[i] = b[i] + s * c[i];
}

static long count_wrong(long n, const double *v, double expected)
{
    long wrong = 0;
#pragma omp parallel for schedule(static) reduction(+ : wrong)
    for (long i = 0; i < n; ++i)
        wrong += (v[i] != expected);
    return wrong;
}

static int cmp_double(const void *p, const void *q)
{
    double a = *(const double *)p, b = *(const double *)q;
    return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s daxpby|triad N REPETITIONS MIN_TIME_S\n", argv[0]);
        return 2;
    }
    const char *kernel = argv[1];
    char *end;
    long n = strtol(argv[2], &end, 10);
    if (*end || n < 1) {
        fprintf(stderr, "bad N '%s'\n", argv[2]);
        return 2;
    }
    long reps = strtol(argv[3], &end, 10);
    if (*end || reps < 1 || reps > 1000000) {
        fprintf(stderr, "bad REPETITIONS '%s'\n", argv[3]);
        return 2;
    }
    double min_time = strtod(argv[4], &end);
    if (*end || !(min_time > 0.0)) {
        fprintf(stderr, "bad MIN_TIME_S '%s'\n", argv[4]);
        return 2;
    }
    int is_triad = strcmp(kernel, "triad") == 0;
    if (!is_triad && strcmp(kernel, "daxpby") != 0) {
        fprintf(stderr, "unknown kernel '%s' (daxpby or triad)\n", kernel);
        return 2;
    }

    int nthreads = 0;
#pragma omp parallel
    {
#pragma omp single
        nthreads = omp_get_num_threads();
    }

    double *v0 = lm_alloc(n), *v1 = lm_alloc(n), *v2 = is_triad ? lm_alloc(n) : NULL;
    if (!v0 || !v1 || (is_triad && !v2)) {
        fprintf(stderr, "cannot allocate %d arrays of %ld doubles\n", is_triad ? 3 : 2, n);
        return 2;
    }
    /* daxpby: v0 = x, v1 = y;  triad: v0 = a, v1 = b, v2 = c */
    const double a = 1.0, b = 0.5, s = 3.0;
    if (is_triad)
        init_triad(n, v0, v1, v2);
    else
        init_daxpby(n, v0, v1);

    double *times = malloc((size_t)reps * sizeof(double));
    long *sweeps = malloc((size_t)reps * sizeof(long));
    if (!times || !sweeps) {
        fprintf(stderr, "cannot allocate result arrays\n");
        return 2;
    }

    /* warm-up sweep (not timed) */
    if (is_triad)
        sweep_triad(n, s, v0, v1, v2);
    else
        sweep_daxpby(n, a, b, v0, v1);
    lm_sink(v0, v1, v2);

    for (long r = 0; r < reps; ++r) {
        long k = 0;
        double t0 = omp_get_wtime(), t;
        do {
            if (is_triad)
                sweep_triad(n, s, v0, v1, v2);
            else
                sweep_daxpby(n, a, b, v0, v1);
            lm_sink(v0, v1, v2);
            ++k;
            t = omp_get_wtime();
        } while (t - t0 < min_time);
        times[r] = (t - t0) / (double)k;
        sweeps[r] = k;
    }

    long wrong = is_triad ? count_wrong(n, v0, 7.0) : count_wrong(n, v1, 2.0);
    if (wrong) {
        fprintf(stderr, "wrong results in %ld of %ld elements\n", wrong, n);
        return 3;
    }

    double *sorted = malloc((size_t)reps * sizeof(double));
    if (!sorted) {
        fprintf(stderr, "cannot allocate result arrays\n");
        return 2;
    }
    memcpy(sorted, times, (size_t)reps * sizeof(double));
    qsort(sorted, (size_t)reps, sizeof(double), cmp_double);
    double median = reps % 2 ? sorted[reps / 2] : 0.5 * (sorted[reps / 2 - 1] + sorted[reps / 2]);

    printf("{\"kernel\": \"%s\", \"threads\": %d, \"n\": %ld, \"repetitions\": %ld, \"sweeps\": [",
           kernel, nthreads, n, reps);
    for (long r = 0; r < reps; ++r)
        printf("%s%ld", r ? ", " : "", sweeps[r]);
    printf("], \"seconds_per_sweep\": [");
    for (long r = 0; r < reps; ++r)
        printf("%s%.17g", r ? ", " : "", times[r]);
    printf("], \"median_s\": %.17g, \"min_s\": %.17g, \"max_s\": %.17g, \"check\": \"ok\"}\n",
           median, sorted[0], sorted[reps - 1]);
    free(sorted);
    free(times);
    free(sweeps);
    free(v0);
    free(v1);
    free(v2);
    return 0;
}
