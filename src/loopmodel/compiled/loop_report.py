"""What the compiler did to each loop of the kernel's nest, from its optimisation report.

gcc names every loop transformation it made in its optimisation report
(``-fopt-info-vec-loop-optimized``, one line per event: ``kernel.c:LINE:COL: optimized: MESSAGE``):
a loop vectorised and with which vector size (the main loop, then the epilogue), versioned for
possible aliasing, unrolled (``loop unrolled N times``: N + 1 copies of the body), completely
unrolled, the loops of a nest interchanged. The line is that of the loop's ``for`` in the
generated program (:func:`.codegen.generate_c`), which prints one ``for`` per line from the
parsed nest, so a line is a loop depth (0: outermost). After an interchange gcc reports each
loop at the line of the position it runs in; in a nest of two loops the executed order is the
source order reversed, deeper nests do not say which pair moved.

:func:`read_report` turns the report into one :class:`CompiledNest`; it reads at most
:data:`MAX_REPORT_LINES` lines (the report is a tool's output about a stranger's kernel).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

#: the report option gcc takes (to stderr): vectoriser and loop-optimiser events that happened
GCC_REPORT_FLAG = "-fopt-info-vec-loop-optimized"
#: lines of the report read at most
MAX_REPORT_LINES = 2000

_EVENT = re.compile(r"^(?:[^:\n]*):(\d+):(\d+): optimized:\s+(.*)$")
_VECTOR = re.compile(r"^loop vectorized using (\d+) byte vectors")
_UNROLLED = re.compile(r"^loop unrolled (\d+) times")
_COMPLETE = re.compile(r"^loop with (\d+) iterations completely unrolled")
_DISTRIBUTED = re.compile(r"^Loop \d+ distributed: split to (\d+) loops and (\d+) library calls")
_FOR = re.compile(r"^\s*for\s*\(")


@dataclass(frozen=True)
class CompiledLoop:
    """One loop position of the compiled nest (depth 0: outermost).

    Attributes:
        depth: position in the nest, 0 outermost.
        index: the loop index variable that runs at this position (after an interchange, the
            moved one), or "" where the report leaves it open (an interchange in a nest of more
            than two loops).
        vector_bytes: vector size of the main vectorised loop in B (None: not vectorised).
        epilogue_bytes: vector size of the vectorised epilogue (remainder) loop in B, or None.
        versioned: the loop was versioned for possible aliasing (a run-time overlap check picks
            the vector or the scalar version).
        unroll_factor: copies of the body per pass after unrolling (``unrolled N times`` = N + 1),
            None where not unrolled.
        completely_unrolled: iterations of a loop unrolled completely (the loop is gone), or None.
        library_calls: library calls (``memcpy``, ``memset``) the loop was distributed into, 0
            where none; with ``split_loops`` 0 no loop is left of it.
        split_loops: loops the distribution left (``library_calls`` > 0 only).
    """

    depth: int
    index: str
    vector_bytes: int | None = None
    epilogue_bytes: int | None = None
    versioned: bool = False
    unroll_factor: int | None = None
    completely_unrolled: int | None = None
    library_calls: int = 0
    split_loops: int = 0

    def describe(self, element_bytes: int) -> str:
        """One phrase: ``loop i vectorised, 32-byte vectors (VF 4), epilogue 16-byte, versioned for
        aliasing``; VF = vector bytes / ``element_bytes`` (B per element)."""
        name = f"loop {self.index}" if self.index else f"loop at depth {self.depth}"
        parts = []
        if self.vector_bytes:
            vf = self.vector_bytes // element_bytes if element_bytes else 0
            parts.append(f"vectorised, {self.vector_bytes}-byte vectors" + (f" (VF {vf})" if vf else ""))
        if self.epilogue_bytes:
            parts.append(f"epilogue {self.epilogue_bytes}-byte vectors")
        if self.versioned:
            parts.append("versioned for aliasing")
        if self.unroll_factor:
            parts.append(f"unrolled x{self.unroll_factor}")
        if self.completely_unrolled:
            parts.append(f"completely unrolled ({self.completely_unrolled} iterations)")
        if self.library_calls:
            parts.append(f"replaced by {self.library_calls} library call(s) (memcpy, memset: gcc's loop distribution)"
                         + (f" and {self.split_loops} loop(s)" if self.split_loops else ""))
        return f"{name} " + ", ".join(parts) if parts else ""


@dataclass(frozen=True)
class CompiledNest:
    """The kernel's loop nest as compiled: its loops by depth (outermost first), whether the
    compiler interchanged loops, and the executed order of the loop indices (outermost first;
    empty where the report does not say)."""

    compiler: str
    loops: tuple
    interchanged: bool = False
    order: tuple = ()

    @property
    def library_calls(self) -> int:
        """Library calls the loops of the nest were distributed into (memcpy, memset)."""
        return sum(lp.library_calls for lp in self.loops)

    @property
    def vectorised(self) -> CompiledLoop | None:
        """The innermost vectorised loop, or None."""
        return next((lp for lp in reversed(self.loops) if lp.vector_bytes), None)

    def describe(self, element_bytes: int) -> str:
        """The report in one line: ``compiled (gcc): loop order j, i (interchanged); loop i
        vectorised, 32-byte vectors (VF 4)``, or ``...: no loop vectorised``."""
        head = []
        if self.interchanged:
            head.append(f"loop order {', '.join(self.order)} (interchanged)" if self.order
                        else "loops interchanged (the report does not say which)")
        said = [d for d in (lp.describe(element_bytes) for lp in self.loops) if d]
        if self.vectorised is None and not self.library_calls:
            said.append("no loop vectorised")
        return f"compiled ({self.compiler}'s report): " + "; ".join(head + said)


def fold_left_reductions(nest: CompiledNest | None, kernel, reassociate: bool) -> list:
    """The floating-point reductions of ``kernel`` that ``nest``'s vectorised inner loop keeps in
    source order (``reassociate`` False: the flags forbid partial sums): gcc's fold-left
    reduction, vector loads and arithmetic, one element added at a time. Integer reductions are
    reassociated whatever the flags. [] where the inner loop is not vectorised."""
    inner = nest.loops[-1] if nest is not None and nest.loops else None
    if inner is None or not inner.vector_bytes or reassociate:
        return []
    return [r.variable for r in kernel.recurrences if r.reassociable and not kernel.integer_valued(r.variable)]


def loop_lines(c_source: str, start_mark: str, end_mark: str) -> list:
    """Line numbers (1-based) of the ``for`` statements of the kernel in ``c_source``, between
    the lines holding ``start_mark`` and ``end_mark``, outermost first."""
    lines, inside, out = c_source.split("\n"), False, []
    for number, text in enumerate(lines, 1):
        if start_mark in text:
            inside = True
        elif end_mark in text:
            break
        elif inside and _FOR.match(text):
            out.append(number)
    return out


def read_report(report: str, compiler: str, c_source: str, indices: tuple, marks: tuple) -> CompiledNest | None:
    """The compiled nest from gcc's optimisation ``report`` (:data:`GCC_REPORT_FLAG`) of
    ``c_source``, whose kernel nest has the loop ``indices`` (outermost first) between the two
    ``marks``; None where the kernel's ``for`` lines cannot be matched to its loops."""
    lines = loop_lines(c_source, *marks)
    if len(lines) != len(indices):
        return None
    depth_of = {line: d for d, line in enumerate(lines)}
    loops = [CompiledLoop(d, idx) for d, idx in enumerate(indices)]
    interchanged = False
    for text in report.split("\n")[:MAX_REPORT_LINES]:
        m = _EVENT.match(text.strip())
        if not m or int(m.group(1)) not in depth_of:
            continue
        d, message = depth_of[int(m.group(1))], m.group(3).strip()
        loops[d], moved = _event(loops[d], message)
        interchanged = interchanged or moved
    order = tuple(indices)
    if interchanged:
        order = tuple(reversed(indices)) if len(indices) == 2 else ()
        loops = [replace(lp, index=order[lp.depth] if order else "") for lp in loops]
    return CompiledNest(compiler, tuple(loops), interchanged, order)


def _event(loop: CompiledLoop, message: str) -> tuple:
    """``(loop with the event applied, whether it reports an interchange)``."""
    if message.startswith("loops interchanged"):
        return loop, True
    m = _VECTOR.match(message)
    if m:
        size = int(m.group(1))
        if loop.vector_bytes is None:
            return replace(loop, vector_bytes=size), False
        return (replace(loop, epilogue_bytes=size) if loop.epilogue_bytes is None else loop), False
    if message.startswith("loop versioned for vectorization because of possible aliasing"):
        return replace(loop, versioned=True), False
    m = _UNROLLED.match(message)
    if m:
        return replace(loop, unroll_factor=int(m.group(1)) + 1), False
    m = _DISTRIBUTED.match(message)
    if m:
        return replace(loop, split_loops=int(m.group(1)), library_calls=int(m.group(2))), False
    m = _COMPLETE.match(message)
    if m and loop.vector_bytes is None:  # after vectorisation: its scalar remainder, not the loop
        return replace(loop, completely_unrolled=int(m.group(1))), False
    return loop, False
