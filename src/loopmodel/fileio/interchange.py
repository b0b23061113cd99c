"""A two-loop kernel with its loops interchanged, as the compiler runs it.

gcc interchanges the loops of a nest whose inner loop strides through memory (``for i ... for j
... b[j][i]``) and says so in its optimisation report (:mod:`loopmodel.compiled.loop_report`).
The data traffic of the loop that runs is that of the interchanged nest, so the analysis follows
it: :func:`interchanged` prints the kernel file of the executed nest from the parsed model (the
declarations, then the nest with its two loop headers swapped) and parses it again, so every
model (layer conditions, cache simulation, in-core) reads the loop order that runs.

Only a rectangular nest of two unit-step loops is interchanged: the bounds of each loop name
no index of the other (then the iteration space is the same in either order, and the accesses
are too). A nest with swaps, index values in its arithmetic or pragmas is left as written.
"""
from __future__ import annotations

import importlib


def can_interchange(kernel) -> bool:
    """Whether ``kernel`` is a rectangular nest of two unit-step loops that :func:`interchanged`
    can swap (its bounds name no loop index; no swaps, pragmas or index values; arrays declared
    in the kernel file)."""
    if len(kernel.loops) != 2 or kernel.swaps or kernel.pragmas or kernel.index_values or not kernel.code:
        return False
    indices = set(kernel.loop_indices)
    for lp in kernel.loops:
        if lp.step != 1 or (lp.start.symbols | lp.stop.symbols) & indices:
            return False
    return all(a.distinct for a in kernel.arrays.values())


def interchanged(kernel) -> tuple:
    """``(Kernel, kernel file text)`` of ``kernel`` with its two loops swapped, parsed from the
    printed text (its ``source`` kept for messages).

    Raises:
        ValueError: ``kernel`` is not one :func:`can_interchange` accepts.
        KernelError: the printed text does not parse (a defect: it is printed from a parsed model).
    """
    if not can_interchange(kernel):
        raise ValueError(f"{kernel.source}: not a rectangular nest of two unit-step loops")
    decls = [f"{a.ctype} {name}" + "".join(f"[{d}]" for d in a.dims) + ";" for name, a in kernel.arrays.items()]
    decls += [f"{s.ctype} {name};" for name, s in kernel.scalars.items()]
    lines = kernel.code.rstrip("\n").split("\n")
    outer, inner = (_header(lp) for lp in kernel.loops)
    lines[0], lines[1] = _replace_header(lines[0], inner), _replace_header(lines[1], outer)
    text = "\n".join(decls + lines) + "\n"
    new, _ = _c_front_end().parse_kernel(text, kernel.source)
    return new, text


def _c_front_end():
    """:mod:`loopmodel.fileio.c_kernel` (pycparser), loaded where a nest is interchanged only: a
    warm analysis of a nest that runs as written imports no parser (benchmarks/import_time.py)."""
    return importlib.import_module(f"{__package__}.c_kernel")


def _header(lp) -> str:
    return f"for (int {lp.index} = {lp.start}; {lp.index} < {lp.stop}; ++{lp.index})"


def _replace_header(line: str, header: str) -> str:
    """``line`` (a ``for (...)`` line of the printed nest, maybe ending in ``{``) with its header
    replaced by ``header``, indentation and what follows the header kept."""
    start = line.index("for")
    depth, end = 0, None
    for k in range(line.index("(", start), len(line)):
        depth += {"(": 1, ")": -1}.get(line[k], 0)
        if depth == 0:
            end = k + 1
            break
    if end is None:
        raise ValueError(f"no loop header in {line!r}")
    return line[:start] + header + line[end:]
