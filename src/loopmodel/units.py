"""Quantities with explicit units, as written in machine files and printed in reports.

Machine files state units ("2.7 GHz", "32 KiB", "64 B/cy", "39.7 GB/s"); this
module parses them into plain floats in base units: Hz, bytes, B/cy, B/s.
Decimal prefixes (k, M, G) are powers of 1000, binary ones (Ki, Mi, Gi) of 1024.
Kerncraft's files write "kB" and "MB" for cache and data sizes; where a caller
asks for ``binary_decimal=True`` (sizes), we read those as powers of 1024 the way
those files mean them.
"""
from __future__ import annotations

import math
import re
from decimal import Decimal, ROUND_HALF_UP

_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
           "Ki": 1024.0, "Mi": 1024.0 ** 2, "Gi": 1024.0 ** 3, "Ti": 1024.0 ** 4}
_RE = r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z/]*)\s*$"

#: unit kind -> accepted unit suffixes (after the prefix)
KINDS = {
    "frequency": ("Hz",),
    "size": ("B",),
    "bandwidth_cy": ("B/cy", "B/c", "B/cycle"),
    "bandwidth_s": ("B/s",),
    "cycles": ("cy", "cycles", "cycle"),
}


class UnitError(ValueError):
    """A value without the expected unit; message is one line."""


def parse_quantity(value, kind: str, binary_decimal: bool = False) -> float:
    """Parse ``value`` (``"2.7 GHz"``, ``"32 KiB"``, ``"64 B/cy"``) into base units.

    Args:
        value: a string with number and unit; plain numbers are rejected so
            that every machine-file value states its unit.
        kind: one of :data:`KINDS`.
        binary_decimal: read ``kB``/``MB``/``GB`` as powers of 1024 (Kerncraft
            convention for sizes).

    Returns:
        float in Hz, bytes, B/cy, B/s or cycles.

    Raises:
        UnitError: malformed number, wrong unit, a negative or infinite value, or zero
            where zero makes no sense (every kind but ``cycles``: a zero clock,
            size or bandwidth would divide by zero in the models).
    """
    if isinstance(value, bool) or value is None:
        raise UnitError(f"expected a quantity in {KINDS[kind][0]}, got {value!r}")
    if isinstance(value, (int, float)):
        raise UnitError(f"'{value}' has no unit; write e.g. '{value} {_example(kind).split(' ', 1)[1]}'")
    m = re.match(_RE, str(value))
    if not m:
        raise UnitError(f"cannot read quantity '{value}' (expected e.g. '{_example(kind)}')")
    number, unit = float(m.group(1)), m.group(2)
    if number < 0 or (number == 0 and kind != "cycles"):
        raise UnitError(f"'{value}' must be {'positive' if kind != 'cycles' else 'zero or positive'}")
    for suffix in KINDS[kind]:
        if unit.endswith(suffix):
            prefix = unit[: -len(suffix)]
            if prefix in _PREFIX:
                factor = _PREFIX[prefix]
                if binary_decimal and prefix in ("k", "K", "M", "G", "T"):
                    factor = {"k": 1024.0, "K": 1024.0, "M": 1024.0 ** 2, "G": 1024.0 ** 3, "T": 1024.0 ** 4}[prefix]
                if not math.isfinite(number * factor):
                    raise UnitError(f"'{value}' is too large")
                return number * factor
    raise UnitError(f"'{value}' has unit '{unit or '(none)'}', expected {' or '.join(KINDS[kind])} (e.g. '{_example(kind)}')")


def _example(kind: str) -> str:
    return {"frequency": "2.7 GHz", "size": "32 KiB", "bandwidth_cy": "32 B/cy",
            "bandwidth_s": "39.7 GB/s", "cycles": "2 cy"}[kind]


def format_bytes(n: float) -> str:
    for unit, f in (("GiB", 1024.0 ** 3), ("MiB", 1024.0 ** 2), ("KiB", 1024.0)):
        if n >= f and (n / f) == int(n / f):
            return f"{int(n / f)} {unit}"
        if n >= f:
            return f"{n / f:.2f} {unit}"
    return f"{n:g} B"


def format_fixed(value: float, digits: int) -> str:
    """``value`` with ``digits`` decimals, rounded half up (away from zero) from its shortest
    decimal form (``repr``, what JSON prints): 2.25 -> ``"2.3"`` at one decimal, as a reader
    rounds the JSON's 2.25 (``f"{2.25:.1f}"`` gives ``"2.2"``: the binary value is exactly
    2.25 and Python rounds half to even). Not finite: as ``str`` gives it (``inf``, ``nan``)."""
    if not math.isfinite(value):
        return str(float(value))
    return f"{Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP):f}"


def format_si(value: float, unit: str) -> str:
    """``12.3e9, 'FLOP/s'`` -> ``'12.30 GFLOP/s'`` (two decimals rounded half up, :func:`format_fixed`)."""
    for prefix, f in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= f:
            return f"{format_fixed(value / f, 2)} {prefix}{unit}"
    return f"{format_fixed(value, 2)} {unit}"


_POWER_RE = r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([mk]?)W\s*(?:/\s*([kMG]?)Hz\s*(\^\s*2|²)?)?\s*$"
_POWER_PREFIX = {"": 1.0, "m": 1e-3, "k": 1e3}
_POWER_UNITS = ("W", "W/GHz", "W/GHz^2")


def parse_power(value, order: int = 0) -> float:
    """Parse a power or a coefficient of the power model in the clock frequency:
    ``"23.6 W"`` (``order`` 0, W), ``"1.9 W/GHz"`` (1, W/Hz), ``"1.2 W/GHz^2"`` (2, W/Hz^2;
    ``W/GHz²`` too). Prefixes: mW, kW; Hz, kHz, MHz, GHz.

    Returns:
        float in W, W/Hz or W/Hz^2 (base units). Order 0 must be >= 0; the coefficients of
        order 1 and 2 may be negative (a fitted polynomial), not their sum at a clock.

    Raises:
        UnitError: not a number with the unit of ``order`` (one line).
    """
    want = _POWER_UNITS[order]
    example = ("23.6 W", "1.9 W/GHz", "1.2 W/GHz^2")[order]
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)) \
            or re.fullmatch(r"\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*", str(value)):
        raise UnitError(f"'{value}' has no unit; write e.g. '{example}'")
    m = re.match(_POWER_RE, str(value))
    got = 0 if m and m.group(3) is None else 2 if m and m.group(4) else 1
    if not m or got != order:
        raise UnitError(f"cannot read '{value}' as a quantity in {want} (e.g. '{example}')")
    number = float(m.group(1)) * _POWER_PREFIX[m.group(2)]
    if order == 0 and number < 0:
        raise UnitError(f"'{value}' must be zero or positive")
    if order:
        number /= _PREFIX[m.group(3)] ** order
    return number
