"""A sweep evaluated piece by piece (:mod:`loopmodel.workflows.pieces`) gives, at every point, the
figures of analysing that point alone.

The invariant: for every point of a sweep, the JSON document of its piece's result equals the
document of :meth:`Analyzer.run` at the point, except the fields that name the point's own sizes
(``defines``, the byte counts of the layer-condition requirements and of the data set, and the
numbers in notes). Property tests draw random affine kernels, the bundled machines and size ranges
that cross the layer-condition transitions and the short-loop counts.
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernel_strategies as ks
from helpers import IVB, KERNELS, SKX

from loopmodel.errors import EmptyPointError
from loopmodel.fileio.c_kernel import parse_kernel
from loopmodel.fileio.defines import Sweep
from loopmodel.fileio.machine_files import load_machine
from loopmodel.report.json_report import to_dict
from loopmodel.workflows import analyze as workflow
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
from loopmodel.ir.point import check_point
from loopmodel.workflows.pieces import empty_points, piecewise, point_columns, why_not_piecewise

SIZE_FIELDS = {"defines", "requirement_B", "data_set_B"}
NUMBER = re.compile(r"\d+(\.\d+)?( ?[KMGT]?i?B\b)?")


def masked(doc):
    """``doc`` without the fields that name the point's own sizes, numbers in text replaced by '#'."""
    if isinstance(doc, dict):
        return {k: masked(v) for k, v in doc.items() if k not in SIZE_FIELDS}
    if isinstance(doc, list):
        return [masked(v) for v in doc]
    if isinstance(doc, str):
        return NUMBER.sub("#", doc)
    return doc


def _empty_indices(kernel, points) -> list:
    """The points at which ``kernel`` does nothing, by the exact check (:func:`check_point`)."""
    out = []
    for i, pt in enumerate(points):
        try:
            check_point(kernel, pt)
        except EmptyPointError:
            out.append(i)
    return out


def check_against_points(analyzer, points, machine) -> int:
    """Assert the invariant for every point of ``points`` at which the kernel runs, each point
    analysed alone by a new :class:`Analyzer` of the same settings on ``machine`` (the model as given,
    not ``analyzer.machine``, which is the compiler's view of it at its vector width; nothing remembered from other
    points), and that exactly the points at which it does nothing are left out and counted;
    returns the number of pieces (0: the sweep was analysed point by point)."""
    skipped = workflow.SkippedPoints()
    pieces, why = piecewise(analyzer, points, skipped)
    empty = _empty_indices(analyzer.kernel, points)
    if pieces is None:
        assert why and skipped.count == 0
        return 0
    assert skipped.count == len(empty) and (skipped.first is None) == (not empty)
    kept = [i for i in range(len(points)) if i not in set(empty)]
    docs = [masked(to_dict(r)) for r in pieces.results]
    assert len(pieces.piece) == len(kept)
    for j, i in enumerate(kept):
        pt = points[i]
        for name, col in pieces.columns.items():
            assert col[j] == pt[name]
        alone = Analyzer(analyzer.kernel, machine, analyzer.options)
        own = masked(to_dict(alone.run(pt)))
        assert own == docs[pieces.piece[j]], (i, pt)
    for k, first in enumerate(pieces.first):  # a piece's result is its first point's
        assert pieces.piece[first] == k and pieces.results[k].defines == points[kept[int(first)]]
    return len(pieces.first)


def _sweep(case, defines: dict, name: str, lo: int, hi: int, count: int) -> Sweep:
    step = max(1, (hi - lo) // count)
    return Sweep({name: range(lo, hi, step)}, {k: v for k, v in defines.items() if k != name})


@settings(ks.PROPERTY_SETTINGS, max_examples=60)
@given(st.data())
def test_pieces_give_each_points_own_figures(data):
    """Random kernels, machines, one size swept over 30-60 points from a short inner loop to
    memory-sized data sets (or a narrow range around a random size), constant strides and
    transposed reads (whose stride is a size: analysed point by point): the piece of every point
    carries the point's own figures."""
    case = data.draw(ks.kernels(strided=data.draw(st.booleans())))
    machine = data.draw(ks.machines())
    split = data.draw(st.sampled_from((0.0, 0.0, 0.5, 1.0)))  # the probe's extra cost of a split access
    machine = dataclasses.replace(machine, in_core=dataclasses.replace(
        machine.in_core, load=dataclasses.replace(machine.in_core.load, split_extra=split),
        store=dataclasses.replace(machine.in_core.store, split_extra=split)))
    defines = data.draw(ks.sizes(case))
    name = data.draw(st.sampled_from(case.sizes))
    halo = case.halos[case.sizes.index(name)]
    if data.draw(st.booleans()):  # from a size at which the kernel may do nothing (a loop or an array empty)
        lo, hi = data.draw(st.integers(0, 2 * halo + 1)), data.draw(st.integers(100, 200_000))
    else:
        lo = max(2 * halo + 1, defines[name] // 2)
        hi = lo + data.draw(st.integers(30, 3 * lo + 60))
    points = _sweep(case, defines, name, lo, hi, data.draw(st.integers(30, 60)))
    cores = 1
    settings_ = AnalyzerSettings(incore="analytic", kernel_text=case.source, cores=cores,
                                 sweeps=data.draw(st.sampled_from(("repeated", "single"))),
                                 cache_factor=data.draw(st.sampled_from((1.0, 0.5))),
                                 incore_defines=points.largest())
    analyzer = Analyzer(case.kernel, machine, settings_)
    reason = why_not_piecewise(analyzer, points)
    assert check_against_points(analyzer, points, machine) >= 1 or reason in (
        "a stride depends on the sizes", "the data traffic comes from cache simulation")


@pytest.mark.parametrize("kernel, defines", [
    ("2d-5pt.c", ("M=1000", "N=3:4000:7")),
    ("3d-long-range.c", ("M=50", "N=9:700:3")),
    ("3d-7pt.c", ("M=3:12:4", "N=3:900:3")),  # two sizes swept: pieces per M
    ("daxpy.c", ("N=1:3000:1",)),
    ("matvec.c", ("M=100", "N=1:2000:13")),
    ("uxx.c", ("N=5:800:3",)),
    ("box27.c", ("L=3:400:2",)),
])
def test_bundled_kernels_piecewise(kernel, defines):
    """The bundled kernels over sweeps with layer-condition transitions and short inner loops: the
    pieces are fewer than the points, and every point's figures are its piece's."""
    run = workflow.run(str(KERNELS / kernel), IVB, workflow.AnalyzeOptions(define=defines, incore="analytic"))
    count = check_against_points(run.analyzer, run.points, load_machine(IVB))
    assert 0 < count < len(run.points) / 2


def test_the_points_where_the_kernel_does_nothing_are_skipped_with_one_note():
    """2d-5pt from N=1: its loop 'i' is empty at N <= 2. A sweep stopped there with no rows
    (``--json compact`` over N=1:1000000 exited 2); the empty points are now left out of the pieces
    and the streamed results alike, counted in one note, and the other points analysed."""
    run = workflow.run(str(KERNELS / "2d-5pt.c"), IVB, workflow.AnalyzeOptions(define=("M=100", "N=1:50:1")))
    pieces, why = run.pieces()
    assert why is None and pieces.columns["N"].tolist() == list(range(3, 51)) and run.skipped.count == 2
    assert run.note().startswith("2 of 50 points skipped: the kernel does nothing there (the first: ")
    assert "loop 'i' runs no iteration at M=100, N=1" in run.note()
    streamed = workflow.run(str(KERNELS / "2d-5pt.c"), IVB, workflow.AnalyzeOptions(define=("M=100", "N=1:50:1")))
    assert [r.defines["N"] for r in streamed.results()] == list(range(3, 51)) and streamed.note() == run.note()


@pytest.mark.parametrize("extra", [("--json", "compact"), ("--json",), ()])
def test_a_sweep_from_an_empty_point_goes_on_on_the_command_line(extra):
    """``analyze 2d-5pt.c -D M=1000 -D N=1:10:1``: every output of a sweep gives the 8 points at which
    the kernel runs and one note (JSON Lines: on standard error); a single empty point, and a sweep
    of empty points only, are refused as before."""
    import json

    from helpers import run_cli

    args = ("analyze", KERNELS / "2d-5pt.c", "-m", SKX, "-D", "M=1000", "--incore", "analytic")
    res = run_cli(*args, "-D", "N=1:10:1", *extra)
    assert res.returncode == 0, res.stderr
    note = "2 of 10 points skipped: the kernel does nothing there (the first: "
    if extra == ("--json", "compact"):
        doc = json.loads(res.stdout)
        assert doc["columns"]["N"] == list(range(3, 11)) and doc["points"] == 8 and doc["skipped_points"] == 2
        assert doc["skipped_note"].startswith(note)
    elif extra:
        assert [json.loads(line)["defines"]["N"] for line in res.stdout.splitlines()] == list(range(3, 11))
        assert res.stderr.count(note) == 1
    else:
        assert res.stdout.count(note) == 1 and res.stdout.count("│ 1000 │") == 8
    for sizes in ("N=1", "N=1:2:1"):
        bad = run_cli(*args, "-D", sizes, *extra)
        assert bad.returncode == 2 and "loop 'i' runs no iteration at M=1000, N=1" in bad.stderr


@settings(ks.PROPERTY_SETTINGS, max_examples=40)
@given(st.data())
def test_a_streamed_sweep_gives_exactly_the_points_where_the_kernel_runs(data):
    """Random kernels and machines, one size swept from 0: the streamed results (text rows, JSON
    Lines) are those of the points :func:`check_point` accepts, in order, and the note counts the
    others; :func:`empty_points` (the vectorised check of the pieces) marks the same points."""
    case = data.draw(ks.kernels())
    machine = data.draw(ks.machines())
    defines = data.draw(ks.sizes(case, large=1e6))
    name = data.draw(st.sampled_from(case.sizes))
    points = Sweep({name: range(0, data.draw(st.integers(1, 12)))}, {k: v for k, v in defines.items() if k != name})
    analyzer = Analyzer(case.kernel, machine, AnalyzerSettings(incore="analytic", kernel_text=case.source))
    run = workflow.AnalyzeRun(analyzer, points, ("LC", "ECM", "Roofline"))
    empty = _empty_indices(case.kernel, points)
    assert np.flatnonzero(empty_points(case.kernel, point_columns(points), len(points))).tolist() == empty
    if len(empty) == len(points):
        with pytest.raises(EmptyPointError):
            list(run.results())
        return
    got = [r.defines for r in run.results()]
    assert got == [points[i] for i in range(len(points)) if i not in empty]
    assert (run.note() is None) == (not empty) and run.skipped.count == len(empty)


@pytest.mark.parametrize("options, reason", [
    ({"cache_predictor": "sim"}, "cache simulation"),
    ({"cores": 2}, "several cores"),
])
def test_what_is_not_piecewise_says_why(options, reason):
    run = workflow.run(str(KERNELS / "2d-5pt.c"), IVB,
                       workflow.AnalyzeOptions(define=("M=100", "N=10:20:1"), incore="analytic", **options))
    assert reason in why_not_piecewise(run.analyzer, run.points)


def test_point_columns_follow_the_sweep_order():
    """The last constant varies fastest, as :class:`Sweep` iterates."""
    points = Sweep({"M": range(1, 4), "N": [5, 7]}, {"K": 2})
    cols = point_columns(points)
    assert [{k: int(cols[k][i]) for k in cols} for i in range(len(points))] == list(points)
    assert cols["N"].dtype == np.int64


def test_compact_json_holds_the_json_lines_figures(tmp_path):
    """``analyze --json compact`` and ``--json`` (JSON Lines) of one sweep: the columns name every
    point in sweep order, and each point's piece carries its JSON Lines document (masked as above)."""
    import json

    from helpers import run_cli

    from loopmodel.report.doctypes import check

    args = ("analyze", KERNELS / "2d-5pt.c", "-m", IVB, "-D", "M=500", "-D", "N=3:600:3", "--incore", "analytic")
    lines = [json.loads(line) for line in run_cli(*args, "--json").stdout.splitlines()]
    res = run_cli(*args, "--json", "compact")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert check("analyze-compact", doc) == []
    assert doc["points"] == len(lines) and doc["piecewise"] and doc["constants"] == {"M": 500}
    assert doc["columns"]["N"] == [d["defines"]["N"] for d in lines]
    pieces = [masked(p["result"]) for p in doc["pieces"]]
    assert [masked(d) for d in lines] == [pieces[k] for k in doc["columns"]["piece"]]
    assert sum(p["points"] for p in doc["pieces"]) == len(lines) > 3 * len(pieces)
    assert json.loads(run_cli(*args, "--json=compact").stdout) == doc


def test_compact_json_of_a_sweep_analysed_point_by_point_says_why():
    import json

    from helpers import run_cli

    res = run_cli("analyze", KERNELS / "2d-5pt.c", "-m", IVB, "-D", "M=50", "-D", "N=10:14:1", "--incore", "analytic",
                  "--cores", "2", "--json", "compact")
    doc = json.loads(res.stdout)
    assert not doc["piecewise"] and "several cores" in doc["piecewise_note"]
    assert doc["columns"]["piece"] == [0, 1, 2, 3, 4] and len(doc["pieces"]) == 5
    bad = run_cli("analyze", KERNELS / "2d-5pt.c", "-m", IVB, "-D", "N=10:14:1", "-D", "M=50", "--json", "compact",
                  "--plot", "x.png")
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1 and "--plot" in bad.stderr


def test_a_point_of_a_sweep_has_the_split_accesses_of_its_own_sizes():
    """The analytic in-core model charges split vector accesses from the sizes (row length modulo
    the line): 2d-5pt at N=1001 in the sweep N=1000:1003 had the in-core times of N=1000 (on this host
    T_OL 2.14 instead of 2.19 cy/CL, split_extra about 1): the first point's in-core result was
    reused for every point."""
    machine = ks.load(SKX)
    machine = dataclasses.replace(machine, in_core=dataclasses.replace(
        machine.in_core, load=dataclasses.replace(machine.in_core.load, split_extra=1.0)),
        compiler={"gcc": machine.compiler["gcc"] + " -mprefer-vector-width=512"})  # 64 B vectors: rows differ
    text = (KERNELS / "2d-5pt.c").read_text()
    kernel, _ = parse_kernel(text, "2d-5pt.c")
    settings_ = AnalyzerSettings(incore="analytic", kernel_text=text)
    sweep = Analyzer(kernel, machine, settings_)
    def times(res):
        return res.incore.T_OL, res.incore.T_nOL
    in_sweep = {n: times(sweep.run({"M": 1000, "N": n})) for n in (1000, 1001, 1002, 1003)}
    alone = {n: times(Analyzer(kernel, machine, settings_).run({"M": 1000, "N": n})) for n in in_sweep}
    assert in_sweep == alone and len(set(in_sweep.values())) > 1


def test_api_compact_sweep_matches_the_command_line():
    """``loopmodel.sweep(..., compact=True)``: the points and pieces of ``analyze --json compact``."""
    import json

    import loopmodel
    from helpers import run_cli

    from loopmodel.errors import ApiValueError

    res = loopmodel.sweep(str(KERNELS / "2d-5pt.c"), IVB, {"M": 500, "N": range(3, 600, 3)}, incore="analytic",
                          compact=True)
    doc = json.loads(run_cli("analyze", KERNELS / "2d-5pt.c", "-m", IVB, "-D", "M=500", "-D", "N=3:597:3",
                             "--incore", "analytic", "--json", "compact").stdout)
    assert res.piecewise and dict(res.constants) == {"M": 500}
    assert res.points["N"].tolist() == doc["columns"]["N"] and res.points["piece"].tolist() == doc["columns"]["piece"]
    assert res.pieces["points"].tolist() == [p["points"] for p in doc["pieces"]]
    mem = [p["result"]["ecm"]["T_ECM_cy_per_cl"]["MEM"] for p in doc["pieces"]]
    assert res.pieces["ecm.T_ECM_cy_per_cl.MEM"].tolist() == mem
    with pytest.raises(ApiValueError):
        loopmodel.sweep(str(KERNELS / "2d-5pt.c"), IVB, {"M": 5, "N": 9}, compact=True, output="x.csv")
