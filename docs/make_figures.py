"""Regenerate the pictures the documentation shows (docs/img/*.png) from the bundled kernels,
machine models and study, with the same drawing code as the commands' ``--plot``:

* ``lc-sweep.png``: ``analyze examples/kernels/2d-5pt.c -m SkylakeSP_Gold-6148 -D M=2000
  -D N=100:4000:25 -p ECM --plot``: the ECM contributions over N with the layer-condition
  transitions (L3 (data set) at N=935 and L1 at N=1025 lie close together);
* ``ecm-stack.png``: ``analyze examples/kernels/triad.c -m Power9_8335-GTX -D N=1000-8000000:60log
  -p ECM --plot``: Power9's L2-L3 transfer overlaps (cross-architecture-machine-models.txt
  Table 2); with the data in L3 it is larger than the stack and sets T_ECM;
* ``sweep-lc-sim.png``: ``sweep examples/studies/stencil-sizes.yml --plot``: two kernels on two
  machines with the layer conditions and the cache simulation, which agree on most points;
* ``scaling-z.png``: ``energy examples/kernels/triad.c -m SandyBridgeEP_E5-2680 -D N=10000000
  --cores 1:8 --clock 1.2:2.7:0.1 GHz`` with the command line help's power coefficients: the
  Z-plot;
* ``roofline.png``: ``roofline daxpy.c dot.c triad.c -m host -D N=1000 -D N=50000 -D N=2000000
  -D N=20000000 --plot``: measured on the machine that runs this script, with its probed model
  (``loopmodel machine probe`` first; ``--roofline-machine`` names another model of this host,
  ``--no-roofline`` leaves the picture as it is).

Usage (from the repository root)::

    python docs/make_figures.py [--no-roofline] [--roofline-machine host] [--out docs/img]

The pictures are written at 100 dpi (the commands write 120), each well under 150 KB.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from loopmodel.fileio.c_kernel import parse_kernel_file  # noqa: E402
from loopmodel.fileio.machine_files import load_machine  # noqa: E402
from loopmodel.report import ecm_plot, roofline_plot, study_plot  # noqa: E402
from loopmodel.report import energy as energy_report  # noqa: E402
from loopmodel.report.figures import pyplot  # noqa: E402
from loopmodel.workflows import energy, roofline, sweep  # noqa: E402
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings  # noqa: E402
from loopmodel.workflows.options import from_values  # noqa: E402
from loopmodel.workflows.study import read_study  # noqa: E402

KERNELS = ROOT / "examples" / "kernels"
DPI = 100


def save(fig, path: Path) -> None:
    """Write ``fig`` to ``path`` at :data:`DPI` and say where it went and how large it is."""
    fig.savefig(path, dpi=DPI)
    pyplot().close(fig)
    print(f"{path}: {path.stat().st_size / 1024:.0f} KiB")


def ecm_sweep(kernel: str, machine: str, sizes, fixed: dict, path: Path) -> None:
    """``analyze KERNEL -m MACHINE -D ... -p ECM --incore analytic --plot``: the ECM contributions
    over N (the analytic in-core model: the same picture on every host)."""
    k, _ = parse_kernel_file(str(KERNELS / kernel))
    a = Analyzer(k, load_machine(machine), AnalyzerSettings(models=("LC", "ECM"), incore="analytic"))
    points = [ecm_plot.ecm_point(a.run({**fixed, "N": n}), "N") for n in sizes]
    where = ", ".join(f"{k}={v}" for k, v in fixed.items())
    title = f"{kernel} on {machine}: single-core ECM contributions" + (f" ({where})" if where else "")
    save(ecm_plot.plot(points, "N", None, title), path)


def study(path: Path) -> None:
    """``sweep examples/studies/stencil-sizes.yml --plot``: ecm.performance.cy_per_cl over N, one
    line per kernel, machine and cache predictor (the rows and line groups the command plots)."""
    spec = read_study(str(ROOT / "examples" / "studies" / "stencil-sizes.yml"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        sweep.run(spec, from_values(sweep.SweepOptions, "sweep", {"workers": 1}), str(Path(tmp) / "rows.csv"),
                  on_rows=rows.extend)
    x = spec.varying_define()
    group = ("kernel", "machine", *(d for d in spec.defines if d != x), *spec.options)
    save(study_plot.plot_study(rows, None, x, y=sweep.DEFAULT_Y, title=f"stencil-sizes.yml: {sweep.DEFAULT_Y} over {x}",
                               group=group), path)


def zplot(path: Path) -> None:
    """``energy examples/kernels/triad.c -m SandyBridgeEP_E5-2680 ... --plot``: the Z-plot."""
    options = from_values(energy.EnergyOptions, "energy", {
        "define": ["N=10000000"], "cores": "1:8", "clock": "1.2:2.7:0.1 GHz", "w0": "23.6 W",
        "w1": "1.9 W/GHz", "w2": "1.2 W/GHz^2", "incore": "analytic"})
    out = energy.run(str(KERNELS / "triad.c"), "SandyBridgeEP_E5-2680", options)
    save(energy_report.plot(out.result, out.title, None), path)


def measured_roofline(machine: str, path: Path) -> None:
    """``roofline daxpy.c dot.c triad.c -m MACHINE -D N=... --plot``, measured on this host."""
    options = from_values(roofline.RooflineOptions, "roofline", {
        "define": ["N=1000", "N=50000", "N=2000000", "N=20000000"], "repeat": 10, "no_cache": True})
    got = roofline.run([str(KERNELS / k) for k in ("daxpy.c", "dot.c", "triad.c")], machine, options)
    title = f"measured Roofline on {machine} (warm data, 1 core)"
    save(roofline_plot.plot(got.points, got.roofs, None, title), path)


def main(argv=None) -> int:
    """Write the pictures; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "img"), help="folder of the pictures")
    parser.add_argument("--no-roofline", action="store_true", help="leave roofline.png as it is (no measurement)")
    parser.add_argument("--roofline-machine", default="host", help="the model of this host (default: its probe)")
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    ecm_sweep("2d-5pt.c", "SkylakeSP_Gold-6148", range(100, 4001, 25), {"M": 2000}, out / "lc-sweep.png")
    ecm_sweep("triad.c", "Power9_8335-GTX", [round(1000 * 8000 ** (k / 59)) for k in range(60)], {},
              out / "ecm-stack.png")
    study(out / "sweep-lc-sim.png")
    zplot(out / "scaling-z.png")
    if not args.no_roofline:
        measured_roofline(args.roofline_machine, out / "roofline.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
