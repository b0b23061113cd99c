"""Link bandwidths and the overlap/duplex rules of a machine model, fitted to single-core
streaming measurements per cache level.

The ECM model composes a kernel's time from its in-core part and one contribution per link
(cross-architecture-machine-models.txt §3.1 eq. 3–4): each link's busy time is bytes over
bandwidth, both directions added on a half-duplex link and the larger one on a full-duplex
link (§3.3, "uni- or bi-directional"); the contributions either add up (Intel: only T_OL
overlaps, ecm-model-slides.txt "ECM rules") or overlap (AMD Zen, §5.2: "all transfers
overlap"). Which rule a machine follows is a hypothesis about the machine that the data
sheet does not state, and a machine may overlap some transfers and not others (the memory
transfer with the cache transfers, say). Here every combination is tried: for each, the
bandwidth of each cache link is fitted, inner link first, to the measured times of the
benchmark kernels with their data one level further out, then the memory link's latency
penalty to the times with the data in memory (its bandwidth is measured), and the
hypothesis with the smallest residual over all levels is kept; the residuals of all are
reported so that a user sees how clear the choice was.

Pure functions on plain numbers (cy/CL, bytes per CL of work, B/cy); no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

import math

from .calibration import grid_minimum

#: bandwidths searched, B/cy (log grid)
_GRID = tuple(2 ** (k / 16) for k in range(-32, 145))  # 0.25 .. 512 B/cy


@dataclass(frozen=True)
class KernelTransfers:
    """One benchmark kernel as the ECM model sees it, with its single-core measurements.

    Attributes:
        kernel: benchmark name (``load``, ``copy``, ``update``, ``triad``, ``daxpy``).
        t_ol, t_nol: in-core contributions T_OL and T_nOL, cy/CL.
        links: per link, core side first, the memory link last: ``(bytes toward the core,
            bytes away from it)`` per CL of work with the data beyond that link.
        memory_bandwidth: B/cy of the memory link for this kernel (the measured saturated
            bandwidth the ECM model picks for it, write-allocate corrected).
        measured: level index (1 = the second level, e.g. L2; ``len(links)`` = memory) ->
            measured cy/CL with the data there; levels without a measurement are left out.
    """
    kernel: str
    t_ol: float
    t_nol: float
    links: tuple
    memory_bandwidth: float
    measured: dict


@dataclass(frozen=True)
class Hypothesis:
    """Which contributions overlap, and whether the cache links are full duplex.

    Attributes:
        overlap: indices of the links whose transfer time overlaps with everything else
            (0 = the link next to L1, the last = memory); ``t_nol`` True: T_nOL overlaps too.
        duplex: ``"half"`` (both directions share the bandwidth) or ``"full"`` (the same
            bandwidth in each direction at once) for the cache-to-cache links.
    """
    overlap: tuple
    t_nol: bool
    duplex: str

    def names(self, link_names) -> list:
        """The machine file's ``overlap`` list: ``T_OL`` and the overlapping contributions."""
        return ["T_OL"] + (["T_nOL"] if self.t_nol else []) + [link_names[i] for i in self.overlap]


def hypotheses(n_links: int) -> list:
    """Every subset of overlapping links times half/full duplex; the plain Intel rule (nothing
    but T_OL overlaps, half duplex) first. All links overlapping is the AMD rule
    (cross-architecture-machine-models.txt §5.2): T_nOL then stands alone in the sum, so
    whether it is called overlapping makes no difference."""
    return [Hypothesis(tuple(i for i in range(n_links) if mask >> i & 1), False, duplex)
            for duplex in ("half", "full") for mask in range(2 ** n_links)]


@dataclass(frozen=True)
class HypothesisFit:
    """The fitted link bandwidths and memory penalty under one hypothesis.

    Attributes:
        hypothesis: :class:`Hypothesis`.
        bandwidths: fitted B/cy per cache-to-cache link (core side first).
        penalty: memory-link latency penalty, cy per CL crossing it (>= 0).
        residual: root mean square of the relative errors over every (kernel, level), in %.
        errors: ``(kernel, level index, predicted cy/CL, measured cy/CL)`` per point.
    """
    hypothesis: Hypothesis
    bandwidths: tuple
    penalty: float
    residual: float
    errors: tuple


def _busy(b_in: float, b_out: float, bw: float, duplex: str) -> float:
    return max(b_in, b_out) / bw if duplex == "full" else (b_in + b_out) / bw


def predict(k: KernelTransfers, level: int, bandwidths, hyp: Hypothesis, penalty: float = 0.0,
            line: float = 64.0) -> float:
    """ECM eq. 3-4 for data in level ``level`` (links 0..level-1 carry the traffic), cy/CL.

    Cache links: busy time at ``bandwidths`` by ``hyp.duplex``; the memory link (the last):
    half-duplex busy time at ``k.memory_bandwidth`` plus ``penalty`` per CL crossing it.
    Overlapping contributions enter as max, the others add up (with T_nOL)."""
    mem = len(k.links) - 1
    parts = []
    for j in range(level):
        b_in, b_out = k.links[j]
        if j == mem:
            parts.append((b_in + b_out) / k.memory_bandwidth + penalty * (b_in + b_out) / line)
        else:
            parts.append(_busy(b_in, b_out, bandwidths[j], hyp.duplex))
    over = [p for j, p in enumerate(parts) if j in hyp.overlap]
    serial = [p for j, p in enumerate(parts) if j not in hyp.overlap]
    core = [k.t_nol] if not hyp.t_nol else []
    return max([k.t_ol, sum(core + serial)] + over + ([k.t_nol] if hyp.t_nol else []))


def _squared(kernels, level, bws, hyp, penalty=0.0) -> float:
    pts = [(predict(k, level, bws, hyp, penalty), k.measured[level]) for k in kernels if level in k.measured]
    return sum(((p - m) / m) ** 2 for p, m in pts)


def fit_hypothesis(kernels, hyp: Hypothesis) -> HypothesisFit:
    """Cache-link bandwidths under ``hyp``, each fitted (least squares of relative errors,
    :func:`~loopmodel.models.calibration.grid_minimum` over 0.25-512 B/cy) to the kernels
    measured one level beyond it with the inner links' fitted bandwidths held; then the
    memory penalty (cross-architecture-machine-models.txt §3.3) fitted the same way to the
    kernels measured in memory (0 where the busy times already explain them).

    Raises:
        ValueError: a cache link without any measurement beyond it, or a non-positive measurement.
    """
    kernels = list(kernels)
    n_cache = len(kernels[0].links) - 1
    if any(m <= 0 for k in kernels for m in k.measured.values()):
        raise ValueError("measured times must be > 0")
    bws: list = []
    for j in range(n_cache):
        if not any(j + 1 in k.measured for k in kernels):
            raise ValueError(f"no measurement with the data in level {j + 1}: link {j} cannot be fitted")
        bws.append(grid_minimum(lambda b: _squared(kernels, j + 1, bws + [b], hyp), _GRID))
    penalty = 0.0
    mem = n_cache + 1
    if any(mem in k.measured for k in kernels):
        top = max(k.measured[mem] for k in kernels if mem in k.measured)
        penalty = grid_minimum(lambda q: _squared(kernels, mem, bws, hyp, q), [top * i / 200 for i in range(201)])
        if _squared(kernels, mem, bws, hyp, 0.0) <= _squared(kernels, mem, bws, hyp, penalty):
            penalty = 0.0
    errors = tuple((k.kernel, lv, predict(k, lv, bws, hyp, penalty), m)
                   for k in kernels for lv, m in sorted(k.measured.items()) if lv >= 1)
    rms = math.sqrt(sum(((p - m) / m) ** 2 for _, _, p, m in errors) / max(len(errors), 1))
    return HypothesisFit(hyp, tuple(bws), penalty, 100 * rms, errors)


def fit_links(kernels) -> tuple:
    """Every hypothesis of :func:`hypotheses` fitted (:func:`fit_hypothesis`), best (smallest
    residual) first; on a tie the earlier one wins (the simpler model).

    Args:
        kernels: :class:`KernelTransfers` sequence (the same links each).
    Returns:
        tuple of :class:`HypothesisFit`.
    Raises:
        ValueError: no kernels, or as :func:`fit_hypothesis`.
    """
    kernels = list(kernels)
    if not kernels:
        raise ValueError("no kernels to fit")
    fits = [fit_hypothesis(kernels, h) for h in hypotheses(len(kernels[0].links))]
    order = sorted(range(len(fits)), key=lambda i: (round(fits[i].residual, 6), i))
    return tuple(fits[i] for i in order)


@dataclass(frozen=True)
class EffectiveLevel:
    """Where one cache level's plateau of a single-core working-set sweep lies.

    Attributes:
        level: name.
        nominal: capacity the operating system reports, bytes.
        capacity: effective capacity, bytes: the reported capacity where the plateau reaches
            it (the first swept size off the plateau is above half of it), else the largest
            swept size still within 10 % of the plateau (None: no point on the plateau).
        plateau: median throughput on the plateau (unit of the sweep).
    """
    level: str
    nominal: float
    capacity: float | None
    plateau: float | None


def effective_capacities(sizes, measured, nominal: dict) -> tuple:
    """Effective capacity of each cache level from a single-core sweep of one kernel.

    Level by level, inner first: the plateau is the median of the points in
    (2 x previous effective capacity, min(nominal / 2, 8 x that lower bound)] (so a level
    whose nominal size is far larger than what this core gets, e.g. a VM's shared L3, is
    judged by the sizes just above the previous level), and the effective capacity is the
    largest size of the run of points within 10 % of it, unless the first size off the plateau
is above half the reported capacity: then the sweep is consistent with the reported size,
which is kept (cross-architecture-machine-models.txt
    §3.3 needs the capacity the core actually has; kerncraft-tool-paper.txt §2.2 sizes its
    benchmarks from it).

    Args:
        sizes: working-set sizes, bytes, ascending or not.
        measured: throughput per size (higher is faster, e.g. B/s).
        nominal: level name -> reported capacity in bytes, inner to outer (caches only).
    Returns:
        tuple of :class:`EffectiveLevel`, one per level of ``nominal``.
    Raises:
        ValueError: lengths differ or non-positive values.
    """
    pts = sorted((float(s), float(m)) for s, m in zip(sizes, measured))
    if len(pts) != len(list(sizes)) or any(s <= 0 or m <= 0 for s, m in pts):
        raise ValueError("sizes and throughputs must be positive and of equal length")
    out, prev = [], 0.0
    for name, cap in nominal.items():
        lo = 2 * prev if prev else 0.0
        hi = min(cap / 2, 8 * lo) if lo else cap / 2
        inside = sorted(m for s, m in pts if lo < s <= hi)
        if not inside:
            out.append(EffectiveLevel(name, cap, None, None))
            prev = prev or cap
            continue
        k = len(inside)
        plateau = (inside[(k - 1) // 2] + inside[k // 2]) / 2
        end, beyond = None, None
        for s, m in pts:
            if s <= lo:
                continue
            if abs(m - plateau) <= 0.1 * plateau:
                end = s
            elif end is not None:
                beyond = s
                break
        if end is not None and (beyond is None or beyond > cap / 2):
            end = cap  # the plateau reaches the reported capacity as far as the sweep's steps can tell
        out.append(EffectiveLevel(name, cap, end, plateau))
        prev = end or cap
    return tuple(out)
