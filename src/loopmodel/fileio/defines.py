"""``-D`` size definitions: single values and ranges (sweeps).

Accepted forms (one ``-D`` each):

* ``N=1000`` and Kerncraft's two-token ``-D N 1000``;
* ``N=100:2000:100`` — start:stop:step, stop included when the steps reach it;
  ``N=10000:10:-50`` — a negative step counts down (10000, 9950, ..., 50);
* Kerncraft's ``N=100-2000`` / ``100-2000:20`` (20 points, linear) /
  ``10-10000:4log10`` (4 points, logarithmic in base 10).
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence

from ..errors import DefineError

_NAME = re.compile(r"^[A-Za-z_]\w*$")


def define_name(text: str) -> str:
    """The name a ``-D`` text gives (``N`` of ``N=1000``, of ``N`` alone), unchecked."""
    return text.split("=", 1)[0].strip()


def is_name(text: str) -> bool:
    """Whether ``text`` is a C identifier (a ``-D`` without a value: a preprocessor macro)."""
    return bool(_NAME.match(text))


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


#: The largest size, step, point count or log base a ``-D`` value may give: 2**62. Sizes
#: stay signed 64-bit integers with room for the small offsets of loop bounds (``N+1``), and
#: no float conversion of a size overflows; whether the arrays of a point fit a 64-bit address
#: space is checked per point (:meth:`loopmodel.ir.kernel.Kernel.check_point`).
MAX_SIZE = 2 ** 62
#: The most values :func:`parse_define` lists, and the most sizes one constant given by several
#: ``-D`` collects: lists of sizes are held in memory; a single range stays lazy at any length.
MAX_LISTED = 10 ** 6
_DIGITS = re.compile(r"[+-]?[0-9]+")


def size_problem(value: int) -> str | None:
    """What is wrong with ``value`` as a size (as for ``-D``): not positive, or above
    :data:`MAX_SIZE`; None for a valid size."""
    if value < 1:
        return "sizes must be positive integers"
    if value > MAX_SIZE:
        return f"{_short(str(value))} is larger than 2**62 = {MAX_SIZE}, the largest size"
    return None


def parse_define_lazy(text: str) -> tuple:
    """Parse one ``NAME=SPEC``; returns ``(name, values)``: ``values`` is a sequence of distinct
    sizes (``range``, ascending or, with a negative step, descending; :class:`LinearPoints`,
    :class:`LogPoints`, ascending; or a one-element list) with ``len``, indexing and iteration,
    holding no list of its sizes.

    Raises:
        DefineError: malformed name or value, or a size above :data:`MAX_SIZE` (one line).
    """
    if "=" not in text:
        raise DefineError(f"-D {_short(text)}: expected NAME=VALUE (e.g. -D N=1000)")
    name, spec = (s.strip() for s in text.split("=", 1))
    if not _NAME.match(name):
        raise DefineError(f"-D {_short(text)}: '{_short(name)}' is not a valid constant name")
    return name, _values(name, spec)


def _short(text: str) -> str:
    """``text`` for a message: a very long value shows its start and its length."""
    return text if len(text) <= 40 else f"{text[:24]}... ({len(text)} characters)"


def _int(name, s, spec=None):
    """A positive size (or step, count, base) of at most :data:`MAX_SIZE`, in ASCII digits."""
    spec = _short(s if spec is None else spec)
    t = s.strip()
    if not _DIGITS.fullmatch(t):
        hint = " (only the ASCII digits 0-9)" if not t.isascii() else ""
        raise DefineError(f"-D {name}={spec}: '{_short(s)}' is not an integer{hint}")
    digits = t.lstrip("+-").lstrip("0")
    if t.startswith("-") and digits or not digits:
        raise DefineError(f"-D {name}={spec}: sizes and steps must be positive integers")
    if len(digits) > len(str(MAX_SIZE)) or int(digits) > MAX_SIZE:
        raise DefineError(f"-D {name}={spec}: {_short(digits)} is larger than 2**62 = {MAX_SIZE}, the largest size")
    return int(digits)


def _values(name, spec):
    if not spec:
        raise DefineError(f"-D {name}=: missing value")
    parts = spec.split(":")
    if len(parts) > 1 and "-" not in parts[0] + parts[1]:
        return _range(name, spec, parts)
    m = re.match(r"^([0-9]+)-([0-9]+)(?::([0-9]+)(log([0-9]*))?)?$", spec)
    if m:
        return _kerncraft_range(name, spec, m)
    return [_int(name, spec)]


def _range(name: str, spec: str, parts: list) -> range:
    """``start:stop[:step]``, stop included where the steps reach it; a negative step counts
    down from ``start`` to ``stop``.

    Raises:
        DefineError: not two or three parts, a zero step, or a range without sizes (stop below
            start with a positive step, above it with a negative one), naming the fix.
    """
    if len(parts) not in (2, 3):
        raise DefineError(f"-D {name}={_short(spec)}: range must be start:stop[:step]")
    start, stop = _int(name, parts[0], spec), _int(name, parts[1], spec)
    text = parts[2].strip() if len(parts) == 3 else "1"
    if _DIGITS.fullmatch(text) and not text.lstrip("+-").strip("0"):
        raise DefineError(f"-D {name}={_short(spec)}: the step is zero (give e.g. {start}:{stop}:1, or a negative "
                          f"step to count down)")
    negative = text.startswith("-")
    step = _int(name, text[1:] if negative else text, spec)
    if negative and stop > start:
        raise DefineError(f"-D {name}={_short(spec)}: no sizes: a negative step counts down, and stop {stop} is "
                          f"above start {start} (write {stop}:{start}:-{step} or {start}:{stop}:{step})")
    if not negative and stop < start:
        raise DefineError(f"-D {name}={_short(spec)}: no sizes: stop {stop} is below start {start} (write "
                          f"{stop}:{start}:{step}, or {start}:{stop}:-{step} to count down)")
    return range(start, stop - 1, -step) if negative else range(start, stop + 1, step)


def _kerncraft_range(name: str, spec: str, m):
    """Kerncraft's ``start-stop``, ``start-stop:count`` and ``start-stop:count log base``."""
    start, stop = _int(name, m.group(1), spec), _int(name, m.group(2), spec)
    if stop < start:
        raise DefineError(f"-D {name}={spec}: stop {stop} is below start {start}")
    if not m.group(3):
        return range(start, stop + 1)
    if not m.group(3).strip("0"):
        raise DefineError(f"-D {name}={spec}: number of points must be >= 1")
    num = _int(name, m.group(3), spec)
    if num == 1:
        return [start]
    if not m.group(4):
        return LinearPoints(start, stop, num)
    if m.group(5) and m.group(5).lstrip("0") in ("", "1"):
        raise DefineError(f"-D {name}={spec}: the base of the logarithm must be at least 2")
    base = _int(name, m.group(5), spec) if m.group(5) else 10
    points = LogPoints(start, stop, num, base)
    if points.middle is None:
        raise DefineError(f"-D {name}={spec}: too many logarithmic points to list near {points.threshold:.3g}, "
                          "where they lie closer than one apart; give fewer points")
    return points


class _Points(Sequence):
    """An ascending sequence of distinct sizes, computed on demand from an index."""

    def __getitem__(self, index):
        if not isinstance(index, int):
            raise TypeError(f"{type(self).__name__} indices must be integers")
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(index)
        return self._at(index)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(str, self._args))})"


class LinearPoints(_Points):
    """Kerncraft's ``start-stop:count``: ``count`` sizes evenly spaced from ``start`` to ``stop``,
    each rounded to the nearest integer (a half to the even one, as Python's ``round``),
    duplicates dropped, ascending; lazy (O(1) memory and time per point).

    Point ``k`` (0-based) is ``round(start + (stop - start) * k / (count - 1))``, computed in
    integers. Where ``count - 1 > stop - start`` the points lie less than one apart and, rounded,
    give every integer from ``start`` to ``stop`` once (``len`` is then ``stop - start + 1``);
    otherwise they are ``count`` distinct sizes.

    Args:
        start, stop: positive ints, ``start <= stop``; count: int >= 2.
    """

    def __init__(self, start: int, stop: int, count: int):
        self._args = (start, stop, count)
        self.start, self.span, self.gaps = start, stop - start, count - 1
        self.dense = self.gaps > self.span

    def __len__(self) -> int:
        return self.span + 1 if self.dense else self.gaps + 1

    def _at(self, k: int) -> int:
        if self.dense:
            return self.start + k
        q, r = divmod(self.start * self.gaps + self.span * k, self.gaps)
        return q + (2 * r > self.gaps or (2 * r == self.gaps and q % 2 == 1))


class LogPoints(_Points):
    """Kerncraft's ``start-stop:count log base``: ``count`` sizes spaced evenly in
    ``log_base``, point ``k`` being ``round(base ** (lo + (hi - lo) * k / (count - 1)))`` with
    ``lo, hi = log(start, base), log(stop, base)`` (floats, as Kerncraft's) and kept within
    ``start .. stop``, duplicates dropped, ascending; lazy.

    The exact points grow by the factor ``r = (stop / start) ** (1 / (count - 1))``, so the
    distance between neighbours, ``x (r - 1)``, grows with ``x``: below the threshold
    ``x = 1 / (r - 1)`` neighbours lie less than one apart and the rounded points are every
    integer (a :class:`range`); above it each point is distinct. The points within a relative
    margin of :data:`MARGIN` around the threshold are listed (where rounding may go either way).

    Attributes:
        middle: the sorted distinct points near the threshold, or None where they would be
            more than :data:`MAX_MIDDLE` (the points cannot be listed).
        threshold: ``1 / (r - 1)``, where neighbours lie one apart (inf for one point).
    """

    MARGIN = 1e-6
    MAX_MIDDLE = 4096

    def __init__(self, start: int, stop: int, count: int, base: int):
        self._args = (start, stop, count, base)
        self.start, self.stop, self.count, self.base = start, stop, count, float(base)
        self.lo, self.hi = math.log(start, self.base), math.log(stop, self.base)
        ln_r = (math.log(stop) - math.log(start)) / (count - 1)
        self.threshold = 1 / math.expm1(ln_r) if ln_r > 0 else math.inf

        last = count - 1

        def index_of_step(step: float) -> float:
            """The index whose exact step to the next point is ``step`` (at most ``last``)."""
            if ln_r == 0 or step * self.threshold / start > math.exp(ln_r * last):
                return last
            return math.log(step * self.threshold / start) / ln_r if step * self.threshold > start else 0.0

        self.lo_k = min(last, math.floor(index_of_step(1 - self.MARGIN)))
        self.hi_k = min(last, math.ceil(index_of_step(1 + self.MARGIN)) + 1)
        self.middle = None
        if self.hi_k - self.lo_k <= self.MAX_MIDDLE:
            self.middle = sorted({self._point(k) for k in range(self.lo_k, self.hi_k + 1)})
            self.first, self.dense = self._point(0), self._point(self.lo_k) - self._point(0)

    def _point(self, k: int) -> int:
        x = round(self.base ** (self.lo + (self.hi - self.lo) * k / (self.count - 1)))
        return min(self.stop, max(self.start, x))  # float rounding may step past an end

    def __len__(self) -> int:
        return self.dense + len(self.middle) + self.count - 1 - self.hi_k

    def _at(self, i: int) -> int:
        if i < self.dense:
            return self.first + i
        i -= self.dense
        if i < len(self.middle):
            return self.middle[i]
        return self._point(self.hi_k + 1 + i - len(self.middle))


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
        positive, so that maximises the product of the sizes; a range is monotonic, so the
        larger of its ends)."""
        d = dict(self.base)
        d.update({n: max(seq) if isinstance(seq, list) else max(seq[0], seq[-1]) for n, seq in self.values.items()})
        return d


def sweep(define_texts: list, defaults: dict | None = None) -> Sweep:
    """The lazy cartesian product of the given defines (see :class:`Sweep`).

    ``defaults`` (from ``#define`` in the kernel) fill constants not given; a constant given
    several times takes all their values, in order, each once (``-D N=100 -D N=200`` is a
    sweep of two points, as in Kerncraft); its values are then listed, at most :data:`MAX_LISTED`.

    Raises:
        DefineError: a malformed ``-D``, or more than :data:`MAX_LISTED` sizes of a constant
            given several times (one line).
    """
    specs = {}
    for t in define_texts or []:
        name, vals = parse_define_lazy(t)
        if name in specs:
            if len(specs[name]) + len(vals) > MAX_LISTED:
                raise DefineError(f"-D {name} given several times with more than {MAX_LISTED} sizes in all; "
                                  "give one range")
            vals = list(dict.fromkeys([*specs[name], *vals]))
        specs[name] = vals
    return Sweep(specs, dict(defaults or {}))


def one_point(points, command: str) -> dict:
    """The only point of a ``-D`` expansion (a :class:`Sweep` or a list) for a command that
    takes one value per size constant.

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
