/* loopmodel streaming-bandwidth benchmark: Kerncraft's benchmark kernels with likwid-bench
 * semantics (OpenMP, double precision, every thread streams through its own arrays).
 *
 *   load       s += a[i]                    1 array
 *   copy       a[i] = b[i]                  2 arrays
 *   update     a[i] = s * a[i]              1 array
 *   triad      a[i] = b[i] + c[i] * d[i]    4 arrays
 *   daxpy      a[i] = a[i] + s * b[i]       2 arrays
 *   streams:K  s += a0[i] + ... + aK-1[i]   K arrays (K = 1 .. 24; streams:1 is load)
 *
 * Usage:  bandwidth KERNEL THREADS ELEMENTS OFFSET_BYTES REPETITIONS MIN_TIME_S [CPU,CPU,...]
 *
 * One team of THREADS threads. Every thread pins itself to the CPU at its index in the list
 * (sched_setaffinity; without a list the OpenMP runtime places threads, OMP_PLACES /
 * OMP_PROC_BIND), allocates its own arrays of ELEMENTS doubles each (posix_memalign 4096,
 * every array start moved OFFSET_BYTES further, a multiple of 8 below 4096) and first-touches
 * them, so in-cache working sets stay in that core's caches and memory pages are local.
 *
 * Timing: barrier, thread 0 reads the clock, every thread runs S sweeps over its own arrays
 * with no barrier in between, barrier, thread 0 reads the clock. S is decided once for all
 * threads (doubling from 1, then scaled in proportion) so that one repetition lasts at least
 * MIN_TIME_S; then REPETITIONS repetitions of S sweeps are timed. Each kernel is a noinline
 * function and every sweep is followed by a compiler barrier naming the arrays, so no sweep
 * is merged with the next or dropped; the sums of load and streams:K go to a volatile.
 * The data reproduce themselves from sweep to sweep (update and daxpy alternate the scalar
 * between two values that undo each other) and are checked after the last sweep.
 *
 * Output: one JSON line on stdout (seconds per repetition); errors: one line on stderr,
 * exit status 2 (usage, allocation, pinning) or 3 (wrong results).
 */
#ifndef _OPENMP
#error "the bandwidth benchmark needs OpenMP: add -fopenmp (gcc, clang) or -qopenmp (icx) to the flags"
#endif
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* team_common.c, appended to this source */
static int lm_pin(const char *list, int index);
static long lm_number(const char *text, long lo, long hi, const char *what);

#define LM_ALIGN 4096
#define LM_MAX_ARRAYS 24
#define LM_MAX_THREADS 4096
#define LM_MAX_REPS 1000
/* elements per unrolled block of the sums (eight vectors of four) */
#define LM_B 32

#if defined(__clang__) || !defined(__GNUC__)
#define LM_NOINLINE __attribute__((noinline))
#else
#define LM_NOINLINE __attribute__((noinline, noclone))
#endif

/* After every sweep: the arrays may have been read and written behind the compiler's back. */
#define LM_BARRIER(p) __asm__ volatile("" : : "r"(p) : "memory")

enum { K_LOAD, K_COPY, K_UPDATE, K_TRIAD, K_DAXPY, K_STREAMS };

/* Scalars read through volatiles: the compiler cannot fold s * a[i] with s == 1, nor
   specialise a kernel for a constant. update: a *= 2, then a *= 0.5; daxpy: a += b, a -= b. */
static volatile double lm_up_update = 2.0, lm_down_update = 0.5;
static volatile double lm_up_daxpy = 1.0, lm_down_daxpy = -1.0;

LM_NOINLINE static void k_copy(long n, double *restrict a, const double *restrict b)
{
    for (long i = 0; i < n; ++i)
        a[i] = b[i];
}

LM_NOINLINE static void k_update(long n, double s, double *restrict a)
{
    for (long i = 0; i < n; ++i)
        a[i] = s * a[i];
}

LM_NOINLINE static void k_triad(long n, double *restrict a, const double *restrict b,
                                const double *restrict c, const double *restrict d)
{
    for (long i = 0; i < n; ++i)
        a[i] = b[i] + c[i] * d[i];
}

LM_NOINLINE static void k_daxpy(long n, double s, double *restrict a, const double *restrict b)
{
    for (long i = 0; i < n; ++i)
        a[i] = a[i] + s * b[i];
}

/* streams:K -- the sum of K loads per iteration. LM_SUMk(L, x) is a0[x] + ... + a(k-1)[x]
   with L(a, x) reading one element (LM_ONE) or four consecutive ones (LM_VEC, a GNU vector
   extension that gcc and clang lower to the target's SIMD loads). Eight vector partial sums
   keep eight independent addition chains, so the loads are not serialised on the latency of
   one chain (likwid-bench's load kernels unroll the same way); only one addition per vector
   is on a chain, the K - 1 others are independent of it. */
typedef double lm_v __attribute__((vector_size(32)));
typedef double lm_vu __attribute__((vector_size(32), aligned(8), may_alias));
#define LM_VEC(a, x) (*(const lm_vu *)((a) + (x)))
#define LM_ONE(a, x) ((a)[x])
#define LM_SUM1(L, x) L(a0, x)
#define LM_SUM2(L, x) LM_SUM1(L, x) + L(a1, x)
#define LM_SUM3(L, x) LM_SUM2(L, x) + L(a2, x)
#define LM_SUM4(L, x) LM_SUM3(L, x) + L(a3, x)
#define LM_SUM5(L, x) LM_SUM4(L, x) + L(a4, x)
#define LM_SUM6(L, x) LM_SUM5(L, x) + L(a5, x)
#define LM_SUM7(L, x) LM_SUM6(L, x) + L(a6, x)
#define LM_SUM8(L, x) LM_SUM7(L, x) + L(a7, x)
#define LM_SUM9(L, x) LM_SUM8(L, x) + L(a8, x)
#define LM_SUM10(L, x) LM_SUM9(L, x) + L(a9, x)
#define LM_SUM11(L, x) LM_SUM10(L, x) + L(a10, x)
#define LM_SUM12(L, x) LM_SUM11(L, x) + L(a11, x)
#define LM_SUM13(L, x) LM_SUM12(L, x) + L(a12, x)
#define LM_SUM14(L, x) LM_SUM13(L, x) + L(a13, x)
#define LM_SUM15(L, x) LM_SUM14(L, x) + L(a14, x)
#define LM_SUM16(L, x) LM_SUM15(L, x) + L(a15, x)
#define LM_SUM17(L, x) LM_SUM16(L, x) + L(a16, x)
#define LM_SUM18(L, x) LM_SUM17(L, x) + L(a17, x)
#define LM_SUM19(L, x) LM_SUM18(L, x) + L(a18, x)
#define LM_SUM20(L, x) LM_SUM19(L, x) + L(a19, x)
#define LM_SUM21(L, x) LM_SUM20(L, x) + L(a20, x)
#define LM_SUM22(L, x) LM_SUM21(L, x) + L(a21, x)
#define LM_SUM23(L, x) LM_SUM22(L, x) + L(a22, x)
#define LM_SUM24(L, x) LM_SUM23(L, x) + L(a23, x)

#define LM_POINTERS                                                                          \
    const double *restrict a0 = p[0], *restrict a1 = p[1], *restrict a2 = p[2],             \
                           *restrict a3 = p[3], *restrict a4 = p[4], *restrict a5 = p[5],   \
                           *restrict a6 = p[6], *restrict a7 = p[7], *restrict a8 = p[8],   \
                           *restrict a9 = p[9], *restrict a10 = p[10], *restrict a11 = p[11], \
                           *restrict a12 = p[12], *restrict a13 = p[13], *restrict a14 = p[14], \
                           *restrict a15 = p[15], *restrict a16 = p[16], *restrict a17 = p[17], \
                           *restrict a18 = p[18], *restrict a19 = p[19], *restrict a20 = p[20], \
                           *restrict a21 = p[21], *restrict a22 = p[22], *restrict a23 = p[23]; \
    (void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5, (void)a6, (void)a7, (void)a8,  \
        (void)a9, (void)a10, (void)a11, (void)a12, (void)a13, (void)a14, (void)a15, (void)a16, \
        (void)a17, (void)a18, (void)a19, (void)a20, (void)a21, (void)a22, (void)a23

#define LM_STREAMS(K)                                                                \
    LM_NOINLINE static double k_streams##K(long n, double *const *p)                 \
    {                                                                                \
        LM_POINTERS;                                                                 \
        lm_v c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0}, c4 = {0}, c5 = {0}, c6 = {0}, c7 = {0}; \
        long i = 0;                                                                  \
        for (; i + LM_B <= n; i += LM_B) {                                           \
            c0 += LM_SUM##K(LM_VEC, i);                                              \
            c1 += LM_SUM##K(LM_VEC, i + 4);                                          \
            c2 += LM_SUM##K(LM_VEC, i + 8);                                          \
            c3 += LM_SUM##K(LM_VEC, i + 12);                                         \
            c4 += LM_SUM##K(LM_VEC, i + 16);                                         \
            c5 += LM_SUM##K(LM_VEC, i + 20);                                         \
            c6 += LM_SUM##K(LM_VEC, i + 24);                                         \
            c7 += LM_SUM##K(LM_VEC, i + 28);                                         \
        }                                                                            \
        double s = 0.0;                                                              \
        for (; i < n; ++i)                                                           \
            s += LM_SUM##K(LM_ONE, i);                                               \
        lm_v c = ((c0 + c1) + (c2 + c3)) + ((c4 + c5) + (c6 + c7));                  \
        return s + ((c[0] + c[1]) + (c[2] + c[3]));                                  \
    }

LM_STREAMS(1) LM_STREAMS(2) LM_STREAMS(3) LM_STREAMS(4) LM_STREAMS(5) LM_STREAMS(6)
LM_STREAMS(7) LM_STREAMS(8) LM_STREAMS(9) LM_STREAMS(10) LM_STREAMS(11) LM_STREAMS(12)
LM_STREAMS(13) LM_STREAMS(14) LM_STREAMS(15) LM_STREAMS(16) LM_STREAMS(17) LM_STREAMS(18)
LM_STREAMS(19) LM_STREAMS(20) LM_STREAMS(21) LM_STREAMS(22) LM_STREAMS(23) LM_STREAMS(24)

typedef double (*lm_sum_fn)(long, double *const *);
static const lm_sum_fn k_streams[LM_MAX_ARRAYS + 1] = {
    NULL, k_streams1, k_streams2, k_streams3, k_streams4, k_streams5, k_streams6, k_streams7,
    k_streams8, k_streams9, k_streams10, k_streams11, k_streams12, k_streams13, k_streams14,
    k_streams15, k_streams16, k_streams17, k_streams18, k_streams19, k_streams20, k_streams21,
    k_streams22, k_streams23, k_streams24};

/* What one thread streams through. */
typedef struct {
    int kind, arrays;
    long n;                      /* elements per array */
    long done;                   /* sweeps run so far (decides the next scalar) */
    double *p[LM_MAX_ARRAYS];    /* the arrays, OFFSET bytes after each allocation's start */
    void *base[LM_MAX_ARRAYS];   /* what posix_memalign returned */
    volatile double sum;         /* the last sum of load and streams:K */
} lm_thread;

static void sweeps(lm_thread *t, long count)
{
    double up_u = lm_up_update, down_u = lm_down_update, up_d = lm_up_daxpy, down_d = lm_down_daxpy;
    double *const *p = t->p;
    for (long k = 0; k < count; ++k, ++t->done) {
        int odd = (int)(t->done & 1);
        switch (t->kind) {
        case K_COPY: k_copy(t->n, p[0], p[1]); break;
        case K_UPDATE: k_update(t->n, odd ? down_u : up_u, p[0]); break;
        case K_TRIAD: k_triad(t->n, p[0], p[1], p[2], p[3]); break;
        case K_DAXPY: k_daxpy(t->n, odd ? down_d : up_d, p[0], p[1]); break;
        default: t->sum = k_streams[t->arrays](t->n, p); break;
        }
        LM_BARRIER(p);
    }
}

/* Allocate and first-touch this thread's arrays: 0 on success. */
static int setup(lm_thread *t, long offset)
{
    /* initial values: copy a=0 b=1; update a=1; triad a=0 b=1 c=2 d=0.5; daxpy a=1 b=1;
       load and streams:K every array 1 */
    static const double init[5][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {1, 0, 0, 0}, {0, 1, 2, 0.5}, {1, 1, 0, 0}};
    for (int a = 0; a < LM_MAX_ARRAYS; ++a)
        t->p[a] = NULL, t->base[a] = NULL;
    for (int a = 0; a < t->arrays; ++a) {
        if (posix_memalign(&t->base[a], LM_ALIGN, (size_t)t->n * sizeof(double) + (size_t)offset) != 0)
            return -1;
        t->p[a] = (double *)((char *)t->base[a] + offset);
        double v = t->kind == K_STREAMS ? 1.0 : init[t->kind][a];
        for (long i = 0; i < t->n; ++i)
            t->p[a][i] = v;
    }
    return 0;
}

/* Elements of this thread's result that differ from what its sweeps must have produced. */
static long check(const lm_thread *t)
{
    if (t->kind == K_STREAMS || t->kind == K_LOAD)
        return t->sum != (double)t->arrays * (double)t->n;
    double expected = t->kind == K_COPY ? 1.0 : t->kind == K_TRIAD ? 2.0 : (t->done & 1) ? 2.0 : 1.0;
    long wrong = 0;
    for (long i = 0; i < t->n; ++i)
        wrong += t->p[0][i] != expected;
    return wrong;
}

static void release(lm_thread *t)
{
    for (int a = 0; a < LM_MAX_ARRAYS; ++a)
        free(t->base[a]);
}

/* Shared between the threads of the team. */
static struct {
    long s;            /* sweeps per repetition, decided by thread 0 */
    int stop, failed;  /* calibration finished; some thread could not allocate or pin */
    long wrong;        /* wrong elements over all threads */
    int threads;       /* threads the runtime gave the team */
    double seconds[LM_MAX_REPS];
    int cpu[LM_MAX_THREADS];
} team;

/* Thread 0 after a calibration trial of team.s sweeps that took `el` seconds: double S while
   a trial is short, then scale it to 1.2 min_time (the margin absorbs a trial that was slowed
   down, e.g. by the clock ramping up or another process), stop once a trial lasts min_time. */
static void decide(double el, double min_time)
{
    if (el >= min_time || team.s >= (1L << 40)) {
        team.stop = 1;
    } else if (el < min_time / 4) {
        team.s *= 2;
    } else {
        long next = (long)((double)team.s * 1.2 * min_time / el) + 1;
        team.s = next > team.s ? next : team.s + 1;
    }
}

/* team.s sweeps by every thread between two barriers; the elapsed seconds (meaningful on the
   master thread only, which takes the times) */
static double timed_sweeps(lm_thread *t)
{
    double t0 = 0.0;
#pragma omp barrier
#pragma omp master
    t0 = omp_get_wtime();
    sweeps(t, team.s);
#pragma omp barrier
    return omp_get_wtime() - t0;
}

static void measure(lm_thread *t, long reps, double min_time)
{
    sweeps(t, 1); /* warm-up */
    for (;;) {
        double elapsed = timed_sweeps(t);
#pragma omp master
        decide(elapsed, min_time);
#pragma omp barrier
        if (team.stop)
            break;
    }
    for (long r = 0; r < reps; ++r) {
        double elapsed = timed_sweeps(t);
#pragma omp master
        team.seconds[r] = elapsed;
    }
}

static void run_team(int threads, int kind, int arrays, long n, long offset, long reps, double min_time,
                     const char *cpus)
{
    team.s = 1;
#pragma omp parallel num_threads(threads)
    {
        lm_thread t = {.kind = kind, .arrays = arrays, .n = n, .done = 0, .sum = 0.0};
        int id = omp_get_thread_num();
        if ((cpus && lm_pin(cpus, id) != 0) || setup(&t, offset) != 0) {
#pragma omp atomic write
            team.failed = 1;
        }
        team.cpu[id] = sched_getcpu();
#pragma omp master
        team.threads = omp_get_num_threads();
#pragma omp barrier
        int failed;
#pragma omp atomic read
        failed = team.failed;
        if (!failed) {
            measure(&t, reps, min_time);
            long wrong = check(&t);
#pragma omp atomic
            team.wrong += wrong;
        }
        release(&t);
    }
}

static int parse_kernel(const char *name, int *kind, int *arrays)
{
    static const char *names[] = {"load", "copy", "update", "triad", "daxpy"};
    static const int count[] = {1, 2, 1, 4, 2};
    for (int k = 0; k < 5; ++k)
        if (strcmp(name, names[k]) == 0) {
            *kind = k, *arrays = count[k];
            return 0;
        }
    char *end;
    if (strncmp(name, "streams:", 8) != 0)
        return -1;
    long k = strtol(name + 8, &end, 10);
    if (*end || end == name + 8 || k < 1 || k > LM_MAX_ARRAYS)
        return -1;
    *kind = K_STREAMS, *arrays = (int)k;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 7 && argc != 8) {
        fprintf(stderr, "usage: %s KERNEL THREADS ELEMENTS OFFSET_BYTES REPETITIONS MIN_TIME_S [CPU,...]\n", argv[0]);
        return 2;
    }
    int kind, arrays;
    if (parse_kernel(argv[1], &kind, &arrays) != 0) {
        fprintf(stderr, "unknown kernel '%s' (load, copy, update, triad, daxpy, streams:1 .. streams:24)\n", argv[1]);
        return 2;
    }
    int threads = (int)lm_number(argv[2], 1, LM_MAX_THREADS, "THREADS");
    long n = lm_number(argv[3], 1, 1L << 40, "ELEMENTS");
    long offset = lm_number(argv[4], 0, LM_ALIGN - 8, "OFFSET_BYTES");
    long reps = lm_number(argv[5], 1, LM_MAX_REPS, "REPETITIONS");
    char *end;
    double min_time = strtod(argv[6], &end);
    if (*end || !(min_time > 0.0) || min_time > 3600.0 || offset % 8) {
        fprintf(stderr, "bad MIN_TIME_S '%s' or OFFSET_BYTES '%s' (a multiple of 8)\n", argv[6], argv[4]);
        return 2;
    }
    omp_set_dynamic(0);
    run_team(threads, kind, arrays, n, offset, reps, min_time, argc == 8 ? argv[7] : NULL);
    if (team.failed) {
        fprintf(stderr, "cannot allocate %d arrays of %ld doubles per thread or pin a thread to its CPU\n", arrays, n);
        return 2;
    }
    if (team.wrong) {
        fprintf(stderr, "wrong results in %ld elements (kernel %s)\n", team.wrong, argv[1]);
        return 3;
    }
    printf("{\"kernel\": \"%s\", \"threads\": %d, \"elements_per_thread\": %ld, \"offset\": %ld, "
           "\"sweeps\": %ld, \"seconds\": [", argv[1], team.threads, n, offset, team.s);
    for (long r = 0; r < reps; ++r)
        printf("%s%.9e", r ? ", " : "", team.seconds[r]);
    printf("], \"cpus\": [");
    for (int k = 0; k < team.threads; ++k)
        printf("%s%d", k ? ", " : "", team.cpu[k]);
    printf("], \"check\": \"ok\"}\n");
    return 0;
}
