/* loopmodel cache-simulator core, the loop-nest driver: runs a kernel's loop nest through the
 * hierarchy of _core.c (compiled after it, as one unit: _build.py), warms it up, measures a window,
 * and jumps over whole periods of the loops where the simulated state repeats. */

/* ---- loop-nest driver ------------------------------------------------------------------------
 * Runs a perfect loop nest of affine accesses (the kernel), repeating the whole sweep, until the
 * hierarchy is warm (every level in steady state: warm_check) and a measurement window of `target_it` inner iterations has been counted.
 * Bounds: value = c[d] + sum_{k<d} k[d*LM_MAXD+k] * idx[k]; stop exclusive; step != 0.
 * Access a: address = base[(sweep % nbase) * nacc + a] + sum_k coef[a*LM_MAXD+k] * idx[k] (bytes,
 * modulo 2**64): the base addresses may change from sweep to sweep (arrays swapped between sweeps);
 * phase 0 every inner iteration, 1 once before the inner loop, 2 once after it.
 * Small data sets (a sweep does not warm the hierarchy up) are measured over nbase whole sweeps
 * after nbase whole warm-up sweeps; `cold` measures the first sweep whole, from a cold start.   */
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
    int64_t fill_slack;    /* > 0: a level whose fill grows by at most capacity / fill_slack over a capacity of
                              placements cannot fill further; 0: only one that does not grow at all */
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
   placements left its fill state unchanged, but for capacity / fill_slack lines where fill_slack > 0 (a
   level that cannot fill: the data set, or the sets the data map to, are smaller than it; victim and
   exclusive levels lose lines to the levels above; a data set near a large level's capacity fills its
   last sets slowly, by conflicts, and without the slack the warm-up waited for a whole sweep), and
   then has turned over: warm_caps_full capacities placed since that moment, and warm_caps_sweep
   capacities within the current sweep (a wrap-around to the array starts puts the array edges into
   the cache history, which must have left the cache before measuring). */
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
                int64_t slack = o->fill_slack > 0 ? (int64_t)cap / o->fill_slack : 0;
                if (valid[i] - w[i].chk_valid <= slack) w[i].full = 1; /* a capacity placed, (almost) no net growth */
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

/* warm-up checks recorded in a period: placements and fill state per level, and (sinks) the
   operations logged before each */
typedef struct {
    int64_t n, cap; /* n = -1: too many to record; this period is no reference */
    uint64_t *placed;
    int64_t *valid, *opos;
} lm_checks;

static void checks_push(lm_checks *r, const lm_hier *h, int64_t opos) {
    if (r->n < 0) return;
    if (r->n == r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 1024;
        uint64_t *a = cap <= LM_FF_MAX_CHECKS ? realloc(r->placed, (size_t)(cap * h->n) * sizeof(uint64_t)) : NULL;
        if (a) r->placed = a;
        int64_t *b = a ? realloc(r->valid, (size_t)(cap * h->n) * sizeof(int64_t)) : NULL;
        if (b) r->valid = b;
        int64_t *c = b ? realloc(r->opos, (size_t)cap * sizeof(int64_t)) : NULL;
        if (c) r->opos = c;
        if (!c) {
            r->n = -1;
            return;
        }
        r->cap = cap;
    }
    for (int i = 0; i < h->n; i++) {
        r->placed[r->n * h->n + i] = h->lv[i].placed;
        r->valid[r->n * h->n + i] = h->lv[i].valid;
    }
    r->opos[r->n++] = opos;
}

static void checks_free(lm_checks *r) {
    free(r->placed);
    free(r->valid);
    free(r->opos);
}

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
    lm_checks cur, ref;
} lm_period;

/* The sink of a loop's periods: the levels above the last repeat shifted from one boundary to the next
   while the last level does not (it is filling, or its contents do not repeat within a period of
   this loop). The levels above then do in every period what they did in the one before, shifted,
   as long as the last level does nothing to them: it evicts no line they hold (an inclusive one
   would invalidate it there) and, a victim level, gives each line back with the dirty bit it gave in
   the period before. Their operations on the last level are then the last period's, shifted: the
   driver replays those on the last level alone, period by period, each undone whole where it ends
   early: a line it evicts could be held above (what they hold at any point of a period is within
   their state at its start and the lines of its operations), a line goes up with another dirty bit,
   or the warm-up ends in it; then it moves the levels above on by the periods replayed, exactly what
   simulating every access would have given. */
typedef struct {
    int on;
    lm_oplog log;         /* the last level's operations since the last boundary of the loop */
    lm_snap up;           /* the levels above at the last boundary (up_ok) */
    int up_ok, has_up;
    int64_t attempt_work; /* drive.work when the last comparison failed (or the context began) */
    lm_checks chk;        /* warm-up checks since the last boundary */
} lm_sink;

typedef struct {
    int on, bufs;
    int64_t lines;       /* lines in the hierarchy */
    int64_t up_lines;    /* lines in the levels above the last */
    lm_period per[LM_MAXD];
    lm_sink sink[LM_MAXD];
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

/* counters += m * (now - at): m more periods of the one that ended now, for the first nlv levels (and
   memory, where that is every level) and the driver */
static void counters_advance(lm_hier *h, lm_drive *dv, const lm_counters *at, int64_t m, int nlv) {
    lm_counters now;
    counters_take(h, dv, &now);
    uint64_t um = (uint64_t)m;
    for (int i = 0; i < nlv; i++) {
        lm_cache *c = &h->lv[i];
        const uint64_t *a = now.c + 8 * i, *b = at->c + 8 * i;
        c->hits += um * (a[0] - b[0]); c->misses += um * (a[1] - b[1]);
        c->load_lines += um * (a[2] - b[2]); c->store_lines += um * (a[3] - b[3]);
        c->through_bytes += um * (a[4] - b[4]); c->evicts += um * (a[5] - b[5]);
        c->invalidations += um * (a[6] - b[6]); c->placed += um * (a[7] - b[7]);
    }
    int j = 8 * h->n;
    if (nlv == h->n) {
        h->mem_loads += um * (now.c[j] - at->c[j]);
        h->mem_stores += um * (now.c[j + 1] - at->c[j + 1]);
        h->mem_store_bytes += um * (now.c[j + 2] - at->c[j + 2]);
    }
    dv->simulated += m * (now.simulated - at->simulated);
    dv->jumped += m * (now.simulated - at->simulated);
    dv->measured += m * (now.measured - at->measured);
    dv->work_lines += m * (now.work_lines - at->work_lines);
}

/* the driver m periods of loop L on, the first nlv levels shifted by them already: their counters and
   the driver's grow by m periods' worth, the loop's index and the last line of work move on */
static void ff_moved_on(lm_hier *h, lm_drive *dv, const lm_period *p, int L, const lm_nest *n, int64_t *idx,
                        int64_t m, int nlv) {
    counters_advance(h, dv, &p->at, m, nlv);
    idx[L] += m * p->P * n->step[L];
    if (dv->last_work_line != LM_INVALID) dv->last_work_line += (uint64_t)(m * p->delta);
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

/* snapshots of the first nlv levels */
static int snap_alloc(const lm_hier *h, lm_snap *s, int nlv) {
    memset(s, 0, sizeof(*s));
    for (int i = 0; i < nlv; i++) {
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

static void snap_take(const lm_hier *h, lm_snap *s, int nlv) {
    for (int i = 0; i < nlv; i++) {
        const lm_cache *c = &h->lv[i];
        size_t m = (size_t)(c->sets * c->ways);
        memcpy(s->tags[i], c->tags, m * sizeof(uint64_t));
        memcpy(s->dirty[i], c->dirty, m);
        s->rng[i] = c->rng;
    }
}

/* the first nlv levels now are the snapshot with every line moved by delta */
static int snap_shifted(const lm_hier *h, const lm_snap *sn, int64_t delta, int nlv) {
    for (int i = 0; i < nlv; i++) {
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

/* reverse entries [a, b) of a level's arrays */
static void reverse_entries(uint64_t *t, uint8_t *d, size_t a, size_t b) {
    for (; a + 1 < b; a++, b--) {
        uint64_t x = t[a];
        t[a] = t[b - 1];
        t[b - 1] = x;
        uint8_t y = d[a];
        d[a] = d[b - 1];
        d[b - 1] = y;
    }
}

/* every line held in the first nlv levels stays a line number when moved by delta lines */
static int tags_in_range(const lm_hier *h, int64_t delta, int nlv) {
    uint64_t top = UINT64_MAX >> h->line_log2; /* the largest line number */
    for (int i = 0; i < nlv; i++) {
        const lm_cache *c = &h->lv[i];
        size_t m = (size_t)(c->sets * c->ways);
        for (size_t k = 0; k < m; k++) {
            uint64_t t = c->tags[k];
            if (t != LM_INVALID && (delta >= 0 ? t > top - (uint64_t)delta : t < (uint64_t)(-delta))) return 0;
        }
    }
    return 1;
}

/* move every line held in the first nlv levels by delta lines (set s's entries to set (s + delta) mod
   sets, in place); 0 (nothing changed) where a line number would leave its range */
static int shift_state(lm_hier *h, int64_t delta, int nlv) {
    if (!tags_in_range(h, delta, nlv)) return 0;
    for (int i = 0; i < nlv; i++) {
        lm_cache *c = &h->lv[i];
        size_t m = (size_t)(c->sets * c->ways), r = (size_t)rot_of(delta, c->sets) * (size_t)c->ways;
        if (r) { /* a rotation to the right by r entries: three reversals */
            reverse_entries(c->tags, c->dirty, 0, m);
            reverse_entries(c->tags, c->dirty, 0, r);
            reverse_entries(c->tags, c->dirty, r, m);
        }
        for (size_t k = 0; k < m; k++)
            if (c->tags[k] != LM_INVALID) c->tags[k] += (uint64_t)delta;
    }
    return 1;
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
static void ff_init(lm_ff *ff, lm_hier *h, const lm_nest *n, const lm_run_opts *o) {
    memset(ff, 0, sizeof(*ff));
    for (int i = 0; i < h->n; i++) ff->lines += h->lv[i].sets * h->lv[i].ways;
    ff->up_lines = ff->lines - h->lv[h->n - 1].sets * h->lv[h->n - 1].ways;
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
        lm_sink *sk = &ff->sink[L];
        sk->on = h->n >= 2;
        if (sk->on) h->rec[h->nrec++] = &sk->log;
    }
}

static void ff_free(lm_ff *ff, lm_hier *h) {
    h->nrec = 0;
    for (int L = 0; L < LM_MAXD; L++) {
        lm_period *p = &ff->per[L];
        if (p->has_buf) snap_free(h, &p->buf);
        checks_free(&p->cur);
        checks_free(&p->ref);
        lm_sink *sk = &ff->sink[L];
        if (sk->has_up) snap_free(h, &sk->up);
        free(sk->log.ops);
        checks_free(&sk->chk);
    }
}

/* a warm-up check (warm_check), recorded for the loops whose periods may be jumped or replayed */
static int ff_checked(lm_ff *ff, const lm_hier *h, lm_warm_lv *ws, const lm_run_opts *o) {
    for (int L = 0; L < LM_MAXD && ff->on; L++) {
        if (ff->per[L].recording) checks_push(&ff->per[L].cur, h, 0);
        if (ff->sink[L].on) checks_push(&ff->sink[L].chk, h, ff->sink[L].log.n);
    }
    return warm_check(h, ws, o);
}

/* every access stays inside the address space (no wrap-around modulo 2**64, which would break the
   shift) from idx[L] = from on (the start of the period that confirmed the repetition, or of the one
   recorded for a replay), over the periods simulated since, the m periods jumped and the one after:
   each period is then the shift of the one before */
static int ff_in_range(const lm_nest *n, const int64_t *idx, int L, const uint64_t *base, const lm_period *p,
                       int64_t from, int64_t m) {
    int inner = n->depth - 1;
    __int128 span = (__int128)p->P * n->step[L];
    for (int a = 0; a < n->nacc; a++) {
        const int64_t *cf = n->coef + a * LM_MAXD;
        __int128 v = base[a], lo, hi;
        for (int k = 0; k < L; k++) v += (__int128)cf[k] * idx[k];
        __int128 v1 = (__int128)cf[L] * from, v2 = (__int128)cf[L] * (idx[L] + (m + 1) * span);
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
/* whole periods of loop L that stay inside the loop, below max_it, and (measuring whole rows) neither end
   the window nor reach its half; `now`: the counters at this boundary */
static int64_t ff_limit(const lm_period *p, int L, const lm_nest *n, const lm_run_opts *o, const int64_t *idx,
                        const lm_drive *dv, const lm_counters *now) {
    int64_t rem = trips(idx[L], bnd(n->stop_c, n->stop_k, L, idx), n->step[L]);
    int64_t m = (rem - 1) / p->P; /* land on an iteration of L */
    int64_t dsim = now->simulated - p->at.simulated;
    if (o->max_it) {
        if (dv->simulated >= o->max_it || dsim <= 0) return 0;
        int64_t lim = (o->max_it - 1 - dv->simulated) / dsim;
        if (lim < m) m = lim;
    }
    if (p->regime != 1) {
        int64_t dm = now->measured - p->at.measured;
        if (dm <= 0 || dv->measured >= dv->target) return 0;
        int64_t lim = (dv->target - 1 - dv->measured) / dm;
        if (!dv->half_taken) {
            int64_t room = (dv->target - 1) / 2 - dv->measured;
            if (room < 0) return 0;
            if (room / dm < lim) lim = room / dm;
        }
        if (lim < m) m = lim;
    }
    return m;
}

static int64_t ff_periods(const lm_period *p, int L, const lm_hier *h, const lm_nest *n, const lm_run_opts *o,
                          const int64_t *idx, const lm_drive *dv, const lm_warm_lv *ws, lm_warm_lv *wout,
                          const uint64_t *base) {
    lm_counters now;
    counters_take(h, dv, &now);
    int64_t m = ff_limit(p, L, n, o, idx, dv, &now);
    if (p->regime == 1) {
        /* replay the warm-up checks of the periods jumped: those of the last period, placements shifted
           by whole periods' worth, the fill states as they were; stop before the period where it ends */
        if (!p->ref_ok) return 0;
        memcpy(wout, ws, sizeof(lm_warm_lv) * (size_t)h->n);
        uint64_t placed[LM_MAXLV];
        for (int64_t k = 0; k < m; k++) {
            lm_warm_lv save[LM_MAXLV];
            memcpy(save, wout, sizeof(lm_warm_lv) * (size_t)h->n);
            for (int64_t j = 0; j < p->ref.n; j++) {
                for (int i = 0; i < h->n; i++) {
                    uint64_t rate = now.c[8 * i + 7] - p->at.c[8 * i + 7];
                    placed[i] = h->lv[i].placed + (uint64_t)k * rate + (p->ref.placed[j * h->n + i] - p->at.c[8 * i + 7]);
                }
                if (warm_check_at(h, placed, p->ref.valid + j * h->n, wout, o)) {
                    memcpy(wout, save, sizeof(lm_warm_lv) * (size_t)h->n);
                    m = k;
                    break;
                }
            }
        }
    }
    if (m <= 0 || !ff_in_range(n, idx, L, base, p, p->from, m)) return 0;
    return m;
}

static void ff_begin(lm_period *p, int L, const lm_hier *h, const lm_nest *n, const int64_t *idx, const lm_drive *dv) {
    p->live = 1;
    p->periodic = p->snap = p->recording = p->ref_ok = 0;
    p->cur.n = 0;
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

/* ---- the sink of a loop's periods (see lm_sink) ---- */

/* a new period of loop L begins (a boundary, or the start of its context): record afresh; take a
   snapshot of the levels above the last where it is time to try (attempts spaced by two passes over
   them in simulated accesses) */
static void sink_start(lm_ff *ff, int L, const lm_hier *h, const lm_drive *dv) {
    lm_sink *sk = &ff->sink[L];
    if (!sk->on) return;
    sk->log.n = 0;
    sk->log.bad = 0;
    sk->chk.n = 0;
    sk->up_ok = 0;
    if (dv->work - sk->attempt_work < 2 * ff->up_lines) return;
    if (!sk->has_up) {
        if (!snap_alloc(h, &sk->up, h->n - 1)) {
            snap_free(h, &sk->up);
            return;
        }
        sk->has_up = 1;
    }
    snap_take(h, &sk->up, h->n - 1);
    sk->up_ok = 1;
}

/* warm-up check j of the recorded period, in the k-th period replayed after it: the levels above as
   recorded, their placements moved on by k + 1 periods' worth; the last level as it is now */
static int sink_warm_check(const lm_hier *h, const lm_sink *sk, const lm_period *p, const lm_run_opts *o,
                           lm_warm_lv *ws, const lm_counters *now, int64_t j, int64_t k) {
    uint64_t placed[LM_MAXLV];
    int64_t valid[LM_MAXLV];
    int last = h->n - 1;
    for (int i = 0; i < last; i++) {
        uint64_t rate = now->c[8 * i + 7] - p->at.c[8 * i + 7];
        placed[i] = now->c[8 * i + 7] + (uint64_t)k * rate + (sk->chk.placed[j * h->n + i] - p->at.c[8 * i + 7]);
        valid[i] = sk->chk.valid[j * h->n + i];
    }
    placed[last] = h->lv[last].placed;
    valid[last] = h->lv[last].valid;
    return warm_check_at(h, placed, valid, ws, o);
}

/* the undo record of one replayed period: the last level's sets it changed, as they were before */
typedef struct {
    int64_t *stamp, *set, n;
    uint64_t *tags;
    uint8_t *dirty;
} lm_undo;

static int undo_alloc(lm_undo *u, const lm_cache *c, int64_t ops) {
    int64_t most = ops < c->sets ? (ops > 0 ? ops : 1) : c->sets; /* distinct sets a period changes */
    u->n = 0;
    u->stamp = calloc((size_t)c->sets, sizeof(int64_t));
    u->set = malloc((size_t)most * sizeof(int64_t));
    u->tags = malloc((size_t)(most * c->ways) * sizeof(uint64_t));
    u->dirty = malloc((size_t)(most * c->ways));
    return u->stamp && u->set && u->tags && u->dirty;
}

static void undo_free(lm_undo *u) {
    free(u->stamp);
    free(u->set);
    free(u->tags);
    free(u->dirty);
}

static inline void undo_keep(lm_undo *u, const lm_cache *c, uint64_t s, int64_t gen) {
    if (u->stamp[s] == gen) return;
    u->stamp[s] = gen;
    size_t W = (size_t)c->ways;
    u->set[u->n] = (int64_t)s;
    memcpy(u->tags + (size_t)u->n * W, c->tags + s * W, W * sizeof(uint64_t));
    memcpy(u->dirty + (size_t)u->n * W, c->dirty + s * W, W);
    u->n++;
}

static void undo_apply(lm_undo *u, lm_cache *c) {
    size_t W = (size_t)c->ways;
    for (int64_t x = 0; x < u->n; x++) {
        memcpy(c->tags + (size_t)u->set[x] * W, u->tags + (size_t)x * W, W * sizeof(uint64_t));
        memcpy(c->dirty + (size_t)u->set[x] * W, u->dirty + (size_t)x * W, W);
    }
}

/* replay period k after the recorded one on the last level (its operations moved by k + 1 periods,
   with the warm-up checks between them); 0 where it ended early (a line it evicts could be held above,
   or the warm-up ends in it) */
static int sink_replay_period(lm_hier *h, const lm_sink *sk, const lm_period *p, const lm_run_opts *o,
                              lm_warm_lv *ws, const lm_counters *now, int64_t k, int reg, lm_undo *u) {
    int last = h->n - 1;
    lm_cache *c = &h->lv[last];
    h->replay_held_shift = (uint64_t)(k * p->delta);
    h->replay_op_shift = (uint64_t)((k + 1) * p->delta);
    u->n = 0;
    int64_t j = 0;
    for (int64_t q = 0;; q++) {
        for (; reg == 1 && j < sk->chk.n && sk->chk.opos[j] == q; j++)
            if (sink_warm_check(h, sk, p, o, ws, now, j, k)) return 0;
        if (q == sk->log.n) return 1;
        const lm_op *e = &sk->log.ops[q];
        uint64_t l = e->line + h->replay_op_shift;
        undo_keep(u, c, set_index(c, l), k + 1);
        h->counting = e->counting;
        if (e->op == LM_OP_LOAD)
            lm_load(h, last, l);
        else if (e->op == LM_OP_STORE)
            lm_store(h, last, l, e->b);
        else if (e->op == LM_OP_WB)
            lm_write_back(h, last, l);
        else if (e->op == LM_OP_VICTIM)
            lm_victim_insert(h, last, l, (uint8_t)e->b);
        else if (lm_victim_take(h, last, l) != e->b)
            return 0; /* the line goes up with another dirty bit than in the recorded period */
        if (h->coupled) return 0;
    }
}

/* replay up to m periods on the last level; the periods replayed whole (one that ends early is undone) */
static int64_t sink_replay(lm_hier *h, const lm_sink *sk, const lm_period *p, const lm_run_opts *o,
                           lm_warm_lv *ws, const lm_counters *now, int64_t m, int reg) {
    int last = h->n - 1;
    lm_cache *c = &h->lv[last];
    lm_lineset ops = {0};
    lm_undo u = {0};
    if (!undo_alloc(&u, c, sk->log.n) || (c->kind == LM_INCLUSIVE && !lineset_build(&ops, &sk->log))) {
        undo_free(&u);
        free(ops.slot);
        return 0;
    }
    h->replay_lines = &ops;
    uint64_t counting = h->counting;
    int nrec = h->nrec;
    h->nrec = 0;
    h->replay = 1;
    int64_t k = 0;
    for (; k < m; k++) {
        lm_cache start = *c; /* its counters, fill and random state */
        uint64_t mem[3] = {h->mem_loads, h->mem_stores, h->mem_store_bytes};
        lm_warm_lv wsave[LM_MAXLV];
        memcpy(wsave, ws, sizeof(lm_warm_lv) * (size_t)h->n);
        if (!sink_replay_period(h, sk, p, o, ws, now, k, reg, &u)) {
            undo_apply(&u, c);
            *c = start;
            h->mem_loads = mem[0];
            h->mem_stores = mem[1];
            h->mem_store_bytes = mem[2];
            memcpy(ws, wsave, sizeof(lm_warm_lv) * (size_t)h->n);
            break;
        }
    }
    h->replay = h->coupled = 0;
    h->replay_lines = NULL;
    h->nrec = nrec;
    h->counting = counting;
    undo_free(&u);
    free(ops.slot);
    return k;
}

/* at a boundary of loop L: where the levels above are the shift of their snapshot at the boundary
   before, replay the period that ended on the last level as often as it may be (ff_limit), then move
   the levels above and the driver on by the periods replayed; returns their number */
static int64_t sink_jump(lm_ff *ff, lm_period *p, int L, lm_hier *h, const lm_nest *n, const lm_run_opts *o,
                         int64_t *idx, lm_drive *dv, lm_warm_lv *ws, const uint64_t *base, int reg) {
    lm_sink *sk = &ff->sink[L];
    int last = h->n - 1;
    if (!sk->on || !sk->up_ok || sk->log.bad || !reg || reg != p->regime || dv->events != p->events ||
        !ff_work_line_shifted(p, dv) || (reg == 1 && sk->chk.n < 0))
        return 0;
    if (!snap_shifted(h, &sk->up, p->delta, last)) {
        sk->attempt_work = dv->work;
        return 0;
    }
    lm_counters now;
    counters_take(h, dv, &now);
    int64_t m = ff_limit(p, L, n, o, idx, dv, &now);
    int64_t from = idx[L] - p->P * n->step[L]; /* the recorded period's start */
    if (m <= 0 || !ff_in_range(n, idx, L, base, p, from, m) || !tags_in_range(h, m * p->delta, last)) return 0;
    int64_t k = sink_replay(h, sk, p, o, ws, &now, m, reg);
    if (k <= 0) return 0;
    shift_state(h, k * p->delta, last); /* the last level and memory: their counters as replayed */
    ff_moved_on(h, dv, p, L, n, idx, k, last);
    return k;
}

/* a period boundary of loop L: confirm the period (the state is the shift of the snapshot taken at
   the boundary before), jump whole periods where the last one was a reference (one regime, no
   event), else take a snapshot where it is time to try */
static void ff_boundary(lm_ff *ff, lm_period *p, int L, lm_hier *h, const lm_nest *n, const lm_run_opts *o,
                        int64_t *idx, lm_drive *dv, lm_warm_lv *ws, const uint64_t *base) {
    int reg = ff_regime(dv);
    if (p->recording) { /* the warm-up checks of the period that ended are the reference */
        lm_checks c = p->ref;
        p->ref = p->cur;
        p->cur = c;
        p->ref_ok = p->ref.n >= 0;
        p->cur.n = 0;
    }
    if (!p->periodic && p->snap) {
        p->periodic = snap_shifted(h, &p->buf, p->delta, h->n);
        p->from = idx[L] - p->P * n->step[L];
        p->snap = 0;
        if (!p->periodic) p->attempt_work = dv->work;
        p->recording = p->periodic;
        p->ref_ok = p->ref_ok && p->periodic; /* not where a jump inside left checks out of the record */
    }
    lm_warm_lv wout[LM_MAXLV];
    int64_t m = p->periodic && reg && reg == p->regime && dv->events == p->events && ff_work_line_shifted(p, dv) ?
                ff_periods(p, L, h, n, o, idx, dv, ws, wout, base) : 0;
    int64_t jumped = 0;
    if (m > 0 && shift_state(h, m * p->delta, h->n)) {
        ff_moved_on(h, dv, p, L, n, idx, m, h->n);
        if (reg == 1) memcpy(ws, wout, sizeof(lm_warm_lv) * (size_t)h->n);
        jumped = m;
    } else if ((jumped = sink_jump(ff, p, L, h, n, o, idx, dv, ws, base, reg)) > 0) {
        /* the whole hierarchy may repeat from here on: a snapshot at the next boundary */
        p->periodic = p->snap = p->recording = p->ref_ok = 0;
        p->attempt_work = dv->work - 2 * ff->lines;
    }
    if (jumped > 0) {
        for (int k = 0; k < L; k++) { /* their periods' warm-up checks and operations now miss some */
            ff->per[k].cur.n = -1;
            ff->sink[k].log.bad = 1;
        }
    }
    if (jumped <= 0 && !p->periodic && dv->work - p->attempt_work >= 2 * ff->lines) {
        if (!p->has_buf && ff->bufs < LM_FF_BUFS(ff->lines)) {
            if (snap_alloc(h, &p->buf, h->n)) {
                p->has_buf = 1;
                ff->bufs++;
            } else {
                snap_free(h, &p->buf);
            }
        }
        if (p->has_buf) {
            snap_take(h, &p->buf, h->n);
            p->snap = p->recording = 1;
            p->cur.n = 0;
        }
    }
    p->next = idx[L] + p->P * n->step[L];
    p->regime = reg;
    p->events = dv->events;
    counters_take(h, dv, &p->at);
    sink_start(ff, L, h, dv);
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
            ff->sink[L].attempt_work = dv->work - 2 * ff->up_lines;
            sink_start(ff, L, h, dv);
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
