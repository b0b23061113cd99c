"""Python face of the compiled simulator: build a hierarchy, feed accesses, read statistics.

Semantics: :mod:`loopmodel.cachesim` (module docstring). The inner loops run in
C (``_core.c`` and ``_nest.c`` through cffi); this module only converts arguments and results.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import ModelError
from .nest import MAXACC, MAXD, PHASES, LoopNest, RunOptions, RunResult

try:
    from ._cachesim import ffi as _FFI, lib as _LIB
    _BUILD_ERROR = ""
except ImportError as exc:  # a source checkout that was never built: an error when a simulation runs
    _FFI = _LIB = None
    _BUILD_ERROR = str(exc)

POLICIES = {"LRU": 0, "FIFO": 1, "RANDOM": 2}
KINDS = {"inclusive": 0, "non-inclusive": 1, "victim": 2}
ACCESS_KINDS = {"load": 0, "store": 1, "nt": 2}
LEVEL_STATS = ("hits", "misses", "load_lines", "store_lines", "through_bytes", "evicts", "invalidations")
MEM_STATS = ("loads", "stores", "store_bytes")
DEFAULT_SEED = 0x853C49E6748FEA9B
_PackedTrace = object()  # marks the result of Hierarchy.pack_trace


@dataclass(frozen=True)
class LevelSpec:
    """Organisation of one simulated cache level.

    Attributes:
        name: level name (``L1``...).
        sets: number of sets (any positive integer; set = line mod sets).
        ways: associativity.
        line_size: bytes per cache line (power of two, equal for all levels).
        policy: ``LRU``, ``FIFO`` or ``RANDOM`` (xorshift64 seeded with ``seed``).
        write_allocate, write_back: store policy (``write_back=False``: write-through).
        kind: ``inclusive`` (evictions back-invalidate the levels above),
            ``non-inclusive`` or ``victim`` (exclusive, filled by evictions from above).
        seed: non-zero RNG state for ``RANDOM``.
        victim_clean: for a ``victim`` level: clean lines evicted from the level
            above count as transfers (``store_lines``) there; False: they are
            placed in this level without a counted transfer (semantics:
            :mod:`loopmodel.cachesim`, ``evict``). Ignored for other kinds.
    """

    name: str
    sets: int
    ways: int
    line_size: int = 64
    policy: str = "LRU"
    write_allocate: bool = True
    write_back: bool = True
    kind: str = "non-inclusive"
    seed: int = DEFAULT_SEED
    victim_clean: bool = True


def _lib():
    """The compiled simulator's ``(ffi, lib)``.

    Raises:
        ModelError: the extension is not built (a source checkout that was never installed).
    """
    if _LIB is None:
        raise ModelError("the compiled cache simulator is not built (reinstall with "
                         f"'pip install .'; needs a C compiler): {_BUILD_ERROR}")
    return _FFI, _LIB


class Hierarchy:
    """A simulated cache hierarchy (levels closest to the core first, memory implied).

    Args:
        levels: list of :class:`LevelSpec`.

    Raises:
        ModelError: inconsistent organisation (one line).
    """

    def __init__(self, levels):
        levels = list(levels)
        if not levels:
            raise ModelError("cache simulation needs at least one cache level")
        line = levels[0].line_size
        for i, lv in enumerate(levels):
            if lv.line_size != line or line <= 0 or line & (line - 1):
                raise ModelError(f"{lv.name}: cache line size must be a power of two and equal on all levels")
            if lv.sets < 1 or lv.ways < 1:
                raise ModelError(f"{lv.name}: sets and ways must be positive")
            if lv.policy not in POLICIES:
                raise ModelError(f"{lv.name}: replacement policy '{lv.policy}' is not simulated "
                                 f"({', '.join(POLICIES)})")
            if lv.kind not in KINDS or (i == 0 and lv.kind == "victim"):
                raise ModelError(f"{lv.name}: cache type '{lv.kind}' not possible here")
            if not 0 < lv.seed < 2 ** 64:
                raise ModelError(f"{lv.name}: seed must be a non-zero 64-bit integer")
        self.levels = tuple(levels)
        ffi, lib = _lib()
        self._ffi, self._lib = ffi, lib
        n = len(levels)
        h = lib.lm_new(n, line.bit_length() - 1,
                       ffi.new("int64_t[]", [lv.sets for lv in levels]),
                       ffi.new("int64_t[]", [lv.ways for lv in levels]),
                       ffi.new("int[]", [POLICIES[lv.policy] for lv in levels]),
                       ffi.new("int[]", [int(lv.write_allocate) for lv in levels]),
                       ffi.new("int[]", [int(lv.write_back) for lv in levels]),
                       ffi.new("int[]", [KINDS[lv.kind] for lv in levels]),
                       ffi.new("int[]", [int(bool(lv.victim_clean)) for lv in levels]),
                       ffi.new("uint64_t[]", [lv.seed for lv in levels]))
        if h == ffi.NULL:
            raise ModelError("cache simulation: out of memory")
        self._h = ffi.gc(h, lib.lm_free)
        self._counting = True

    @property
    def line_size(self) -> int:
        return self.levels[0].line_size

    @property
    def counting(self) -> bool:
        """Statistics are incremented only while True (state always changes)."""
        return self._counting

    @counting.setter
    def counting(self, on: bool) -> None:
        self._counting = bool(on)
        self._lib.lm_set_counting(self._h, int(bool(on)))

    def access(self, addr: int, size: int, kind: str) -> None:
        """One access of ``size`` bytes at ``addr`` (0 <= addr < 2**64); kind ``load``, ``store``, ``nt``."""
        self._lib.lm_access(self._h, addr, size, ACCESS_KINDS[kind])

    def pack_trace(self, addrs, kinds, sizes) -> tuple:
        """Convert a batch of accesses once into the simulator's arrays, for repeated :meth:`trace` calls.

        Args: as :meth:`trace`. Returns: an opaque tuple that :meth:`trace` accepts as ``addrs``
        (with ``kinds`` and ``sizes`` None).

        Raises:
            ValueError: sequences of unequal length.
        """
        ffi = self._ffi
        n = len(addrs)
        if len(kinds) != n or len(sizes) != n:
            raise ValueError("addrs, kinds and sizes must have equal length")
        a = addrs if isinstance(addrs, ffi.CData) else ffi.new("uint64_t[]", list(addrs))
        k = kinds if isinstance(kinds, ffi.CData) else ffi.new("uint8_t[]", list(kinds))
        s = sizes if isinstance(sizes, ffi.CData) else ffi.new("uint32_t[]", list(sizes))
        return (_PackedTrace, a, k, s, n)

    def trace(self, addrs, kinds=None, sizes=None) -> None:
        """A batch of accesses: sequences of addresses (bytes, 0 <= addr < 2**64), kinds (0 load,
        1 store, 2 nt) and sizes (bytes); or the result of :meth:`pack_trace` as ``addrs``.

        Raises:
            ValueError: sequences of unequal length.
        """
        packed = addrs if isinstance(addrs, tuple) and addrs and addrs[0] is _PackedTrace else \
            self.pack_trace(addrs, kinds, sizes)
        _, a, k, s, n = packed
        self._lib.lm_trace(self._h, a, k, s, n)

    def reset_stats(self) -> None:
        self._lib.lm_reset_stats(self._h)

    def flush(self) -> None:
        """Empty every level, closest to the core first: each line is evicted as on a replacement
        (dirty lines written back, clean ones into a victim cache below); see :mod:`loopmodel.cachesim`."""
        self._lib.lm_flush(self._h)

    def stats(self) -> dict:
        """``{level name: {hits, misses, load_lines, store_lines, through_bytes, evicts, invalidations},
        "MEM": {loads, stores, store_bytes}}`` (ints; lines, or bytes where named)."""
        n = len(self.levels)
        out = self._ffi.new("uint64_t[]", 7 * n + 3)
        self._lib.lm_stats(self._h, out)
        res = {lv.name: dict(zip(LEVEL_STATS, out[7 * i: 7 * i + 7])) for i, lv in enumerate(self.levels)}
        res["MEM"] = dict(zip(MEM_STATS, out[7 * n: 7 * n + 3]))
        return res

    def dirty_lines(self) -> tuple:
        """Dirty lines held now, per level (closest to the core first)."""
        out = self._ffi.new("int64_t[]", len(self.levels))
        self._lib.lm_dirty(self._h, out)
        return tuple(out[i] for i in range(len(self.levels)))

    def contents(self, i: int) -> list:
        """Level ``i``: one list per set of ``(line number, dirty)`` in the set's order (front first)."""
        lv = self.levels[i]
        m = lv.sets * lv.ways
        tags = self._ffi.new("uint64_t[]", m)
        dirty = self._ffi.new("uint8_t[]", m)
        self._lib.lm_contents(self._h, i, tags, dirty)
        inv = 2 ** 64 - 1
        return [[(tags[s * lv.ways + w], bool(dirty[s * lv.ways + w])) for w in range(lv.ways)
                 if tags[s * lv.ways + w] != inv] for s in range(lv.sets)]

    def run(self, nest: LoopNest, options: RunOptions) -> RunResult:
        """Sweep ``nest`` until every level is in steady state, then count a measurement window.

        Semantics of the warm-up and the window: :class:`~loopmodel.cachesim.nest.RunOptions`
        and ``lm_run`` in ``_nest.c`` (kerncraft-tool-paper.txt §2.4.1). Statistics are
        reset, then counted only inside the window (read them with :meth:`stats`); counting is off
        afterwards (:attr:`counting` is False).

        Args:
            nest: :class:`~loopmodel.cachesim.nest.LoopNest`.
            options: :class:`~loopmodel.cachesim.nest.RunOptions`.

        Returns:
            :class:`~loopmodel.cachesim.nest.RunResult`.

        Raises:
            ValueError: a nest the driver cannot run (depth, accesses, zero step, unknown kind).
        """
        ffi = self._ffi
        c_nest, keep = _c_nest(ffi, nest)
        opts = ffi.new("lm_run_opts *")
        opts.target_it, opts.margin_it, opts.max_sweeps = options.target_it, options.margin_it, options.max_sweeps
        opts.edges, opts.start_mid, opts.max_it = int(options.edges), int(options.start_mid), options.max_it
        opts.cold = int(options.cold)
        opts.max_target_it, opts.settle_tol = options.max_target_it, options.settle_tol
        opts.warm_caps_sweep, opts.warm_caps_full = options.warm_caps_sweep, options.warm_caps_full
        opts.fill_slack = options.fill_slack
        opts.fast_forward = int(options.fast_forward)
        res = ffi.new("lm_run_result *")
        self.reset_stats()
        rc = self._lib.lm_run(self._h, c_nest, opts, res)
        del keep
        self._counting = False
        if rc < 0:
            raise ValueError("cache simulation: the loop nest cannot be run (depth, accesses or levels)")
        dirty = tuple(int(res.dirty_start[i]) for i in range(len(self.levels))) if res.dirty_taken else None
        return RunResult(int(res.measured_it), int(res.simulated_it), int(res.warm_it), int(res.work_lines),
                         int(res.sweeps), bool(res.warm), rc == 1, dirty, int(res.jumped_it))


def _c_nest(ffi, nest: LoopNest):
    """``nest`` as an ``lm_nest`` (and the buffers it points to, to keep alive)."""
    loops, accs = nest.loops, nest.accesses
    if not 1 <= len(loops) <= MAXD or not 1 <= len(accs) <= MAXACC:
        raise ValueError(f"cache simulation: 1 to {MAXD} loops and 1 to {MAXACC} accesses per iteration")
    nbase = len(accs[0].bases)
    if nbase < 1 or any(len(a.bases) != nbase for a in accs):
        raise ValueError("cache simulation: every access needs the same number (>= 1) of base addresses")
    c = ffi.new("lm_nest *")
    c.depth = len(loops)
    for d, lp in enumerate(loops):
        if lp.step == 0:
            raise ValueError("cache simulation: a loop step is zero")
        c.start_c[d], c.stop_c[d], c.step[d] = lp.start, lp.stop, lp.step
        for j in range(d):
            c.start_k[d * MAXD + j] = lp.start_coefs[j] if j < len(lp.start_coefs) else 0
            c.stop_k[d * MAXD + j] = lp.stop_coefs[j] if j < len(lp.stop_coefs) else 0
    n = len(accs)
    base = ffi.new("uint64_t[]", [accs[a].bases[s] % 2 ** 64 for s in range(nbase) for a in range(n)])
    coef = ffi.new("int64_t[]", n * MAXD)
    for a, acc in enumerate(accs):
        for j, k in enumerate(acc.coefs):
            coef[a * MAXD + j] = k
    size = ffi.new("uint32_t[]", [a.size for a in accs])
    kind = ffi.new("uint8_t[]", [ACCESS_KINDS[a.kind] for a in accs])
    phase = ffi.new("uint8_t[]", [PHASES[a.phase] for a in accs])
    c.nacc, c.base, c.coef, c.size, c.kind, c.phase = n, base, coef, size, kind, phase
    c.work, c.nbase, c.it_per_cl = nest.work, nbase, max(1, int(nest.it_per_cl))
    return c, (base, coef, size, kind, phase)
