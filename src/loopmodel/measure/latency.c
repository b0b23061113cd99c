/* loopmodel load-latency benchmark: a pointer chase through one random cycle of cache lines.
 *
 * Usage:  latency CPU LINE_SIZE REPETITIONS MIN_TIME_S SIZE_BYTES [SIZE_BYTES ...]
 *
 * For each working-set size the buffer holds SIZE_BYTES / LINE_SIZE cache lines; the first
 * word of every line points to the next line of one random cycle through all of them
 * (Sattolo's algorithm, a fixed seed: the same order on every run), so each load depends on
 * the previous one and hardware prefetchers cannot guess the next line. One untimed pass
 * touches every line (warm-up); then each of REPETITIONS repetitions chases pointers until at
 * least MIN_TIME_S seconds have passed and records nanoseconds per load. The thread is pinned
 * to CPU (sched_setaffinity; a failure is reported in the output, not fatal).
 *
 * Output: one line per size on stdout,
 *     size SIZE_BYTES pinned 0|1 ns LAT_1 LAT_2 ... LAT_REPETITIONS
 * errors: one line on stderr, exit status 2.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* one random cycle through n lines of `stride` bytes: line i points to line next[i] */
static void **build(size_t n, size_t stride)
{
    char *buf = NULL;
    if (posix_memalign((void **)&buf, 4096, n * stride) != 0)
        return NULL;
    size_t *order = malloc(n * sizeof *order);
    if (!order) {
        free(buf);
        return NULL;
    }
    for (size_t i = 0; i < n; ++i)
        order[i] = i;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (size_t i = n - 1; i > 0; --i) { /* Sattolo: a single cycle */
        size_t j = (size_t)(rng(&seed) % i);
        size_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < n; ++i)
        *(void **)(buf + order[i] * stride) = buf + order[(i + 1) % n] * stride;
    free(order);
    return (void **)buf;
}

static void *chase(void **p, long steps)
{
    for (long k = 0; k < steps; ++k)
        p = (void **)*p;
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: latency CPU LINE_SIZE REPETITIONS MIN_TIME_S SIZE_BYTES...\n");
        return 2;
    }
    int cpu = atoi(argv[1]);
    size_t line = (size_t)atol(argv[2]);
    int reps = atoi(argv[3]);
    double min_time = atof(argv[4]);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    int pinned = sched_setaffinity(0, sizeof set, &set) == 0;
    void *volatile sink = NULL; /* a volatile object: the chased pointer is used */
    for (int a = 5; a < argc; ++a) {
        size_t bytes = (size_t)atoll(argv[a]);
        size_t n = bytes / line;
        if (line < sizeof(void *) || n < 2 || reps < 1) {
            fprintf(stderr, "latency: size %s B holds fewer than 2 lines of %zu B\n", argv[a], line);
            return 2;
        }
        void **start = build(n, line);
        if (!start) {
            fprintf(stderr, "latency: cannot allocate %zu B\n", n * line);
            return 2;
        }
        void *p = chase(start, (long)n); /* warm-up: every line once */
        printf("size %zu pinned %d ns", n * line, pinned);
        for (int r = 0; r < reps; ++r) {
            long steps = (long)n, done = 0;
            double t0 = now(), t;
            do {
                p = chase((void **)p, steps);
                done += steps;
                t = now() - t0;
                if (t < min_time / 8)
                    steps *= 2;
            } while (t < min_time && done < (1L << 50));
            printf(" %.4f", 1e9 * t / (double)done);
        }
        printf("\n");
        fflush(stdout);
        sink = p;
        free(start);
    }
    (void)sink;
    return 0;
}
