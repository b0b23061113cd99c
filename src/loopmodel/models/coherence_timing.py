"""Timing functions L(key, stride, size, T) and S(key, stride, size, T) from a measured
:class:`~loopmodel.machine.coherence.CoherenceTable` (benchmark-based-coherence-model.txt
§III-C: "all transitions ... are associated to timing functions obtained through
micro-benchmarks").

Between measured sizes the time per byte is interpolated linearly in log2(size); below the
smallest size the smallest size's time per byte is used, above the largest the largest's (the
memory plateau). Between measured thread counts the time is interpolated linearly in T.
A stride larger than the element is charged by its cache-line footprint: size x
min(stride, cache line) / element size bytes at unit stride (an over-approximation for
strides below a line: the benchmark streams whole lines either way).

Pure functions; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

import bisect
import math

from ..errors import ModelError
from ..machine.coherence import CoherenceTable

#: A transition the host could not set up, timed by a close one instead (``S other`` needs
#: three threads; with two CPUs the ``E other`` benchmark is the nearest miss).
FALLBACK = {"L S other": "L E other", "S S other": "S E other"}


@dataclass(frozen=True)
class Timing:
    """Lookup over one table; ``cacheline_size`` in bytes. Call :meth:`seconds`."""
    table: CoherenceTable
    cacheline_size: int = 64

    def key_for(self, key: str) -> str:
        """The measured key that times ``key`` (itself, or its :data:`FALLBACK`).

        Raises:
            ModelError: neither ``key`` nor its fallback was measured.
        """
        if key in self.table.seconds:
            return key
        alt = FALLBACK.get(key)
        if alt in self.table.seconds:
            return alt
        raise ModelError(f"the coherence table has no timing for transition '{key}'; "
                         "run `loopmodel machine probe --coherence` again")

    def seconds(self, key: str, stride: int, size: float, threads: int) -> float:
        """Seconds one of ``threads`` threads needs to take transition ``key`` on ``size``
        bytes with ``stride`` bytes between accesses, all threads acting at once.

        Raises:
            ModelError: ``threads`` beyond the measured thread counts, or the key unmeasured.
        """
        if size <= 0:
            return 0.0
        rows = self.table.seconds[self.key_for(key)]
        ts = self.table.threads
        if threads > ts[-1] or threads < 1:
            raise ModelError(f"the coherence table was measured for 1..{ts[-1]} threads, "
                             f"not {threads}")
        elem = self.table.element_size
        footprint = size * max(1.0, min(stride, self.cacheline_size) / elem)
        j = bisect.bisect_left(ts, threads)
        if ts[j] == threads or j == 0:
            return self._per_size(rows[ts[j]], footprint)
        lo, hi = ts[j - 1], ts[j]
        w = (threads - lo) / (hi - lo)
        return (1 - w) * self._per_size(rows[lo], footprint) + w * self._per_size(rows[hi], footprint)

    def _per_size(self, row, size: float) -> float:
        sizes = self.table.sizes
        if size <= sizes[0]:
            return row[0] / sizes[0] * size
        if size >= sizes[-1]:
            return row[-1] / sizes[-1] * size
        k = bisect.bisect_right(sizes, size)
        a, b = sizes[k - 1], sizes[k]
        w = (math.log2(size) - math.log2(a)) / (math.log2(b) - math.log2(a))
        per_byte = (1 - w) * row[k - 1] / a + w * row[k] / b
        return per_byte * size

    def overhead(self, threads: int) -> float:
        """Seconds of an empty parallel loop on ``threads`` threads (fork, schedule, join);
        0 where not measured; interpolated linearly between measured thread counts."""
        oh = self.table.region_overhead
        if not oh:
            return 0.0
        ts = sorted(oh)
        if threads in oh:
            return oh[threads]
        j = bisect.bisect_left(ts, threads)
        if j == 0:
            return oh[ts[0]]
        if j == len(ts):
            return oh[ts[-1]]
        lo, hi = ts[j - 1], ts[j]
        return oh[lo] + (oh[hi] - oh[lo]) * (threads - lo) / (hi - lo)
