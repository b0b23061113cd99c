"""Cache simulator: a compiled (C, through cffi) set-associative hierarchy simulator.

Used by the simulation traffic predictor (kerncraft-tool-paper.txt §2.4.1:
cache simulation as the alternative to layer conditions; cross-architecture
paper §3.3 for victim and write-through caches). The C core
(``_core.c``) implements exactly the semantics below; ``tests/cachesim_reference.py``
is a slow pure-Python transcription used to check it.

Semantics (one source of truth; keep ``_core.c`` and the reference in step)
---------------------------------------------------------------------------
Levels ``L[0] .. L[n-1]`` (closest to the core first), then memory ``MEM``.
A level has ``sets`` (any positive integer), ``ways``, ``line_size`` (a power
of two, equal for all levels), ``policy`` (``LRU``, ``FIFO``, ``RANDOM``),
``write_allocate``, ``write_back``, ``kind`` (``inclusive``,
``non-inclusive``, ``victim``; ``L[0]`` cannot be a victim cache) and, for a
victim cache, ``victim_clean`` (default true; see ``evict``).
Addresses are unsigned 64-bit; line number ``l = addr >> log2(line_size)``;
set ``l mod sets``.

Each set is an ordered list of at most ``ways`` lines with a dirty bit each.
``touch`` moves an entry to the front for LRU and does nothing for FIFO and
RANDOM. ``remove`` deletes an entry and closes the gap (later entries move up
by one). ``place(i, l, dirty)``: if the set is full, choose a victim entry at
index ``v`` (the last entry for LRU and FIFO, ``rng() mod ways`` for RANDOM),
``remove`` it, and ``evict`` it (below; this may remove further entries of the
same set through back-invalidation); otherwise ``v`` = number of entries.
Then insert the new line at the front for LRU and FIFO, and for RANDOM at
index ``min(v, number of entries)`` (later entries move back by one). ``rng`` is xorshift64
(``x ^= x << 13; x ^= x >> 7; x ^= x << 17`` modulo 2**64, then return x),
one state per level, initialised with the level's ``seed`` (non-zero).

An access ``(addr, size, kind)`` touches the lines covering
``[addr, addr + size)``; for each, in address order, with ``b`` the bytes of
the access inside that line:

* load:  ``load(0, l)``
* store: ``store(0, l, b)``
* non-temporal store: for every level holding ``l``: ``remove`` it,
  ``invalidations += 1`` (its data is superseded); then
  ``L[n-1].through_bytes += b`` and ``MEM.store_bytes += b``.

``load(i, l)`` (demand read at level i): if ``i == n``: ``MEM.loads += 1``.
Else, if ``l`` is in ``L[i]``: ``hits += 1``, ``touch``. Else ``misses += 1``,
``d = fetch(i, l)``, ``place(i, l, dirty=d)``.

``fetch(i, l)`` (bring ``l`` into level i from below; returns dirty):
``L[i].load_lines += 1``; ``j = i + 1``. If ``j == n``: ``MEM.loads += 1``,
return clean. If ``L[j]`` is a victim cache: if ``l`` is in ``L[j]``:
``L[j].hits += 1``, remember its dirty bit, ``remove`` it from ``L[j]``
(exclusive), return that dirty bit; else ``L[j].misses += 1`` and return
``fetch(j, l)`` (the line bypasses the victim cache). Otherwise
``load(j, l)`` and return clean.

``evict(i, v, d)`` (line ``v`` with dirty bit ``d`` leaves level i):
``evicts += 1``. If ``L[i]`` is ``inclusive`` and ``i > 0``: every level
above holding ``v`` ``remove``s it (``invalidations += 1`` there) and a dirty
upper copy makes ``d`` dirty. Then, with ``j = i + 1``: if ``d``:
``store_lines += 1``, ``write_back(j, v)``; else if ``j < n`` and ``L[j]`` is a
victim cache: ``store_lines += 1`` only if ``L[j].victim_clean``, then
``victim_insert(j, v, clean)``; else the line is dropped.

``victim_clean`` false means: a clean line leaving the level above a victim
cache is still placed in it (data read again are found there, and displace
other lines), but it is no transfer on the link: it is not counted in
``store_lines``. This is what cross-architecture-machine-models.txt Table 3
implies for the EPYC (Zen) victim L3: daxpby with data in L3 has T_L2L3 =
0.75 cy/it = 24 B at 32 B/cy, i.e. x and y read from the L3 (so the clean x
was put there) plus y written back, and with data in memory 0.25 cy/it =
8 B: the write-back of y only, no transfer for x. With ``victim_clean`` true
(the default, §3.3: a victim cache "receives both modified and unmodified
cache lines"; Table 3 for SKL, TX2 and PWR9) every eviction into it counts.
Dirty lines count either way.

``write_back(j, l)`` (a whole dirty line arrives at level j): if ``j == n``:
``MEM.stores += 1``. Else if ``L[j]`` is a victim cache:
``victim_insert(j, l, dirty)``. Else if ``L[j]`` is write-through: update or
place ``l`` clean (``touch`` if present, ``place(j, l, clean)`` if not), then
``store_lines += 1`` and ``write_back(j + 1, l)``. Else (write-back): if
present: set dirty, ``touch``; else ``place(j, l, dirty)`` (no fetch: the
whole line is written).

``victim_insert(j, l, d)``: if present: ``dirty |= d``, ``touch``; else
``place(j, l, d)``.

``store(i, l, b)`` (demand write at level i): if ``i == n``:
``MEM.store_bytes += b``. Else if present: ``hits += 1``, ``touch``, set dirty
if ``write_back``. Else ``misses += 1``; if ``write_allocate`` and ``L[i]`` is
not a victim cache: ``d = fetch(i, l)``, ``place(i, l, dirty=d or write_back)``.
Then, if ``L[i]`` is write-through, or the line was not allocated (a miss
without write-allocate, or a miss in a victim cache): ``through_bytes += b``
and ``store(i + 1, l, b)``.

``flush()``: for ``i = 0 .. n-1``, for each set of ``L[i]`` in order, while
the set is not empty: ``remove`` its front entry ``v`` (dirty bit ``d``) and
``evict(i, v, d)``. (Used to write back what a single sweep leaves dirty.)

Statistics (counted only while counting is enabled): per level ``hits``,
``misses`` (demand lookups: loads, stores, victim-cache probes),
``load_lines`` (lines brought into the level from below: traffic toward the
core on the link below it), ``store_lines`` (whole lines sent to the level
below: dirty evictions, clean evictions into a victim cache with
``victim_clean``, write-through of whole lines), ``through_bytes`` (bytes of partial-line stores sent below:
write-through, no-write-allocate and non-temporal), ``evicts`` (valid lines
replaced, clean or dirty), ``invalidations``; for ``MEM``: ``loads`` and
``stores`` (lines), ``store_bytes``. Not a counter but a state: the dirty
entries each level holds (``lm_dirty``, ``Hierarchy.dirty_lines``); the loop-nest
driver records them when it starts counting (``RunResult.dirty_start``), so that
the write-backs of a window can be corrected by the change of the dirty fill
over it.
"""
