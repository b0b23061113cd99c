"""Measured chip power for the power model (``loopmodel machine probe --power``).

The model (ecm-model-slides.txt, "A simple power model for multicore chips") is
W(n, f) = W0 + (W1·f + W2·f²)·n per chip. The probe runs a streaming kernel (the triad of
:mod:`.stream`, data in memory, ``OMP_PLACES=cores OMP_PROC_BIND=close``) on n = 1..N cores
and reads the package energy counters of Linux powercap (RAPL):
``/sys/class/powercap/intel-rapl:<package>/energy_uj`` before and after each run, in µJ; a
counter that passed ``max_energy_range_uj`` wrapped around to 0. Power is the energy of all
packages over the wall time of the run (W = J/s).

Where the cores' clock can be set (cpufreq ``scaling_max_freq`` writable for every CPU used)
each core count runs at several clocks and W0, W1, W2 are fitted by least squares to
W = W0 + W1·(n·f) + W2·(n·f²) (needs two clocks or more; the settings are put back after).
At one clock W1 and W2 cannot be separated: W = W0 + s·n is fitted and W0 with the power
per core s at that clock is what is stored (:class:`~loopmodel.machine.power.PowerSection`).

Where no counter is readable (virtual machines, containers, no permission) the step raises
a one-line ToolError that the probe turns into a note. ``root`` is where sysfs is found and
``runner`` runs the load, so tests use a fake sysfs tree and a fake runner.
"""
from __future__ import annotations

from dataclasses import dataclass

import os
import re
import shlex
import tempfile
import time

from .. import toolchain
from ..errors import ToolError
from ..machine.power import PowerSection
from .stream import DEFAULT_FLAGS, ELEMENT_SIZE, KERNELS, available_memory, run_once, stream_source
from .topology import allowed_cpus, one_cpu_per_core

POWERCAP = "sys/class/powercap"
CPUFREQ = "sys/devices/system/cpu/cpu{cpu}/cpufreq"
#: the note of a host without readable energy counters
NO_COUNTERS = "no energy counters: /sys/class/powercap not readable"
#: bytes of the triad's three arrays together: far beyond any last-level cache
LOAD_BYTES = 384 * 1024 * 1024


@dataclass(frozen=True)
class RaplDomain:
    """One package energy counter: its sysfs directory, ``name`` (``package-0``) and the
    counter's range in µJ (it wraps around to 0 beyond it)."""
    path: str
    name: str
    max_range_uj: int


@dataclass(frozen=True)
class PowerSample:
    """One measured run: ``cores`` active, ``clock_hz`` (the set clock; the measured clock where
    it cannot be set), ``seconds`` wall time, ``joules`` of all packages together."""
    cores: int
    clock_hz: float
    seconds: float
    joules: float

    @property
    def watts(self) -> float:
        return self.joules / self.seconds


@dataclass(frozen=True)
class PowerFit:
    """The fitted coefficients (base units) and what the fit can say.

    Attributes:
        w0: W; w1, w2: W/Hz, W/Hz² (None at one clock); per_core, at_clock: W and Hz (one clock
        only, else None); rms_w: root-mean-square residual of the fit, W; notes.
    """
    w0: float
    w1: float | None
    w2: float | None
    per_core: float | None
    at_clock: float | None
    rms_w: float
    notes: tuple = ()


def _read_int(path: str) -> int:
    with open(path, encoding="ascii") as fh:
        return int(fh.read().strip())


def rapl_packages(root: str = "/") -> tuple:
    """The package-level RAPL counters (``intel-rapl:N``, not their sub-domains ``intel-rapl:N:M``)
    whose ``energy_uj`` and ``max_energy_range_uj`` are readable.

    Raises:
        ToolError: none readable (:data:`NO_COUNTERS`).
    """
    base = os.path.join(root, POWERCAP)
    try:
        names = sorted(os.listdir(base))
    except OSError:
        raise ToolError(NO_COUNTERS) from None
    out = []
    for d in names:
        if not re.fullmatch(r"intel-rapl:\d+", d):
            continue
        path = os.path.join(base, d)
        try:
            _read_int(os.path.join(path, "energy_uj"))
            rng = _read_int(os.path.join(path, "max_energy_range_uj"))
        except (OSError, ValueError):
            continue
        try:
            with open(os.path.join(path, "name"), encoding="ascii") as fh:
                name = fh.read().strip()
        except OSError:
            name = d
        out.append(RaplDomain(path, name, rng))
    if not out:
        raise ToolError(NO_COUNTERS)
    return tuple(out)


def read_energy_uj(domains) -> tuple:
    """The counters' values, µJ, one per domain.

    Raises:
        ToolError: a counter cannot be read any more (one line).
    """
    try:
        return tuple(_read_int(os.path.join(d.path, "energy_uj")) for d in domains)
    except (OSError, ValueError) as exc:
        raise ToolError(f"cannot read the energy counters: {getattr(exc, 'strerror', None) or exc}") from None


def energy_delta_uj(before: int, after: int, max_range_uj: int) -> int:
    """µJ between two readings of one counter; a counter that wrapped around (``after`` <
    ``before``) passed ``max_range_uj`` once."""
    return after - before if after >= before else after + max_range_uj - before


def settable_clocks(cpus, root: str = "/", count: int = 3) -> tuple:
    """``(clocks in Hz ascending, original scaling_max_freq values in kHz)`` when every CPU's
    ``scaling_max_freq`` is writable (its own value written back is accepted), else ``((), {})``. The clocks: ``count`` of
    ``scaling_available_frequencies`` (lowest, highest, evenly between), else of
    ``cpuinfo_min_freq`` .. ``cpuinfo_max_freq``."""
    orig = {}
    for c in cpus:
        path = os.path.join(root, CPUFREQ.format(cpu=c), "scaling_max_freq")
        if not os.access(path, os.W_OK):
            return (), {}
        try:
            orig[c] = _read_int(path)
            with open(path, "w", encoding="ascii") as fh:  # the same value: is the write accepted?
                fh.write(f"{orig[c]}\n")
        except (OSError, ValueError):
            return (), {}
    d = os.path.join(root, CPUFREQ.format(cpu=cpus[0]))
    try:
        with open(os.path.join(d, "scaling_available_frequencies"), encoding="ascii") as fh:
            avail = sorted({int(x) for x in fh.read().split()})
    except (OSError, ValueError):
        try:
            lo, hi = _read_int(os.path.join(d, "cpuinfo_min_freq")), _read_int(os.path.join(d, "cpuinfo_max_freq"))
        except (OSError, ValueError):
            return (), {}
        avail = sorted({lo + (hi - lo) * i // max(count - 1, 1) for i in range(count)})
    if len(avail) < 2:
        return (), {}
    pick = sorted({avail[round(i * (len(avail) - 1) / max(count - 1, 1))] for i in range(count)})
    return tuple(k * 1e3 for k in pick), orig


def set_max_clock(cpus, khz: dict | int, root: str = "/") -> None:
    """Write ``scaling_max_freq`` (kHz; one value for all, or per CPU).

    Raises:
        ToolError: the write is refused (one line).
    """
    for c in cpus:
        path = os.path.join(root, CPUFREQ.format(cpu=c), "scaling_max_freq")
        try:
            with open(path, "w", encoding="ascii") as fh:
                fh.write(f"{int(khz[c] if isinstance(khz, dict) else khz)}\n")
        except OSError as exc:
            raise ToolError(f"cannot set the clock of CPU {c}: {exc.strerror or exc}") from None


def measure_samples(domains, cores: list, clocks: list, runner, seconds: float, cpus=(), root: str = "/",
                    timer=time.monotonic, progress=None) -> tuple:
    """Package energy over one run of ``runner(cores, seconds)`` per core count and clock.

    Args:
        domains: :func:`rapl_packages`.
        cores: core counts; clocks: Hz, each set with :func:`set_max_clock` on ``cpus`` before
            its runs (a single clock that is not set: pass ``cpus`` empty).
        runner: ``runner(cores, seconds)``: runs the load on that many cores for about that long.
        timer: wall clock in s (``time.monotonic``).

    Returns:
        :class:`PowerSample` per (clock, cores).

    Raises:
        ToolError: a counter cannot be read, the runner fails, a run takes no time (one line).
    """
    out, total = [], len(cores) * len(clocks)
    for f in clocks:
        if cpus:
            set_max_clock(cpus, int(round(f / 1e3)), root)
        for n in cores:
            if progress is not None:
                progress("power (RAPL)", len(out), total)
            t0, e0 = timer(), read_energy_uj(domains)
            runner(n, seconds)
            e1, t1 = read_energy_uj(domains), timer()
            if not t1 > t0:
                raise ToolError(f"the power run on {n} cores took no time")
            uj = sum(energy_delta_uj(a, b, d.max_range_uj) for a, b, d in zip(e0, e1, domains))
            out.append(PowerSample(n, f, t1 - t0, uj * 1e-6))
    return tuple(out)


def _solve(a: list, b: list) -> list:
    """Gaussian elimination with partial pivoting for a small square system; ValueError if singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-12 * max(1.0, max(abs(x) for row in m for x in row[:n])):
            raise ValueError("singular")
        m[c], m[p] = m[p], m[c]
        for r in range(c + 1, n):
            k = m[r][c] / m[c][c]
            m[r] = [x - k * y for x, y in zip(m[r], m[c])]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][j] * x[j] for j in range(r + 1, n))) / m[r][r]
    return x


def least_squares(rows: list, values: list) -> list:
    """Coefficients minimizing the squared residuals of ``rows · x = values`` (normal equations).

    Raises:
        ValueError: the columns are not independent (too few distinct points).
    """
    k = len(rows[0])
    ata = [[sum(r[i] * r[j] for r in rows) for j in range(k)] for i in range(k)]
    atb = [sum(r[i] * v for r, v in zip(rows, values)) for i in range(k)]
    return _solve(ata, atb)


def fit_power(samples) -> PowerFit:
    """W0, W1, W2 by least squares from :class:`PowerSample` s (clocks in GHz inside, for the
    conditioning; results in W, W/Hz, W/Hz²). Two clocks or more: W = W0 + W1·n·f + W2·n·f²;
    one clock: W = W0 + s·n, stored as ``per_core`` s at that clock.

    Raises:
        ToolError: fewer than two core counts (one line).
    """
    clocks = sorted({s.clock_hz for s in samples})
    if len({s.cores for s in samples}) < 2:
        raise ToolError("the power model needs runs on at least two core counts (--cores 1:2 or more)")
    watts = [s.watts for s in samples]
    if len(clocks) >= 2:
        rows = [[1.0, s.cores * s.clock_hz / 1e9, s.cores * (s.clock_hz / 1e9) ** 2] for s in samples]
        try:
            w0, w1, w2 = least_squares(rows, watts)
        except ValueError:
            raise ToolError("the power runs do not determine W0, W1 and W2 (too few distinct points)") from None
        fit = [w0 + w1 * r[1] + w2 * r[2] for r in rows]
        notes = (f"W0, W1, W2 fitted to {len(samples)} runs at {len(clocks)} clocks "
                 f"({', '.join(f'{f / 1e9:g}' for f in clocks)} GHz)",)
        return PowerFit(w0, w1 * 1e-9, w2 * 1e-18, None, None, _rms(fit, watts), notes)
    rows = [[1.0, float(s.cores)] for s in samples]
    w0, slope = least_squares(rows, watts)
    fit = [w0 + slope * r[1] for r in rows]
    notes = (f"measured at one clock ({clocks[0] / 1e9:.3g} GHz): W1 and W2 cannot be separated; W0 and the power "
             "per active core at that clock are stored",)
    return PowerFit(w0, None, None, slope, clocks[0], _rms(fit, watts), notes)


def _rms(fit: list, values: list) -> float:
    return (sum((a - b) ** 2 for a, b in zip(fit, values)) / len(values)) ** 0.5


def stream_runner(compiler: str = "gcc", size_bytes: int = LOAD_BYTES):
    """``runner(cores, seconds)`` running the triad of :mod:`.stream` on ``cores`` OpenMP threads
    (pinned: ``OMP_PLACES=cores OMP_PROC_BIND=close``) for about ``seconds``; the program is
    compiled once into a private temporary directory (removed when the runner is collected).

    Raises:
        ToolError: no compiler, the program fails (one line).
    """
    avail = available_memory()
    size_bytes = min(size_bytes, avail // 4) if avail else size_bytes
    tmp = tempfile.TemporaryDirectory(prefix="loopmodel-power-")
    exe = toolchain.compile_c(stream_source(), compiler, shlex.split(DEFAULT_FLAGS), "executable", "stream", tmp.name)
    n = size_bytes // (KERNELS["triad"][0] * ELEMENT_SIZE)

    def run(cores: int, seconds: float) -> None:
        run_once(exe, "triad", n, cores, 1, seconds, timeout=60 + 10 * seconds)

    run.directory = tmp  # keeps the directory as long as the runner lives
    return run


def probe_power(cores: list, clock_hz: float | None, root: str = "/", runner=None, seconds: float = 1.0,
                compiler: str = "gcc", cpus=None, clock_count: int = 3, timer=time.monotonic,
                progress=None) -> tuple:
    """The probe's power step: ``(PowerSection, provenance dict)``.

    Args:
        cores: core counts to run on (at least two distinct).
        clock_hz: the measured clock (Hz), the clock of the runs where it cannot be set.
        root: where sysfs is found; runner: ``runner(cores, seconds)`` (default
            :func:`stream_runner`); seconds: length of one run; cpus: the CPUs whose clock is
            set (default: the first CPUs this process may use, one per core, as many as the
            largest core count); clock_count: clocks to measure at where they can be set.

    Raises:
        ToolError: no readable energy counters (:data:`NO_COUNTERS`), a failing run or fit (one line).
    """
    domains = rapl_packages(root)
    if cpus is None:
        cpus = one_cpu_per_core(list(allowed_cpus()), root)[:max(cores)]
    clocks, orig = settable_clocks(cpus, root, clock_count)
    notes = []
    if not clocks:
        if not clock_hz:
            raise ToolError("the clock could not be measured and cannot be set: no clock for the power model")
        clocks = (clock_hz,)
        notes.append("the clock cannot be set here (cpufreq scaling_max_freq not writable): measured at one clock "
                     f"({clock_hz / 1e9:.3g} GHz, as measured by the probe)")
    if runner is None:
        runner = stream_runner(compiler)
    t0 = time.monotonic()
    try:
        samples = measure_samples(domains, sorted(set(cores)), list(clocks), runner, seconds,
                                  cpus if orig else (), root, timer, progress)
    finally:
        if orig:
            set_max_clock(cpus, orig, root)
    fit = fit_power(samples)
    notes += list(fit.notes)
    notes.append(f"package power of {', '.join(d.name for d in domains)} (RAPL) over runs of a streaming triad "
                 f"(data in memory) of about {seconds:g} s each; fit rms residual {fit.rms_w:.2f} W")
    if len(domains) > 1:
        notes.append(f"{len(domains)} packages together: W0 holds the baseline of all of them")
    lo, hi = (min(clocks), max(clocks)) if len(clocks) > 1 else (None, None)
    try:
        section = PowerSection(fit.w0, fit.w1, fit.w2, fit.per_core, fit.at_clock, lo, hi, None,
                               source=f"measured with RAPL by loopmodel machine probe --power on "
                                      f"{time.strftime('%Y-%m-%d', time.gmtime())}", notes=tuple(notes))
    except ValueError as exc:
        raise ToolError(f"the fitted power model is not physical ({exc})") from None
    info = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "domains": [d.name for d in domains],
            "cpus": list(cpus), "seconds_per_run": seconds, "duration_s": round(time.monotonic() - t0, 1),
            "rms_residual_W": fit.rms_w,
            "samples": [{"cores": s.cores, "clock_Hz": s.clock_hz, "seconds": s.seconds, "joules": s.joules,
                         "watts": s.watts} for s in samples]}
    return section, info
