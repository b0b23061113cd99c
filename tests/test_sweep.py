"""`loopmodel sweep`: study files and their errors, the product of points, rows equal to
`analyze --json` point by point (on a 2-worker LocalCluster), error rows, CSV and Parquet
output, no overwriting, the result cache, the study plot call, dask imported lazily."""
from __future__ import annotations

import contextlib
import dataclasses
import json
import subprocess
import sys
import textwrap

import pytest
from helpers import run_cli

import loopmodel
import loopmodel.workflows.study as st
import loopmodel.workflows.sweep as sw
import loopmodel.workflows.sweep_dask as sweep_dask
from loopmodel.cli import main
from loopmodel.fileio.result_file import RowBatch
from loopmodel.report.schema import SCHEMA_VERSION
from loopmodel.workflows.analyze import AnalyzeOptions

EXAMPLE = "examples/studies/stencil-sizes.yml"
KERNELS = "examples/kernels"


def write_study(tmp_path, text: str, name: str = "study.yml") -> str:
    """A study file in ``tmp_path`` whose kernels are the bundled examples (absolute paths)."""
    from pathlib import Path

    p = tmp_path / name
    p.write_text(textwrap.dedent(text).replace("KERNELS", str(Path(KERNELS).resolve())))
    return str(p)


TINY = """\
    kernels: [KERNELS/daxpy.c, KERNELS/2d-5pt.c]
    machines: [SkylakeSP_Gold-6148]
    defines: {N: "1000:2000:1000", M: 300}
    options: {incore: [analytic], cores: [1, 1000]}
"""


@pytest.fixture
def in_process(monkeypatch):
    """The CLI computes in this process instead of starting a local cluster (fast tests)."""
    monkeypatch.setattr(sweep_dask, "dask_client", lambda address=None, workers=None: contextlib.nullcontext(None))


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LOOPMODEL_NO_CACHE", raising=False)


def analyze_flat(capsys, row: dict, study: st.Study, kernel_path: str) -> dict:
    """``loopmodel analyze KERNEL -m MACHINE -D ... --json`` for a row's point, flattened."""
    argv = ["analyze", kernel_path, "-m", row["machine"], "--json"]
    argv += [f"-D{n}={row[n]}" for n in study.defines if row[n] is not None]
    argv += [f"--{n.replace('_', '-')}={row[n]}" for n in study.options]
    capsys.readouterr()
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    return sw.flatten({k: v for k, v in doc.items() if k not in ("schema_version", "loopmodel_version")})


def assert_row_is_analyze(capsys, row: dict, study: st.Study) -> None:
    kernel = next(k for k in study.kernels if k.given == row["kernel"])
    flat = analyze_flat(capsys, row, study, kernel.path)
    assert row["error"] is None
    for key, value in flat.items():
        assert row[key] == value, key
    for key in set(row) - set(flat) - set(study.columns()):
        assert row[key] is None, key  # another kernel's field


# ---------------------------------------------------------------- study files


def test_example_study_is_read():
    s = st.read_study(EXAMPLE)
    assert [k.given for k in s.kernels] == ["../kernels/daxpy.c", "../kernels/2d-5pt.c"]
    assert s.kernels[0].path == "examples/kernels/daxpy.c" and s.kernels[1].constants == {"M", "N"}
    assert {n: tuple(v) for n, v in s.defines.items()} == {"N": (1000, 2000, 3000, 4000, 5000), "M": (500,)}
    assert s.options == {"cache_predictor": ("lc", "sim"), "incore": ("analytic",)}
    assert s.settings == {"cache_predictor": ("lc", "sim"), "incore": ("analytic",)}
    assert s.points() == 2 * 2 * 5 + 2 * 2 * 5 and s.varying_define() == "N"
    assert s.columns() == ("kernel", "machine", "N", "M", "cache_predictor", "incore", "error")


@pytest.mark.parametrize("body, where, words", [
    ("kernels: [KERNELS/daxpy.c]\nmachines: [SkylakeSP_Gold-6148]\nsizes: {N: 1}\n", "sizes", "unknown key"),
    ("machines: [SkylakeSP_Gold-6148]\n", "kernels", "non-empty list"),
    ("kernels: [nope.c]\nmachines: [SkylakeSP_Gold-6148]\n", "kernels[0]", "nope.c"),
    ("kernels: [KERNELS/daxpy.c]\nmachines: [NoSuchMachine]\n", "machines[0]", "unknown machine"),
    ("kernels: [KERNELS/daxpy.c]\nmachines: [SkylakeSP_Gold-6148]\ndefines: {N: '10:5'}\n", "defines.N", "below"),
    ("kernels: [KERNELS/daxpy.c]\nmachines: [SkylakeSP_Gold-6148]\ndefines: {N: [1.5]}\n", "defines.N", "size"),
    ("kernels: [KERNELS/daxpy.c]\nmachines: [SkylakeSP_Gold-6148]\noptions: {colour: [red]}\n", "options.colour",
     "unknown analyze option"),
    ("kernels: [KERNELS/daxpy.c]\nmachines: [SkylakeSP_Gold-6148]\noptions: {cache_predictor: [lc, foo]}\n",
     "options.cache_predictor[1]", "invalid choice"),
    ("kernels: [KERNELS/daxpy.c]\nmachines: [SkylakeSP_Gold-6148]\noptions: {nt_stores: [maybe]}\n",
     "options.nt_stores[0]", "true or false"),
    ("kernels: [KERNELS/daxpy.c]\nmachines: [SkylakeSP_Gold-6148]\noptions: {pmodel: [ECM, Foo]}\n",
     "options.pmodel[1]", "unknown model"),
    ("kernels: [KERNELS/daxpy.c]\nmachines: [SkylakeSP_Gold-6148]\ndefines: {cores: 1}\noptions: {cores: [1]}\n",
     "defines.cores", "name of a column"),
])
def test_bad_study_is_one_line_naming_file_and_key(tmp_path, body, where, words):
    path = write_study(tmp_path, body)
    with pytest.raises(st.StudyError) as exc:
        st.read_study(path)
    text = str(exc.value)
    assert text.startswith(f"{path}: {where}: ") and words in text and "\n" not in text


def test_yaml_error_and_cli_exit(tmp_path, capsys):
    path = write_study(tmp_path, "kernels: [a\n")
    assert main(["sweep", path]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"loopmodel: {path}:") and "not valid YAML" in err and "\n" not in err


def test_options_are_read_as_analyze_reads_them():
    def value(name, v):
        return st.option_value(name, v, "s.yml", f"options.{name}[0]")

    assert value("nt_stores", True) is True and value("nt_stores", False) is False
    assert value("reassociate", False) is False and value("reassociate", None) is None
    assert value("pmodel", ["LC", "ECM"]) == ("LC", "ECM") and value("pmodel", "ECM") == ("ECM",)
    assert value("compiler_flags", "-O3 -ffast-math") == "-O3 -ffast-math"
    assert value("cache_predictor", "SIM") == "sim" and value("cores", 4) == 4 and value("cores", None) == 1
    for name, v, message in (("cores", "x", "argument --cores/-c: invalid int value: 'x'"),
                             ("cores", [1], "expected a single value, got [1]"),
                             ("reassociate", "yes", "expected one of true, false or null, got 'yes'"),
                             ("incore", "iaca", "argument --incore/-i/--incore-model: IACA is not supported "
                                                "(choose OSACA, LLVM-MCA or analytic)")):
        with pytest.raises(st.StudyError) as exc:
            value(name, v)
        assert str(exc.value) == f"s.yml: options.{name}[0]: {message}"
    assert {"cache_predictor", "incore", "cores", "sweeps", "clock"} <= st.option_names()
    assert not {"json", "unit", "machine", "define", "verbose"} & st.option_names()
    aliases = st.option_aliases()
    assert aliases["incore_model"] == "incore" and aliases["mem_bw"] == "mem_bw" and "no_reassociation" not in aliases


def test_option_spellings(tmp_path):
    study = st.read_study(write_study(tmp_path, """\
        kernels: [KERNELS/daxpy.c]
        machines: [SkylakeSP_Gold-6148]
        options: {incore-model: [analytic], reassociate: [false], nt_stores: [true, false]}
    """))
    assert study.options == {"incore": ("analytic",), "reassociate": (False,), "nt_stores": (True, False)}
    expected = AnalyzeOptions(incore="analytic", reassociate=False, nt_stores=True)
    assert [c.analysis for c in sw.chunks(study)] == [expected, dataclasses.replace(expected, nt_stores=False)]


# ---------------------------------------------------------------- points


def test_each_kernel_gets_only_its_defines(tmp_path):
    study = st.read_study(write_study(tmp_path, """\
        kernels: [KERNELS/daxpy.c, KERNELS/2d-5pt.c]
        machines: [SkylakeSP_Gold-6148, HaswellEP_E5-2695v3]
        defines: {N: [100, 200, 300], M: "10:20:10"}
        options: {cache_predictor: [lc, sim]}
    """))
    tasks = list(sw.chunks(study))
    daxpy = [p for c in tasks if c.kernel.given.endswith("daxpy.c") for p in c.points]
    stencil = [p for c in tasks if c.kernel.given.endswith("2d-5pt.c") for p in c.points]
    assert len(daxpy) == 2 * 2 * 3 and all(set(p) == {"N"} for p in daxpy)
    assert len(stencil) == 2 * 2 * 6 and all(set(p) == {"M", "N"} for p in stencil)
    assert study.points() == len(daxpy) + len(stencil)
    assert [p for c in tasks[:1] for p in c.points] == [{"N": 100}, {"N": 200}, {"N": 300}]
    assert stencil[:3] == [{"N": 100, "M": 10}, {"N": 100, "M": 20}, {"N": 200, "M": 10}]  # last fastest
    assert [c.options for c in tasks[:2]] == [(("cache_predictor", "lc"),), (("cache_predictor", "sim"),)]
    small = list(sw.chunks(study, size=2))
    assert [len(c.points) for c in small[:2]] == [2, 1] and [c.index for c in small] == list(range(len(small)))


def test_flatten():
    doc = {"a": {"b": 1, "c": {"d": None}}, "e": [1, {"f": 2}], "g": {}, "h": "x"}
    assert sw.flatten(doc) == {"a.b": 1, "a.c.d": None, "e": '[1, {"f": 2}]', "g": "{}", "h": "x"}


# ---------------------------------------------------------------- running


def test_two_worker_cluster_rows_equal_analyze_point_by_point(tmp_path, capsys, fresh_cache):
    import psutil

    study = st.read_study(write_study(tmp_path, TINY))
    with sweep_dask.dask_client(workers=2) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        table, stats = sw.run_study(study, client)
    # the cluster's processes are gone (multiprocessing's resource tracker lives as long as this process)
    left = [p.cmdline() for p in psutil.Process().children(recursive=True)]
    assert not [c for c in left if "resource_tracker" not in " ".join(c)], left
    rows = table.rows()
    assert stats.points == len(rows) == 2 * (2 + 2) and stats.tasks > 1
    good = [r for r in rows if r["cores"] == 1]
    assert len(good) == 4 and [(r["kernel"].rsplit("/", 1)[1], r["N"], r["M"]) for r in good] == [
        ("daxpy.c", 1000, None), ("daxpy.c", 2000, None), ("2d-5pt.c", 1000, 300), ("2d-5pt.c", 2000, 300)]
    for row in good:
        assert_row_is_analyze(capsys, row, study)
    bad = [r for r in rows if r["cores"] == 1000]
    assert len(bad) == stats.failed == 4
    assert all("--cores 1000" in r["error"] and r["ecm.T_ECM_cy_per_cl.MEM"] is None for r in bad)


def test_failed_point_is_an_error_row(tmp_path):
    study = st.read_study(write_study(tmp_path, """\
        kernels: [KERNELS/daxpy.c, KERNELS/2d-5pt.c]
        machines: [SkylakeSP_Gold-6148]
        defines: {M: 100}
        options: {incore: [analytic]}
    """))
    table, stats = sw.run_study(study, None, use_cache=False)
    rows = table.rows()
    assert stats.failed == 2 and [r["error"] for r in rows] == [
        f"no value for N: give -D N=<size> (kernel {k.path})" for k in study.kernels]
    assert all(r["M"] == (100 if r["kernel"].endswith("2d-5pt.c") else None) for r in rows)


def test_csv_and_parquet_output_and_no_overwrite(tmp_path, capsys, in_process, fresh_cache):
    import csv

    import pyarrow.parquet as pq

    study = write_study(tmp_path, TINY)
    out_csv, out_pq = tmp_path / "r.csv", tmp_path / "r.parquet"
    # TINY has 4 failing points (--cores 1000): the files are written, the exit status says so
    assert main(["sweep", study, "-o", str(out_csv), "--no-progress"]) == 1
    assert main(["sweep", study, "-o", str(out_pq)]) == 1
    rows, _ = sw.run_study(st.read_study(study), None)
    expected = rows.rows()
    from_pq = pq.read_table(out_pq).to_pylist()
    assert from_pq == expected
    meta = pq.read_schema(out_pq).metadata
    assert meta[b"schema_version"] == SCHEMA_VERSION.encode() and meta[b"loopmodel_version"] == loopmodel.__version__.encode()
    with open(out_csv, newline="") as fh:
        from_csv = list(csv.DictReader(fh))
    assert len(from_csv) == len(expected) and list(from_csv[0]) == list(expected[0])
    for got, want in zip(from_csv, expected):
        assert got["ecm.T_ECM_cy_per_cl.MEM"] == ("" if want["ecm.T_ECM_cy_per_cl.MEM"] is None else repr(want["ecm.T_ECM_cy_per_cl.MEM"]))
        assert got["kernel"] == want["kernel"] and got["error"] == (want["error"] or "")
    capsys.readouterr()
    assert main(["sweep", study, "-o", str(out_csv)]) == 2
    assert "output file exists; not overwritten (use --force)" in capsys.readouterr().err
    assert main(["sweep", study, "-o", str(out_csv), "--force"]) == 1
    assert main(["sweep", study, "-o", str(tmp_path / "r.xlsx")]) == 2
    assert main(["sweep", study]) == 1
    assert capsys.readouterr().out == out_csv.read_text()


def test_rerun_reads_the_result_cache(tmp_path, monkeypatch, fresh_cache):
    study = st.read_study(EXAMPLE)
    first, s1 = sw.run_study(study, None)
    assert s1.cached == 0 and s1.tasks == len(list(sw.chunks(study)))

    def no_compute(chunk):
        raise AssertionError("computed again")

    monkeypatch.setattr(sw, "run_chunk", no_compute)
    started = []
    second, s2 = sw.run_study(study, lambda: started.append(1))  # no cluster needed
    assert s2.cached == s2.points == study.points() and s2.tasks == 0 and not started
    assert second.rows() == first.rows()


def test_plot_is_called_with_rows_and_the_varying_define(tmp_path, monkeypatch, in_process, fresh_cache):
    from loopmodel.report import study_plot

    calls = []
    monkeypatch.setattr(study_plot, "plot_study", lambda rows, path, x, y="ecm.performance.cy_per_cl", title=None,
                        group=None: calls.append((rows, path, x, y, title, group)))
    study = write_study(tmp_path, TINY)
    png = str(tmp_path / "p.png")
    assert main(["sweep", study, "-o", str(tmp_path / "r.csv"), "--plot", png]) == 1
    (rows, path, x, y, title, group), = calls
    assert path == png and x == "N" and y == "ecm.performance.cy_per_cl" and "study.yml" in title
    assert group[:2] == ("kernel", "machine") and "N" not in group   # lines: kernel x machine x options
    assert len(rows) == 8 and rows[0]["N"] == 1000 and "ecm.performance.cy_per_cl" in rows[0]


def test_dask_is_imported_only_by_the_sweep():
    code = ("import sys; from loopmodel.cli import build_parser, main; build_parser(); "
            "main(['analyze', 'examples/kernels/daxpy.c', '-m', 'SkylakeSP_Gold-6148', '-D', 'N=100', "
            "'--incore', 'analytic', '--json']); "
            "sys.stderr.write(str(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('dask', 'distributed', 'pyarrow'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stderr == "[]"


def test_points_with_different_iterations_per_cl_match_analyze(tmp_path, capsys, fresh_cache):
    """A size-dependent stride changes it/CL between points: each point's in-core time is its own."""
    (tmp_path / "strided.c").write_text("double a[M*N], b[M*N];\nfor (int i = 0; i < M; ++i)\n"
                                        "    b[i*N] = a[i*N] + a[i*N];\n")
    study = st.read_study(write_study(tmp_path, """\
        kernels: [strided.c]
        machines: [SkylakeSP_Gold-6148]
        defines: {M: 1000, N: "1:2"}
        options: {incore: [analytic]}
    """))
    rows = sw.run_study(study, None)[0].rows()
    assert [r["iterations_per_cl"] for r in rows] == [8, 4]
    # T_nOL = the load of a: N=1 4 lanes (gcc's 256-bit vectors on Skylake-SP), 1 / 4 / 2 per cy x 8 it;
    # N=2 not contiguous, scalar: 1 / 2 x 4 it
    assert [r["incore.T_nOL_cy_per_cl"] for r in rows] == [1.0, 2.0]
    for row in rows:
        assert_row_is_analyze(capsys, row, study)


def _bug(*args, **kwargs):
    raise TypeError("unsupported operand type(s) for +: 'int' and 'NoneType'")


@pytest.mark.parametrize("where", ["prepare", "point"])
def test_a_bug_propagates_and_is_not_a_row(tmp_path, monkeypatch, fresh_cache, where):
    """A TypeError in loopmodel is a bug, not a property of the point: it leaves the sweep as
    it was raised (no ``internal error`` row, nothing cached), whether it comes while the
    task is prepared or while a point is analyzed."""
    from loopmodel.workflows.analysis import Analyzer

    monkeypatch.setattr(*((sw, "task_analyzer", _bug) if where == "prepare" else (Analyzer, "run", _bug)))
    study = st.read_study(write_study(tmp_path, TINY))
    for _ in range(2):
        with pytest.raises(TypeError, match="unsupported operand"):
            sw.run_study(study, None)
    monkeypatch.setattr(Analyzer, "run", _bug)
    with pytest.raises(TypeError, match="unsupported operand"):
        loopmodel.sweep(f"{KERNELS}/daxpy.c", "SkylakeSP_Gold-6148", {"N": [1000, 2000]}, incore="analytic")


def test_a_loopmodel_error_is_still_a_row(fresh_cache):
    """The other side: a point that fails with a one-line LoopmodelError (an empty iteration
    space at M=2) is a row with that line; the next point is computed."""
    frame = loopmodel.sweep(f"{KERNELS}/2d-5pt.c", "SkylakeSP_Gold-6148", {"N": 1000, "M": [2, 100]},
                            incore="analytic")
    assert list(frame["error"].isna()) == [False, True]
    assert frame["error"][0].endswith("runs no iteration at M=2, N=1000 (j from 1 up to M - 1, exclusive): "
                                      "the iteration space is empty")


def test_a_bug_on_a_dask_worker_propagates(tmp_path, monkeypatch, fresh_cache):
    """Through Dask (workers as threads of this process, so the patch reaches them): the task's
    TypeError is raised by the sweep, not turned into rows; a LoopmodelError still is a row."""
    from distributed import Client, LocalCluster

    from loopmodel.workflows.analysis import Analyzer

    study = st.read_study(write_study(tmp_path, TINY))
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        table, stats = sw.run_study(study, client, use_cache=False)
        assert stats.failed == 4 and all("--cores 1000" in r["error"] for r in table.rows() if r["cores"] == 1000)
        monkeypatch.setattr(Analyzer, "run", _bug)
        with pytest.raises(TypeError, match="unsupported operand"):
            sw.run_study(study, client, use_cache=False)


def test_a_bug_in_the_sweep_command_is_a_traceback_and_writes_nothing(tmp_path, monkeypatch, capsys, in_process,
                                                                      fresh_cache):
    """``loopmodel sweep`` with a bug: the exception (a bug report) leaves the command, no row
    says ``internal error`` and no file is written."""
    from loopmodel.workflows.analysis import Analyzer

    monkeypatch.setattr(Analyzer, "run", _bug)
    out = tmp_path / "r.csv"
    with pytest.raises(TypeError, match="unsupported operand"):
        main(["sweep", write_study(tmp_path, TINY), "--no-progress", "-o", str(out)])
    assert not out.exists() and "internal error" not in capsys.readouterr().out


# ---------------------------------------------------------------- size: lazy points, streamed rows


HUGE = """\
    kernels: [KERNELS/daxpy.c]
    machines: [SkylakeSP_Gold-6148]
    defines: {N: '1:1000000000000:1'}
    options: {incore: [analytic], cache_predictor: [lc]}
"""


def test_a_huge_study_is_counted_not_expanded(tmp_path):
    """10^12 points: read, counted and cut into tasks one at a time; a table in memory is refused."""
    import itertools

    study = st.read_study(write_study(tmp_path, HUGE))
    assert study.points() == 10 ** 12 and study.varying_define() == "N"
    first, second = itertools.islice(sw.chunks(study), 2)
    assert (first.index, second.index) == (0, 1) and len(first.points) == len(second.points) == sw.CHUNK_POINTS
    assert first.points[0] == {"N": 1} and second.points[0] == {"N": 33}
    with pytest.raises(st.StudyError, match=r"1000000000000 points: a table in memory holds at most 10000000 rows"):
        sw.run_study(study, None)


def _fake_chunk(chunk):
    """A task's result without the analysis: 60 fields per point, a few varying."""
    rows = [{"error": None, **{f"f.{i}": float(i) for i in range(57)}, "size": p["N"], "half": p["N"] / 2}
            for p in chunk.points]
    return RowBatch.of(rows)


@pytest.mark.parametrize("name", ["r.csv", "r.parquet"])
def test_write_study_memory_does_not_grow_with_points(tmp_path, monkeypatch, name):
    """20 000 rows of 60 fields: the rows are spooled and written a batch (a row group) at a
    time; holding them would take far more than the peak allowed here."""
    import tracemalloc

    import pyarrow.parquet as pq

    monkeypatch.setattr(sw, "run_chunk", _fake_chunk)
    study = st.read_study(write_study(tmp_path, HUGE.replace("1:1000000000000:1", "1:20000:1")))
    out = tmp_path / name
    tracemalloc.start()
    try:
        stats = sw.write_study(study, str(out), None, use_cache=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert stats.points == 20000 and stats.failed == 0
    assert peak < 6_000_000, peak  # the table: 20000 x 60 values, 10 MB in list slots alone
    if name.endswith(".csv"):
        lines = out.read_text().splitlines()
        assert len(lines) == 20001 and lines[0].startswith("kernel,machine,N,incore,cache_predictor,error,f.0,")
    else:
        t = pq.read_table(out)
        assert t.num_rows == 20000 and t.column("size").to_pylist()[-3:] == [19998, 19999, 20000]
        assert str(t.schema.field("half").type) == "double" and str(t.schema.field("size").type) == "int64"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["study.yml", name])


def test_parquet_column_types_follow_all_the_values(tmp_path):
    """A column's type comes from every row, as when the whole table was converted at once:
    ints and floats give doubles, anything mixed with text gives text, an int beyond int64 text."""
    import pyarrow.parquet as pq

    from loopmodel.fileio.result_file import ResultFile

    path = str(tmp_path / "t.parquet")
    with ResultFile(path, ("a",)) as out:
        out.add([{"a": 1, "b": True, "c": 1, "d": 2 ** 70, "e": None}])
        out.add([{"a": 2.5, "b": False, "c": "inf", "d": 3, "e": None}])
        out.finish()
    t = pq.read_table(path)
    assert [str(f.type) for f in t.schema] == ["double", "bool", "string", "string", "string"]
    assert t.to_pylist() == [{"a": 1.0, "b": True, "c": "1", "d": str(2 ** 70), "e": None},
                             {"a": 2.5, "b": False, "c": "inf", "d": "3", "e": None}]


def test_interrupted_run_writes_nothing_and_keeps_the_old_file(tmp_path, monkeypatch):
    """Ctrl-C in the middle: one line with the points done; no output, no temporary file, and
    with --force the file that was there is untouched."""
    calls = []

    def stop_at_third(chunk):
        calls.append(chunk.index)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return _fake_chunk(chunk)

    monkeypatch.setattr(sw, "run_chunk", stop_at_third)
    study = st.read_study(write_study(tmp_path, HUGE.replace("1:1000000000000:1", "1:1000:1")))
    for name, force in (("new.csv", False), ("old.parquet", True)):
        calls.clear()
        out = tmp_path / name
        if force:
            out.write_bytes(b"the user's file")
        with pytest.raises(sw.SweepInterrupted) as exc:
            sw.write_study(study, str(out), None, use_cache=False, force=force)
        assert str(exc.value) == f"interrupted; 64 of 1000 points done, nothing written to {out}"
        assert exc.value.exit_code == 130
        assert out.read_bytes() == b"the user's file" if force else not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.parquet", "study.yml"]


def test_a_file_that_appears_meanwhile_is_not_replaced(tmp_path, monkeypatch):
    """Checked before the run and again when the file is put in place (a hard link cannot
    replace); on a file system without hard links the file is renamed into place."""
    import os

    from loopmodel.errors import DefineError
    from loopmodel.fileio.result_file import ResultFile

    out = tmp_path / "r.csv"
    with ResultFile(str(out), ("a",)) as res, pytest.raises(DefineError, match="output file exists; not overwritten"):
        res.add([{"a": 1}])
        out.write_text("meanwhile")
        res.finish()
    assert out.read_text() == "meanwhile" and [p.name for p in tmp_path.iterdir()] == ["r.csv"]

    def no_links(*args):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    out.unlink()
    with ResultFile(str(out), ("a",)) as res:
        res.add([{"a": 1}])
        res.finish()
    assert out.read_text() == "a\n1\n" and [p.name for p in tmp_path.iterdir()] == ["r.csv"]


def test_a_full_disk_is_one_line_and_leaves_nothing(tmp_path, monkeypatch, capsys, in_process):
    import errno

    from loopmodel.fileio.result_file import Spool

    def full(self, rows):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Spool, "add", full)
    monkeypatch.setattr(sw, "run_chunk", _fake_chunk)
    study = write_study(tmp_path, HUGE.replace("1:1000000000000:1", "1:100:1"))
    out = tmp_path / "r.parquet"
    assert main(["sweep", study, "--no-cache", "-o", str(out)]) == 2
    assert capsys.readouterr().err == (f"loopmodel: {out}: -o: cannot keep the rows in a temporary file: "
                                       "No space left on device\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["study.yml"]


def test_plot_of_too_many_points_is_refused_before_the_run(tmp_path, capsys):
    study = write_study(tmp_path, HUGE.replace("1:1000000000000:1", "1:200000:1"))
    assert main(["sweep", study, "--plot", str(tmp_path / "p.png")]) == 2
    err = capsys.readouterr().err
    assert err == (f"loopmodel: {study}: --plot draws at most 100000 points and the study has 200000: "
                   "leave --plot out, and plot from the -o file\n")


# ---------------------------------------------------------------- the Python API: a bound, or a file


def test_api_sweep_refuses_more_rows_than_a_frame_holds():
    import time

    start = time.perf_counter()
    with pytest.raises(loopmodel.UsageError) as exc:
        loopmodel.sweep(f"{KERNELS}/daxpy.c", "SkylakeSP_Gold-6148", {"N": range(1, 10 ** 12)}, incore="analytic")
    assert time.perf_counter() - start < 10
    assert str(exc.value) == ("sweep: 999999999999 points, and a DataFrame holds at most 10000000 rows: pass "
                              "output='FILE.parquet' (or .csv) to write the rows to a file as they are computed")


def test_api_sweep_writes_a_file_with_the_rows_of_the_frame(tmp_path):
    import math

    import pandas as pd

    daxpy = f"{KERNELS}/daxpy.c"
    df = loopmodel.sweep(daxpy, "SkylakeSP_Gold-6148", {"N": range(1000, 40001, 1000)}, incore="analytic")
    for name, read in (("s.parquet", pd.read_parquet), ("s.csv", pd.read_csv)):
        path = tmp_path / name
        got = loopmodel.sweep(daxpy, "SkylakeSP_Gold-6148", {"N": range(1000, 40001, 1000)}, incore="analytic",
                              output=path)
        assert got == str(path)
        back = read(path)
        assert list(back.columns) == list(df.columns) and len(back) == len(df) == 40
        for col in ("N", "ecm.performance.cy_per_cl", "ecm.T_ECM_cy_per_cl.MEM"):
            assert all(math.isclose(a, b) for a, b in zip(back[col], df[col])), col
        with pytest.raises(loopmodel.DefineError, match="output file exists; not overwritten"):
            loopmodel.sweep(daxpy, "SkylakeSP_Gold-6148", {"N": 1000}, incore="analytic", output=path)
    with pytest.raises(loopmodel.DefineError, match="unknown format"):
        loopmodel.sweep(daxpy, "SkylakeSP_Gold-6148", {"N": 1000}, output=tmp_path / "s.xlsx")
    with pytest.raises(loopmodel.UsageError, match="output: expected a file path"):
        loopmodel.sweep(daxpy, "SkylakeSP_Gold-6148", {"N": 1000}, output=3)


# ---------------------------------------------------------------- study lists, exit status, files on workers


@pytest.mark.parametrize("key, body", [
    ("kernels", "kernels: KERNELS/daxpy.c\nmachines: [SkylakeSP_Gold-6148]\n"),
    ("machines", "kernels: [KERNELS/daxpy.c]\nmachines: SkylakeSP_Gold-6148\n"),
])
def test_one_name_must_be_a_list_of_one(tmp_path, key, body):
    path = write_study(tmp_path, body)
    with pytest.raises(st.StudyError) as exc:
        st.read_study(path)
    assert str(exc.value).startswith(f"{path}: {key}: expected a list (e.g. {key}: [")
    assert str(exc.value).endswith("]), got str")


def test_failed_points_give_exit_status_1(tmp_path):
    """The real command on a local cluster: the file is written, the summary counts the
    failures, and the exit status is 1 (2 is for bad input, 0 for a clean run)."""
    study = write_study(tmp_path, """\
        kernels: [KERNELS/daxpy.c]
        machines: [SkylakeSP_Gold-6148]
        defines: {N: "1000:2000:1000"}
        options: {incore: [analytic], cores: [1000]}
    """)
    r = run_cli("sweep", study, "--workers", "1", "--no-cache", "--no-progress", "-o", tmp_path / "r.csv", timeout=120)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith("sweep: 2 points (2 failed, 0 from the cache) in ") and r.stderr.count("\n") == 1
    assert (tmp_path / "r.csv").read_text().count("--cores 1000") == 2


def test_a_task_carries_its_kernel_and_machine(tmp_path, monkeypatch):
    """A worker in another folder, without the study's files, computes the same rows: the task
    holds the kernel's bytes and the machine's model, not paths to read."""
    import pickle
    import shutil

    folder = tmp_path / "study"
    (folder / "k").mkdir(parents=True)
    shutil.copy(f"{KERNELS}/daxpy.c", folder / "k" / "daxpy.c")
    shutil.copy("src/loopmodel/machines/SkylakeSP_Gold-6148.yml", folder / "skx.yml")
    (folder / "s.yml").write_text("kernels: [k/daxpy.c]\nmachines: [skx.yml]\ndefines: {N: '1000:3000:1000'}\n"
                                  "options: {incore: [analytic]}\n")
    monkeypatch.chdir(folder)
    study = st.read_study("s.yml")
    task = next(iter(sw.chunks(study)))
    here = sw.run_chunk(task)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    shutil.rmtree(folder)
    sw.task_analyzer.cache_clear()
    rows = list(sw.run_chunk(pickle.loads(pickle.dumps(task))).dicts())
    assert rows == list(here.dicts()) and all(r["error"] is None for r in rows)
    assert rows[0]["kernel.file"] == "k/daxpy.c"  # named as analyze names it


# ---------------------------------------------------------------- Dask: foreign servers, lost workers, Ctrl-C


@contextlib.contextmanager
def _server(handle):
    """A TCP server on 127.0.0.1 that runs ``handle(connection)`` for each client (daemon threads)."""
    import socket
    import threading

    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield srv.getsockname()[1]
    finally:
        stop.set()
        srv.close()


def _garbage(conn):
    """Random bytes after a frame header that announces 2^62 bytes (Dask tried to allocate them)."""
    import os
    import struct

    with conn:
        conn.sendall(struct.pack("<Q", 1 << 62) + os.urandom(4096))
        conn.settimeout(5)
        with contextlib.suppress(OSError):
            conn.recv(1 << 16)


def _http(conn):
    """What an HTTP server does with Dask's handshake: waits for a request line, then answers 400."""
    with conn:
        conn.settimeout(30)
        with contextlib.suppress(OSError):
            while b"\r\n" not in conn.recv(1 << 16):
                pass
            conn.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n<html>bad request</html>")


@pytest.mark.parametrize("handle, words", [
    (_garbage, "not a Dask scheduler (its answer is not Dask's: MemoryError"),
    (_http, "not a Dask scheduler (no Dask answer within 2 s; LOOPMODEL_DASK_TIMEOUT sets the wait)"),
    (None, "cannot connect to the scheduler: Connection refused"),
])
def test_dask_address_that_is_no_scheduler_is_one_line(tmp_path, monkeypatch, handle, words):
    import socket
    import time

    study = write_study(tmp_path, TINY)
    monkeypatch.setenv("LOOPMODEL_DASK_TIMEOUT", "2")
    with contextlib.ExitStack() as stack:
        if handle:
            port = stack.enter_context(_server(handle))
        else:
            with socket.create_server(("127.0.0.1", 0)) as free:
                port = free.getsockname()[1]  # closed again: nothing listens there
        start = time.perf_counter()
        r = run_cli("sweep", study, "--dask", f"tcp://127.0.0.1:{port}", "--no-progress", timeout=60)
        took = time.perf_counter() - start
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"loopmodel: --dask tcp://127.0.0.1:{port}: {words}"), r.stderr
    assert took < 20


def test_bad_dask_timeout_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LOOPMODEL_DASK_TIMEOUT", "soon")
    assert main(["sweep", write_study(tmp_path, TINY), "--dask", "tcp://127.0.0.1:1"]) == 2
    assert capsys.readouterr().err == "loopmodel: LOOPMODEL_DASK_TIMEOUT=soon: expected a number of seconds above 0\n"


def _start(args, log, cwd):
    import subprocess

    return subprocess.Popen([sys.executable, "-m", *args], cwd=cwd, stdout=log, stderr=subprocess.STDOUT)


def _wait_for(test, seconds: float, what: str):
    import time

    end = time.monotonic() + seconds
    while not test():
        assert time.monotonic() < end, f"no {what} within {seconds} s"
        time.sleep(0.1)


def test_sweep_whose_workers_all_die_ends_with_one_line(tmp_path, monkeypatch):
    """A scheduler with one worker (no nanny: nothing restarts it); the worker is killed while
    a long sweep runs: the sweep stops within LOOPMODEL_DASK_TIMEOUT and says how far it got."""
    import time

    sched_file = tmp_path / "scheduler.json"
    study = write_study(tmp_path, HUGE.replace("1:1000000000000:1", "1:1000000:1"))
    procs = []
    with open(tmp_path / "dask.log", "w") as log, open(tmp_path / "sweep.log", "w") as sweep_log:
        try:
            procs.append(_start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                                 "--no-dashboard", "--scheduler-file", str(sched_file)], log, tmp_path))
            _wait_for(sched_file.exists, 60, "scheduler file")
            address = json.loads(sched_file.read_text())["address"]
            worker = _start(["distributed.cli.dask_worker", address, "--no-nanny", "--nthreads", "1",
                             "--no-dashboard"], log, "/")
            procs.append(worker)
            _wait_for(lambda: "Registered to" in (tmp_path / "dask.log").read_text(), 60, "worker")
            monkeypatch.setenv("LOOPMODEL_DASK_TIMEOUT", "2")
            sweep = _start(["loopmodel.cli", "sweep", study, "--dask", address, "--no-cache", "--no-progress",
                            "-o", str(tmp_path / "r.csv")], sweep_log, tmp_path)
            procs.append(sweep)
            time.sleep(4)
            worker.kill()
            start = time.perf_counter()
            assert sweep.wait(timeout=60) == 2
            took = time.perf_counter() - start
        finally:
            for p in procs:
                p.kill()
                p.wait()
    err = (tmp_path / "sweep.log").read_text()
    assert err.count("\n") == 1, err
    last = err.strip()
    assert last.startswith("loopmodel: no Dask worker left for 2 s (they died or left; LOOPMODEL_DASK_TIMEOUT "
                           "sets the wait); ") and last.endswith(f" of 1000000 points done, nothing written to "
                                                                 f"{tmp_path / 'r.csv'}"), last
    assert took < 15 and not (tmp_path / "r.csv").exists()


def test_ctrl_c_is_one_line_and_exit_130(tmp_path):
    """SIGINT to the process group of ``loopmodel sweep`` (a terminal's Ctrl-C): the workers
    ignore it, the command stops the cluster and prints one line; nothing is written."""
    import os
    import signal
    import subprocess
    import time

    import psutil

    study = write_study(tmp_path, HUGE.replace("1:1000000000000:1", "1:1000000:1"))
    out = tmp_path / "r.csv"
    p = subprocess.Popen([sys.executable, "-m", "loopmodel.cli", "sweep", study, "--workers", "1", "--no-cache",
                          "--no-progress", "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        _wait_for(lambda: any("spawn_main" in " ".join(c.cmdline()) for c in psutil.Process(p.pid).children()),
                  60, "worker process")
        time.sleep(3)
        for _ in range(3):  # a Ctrl-C while the cluster starts is lost (its workers must not see it): again
            os.killpg(p.pid, signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=10)
                break
        _, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 130 and "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith("loopmodel: interrupted; ")
    assert err.endswith(f" of 1000000 points done, nothing written to {out}\n")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["study.yml"]
