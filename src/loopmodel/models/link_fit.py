"""Link bandwidths and the overlap/duplex rules of a machine model, fitted to single-core
streaming measurements per cache level.

The ECM model composes a kernel's time from its in-core part and one contribution per link
(cross-architecture-machine-models.txt §3.1 eq. 3–4): each link's busy time is bytes over
bandwidth, both directions added on a half-duplex link and the larger one on a full-duplex
link (§3.3, "uni- or bi-directional"); the contributions either add up (Intel: only T_OL
overlaps, ecm-model-slides.txt "ECM rules") or overlap (AMD Zen, §5.2: "all transfers
overlap"). Which rule a machine follows is a hypothesis about the machine that the data
sheet does not state. Here every combination is tried: for each, the bandwidth of each link
is fitted, inner link first, to the measured times of the benchmark kernels with their data
one level further out, and the hypothesis with the smallest residual is kept; the residuals
of all are reported so that a user sees how clear the choice was.

Pure functions on plain numbers (cy/CL, bytes per CL of work, B/cy); no I/O.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .calibration import grid_minimum

#: the hypotheses tried: (overlap rule, duplex)
HYPOTHESES = (("serial", "half"), ("serial", "full"), ("overlap", "half"), ("overlap", "full"))

#: bandwidths searched, B/cy (log grid)
_GRID = tuple(2 ** (k / 16) for k in range(-32, 145))  # 0.25 .. 512 B/cy


@dataclass(frozen=True)
class KernelTransfers:
    """One benchmark kernel as the ECM model sees it, with its single-core measurements.

    Attributes:
        kernel: benchmark name (``load``, ``copy``, ``update``, ``triad``, ``daxpy``).
        t_ol, t_nol: in-core contributions T_OL and T_nOL, cy/CL.
        links: per link, core side first: ``(bytes toward the core, bytes away from it)`` per
            CL of work with the data beyond that link.
        measured: level index (1 = the second level, e.g. L2) -> measured cy/CL with the data
            there; levels without a measurement are left out.
    """
    kernel: str
    t_ol: float
    t_nol: float
    links: tuple
    measured: dict


@dataclass(frozen=True)
class HypothesisFit:
    """The fitted link bandwidths under one overlap/duplex hypothesis.

    Attributes:
        overlap: ``"serial"`` (T_nOL and the transfers add up; only T_OL overlaps) or
            ``"overlap"`` (every contribution overlaps: T = max of all).
        duplex: ``"half"`` (both directions share the bandwidth) or ``"full"`` (the same
            bandwidth in each direction at once).
        bandwidths: fitted B/cy per fitted link (core side first).
        residual: root mean square of the relative errors over every (kernel, level), in %.
        errors: ``(kernel, level index, predicted cy/CL, measured cy/CL)`` per point.
    """
    overlap: str
    duplex: str
    bandwidths: tuple
    residual: float
    errors: tuple


def _busy(b_in: float, b_out: float, bw: float, duplex: str) -> float:
    return max(b_in, b_out) / bw if duplex == "full" else (b_in + b_out) / bw


def predict(k: KernelTransfers, level: int, bandwidths, overlap: str, duplex: str) -> float:
    """ECM eq. 4 for data in level ``level`` (links 0..level-1 carry the traffic), cy/CL."""
    parts = [_busy(*k.links[j], bandwidths[j], duplex) for j in range(level)]
    if overlap == "overlap":
        return max([k.t_ol, k.t_nol] + parts)
    return max(k.t_ol, k.t_nol + sum(parts))


def _squared(kernels, level, bws, overlap, duplex) -> float:
    pts = [(predict(k, level, bws, overlap, duplex), k.measured[level]) for k in kernels if level in k.measured]
    return sum(((p - m) / m) ** 2 for p, m in pts)


def fit_hypothesis(kernels, n_links: int, overlap: str, duplex: str) -> HypothesisFit:
    """Bandwidths of links 0..n_links-1 under one hypothesis, each fitted (least squares of
    relative errors, :func:`~loopmodel.models.calibration.grid_minimum` over 0.25–512 B/cy) to the
    kernels measured one level beyond it, the inner links' fitted bandwidths held.

    Raises:
        ValueError: a link without any measurement beyond it, or a non-positive measurement.
    """
    bws: list = []
    for j in range(n_links):
        level = j + 1
        if not any(level in k.measured for k in kernels):
            raise ValueError(f"no measurement with the data in level {level}: link {j} cannot be fitted")
        if any(m <= 0 for k in kernels for m in k.measured.values()):
            raise ValueError("measured times must be > 0")
        bw = grid_minimum(lambda b: _squared(kernels, level, bws + [b], overlap, duplex), _GRID)
        bws.append(bw)
    errors = tuple((k.kernel, lv, predict(k, lv, bws, overlap, duplex), m)
                   for k in kernels for lv, m in sorted(k.measured.items()) if lv <= n_links)
    rms = math.sqrt(sum(((p - m) / m) ** 2 for _, _, p, m in errors) / max(len(errors), 1))
    return HypothesisFit(overlap, duplex, tuple(bws), 100 * rms, errors)


def fit_links(kernels, n_links: int) -> tuple:
    """Every hypothesis of :data:`HYPOTHESES` fitted (:func:`fit_hypothesis`), best (smallest
    residual) first; on a tie the earlier hypothesis of :data:`HYPOTHESES` wins (serial, half
    duplex: the simplest model).

    Args:
        kernels: :class:`KernelTransfers` sequence.
        n_links: links to fit (the cache-to-cache links; the memory link keeps its measured
            bandwidth and a fitted latency penalty, :mod:`loopmodel.models.calibration`).
    Returns:
        tuple of :class:`HypothesisFit`.
    Raises:
        ValueError: as :func:`fit_hypothesis`.
    """
    fits = [fit_hypothesis(kernels, n_links, o, d) for o, d in HYPOTHESES]
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
