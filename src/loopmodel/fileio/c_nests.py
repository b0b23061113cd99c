"""A kernel function's body as a sequence of perfect loop nests.

Real kernels are rarely one perfect nest: PolyBench's gemm scales ``C[i][j] *= beta`` before
its ``k`` loop, atax zeroes ``tmp[i]`` beside two inner loops, jacobi-2d and fdtd-2d run
several nests inside a time loop. :func:`split` cuts such a body into maximal perfect nests,
in execution order, each with the loops that enclose it:

* a loop whose body holds only statements ends a nest: the enclosing loops and it;
* statements beside inner loops (consecutive ones together) become a nest of their own at
  their level, ``for i { C[i][j] *= beta; ... }`` -> ``for i for j C[i][j] *= beta`` and
  ``for i { tmp[i] = 0; ... }`` -> ``for i tmp[i] = 0``;
* an enclosing loop whose index the nest does not use (a time loop, ``for t``) is taken off
  the nest and multiplies it: the nest runs its trip count times
  (:attr:`Piece.repeat`), and is analysed as the nest inside, whose data the other nests
  of the time step pass through (ecm-model-slides.txt, "ECM model – saturation" sums loop
  kernels the same way; cross-architecture-machine-models.txt §5.2.3);
* statements outside every loop run once per call and are left out with a note;
* an ``if`` on the loop indices restricts the iteration space of the statements it guards
  (each branch a piece of its own, :attr:`Piece.guards`; the builder turns the condition into
  loop bounds, :meth:`loopmodel.fileio.c_kernel.KernelBuilder.guard`).

Pragmas before a loop stay before it in every nest it encloses. The nests are pycparser
``For`` nodes built from the function's own nodes; what reaches a compiler is printed from
them (:func:`loopmodel.fileio.c_print.nest_code`).
"""
from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from ..errors import KernelError


@dataclass(frozen=True)
class Piece:
    """One perfect nest of a function body.

    Attributes:
        pragmas: ``Pragma`` nodes before its outermost loop.
        loop: its outermost ``For`` (a perfect nest; built from the function's nodes).
        repeat: the enclosing loops taken off (outermost first), whose indices it does not use.
        line: the line of its first statement in the kernel file.
        guards: ``(condition node, holds)`` of each ``if`` around its statements (``holds`` False:
            the ``else`` branch), outermost first: restrictions of its iteration space.
        path: ``(line, column)`` of every loop around its statements, outermost first (the
            repeat loops included): pieces that share a prefix run interleaved in those loops.
    """

    pragmas: tuple
    loop: object
    repeat: tuple
    line: int
    guards: tuple = ()
    path: tuple = ()


def split(items, filename: str) -> tuple | None:
    """The perfect nests of a function body's statements ``items``.

    Returns:
        ``(pieces, notes)``; None where ``items`` hold one perfect nest (read as one kernel).

    Raises:
        KernelError: a loop with an empty body (naming its line).
    """
    loops = [it for it in items if isinstance(it, c_ast.For)]
    if len(loops) == 1 and _perfect(loops[0]):
        return None
    pieces, notes = [], []
    _walk(items, [], pieces, notes, filename)
    return tuple(pieces), tuple(notes)


def _perfect(loop) -> bool:
    """Whether ``loop`` is a perfect nest: each body one loop (and pragmas), or statements only."""
    while True:
        real = [it for it in _body(loop) if not isinstance(it, c_ast.Pragma)]
        inner = [it for it in real if isinstance(it, c_ast.For)]
        if not inner:
            return not any(_holds_loop(it) or isinstance(it, c_ast.If) for it in real)
        if len(real) != 1:
            return False
        loop = inner[0]


def _holds_loop(node) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (c_ast.For, c_ast.While, c_ast.DoWhile)):
            return True
        stack.extend(child for _, child in n.children())
    return False


def _body(loop) -> list:
    body = loop.stmt
    return list(body.block_items or []) if isinstance(body, c_ast.Compound) else [body]


def _walk(items, outer: list, pieces: list, notes: list, filename: str, guards: tuple = ()) -> None:
    """Cut ``items`` (inside the loops ``outer``: ``(For, pragmas before it)``, under the ``if``
    conditions ``guards``) into pieces."""
    group, pragmas = [], []
    for item in items:
        if isinstance(item, c_ast.Pragma):
            pragmas.append(item)
        elif isinstance(item, (c_ast.For, c_ast.Compound, c_ast.If)):
            _flush(group, outer, pieces, notes, guards, filename)
            group = []
            if isinstance(item, c_ast.For):
                _loop(item, outer + [(item, tuple(pragmas))], pieces, notes, filename, guards)
            elif isinstance(item, c_ast.Compound):
                _walk(item.block_items or [], outer, pieces, notes, filename, guards)
            else:
                _branches(item, outer, pieces, notes, filename, guards)
            pragmas = []
        elif isinstance(item, c_ast.Decl) and not outer:
            continue  # the function's declarations: every nest reads them
        elif isinstance(item, (c_ast.While, c_ast.DoWhile)):
            kind = "'while'" if isinstance(item, c_ast.While) else "'do'/'while'"
            raise KernelError(f"{kind} loops not supported in kernels (accepted: for loops)", file=filename,
                              line=item.coord.line - 1 if item.coord else None,
                              col=item.coord.column if item.coord else None)
        else:
            group.append(item)
    _flush(group, outer, pieces, notes, guards, filename)


def _branches(node, outer: list, pieces: list, notes: list, filename: str, guards: tuple) -> None:
    """An ``if``: its branches cut into pieces under its condition (held, or not for ``else``)."""
    if not outer and not _holds_loop(node):
        notes.append(f"line {node.coord.line - 1 if node.coord else 0}: statements outside every loop run once per "
                     "call: not timed")
        return
    if not outer:
        raise KernelError("an 'if' around loops outside every loop is not supported (a condition restricts the "
                          "iteration space of the loops around it)", file=filename,
                          line=node.coord.line - 1 if node.coord else None)
    for branch, holds in ((node.iftrue, True), (node.iffalse, False)):
        if branch is not None:
            items = branch.block_items or [] if isinstance(branch, c_ast.Compound) else [branch]
            _walk(items, outer, pieces, notes, filename, guards + ((node.cond, holds),))


def _loop(loop, outer: list, pieces: list, notes: list, filename: str, guards: tuple) -> None:
    body = _body(loop)
    if not [it for it in body if not isinstance(it, c_ast.Pragma)]:
        line = loop.coord.line - 1 if loop.coord else None
        raise KernelError("loop body is empty", file=filename, line=line)
    if any(isinstance(it, (c_ast.For, c_ast.Compound, c_ast.If)) for it in body):
        _walk(body, outer, pieces, notes, filename, guards)
    else:
        _flush(body, outer, pieces, notes, guards, filename)


def _flush(group: list, outer: list, pieces: list, notes: list, guards: tuple, filename: str) -> None:
    """The statements ``group`` inside the loops ``outer`` as a piece (outside every loop: a note)."""
    real = [it for it in group if not isinstance(it, c_ast.Pragma)]
    if not real:
        return
    line = next((it.coord.line - 1 for it in real if it.coord), 0)
    if not outer:
        swap = next((it for it in real if _swap(it)), None)
        if swap is not None:
            raise KernelError("'swap(x, y);' exchanges the arrays between the sweeps of one loop nest: it is not "
                              "supported with several nests", file=filename,
                              line=swap.coord.line - 1 if swap.coord else None,
                              col=swap.coord.column if swap.coord else None)
        kinds = [it for it in real if not isinstance(it, c_ast.Return)]
        if kinds:
            notes.append(f"line {line}: statements outside every loop run once per call: not timed")
        return
    cut = 0
    while cut < len(outer) - 1:
        used = _identifiers(real + [cond for cond, _ in guards] +
                            [part for f, _ in outer[cut + 1:] for part in (f.init, f.cond, f.next)])
        if _index(outer[cut][0]) in used:
            break
        cut += 1
    node = c_ast.Compound(list(group))
    for k in range(len(outer) - 1, cut - 1, -1):
        loop, _ = outer[k]
        inner_pragmas = list(outer[k + 1][1]) if k + 1 < len(outer) else []
        content = inner_pragmas + (node.block_items if k == len(outer) - 1 else [node])
        node = c_ast.For(loop.init, loop.cond, loop.next, c_ast.Compound(content, loop.coord), loop.coord)
    path = tuple((f.coord.line, f.coord.column) if f.coord else (0, id(f)) for f, _ in outer)
    pieces.append(Piece(outer[cut][1], node, tuple(f for f, _ in outer[:cut]), line, guards, path))


def _swap(item) -> bool:
    """Whether ``item`` is Kerncraft's ``swap(x, y);``."""
    return isinstance(item, c_ast.FuncCall) and getattr(item.name, "name", None) == "swap"


def _index(loop) -> str | None:
    """The index a ``for`` initialises (``int i = 0`` or ``i = 0``)."""
    init = loop.init
    if isinstance(init, c_ast.DeclList) and init.decls:
        return init.decls[0].name
    if isinstance(init, c_ast.Assignment) and isinstance(init.lvalue, c_ast.ID):
        return init.lvalue.name
    return None


def _identifiers(nodes) -> set:
    found, stack = set(), [n for n in nodes if n is not None]
    while stack:
        n = stack.pop()
        if isinstance(n, c_ast.ID):
            found.add(n.name)
        stack.extend(child for _, child in n.children())
    return found
