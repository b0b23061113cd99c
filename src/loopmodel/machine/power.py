"""The chip power model of a machine: the machine file's ``power:`` section (pure data, no I/O).

ecm-model-slides.txt, "A simple power model for multicore chips" (lines 776-810): the power
of one chip with ``n`` active cores at clock ``f`` is

    W(n, f) = W0 + (W1·f + W2·f²)·n

(assumption 1: quadratic in f; assumption 2: the dynamic part linear in the active cores).
A file writes the coefficients with units (``W0: 23.6 W``, ``W1: 1.9 W/GHz``, ``W2: 1.2 W/GHz^2``),
the clocks the chip can run at (``clock range: [1.2 GHz, 2.7 GHz]``, ``clock step: 0.1 GHz``)
and where the numbers come from (``source``). A probe on a host where the clock cannot be set
measures at one clock only: then W1 and W2 cannot be separated, and the section holds W0 and
the power per active core at that clock (``per core: 7.1 W``, ``at clock: 2.2 GHz``) instead.
"""
from __future__ import annotations

from dataclasses import dataclass

import math



@dataclass(frozen=True)
class PowerSection:
    """Power-model coefficients of one chip (socket), base units.

    Attributes:
        w0: static (baseline) power W0 of the chip, W.
        w1, w2: dynamic power per active core, linear and quadratic in the clock: W/Hz and
            W/Hz². Both None where only ``per_core`` is known.
        per_core: dynamic power per active core at ``at_clock`` (W), where W1 and W2 are not
            known separately; None otherwise.
        at_clock: the clock of ``per_core``, Hz.
        clock_min, clock_max: the clock range the chip can be run at, Hz (None: not given).
        clock_step: the step between settable clocks, Hz (None: not given).
        source: where the numbers come from (citation, or the probe's description).
        notes: what the numbers can and cannot say.
    """
    w0: float
    w1: float | None = None
    w2: float | None = None
    per_core: float | None = None
    at_clock: float | None = None
    clock_min: float | None = None
    clock_max: float | None = None
    clock_step: float | None = None
    source: str = ""
    notes: tuple = ()

    def __post_init__(self):
        if not (math.isfinite(self.w0) and 0 <= self.w0 <= 1e5):
            raise ValueError("W0 must be a power of 0 .. 100000 W")
        for name, f in (("at clock", self.at_clock), ("clock range", self.clock_min), ("clock range", self.clock_max),
                        ("clock step", self.clock_step)):
            if f is not None and not 1e6 <= f <= 1e11:
                raise ValueError(f"'{name}': {f:g} Hz is outside the physical range 1 MHz .. 100 GHz")
        for name, w in (("W1", self.w1), ("W2", self.w2), ("per core", self.per_core)):
            if w is not None and not math.isfinite(w):
                raise ValueError(f"'{name}' must be finite")
        if (self.w1 is None) != (self.w2 is None):
            raise ValueError("give both W1 and W2 (W2 may be '0 W/GHz^2'), or 'per core' with 'at clock'")
        if self.w1 is None and (self.per_core is None or self.at_clock is None):
            raise ValueError("needs W1 and W2, or 'per core' with 'at clock'")
        if self.w1 is not None and self.per_core is not None:
            raise ValueError("give W1 and W2, or 'per core' with 'at clock', not both")
        if (self.per_core is None) != (self.at_clock is None):
            raise ValueError("'per core' and 'at clock' go together")
        if (self.clock_min is None) != (self.clock_max is None):
            raise ValueError("'clock range' needs two clocks [lowest, highest]")
        if self.clock_min is not None and self.clock_min > self.clock_max:
            raise ValueError("'clock range': the first clock must not exceed the second")
        for f in self.clocks_to_check():
            if not self.core_power(f) > 0:
                raise ValueError(f"W1·f + W2·f² must be positive: it is {self.core_power(f):.3g} W per core at "
                                 f"{f / 1e9:g} GHz")

    def clocks_to_check(self) -> tuple:
        """The clocks (Hz) at which the dynamic power per core must be positive."""
        return tuple(f for f in (self.clock_min, self.clock_max, self.at_clock) if f is not None)

    @property
    def separable(self) -> bool:
        """True when W1 and W2 are known (the model holds at any clock), False for ``per_core`` only."""
        return self.w1 is not None

    def core_power(self, clock_hz: float) -> float:
        """Dynamic power of one active core at ``clock_hz`` (W): W1·f + W2·f², or ``per_core``
        at ``at_clock``.

        Raises:
            ValueError: only ``per_core`` is known and ``clock_hz`` is another clock.
        """
        if self.w1 is not None:
            return self.w1 * clock_hz + self.w2 * clock_hz ** 2
        if not math.isclose(clock_hz, self.at_clock, rel_tol=1e-9):
            raise ValueError(f"the power per core is known at {self.at_clock / 1e9:g} GHz only "
                             "(W1 and W2 not separated)")
        return self.per_core
