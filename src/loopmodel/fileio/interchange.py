"""A kernel with its two innermost loops interchanged, as the compiler runs it.

gcc interchanges the loops of a nest whose inner loop strides through memory (``for i ... for j
... b[j][i]``), or vectorises the loop around the inner one (``y[j] += A[i][j] * x[i]`` with the
inner loop over ``i``: eight ``j`` at a time, one contiguous vector of a row per ``i``), and says
so in its optimisation report (:mod:`loopmodel.compiled.loop_report`). The data traffic of the
loop that runs is then that of the nest with the two loops swapped, so the analysis follows it:
:func:`interchanged` prints the kernel file of that nest from the parsed model (the
declarations, then the nest with the two innermost loop headers swapped) and parses it again,
so every model (layer conditions, cache simulation, in-core) reads the loop order that runs.

Only unit-step nests whose two innermost loops are rectangular to each other are interchanged:
the bounds of either name no index of the other (then the iteration space is the same in either
order, and the accesses are too). A nest with swaps, index values in its arithmetic or pragmas
is left as written.
"""
from __future__ import annotations

import importlib


def can_interchange(kernel) -> bool:
    """Whether ``kernel`` is a nest of unit-step loops whose two innermost loops
    :func:`interchanged` can swap (their bounds name neither of their indices; no swaps, pragmas
    or index values; arrays declared in the kernel file)."""
    if len(kernel.loops) < 2 or kernel.swaps or kernel.pragmas or kernel.index_values or not kernel.code:
        return False
    pair = set(kernel.loop_indices[-2:])
    if any(lp.step != 1 for lp in kernel.loops):
        return False
    if any((lp.start.symbols | lp.stop.symbols) & pair for lp in kernel.loops[-2:]):
        return False
    return all(a.distinct for a in kernel.arrays.values())


def interchanged(kernel) -> tuple:
    """``(Kernel, kernel file text)`` of ``kernel`` with its two innermost loops swapped, parsed
    from the printed text (its ``source`` kept for messages).

    Raises:
        ValueError: ``kernel`` is not one :func:`can_interchange` accepts.
        KernelError: the printed text does not parse (a defect: it is printed from a parsed model).
    """
    if not can_interchange(kernel):
        raise ValueError(f"{kernel.source}: not a unit-step nest with two rectangular innermost loops")
    decls = [f"{a.ctype} {name}" + "".join(f"[{d}]" for d in a.dims) + ";" for name, a in kernel.arrays.items()]
    decls += [f"{s.ctype} {name};" for name, s in kernel.scalars.items()]
    lines = kernel.code.rstrip("\n").split("\n")
    d = len(kernel.loops) - 2  # the printed nest has one loop header per line, outermost first
    outer, inner = (_header(lp) for lp in kernel.loops[d:])
    lines[d], lines[d + 1] = _replace_header(lines[d], inner), _replace_header(lines[d + 1], outer)
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
