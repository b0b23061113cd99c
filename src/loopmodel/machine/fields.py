"""Field conversions of the machine model: machine-file values to base units (pure, no I/O).

Each field of :mod:`loopmodel.machine.model` that a machine file writes with a unit
("2.7 GHz", "32 KiB", "32 B/cy", "63.4 GB/s", "4 cy") or as a table (throughputs,
benchmark measurements) names its conversion here with a :class:`Convert` marker in
its ``Annotated`` type. The conversions are plain functions: they take the YAML value
and return the value in base units (Hz, bytes, B/cy, B/s, cycles), or raise
``ValueError`` with a one-line message. :mod:`loopmodel.fileio.machine_schema`
validates a machine file against the dataclasses with pydantic, which runs these
conversions before its type checks (the markers give pydantic its validation hooks through
``pydantic_core.core_schema``; the models themselves never call pydantic). The bounds
:class:`Gt`, :class:`Ge` and :class:`Le` stand for annotated_types' constraints of the same
names, which pydantic applies as its own.

pydantic_core and annotated_types are loaded only when pydantic builds a validator
(:func:`schema_modules`): a machine model read back from the per-user cache
(:mod:`loopmodel.cache`) needs neither, so an analysis of an unchanged machine file does not
import them (benchmarks/import_time.py).
"""
from __future__ import annotations

import importlib
from typing import Annotated

from ..units import UnitError, parse_power, parse_quantity
from .coherence import CoherenceTable
from .power import PowerSection


#: operation types of the in-core model (cross-architecture-machine-models.txt §3.3)
OPS = ("ADD", "MUL", "FMA", "DIV", "SQRT", "EXP", "LOG", "POW", "FABS", "FMIN", "FMAX")


class Convert:
    """``Annotated`` marker: convert the raw value with ``fn`` before the type is checked.

    Args:
        fn: one-argument function returning the converted value; raises ``ValueError``
            (one line) for a value it cannot convert.
    """

    def __init__(self, fn):
        self.fn = fn

    def __repr__(self) -> str:
        return f"Convert({self.fn.__name__})"

    def __get_pydantic_core_schema__(self, source, handler):
        """Pydantic hook: run ``fn`` before the schema of the annotated type."""
        return schema_modules()[0].no_info_before_validator_function(self.fn, handler(source))


def schema_modules() -> tuple:
    """``(pydantic_core.core_schema, annotated_types)``, loaded here when pydantic asks a marker
    of this module for its schema (validating a machine file, :mod:`loopmodel.fileio.machine_schema`),
    not when the machine model is imported: a model read from the cache needs neither."""
    return importlib.import_module("pydantic_core.core_schema"), importlib.import_module("annotated_types")


class _Bound:
    """``Annotated`` marker: a bound of a number, validated by pydantic exactly as annotated_types'
    constraint of the subclass's name (``Gt(0)``: > 0, ``Ge(0)``: >= 0, ``Le(64)``: <= 64); the
    bound is the attribute of that constraint's name (``gt``, ``ge``, ``le``)."""

    def __init__(self, bound):
        setattr(self, type(self).__name__.lower(), bound)

    def __repr__(self) -> str:
        name = type(self).__name__
        return f"{name}({getattr(self, name.lower())!r})"

    def __get_pydantic_core_schema__(self, source, handler):
        """Pydantic hook: the schema of ``source`` with annotated_types' constraint of this name."""
        name = type(self).__name__
        constraint = getattr(schema_modules()[1], name)(getattr(self, name.lower()))
        return handler(Annotated[source, constraint])


class Gt(_Bound):
    """The value is greater than ``gt`` (annotated_types.Gt)."""


class Ge(_Bound):
    """The value is at least ``ge`` (annotated_types.Ge)."""


class Le(_Bound):
    """The value is at most ``le`` (annotated_types.Le)."""


class Range:
    """``Annotated`` marker: the value, in base units (after any :class:`Convert`), must lie in
    the physical range ``lo .. hi`` (``lo`` excluded where ``open_low``); None passes.

    The ranges are generous limits of real hardware, there to refuse a typo or a hostile value
    (``1e300 GHz``, ``1e-300 B/cy``) that would make the models divide by zero, overflow or
    print a confident figure for no machine; they are listed in the machine-file reference.

    Args:
        lo, hi: the bounds, in ``unit``; unit: the base unit for messages (``Hz``, ``B``, ...);
        text: the range as messages and the reference write it, if not ``lo .. hi unit``.
    """

    def __init__(self, lo: float, hi: float, unit: str = "", open_low: bool = False, text: str = ""):
        self.lo, self.hi, self.unit, self.open_low, self.text = lo, hi, unit, open_low, text

    def __str__(self) -> str:
        if self.text:
            return self.text
        unit = f" {self.unit}" if self.unit else ""
        if self.open_low:
            return f"> {self.lo:g} and <= {self.hi:g}{unit}"
        return f"{self.lo:g} .. {self.hi:g}{unit}"

    def __repr__(self) -> str:
        return f"Range({self})"

    def check(self, v):
        """``v`` if it lies in the range (or is None).

        Raises:
            ValueError: outside the range (one line, with the range).
        """
        if v is None:
            return v
        low_ok = v > self.lo if self.open_low else v >= self.lo
        if not (low_ok and v <= self.hi):
            unit = f" {self.unit}" if self.unit else ""
            raise ValueError(f"{v:g}{unit} is outside the physical range {self}")
        return v

    def __get_pydantic_core_schema__(self, source, handler):
        """Pydantic hook: check the range after the annotated type's own validation."""
        return schema_modules()[0].no_info_after_validator_function(self.check, handler(source))


#: physical ranges of the machine model's quantities (base units), shared by the fields and
#: the tables the conversions read (throughputs, measured bandwidths)
CLOCK = Range(1e6, 1e11, "Hz", text="1 MHz .. 100 GHz")
BANDWIDTH_CY = Range(1e-3, 1e5, "B/cy")         # per cycle, any level
BANDWIDTH_S = Range(1e3, 1e16, "B/s", text="1 kB/s .. 10 PB/s")  # the same at 1 MHz .. 100 GHz
THROUGHPUT = Range(1e-4, 64, "instructions/cy")     # a divider: 1/16 .. 1/32 per cy
LATENCY = Range(0, 1e4, "cy")
#: a latency the probe measured (by width, store-to-load forwarding): a chain of instructions
#: takes some time, and none of a core's takes a thousand cycles
MEASURED_LATENCY = Range(0, 1000, "cy", open_low=True)
#: a throughput the probe measured by width (instructions per cy)
MEASURED_THROUGHPUT = Range(0, 64, "instructions/cy", open_low=True)
REMAINDER_RATIO = Range(0, 64)                  # a remainder iteration's cost / a full pass's
PENALTY = Range(0, 1e6, "cy")
CACHE_SIZE = Range(1, 2.0 ** 40, "B", text="1 B .. 1 TiB")
LINE_SIZE = Range(8, 4096, "B")
SIMD_WIDTH = Range(4, 1024, "B")
COUNT = Range(1, 4096)                          # cores, groups, sharers
FLOPS = Range(1e-3, 4096, "FLOP/cy")


def quantity(kind: str):
    """A conversion of ``"value unit"`` strings of ``kind`` (see :data:`loopmodel.units.KINDS`) to a float."""
    def conv(v):
        try:
            return parse_quantity(v, kind)
        except UnitError as exc:
            raise ValueError(str(exc)) from None
    conv.__name__ = f"quantity_{kind}"
    return conv


def optional_size(v):
    """A cache size in bytes, or None (the ``MEM`` level has no size)."""
    return None if v is None else quantity("size")(v)


def penalty(v):
    """A latency penalty in cycles (cy per cache line); a plain ``0`` needs no unit."""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0:
        return float(v)
    return quantity("cycles")(v)


def _known_op(op) -> None:
    if op not in OPS:
        raise ValueError(f"unknown operation type '{op}' (known: {', '.join(OPS)})")


def throughputs(v):
    """``{op: instructions per cycle}`` with known operation types and numbers in :data:`THROUGHPUT`."""
    if not isinstance(v, dict):
        return v
    out = {}
    for op, val in v.items():
        _known_op(op)
        if isinstance(val, bool) or not isinstance(val, (int, float)) or val < 0:
            raise ValueError(f"throughput of {op} must be a number >= 0 (instructions per cycle)")
        out[op] = _in_range(THROUGHPUT, float(val), f"throughput of {op}")
    return out


def _in_range(rng: Range, value: float, what: str) -> float:
    try:
        return rng.check(value)
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None


def latencies(v):
    """``{op: cycles}`` with known operation types; values are numbers or ``"4 cy"``, in :data:`LATENCY`."""
    if not isinstance(v, dict):
        return v
    out = {}
    for op, val in v.items():
        _known_op(op)
        if isinstance(val, bool):
            raise ValueError(f"latency of {op} must be a number of cycles")
        cy = quantity("cycles")(val) if not isinstance(val, (int, float)) else float(val)
        out[op] = _in_range(LATENCY, cy, f"latency of {op}")
    return out


#: register widths (B) an in-core figure by width may be given for
WIDTHS = (4, 8, 16, 32, 64)


def _by_width(v, what: str, check):
    """``{op: {width in B: value}}`` with known operation types, widths in :data:`WIDTHS` (YAML
    keys may be strings) and each value through ``check(value, name)``."""
    if not isinstance(v, dict):
        return v
    out = {}
    for op, row in v.items():
        _known_op(op)
        if not isinstance(row, dict):
            raise ValueError(f"{what} of {op} must map register widths in B to numbers")
        out[op] = {}
        for w, val in row.items():
            try:
                width = int(w)
            except (TypeError, ValueError):
                width = None
            if isinstance(w, bool) or width not in WIDTHS:
                raise ValueError(f"{what} of {op}: width {w!r} is not one of {', '.join(map(str, WIDTHS))} B")
            out[op][width] = check(val, f"{what} of {op} at {width} B")
    return out


def _latency_value(val, name: str) -> float:
    if isinstance(val, bool) or not isinstance(val, (int, float)):
        raise ValueError(f"{name} must be a number of cycles")
    return _in_range(MEASURED_LATENCY, float(val), name)


def _throughput_value(val, name: str) -> float:
    if isinstance(val, bool) or not isinstance(val, (int, float)):
        raise ValueError(f"{name} must be a number (instructions per cycle)")
    return _in_range(MEASURED_THROUGHPUT, float(val), name)


def latencies_by_width(v):
    """``in_core.latency_by_width``: ``{op: {width in B: cy}}`` (measured by ``machine probe``)."""
    return _by_width(v, "latency", _latency_value)


def throughputs_by_width(v):
    """``in_core.throughput_by_width``: ``{op: {width in B: instructions per cy}}`` (measured by
    ``machine probe``)."""
    return _by_width(v, "throughput", _throughput_value)


def port_groups(v):
    """A list of lists of operation types sharing execution ports (``in_core.port_groups``)."""
    return _operation_groups(v, "port group")


def shared_units(v):
    """A list of lists of operation types executed by one shared unit, such as ``[[DIV, SQRT]]``
    for a divider that divisions and square roots share (``in_core.shared_units``; their
    times add up as a port group's do, cross-architecture-machine-models.txt §3.4.1 eq. 2)."""
    return _operation_groups(v, "shared unit")


def _operation_groups(v, what: str):
    if not isinstance(v, list):
        return v
    for g in v:
        if not isinstance(g, list) or any(op not in OPS for op in g):
            raise ValueError(f"{what} {g!r} must be a list of operation types ({', '.join(OPS)})")
    return v


def level_pair(v):
    """``[upper, lower]`` level names of a link, as a tuple."""
    if not isinstance(v, (list, tuple)) or len(v) != 2 or not all(isinstance(x, str) for x in v):
        raise ValueError("must name two levels, e.g. [L1, L2]")
    return tuple(v)


def hierarchy(v):
    """The memory hierarchy list: at least one cache level and ``MEM``."""
    if not isinstance(v, list) or len(v) < 2:
        raise ValueError("must list the cache levels and MEM, closest to the core first")
    return v


def link_bandwidths(v):
    """One bandwidth or ``[toward core, away from core]`` as ``(value, unit)`` pairs.

    Each item is ``"32 B/cy"`` (unit ``B/cy``), ``"40 GB/s"`` (unit ``B/s``: converted to
    B/cy with the clock when the model is evaluated, so that a clock override does not
    scale it) or ``measured`` (value None: the saturated bandwidth from the benchmarks).

    Raises:
        ValueError: not one or two values, a value without a bandwidth unit, or outside
            :data:`BANDWIDTH_CY` / :data:`BANDWIDTH_S`.
    """
    vals = list(v) if isinstance(v, (list, tuple)) else [v]
    if not 1 <= len(vals) <= 2:
        raise ValueError("give one bandwidth (half-duplex) or two [toward core, away from core]")
    out = []
    for x in vals:
        if isinstance(x, dict) and set(x) == {"value", "unit"}:  # already converted
            out.append(x)
        elif x == "measured":
            out.append({"value": None, "unit": "measured"})
        else:
            per_s = str(x).rstrip().endswith("/s")
            value = quantity("bandwidth_s" if per_s else "bandwidth_cy")(x)
            rng = BANDWIDTH_S if per_s else BANDWIDTH_CY
            out.append({"value": rng.check(value), "unit": "B/s" if per_s else "B/cy"})
    return tuple(out)


def benchmark_tables(v):
    """``benchmarks``: each measurement table to ``{cores: [...], bandwidths: {kernel: [B/s, ...]}}``.

    A file writes ``measurements[level]`` as ``{cores: [1, 2, ...], copy: ['10 GB/s', ...], ...}``
    (kerncraft-tool-paper.txt §2.2); the kernels must be defined in ``benchmarks.kernels``
    and each list must have one bandwidth per core count.

    Raises:
        ValueError: ``measurements.LEVEL[.KERNEL]`` and what is wrong.
    """
    if not isinstance(v, dict) or not isinstance(v.get("measurements", {}), dict):
        return v
    kernels = v.get("kernels") if isinstance(v.get("kernels"), dict) else {}
    tables = {}
    for level, block in v.get("measurements", {}).items():
        if isinstance(block, dict) and "bandwidths" in block:  # already converted
            tables[level] = block
            continue
        if not isinstance(block, dict) or "cores" not in block:
            raise ValueError(f"measurements.{level} needs a 'cores' list")
        cores = block["cores"]
        if not isinstance(cores, list) or not all(isinstance(c, int) and 0 < c <= COUNT.hi for c in cores):
            raise ValueError(f"measurements.{level}.cores must be a list of integers 1 .. {COUNT.hi:g}")
        tables[level] = {"cores": tuple(cores), "bandwidths": {
            name: _measured(level, name, vals, cores, kernels) for name, vals in block.items() if name != "cores"}}
    return {**v, "measurements": tables}


def _measured(level, name, vals, cores, kernels) -> tuple:
    if name not in kernels:
        raise ValueError(f"measurements.{level}.{name}: kernel '{name}' is not defined in benchmarks.kernels")
    if not isinstance(vals, list) or len(vals) != len(cores):
        raise ValueError(f"measurements.{level}.{name} must list one bandwidth per core count ({len(cores)})")
    try:
        return tuple(BANDWIDTH_S.check(parse_quantity(x, "bandwidth_s")) for x in vals)
    except ValueError as exc:
        raise ValueError(f"measurements.{level}.{name}: {exc}") from None


#: keys of a machine file's ``coherence`` section (units in the names) -> CoherenceTable fields
COHERENCE_KEYS = {"element size [B]": "element_size", "stride [B]": "stride", "sizes [B]": "sizes",
                  "threads": "threads", "cpus": "cpus", "region overhead [s]": "region_overhead",
                  "seconds [s]": "seconds", "spread": "spread", "notes": "notes"}


#: the ``coherence`` keys as a file writes them: (key, type, unit, required, description), for
#: the machine-file reference (:mod:`loopmodel.fileio.machine_reference`); one row per key of
#: :data:`COHERENCE_KEYS` (a test keeps the two in step)
COHERENCE_KEY_DOCS = (
    ("element size [B]", "integer", "B; > 0", False, "`8`", "bytes per element of the benchmark buffers (double)."),
    ("stride [B]", "integer", "B; > 0", False, "`8`", "bytes between consecutive accesses of the benchmarks."),
    ("sizes [B]", "list of integer", "B per thread, ascending", True, "",
     "chunk sizes per thread, from a few KiB to beyond the last-level cache."),
    ("threads", "list of integer", "ascending", True, "", "the thread counts T measured."),
    ("cpus", "list of integer", "", False, "", "the logical CPUs the T threads were pinned to, in order."),
    ("region overhead [s]", "mapping of number", "s per T", False, "",
     "T -> seconds of an empty `#pragma omp parallel for` (fork, static schedule, join)."),
    ("seconds [s]", "mapping of mapping of list of number", "s per size", True, "",
     "transition key (`L I`, `L M own`, `L M other`, ..., `S S other`) -> T -> the time one of T threads "
     "takes for its chunk of each size, all acting at once (min over repetitions); a key the host "
     "cannot set up (`S other` needs three threads) is left out."),
    ("spread", "mapping of mapping of list of number", "fraction", False, "",
     "same shape as `seconds [s]`: (max - min) / min over the repetitions."),
    ("notes", "list of text", "", False, "", "what the measurement could not do or noticed."),
)


def _section_keys(v, known, hint: str) -> None:
    """A section must be a mapping of known keys.

    Raises:
        ValueError: not a mapping, or the first unknown key (one line).
    """
    if not isinstance(v, dict):
        raise ValueError(f"must be a mapping ({hint})")
    unknown = [k for k in v if k not in known]
    if unknown:
        raise ValueError(f"unknown key '{unknown[0]}' (known: {', '.join(known)})")


def coherence_section(v):
    """``coherence``: the measured MESI transition table
    (:class:`~loopmodel.machine.coherence.CoherenceTable`, benchmark-based-coherence-model.txt §IV).

    A file writes ``{element size [B]: 8, stride [B]: 8, sizes [B]: [...], threads: [1, 2],
    cpus: [0, 1], region overhead [s]: {T: s}, seconds [s]: {key: {T: [s per size]}},
    spread: {key: {T: [...]}}, notes: [...]}``.

    Raises:
        ValueError: the key of the section that is wrong and what is wrong (one line).
    """
    if v is None or isinstance(v, CoherenceTable):
        return v
    _section_keys(v, COHERENCE_KEYS, "sizes [B], threads, seconds [s], ...")
    for k in ("sizes [B]", "threads", "seconds [s]"):
        if k not in v:
            raise ValueError(f"'{k}' is missing")
    out = {"sizes": _ints(v, "sizes [B]"), "threads": _ints(v, "threads"), "cpus": _ints(v, "cpus", ())}
    for k in ("element size [B]", "stride [B]"):
        if k in v:
            if isinstance(v[k], bool) or not isinstance(v[k], int) or v[k] <= 0:
                raise ValueError(f"'{k}' must be a positive whole number of bytes")
            out[COHERENCE_KEYS[k]] = v[k]
    out["region_overhead"] = _per_thread(v.get("region overhead [s]", {}), "region overhead [s]", scalar=True)
    out["seconds"] = _transition_rows(v["seconds [s]"], "seconds [s]")
    out["spread"] = _transition_rows(v.get("spread") or {}, "spread")
    notes = v.get("notes") or []
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise ValueError("'notes' must be a list of strings")
    try:
        return CoherenceTable(notes=tuple(notes), **out)
    except ValueError as exc:
        raise ValueError(str(exc)) from None


def _ints(v: dict, key: str, default=None) -> tuple:
    vals = v.get(key, default)
    if not isinstance(vals, (list, tuple)) or not all(isinstance(x, int) and not isinstance(x, bool) for x in vals):
        raise ValueError(f"'{key}' must be a list of whole numbers")
    return tuple(vals)


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _per_thread(block, key: str, scalar: bool = False) -> dict:
    """``{T: value}`` (scalar) or ``{T: [values]}`` with whole-number T."""
    if not isinstance(block, dict):
        raise ValueError(f"'{key}' must map thread counts to {'seconds' if scalar else 'lists'}")
    out = {}
    for t, val in block.items():
        if isinstance(t, bool) or not isinstance(t, int):
            raise ValueError(f"'{key}': thread count {t!r} is not a whole number")
        if scalar:
            if not _number(val) or val < 0:
                raise ValueError(f"'{key}' T={t}: must be a number >= 0")
            out[t] = float(val)
        else:
            if not isinstance(val, list) or not all(_number(x) for x in val):
                raise ValueError(f"'{key}' T={t}: must be a list of numbers, one per size")
            out[t] = tuple(float(x) for x in val)
    return out


def _transition_rows(block, key: str) -> dict:
    """``{transition: {T: (values per size)}}``."""
    if not isinstance(block, dict):
        raise ValueError(f"'{key}' must map transitions ('L M other', ...) to thread counts")
    return {str(k): _per_thread(rows, f"{key}.{k}") for k, rows in block.items()}


#: keys of a machine file's ``power`` section -> (PowerSection field, unit kind)
POWER_KEYS = {"W0": ("w0", 0), "W1": ("w1", 1), "W2": ("w2", 2), "per core": ("per_core", 0),
              "at clock": ("at_clock", "frequency"), "clock range": ("clock_range", "frequency"),
              "clock step": ("clock_step", "frequency"), "source": ("source", None), "notes": ("notes", None)}


#: the ``power`` keys as a file writes them (the shape of :data:`COHERENCE_KEY_DOCS`); one
#: row per key of :data:`POWER_KEYS`
POWER_KEY_DOCS = (
    ("W0", "text", "W (with a unit: '23.6 W')", True, "", "static (baseline) power of the chip."),
    ("W1", "text", "W/GHz (with a unit: '1.9 W/GHz')", False, "",
     "dynamic power per active core, linear in the clock."),
    ("W2", "text", "W/GHz^2 (with a unit: '1.2 W/GHz^2')", False, "",
     "dynamic power per active core, quadratic in the clock."),
    ("per core", "text", "W (with a unit)", False, "",
     "dynamic power per active core at `at clock`, where W1 and W2 are not known separately (a probe at one clock)."),
    ("at clock", "text", "Hz (with a unit: '2.2 GHz')", False, "", "the clock of `per core`."),
    ("clock range", "list of text", "Hz (with a unit), two values", False, "",
     "the lowest and highest clock the chip can run at: `[1.2 GHz, 2.7 GHz]`."),
    ("clock step", "text", "Hz (with a unit: '0.1 GHz')", False, "", "the step between settable clocks."),
    ("source", "text", "", False, "", "where the numbers come from (a citation, or the probe's description)."),
    ("notes", "list of text", "", False, "", "what the numbers can and cannot say."),
)

#: the ``benchmarks`` keys as a file writes them (the shape of :data:`COHERENCE_KEY_DOCS`)
BENCHMARK_KEY_DOCS = (
    ("kernels{name}", "mapping (BenchmarkKernel)", "", False, "",
     "the streaming kernels the measurements name; their keys in the next table."),
    ("measurements{level}.cores", "list of integer", f"{COUNT}", True, "",
     "the core counts of the level's table (one thread per core)."),
    ("measurements{level}.{kernel}", "list of text", f"B/s (with a unit: '10 GB/s'); physical range {BANDWIDTH_S}, "
     f"at the clock {BANDWIDTH_CY}", False, "",
     "the bandwidth of a kernel of `kernels`, one per core count, without write-allocate traffic."),
)


def power_section(v):
    """``power``: the chip power model W = W0 + (W1·f + W2·f²)·n
    (:class:`~loopmodel.machine.power.PowerSection`, ecm-model-slides.txt "A simple power model
    for multicore chips").

    A file writes ``{W0: 23.6 W, W1: 1.9 W/GHz, W2: 1.2 W/GHz^2, clock range: [1.2 GHz, 2.7 GHz],
    clock step: 0.1 GHz, source: '...', notes: [...]}``; a probe at one clock writes ``per core:
    7.1 W`` and ``at clock: 2.2 GHz`` instead of W1 and W2.

    Raises:
        ValueError: the key of the section that is wrong and what is wrong (one line).
    """
    if v is None or isinstance(v, PowerSection):
        return v
    _section_keys(v, POWER_KEYS, "W0, W1, W2, clock range, clock step, source")
    if "W0" not in v:
        raise ValueError("'W0' is missing")
    out = {}
    for key, (name, kind) in POWER_KEYS.items():
        if key not in v or kind is None:
            continue
        try:
            if key == "clock range":
                rng = v[key]
                if not isinstance(rng, list) or len(rng) != 2:
                    raise UnitError("must be two clocks [lowest, highest], e.g. [1.2 GHz, 2.7 GHz]")
                out["clock_min"], out["clock_max"] = (parse_quantity(x, "frequency") for x in rng)
            elif isinstance(kind, int):
                out[name] = parse_power(v[key], kind)
            else:
                out[name] = parse_quantity(v[key], kind)
        except UnitError as exc:
            raise ValueError(f"'{key}': {exc}") from None
    if not isinstance(v.get("source", ""), str):
        raise ValueError("'source' must be a string")
    notes = v.get("notes") or []
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise ValueError("'notes' must be a list of strings")
    try:
        return PowerSection(source=v.get("source", ""), notes=tuple(notes), **out)
    except ValueError as exc:
        raise ValueError(str(exc)) from None
