/* loopmodel cache-simulator core: the semantics are specified in __init__.py
 * (module docstring); every function below is named after a step there.
 *
 * Each set is an array of `ways` tags, valid entries first (a prefix), front =
 * index 0 = most recently used for LRU / newest for FIFO. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LM_INVALID UINT64_MAX
enum { LM_LRU = 0, LM_FIFO = 1, LM_RANDOM = 2 };
enum { LM_INCLUSIVE = 0, LM_NONINCLUSIVE = 1, LM_VICTIM = 2 };
enum { LM_LOAD = 0, LM_STORE = 1, LM_NT = 2 };

typedef struct {
    int64_t sets, ways, set_mask; /* set_mask >= 0: sets is a power of two */
    uint64_t magic;               /* else, if not 0: l / sets = (l * magic) >> magic_shift (see lm_new) */
    int magic_shift;
    int policy, write_allocate, write_back, kind;
    int victim_clean; /* victim cache: clean insertions from above count as store_lines there */
    uint64_t rng;
    uint64_t *tags;
    uint8_t *dirty;
    uint64_t hits, misses, load_lines, store_lines, through_bytes, evicts, invalidations;
    uint64_t placed; /* lines placed, always counted: drives the warm-up */
    int64_t valid;   /* lines held (fill state), always counted: drives the warm-up */
} lm_cache;

typedef struct {
    int n, line_log2;
    uint64_t counting;
    lm_cache *lv;
    uint64_t mem_loads, mem_stores, mem_store_bytes;
} lm_hier;

static void lm_load(lm_hier *h, int i, uint64_t l);
static void lm_store(lm_hier *h, int i, uint64_t l, uint64_t b);
static void lm_load_miss(lm_hier *h, int i, uint64_t l);
static void lm_store_miss(lm_hier *h, int i, uint64_t l, uint64_t b);
static void lm_write_back(lm_hier *h, int j, uint64_t l);

static inline uint64_t set_index(const lm_cache *c, uint64_t l) {
    if (c->set_mask >= 0) return l & (uint64_t)c->set_mask;
    if (c->magic) return l - (uint64_t)(((unsigned __int128)l * c->magic) >> c->magic_shift) * (uint64_t)c->sets;
    return l % (uint64_t)c->sets;
}

static inline uint64_t *set_of(lm_cache *c, uint64_t l, uint8_t **d) {
    uint64_t s = set_index(c, l);
    *d = c->dirty + s * c->ways;
    return c->tags + s * c->ways;
}

static inline int64_t find(const lm_cache *c, const uint64_t *t, uint64_t l) {
    int64_t W = c->ways;
    if (t[W - 1] != LM_INVALID) { /* a full set (the common case): no entry is invalid */
        for (int64_t k = 0; k < W; k++)
            if (t[k] == l) return k;
        return -1;
    }
    for (int64_t k = 0; k < W; k++) {
        if (t[k] == l) return k;
        if (t[k] == LM_INVALID) return -1;
    }
    return -1;
}

static inline int64_t count(const lm_cache *c, const uint64_t *t) {
    int64_t k = 0;
    while (k < c->ways && t[k] != LM_INVALID) k++;
    return k;
}

static inline void touch(const lm_cache *c, uint64_t *t, uint8_t *d, int64_t p) {
    if (c->policy != LM_LRU || p == 0) return;
    uint64_t tag = t[p];
    uint8_t dd = d[p];
    for (int64_t k = p; k > 0; k--) { /* short sets: a loop beats memmove's call */
        t[k] = t[k - 1];
        d[k] = d[k - 1];
    }
    t[0] = tag;
    d[0] = dd;
}

static inline void remove_at(lm_cache *c, uint64_t *t, uint8_t *d, int64_t p) {
    for (int64_t k = p; k < c->ways - 1; k++) { /* short sets: a loop beats memmove's call */
        t[k] = t[k + 1];
        d[k] = d[k + 1];
    }
    t[c->ways - 1] = LM_INVALID;
    d[c->ways - 1] = 0;
    c->valid--;
}

static inline void insert_at(lm_cache *c, uint64_t *t, uint8_t *d, int64_t p, uint64_t l, uint8_t dirty) {
    for (int64_t k = c->ways - 1; k > p; k--) { /* the last entry is free when we get here */
        t[k] = t[k - 1];
        d[k] = d[k - 1];
    }
    t[p] = l;
    d[p] = dirty;
    c->valid++;
}

static inline uint64_t rng_next(lm_cache *c) {
    uint64_t x = c->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c->rng = x;
    return x;
}

static void lm_place(lm_hier *h, int i, uint64_t l, uint8_t dirty);

static void lm_victim_insert(lm_hier *h, int j, uint64_t l, uint8_t dirty) {
    lm_cache *c = &h->lv[j];
    uint8_t *d;
    uint64_t *t = set_of(c, l, &d);
    int64_t p = find(c, t, l);
    if (p >= 0) {
        d[p] |= dirty;
        touch(c, t, d, p);
        return;
    }
    lm_place(h, j, l, dirty);
}

static void lm_evict(lm_hier *h, int i, uint64_t v, uint8_t dirty) {
    lm_cache *c = &h->lv[i];
    c->evicts += h->counting;
    if (c->kind == LM_INCLUSIVE && i > 0) {
        for (int u = 0; u < i; u++) {
            lm_cache *cu = &h->lv[u];
            uint8_t *du;
            uint64_t *tu = set_of(cu, v, &du);
            int64_t p = find(cu, tu, v);
            if (p >= 0) {
                dirty |= du[p];
                remove_at(cu, tu, du, p);
                cu->invalidations += h->counting;
            }
        }
    }
    int j = i + 1;
    if (dirty) {
        c->store_lines += h->counting;
        lm_write_back(h, j, v);
    } else if (j < h->n && h->lv[j].kind == LM_VICTIM) {
        if (h->lv[j].victim_clean) c->store_lines += h->counting;
        lm_victim_insert(h, j, v, 0);
    }
}

static void lm_place(lm_hier *h, int i, uint64_t l, uint8_t dirty) {
    lm_cache *c = &h->lv[i];
    uint8_t *d;
    uint64_t *t = set_of(c, l, &d);
    int64_t v;
    c->placed++;
    if (t[c->ways - 1] != LM_INVALID) {
        v = c->policy == LM_RANDOM ? (int64_t)(rng_next(c) % (uint64_t)c->ways) : c->ways - 1;
        uint64_t vl = t[v];
        uint8_t vd = d[v];
        remove_at(c, t, d, v);
        lm_evict(h, i, vl, vd);
    } else {
        v = count(c, t);
    }
    if (c->policy == LM_RANDOM) {
        int64_t k = count(c, t);
        insert_at(c, t, d, v < k ? v : k, l, dirty);
    } else {
        insert_at(c, t, d, 0, l, dirty);
    }
}

static uint8_t lm_fetch(lm_hier *h, int i, uint64_t l) {
    h->lv[i].load_lines += h->counting;
    int j = i + 1;
    if (j == h->n) {
        h->mem_loads += h->counting;
        return 0;
    }
    lm_cache *c = &h->lv[j];
    if (c->kind == LM_VICTIM) {
        uint8_t *d;
        uint64_t *t = set_of(c, l, &d);
        int64_t p = find(c, t, l);
        if (p >= 0) {
            c->hits += h->counting;
            uint8_t dd = d[p];
            remove_at(c, t, d, p);
            return dd;
        }
        c->misses += h->counting;
        return lm_fetch(h, j, l);
    }
    lm_load(h, j, l);
    return 0;
}

/* load(i, l) once l was not found in level i */
static void lm_load_miss(lm_hier *h, int i, uint64_t l) {
    h->lv[i].misses += h->counting;
    uint8_t dd = lm_fetch(h, i, l);
    lm_place(h, i, l, dd);
}

static void lm_load(lm_hier *h, int i, uint64_t l) {
    if (i == h->n) {
        h->mem_loads += h->counting;
        return;
    }
    lm_cache *c = &h->lv[i];
    uint8_t *d;
    uint64_t *t = set_of(c, l, &d);
    int64_t p = find(c, t, l);
    if (p >= 0) {
        c->hits += h->counting;
        touch(c, t, d, p);
        return;
    }
    lm_load_miss(h, i, l);
}

static void lm_write_back(lm_hier *h, int j, uint64_t l) {
    if (j == h->n) {
        h->mem_stores += h->counting;
        return;
    }
    lm_cache *c = &h->lv[j];
    if (c->kind == LM_VICTIM) {
        lm_victim_insert(h, j, l, 1);
        return;
    }
    uint8_t *d;
    uint64_t *t = set_of(c, l, &d);
    int64_t p = find(c, t, l);
    if (!c->write_back) {
        if (p >= 0)
            touch(c, t, d, p);
        else
            lm_place(h, j, l, 0);
        c->store_lines += h->counting;
        lm_write_back(h, j + 1, l);
        return;
    }
    if (p >= 0) {
        d[p] = 1;
        touch(c, t, d, p);
    } else {
        lm_place(h, j, l, 1);
    }
}

/* store(i, l, b) once l was not found in level i */
static void lm_store_miss(lm_hier *h, int i, uint64_t l, uint64_t b) {
    lm_cache *c = &h->lv[i];
    c->misses += h->counting;
    if (c->write_allocate && c->kind != LM_VICTIM) {
        uint8_t dd = lm_fetch(h, i, l);
        lm_place(h, i, l, (uint8_t)(dd || c->write_back));
        if (c->write_back) return;
    }
    c->through_bytes += h->counting * b;
    lm_store(h, i + 1, l, b);
}

static void lm_store(lm_hier *h, int i, uint64_t l, uint64_t b) {
    if (i == h->n) {
        h->mem_store_bytes += h->counting * b;
        return;
    }
    lm_cache *c = &h->lv[i];
    uint8_t *d;
    uint64_t *t = set_of(c, l, &d);
    int64_t p = find(c, t, l);
    if (p < 0) {
        lm_store_miss(h, i, l, b);
        return;
    }
    c->hits += h->counting;
    touch(c, t, d, p);
    if (c->write_back) {
        d[c->policy == LM_LRU ? 0 : p] = 1; /* touch moved it to the front */
    } else {
        c->through_bytes += h->counting * b;
        lm_store(h, i + 1, l, b);
    }
}

static void lm_nt_store(lm_hier *h, uint64_t l, uint64_t b) {
    for (int i = 0; i < h->n; i++) {
        lm_cache *c = &h->lv[i];
        uint8_t *d;
        uint64_t *t = set_of(c, l, &d);
        int64_t p = find(c, t, l);
        if (p >= 0) {
            remove_at(c, t, d, p);
            c->invalidations += h->counting;
        }
    }
    h->lv[h->n - 1].through_bytes += h->counting * b;
    h->mem_store_bytes += h->counting * b;
}

/* a load or store (write-back first level) of one line l that missed the first level */
static void lm_miss1(lm_hier *h, uint64_t l, uint64_t size, int kind) {
    if (kind == LM_LOAD)
        lm_load_miss(h, 0, l);
    else
        lm_store_miss(h, 0, l, size);
}

/* the general path of an access: every line it covers, through the whole hierarchy */
static void lm_access_lines(lm_hier *h, uint64_t addr, uint64_t size, int kind) {
    uint64_t line_size = (uint64_t)1 << h->line_log2;
    uint64_t off = addr & (line_size - 1);
    uint64_t l = addr >> h->line_log2;
    for (;;) {
        uint64_t b = line_size - off;
        if (b > size) b = size;
        if (kind == LM_LOAD)
            lm_load(h, 0, l);
        else if (kind == LM_STORE)
            lm_store(h, 0, l, b);
        else
            lm_nt_store(h, l, b);
        size -= b;
        if (size == 0) return;
        l++;
        off = 0;
    }
}

/* an access: a hit in the first level (the common case) without the general machinery; its state
   change is that of lm_load / lm_store on a hit (touch; a store sets the dirty bit, write-back only) */
static inline __attribute__((always_inline)) void lm_access1(lm_hier *h, uint64_t addr, uint64_t size, int kind) {
    uint64_t line_size = (uint64_t)1 << h->line_log2;
    uint64_t off = addr & (line_size - 1);
    lm_cache *c = h->lv;
    if (kind != LM_NT && off + size <= line_size && (kind == LM_LOAD || c->write_back)) {
        uint64_t l = addr >> h->line_log2;
        uint8_t *d;
        uint64_t *t = set_of(c, l, &d);
        if (t[0] == l) { /* the front entry: touch moves nothing */
            c->hits += h->counting;
            if (kind == LM_STORE) d[0] = 1;
            return;
        }
        int64_t p = find(c, t, l);
        if (p >= 0) {
            c->hits += h->counting;
            touch(c, t, d, p);
            if (kind == LM_STORE) d[c->policy == LM_LRU ? 0 : p] = 1;
            return;
        }
        lm_miss1(h, l, size, kind);
        return;
    }
    lm_access_lines(h, addr, size, kind);
}

/* ---- public API ---------------------------------------------------------------------------- */

lm_hier *lm_new(int n, int line_log2, const int64_t *sets, const int64_t *ways, const int *policy,
                const int *write_allocate, const int *write_back, const int *kind, const int *victim_clean,
                const uint64_t *seed) {
    lm_hier *h = calloc(1, sizeof(lm_hier));
    if (!h) return NULL;
    h->n = n;
    h->line_log2 = line_log2;
    h->counting = 1;
    h->lv = calloc((size_t)n, sizeof(lm_cache));
    if (!h->lv) { free(h); return NULL; }
    for (int i = 0; i < n; i++) {
        lm_cache *c = &h->lv[i];
        c->sets = sets[i];
        c->ways = ways[i];
        c->set_mask = (sets[i] & (sets[i] - 1)) == 0 ? sets[i] - 1 : -1;
        if (c->set_mask < 0 && line_log2 >= 2) {
            /* division by a constant (Granlund & Montgomery 1994, Theorem 4.2): line numbers have
               N = 64 - line_log2 <= 62 bits; with 2**(b-1) < sets < 2**b and
               magic = ceil(2**(N+b) / sets) < 2**(N+1), l / sets = (l * magic) >> (N + b) exactly */
            int N = 64 - line_log2, b = 0;
            while (((int64_t)1 << b) < sets[i]) b++;
            unsigned __int128 num = (unsigned __int128)1 << (N + b);
            c->magic = (uint64_t)((num + (unsigned __int128)sets[i] - 1) / (unsigned __int128)sets[i]);
            c->magic_shift = N + b;
        }
        c->policy = policy[i];
        c->write_allocate = write_allocate[i];
        c->write_back = write_back[i];
        c->kind = kind[i];
        c->victim_clean = victim_clean[i];
        c->rng = seed[i];
        size_t m = (size_t)(sets[i] * ways[i]);
        c->tags = malloc(m * sizeof(uint64_t));
        c->dirty = calloc(m, 1);
        if (!c->tags || !c->dirty) return NULL; /* leak on OOM is acceptable: we are about to fail */
        memset(c->tags, 0xff, m * sizeof(uint64_t));
    }
    return h;
}

void lm_free(lm_hier *h) {
    if (!h) return;
    for (int i = 0; i < h->n; i++) {
        free(h->lv[i].tags);
        free(h->lv[i].dirty);
    }
    free(h->lv);
    free(h);
}

void lm_set_counting(lm_hier *h, int on) { h->counting = on ? 1 : 0; }

void lm_reset_stats(lm_hier *h) {
    for (int i = 0; i < h->n; i++) {
        lm_cache *c = &h->lv[i];
        c->hits = c->misses = c->load_lines = c->store_lines = c->through_bytes = 0;
        c->evicts = c->invalidations = 0;
    }
    h->mem_loads = h->mem_stores = h->mem_store_bytes = 0;
}

/* stats: 7 per level (hits, misses, load_lines, store_lines, through_bytes, evicts,
 * invalidations), then mem loads, stores, store_bytes */
void lm_stats(const lm_hier *h, uint64_t *out) {
    for (int i = 0; i < h->n; i++) {
        const lm_cache *c = &h->lv[i];
        uint64_t *o = out + 7 * i;
        o[0] = c->hits; o[1] = c->misses; o[2] = c->load_lines; o[3] = c->store_lines;
        o[4] = c->through_bytes; o[5] = c->evicts; o[6] = c->invalidations;
    }
    out[7 * h->n] = h->mem_loads;
    out[7 * h->n + 1] = h->mem_stores;
    out[7 * h->n + 2] = h->mem_store_bytes;
}

/* dirty lines held per level (a scan of every entry) */
void lm_dirty(const lm_hier *h, int64_t *out) {
    for (int i = 0; i < h->n; i++) {
        const lm_cache *c = &h->lv[i];
        size_t m = (size_t)(c->sets * c->ways);
        int64_t d = 0;
        for (size_t k = 0; k < m; k++) d += c->dirty[k] != 0;
        out[i] = d;
    }
}

void lm_contents(const lm_hier *h, int i, uint64_t *tags, uint8_t *dirty) {
    const lm_cache *c = &h->lv[i];
    size_t m = (size_t)(c->sets * c->ways);
    memcpy(tags, c->tags, m * sizeof(uint64_t));
    memcpy(dirty, c->dirty, m);
}

/* flush: every level, closest to the core first, evicts all its lines (set by set, front first) */
void lm_flush(lm_hier *h) {
    for (int i = 0; i < h->n; i++) {
        lm_cache *c = &h->lv[i];
        for (int64_t s = 0; s < c->sets; s++) {
            uint64_t *t = c->tags + s * c->ways;
            uint8_t *d = c->dirty + s * c->ways;
            while (t[0] != LM_INVALID) {
                uint64_t v = t[0];
                uint8_t vd = d[0];
                remove_at(c, t, d, 0);
                lm_evict(h, i, v, vd);
            }
        }
    }
}

void lm_access(lm_hier *h, uint64_t addr, uint64_t size, int kind) {
    if (size) lm_access1(h, addr, size, kind);
}

void lm_trace(lm_hier *h, const uint64_t *addr, const uint8_t *kind, const uint32_t *size, int64_t n) {
    for (int64_t k = 0; k < n; k++)
        if (size[k]) lm_access1(h, addr[k], size[k], kind[k]);
}

/* ---- loop-nest driver ------------------------------------------------------------------------
 * Runs a perfect loop nest of affine accesses (the kernel), repeating the whole sweep, until the
 * hierarchy is warm (every level in steady state: warm_check) and a measurement window of `target_it` inner iterations has been counted.
 * Bounds: value = c[d] + sum_{k<d} k[d*LM_MAXD+k] * idx[k]; stop exclusive; step != 0.
 * Access a: address = base[(sweep % nbase) * nacc + a] + sum_k coef[a*LM_MAXD+k] * idx[k] (bytes,
 * modulo 2**64): the base addresses may change from sweep to sweep (arrays swapped between sweeps);
 * phase 0 every inner iteration, 1 once before the inner loop, 2 once after it.
 * Small data sets (a sweep does not warm the hierarchy up) are measured over nbase whole sweeps
 * after nbase whole warm-up sweeps; `cold` measures the first sweep whole, from a cold start.   */
#define LM_MAXD 8

typedef struct {
    int depth, nacc;
    int64_t start_c[LM_MAXD], start_k[LM_MAXD * LM_MAXD];
    int64_t stop_c[LM_MAXD], stop_k[LM_MAXD * LM_MAXD];
    int64_t step[LM_MAXD];
    const uint64_t *base;
    const int64_t *coef;
    const uint32_t *size;
    const uint8_t *kind;
    const uint8_t *phase;
    int work;          /* access whose cache lines define the unit of work and window alignment */
    int64_t it_per_cl; /* inner iterations per cache line of the work array */
    int nbase;         /* sets of base addresses (sweep s uses set s % nbase); 0 counts as 1 */
} lm_nest;

typedef struct {
    int64_t warm_caps_sweep; /* warm when every level has placed this many capacities in the sweep ... */
    int64_t warm_caps_full;  /* ... and this many capacities since it was full (or could not fill further) */
    int64_t target_it;     /* measured inner iterations wanted */
    int64_t margin_it;     /* skipped at both row ends (boundary iterations) */
    int max_sweeps;        /* give up after this many sweeps of the whole nest */
    int edges;             /* 1: do not measure rows in the first/last trip of outer loops */
    int start_mid;         /* 1: the first sweep starts at the middle trip of the outermost loop */
    int64_t max_it;        /* hard limit on simulated inner iterations (0: none) */
    int cold;              /* 1: count the first sweep whole, from the first access (no warm-up) */
    int64_t max_target_it; /* whole-row windows: doubled up to this until settled (<= target_it: never) */
    double settle_tol;     /* settled: both halves' lines per unit agree within tol * max(1, rate) */
    int fast_forward;      /* 1: jump over whole periods of a loop once the state repeats (exact) */
} lm_run_opts;

typedef struct {
    int64_t measured_it, simulated_it, warm_it, work_lines;
    int sweeps, warm;
    int dirty_taken;          /* 1: dirty_start holds the dirty lines per level when counting began */
    int64_t dirty_start[16];  /* LM_MAXLV */
    int64_t jumped_it;        /* of simulated_it, inner iterations jumped over by fast-forwards */
} lm_run_result;

/* the driver's state (a fast-forward reads and moves it on) */
typedef struct {
    int warm, contiguous, whole, half_taken;
    int64_t measured, simulated, target, work_lines;
    uint64_t last_work_line;
    uint64_t events;  /* changes of the window's plan (its growth to settle): a period with one is no reference */
    int64_t work;     /* accesses simulated (not jumped): spaces the snapshots */
    int64_t jumped;   /* inner iterations jumped */
} lm_drive;

/* counting on or off; the first time on in a window after the warm-up (not in whole sweeps measured
   after a sweep that could not warm up: their dirty fill may still grow), the dirty lines held per
   level are recorded: the write-backs of a window are corrected by the change of the dirty fill over
   it (see simulation.py) */
static inline void set_counting(lm_hier *h, uint64_t on, lm_run_result *r, int whole) {
    if (on && !r->dirty_taken && !whole) {
        lm_dirty(h, r->dirty_start);
        r->dirty_taken = 1;
    }
    h->counting = on;
}

/* Warm-up state of one level. A level is in steady state when it is full, or when a whole capacity of
   placements left its fill state unchanged (a level that cannot fill: the data set, or the sets the
   data map to, are smaller than it; victim and exclusive levels lose lines to the levels above), and
   then has turned over: warm_caps_full capacities placed since that moment, and warm_caps_sweep
   capacities within the current sweep (a wrap-around to the array starts puts the array edges into
   the cache history, which must have left the cache before measuring). */
#define LM_MAXLV 16
typedef struct {
    uint64_t sweep0;     /* placements at the start of the current sweep */
    uint64_t chk_placed; /* placements at the last fill-state checkpoint */
    int64_t chk_valid;   /* lines held at the last checkpoint */
    uint64_t full_at;    /* placements when the level was first full or could not fill further */
    int full;
} lm_warm_lv;

static void warm_sweep_start(const lm_hier *h, lm_warm_lv *w) {
    for (int i = 0; i < h->n; i++) {
        w[i].sweep0 = h->lv[i].placed;
        if (!w[i].full) {
            w[i].chk_placed = h->lv[i].placed;
            w[i].chk_valid = h->lv[i].valid;
        }
    }
}

/* the check on given placements and fill states per level (a fast-forward replays the checks of the
   periods it jumps over) */
static int warm_check_at(const lm_hier *h, const uint64_t *placed, const int64_t *valid, lm_warm_lv *w,
                         const lm_run_opts *o) {
    int warm = 1;
    for (int i = 0; i < h->n; i++) {
        const lm_cache *c = &h->lv[i];
        uint64_t cap = (uint64_t)(c->sets * c->ways);
        if (!w[i].full) {
            if (valid[i] >= (int64_t)cap) {
                w[i].full = 1;
            } else if (placed[i] - w[i].chk_placed >= cap) {
                if (valid[i] <= w[i].chk_valid) w[i].full = 1; /* a capacity placed, no net growth */
                w[i].chk_placed = placed[i];
                w[i].chk_valid = valid[i];
            }
            if (w[i].full) w[i].full_at = placed[i];
        }
        uint64_t since = w[i].full_at > w[i].sweep0 ? w[i].full_at : w[i].sweep0;
        if (!w[i].full || placed[i] - since < (uint64_t)o->warm_caps_full * cap ||
            placed[i] - w[i].sweep0 < (uint64_t)o->warm_caps_sweep * cap)
            warm = 0;
    }
    return warm;
}

static int warm_check(const lm_hier *h, lm_warm_lv *w, const lm_run_opts *o) {
    uint64_t placed[LM_MAXLV];
    int64_t valid[LM_MAXLV];
    for (int i = 0; i < h->n; i++) {
        placed[i] = h->lv[i].placed;
        valid[i] = h->lv[i].valid;
    }
    return warm_check_at(h, placed, valid, w, o);
}

/* Settling of a whole-row window: the traffic (lines loaded and stored per level) per unit of work in
   its second half agrees with the first half's. */
typedef struct {
    int taken;
    int64_t work_lines;
    uint64_t lines[2 * LM_MAXLV];
} lm_half;

static void half_take(const lm_hier *h, lm_half *s, lm_drive *dv) {
    s->taken = dv->half_taken = 1;
    s->work_lines = dv->work_lines;
    for (int i = 0; i < h->n; i++) {
        s->lines[2 * i] = h->lv[i].load_lines;
        s->lines[2 * i + 1] = h->lv[i].store_lines;
    }
}

static int half_settled(const lm_hier *h, const lm_half *s, int64_t work_lines, double tol) {
    int64_t u1 = s->work_lines, u2 = work_lines - s->work_lines;
    if (u1 <= 0 || u2 <= 0) return 1;
    for (int i = 0; i < h->n; i++) {
        uint64_t now[2] = {h->lv[i].load_lines, h->lv[i].store_lines};
        for (int q = 0; q < 2; q++) {
            double r1 = (double)s->lines[2 * i + q] / (double)u1;
            double r2 = (double)(now[q] - s->lines[2 * i + q]) / (double)u2;
            double m = (r1 + r2) / 2 > 1 ? (r1 + r2) / 2 : 1;
            if (r1 - r2 > tol * m || r2 - r1 > tol * m) return 0;
        }
    }
    return 1;
}

static inline int64_t bnd(const int64_t *c, const int64_t *k, int d, const int64_t *idx) {
    int64_t v = c[d];
    for (int j = 0; j < d; j++) v += k[d * LM_MAXD + j] * idx[j];
    return v;
}

static inline int64_t trips(int64_t s, int64_t e, int64_t st) {
    if (st > 0) return e > s ? (e - s + st - 1) / st : 0;
    return s > e ? (s - e + (-st) - 1) / (-st) : 0;
}

/* ---- fast-forward over whole periods of a loop ------------------------------------------------
 * A loop L of the nest (not the inner one) repeats itself shifted when every access moves by the
 * same S bytes per iteration of L and no loop inside L depends on any loop index (a rectangular
 * sub-nest, the same iterations each time). After P = line / gcd(line, S) iterations of L every
 * address has moved by DELTA = P * S / line whole lines, at the same offsets within them. A line l
 * lives in set l mod sets, so the simulation commutes with the shift of every line by DELTA (each
 * tag + DELTA, set s's entries moved to set (s + DELTA) mod sets, dirty bits and order kept): if
 * the hierarchy at the start of iteration q + P of L (one period boundary) is the shift of the
 * hierarchy at iteration q (the boundary before), it is the shift of it again at every later
 * boundary within the same iteration of the enclosing loops, and every counter grows by the same
 * amount in each period (the driver's decisions permitting, and its last line of work shifted too:
 * whether a period's first line of work counts depends on it). The driver then jumps over whole
 * periods: the state is shifted, the counters grow by whole periods' worth, and the simulation
 * goes on where it would have been: exactly what simulating them would have given.
 * Detection compares the state with a copy taken one period earlier (snapshots cost a pass over
 * the hierarchy: attempts are spaced by two passes' worth of simulated accesses). Jumps happen
 * while warming up (the warm-up checks of the period before, recorded whole, are replayed with
 * the placements moved on: the jump stops before the period in which the warm-up ends) and while
 * measuring whole rows (the window's end and its halves' split not reached within the jump). */
#define LM_FF_MAX_LINES ((int64_t)1 << 23) /* no fast-forward above this many lines (snapshots of 9 B/line) */
#define LM_FF_BUFS(lines) ((lines) <= ((int64_t)1 << 21) ? 2 : 1) /* loops that may hold a snapshot at a time */
#define LM_FF_MAX_CHECKS ((int64_t)1 << 17) /* warm-up checks recorded per period, at most */
#define LM_NCNT (8 * LM_MAXLV + 3)

typedef struct {
    uint64_t c[LM_NCNT]; /* per level: hits, misses, load_lines, store_lines, through_bytes, evicts,
                            invalidations, placed; then memory's loads, stores, store_bytes */
    int64_t simulated, measured, work_lines;
    uint64_t last_work_line; /* the driver's: whether the next unit of work counts depends on it */
} lm_counters;


typedef struct {
    uint64_t *tags[LM_MAXLV];
    uint8_t *dirty[LM_MAXLV];
    uint64_t rng[LM_MAXLV];
} lm_snap;

typedef struct {
    int ok;              /* loop repeats shifted (see above) */
    int64_t P, delta;    /* iterations per period, lines moved per period */
    int live;            /* a boundary seen in the current iteration of the enclosing loops */
    int periodic;        /* the state at the last boundary was the shift of the one before */
    int snap;            /* buf holds the state at the last boundary */
    int has_buf;
    int64_t next;        /* idx[L] at the next boundary */
    int64_t from;        /* idx[L] where the period confirmed (periodic) began */
    int regime;          /* of the driver at the last boundary (ff_regime) */
    uint64_t events;
    int64_t attempt_work; /* drive.work when the last attempt failed (or the context began) */
    lm_counters at;      /* counters at the last boundary */
    lm_snap buf;
    /* warm-up checks (placements and fill per level) in the current period and in the last whole one */
    int recording, ref_ok;
    int64_t n_cur, n_ref, rec_cap;
    uint64_t *cur_placed, *ref_placed;
    int64_t *cur_valid, *ref_valid;
} lm_period;

typedef struct {
    int on, bufs;
    int64_t lines;       /* lines in the hierarchy */
    lm_period per[LM_MAXD];
} lm_ff;

static void counters_take(const lm_hier *h, const lm_drive *dv, lm_counters *k) {
    for (int i = 0; i < h->n; i++) {
        const lm_cache *c = &h->lv[i];
        uint64_t *o = k->c + 8 * i;
        o[0] = c->hits; o[1] = c->misses; o[2] = c->load_lines; o[3] = c->store_lines;
        o[4] = c->through_bytes; o[5] = c->evicts; o[6] = c->invalidations; o[7] = c->placed;
    }
    k->c[8 * h->n] = h->mem_loads;
    k->c[8 * h->n + 1] = h->mem_stores;
    k->c[8 * h->n + 2] = h->mem_store_bytes;
    k->simulated = dv->simulated;
    k->measured = dv->measured;
    k->work_lines = dv->work_lines;
    k->last_work_line = dv->last_work_line;
}

/* counters += m * (now - at): m more periods of the one that ended now */
static void counters_advance(lm_hier *h, lm_drive *dv, const lm_counters *at, int64_t m) {
    lm_counters now;
    counters_take(h, dv, &now);
    uint64_t um = (uint64_t)m;
    for (int i = 0; i < h->n; i++) {
        lm_cache *c = &h->lv[i];
        const uint64_t *a = now.c + 8 * i, *b = at->c + 8 * i;
        c->hits += um * (a[0] - b[0]); c->misses += um * (a[1] - b[1]);
        c->load_lines += um * (a[2] - b[2]); c->store_lines += um * (a[3] - b[3]);
        c->through_bytes += um * (a[4] - b[4]); c->evicts += um * (a[5] - b[5]);
        c->invalidations += um * (a[6] - b[6]); c->placed += um * (a[7] - b[7]);
    }
    int j = 8 * h->n;
    h->mem_loads += um * (now.c[j] - at->c[j]);
    h->mem_stores += um * (now.c[j + 1] - at->c[j + 1]);
    h->mem_store_bytes += um * (now.c[j + 2] - at->c[j + 2]);
    dv->simulated += m * (now.simulated - at->simulated);
    dv->jumped += m * (now.simulated - at->simulated);
    dv->measured += m * (now.measured - at->measured);
    dv->work_lines += m * (now.work_lines - at->work_lines);
}

/* 1: warming up (every counter but placements off), 2: measuring whole rows, 0: anything else */
static int ff_regime(const lm_drive *dv) {
    if (dv->whole) return 0;
    if (!dv->warm && !dv->contiguous) return 1;
    return dv->warm && dv->contiguous ? 2 : 0;
}

static inline uint64_t rot_of(int64_t delta, int64_t sets) { /* delta mod sets, in [0, sets) */
    int64_t r = delta % sets;
    return (uint64_t)(r < 0 ? r + sets : r);
}

static int snap_alloc(const lm_hier *h, lm_snap *s) {
    memset(s, 0, sizeof(*s));
    for (int i = 0; i < h->n; i++) {
        size_t m = (size_t)(h->lv[i].sets * h->lv[i].ways);
        s->tags[i] = malloc(m * sizeof(uint64_t));
        s->dirty[i] = malloc(m);
        if (!s->tags[i] || !s->dirty[i]) return 0;
    }
    return 1;
}

static void snap_free(const lm_hier *h, lm_snap *s) {
    for (int i = 0; i < h->n; i++) {
        free(s->tags[i]);
        free(s->dirty[i]);
    }
}

static void snap_take(const lm_hier *h, lm_snap *s) {
    for (int i = 0; i < h->n; i++) {
        const lm_cache *c = &h->lv[i];
        size_t m = (size_t)(c->sets * c->ways);
        memcpy(s->tags[i], c->tags, m * sizeof(uint64_t));
        memcpy(s->dirty[i], c->dirty, m);
        s->rng[i] = c->rng;
    }
}

/* the hierarchy now is the snapshot with every line moved by delta */
static int snap_shifted(const lm_hier *h, const lm_snap *sn, int64_t delta) {
    for (int i = 0; i < h->n; i++) {
        const lm_cache *c = &h->lv[i];
        if (c->rng != sn->rng[i]) return 0;
        int64_t S = c->sets, W = c->ways;
        uint64_t r = rot_of(delta, S);
        for (int64_t s = 0; s < S; s++) {
            int64_t s2 = s + (int64_t)r < S ? s + (int64_t)r : s + (int64_t)r - S;
            const uint64_t *a = sn->tags[i] + s * W, *b = c->tags + s2 * W;
            const uint8_t *da = sn->dirty[i] + s * W, *db = c->dirty + s2 * W;
            for (int64_t w = 0; w < W; w++) {
                if (da[w] != db[w]) return 0;
                if (a[w] == LM_INVALID ? b[w] != LM_INVALID : b[w] != a[w] + (uint64_t)delta) return 0;
            }
        }
    }
    return 1;
}

/* move every line held by delta lines; 0 (nothing changed) where a line number would leave its range
   or memory runs out */
static int shift_state(lm_hier *h, int64_t delta) {
    uint64_t top = UINT64_MAX >> h->line_log2; /* the largest line number */
    uint64_t *nt[LM_MAXLV] = {0};
    uint8_t *nd[LM_MAXLV] = {0};
    int ok = 1;
    for (int i = 0; i < h->n && ok; i++) {
        const lm_cache *c = &h->lv[i];
        size_t m = (size_t)(c->sets * c->ways);
        for (size_t k = 0; k < m && ok; k++) {
            uint64_t t = c->tags[k];
            if (t != LM_INVALID && (delta >= 0 ? t > top - (uint64_t)delta : t < (uint64_t)(-delta))) ok = 0;
        }
        nt[i] = malloc(m * sizeof(uint64_t));
        nd[i] = malloc(m);
        if (!nt[i] || !nd[i]) ok = 0;
    }
    for (int i = 0; i < h->n; i++) {
        lm_cache *c = &h->lv[i];
        if (!ok) {
            free(nt[i]);
            free(nd[i]);
            continue;
        }
        int64_t S = c->sets, W = c->ways;
        int64_t r = (int64_t)rot_of(delta, S);
        for (int64_t s = 0; s < S; s++) {
            int64_t s2 = s + r < S ? s + r : s + r - S;
            for (int64_t w = 0; w < W; w++) {
                uint64_t t = c->tags[s * W + w];
                nt[i][s2 * W + w] = t == LM_INVALID ? t : t + (uint64_t)delta;
                nd[i][s2 * W + w] = c->dirty[s * W + w];
            }
        }
        free(c->tags);
        free(c->dirty);
        c->tags = nt[i];
        c->dirty = nd[i];
    }
    return ok;
}

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a < 0 ? -a : a;
}

/* which loops repeat shifted (see above): the same byte step per iteration for every access, every
   loop inside with constant bounds */
static void ff_init(lm_ff *ff, const lm_hier *h, const lm_nest *n, const lm_run_opts *o) {
    memset(ff, 0, sizeof(*ff));
    for (int i = 0; i < h->n; i++) ff->lines += h->lv[i].sets * h->lv[i].ways;
    ff->on = o->fast_forward && ff->lines <= LM_FF_MAX_LINES;
    int inner = n->depth - 1;
    int64_t line = (int64_t)1 << h->line_log2;
    for (int L = 0; L < inner && ff->on; L++) {
        int ok = 1;
        for (int e = L + 1; e <= inner; e++)
            for (int j = 0; j < e; j++)
                if (n->start_k[e * LM_MAXD + j] || n->stop_k[e * LM_MAXD + j]) ok = 0;
        __int128 S = (__int128)n->coef[L] * n->step[L];
        for (int a = 1; a < n->nacc; a++)
            if ((__int128)n->coef[a * LM_MAXD + L] * n->step[L] != S) ok = 0;
        if (!ok || S > ((__int128)1 << 60) || S < -((__int128)1 << 60)) continue;
        int64_t g = gcd64(line, (int64_t)S % line);
        lm_period *p = &ff->per[L];
        p->ok = 1;
        p->P = line / g;
        p->delta = (int64_t)S / g;
    }
}

static void ff_free(lm_ff *ff, const lm_hier *h) {
    for (int L = 0; L < LM_MAXD; L++) {
        lm_period *p = &ff->per[L];
        if (p->has_buf) snap_free(h, &p->buf);
        free(p->cur_placed);
        free(p->ref_placed);
        free(p->cur_valid);
        free(p->ref_valid);
    }
}

/* a warm-up check (warm_check), recorded for the loops whose periods may be jumped */
static int ff_checked(lm_ff *ff, const lm_hier *h, lm_warm_lv *ws, const lm_run_opts *o) {
    for (int L = 0; L < LM_MAXD && ff->on; L++) {
        lm_period *p = &ff->per[L];
        if (!p->recording || p->n_cur < 0) continue;
        if (p->n_cur == p->rec_cap) {
            int64_t cap = p->rec_cap ? 2 * p->rec_cap : 1024;
            uint64_t *a = cap <= LM_FF_MAX_CHECKS ? realloc(p->cur_placed, (size_t)(cap * h->n) * sizeof(uint64_t)) : NULL;
            if (a) p->cur_placed = a;
            int64_t *b = a ? realloc(p->cur_valid, (size_t)(cap * h->n) * sizeof(int64_t)) : NULL;
            if (b) p->cur_valid = b;
            uint64_t *c = b ? realloc(p->ref_placed, (size_t)(cap * h->n) * sizeof(uint64_t)) : NULL;
            if (c) p->ref_placed = c;
            int64_t *d = c ? realloc(p->ref_valid, (size_t)(cap * h->n) * sizeof(int64_t)) : NULL;
            if (d) p->ref_valid = d;
            if (!d) { /* too many to record: this period is no reference */
                p->n_cur = -1;
                continue;
            }
            p->rec_cap = cap;
        }
        for (int i = 0; i < h->n; i++) {
            p->cur_placed[p->n_cur * h->n + i] = h->lv[i].placed;
            p->cur_valid[p->n_cur * h->n + i] = h->lv[i].valid;
        }
        p->n_cur++;
    }
    return warm_check(h, ws, o);
}

/* every access stays inside the address space (no wrap-around modulo 2**64, which would break the
   shift) from the period that confirmed the repetition on, over the periods simulated since, the m
   periods jumped and the one after: each period is then the shift of the one before */
static int ff_in_range(const lm_nest *n, const int64_t *idx, int L, const uint64_t *base, const lm_period *p,
                       int64_t m) {
    int inner = n->depth - 1;
    __int128 span = (__int128)p->P * n->step[L];
    for (int a = 0; a < n->nacc; a++) {
        const int64_t *cf = n->coef + a * LM_MAXD;
        __int128 v = base[a], lo, hi;
        for (int k = 0; k < L; k++) v += (__int128)cf[k] * idx[k];
        __int128 v1 = (__int128)cf[L] * p->from, v2 = (__int128)cf[L] * (idx[L] + (m + 1) * span);
        lo = v + (v1 < v2 ? v1 : v2);
        hi = v + (v1 < v2 ? v2 : v1);
        for (int e = L + 1; e <= inner; e++) {
            int64_t t = trips(n->start_c[e], n->stop_c[e], n->step[e]);
            if (t == 0) return 0;
            __int128 w1 = (__int128)cf[e] * n->start_c[e];
            __int128 w2 = (__int128)cf[e] * (n->start_c[e] + (__int128)(t - 1) * n->step[e]);
            lo += w1 < w2 ? w1 : w2;
            hi += w1 < w2 ? w2 : w1;
        }
        if (lo < 0 || hi + n->size[a] > ((__int128)1 << 64)) return 0;
    }
    return 1;
}

/* whole periods of loop L that can be jumped from this boundary (0: none): they stay inside the
   loop, and the driver would decide nothing in them (the warm-up does not end, the window neither
   ends nor reaches its half, max_it is not reached) */
static int64_t ff_periods(const lm_period *p, int L, const lm_hier *h, const lm_nest *n, const lm_run_opts *o,
                          const int64_t *idx, const lm_drive *dv, const lm_warm_lv *ws, lm_warm_lv *wout,
                          const uint64_t *base) {
    int64_t rem = trips(idx[L], bnd(n->stop_c, n->stop_k, L, idx), n->step[L]);
    int64_t m = (rem - 1) / p->P; /* land on an iteration of L */
    lm_counters now;
    counters_take(h, dv, &now);
    int64_t dsim = now.simulated - p->at.simulated;
    if (o->max_it) {
        if (dv->simulated >= o->max_it || dsim <= 0) return 0;
        int64_t lim = (o->max_it - 1 - dv->simulated) / dsim;
        if (lim < m) m = lim;
    }
    if (p->regime == 1) {
        /* replay the warm-up checks of the periods jumped: those of the last period, placements shifted
           by whole periods' worth, the fill states as they were; stop before the period where it ends */
        if (!p->ref_ok) return 0;
        memcpy(wout, ws, sizeof(lm_warm_lv) * (size_t)h->n);
        uint64_t placed[LM_MAXLV];
        for (int64_t k = 0; k < m; k++) {
            lm_warm_lv save[LM_MAXLV];
            memcpy(save, wout, sizeof(lm_warm_lv) * (size_t)h->n);
            for (int64_t j = 0; j < p->n_ref; j++) {
                for (int i = 0; i < h->n; i++) {
                    uint64_t rate = now.c[8 * i + 7] - p->at.c[8 * i + 7];
                    placed[i] = h->lv[i].placed + (uint64_t)k * rate + (p->ref_placed[j * h->n + i] - p->at.c[8 * i + 7]);
                }
                if (warm_check_at(h, placed, p->ref_valid + j * h->n, wout, o)) {
                    memcpy(wout, save, sizeof(lm_warm_lv) * (size_t)h->n);
                    m = k;
                    break;
                }
            }
        }
    } else {
        int64_t dm = now.measured - p->at.measured;
        if (dm <= 0 || dv->measured >= dv->target) return 0;
        int64_t lim = (dv->target - 1 - dv->measured) / dm;
        if (!dv->half_taken) {
            int64_t room = (dv->target - 1) / 2 - dv->measured;
            if (room < 0) return 0;
            if (room / dm < lim) lim = room / dm;
        }
        if (lim < m) m = lim;
    }
    if (m <= 0 || !ff_in_range(n, idx, L, base, p, m)) return 0;
    return m;
}

static void ff_begin(lm_period *p, int L, const lm_hier *h, const lm_nest *n, const int64_t *idx, const lm_drive *dv) {
    p->live = 1;
    p->periodic = p->snap = p->recording = p->ref_ok = 0;
    p->n_cur = 0;
    p->next = idx[L] + p->P * n->step[L];
    p->regime = ff_regime(dv);
    p->events = dv->events;
    p->attempt_work = dv->work;
    counters_take(h, dv, &p->at);
}

/* the driver's last line of work now is the one at the last boundary moved by the period's shift (or
   none, both times): the next period counts its units of work as the last one did. Not so after the
   period in which counting began: its first line counted as new whatever line came before it. */
static int ff_work_line_shifted(const lm_period *p, const lm_drive *dv) {
    uint64_t before = p->at.last_work_line;
    return dv->last_work_line == (before == LM_INVALID ? LM_INVALID : before + (uint64_t)p->delta);
}

/* a period boundary of loop L: confirm the period (the state is the shift of the snapshot taken at
   the boundary before), jump whole periods where the last one was a reference (one regime, no
   event), else take a snapshot where it is time to try */
static void ff_boundary(lm_ff *ff, lm_period *p, int L, lm_hier *h, const lm_nest *n, const lm_run_opts *o,
                        int64_t *idx, lm_drive *dv, lm_warm_lv *ws, const uint64_t *base) {
    int reg = ff_regime(dv);
    if (p->recording) { /* the warm-up checks of the period that ended are the reference */
        uint64_t *a = p->ref_placed;
        int64_t *b = p->ref_valid;
        p->ref_placed = p->cur_placed;
        p->ref_valid = p->cur_valid;
        p->cur_placed = a;
        p->cur_valid = b;
        p->n_ref = p->n_cur;
        p->ref_ok = p->n_cur >= 0;
        p->n_cur = 0;
    }
    if (!p->periodic && p->snap) {
        p->periodic = snap_shifted(h, &p->buf, p->delta);
        p->from = idx[L] - p->P * n->step[L];
        p->snap = 0;
        if (!p->periodic) p->attempt_work = dv->work;
        p->recording = p->periodic;
        p->ref_ok = p->ref_ok && p->periodic; /* not where a jump inside left checks out of the record */
    }
    lm_warm_lv wout[LM_MAXLV];
    int64_t m = p->periodic && reg && reg == p->regime && dv->events == p->events && ff_work_line_shifted(p, dv) ?
                ff_periods(p, L, h, n, o, idx, dv, ws, wout, base) : 0;
    if (m > 0 && shift_state(h, m * p->delta)) {
        counters_advance(h, dv, &p->at, m);
        idx[L] += m * p->P * n->step[L];
        if (dv->last_work_line != LM_INVALID) dv->last_work_line += (uint64_t)(m * p->delta);
        if (reg == 1) memcpy(ws, wout, sizeof(lm_warm_lv) * (size_t)h->n);
        for (int k = 0; k < L; k++) ff->per[k].n_cur = -1; /* their periods' warm-up checks now miss some */
    } else if (!p->periodic && dv->work - p->attempt_work >= 2 * ff->lines) {
        if (!p->has_buf && ff->bufs < LM_FF_BUFS(ff->lines)) {
            if (snap_alloc(h, &p->buf)) {
                p->has_buf = 1;
                ff->bufs++;
            } else {
                snap_free(h, &p->buf);
            }
        }
        if (p->has_buf) {
            snap_take(h, &p->buf);
            p->snap = p->recording = 1;
            p->n_cur = 0;
        }
    }
    p->next = idx[L] + p->P * n->step[L];
    p->regime = reg;
    p->events = dv->events;
    counters_take(h, dv, &p->at);
}

/* at the start of a row, which starts an iteration of every loop from adv (the loop advanced to
   reach it; -1 at a sweep's start) inwards; the loops inside adv begin anew */
static void ff_row(lm_ff *ff, lm_hier *h, const lm_nest *n, const lm_run_opts *o, int64_t *idx, int adv,
                   lm_drive *dv, lm_warm_lv *ws, const uint64_t *base) {
    if (!ff->on) return;
    for (int L = adv < 0 ? 0 : adv; L < n->depth - 1; L++) {
        lm_period *p = &ff->per[L];
        if (!p->ok) continue;
        if (L == adv && p->live) {
            if (idx[L] == p->next) ff_boundary(ff, p, L, h, n, o, idx, dv, ws, base);
        } else {
            ff_begin(p, L, h, n, idx, dv);
        }
    }
}

static int finish(lm_run_result *r, const lm_drive *dv, int64_t simulated, int rc) {
    r->measured_it = dv->measured;
    r->work_lines = dv->work_lines;
    r->simulated_it = simulated;
    r->warm = dv->warm;
    r->jumped_it = dv->jumped;
    return rc;
}

/* the accesses of an inner iteration, in order (index, address step, bytes, kind, and whether a hit in
   the first level can take the short way: a load, or a store into a write-back first level), and the
   others that move with the inner loop */
typedef struct {
    int inner[256], moving[256];
    int64_t inc[256], minc[256];
    uint64_t size[256], gran[256]; /* gran: gcd(line, |inc|): every address of a row lies as far past it */
    uint8_t kind[256], quick_kind[256], quick[256]; /* quick: quick_kind, and inside one line all row long */
    int n_inner, n_moving, work; /* work: position of the work access among the inner ones (-1: none) */
} lm_accs;

/* an inner access at addr: a first-level hit without the general machinery (see lm_access1; the hit
   is counted by the caller), else the general path */
static inline __attribute__((always_inline)) int access_inner(lm_hier *h, const lm_cache *c, uint64_t addr,
                                                              uint64_t size, int kind, int quick) {
    if (quick) {
        uint64_t l = addr >> h->line_log2;
        uint64_t s = set_index(c, l);
        uint64_t *t = c->tags + s * (uint64_t)c->ways;
        uint8_t *d = c->dirty + s * (uint64_t)c->ways;
        if (t[0] == l) { /* the front entry: touch moves nothing */
            if (kind == LM_STORE) d[0] = 1;
            return 1;
        }
        int64_t p = find(c, t, l);
        if (p >= 0) {
            touch(c, t, d, p);
            if (kind == LM_STORE) d[c->policy == LM_LRU ? 0 : p] = 1;
            return 1;
        }
        lm_miss1(h, l, size, kind);
        return 0;
    }
    lm_access_lines(h, addr, size, kind);
    return 0;
}

/* count inner iterations of a row from addr on; work: count the units of work */
static inline __attribute__((always_inline)) void run_iters(lm_hier *h, const lm_nest *n, const lm_accs *acc,
                                                            uint64_t *addr, int64_t count, int work, lm_drive *dv) {
    uint64_t ad[256];
    uint64_t hits = 0;
    const lm_cache first = h->lv[0]; /* its shape and arrays, fixed within a row (not its counters) */
    for (int q = 0; q < acc->n_inner; q++) ad[q] = addr[acc->inner[q]];
    for (int64_t k = 0; k < count; k++) {
        if (work) {
            uint64_t wl = (acc->work >= 0 ? ad[acc->work] : addr[n->work]) >> h->line_log2;
            dv->work_lines += wl != dv->last_work_line;
            dv->last_work_line = wl;
        }
        for (int q = 0; q < acc->n_inner; q++) {
            hits += (uint64_t)access_inner(h, &first, ad[q], acc->size[q], acc->kind[q], acc->quick[q]);
            ad[q] += (uint64_t)acc->inc[q];
        }
        for (int q = 0; q < acc->n_moving; q++) addr[acc->moving[q]] += (uint64_t)acc->minc[q];
    }
    h->lv[0].hits += hits * h->counting;
    for (int q = 0; q < acc->n_inner; q++) addr[acc->inner[q]] = ad[q];
}

static int run_nest(lm_hier *h, const lm_nest *n, const lm_run_opts *o, lm_run_result *r, lm_ff *ff) {
    int D = n->depth, inner = D - 1;
    int64_t idx[LM_MAXD];
    uint64_t addr[256];
    int64_t inc[256];
    lm_warm_lv ws[LM_MAXLV];
    lm_drive dv = {0};
    dv.target = o->target_it;
    lm_half half = {0};
    uint64_t line = (uint64_t)1 << h->line_log2;
    memset(r, 0, sizeof(*r));
    memset(ws, 0, sizeof(ws));
    h->counting = 0;
    int stop_sweep = -1;
    dv.last_work_line = LM_INVALID; /* small data sets: measure one whole sweep after a warm-up sweep */
    int nbase = n->nbase > 1 ? n->nbase : 1;
    lm_accs acc;
    acc.n_inner = acc.n_moving = 0;
    acc.work = -1;
    for (int a = 0; a < n->nacc; a++) {
        int64_t step = n->coef[a * LM_MAXD + inner] * n->step[inner];
        if (n->phase[a] == 0) {
            int q = acc.n_inner++;
            if (a == n->work) acc.work = q;
            acc.inner[q] = a;
            acc.inc[q] = step;
            acc.size[q] = n->size[a];
            acc.kind[q] = n->kind[a];
            acc.quick_kind[q] = n->kind[a] == LM_LOAD || (n->kind[a] == LM_STORE && h->lv[0].write_back);
            acc.gran[q] = (uint64_t)gcd64((int64_t)line, step % (int64_t)line);
        } else if (step != 0) {
            acc.minc[acc.n_moving] = step;
            acc.moving[acc.n_moving++] = a;
        }
    }
    if (o->cold) { /* a single cold sweep, measured whole */
        dv.warm = dv.whole = dv.contiguous = 1;
        stop_sweep = 0;
    }
    for (int sweep = 0; sweep < o->max_sweeps; sweep++) {
        r->sweeps = sweep + 1;
        const uint64_t *base = n->base + (size_t)(sweep % nbase) * (size_t)n->nacc;
        if (!dv.warm) warm_sweep_start(h, ws);
        /* odometer over the outer loops; d = number of initialised outer loops */
        int d = 0, adv = -1; /* adv: the loop advanced to reach this row (-1: the sweep's start) */
        for (;;) {
            /* descend: initialise loops d..inner-1 */
            int ok = 1;
            while (d < inner) {
                idx[d] = bnd(n->start_c, n->start_k, d, idx);
                int64_t t = trips(idx[d], bnd(n->stop_c, n->stop_k, d, idx), n->step[d]);
                if (t == 0) { ok = 0; break; }
                if (d == 0 && sweep == 0 && o->start_mid) idx[0] += (t / 2) * n->step[0];
                d++;
            }
            if (ok) {
                /* ---- one row of the inner loop ---- */
                ff_row(ff, h, n, o, idx, adv, &dv, ws, base);
                int64_t s = bnd(n->start_c, n->start_k, inner, idx);
                int64_t e = bnd(n->stop_c, n->stop_k, inner, idx);
                int64_t st = n->step[inner];
                int64_t T = trips(s, e, st);
                int edge_row = 0;
                if (o->edges) {
                    for (int k = 0; k < inner; k++) {
                        int64_t ks = bnd(n->start_c, n->start_k, k, idx), ke = bnd(n->stop_c, n->stop_k, k, idx);
                        int64_t kt = trips(ks, ke, n->step[k]);
                        int64_t pos = (idx[k] - ks) / n->step[k];
                        if (kt >= 3 && (pos == 0 || pos == kt - 1)) edge_row = 1;
                    }
                }
                for (int a = 0; a < n->nacc; a++) {
                    uint64_t v = base[a];
                    const int64_t *cf = n->coef + a * LM_MAXD;
                    for (int k = 0; k < inner; k++) v += (uint64_t)(cf[k] * idx[k]);
                    addr[a] = v + (uint64_t)(cf[inner] * s);
                    inc[a] = cf[inner] * st;
                }
                for (int q = 0; q < acc.n_inner; q++) /* every address of the row lies as far past a multiple of gran */
                    acc.quick[q] = acc.quick_kind[q] && addr[acc.inner[q]] % acc.gran[q] + acc.size[q] <= acc.gran[q];
                set_counting(h, (uint64_t)dv.contiguous, r, dv.whole); /* row-start accesses lie inside a contiguous window */
                for (int a = 0; a < n->nacc; a++)
                    if (n->phase[a] == 1) lm_access1(h, addr[a], n->size[a], n->kind[a]);
                h->counting = 0;
                /* Measurement. Long rows: a window [lo, hi) of whole cache lines of work inside the row,
                   margin_it away from its ends. Short rows (the usual multi-dimensional case): whole
                   rows, counted contiguously from the first line-aligned iteration of a row to the
                   same point of a later row, so that every phase of the row period is sampled equally
                   (evictions triggered now belong to lines touched a cache capacity ago). */
                int64_t lo = -1, hi = -1;
                int64_t it = 0;
                if (dv.contiguous && !dv.whole && !half.taken && 2 * dv.measured >= dv.target) half_take(h, &half, &dv);
                while (it < T) {
                    if (!dv.warm && ff_checked(ff, h, ws, o)) {
                        dv.warm = 1;
                        r->warm_it = dv.simulated + it;
                    }
                    if (dv.warm && lo < 0 && (!edge_row || dv.contiguous || dv.whole)) {
                        /* first iteration >= it where the work array is at a line start */
                        int64_t c = it;
                        uint64_t wa = addr[n->work];
                        while (c < T && (wa & (line - 1)) != 0) {
                            wa += (uint64_t)inc[n->work];
                            c++;
                        }
                        int64_t want = dv.target - dv.measured;
                        if (dv.contiguous) {
                            /* go on through this row, or stop at its aligned point once enough */
                            lo = 0;
                            hi = (!dv.whole && dv.measured + c >= dv.target) ? c : T;
                            if (hi == 0) {
                                h->counting = 0;
                                return finish(r, &dv, dv.simulated, 0);
                            }
                        } else if (dv.whole) {
                            if (it == 0) { /* the whole next sweep, from its first row */
                                dv.contiguous = 1;
                                lo = 0;
                                hi = T;
                            } else {
                                lo = hi = T;
                            }
                        } else if (T - c - 2 * o->margin_it >= want) {
                            int64_t c0 = c + ((o->margin_it + n->it_per_cl - 1) / n->it_per_cl) * n->it_per_cl;
                            int64_t units = (want + n->it_per_cl - 1) / n->it_per_cl;
                            lo = c0;
                            hi = c0 + units * n->it_per_cl;
                            if (hi > T) lo = hi = T;
                        } else if (it == 0) {
                            dv.contiguous = 1; /* short rows: whole rows from here */
                            lo = c;
                            hi = T;
                        } else {
                            lo = hi = T; /* warm in the middle of a short row: start with the next one */
                        }
                    }
                    int64_t stop_at = T;
                    int counting = 0;
                    if (!dv.warm) {
                        if (it + n->it_per_cl < T) stop_at = it + n->it_per_cl;
                    } else if (lo >= 0 && it < lo) {
                        stop_at = lo;
                    } else if (lo >= 0 && it < hi) {
                        stop_at = hi;
                        counting = 1;
                    }
                    set_counting(h, (uint64_t)counting, r, dv.whole);
                    int64_t it0 = it;
                    if (counting) /* units of work: distinct cache lines of the work array touched while counting */
                        run_iters(h, n, &acc, addr, stop_at - it, 1, &dv);
                    else
                        run_iters(h, n, &acc, addr, stop_at - it, 0, &dv);
                    it = stop_at;
                    h->counting = 0;
                    if (counting) dv.measured += stop_at - it0;
                    if (counting && !dv.whole && dv.measured >= dv.target && dv.contiguous && stop_at < T && half.taken &&
                        2 * dv.target <= o->max_target_it && !half_settled(h, &half, dv.work_lines, o->settle_tol)) {
                        /* not settled: measure as much again, compared with all measured so far */
                        dv.target *= 2;
                        dv.events++;
                        half_take(h, &half, &dv);
                        hi = T;
                        continue;
                    }
                    if (counting && !dv.whole && dv.measured >= dv.target && (!dv.contiguous || stop_at < T)) {
                        return finish(r, &dv, dv.simulated + it, 0);
                    }
                    if (o->max_it && dv.simulated + it >= o->max_it) {
                        return finish(r, &dv, dv.simulated + it, 1);
                    }
                }
                set_counting(h, (uint64_t)dv.contiguous, r, dv.whole); /* so are the row-end accesses */
                dv.simulated += T;
                dv.work += T * n->nacc;
                for (int a = 0; a < n->nacc; a++)
                    if (n->phase[a] == 2) lm_access1(h, addr[a], n->size[a], n->kind[a]);
                h->counting = 0;
            }
            /* advance the odometer (from the loop enclosing an empty one, or the innermost outer loop) */
            d = ok ? inner - 1 : d - 1;
            while (d >= 0) {
                idx[d] += n->step[d];
                int64_t e = bnd(n->stop_c, n->stop_k, d, idx);
                if (n->step[d] > 0 ? idx[d] < e : idx[d] > e) break;
                d--;
            }
            if (d < 0) break; /* sweep done */
            adv = d;
            d++;
        }
        if (dv.contiguous && !dv.whole && dv.target > o->target_it && dv.measured >= o->target_it) {
            /* a window grown to settle ends with the sweep: the wrap-around is no steady state */
            return finish(r, &dv, dv.simulated, 0);
        }
        if (!dv.warm && sweep + 1 - (o->start_mid ? 1 : 0) >= nbase) {
            /* whole sweeps did not take in enough lines: the data set is small; its steady state is
               periodic with nbase sweeps (the arrays' places repeat), so the next nbase sweeps are
               measured whole */
            dv.warm = 1;
            dv.whole = 1;
            stop_sweep = sweep + nbase;
            r->warm_it = dv.simulated;
        } else if (dv.whole && sweep == stop_sweep) {
            break;
        }
    }
    return finish(r, &dv, dv.simulated, 0);
}

int lm_run(lm_hier *h, const lm_nest *n, const lm_run_opts *o, lm_run_result *r) {
    if (n->nacc > 256 || n->depth < 1 || n->depth > LM_MAXD || h->n > LM_MAXLV) return -1;
    lm_ff *ff = malloc(sizeof(lm_ff));
    if (!ff) return -1;
    ff_init(ff, h, n, o);
    int rc = run_nest(h, n, o, r, ff);
    ff_free(ff, h);
    free(ff);
    return rc;
}
