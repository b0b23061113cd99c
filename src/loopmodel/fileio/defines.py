"""``-D`` size definitions: single values and ranges (sweeps).

Accepted forms (one ``-D`` each):

* ``N=1000`` and Kerncraft's two-token ``-D N 1000``;
* ``N=100:2000:100`` — start:stop:step, stop included;
* Kerncraft's ``N=100-2000`` / ``100-2000:20`` (20 points, linear) /
  ``10-10000:4log10`` (4 points, logarithmic in base 10).
"""
from __future__ import annotations

import math
import re

from ..errors import DefineError

_NAME = re.compile(r"^[A-Za-z_]\w*$")


def normalize_argv(argv: list) -> list:
    """Turn Kerncraft's ``-D NAME VALUE`` / ``--define NAME VALUE`` into ``-D NAME=VALUE`` before argparse."""
    out = []
    i = 0
    while i < len(argv):
        a = argv[i]
        # the value must start with a digit so that '-D N --json' is not read as N=--json
        if a in ("-D", "--define") and i + 2 < len(argv) and "=" not in argv[i + 1] \
                and _NAME.match(argv[i + 1]) and re.match(r"^\d[\d.:\-a-z]*$", argv[i + 2]):
            out += [a, f"{argv[i + 1]}={argv[i + 2]}"]
            i += 3
            continue
        out.append(a)
        i += 1
    return out


def parse_define(text: str) -> tuple:
    """Parse one ``NAME=SPEC``; returns ``(name, [values...])``.

    Raises:
        DefineError: malformed name or value (one-line message).
    """
    name, values = _parse_lazy(text)
    return name, list(values)


def _parse_lazy(text: str) -> tuple:
    """Like :func:`parse_define`, but ranges stay ``range`` objects (no list of a million sizes)."""
    if "=" not in text:
        raise DefineError(f"-D {text}: expected NAME=VALUE (e.g. -D N=1000)")
    name, spec = (s.strip() for s in text.split("=", 1))
    if not _NAME.match(name):
        raise DefineError(f"-D {text}: '{name}' is not a valid constant name")
    return name, _values(name, spec)


def _int(name, s, spec=None):
    spec = s if spec is None else spec
    try:
        v = int(s)
    except ValueError:
        raise DefineError(f"-D {name}={spec}: '{s}' is not an integer") from None
    if v <= 0:
        raise DefineError(f"-D {name}={spec}: sizes and steps must be positive integers")
    return v


def _values(name, spec):
    if not spec:
        raise DefineError(f"-D {name}=: missing value")
    if ":" in spec and "-" not in spec:
        parts = spec.split(":")
        if len(parts) not in (2, 3):
            raise DefineError(f"-D {name}={spec}: range must be start:stop[:step]")
        start, stop = _int(name, parts[0], spec), _int(name, parts[1], spec)
        step = _int(name, parts[2], spec) if len(parts) == 3 else 1
        if stop < start:
            raise DefineError(f"-D {name}={spec}: stop {stop} is below start {start}")
        return range(start, stop + 1, step)
    m = re.match(r"^(\d+)-(\d+)(?::(\d+)(log(\d*))?)?$", spec)
    if m:
        start, stop = _int(name, m.group(1), spec), _int(name, m.group(2), spec)
        if stop < start:
            raise DefineError(f"-D {name}={spec}: stop {stop} is below start {start}")
        num = int(m.group(3)) if m.group(3) else None
        if num is None:
            return range(start, stop + 1)
        if num < 1:
            raise DefineError(f"-D {name}={spec}: number of points must be >= 1")
        if num == 1:
            return [start]
        if m.group(4):
            base = float(m.group(5) or 10)
            lo, hi = math.log(start, base), math.log(stop, base)
            vals = [round(base ** (lo + (hi - lo) * k / (num - 1))) for k in range(num)]
        else:
            vals = [round(start + (stop - start) * k / (num - 1)) for k in range(num)]
        return sorted(set(vals))
    return [_int(name, spec)]


class Sweep:
    """The size points of ``-D`` options, generated lazily (cartesian product, last name fastest).

    Ranges are kept as ``range`` objects and each point is built on demand, so a sweep of
    a million sizes holds no list of its points: memory per point, not per sweep.

    Attributes:
        base: ``#define`` defaults of the kernel (constant -> int), overridden by ``-D``.
        values: constant -> sequence of sizes (``range`` or a short list), in ``-D`` order.
    """

    def __init__(self, values: dict, base: dict):
        self.values = values
        self.base = base

    def __len__(self) -> int:
        n = 1
        for seq in self.values.values():
            n *= len(seq)
        return n

    def names(self) -> set:
        """Every constant that gets a value (defaults and ``-D``)."""
        return set(self.base) | set(self.values)

    def __getitem__(self, index: int) -> dict:
        """Point number ``index`` (0-based, same order as iteration)."""
        if not 0 <= index < len(self):
            raise IndexError(index)
        combo = []
        for seq in reversed(list(self.values.values())):
            index, k = divmod(index, len(seq))
            combo.append(seq[k])
        d = dict(self.base)
        d.update(zip(self.values, reversed(combo)))
        return d

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def largest(self) -> dict:
        """The point with the largest problem: every size at its maximum (all sizes are
        positive, so that maximises the product of the sizes; ranges ascend, so their last)."""
        d = dict(self.base)
        d.update({n: seq[-1] if isinstance(seq, range) else max(seq) for n, seq in self.values.items()})
        return d


def sweep(define_texts: list, defaults: dict | None = None) -> Sweep:
    """The lazy cartesian product of the given defines (see :class:`Sweep`).

    ``defaults`` (from ``#define`` in the kernel) fill constants not given; a constant given
    several times takes all their values, in order, each once (``-D N=100 -D N=200`` is a
    sweep of two points, as in Kerncraft).

    Raises:
        DefineError: a malformed ``-D`` (one line).
    """
    specs = {}
    for t in define_texts or []:
        name, vals = _parse_lazy(t)
        specs[name] = list(dict.fromkeys([*specs[name], *vals])) if name in specs else vals
    return Sweep(specs, dict(defaults or {}))


def expand(define_texts: list, defaults: dict | None = None) -> list:
    """All combinations of the given defines (cartesian product), as a list of dicts.

    ``defaults`` (from ``#define`` in the kernel) fill constants not given. For long
    sweeps iterate :func:`sweep` instead (no list).
    """
    return list(sweep(define_texts, defaults))


def one_point(points: list, command: str) -> dict:
    """The only point of a ``-D`` expansion for a command that takes one value per size
    constant.

    Raises:
        DefineError: several points (a range was given), naming ``command``.
    """
    if len(points) != 1:
        raise DefineError(f"{command} takes one value per size constant, not a range")
    return points[0]


def count_list(text: str, option: str) -> list:
    """``'1:4'`` -> [1, 2, 3, 4]; ``'1:8:2'`` -> [1, 3, 5, 7]; ``'1,2,4'``; ``'3'`` (core or
    thread counts of ``--cores`` / ``--threads``). Duplicates are dropped, the order is kept.

    Raises:
        DefineError: unreadable or empty list (one line naming ``option``).
    """
    t = text.strip()
    bad = DefineError(f"{option}: cannot read '{text}' (expected e.g. 1:4, 1:8:2, 1,2,4 or 2)")
    try:
        if ":" in t:
            parts = [int(p) for p in t.split(":")]
            if len(parts) == 2:
                parts.append(1)
            if len(parts) != 3 or parts[2] < 1:
                raise bad
            values = list(range(parts[0], parts[1] + 1, parts[2]))
        else:
            values = [int(p) for p in t.split(",")]
    except ValueError:
        raise bad from None
    if not values:
        raise DefineError(f"{option}: '{text}' is an empty range")
    return list(dict.fromkeys(values))
