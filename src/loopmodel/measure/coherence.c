/* loopmodel MESI transition benchmark (benchmark-based-coherence-model.txt §III-B, §III-C, §IV):
 * the time one thread takes to load or store its chunk of doubles when the chunk starts in a
 * given coherence state, while T threads take the same transition at once on chunks of
 * their own.
 *
 * Usage:  coherence KEYS THREADS SIZES REPETITIONS CPUS [FLUSH_BYTES]
 *
 *   KEYS         transitions separated by commas: "L I,L M own,S M other" (action L or S,
 *                initial state I, M, E or S, "own" or "other").
 *   THREADS      T, the timing threads (thread 0 .. T-1 of the team).
 *   SIZES        chunk sizes in bytes separated by commas (multiples of 64).
 *   REPETITIONS  K: every point is timed K times; chunks below 32 KiB K x 32 KiB / size
 *                times (at most 8 K), since one sub-microsecond timing is noisy. All timings
 *                are reported.
 *   CPUS         logical CPUs separated by commas: the team has one thread per CPU (P of
 *                them, P >= T); thread i pins itself to the i-th (sched_setaffinity).
 *   FLUSH_BYTES  where no cache-line flush instruction is available (not x86 or aarch64):
 *                bytes of the buffer the team writes to push the chunks out of the caches
 *                (2 x the last-level cache); 0 or absent elsewhere.
 *
 * Chunk t (t < T) is a 4096-byte aligned buffer of the largest size, allocated and first
 * touched by thread t; a point of size s uses its first s bytes. For each key, size and
 * repetition: (a) the team puts every chunk t into the key's initial state, one step at a
 * time with a barrier after each step, the steps taken by t itself or by o1 = (t+1) % P and
 * o2 = (t+2) % P (both map threads one to one, so all chunks are set up at once):
 *
 *   I        flush (every line of the chunk is written back and dropped from all caches)
 *   M own    flush, t writes   M other  flush, o1 writes
 *   E own    flush, t reads    E other  flush, o1 reads
 *   S own    flush, t writes, o1 reads, t reads
 *   S other  flush, o1 reads, o2 reads    (needs P >= 3; otherwise the key is "missing")
 *
 * Every setup starts from a flush, so the initial state is reached from memory, as on a
 * program's first pass over data it initialises: where a line sits after a write depends on
 * where it came from (a non-inclusive last-level cache may not keep lines that came from
 * memory and left the private caches modified, while lines written again in cache stay),
 * which the MESI state alone does not say.
 *
 * (b) barrier, (c) each of the T threads reads the clock (clock_gettime MONOTONIC), loads
 * (sums, eight independent vector accumulators, result to a volatile) or stores (writes a
 * value to every double) its own chunk, waits until its stores are visible (mfence, dsb) and
 * reads the clock again, (d) barrier. The
 * repetition's figure is the largest of the T times.
 *
 * What is checked: every timed load returns the sum of the values the chunk was last written
 * with (the setup's writes reached the timed thread), every thread runs on its CPU
 * (sched_getcpu), the team has P threads. What cannot be checked without performance
 * counters: that a line really is in the intended MESI state (e.g. E rather than S after a
 * read of a flushed line, or that a hardware prefetcher did not fetch lines of a neighbour's
 * chunk); the timings themselves show it (L I near memory speed at every size, L M own near
 * L1 speed for small chunks).
 *
 * Also measured: "timer_overhead", the shortest time between two clock reads with the fence
 * between them (min of many; to be subtracted from the timings), and "region_overhead", the
 * shortest time of an empty "#pragma omp parallel for schedule(static)" on T threads (fork,
 * static schedule, join), both in seconds.
 *
 * Output: one JSON line on stdout; errors: one line on stderr, exit status 2 (usage,
 * allocation, pinning) or 3 (wrong results).
 */
#ifndef _OPENMP
#error "the coherence benchmark needs OpenMP: add -fopenmp (gcc, clang) or -qopenmp (icx) to the flags"
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
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#define LM_ALIGN 4096
#define LM_LINE 64
#define LM_MAX_THREADS 1024
#define LM_MAX_KEYS 14
#define LM_MAX_SIZES 128
#define LM_MAX_REPS 8000
#define LM_B 32 /* elements per unrolled block of the sum (eight vectors of four) */

#if defined(__clang__) || !defined(__GNUC__)
#define LM_NOINLINE __attribute__((noinline))
#else
#define LM_NOINLINE __attribute__((noinline, noclone))
#endif
#define LM_BARRIER(p) __asm__ volatile("" : : "r"(p) : "memory")

static const char *lm_keys[LM_MAX_KEYS] = {"L I", "L M own", "L M other", "L E own", "L E other", "L S own",
                                           "L S other", "S I", "S M own", "S M other", "S E own", "S E other",
                                           "S S own", "S S other"};

/* Setup steps: operation and who takes it. */
enum { OP_FLUSH = 1, OP_WRITE, OP_READ };
enum { BY_OWN, BY_O1, BY_O2 };
typedef struct { int op, by; } lm_step;
/* By initial state (I, M own, M other, E own, E other, S own, S other): up to three steps. */
static const lm_step lm_setup[7][4] = {
    {{OP_FLUSH, BY_OWN}, {0, 0}, {0, 0}, {0, 0}},
    {{OP_FLUSH, BY_OWN}, {OP_WRITE, BY_OWN}, {0, 0}, {0, 0}},
    {{OP_FLUSH, BY_OWN}, {OP_WRITE, BY_O1}, {0, 0}, {0, 0}},
    {{OP_FLUSH, BY_OWN}, {OP_READ, BY_OWN}, {0, 0}, {0, 0}},
    {{OP_FLUSH, BY_OWN}, {OP_READ, BY_O1}, {0, 0}, {0, 0}},
    {{OP_FLUSH, BY_OWN}, {OP_WRITE, BY_OWN}, {OP_READ, BY_O1}, {OP_READ, BY_OWN}},
    {{OP_FLUSH, BY_OWN}, {OP_READ, BY_O1}, {OP_READ, BY_O2}, {0, 0}},
};

typedef double lm_v __attribute__((vector_size(32)));
typedef double lm_vu __attribute__((vector_size(32), aligned(8), may_alias));
#define LM_VEC(a, x) (*(const lm_vu *)((a) + (x)))

/* Sum of a[0 .. n-1]: eight independent vector accumulators, so the loads run at bandwidth. */
LM_NOINLINE static double lm_load(long n, const double *restrict a)
{
    lm_v c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0}, c4 = {0}, c5 = {0}, c6 = {0}, c7 = {0};
    long i = 0;
    for (; i + LM_B <= n; i += LM_B) {
        c0 += LM_VEC(a, i);
        c1 += LM_VEC(a, i + 4);
        c2 += LM_VEC(a, i + 8);
        c3 += LM_VEC(a, i + 12);
        c4 += LM_VEC(a, i + 16);
        c5 += LM_VEC(a, i + 20);
        c6 += LM_VEC(a, i + 24);
        c7 += LM_VEC(a, i + 28);
    }
    double s = 0.0;
    for (; i < n; ++i)
        s += a[i];
    lm_v c = ((c0 + c1) + (c2 + c3)) + ((c4 + c5) + (c6 + c7));
    return s + ((c[0] + c[1]) + (c[2] + c[3]));
}

/* v to every element (compiled with -fno-tree-loop-distribute-patterns: a loop, not memset). */
LM_NOINLINE static void lm_store(long n, double *restrict a, double v)
{
    for (long i = 0; i < n; ++i)
        a[i] = v;
}

static const char *lm_flush_name(long flush_bytes)
{
#if defined(__x86_64__) || defined(__i386__)
    (void)flush_bytes;
#ifdef __CLFLUSHOPT__
    return "clflushopt";
#else
    return "clflush";
#endif
#elif defined(__aarch64__)
    (void)flush_bytes;
    return "dc civac";
#else
    return flush_bytes > 0 ? "buffer" : "none";
#endif
}

/* Write every line of a[0 .. bytes-1] back and drop it from every cache. Without a flush
   instruction: this thread writes its share of the flush buffer instead. */
static void lm_flush(const double *a, long bytes, double *buffer, long buffer_n)
{
#if defined(__x86_64__) || defined(__i386__)
    (void)buffer, (void)buffer_n;
    for (long k = 0; k < bytes; k += LM_LINE)
#ifdef __CLFLUSHOPT__
        _mm_clflushopt((void *)((const char *)a + k));
#else
        _mm_clflush((const char *)a + k);
#endif
    _mm_mfence();
#elif defined(__aarch64__)
    (void)buffer, (void)buffer_n;
    for (long k = 0; k < bytes; k += LM_LINE)
        __asm__ volatile("dc civac, %0" : : "r"((const char *)a + k) : "memory");
    __asm__ volatile("dsb ish" : : : "memory");
#else
    (void)a, (void)bytes;
    if (buffer)
        lm_store(buffer_n, buffer, 0.0);
#endif
}

/* Wait until this thread's stores are globally visible (the store buffer is drained), so a
   timed store of a small chunk is not over when its data only sit in the store buffer. */
static inline void lm_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_mfence();
#elif defined(__aarch64__)
    __asm__ volatile("dsb ish" : : : "memory");
#else
    __sync_synchronize();
#endif
}

static double lm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Shared between the threads of the team. */
static struct {
    int threads, team, failed;
    long wrong;                       /* timed loads whose sum was not the chunk's values */
    double *chunk[LM_MAX_THREADS];    /* chunk t of timing thread t */
    double value[LM_MAX_THREADS];     /* what chunk t was last written with */
    double dt[LM_MAX_THREADS];        /* this repetition's time of each timing thread */
    int cpu[LM_MAX_THREADS];
    double timer_overhead;
    volatile double sink;
} team;
static volatile double lm_values[8] = {1, 2, 3, 4, 5, 6, 7, 8};

static int lm_reps(long size, int k)
{
    long r = size < 32768 ? (long)k * 32768 / size : k;
    return (int)(r > 8L * k ? 8L * k : r);
}

/* One setup step of thread id: the chunks it acts on (at most one: o1 and o2 are one to one). */
static void lm_do_step(lm_step st, int id, long n, long *counter, double *buffer, long buffer_n)
{
    int T = team.threads, P = team.team;
    for (int t = 0; t < T; ++t) {
        int who = st.by == BY_OWN ? t : st.by == BY_O1 ? (t + 1) % P : (t + 2) % P;
        if (who != id)
            continue;
        if (st.op == OP_FLUSH) {
            lm_flush(team.chunk[t], n * (long)sizeof(double), buffer, buffer_n);
        } else if (st.op == OP_WRITE) {
            double v = lm_values[(*counter)++ & 7];
            lm_store(n, team.chunk[t], v);
            team.value[t] = v;
        } else {
            team.sink = lm_load(n, team.chunk[t]);
        }
        LM_BARRIER(team.chunk[t]);
    }
}

/* One timed repetition of key (0 .. 13) on n elements per chunk; thread id's time in team.dt. */
static void lm_repetition(int key, int id, long n, long *counter, double *buffer, long buffer_n)
{
    const lm_step *steps = lm_setup[key % 7];
    for (int k = 0; k < 4 && steps[k].op; ++k) {
        lm_do_step(steps[k], id, n, counter, buffer, buffer_n);
#pragma omp barrier
    }
    if (id < team.threads) {
        double *a = team.chunk[id];
        double v = lm_values[(*counter)++ & 7];
        double t0 = lm_now(), s = 0.0;
        if (key < 7)
            s = lm_load(n, a);
        else
            lm_store(n, a, v);
        LM_BARRIER(a);
        lm_fence();
        double t1 = lm_now();
        team.dt[id] = t1 - t0;
        if (key < 7) {
            team.sink = s;
            if (s != team.value[id] * (double)n) {
#pragma omp atomic
                team.wrong += 1;
            }
        } else {
            team.value[id] = v;
        }
    }
#pragma omp barrier
}

/* Allocate, pin, first-touch; 0 on success. */
static int lm_prepare(int id, const char *cpus, long max_n, long flush_bytes, double **buffer, long *buffer_n)
{
    if (lm_pin(cpus, id) != 0)
        return -1;
    team.cpu[id] = sched_getcpu();
    if (id < team.threads) {
        void *p = NULL;
        if (posix_memalign(&p, LM_ALIGN, (size_t)max_n * sizeof(double)) != 0)
            return -1;
        team.chunk[id] = p;
        lm_store(max_n, team.chunk[id], 1.0);
        team.value[id] = 1.0;
    }
    *buffer_n = flush_bytes > 0 ? flush_bytes / team.team / (long)sizeof(double) : 0;
    if (*buffer_n > 0) {
        void *p = NULL;
        if (posix_memalign(&p, LM_ALIGN, (size_t)*buffer_n * sizeof(double)) != 0)
            return -1;
        *buffer = p;
        lm_store(*buffer_n, *buffer, 0.0);
    }
    return 0;
}

static double lm_timer_overhead(void)
{
    double best = 1.0;
    for (int k = 0; k < 2000; ++k) {
        double t0 = lm_now();
        lm_fence();
        double t1 = lm_now();
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    return best;
}

static void lm_run(const int *keys, int nkeys, const long *sizes, int nsizes, int reps, const char *cpus,
                   long flush_bytes, double *out)
{
    long max_n = sizes[nsizes - 1] / (long)sizeof(double);
#pragma omp parallel num_threads(team.team)
    {
        int id = omp_get_thread_num();
        double *buffer = NULL;
        long buffer_n = 0, counter = id;
#pragma omp master
        team.team = omp_get_num_threads();
#pragma omp barrier
        if (lm_prepare(id, cpus, max_n, flush_bytes, &buffer, &buffer_n) != 0) {
#pragma omp atomic write
            team.failed = 1;
        }
        double overhead = lm_timer_overhead();
#pragma omp master
        team.timer_overhead = overhead;
#pragma omp barrier
        int failed;
#pragma omp atomic read
        failed = team.failed;
        for (int k = 0; k < nkeys && !failed; ++k)
            for (int s = 0; s < nsizes; ++s)
                for (int r = 0; r < lm_reps(sizes[s], reps); ++r) {
                    lm_repetition(keys[k], id, sizes[s] / (long)sizeof(double), &counter, buffer, buffer_n);
#pragma omp master
                    {
                        double most = 0.0;
                        for (int t = 0; t < team.threads; ++t)
                            most = team.dt[t] > most ? team.dt[t] : most;
                        out[((long)k * nsizes + s) * 8L * reps + r] = most;
                    }
                }
        free(buffer);
    }
}

/* Shortest time of an empty "parallel for schedule(static)" on `threads` threads, s. */
static double lm_region_overhead(int threads)
{
    double best = 1.0;
    for (int k = 0; k < 2000; ++k) {
        double t0 = lm_now();
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int i = 0; i < threads; ++i)
            LM_BARRIER(&best);
        double t1 = lm_now();
        if (t1 - t0 < best)
            best = t1 - t0;
    }
    return best;
}

/* The keys of the comma-separated list; -1: unknown key. */
static int lm_parse_keys(const char *text, int *keys)
{
    int count = 0;
    const char *q = text;
    while (*q && count < LM_MAX_KEYS) {
        const char *end = strchr(q, ',');
        size_t len = end ? (size_t)(end - q) : strlen(q);
        int found = -1;
        for (int k = 0; k < LM_MAX_KEYS; ++k)
            if (strlen(lm_keys[k]) == len && strncmp(lm_keys[k], q, len) == 0)
                found = k;
        if (found < 0) {
            fprintf(stderr, "unknown transition '%.*s'\n", (int)len, q);
            return -1;
        }
        keys[count++] = found;
        q = end ? end + 1 : q + len;
    }
    return count;
}

static int lm_parse_sizes(const char *text, long *sizes)
{
    int count = 0;
    char *copy = strdup(text), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (count == LM_MAX_SIZES)
            break;
        sizes[count] = lm_number(tok, LM_LINE, 1L << 40, "SIZE");
        if (sizes[count] % LM_LINE || (count && sizes[count] <= sizes[count - 1])) {
            fprintf(stderr, "sizes must be ascending multiples of %d B\n", LM_LINE);
            exit(2);
        }
        ++count;
    }
    free(copy);
    return count;
}

static void lm_print(const int *keys, int nkeys, const long *sizes, int nsizes, int reps, const int *missing,
                     int nmissing, double region, long flush_bytes, const double *out)
{
    printf("{\"threads\": %d, \"team\": %d, \"repetitions\": %d, \"flush\": \"%s\", \"timer_overhead\": %.6e, "
           "\"region_overhead\": %.6e, \"sizes\": [", team.threads, team.team, reps, lm_flush_name(flush_bytes),
           team.timer_overhead, region);
    for (int s = 0; s < nsizes; ++s)
        printf("%s%ld", s ? ", " : "", sizes[s]);
    printf("], \"cpus\": [");
    for (int i = 0; i < team.team; ++i)
        printf("%s%d", i ? ", " : "", team.cpu[i]);
    printf("], \"missing\": [");
    for (int m = 0; m < nmissing; ++m)
        printf("%s\"%s\"", m ? ", " : "", lm_keys[missing[m]]);
    printf("], \"seconds\": {");
    for (int k = 0; k < nkeys; ++k) {
        printf("%s\"%s\": [", k ? ", " : "", lm_keys[keys[k]]);
        for (int s = 0; s < nsizes; ++s) {
            printf("%s[", s ? ", " : "");
            for (int r = 0; r < lm_reps(sizes[s], reps); ++r)
                printf("%s%.6e", r ? ", " : "", out[((long)k * nsizes + s) * 8L * reps + r]);
            printf("]");
        }
        printf("]");
    }
    printf("}, \"check\": \"ok\"}\n");
}

int main(int argc, char **argv)
{
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: %s KEYS THREADS SIZES REPETITIONS CPUS [FLUSH_BYTES]\n", argv[0]);
        return 2;
    }
    int asked[LM_MAX_KEYS], keys[LM_MAX_KEYS], missing[LM_MAX_KEYS], nkeys = 0, nmissing = 0;
    long sizes[LM_MAX_SIZES];
    int nasked = lm_parse_keys(argv[1], asked);
    if (nasked <= 0)
        return 2;
    team.threads = (int)lm_number(argv[2], 1, LM_MAX_THREADS, "THREADS");
    int nsizes = lm_parse_sizes(argv[3], sizes);
    int reps = (int)lm_number(argv[4], 1, LM_MAX_REPS / 8, "REPETITIONS");
    int ncpus = 1;
    for (const char *q = argv[5]; *q; ++q)
        ncpus += *q == ',';
    long flush_bytes = argc == 7 ? lm_number(argv[6], 0, 1L << 40, "FLUSH_BYTES") : 0;
    if (nsizes == 0 || ncpus < team.threads || ncpus > LM_MAX_THREADS) {
        fprintf(stderr, "need at least one size and one CPU per thread (%d CPUs for %d threads)\n", ncpus,
                team.threads);
        return 2;
    }
    team.team = ncpus;
    for (int k = 0; k < nasked; ++k) {
        int need = (asked[k] % 7 == 6) ? 3 : (asked[k] % 7 == 2 || asked[k] % 7 == 4 || asked[k] % 7 == 5) ? 2 : 1;
        if (need > ncpus)
            missing[nmissing++] = asked[k];
        else
            keys[nkeys++] = asked[k];
    }
    double *out = calloc((size_t)(nkeys ? nkeys : 1) * (size_t)nsizes * 8 * (size_t)reps, sizeof(double));
    if (!out) {
        fprintf(stderr, "cannot allocate the result table\n");
        return 2;
    }
    omp_set_dynamic(0);
    lm_run(keys, nkeys, sizes, nsizes, reps, argv[5], flush_bytes, out);
    if (team.failed || team.team != ncpus) {
        fprintf(stderr, "cannot allocate %ld B per thread or pin the %d threads (got %d) to CPUs %s\n",
                sizes[nsizes - 1], ncpus, team.team, argv[5]);
        return 2;
    }
    if (team.wrong) {
        fprintf(stderr, "%ld timed loads did not return the values the chunk was written with\n", team.wrong);
        return 3;
    }
    double region = lm_region_overhead(team.threads);
    lm_print(keys, nkeys, sizes, nsizes, reps, missing, nmissing, region, flush_bytes, out);
    for (int t = 0; t < team.threads; ++t)
        free(team.chunk[t]);
    free(out);
    return 0;
}
