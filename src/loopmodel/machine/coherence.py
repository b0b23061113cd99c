"""Measured timings of the MESI chunk transitions (benchmark-based-coherence-model.txt §IV): the
machine model's ``coherence:`` section, written by ``loopmodel machine probe --coherence``.

A transition is named by its action, the chunk's MESI state before it and whether the acting
thread holds a valid copy (``own``) or not (``other``): ``"L M other"`` is a load by a thread
of a chunk another thread's cache holds modified (a miss with a coherence message), ``"L M
own"`` the same load by the owner (a hit). Every timing is the time for each of T threads, all
taking the same transition at once on separate chunks of the same size (the paper's §III-C
choice to limit the number of benchmarks), with unit stride.

Pure data; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass, field


LOAD_KEYS = ("L I", "L M own", "L M other", "L E own", "L E other", "L S own", "L S other")
STORE_KEYS = ("S I", "S M own", "S M other", "S E own", "S E other", "S S own", "S S other")
TRANSITION_KEYS = LOAD_KEYS + STORE_KEYS


@dataclass(frozen=True)
class CoherenceTable:
    """Transition timings measured on one host.

    Attributes:
        sizes: chunk sizes per thread in bytes, ascending (a few KiB to beyond the last-level
            cache).
        threads: thread counts T measured, ascending.
        seconds: transition key (:data:`TRANSITION_KEYS`) -> {T: tuple of seconds, one per
            size}: the time one thread takes for its chunk while T threads act at once (the
            slowest thread's time, min over repetitions). A key may be missing where the host
            cannot set up its initial state (``"S other"`` needs three threads).
        spread: same shape as ``seconds``: (max - min) / min over the repetitions, or empty.
        region_overhead: T -> seconds of an empty ``#pragma omp parallel for`` (fork, static
            schedule, join) on T threads; 0 where not measured.
        element_size: bytes per element of the benchmark buffers (8: double).
        stride: bytes between consecutive accesses of the benchmarks (8: unit stride).
        cpus: the logical CPUs the T threads were pinned to, in order.
        notes: what the measurement could not do or noticed.
    """
    sizes: tuple
    threads: tuple
    seconds: dict
    spread: dict = field(default_factory=dict)
    region_overhead: dict = field(default_factory=dict)
    element_size: int = 8
    stride: int = 8
    cpus: tuple = ()
    notes: tuple = ()

    def __post_init__(self):
        if not self.sizes or list(self.sizes) != sorted(self.sizes) or self.sizes[0] <= 0 or self.sizes[-1] > 2 ** 40:
            raise ValueError("coherence sizes must be ascending, 1 B .. 1 TiB")
        if not self.threads or list(self.threads) != sorted(self.threads) or self.threads[0] < 1 \
                or self.threads[-1] > 4096:
            raise ValueError("coherence thread counts must be ascending, 1 .. 4096")
        if not (0 < self.element_size <= 1024 and 0 < self.stride <= 2 ** 20):
            raise ValueError("coherence element size must be 1 .. 1024 B and stride 1 B .. 1 MiB")
        for key, per_t in self.seconds.items():
            if key not in TRANSITION_KEYS:
                raise ValueError(f"unknown coherence transition '{key}'")
            for t, row in per_t.items():
                if t not in self.threads:
                    raise ValueError(f"coherence transition '{key}': T={t} is not among the threads")
                if len(row) != len(self.sizes) or any(not (0 < x <= 1e4) for x in row):
                    raise ValueError(f"coherence transition '{key}' T={t}: need one positive time "
                                     f"per size ({len(self.sizes)}), at most 10000 s")
        for key, per_t in self.spread.items():
            if key not in self.seconds:
                raise ValueError(f"coherence spread of '{key}': no timings of that transition")
            for t, row in per_t.items():
                if t not in self.seconds[key] or len(row) != len(self.sizes) or any(not (x >= 0) for x in row):
                    raise ValueError(f"coherence spread of '{key}' T={t}: need one value >= 0 per size "
                                     f"({len(self.sizes)}) of a measured thread count")
        for t, s in self.region_overhead.items():
            if t not in self.threads or not (0 <= s <= 1e4):
                raise ValueError(f"coherence region overhead T={t}: need seconds >= 0 of a measured thread count")
