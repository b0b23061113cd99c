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

from loopmodel.errors import ModelError
from loopmodel.fileio.c_kernel import parse_kernel
from loopmodel.fileio.defines import Sweep
from loopmodel.report.json_report import to_dict
from loopmodel.workflows import analyze as workflow
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
from loopmodel.workflows.pieces import piecewise, point_columns, why_not_piecewise

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


def check_against_points(analyzer, points) -> int:
    """Assert the invariant for every point of ``points``, each point analysed alone by a new
    :class:`Analyzer` of the same settings (nothing remembered from other points); returns the
    number of pieces (0: the sweep was analysed point by point, and then some point cannot run)."""
    pieces, why = piecewise(analyzer, points)
    if pieces is None:
        assert why
        if why.startswith("the kernel cannot run"):
            with pytest.raises(ModelError):
                for pt in points:
                    analyzer.run(pt)
        return 0
    docs = [masked(to_dict(r)) for r in pieces.results]
    assert len(pieces.piece) == len(points)
    for i, pt in enumerate(points):
        for name, col in pieces.columns.items():
            assert col[i] == pt[name]
        alone = Analyzer(analyzer.kernel, analyzer.machine, analyzer.options)
        own = masked(to_dict(alone.run(pt)))
        assert own == docs[pieces.piece[i]], (i, pt)
    for k, first in enumerate(pieces.first):  # a piece's result is its first point's
        assert pieces.piece[first] == k and pieces.results[k].defines == points[int(first)]
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
    if data.draw(st.booleans()):
        lo, hi = 2 * halo + 1, data.draw(st.integers(100, 200_000))
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
    assert check_against_points(analyzer, points) >= 1 or reason in (
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
    count = check_against_points(run.analyzer, run.points)
    assert 0 < count < len(run.points) / 2


def test_a_point_that_cannot_run_is_analysed_on_its_own():
    """2d-5pt from N=1: its loops are empty at N <= 2; the sweep is analysed point by point and
    the first such point is refused as on its own."""
    run = workflow.run(str(KERNELS / "2d-5pt.c"), IVB, workflow.AnalyzeOptions(define=("M=100", "N=1:50:1")))
    pieces, why = piecewise(run.analyzer, run.points)
    assert pieces is None and why == "the kernel cannot run at some of the points"


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
