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
static void lm_write_back(lm_hier *h, int j, uint64_t l);

static inline uint64_t *set_of(lm_cache *c, uint64_t l, uint8_t **d) {
    uint64_t s = c->set_mask >= 0 ? (l & (uint64_t)c->set_mask) : (l % (uint64_t)c->sets);
    *d = c->dirty + s * c->ways;
    return c->tags + s * c->ways;
}

static inline int64_t find(const lm_cache *c, const uint64_t *t, uint64_t l) {
    for (int64_t k = 0; k < c->ways; k++) {
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

static inline void touch(lm_cache *c, uint64_t *t, uint8_t *d, int64_t p) {
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
    int64_t rest = c->ways - p - 1;
    memmove(t + p, t + p + 1, (size_t)rest * sizeof(uint64_t));
    memmove(d + p, d + p + 1, (size_t)rest);
    t[c->ways - 1] = LM_INVALID;
    d[c->ways - 1] = 0;
    c->valid--;
}

static inline void insert_at(lm_cache *c, uint64_t *t, uint8_t *d, int64_t p, uint64_t l, uint8_t dirty) {
    int64_t rest = c->ways - p - 1; /* the last entry is free when we get here */
    memmove(t + p + 1, t + p, (size_t)rest * sizeof(uint64_t));
    memmove(d + p + 1, d + p, (size_t)rest);
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
    c->misses += h->counting;
    uint8_t dd = lm_fetch(h, i, l);
    lm_place(h, i, l, dd);
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

static void lm_store(lm_hier *h, int i, uint64_t l, uint64_t b) {
    if (i == h->n) {
        h->mem_store_bytes += h->counting * b;
        return;
    }
    lm_cache *c = &h->lv[i];
    uint8_t *d;
    uint64_t *t = set_of(c, l, &d);
    int64_t p = find(c, t, l);
    int allocated = 1;
    if (p >= 0) {
        c->hits += h->counting;
        touch(c, t, d, p);
        if (c->write_back) d[c->policy == LM_LRU ? 0 : p] = 1; /* touch moved it to the front */
    } else {
        c->misses += h->counting;
        if (c->write_allocate && c->kind != LM_VICTIM) {
            uint8_t dd = lm_fetch(h, i, l);
            lm_place(h, i, l, (uint8_t)(dd || c->write_back));
        } else {
            allocated = 0;
        }
    }
    if (!c->write_back || !allocated) {
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

static inline void lm_access1(lm_hier *h, uint64_t addr, uint64_t size, int kind) {
    uint64_t line_size = (uint64_t)1 << h->line_log2;
    uint64_t off = addr & (line_size - 1);
    uint64_t l = addr >> h->line_log2;
    if (kind != LM_NT && off + size <= line_size) {
        /* fast path: a hit in the first level (the common case) without the general machinery */
        lm_cache *c = h->lv;
        uint8_t *d;
        uint64_t *t = set_of(c, l, &d);
        int64_t p = find(c, t, l);
        if (p >= 0 && (kind == LM_LOAD || c->write_back)) {
            c->hits += h->counting;
            touch(c, t, d, p);
            if (kind == LM_STORE) d[c->policy == LM_LRU ? 0 : p] = 1;
            return;
        }
    }
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
} lm_run_opts;

typedef struct {
    int64_t measured_it, simulated_it, warm_it, work_lines;
    int sweeps, warm;
    int dirty_taken;          /* 1: dirty_start holds the dirty lines per level when counting began */
    int64_t dirty_start[16];  /* LM_MAXLV */
} lm_run_result;

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

static int warm_check(const lm_hier *h, lm_warm_lv *w, const lm_run_opts *o) {
    int warm = 1;
    for (int i = 0; i < h->n; i++) {
        const lm_cache *c = &h->lv[i];
        uint64_t cap = (uint64_t)(c->sets * c->ways);
        if (!w[i].full) {
            if (c->valid >= (int64_t)cap) {
                w[i].full = 1;
            } else if (c->placed - w[i].chk_placed >= cap) {
                if (c->valid <= w[i].chk_valid) w[i].full = 1; /* a capacity placed, no net growth */
                w[i].chk_placed = c->placed;
                w[i].chk_valid = c->valid;
            }
            if (w[i].full) w[i].full_at = c->placed;
        }
        uint64_t since = w[i].full_at > w[i].sweep0 ? w[i].full_at : w[i].sweep0;
        if (!w[i].full || c->placed - since < (uint64_t)o->warm_caps_full * cap ||
            c->placed - w[i].sweep0 < (uint64_t)o->warm_caps_sweep * cap)
            warm = 0;
    }
    return warm;
}

/* Settling of a whole-row window: the traffic (lines loaded and stored per level) per unit of work in
   its second half agrees with the first half's. */
typedef struct {
    int taken;
    int64_t work_lines;
    uint64_t lines[2 * LM_MAXLV];
} lm_half;

static void half_take(const lm_hier *h, lm_half *s, int64_t work_lines) {
    s->taken = 1;
    s->work_lines = work_lines;
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

int lm_run(lm_hier *h, const lm_nest *n, const lm_run_opts *o, lm_run_result *r) {
    int D = n->depth, inner = D - 1;
    int64_t idx[LM_MAXD];
    uint64_t addr[256];
    int64_t inc[256];
    lm_warm_lv ws[LM_MAXLV];
    int warm = 0;
    int64_t measured = 0, simulated = 0;
    int64_t target = o->target_it;
    lm_half half = {0};
    uint64_t line = (uint64_t)1 << h->line_log2;
    if (n->nacc > 256 || D < 1 || D > LM_MAXD || h->n > LM_MAXLV) return -1;
    memset(r, 0, sizeof(*r));
    memset(ws, 0, sizeof(ws));
    h->counting = 0;
    int contiguous = 0;
    int whole = 0, stop_sweep = -1;
    int64_t work_lines = 0;
    uint64_t last_work_line = LM_INVALID; /* small data sets: measure one whole sweep after a warm-up sweep */
    int nbase = n->nbase > 1 ? n->nbase : 1;
    if (o->cold) { /* a single cold sweep, measured whole */
        warm = whole = contiguous = 1;
        stop_sweep = 0;
    }
    for (int sweep = 0; sweep < o->max_sweeps; sweep++) {
        r->sweeps = sweep + 1;
        const uint64_t *base = n->base + (size_t)(sweep % nbase) * (size_t)n->nacc;
        if (!warm) warm_sweep_start(h, ws);
        /* odometer over the outer loops; d = number of initialised outer loops */
        int d = 0;
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
                set_counting(h, (uint64_t)contiguous, r, whole); /* row-start accesses lie inside a contiguous window */
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
                if (contiguous && !whole && !half.taken && 2 * measured >= target) half_take(h, &half, work_lines);
                while (it < T) {
                    if (!warm && warm_check(h, ws, o)) {
                        warm = 1;
                        r->warm_it = simulated + it;
                    }
                    if (warm && lo < 0 && (!edge_row || contiguous || whole)) {
                        /* first iteration >= it where the work array is at a line start */
                        int64_t c = it;
                        uint64_t wa = addr[n->work];
                        while (c < T && (wa & (line - 1)) != 0) {
                            wa += (uint64_t)inc[n->work];
                            c++;
                        }
                        int64_t want = target - measured;
                        if (contiguous) {
                            /* go on through this row, or stop at its aligned point once enough */
                            lo = 0;
                            hi = (!whole && measured + c >= target) ? c : T;
                            if (hi == 0) {
                                r->measured_it = measured;
                                r->work_lines = work_lines;
                                r->simulated_it = simulated;
                                r->warm = warm;
                                h->counting = 0;
                                return 0;
                            }
                        } else if (whole) {
                            if (it == 0) { /* the whole next sweep, from its first row */
                                contiguous = 1;
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
                            contiguous = 1; /* short rows: whole rows from here */
                            lo = c;
                            hi = T;
                        } else {
                            lo = hi = T; /* warm in the middle of a short row: start with the next one */
                        }
                    }
                    int64_t stop_at = T;
                    int counting = 0;
                    if (!warm) {
                        if (it + n->it_per_cl < T) stop_at = it + n->it_per_cl;
                    } else if (lo >= 0 && it < lo) {
                        stop_at = lo;
                    } else if (lo >= 0 && it < hi) {
                        stop_at = hi;
                        counting = 1;
                    }
                    set_counting(h, (uint64_t)counting, r, whole);
                    int64_t it0 = it;
                    if (counting) {
                        /* units of work: distinct cache lines of the work array touched while counting */
                        for (; it < stop_at; it++) {
                            uint64_t wl = addr[n->work] >> h->line_log2;
                            work_lines += wl != last_work_line;
                            last_work_line = wl;
                            for (int a = 0; a < n->nacc; a++) {
                                if (n->phase[a] == 0) lm_access1(h, addr[a], n->size[a], n->kind[a]);
                                addr[a] += (uint64_t)inc[a];
                            }
                        }
                    } else {
                        for (; it < stop_at; it++) {
                            for (int a = 0; a < n->nacc; a++) {
                                if (n->phase[a] == 0) lm_access1(h, addr[a], n->size[a], n->kind[a]);
                                addr[a] += (uint64_t)inc[a];
                            }
                        }
                    }
                    h->counting = 0;
                    if (counting) measured += stop_at - it0;
                    if (counting && !whole && measured >= target && contiguous && stop_at < T && half.taken &&
                        2 * target <= o->max_target_it && !half_settled(h, &half, work_lines, o->settle_tol)) {
                        /* not settled: measure as much again, compared with all measured so far */
                        target *= 2;
                        half_take(h, &half, work_lines);
                        hi = T;
                        continue;
                    }
                    if (counting && !whole && measured >= target && (!contiguous || stop_at < T)) {
                        r->measured_it = measured;
                        r->work_lines = work_lines;
                        r->simulated_it = simulated + it;
                        r->warm = warm;
                        return 0;
                    }
                    if (o->max_it && simulated + it >= o->max_it) {
                        r->measured_it = measured;
                        r->work_lines = work_lines;
                        r->simulated_it = simulated + it;
                        r->warm = warm;
                        return 1;
                    }
                }
                set_counting(h, (uint64_t)contiguous, r, whole); /* so are the row-end accesses */
                simulated += T;
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
            d++;
        }
        if (contiguous && !whole && target > o->target_it && measured >= o->target_it) {
            /* a window grown to settle ends with the sweep: the wrap-around is no steady state */
            r->measured_it = measured;
            r->work_lines = work_lines;
            r->simulated_it = simulated;
            r->warm = warm;
            return 0;
        }
        if (!warm && sweep + 1 - (o->start_mid ? 1 : 0) >= nbase) {
            /* whole sweeps did not take in enough lines: the data set is small; its steady state is
               periodic with nbase sweeps (the arrays' places repeat), so the next nbase sweeps are
               measured whole */
            warm = 1;
            whole = 1;
            stop_sweep = sweep + nbase;
            r->warm_it = simulated;
        } else if (whole && sweep == stop_sweep) {
            break;
        }
    }
    r->measured_it = measured;
    r->work_lines = work_lines;
    r->simulated_it = simulated;
    r->warm = warm;
    return 0;
}
