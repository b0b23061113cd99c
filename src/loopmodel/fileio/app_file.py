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


class AppError(LoopmodelError):
    """Malformed application file."""


class _KernelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    file: str
    count: int = Field(default=1, ge=0)
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
        ValueError: not an integer expression of known names.
    """
    if isinstance(expr, bool):
        raise ValueError(f"{expr!r} is not an integer")
    if isinstance(expr, int):
        return expr
    node = ast.parse(str(expr), mode="eval").body

    def ev(n):
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

    return ev(node)


def read_app(path: str, overrides: dict | None = None) -> AppSpec:
    """Read and check an application file.

    Args:
        path: the YAML file.
        overrides: shared sizes replacing the file's ``defines`` (from ``-D``).

    Returns:
        :class:`~loopmodel.ir.application.AppSpec` with kernel paths resolved and
        all defines evaluated to integers.

    Raises:
        AppError: unreadable file, YAML or schema error, missing kernel file, bad size.
    """
    from .reader import read_yaml

    data = read_yaml(path, "application file", AppError)
    try:
        spec = _AppFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise AppError(err["msg"], file=str(path), where=where or None) from None
    shared = {}
    for k, v in spec.defines.items():
        try:
            shared[k] = evaluate(v, shared)
        except (ValueError, SyntaxError) as exc:
            raise AppError(str(exc), file=str(path), where=f"defines.{k}") from None
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
            try:
                local[k] = evaluate(v, shared)
            except (ValueError, SyntaxError) as exc:
                raise AppError(str(exc), file=str(path), where=f"kernels.{i}.defines.{k}") from None
        kernels.append(AppKernel(e.name, kpath, e.count, local, e.placement))
    return AppSpec(spec.name or os.path.basename(path), tuple(kernels), str(path))
