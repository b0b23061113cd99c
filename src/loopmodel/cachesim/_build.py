"""cffi build script for the simulator core (run by setup.py at install time).

API mode, out of line: the C sources ``_core.c`` (the cache hierarchy) and ``_nest.c`` (the loop-nest
driver, which uses it) are compiled as one unit into the extension module ``loopmodel.cachesim._cachesim``.
"""
from pathlib import Path

from cffi import FFI

CDEF = """
typedef struct { ...; } lm_hier;
lm_hier *lm_new(int n, int line_log2, const int64_t *sets, const int64_t *ways, const int *policy,
                const int *write_allocate, const int *write_back, const int *kind, const int *victim_clean,
                const uint64_t *seed);
void lm_free(lm_hier *h);
void lm_set_counting(lm_hier *h, int on);
void lm_reset_stats(lm_hier *h);
void lm_stats(const lm_hier *h, uint64_t *out);
void lm_contents(const lm_hier *h, int i, uint64_t *tags, uint8_t *dirty);
void lm_dirty(const lm_hier *h, int64_t *out);
void lm_flush(lm_hier *h);
void lm_access(lm_hier *h, uint64_t addr, uint64_t size, int kind);
void lm_trace(lm_hier *h, const uint64_t *addr, const uint8_t *kind, const uint32_t *size, int64_t n);

typedef struct {
    int depth, nacc;
    int64_t start_c[8], start_k[64];
    int64_t stop_c[8], stop_k[64];
    int64_t step[8];
    const uint64_t *base;
    const int64_t *coef;
    const uint32_t *size;
    const uint8_t *kind;
    const uint8_t *phase;
    int work;
    int64_t it_per_cl;
    int nbase;
} lm_nest;
typedef struct {
    int64_t warm_caps_sweep;
    int64_t warm_caps_full;
    int64_t fill_slack;
    int64_t target_it;
    int64_t margin_it;
    int max_sweeps;
    int edges;
    int start_mid;
    int64_t max_it;
    int cold;
    int64_t max_target_it;
    double settle_tol;
    int fast_forward;
} lm_run_opts;
typedef struct {
    int64_t measured_it, simulated_it, warm_it, work_lines;
    int sweeps, warm;
    int dirty_taken;
    int64_t dirty_start[16];
    int64_t jumped_it;
} lm_run_result;
int lm_run(lm_hier *h, const lm_nest *n, const lm_run_opts *o, lm_run_result *r);
"""

#: the C sources, in the order they are compiled (one translation unit: the driver calls the
#: hierarchy's static functions)
SOURCES = ("_core.c", "_nest.c")

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source("loopmodel.cachesim._cachesim",
                      "\n".join((Path(__file__).parent / name).read_text() for name in SOURCES),
                      extra_compile_args=["-O3", "-fno-strict-aliasing"])

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
