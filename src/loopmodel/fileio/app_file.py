"""Application files (YAML): an ordered list of loop kernels with sizes and invocation counts.

Format (cross-architecture-machine-models.txt §5; ``examples/pcg/pcg.yml``)::

    name: PCG                       # label
    defines: {M: 4000, N: 4000}     # sizes shared by all kernels (overridable with -D)
    kernels:                        # in execution order
    - {name: stencil, file: stencil.c, count: 1}
    - {name: dot, file: dot.c, count: 2, defines: {NN: M*N}}
    - {name: gs forward, file: gs_forward.c, count: 1, placement: one-domain}

``file`` is relative to the application file. Kernel ``defines`` are integers or
arithmetic expressions (``+ - * // ( )``) of the shared ones. ``placement``:
``first-touch`` (default) or ``one-domain`` (all pages in one ccNUMA domain).
"""
from __future__ import annotations

import ast
import os
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import DefineError, LoopmodelError
from ..ir.application import AppKernel, AppSpec
from .defines import MAX_SIZE, size_problem
from .yaml_reader import read_yaml

#: the largest magnitude of a value inside a size expression: the product of two sizes
_MAX_PARTIAL = MAX_SIZE ** 2


class AppError(LoopmodelError):
    """Malformed application file."""


class _KernelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    file: str
    count: int = Field(default=1, ge=0, le=MAX_SIZE)
    defines: dict = Field(default_factory=dict)
    placement: Literal["first-touch", "one-domain"] = "first-touch"


class _AppFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Optional[str] = None
    defines: dict = Field(default_factory=dict)
    kernels: list[_KernelEntry] = Field(min_length=1)


def evaluate(expr, sizes: dict) -> int:
    """Integer value of ``expr`` (int or arithmetic string over ``sizes``).

    Raises:
        ValueError: not an integer expression of known names, nested too deeply, or a partial
            result beyond 2**124 in magnitude (the product of two sizes of at most 2**62).
    """
    if isinstance(expr, bool):
        raise ValueError(f"{expr!r} is not an integer")
    if isinstance(expr, int):
        return expr
    node = ast.parse(str(expr), mode="eval").body

    def ev(n):
        v = _operation(n, ev, sizes, expr)
        if abs(v) > _MAX_PARTIAL:
            raise ValueError(f"'{str(expr)[:40]}' has a partial result beyond 2**124")
        return v

    try:
        return ev(node)
    except RecursionError:
        raise ValueError("expression nested too deeply") from None


def _operation(n, ev, sizes: dict, expr) -> int:
    """The value of one node of a size expression (``ev`` evaluates its operands)."""
    if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
        return n.value
    if isinstance(n, ast.Name):
        if n.id not in sizes:
            raise ValueError(f"unknown size '{n.id}'")
        return int(sizes[n.id])
    if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        a, b = ev(n.left), ev(n.right)
        if isinstance(n.op, ast.FloorDiv) and b == 0:
            raise ValueError(f"'{expr}' divides by zero")
        return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}.get(type(n.op), a // b if b else 0)
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        return -ev(n.operand)
    raise ValueError(f"'{expr}' is not an integer expression (+ - * // and sizes only)")


def _size(expr, sizes: dict, path: str, where: str) -> int:
    """The size ``expr`` evaluates to, checked as a ``-D`` value is (positive, at most 2**62).

    Raises:
        AppError: not an expression of known sizes, or not a valid size (``file: where:``).
    """
    try:
        value = evaluate(expr, sizes)
    except (ValueError, SyntaxError) as exc:
        raise AppError(str(exc), file=str(path), where=where) from None
    problem = size_problem(value)
    if problem:
        raise AppError(f"{str(expr)[:40]} = {str(value)[:40]}: {problem}", file=str(path), where=where)
    return value


def read_app(path: str, overrides: dict | None = None) -> AppSpec:
    """Read and check an application file.

    Args:
        path: the YAML file.
        overrides: shared sizes replacing the file's ``defines`` (from ``-D``).

    Returns:
        :class:`~loopmodel.ir.application.AppSpec` with kernel paths resolved and
        all defines evaluated to integers.

    Raises:
        AppError: unreadable file, YAML or schema error, missing kernel file, a size that is
            not an expression of known sizes or evaluates to less than 1 or more than 2**62.
    """
    data = read_yaml(path, "application file", AppError)
    try:
        spec = _AppFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise AppError(err["msg"], file=str(path), where=where or None) from None
    shared = {}
    for k, v in spec.defines.items():
        shared[k] = _size(v, shared, path, f"defines.{k}")
    for k, v in (overrides or {}).items():
        if k not in shared:
            raise DefineError(f"-D {k}: the application file defines no size '{k}' "
                              f"(sizes: {', '.join(sorted(shared)) or 'none'})")
        shared[k] = v
    base = os.path.dirname(os.path.abspath(path))
    kernels = []
    for i, e in enumerate(spec.kernels):
        kpath = e.file if os.path.isabs(e.file) else os.path.join(base, e.file)
        if not os.path.isfile(kpath):
            raise AppError(f"kernel file '{e.file}' not found", file=str(path), where=f"kernels.{i}.file")
        local = dict(shared)
        for k, v in e.defines.items():
            local[k] = _size(v, shared, path, f"kernels.{i}.defines.{k}")
        kernels.append(AppKernel(e.name, kpath, e.count, local, e.placement))
    return AppSpec(spec.name or os.path.basename(path), tuple(kernels), str(path))
