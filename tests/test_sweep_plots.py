"""Pictures of sweeps: `analyze -D N=range --plot` (ECM contributions over the size with the
layer-condition transitions) and `plot_study` (one report figure over a size, one line per
kernel, machine and option combination)."""
from __future__ import annotations

import json
import math

import pytest

from helpers import IVB, KERNELS, reference_dir, run_cli

from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
from loopmodel.cli import main
from loopmodel.fileio.c_kernel import parse_kernel_file
from loopmodel.fileio.machine_files import load_machine
from loopmodel.report import ecm_plot
from loopmodel.report.study_plot import plot_study, study_lines, unit_of

PNG = b"\x89PNG\r\n\x1a\n"
DAXPY_SWEEP = ["analyze", str(KERNELS / "daxpy.c"), "-m", IVB, "-D", "N=1000:100000:1000"]
#: kerncraft-tool-paper.txt Listing 5 (3d-long-range, M=130 on IvyBridge-EP): 3D and 2D layer conditions
LISTING5 = {"L1": (19, 216), "L2": (55, 1725), "L3": (546,)}


def _points(kernel: str, machine, var: str, sizes, fixed: dict | None = None) -> list:
    k, _ = parse_kernel_file(str(KERNELS / kernel))
    m = load_machine(machine) if isinstance(machine, str) else machine
    a = Analyzer(k, m, AnalyzerSettings(models=("LC", "ECM"), incore="analytic", use_cache=False))
    return [ecm_plot.ecm_point(a.run({**(fixed or {}), var: n}), var) for n in sizes]


def _vlines(ax) -> list:
    """x of the vertical transition lines (their two x data are equal)."""
    return sorted({ln.get_xdata()[0] for ln in ax.get_lines() if len(set(ln.get_xdata())) == 1})


# --- analyze --plot through the command line ---------------------------------------------------

def test_analyze_plot_is_written_refused_then_forced(tmp_path):
    out = tmp_path / "ecm.png"
    p = run_cli(*DAXPY_SWEEP, "--plot", out)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes()[:8] == PNG and f"plot written to {out}" in p.stdout
    p = run_cli(*DAXPY_SWEEP, "--plot", out)
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert "exists" in p.stderr and "--force" in p.stderr and "Traceback" not in p.stderr
    out.write_bytes(b"old")
    p = run_cli(*DAXPY_SWEEP, "--plot", out, "--force", "--json")
    assert p.returncode == 0, p.stderr
    assert out.read_bytes()[:8] == PNG
    docs = [json.loads(line) for line in p.stdout.splitlines()]  # stdout stays JSON Lines
    assert len(docs) == 100 and docs[0]["defines"]["N"] == 1000


@pytest.mark.parametrize("suffix, head", [(".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_analyze_plot_format_by_extension(tmp_path, capsys, suffix, head):
    out = tmp_path / f"ecm{suffix}"
    assert main([*DAXPY_SWEEP, "--plot", str(out), "--no-progress"]) == 0
    assert out.read_bytes().lstrip()[:len(head)] == head
    assert f"plot written to {out}" in capsys.readouterr().out


def test_analyze_plot_with_json_file_keeps_the_table(tmp_path, capsys):
    out, js = tmp_path / "ecm.png", tmp_path / "sweep.json"
    assert main([*DAXPY_SWEEP[:-1], "N=1000:5000:1000", "--json", str(js), "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG and len(js.read_text().splitlines()) == 5
    assert "plot written to" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["-D", "N=1000"], "--plot needs a -D range"),
    (["-D", "N=1000:2000:1000", "-p", "LC"], "--plot draws the ECM contributions: add -p ECM"),
])
def test_analyze_plot_needs_a_range_of_ecm(tmp_path, capsys, argv, message):
    out = tmp_path / "ecm.png"
    assert main(["analyze", str(KERNELS / "daxpy.c"), "-m", IVB, *argv, "--plot", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and not out.exists()


def test_analyze_plot_over_one_size_only(tmp_path, capsys):
    argv = ["analyze", str(KERNELS / "3d-long-range.c"), "-m", IVB, "-D", "M=10:20:10", "-D", "N=10:20:10"]
    assert main([*argv, "--plot", str(tmp_path / "x.png")]) == 2
    assert "M and N both vary" in capsys.readouterr().err


@pytest.mark.parametrize("name, message", [("ecm.jpg", "cannot tell the picture format"),
                                           ("missing/ecm.png", "does not exist")])
def test_analyze_plot_bad_path_fails_before_the_work(tmp_path, capsys, name, message):
    assert main([*DAXPY_SWEEP, "--plot", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_analyze_plot_write_error_is_one_line(tmp_path, capsys, monkeypatch):
    import matplotlib.figure

    def full_disk(self, *a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full_disk)
    assert main([*DAXPY_SWEEP, "--plot", str(tmp_path / "ecm.png")]) == 2
    err = capsys.readouterr().err
    assert err == f"loopmodel: {tmp_path / 'ecm.png'}: cannot write the plot: No space left on device\n"


# --- the figure's artists ----------------------------------------------------------------------

def test_long_range_transitions_are_listing5_sizes():
    """3d-long-range, M=130, N=10..1800: a line at every layer-condition transition size of the
    paper's Listing 5, labelled with the level, and the stack steps there."""
    pts = _points("3d-long-range.c", IVB, "N", range(10, 1801, 10), {"M": 130})
    fig = ecm_plot.plot(pts, "N", None, "3d-long-range")
    ax = fig.axes[0]
    xs = _vlines(ax)
    for level, sizes in LISTING5.items():
        for size in sizes:
            assert size in xs and (size, level) in ecm_plot.lc_transitions(pts)
    # the whole data set leaves L2 at N=14 and L3 at N=99 (repeated sweeps)
    assert (14.0, "L2 (data set)") in ecm_plot.lc_transitions(pts) and 99.0 in xs
    labels = [t.get_text() for t in ax.texts if t.get_text()]  # the others: leader lines only
    assert {"L1", "L2", "L3", "L2 (data set)", "L3 (data set)"} <= set(labels)
    assert len(labels) < len(xs)  # close lines of one level share one label (216 and 219: "L1")
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["T_nOL", "T_L1L2", "T_L2L3", "T_L3MEM", "T_OL", "T_ECM"]
    assert len([c for c in ax.collections if not c.get_hatch()]) == 4  # one stacked area per non-overlapping contribution
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "N" and "[cy/CL]" in ax.get_ylabel()
    # the T_ECM step changes at N=546 (3D L3 condition): 134.25 below, 165.80 above
    ecm = next(ln for ln in ax.get_lines() if ln.get_label() == "T_ECM")
    x, y = list(ecm.get_xdata()), list(ecm.get_ydata())
    k = x.index(546.0)
    assert y[k - 1] == pytest.approx(134.254, abs=0.01) and y[k] == pytest.approx(165.801, abs=0.01)


def test_daxpy_data_set_transitions_and_stack_sums_to_t_ecm():
    """daxpy (16 B per N): the whole data set leaves L1 (32 KiB) at N=2048, L2 (256 KiB) at
    16384, L3 (25 MiB) at 1638400; T_ECM is the top of the stack where it exceeds T_OL."""
    sizes = [1000 * 2 ** k for k in range(14)]
    pts = _points("daxpy.c", IVB, "N", sizes)
    ax = ecm_plot.plot(pts, "N", None, "daxpy").axes[0]
    assert _vlines(ax) == [2048.0, 16384.0, 1638400.0]
    assert [t.get_text() for t in ax.texts] == ["L1 (data set)", "L2 (data set)", "L3 (data set)"]
    last = pts[-1]
    stacked = sum(v for _, v, over in last.parts if not over)
    assert last.t_ecm == pytest.approx(max(stacked, last.parts[0][1]))


def test_latency_penalties_and_overlapping_transfers_are_drawn():
    """Power9 (paper Table 2): a latency penalty on the memory link is its own stacked layer;
    the overlapping L2L3 transfer is a line."""
    pts = _points("2d-5pt.c", "Power9_8335-GTX", "N", range(500, 3001, 500), {"M": 1000})
    ax = ecm_plot.plot(pts, "N", None, "p9").axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "latency penalties" in legend and "T_L2L3 (overlapping)" in legend
    assert len([c for c in ax.collections if not c.get_hatch()]) == sum(
        1 for n in legend if n.startswith("T_") and "overlapping" not in n and n not in ("T_OL", "T_ECM")) + 1


def test_unknown_t_ol_draws_the_transfers_and_says_so(monkeypatch):
    """A64FX (Kerncraft file without DIV throughput) and no llvm-mca to fill it in: no T_OL or
    T_ECM line; the transfers and eq. 4 without T_OL are drawn and the title says T_OL is unknown."""
    monkeypatch.setenv("LOOPMODEL_LLVM_MCA", "/nonexistent/llvm-mca")
    machine = str(reference_dir() / "A64FX_qpace4.yml")
    pts = _points("uxx.c", machine, "N", range(10, 301, 10))
    ax = ecm_plot.plot(pts, "N", None, "uxx").axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "T_OL" not in legend and "T_ECM" not in legend and "eq. 4 without T_OL (T_ECM ≥)" in legend
    assert "T_OL unknown" in ax.get_title() and len(ax.collections) == 3  # no T_OL: no hatched area


def test_transition_between_samples_without_a_solved_size_is_half_way():
    a = ecm_plot.EcmPoint(10.0, False, (), 1.0, 1.0, (ecm_plot.LevelState("L1", 2, (math.inf, 50, 15)),))
    b = ecm_plot.EcmPoint(20.0, False, (), 2.0, 2.0, (ecm_plot.LevelState("L1", 1, (math.inf, 50, 15)),))
    assert ecm_plot.lc_transitions([a, b]) == [(15.0, "L1")]
    solved = [ecm_plot.EcmPoint(p.x, True, p.parts, p.t_ecm, p.t_transfer, p.lc) for p in (a, b)]
    assert ecm_plot.lc_transitions(solved) == [(15, "L1")]
    assert ecm_plot.step_edges([10.0, 20.0, 40.0], [(15, "L1")]) == [15, 30.0]


# --- plot_study --------------------------------------------------------------------------------

def _study_rows() -> list:
    rows = []
    for kernel in ("examples/kernels/daxpy.c", "examples/kernels/triad.c"):
        for machine in (IVB, "SkylakeSP_Gold-6148"):
            for n in (100, 1000, 10_000, 100_000):
                rows.append({"kernel": kernel, "machine": machine, "N": n, "cores": 1,
                             "ecm.performance.cy_per_cl": 10.0 + math.log10(n), "ecm.notation": f"{{ {n} }}"})
    rows.append({"kernel": "examples/kernels/daxpy.c", "machine": IVB, "N": 50, "error": "no value for M"})
    rows.append({"kernel": "examples/kernels/daxpy.c", "machine": IVB, "N": 200_000,
                 "ecm.performance.cy_per_cl": None})  # unknown (T_OL missing): left out
    return rows


def test_study_one_line_per_kernel_and_machine_errors_skipped():
    fig = plot_study(_study_rows(), None, "N", title="study")
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert len(lines) == 4
    assert all(list(ln.get_xdata()) == [100, 1000, 10_000, 100_000] for ln in lines)  # error, null: not drawn
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0] == f"daxpy.c on {IVB}" and len(set(labels)) == 4
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "N"
    assert ax.get_ylabel() == "ecm.performance [cy/CL]" and ax.get_title() == "study"


def test_study_option_columns_split_and_label_the_lines():
    rows = [{**r, "cache_predictor": cp} for r in _study_rows() if "triad" in r["kernel"] and r["machine"] == IVB
            for cp in ("lc", "sim")]
    common, lines, places = study_lines(rows, "N", "ecm.performance.cy_per_cl")
    assert places == [(0, 0), (0, 1)]  # one kernel and machine, two option values
    assert common == f"triad.c on {IVB}" and [label for label, _, _ in lines] == ["cache_predictor=lc",
                                                                                  "cache_predictor=sim"]
    ax = plot_study(rows, None, "N").axes[0]
    assert len(ax.get_lines()) == 2 and f"(triad.c on {IVB})" in ax.get_title()


def test_study_linear_axis_within_two_decades_and_units_from_names(tmp_path):
    rows = [{"kernel": "k.c", "machine": "m", "N": n, "ecm.performance.it_s": 1e9 / n,
             "roofline.performance_flop_s": 2e9 / n} for n in range(10, 501, 10)]
    ax = plot_study(rows, None, "N", y="ecm.performance.it_s").axes[0]
    assert ax.get_xscale() == "linear" and ax.get_ylabel() == "ecm.performance [it/s]"
    ax = plot_study(rows, None, "N", y="roofline.performance_flop_s").axes[0]
    assert ax.get_ylabel() == "roofline.performance_flop_s [FLOP/s]"
    assert unit_of("kernel.file") is None and unit_of("ecm.performance.lup_s") == "LUP/s"
    assert unit_of("ecm.T_ECM_cy_per_cl.MEM") == "cy/CL" and unit_of("ecm.T_OL_cy_per_cl") == "cy/CL"
    out = tmp_path / "study.png"
    assert plot_study(rows, str(out), "N", y="ecm.performance.it_s") is None
    assert out.read_bytes()[:8] == PNG


def test_study_of_failed_points_only_draws_nothing():
    ax = plot_study([{"kernel": "k.c", "machine": "m", "N": 1, "error": "boom"}], None, "N").axes[0]
    assert ax.get_lines() == [] and ax.get_legend() is None
