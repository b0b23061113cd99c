"""``measure``'s outputs: the JSON document and the table of a streaming benchmark
(:class:`~loopmodel.measure.stream.StreamResult`; GB = 10^9 B)."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..measure.stream import KERNELS, OMP_ENVIRONMENT
from ..units import format_bytes
from .schema import document as envelope


def document(result, clock_hz: float | None = None) -> dict:
    """The JSON document of ``loopmodel measure`` (naming rule: :mod:`loopmodel.report.schema`);
    ``clock_hz``: the measured core clock (``--clock``), Hz."""
    doc = result.to_dict()
    if clock_hz is not None:
        doc["clock_Hz"] = clock_hz
    return envelope(doc)


def render(result, clock_hz: float | None, console) -> None:
    """The table of ``result`` on ``console`` (rich), then the sizes, host, compiler and, with
    ``clock_hz``, the measured clock."""
    arrays, bpi, bpi_no_wa, formula = KERNELS[result.kernel]
    table = Table(title=Text(f"{result.kernel}: {formula}   ({bpi} B/it; {bpi_no_wa} B/it without write-allocate)"))
    for header in ("threads", "Mit/s", "GB/s", "GB/s without write-allocate", "ms per sweep, median (min-max)"):
        table.add_column(Text(header), justify="right")
    for p in result.points:
        table.add_row(str(p.threads), f"{p.it_per_s / 1e6:.1f}", f"{p.bytes_per_s / 1e9:.2f}",
                      f"{p.bytes_per_s_no_wa / 1e9:.2f}",
                      f"{p.seconds_per_sweep * 1e3:.3g} ({p.seconds_per_sweep_min * 1e3:.3g}-"
                      f"{p.seconds_per_sweep_max * 1e3:.3g})")
    console.print(table)
    env = " ".join(f"{k}={v}" for k, v in OMP_ENVIRONMENT.items())
    console.print(f"N = {result.n_elements} elements per array, {format_bytes(result.size_bytes)} in {arrays} arrays; "
                  f"median of {result.repetitions} repetition(s) of at least {result.min_time_s:g} s; GB = 10^9 B",
                  markup=False)
    console.print(f"host: {result.host}", markup=False)
    console.print(f"compiler: {result.compiler_version or result.compiler}; flags: {' '.join(result.flags)}; {env}",
                  markup=False)
    if clock_hz is not None:
        console.print(f"core clock (measured on one core, dependent integer adds): {clock_hz / 1e9:.2f} GHz",
                      markup=False)
