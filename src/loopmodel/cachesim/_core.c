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

#define LM_MAXD 8   /* loops of a nest */
#define LM_MAXLV 16 /* levels of a hierarchy */

/* The operations that reach the last level from the levels above it (a load, a store, a write-back of
   a line; a victim last level: a line taken back, with the dirty bit it gave, and a line put in, with
   its dirty bit: `b`), recorded in order for a fast-forward that replays them on the last level alone
   (see "sink" below); `counting` as it was for each. */
enum { LM_OP_LOAD = 0, LM_OP_STORE = 1, LM_OP_WB = 2, LM_OP_TAKE = 3, LM_OP_VICTIM = 4 };
typedef struct {
    uint64_t line;
    uint32_t b;
    uint8_t op, counting;
} lm_op;

typedef struct {
    lm_op *ops;
    int64_t n, cap;
    int bad; /* no reference: too long, or the last level acted on the levels above while recording */
} lm_oplog;

typedef struct {
    int n, line_log2;
    uint64_t counting;
    lm_cache *lv;
    uint64_t mem_loads, mem_stores, mem_store_bytes;
    lm_oplog *rec[LM_MAXD]; /* logs recording the last level's operations (none: nrec = 0) */
    int nrec;
    /* replaying the last level's operations: an eviction from an inclusive last level that could
       invalidate a line held above sets `coupled` instead (see sink_coupled) */
    int replay, coupled;
    const struct lm_lineset *replay_lines;
    uint64_t replay_held_shift, replay_op_shift;
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

/* ---- the last level's operations, recorded (see "sink" in the loop-nest driver) ---- */
#define LM_SINK_MAX_OPS ((int64_t)1 << 19) /* operations recorded per period, at most */

static void oplog_push(lm_oplog *g, int op, uint64_t l, uint64_t b, uint64_t counting) {
    if (g->bad) return;
    if (g->n == g->cap) {
        int64_t cap = g->cap ? 2 * g->cap : 4096;
        lm_op *a = cap <= LM_SINK_MAX_OPS ? realloc(g->ops, (size_t)cap * sizeof(lm_op)) : NULL;
        if (!a) {
            g->bad = 1;
            return;
        }
        g->ops = a;
        g->cap = cap;
    }
    lm_op *e = &g->ops[g->n++];
    e->line = l;
    e->b = (uint32_t)b;
    e->op = (uint8_t)op;
    e->counting = (uint8_t)counting;
}

static inline void sink_log(lm_hier *h, int op, uint64_t l, uint64_t b) {
    for (int k = 0; k < h->nrec; k++) oplog_push(h->rec[k], op, l, b, h->counting);
}

/* the last level acted on the levels above (or an operation not recorded): the periods being
   recorded are no reference */
static void sink_unref(lm_hier *h) {
    for (int k = 0; k < h->nrec; k++) h->rec[k]->bad = 1;
}

/* lines, an open-addressing set (the lines of a period's operations) */
typedef struct lm_lineset {
    uint64_t *slot, mask;
} lm_lineset;

static inline uint64_t lineset_hash(const lm_lineset *s, uint64_t l) {
    return (l * 0x9E3779B97F4A7C15ull >> 17) & s->mask;
}

static int lineset_has(const lm_lineset *s, uint64_t l) {
    for (uint64_t k = lineset_hash(s, l);; k = (k + 1) & s->mask) {
        if (s->slot[k] == l) return 1;
        if (s->slot[k] == LM_INVALID) return 0;
    }
}

static int lineset_build(lm_lineset *s, const lm_oplog *g) {
    uint64_t size = 16;
    while (size < 2 * (uint64_t)g->n) size *= 2;
    s->mask = size - 1;
    s->slot = malloc(size * sizeof(uint64_t));
    if (!s->slot) return 0;
    memset(s->slot, 0xff, size * sizeof(uint64_t));
    for (int64_t q = 0; q < g->n; q++) {
        uint64_t l = g->ops[q].line, k = lineset_hash(s, l);
        while (s->slot[k] != LM_INVALID && s->slot[k] != l) k = (k + 1) & s->mask;
        s->slot[k] = l;
    }
    return 1;
}

/* while the last level's operations of a period are replayed without the levels above: could the
   line v it evicts be held above at this point (an inclusive last level would invalidate it there)?
   What the levels above hold in the replayed period is what they held at its start (their state now,
   moved by the periods before it) and lines that reached them in it, all through the last level's
   operations of the period; yes if v is either (a superset: every operation of the period counts) */
static int sink_coupled(const lm_hier *h, uint64_t v) {
    uint64_t u = v - h->replay_held_shift;
    for (int i = 0; i < h->n - 1; i++) {
        const lm_cache *c = &h->lv[i];
        if (find(c, c->tags + set_index(c, u) * (uint64_t)c->ways, u) >= 0) return 1;
    }
    return lineset_has(h->replay_lines, v - h->replay_op_shift);
}

static void lm_place(lm_hier *h, int i, uint64_t l, uint8_t dirty);

static void lm_victim_insert(lm_hier *h, int j, uint64_t l, uint8_t dirty) {
    if (h->nrec && j == h->n - 1) sink_log(h, LM_OP_VICTIM, l, dirty);
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
    if (c->kind == LM_INCLUSIVE && i > 0 && h->replay && i == h->n - 1) {
        h->coupled |= sink_coupled(h, v); /* replayed: the levels above are not in memory */
    } else if (c->kind == LM_INCLUSIVE && i > 0) {
        for (int u = 0; u < i; u++) {
            lm_cache *cu = &h->lv[u];
            uint8_t *du;
            uint64_t *tu = set_of(cu, v, &du);
            int64_t p = find(cu, tu, v);
            if (p >= 0) {
                dirty |= du[p];
                remove_at(cu, tu, du, p);
                cu->invalidations += h->counting;
                if (i == h->n - 1) sink_unref(h);
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

static uint8_t lm_fetch(lm_hier *h, int i, uint64_t l);

/* a line loaded from victim level j: taken out where it is there (its dirty bit goes with it), else
   fetched from below */
static uint8_t lm_victim_take(lm_hier *h, int j, uint64_t l) {
    lm_cache *c = &h->lv[j];
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

static uint8_t lm_fetch(lm_hier *h, int i, uint64_t l) {
    h->lv[i].load_lines += h->counting;
    int j = i + 1;
    if (j == h->n) {
        h->mem_loads += h->counting;
        return 0;
    }
    if (h->lv[j].kind == LM_VICTIM) {
        uint8_t dd = lm_victim_take(h, j, l);
        if (h->nrec && j == h->n - 1) sink_log(h, LM_OP_TAKE, l, dd);
        return dd;
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
    if (h->nrec && i == h->n - 1) sink_log(h, LM_OP_LOAD, l, 0);
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
    if (h->nrec && j == h->n - 1) sink_log(h, LM_OP_WB, l, 0);
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
    if (h->nrec && i == h->n - 1) sink_log(h, LM_OP_STORE, l, b);
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
    sink_unref(h); /* not recorded: it acts on every level */
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

