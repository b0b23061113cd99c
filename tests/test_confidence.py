"""Confidence on every prediction (:mod:`loopmodel.workflows.confidence`): one test per regime
tag on small C kernels, the choice of the validation's error band, the notes on poorly modelled
regimes, and the accuracy line of ``analyze`` (text and JSON) on a machine file with a
``probe.validation`` section."""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from helpers import KERNELS, SKX, run_cli
from loopmodel.compiled.llvm_mca import find_llvm_mca
from loopmodel.fileio.c_kernel import parse_kernel
from loopmodel.fileio.machine_files import load_machine
from loopmodel.machine.probe_section import ErrorStats, from_mapping, probe_section
from loopmodel.models.accuracy import MIN_CASES, summarize
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
from loopmodel.workflows.confidence import REGIMES, assess, choose_band, regime_notes, regime_tags

VALIDATED = Path(__file__).parent / "fixtures" / "confidence" / "host_validated.yml"


def analysis(source: str, defines: dict, machine=SKX, **options):
    options.setdefault("incore", "analytic")
    model = load_machine(machine) if isinstance(machine, str) else machine
    kernel = parse_kernel(source, "k.c")[0]
    return Analyzer(kernel, model, AnalyzerSettings(**options)).run(defines)


def tags(source: str, defines: dict, machine=SKX, **options) -> tuple:
    res = analysis(source, defines, machine, **options)
    assert res.confidence.tags == regime_tags(res)  # the attached tags are the function's
    return res.confidence.tags


COPY = "double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i];\n"
TRIAD = "double a[N], b[N], c[N], d[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i] + c[i] * d[i];\n"
DOT = "double x[N], y[N];\ndouble s;\nfor (int i = 0; i < N; ++i)\n  s += x[i] * y[i];\n"
MATVEC = ("double A[M][N], x[N], y[M];\nfor (int j = 0; j < M; ++j)\n  for (int i = 0; i < N; ++i)\n"
          "    y[j] += A[j][i] * x[i];\n")
STENCIL_1D = "double a[N], b[N];\nfor (int i = 1; i < N-1; ++i)\n  b[i] = a[i-1] + a[i+1];\n"
GAUSS_SEIDEL = ("double x[M][N];\ndouble c;\nfor (int j = 1; j < M-1; ++j)\n  for (int i = 1; i < N-1; ++i)\n"
                "    x[j][i] = c * (x[j-1][i] + x[j][i-1] + x[j+1][i] + x[j][i+1]);\n")
UPDATE = "double a[N];\ndouble s;\nfor (int i = 0; i < N; ++i)\n  a[i] = s * a[i];\n"


def streams(n: int) -> str:
    names = [f"a{k}" for k in range(n)]
    return (f"double {', '.join(f'{x}[N]' for x in names)};\nfor (int i = 0; i < N; ++i)\n"
            f"  {names[0]}[i] = {' + '.join(f'{x}[i]' for x in names[1:])};\n")


def test_streaming_is_unit_stride_without_reuse():
    assert "streaming" in tags(COPY, {"N": 10000})
    assert "streaming" in tags(UPDATE, {"N": 10000})
    assert "streaming" not in tags(MATVEC, {"N": 1000, "M": 1000})  # x is reused by every row
    assert "streaming" not in tags(STENCIL_1D, {"N": 10000})
    assert "streaming" not in tags("double a[2*N], b[N];\nfor (int i = 0; i < N; ++i)\n  b[i] = a[2*i];\n",
                                   {"N": 10000})


def test_reduction_and_latency_bound():
    assert "reduction" in tags(DOT, {"N": 10000}) and "reduction" not in tags(COPY, {"N": 10000})
    assert "latency-bound" in tags(DOT, {"N": 10000}, reassociate=False)
    # partial sums in one vector accumulator (gcc -O3 -ffast-math): the FMA chain per 4 lanes still sets T_OL
    assert "latency-bound" in tags(DOT, {"N": 10000}, reassociate=True)
    assert "latency-bound" not in tags(TRIAD, {"N": 10000})


def test_stencil_and_in_place():
    assert "stencil" in tags(STENCIL_1D, {"N": 10000})
    assert "stencil" not in tags(TRIAD, {"N": 10000})
    gs = tags(GAUSS_SEIDEL, {"N": 1000, "M": 1000})
    assert "in-place" in gs and "stencil" in gs
    assert "in-place" not in tags(UPDATE, {"N": 10000})  # read and written at the same place: an update
    assert "in-place" not in tags(STENCIL_1D, {"N": 10000})


def test_strided():
    assert "strided" in tags("double a[2*N], b[N];\nfor (int i = 0; i < N; ++i)\n  b[i] = a[2*i];\n",
                             {"N": 10000})
    transposed = ("double a[N][N], b[N][N];\nfor (int j = 0; j < N; ++j)\n  for (int i = 0; i < N; ++i)\n"
                  "    b[j][i] = a[i][j];\n")
    assert "strided" in tags(transposed, {"N": 500})
    assert "strided" not in tags(COPY, {"N": 10000})


def test_split_loads_need_simd_and_an_offset_off_the_vector():
    shifted = "double a[N+8], b[N];\nfor (int i = 0; i < N; ++i)\n  b[i] = a[i+{}];\n"
    assert "split-loads" in tags(shifted.format(1), {"N": 10000})
    assert "split-loads" not in tags(shifted.format(8), {"N": 10000})  # 8 doubles: one AVX-512 vector
    assert "split-loads" not in tags(shifted.format(1), {"N": 10000}, vectorize=False)


def test_many_streams_counts_streams_not_accesses():
    assert "many-streams" in tags(streams(9), {"N": 10000})
    assert "many-streams" not in tags(streams(8), {"N": 10000})
    rows = ("double a[M][N], b[M][N];\nfor (int j = 4; j < M-4; ++j)\n  for (int i = 0; i < N; ++i)\n"
            "    b[j][i] = a[j-4][i] + a[j-3][i] + a[j-2][i] + a[j-1][i] + a[j][i] + a[j+1][i] + a[j+2][i]"
            " + a[j+3][i] + a[j+4][i];\n")
    assert "many-streams" in tags(rows, {"N": 10000, "M": 100})  # rows 80 kB apart: 9 + 1 streams
    assert "many-streams" not in tags(rows, {"N": 64, "M": 100})  # 9 rows in 4.6 kB: 2 pages, 1 + 1


def test_short_inner_loop():
    nest = ("double a[M][N], b[M][N];\nfor (int j = 0; j < M; ++j)\n  for (int i = 0; i < N; ++i)\n"
            "    a[j][i] = b[j][i];\n")
    assert "short-inner-loop" in tags(nest, {"N": 32, "M": 10000})
    assert "short-inner-loop" not in tags(nest, {"N": 1000, "M": 100})
    triangle = ("double a[N][N];\ndouble s;\nfor (int j = 0; j < N; ++j)\n  for (int i = 0; i < j; ++i)\n"
                "    s += a[j][i];\n")
    assert "short-inner-loop" in tags(triangle, {"N": 100})  # 50 iterations on average
    assert "short-inner-loop" not in tags(triangle, {"N": 1000})


def test_expensive_ops_and_compute_bound():
    divide = "double a[N], b[N], c[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i] / c[i];\n"
    got = tags(divide, {"N": 200})  # data in L1: no transfers, the divider sets the time
    assert "expensive-ops" in got and "compute-bound" in got
    assert "compute-bound" not in tags(TRIAD, {"N": 10 ** 7})  # memory-bound
    assert "expensive-ops" not in tags(TRIAD, {"N": 10 ** 7})


def test_single_precision():
    assert "single-precision" in tags(COPY.replace("double", "float"), {"N": 10000})
    assert "single-precision" not in tags(COPY, {"N": 10000})


def test_near_capacity_on_either_side_of_a_capacity():
    l2 = load_machine(SKX).memory_hierarchy[1].size  # triad: 32 B per iteration
    for n in (int(l2 / 32 / 1.4), int(l2 / 32 * 1.4)):
        assert "near-capacity" in tags(TRIAD, {"N": n}), n
    assert "near-capacity" not in tags(TRIAD, {"N": int(l2 / 32 / 2)})
    assert "near-capacity" in tags(TRIAD, {"N": int(l2 / 32)}, cache_predictor="sim")  # the data set vs the cache


def test_tags_come_in_vocabulary_order():
    got = tags(GAUSS_SEIDEL.replace("double", "float"), {"N": 40, "M": 1000})
    assert list(got) == [t for t in REGIMES if t in got] and len(got) >= 4


# ------------------------------------------------------------------------ the error band


def stats(n, p90, median=0.02):
    return {"count": n, "median_abs_error": median, "p90_abs_error": p90, "max_abs_error": max(p90, 0.5)}


def summary(**tables):
    return from_mapping({"overall": tables.get("overall"), "by_level": tables.get("by_level", {}),
                         "by_regime": tables.get("by_regime", {}), "by_level_regime": tables.get("pairs", {})})


def test_the_band_is_the_most_specific_entry_with_enough_cases_and_the_largest_p90():
    s = summary(overall=stats(100, 0.1), by_level={"L2": stats(40, 0.08)},
                by_regime={"stencil": stats(20, 0.3), "split-loads": stats(20, 0.35)},
                pairs={"L2/stencil": stats(MIN_CASES, 0.2), "L2/split-loads": stats(MIN_CASES, 0.12),
                       "L2/streaming": stats(MIN_CASES - 1, 0.9)})
    band, basis = choose_band(s, "L2", ("stencil", "split-loads", "streaming"))
    assert basis == "L2 / stencil" and band.p90 == 0.2  # the larger p90 of two pairs; 4 cases too few
    assert choose_band(s, "L3", ("stencil", "split-loads"))[1] == "split-loads"  # no L3 pair: the regime
    assert choose_band(s, "L2", ("streaming",))[1] == "L2"  # the pair has too few cases, no regime entry
    assert choose_band(s, "MEM", ("streaming",))[1] == "overall"
    few = summary(overall=stats(MIN_CASES - 1, 0.1), by_level={"L2": stats(MIN_CASES - 1, 0.1)})
    assert choose_band(few, "L2", ("stencil",)) == (None, None)
    assert choose_band(None, "L2", ("stencil",)) == (None, None)


def test_summarize_output_reads_back_as_a_band():
    cases = [("L1", ("streaming",), 0.01 * k) for k in range(10)]
    s = from_mapping(summarize(cases).to_mapping())
    band, basis = choose_band(s, "L1", ("streaming",))
    assert basis == "L1 / streaming" and band.count == 10 and band.p90 == pytest.approx(0.08)


def test_notes_warn_of_poor_regimes_from_validation_or_a_caution():
    s = summary(by_regime={"stencil": stats(10, 0.3), "streaming": stats(10, 0.05),
                           "short-inner-loop": stats(10, 0.05)},
                pairs={"L3/latency-bound": stats(MIN_CASES - 1, 0.6)})
    notes = regime_notes(s, "L3", ("stencil", "streaming", "latency-bound", "short-inner-loop"))
    assert notes[0].startswith("on this host, predictions in the stencil regime were off by up to 30 % (p90, n=10")
    assert len(notes) == 2 and notes[1].startswith("caution (latency-bound):")  # 4 cases: not quoted
    # without validation: cautions for the regimes known to be weak, never a figure
    notes = regime_notes(None, "L2", ("stencil", "short-inner-loop", "near-capacity"))
    assert [n.split(":")[0] for n in notes] == ["caution (short-inner-loop)", "caution (near-capacity)"]
    assert not any("%" in n for n in notes)
    assert regime_notes(None, "L2", ("streaming", "stencil")) == []


def test_assess_reads_the_machine_files_validation():
    machine = load_machine(str(VALIDATED))
    assert machine.probe.validation == from_mapping(machine.probe.raw["validation"])  # typed when read
    res = analysis(open(KERNELS / "2d-5pt.c").read(), {"N": 250, "M": 250}, machine)
    c = res.confidence
    assert (c.level, c.basis, c.band) == ("L2", "L2 / stencil", ErrorStats(8, 0.3, 0.42, 0.42))
    assert assess(res, False).band is None  # no validation: no band
    assert analysis(COPY, {"N": 100}).confidence.band is None  # a built-in model has none


# ------------------------------------------------------------------------ analyze's output


def test_analyze_prints_the_accuracy_line_and_the_regimes():
    args = ("analyze", KERNELS / "2d-5pt.c", "-m", VALIDATED, "-D", "N=250", "-D", "M=250", "--incore", "analytic")
    text = run_cli(*args)
    assert text.returncode == 0, text.stderr
    out = text.stdout
    line = "model accuracy on this host: median 30 %, p90 42 % for this regime (L2 / stencil, n=8)"
    assert line in out and out.index(line) > out.index("ECM prediction") and out.index(line) < out.index("Roofline")
    assert "regimes (data in L2): stencil, split-loads" in out
    assert "on this host, predictions in the stencil regime with data in L2 were off by up to 42 %" in out
    doc = json.loads(run_cli(*args, "--json").stdout)
    assert doc["confidence"]["band"] == {"basis": "L2 / stencil", "count": 8, "median_abs_error": 0.3,
                                         "p90_abs_error": 0.42, "max_abs_error": 0.42}
    assert doc["confidence"]["regimes"][:2] == ["stencil", "split-loads"] and doc["confidence"]["level"] == "L2"
    assert len(doc["confidence"]["notes"]) == 2


def test_analyze_without_validation_has_regimes_but_no_band():
    got = run_cli("analyze", KERNELS / "dot.c", "-m", SKX, "-D", "N=100000", "--no-reassociation", "--json")
    c = json.loads(got.stdout)["confidence"]
    assert c["band"] is None and "latency-bound" in c["regimes"]
    assert c["notes"] and c["notes"][0].startswith("caution (latency-bound)")


def test_a_strangers_validation_section_gives_no_tag_and_no_band():
    machine = load_machine(SKX)
    for probe in ({"validation": "none"}, {"validation": {"overall": {"count": "many"}}}):
        res = analysis(TRIAD, {"N": 10 ** 7}, dataclasses.replace(machine, probe=probe_section(probe)))
        assert "memory-noisy" not in res.confidence.tags and res.confidence.band is None


@pytest.mark.skipif(shutil.which("gcc") is None or find_llvm_mca() is None, reason="gcc and llvm-mca needed")
def test_restructured_when_the_compiler_changed_the_nest():
    """gcc -O3 on Skylake-SP vectorizes the ijk matrix product across j (an outer loop): the
    compiled block is refused, the analytic model predicts the loop as written, and the
    ``restructured`` tag with its caution says so; a plain triad compiles as written."""
    matmul = ("double A[N][N], B[N][N], C[N][N];\nfor (int i = 0; i < N; ++i)\n  for (int j = 0; j < N; ++j)\n"
              "    for (int k = 0; k < N; ++k)\n      C[i][j] += A[i][k]*B[k][j];\n")
    res = analysis(matmul, {"N": 500}, incore="auto", models=("ECM",), kernel_text=matmul)
    assert res.compiled is None and "restructured" in res.confidence.tags
    assert any(n.startswith("caution (restructured)") for n in res.confidence.notes)
    res = analysis(TRIAD, {"N": 10000}, incore="auto", models=("ECM",), kernel_text=TRIAD)
    assert "restructured" not in res.confidence.tags
