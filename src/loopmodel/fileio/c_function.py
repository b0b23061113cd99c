"""Kernels written as a C function: ``void kernel(double *restrict a, const double *b, int n)
{ for (...) ... }``.

The loop nest in the function's body is the kernel, as if its arrays and scalars were declared
at the top level of a Kerncraft kernel file (kerncraft-tool-paper.txt §2.1):

* one function is one kernel: the function ``--function NAME`` names, else the one that
  holds a ``for`` loop. A file whose other functions have no loop (helpers, prototypes) names
  the one with a loop; ``main`` is left out when another function has a loop (a benchmark
  program around its kernel); several kernel functions and no name is one line listing them.
  Everything left out gets a note; of the top-level declarations only those the function
  names are read (a benchmark's timers and labels are not the kernel's);
* parameters: a pointer (``double *a``, ``const float *restrict b``) is a one-dimensional array;
  an array parameter keeps its dimensions (``double a[N][M]``, a variable-length
  ``double a[n][m]``); the first dimension may be left out (``double a[][M]``,
  ``double (*a)[M]``). Where a size is not given, it is the extent the accesses reach over the
  loop nest (:func:`loopmodel.ir.extent.index_range`), with a note. An integer parameter
  (``int n``, ``size_t n``, ``const long n``) is a size constant, given with ``-D``; a
  floating-point one is a scalar;
* the body: declarations, the loop nest, ``swap(x, y);`` calls, and an optional ``return``
  last (its value is not modelled).

What a compiler sees of the kernel is its loop nest printed from the syntax tree
(:func:`loopmodel.fileio.c_print.nest_code`), in a function of loopmodel's whose parameters are
the kernel's arrays and scalars (:mod:`loopmodel.compiled.codegen`).
"""
from __future__ import annotations

import dataclasses
import re

from pycparser import c_ast

from ..errors import KernelError
from ..ir.extent import index_range, sign, size_floors
from ..ir.poly import Poly
from .c_pragma import pragma_string


def _has_loop(node) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, c_ast.For):
            return True
        stack.extend(child for _, child in n.children())
    return False


def select_function(unit, filename: str, name: str | None = None) -> tuple:
    """The kernel function of a translation unit and what else it holds.

    Args:
        name: the kernel function's name (``--function``); None: the one function with a loop
            (``main`` left out when another has one).

    Returns:
        ``(function, globals, notes, typedefs)``: the ``FuncDef``, the top-level declarations of
        variables the function names (arrays, scalars, sizes; in file order), notes on the
        top-level items left out (other functions, pragmas) and the typedefs of scalar types the
        function names (name -> the type's words: ``typedef char base;``).

    Raises:
        KernelError: no such function, no function with a loop, several (``main`` aside) and no
            ``name``, a typedef of another type (a struct, a pointer, an array) the function
            names, or another top-level item that is not a declaration, function or pragma
            (``file:line``).
    """
    function = _pick(unit, filename, name)
    used = _names(function)
    globals_, notes, typedefs = [], [], {}
    for item in unit.ext:
        if isinstance(item, c_ast.Typedef) and item.coord.line == 1:
            continue  # the typedef line above the file
        if isinstance(item, c_ast.Typedef) and item.name in used:
            typedefs[item.name] = _typedef_words(item, filename)
        elif isinstance(item, c_ast.FuncDef) and item is not function:
            why = "" if not _has_loop(item.body) else \
                " (main is left out when another function has a loop)" if name is None else f" (--function {name})"
            notes.append(f"function '{item.decl.name}' (line {_line(item)}) is not the kernel: left out{why}")
        elif isinstance(item, c_ast.Decl) and isinstance(item.type, c_ast.FuncDecl):
            continue  # a prototype: nothing to model
        elif isinstance(item, c_ast.Decl) and item.name in used:
            globals_.append(item)
        elif isinstance(item, c_ast.Pragma):
            notes.append(f"line {_line(item)}: '#pragma {pragma_string(item, filename)}' outside the kernel function: ignored")
        elif item is not function and not isinstance(item, (c_ast.Decl, c_ast.Typedef)):
            raise KernelError(f"'{type(item).__name__}' at the top level is not supported (accepted: declarations, "
                              "functions, #pragma)", file=filename, line=_line(item))
    return function, globals_, tuple(notes), typedefs


def _typedef_words(item, filename: str) -> list:
    """The type words of ``typedef <scalar type> name;``.

    Raises:
        KernelError: a typedef of another type (``file:line``).
    """
    t = item.type
    if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
        return list(t.type.names)
    raise KernelError(f"typedef '{item.name}' of a {type(t).__name__} is not supported: write the type itself",
                      file=filename, line=_line(item))


def _pick(unit, filename: str, name: str | None):
    """The kernel ``FuncDef`` (:func:`select_function`)."""
    funcs = [e for e in unit.ext if isinstance(e, c_ast.FuncDef)]
    kernels = [f for f in funcs if _has_loop(f.body)]
    listing = ", ".join(f"'{f.decl.name}' (line {_line(f)})" for f in kernels) or "none"
    if name is not None:
        named = [f for f in funcs if f.decl.name == name]
        if not named:
            raise KernelError(f"--function {name}: no function of that name (functions with loops: {listing})",
                              file=filename)
        if not _has_loop(named[0].body):
            raise KernelError(f"--function {name}: the function has no for-loop (functions with loops: {listing})",
                              file=filename, line=_line(named[0]))
        return named[0]
    if len(kernels) > 1:
        kernels = [f for f in kernels if f.decl.name != "main"] or kernels
    if not kernels:
        raise KernelError(f"function '{funcs[0].decl.name}' has no for-loop: the kernel is the loop nest in a "
                          "function's body", file=filename, line=_line(funcs[0]))
    if len(kernels) > 1:
        raise KernelError(f"several functions with loops: {listing}; name the kernel with --function NAME",
                          file=filename, line=_line(kernels[1]))
    return kernels[0]


def _names(node) -> set:
    """Every identifier a function names (its variables, calls and types)."""
    found, stack = set(), [node]
    while stack:
        n = stack.pop()
        if isinstance(n, c_ast.ID):
            found.add(n.name)
        elif isinstance(n, c_ast.IdentifierType):
            found.update(n.names)
        stack.extend(child for _, child in n.children())
    return found


def _line(node) -> int:
    """The line in the file of a node of the unit source (one line of typedefs above it)."""
    return node.coord.line - 1


def parameters(function, filename: str) -> list:
    """The parameter declarations of a ``FuncDef`` (``(void)`` and ``()``: none).

    Raises:
        KernelError: an unnamed parameter, ``...`` or an old-style (K&R) parameter list
            (naming the line).
    """
    args = function.decl.type.args
    out = []
    for p in (args.params if args else []):
        if isinstance(p, c_ast.EllipsisParam):
            raise KernelError("a variadic kernel function ('...') is not supported", file=filename, line=_line(p))
        if isinstance(p, c_ast.Typename) and _is_void(p):
            continue
        if not isinstance(p, c_ast.Decl) or not p.name:
            raise KernelError("every parameter of the kernel function needs a type and a name (double *a, int n)",
                              file=filename, line=_line(p))
        out.append(p)
    return out


def _is_void(node) -> bool:
    t = node.type
    return isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) and t.type.names == ["void"]


def resolve_extents(builder, open_arrays: dict) -> list:
    """Give each array of ``open_arrays`` (name -> its declaration node) whose first dimension is
    not declared the extent its accesses reach (``builder``: a
    :class:`~loopmodel.fileio.c_kernel.KernelBuilder` after the loop nest); an array never
    accessed is left out.

    Returns:
        notes, one per array.

    Raises:
        KernelError: an extent that cannot be told (a coefficient or a comparison of unknown
            sign) or an access before the array's first element (naming the access).
    """
    notes = []
    for name, decl in open_arrays.items():
        accesses = [a for a in list(builder.reads.values()) + list(builder.writes.values()) if a.array == name]
        if not accesses:
            del builder.arrays[name]
            notes.append(f"parameter '{name}' is not accessed in the loop nest: left out")
            continue
        extent = _extent(builder, name, accesses)
        arr = builder.arrays[name]
        builder.arrays[name] = dataclasses.replace(arr, dims=(extent,) + arr.dims[1:])
        what = "pointer parameter" if _pointer(decl) else "its first dimension"
        notes.append(f"'{name}' (line {_line(decl)}, {what}): {c_expr(extent)} elements, as far as the loop nest "
                     "reaches")
    return notes


def _pointer(decl) -> bool:
    return isinstance(decl.type, c_ast.PtrDecl) and not isinstance(decl.type.type, c_ast.ArrayDecl)


def _extent(builder, name: str, accesses: list) -> Poly:
    """The elements of the first dimension of ``name`` that ``accesses`` reach: the largest first
    index plus one, the smallest at least 0."""
    hint = f"give the size of '{name}' in the parameter (double {name}[N], double {name}[][M])"
    floors = size_floors(builder.loops)
    highs = []
    for acc in accesses:
        found = index_range(acc.indices[0], builder.loops)
        if found is None:
            raise KernelError(f"cannot tell how far '{acc}' reaches (a coefficient of unknown sign): {hint}",
                              file=builder.filename, line=acc.line or None, col=acc.col or None)
        low, high = found
        if sign(low, floors) is None:
            raise KernelError(f"cannot tell whether '{acc}' stays at or after element 0 of '{name}' (its lowest "
                              f"index is {low}): {hint}", file=builder.filename, line=acc.line or None,
                              col=acc.col or None)
        if sign(low, floors) < 0:
            raise KernelError(f"'{acc}' reaches element {low}, before the first element of '{name}' (a parameter "
                              f"without a size starts at element 0): {hint}", file=builder.filename,
                              line=acc.line or None, col=acc.col or None)
        highs.append(high)
    top = highs[0]
    for high in highs[1:]:
        s = sign(high - top, floors)
        if s is None:
            raise KernelError(f"cannot tell which access of '{name}' reaches further ({top} or {high}): {hint}",
                              file=builder.filename, line=accesses[0].line or None)
        top = high if s > 0 else top
    return top + 1


def c_expr(poly: Poly) -> str:
    """A size polynomial as a C expression (``M*N - 2*N + 1``; ``N*N`` for a square)."""
    text = str(poly)
    return re.sub(r"(\w+)\*\*(\d+)", lambda m: "*".join([m.group(1)] * int(m.group(2))), text)
