"""The nest the compiler runs (:mod:`loopmodel.fileio.interchange`, :mod:`loopmodel.workflows.executed`).

* Invariant (hypothesis, random two-loop kernels, strided and transposed reads included): the
  interchanged nest does the same work: the same accesses, operations per iteration and
  iterations in all at any sizes, its loops in the other order; interchanging twice gives the
  nest back.
* Only rectangular unit-step two-loop nests are interchanged.
* With gcc: a column-wise stencil, which gcc interchanges (its optimisation report says so), is
  analysed in the executed order: ``analyze`` (default ``--incore auto``) gives the figures of
  the row-wise text gcc runs, with a note; ``--incore analytic`` (no compiler) keeps the nest
  as written.
"""
from __future__ import annotations

import json
import math
import shutil

import pytest
from hypothesis import given, settings, strategies as st

import kernel_strategies as ks
from helpers import run_cli
from loopmodel.fileio.c_kernel import parse_kernel
from loopmodel.fileio.interchange import can_interchange, interchanged

COLUMN = ("double a[M][N];\ndouble b[M][N];\nfor (int i = 1; i < N - 1; ++i)\n  for (int j = 1; j < M - 1; ++j)\n"
          "    b[j][i] = (a[j][i - 1] + a[j][i + 1] + a[j - 1][i] + a[j + 1][i]) * 0.25;\n")


def _work(kernel, sizes) -> tuple:
    total = math.prod(lp.iterations(sizes) for lp in kernel.loops)
    return ({str(a) for a in kernel.reads}, {str(a) for a in kernel.writes}, dict(kernel.operations), total)


@settings(ks.PROPERTY_SETTINGS, max_examples=80)
@given(st.data())
def test_the_interchanged_nest_does_the_same_work(data):
    case = data.draw(ks.kernels(dims=(2, 3), strided=data.draw(st.booleans())))
    kernel = case.kernel
    if not can_interchange(kernel):
        return
    sizes = data.draw(ks.sizes(case, large=1e6))
    new, text = interchanged(kernel)
    written = kernel.loop_indices
    assert new.loop_indices == written[:-2] + (written[-1], written[-2]) and new.source == kernel.source
    assert _work(new, sizes) == _work(kernel, sizes)
    back, _ = interchanged(new)
    assert back.loop_indices == kernel.loop_indices and back.code == kernel.code
    assert parse_kernel(text, "again")[0].code == new.code  # the printed text is a fixed point


@pytest.mark.parametrize("source", [
    COLUMN.replace("for (int j = 1; j < M - 1; ++j)", "for (int j = i; j < M - 1; ++j)"),  # triangular
    COLUMN.replace("++i", "i += 2"),
    "double a[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = 1.0;\n",
    "double a[L][M][N];\nfor (int k = 0; k < L; ++k)\n  for (int j = 0; j < M; ++j)\n"
    "    for (int i = j; i < N; ++i)\n      a[k][j][i] = 1.0;\n",  # the inner pair triangular
])
def test_only_unit_step_nests_with_a_rectangular_inner_pair_are_interchanged(source):
    kernel, _ = parse_kernel(source, "k.c")
    assert not can_interchange(kernel)
    with pytest.raises(ValueError):
        interchanged(kernel)


def _analyze(path, *extra) -> dict:
    p = run_cli("analyze", path, "-m", "SkylakeSP_Gold-6148", "-D", "M=1000", "-D", "N=1000", "--json", *extra)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def _figures(doc) -> tuple:
    return (doc["traffic"], doc["ecm"]["T_ECM_cy_per_cl"], doc["kernel"]["loops"])


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_a_nest_gcc_interchanges_is_analysed_as_gcc_runs_it(tmp_path):
    column = tmp_path / "column.c"
    column.write_text(COLUMN)
    row = tmp_path / "row.c"
    row.write_text(interchanged(parse_kernel(COLUMN, "column.c")[0])[1])
    followed, executed = _analyze(column), _analyze(row)
    assert [lp["index"] for lp in followed["kernel"]["loops"]] == ["j", "i"]
    assert _figures(followed) == _figures(executed)
    assert any(n.startswith("analysed as compiled: gcc interchanges the loops") and "order j, i, not i, j" in n
               for n in followed["notes"])
    written = _analyze(column, "--incore", "analytic")
    assert [lp["index"] for lp in written["kernel"]["loops"]] == ["i", "j"]
    assert not any("analysed as compiled" in n for n in written["notes"])


MATVEC_COLUMNS = "double A[N][M];\ndouble x[N];\ndouble y[M];\nfor (int j = 0; j < M; ++j)\n" \
                 "  for (int i = 0; i < N; ++i)\n    y[j] += A[i][j] * x[i];\n"
MATMAT_IJK = "double A[M][N];\ndouble B[N][N];\ndouble C[M][N];\nfor (int i = 0; i < M; ++i)\n" \
             "  for (int j = 0; j < N; ++j)\n    for (int k = 0; k < N; ++k)\n      C[i][j] += A[i][k] * B[k][j];\n"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("source,order", [(MATVEC_COLUMNS, ["i", "j"]), (MATMAT_IJK, ["i", "k", "j"])])
def test_a_loop_gcc_vectorises_around_the_inner_one_is_analysed_as_the_swapped_nest(tmp_path, source, order):
    """gcc 12 -O3 vectorises j around the inner reduction loop (its report: the loop of j
    vectorised, the inner one not): the analysis is that of the nest with the two innermost
    loops swapped, confirmed by compiling it (its inner loop vectorised), with the note."""
    path = tmp_path / "k.c"
    path.write_text(source)
    swapped = tmp_path / "swapped.c"
    swapped.write_text(interchanged(parse_kernel(source, "k.c")[0])[1])
    followed, executed = _analyze(path), _analyze(swapped)
    assert [lp["index"] for lp in followed["kernel"]["loops"]] == order
    assert _figures(followed) == _figures(executed)
    assert any(n.startswith("analysed as compiled: gcc vectorises loop j around the inner loop") and
               f"order {', '.join(order)} does" in n for n in followed["notes"])
