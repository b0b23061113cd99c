"""`loopmodel sweep`: study files and their errors, the product of points, rows equal to
`analyze --json` point by point (on a 2-worker LocalCluster), error rows, CSV and Parquet
output, no overwriting, the result cache, the study plot call, dask imported lazily."""
from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import textwrap

import pytest

import loopmodel
import loopmodel.sweep as sw
from loopmodel.cli import main
from loopmodel.report.schema import SCHEMA_VERSION

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
    monkeypatch.setattr(sw, "dask_client", lambda address=None, workers=None: contextlib.nullcontext(None))


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LOOPMODEL_NO_CACHE", raising=False)


def analyze_flat(capsys, row: dict, study: sw.Study, kernel_path: str) -> dict:
    """``loopmodel analyze KERNEL -m MACHINE -D ... --json`` for a row's point, flattened."""
    argv = ["analyze", kernel_path, "-m", row["machine"], "--json"]
    argv += [f"-D{n}={row[n]}" for n in study.defines if row[n] is not None]
    argv += [f"--{n.replace('_', '-')}={row[n]}" for n in study.options]
    capsys.readouterr()
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    return sw.flatten({k: v for k, v in doc.items() if k not in ("schema_version", "loopmodel_version")})


def assert_row_is_analyze(capsys, row: dict, study: sw.Study) -> None:
    kernel = next(k for k in study.kernels if k.given == row["kernel"])
    flat = analyze_flat(capsys, row, study, kernel.path)
    assert row["error"] is None
    for key, value in flat.items():
        assert row[key] == value, key
    for key in set(row) - set(flat) - set(study.columns()):
        assert row[key] is None, key  # another kernel's field


# ---------------------------------------------------------------- study files


def test_example_study_is_read():
    s = sw.read_study(EXAMPLE)
    assert [k.given for k in s.kernels] == ["../kernels/daxpy.c", "../kernels/2d-5pt.c"]
    assert s.kernels[0].path == "examples/kernels/daxpy.c" and s.kernels[1].constants == {"M", "N"}
    assert s.defines == {"N": (1000, 2000, 3000, 4000, 5000), "M": (500,)}
    assert s.options == {"cache_predictor": ("lc", "sim"), "incore": ("analytic",)}
    assert s.tokens["cache_predictor"] == (("--cache-predictor=lc",), ("--cache-predictor=sim",))
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
    with pytest.raises(sw.StudyError) as exc:
        sw.read_study(path)
    text = str(exc.value)
    assert text.startswith(f"{path}: {where}: ") and words in text and "\n" not in text


def test_yaml_error_and_cli_exit(tmp_path, capsys):
    path = write_study(tmp_path, "kernels: [a\n")
    assert main(["sweep", path]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"loopmodel: {path}:") and "not valid YAML" in err and "\n" not in err


def test_options_map_onto_analyze_arguments():
    assert sw.option_tokens("nt_stores", True) == ["--nt-stores"] and sw.option_tokens("nt_stores", False) == []
    assert sw.option_tokens("reassociate", False) == ["--no-reassociation"]
    assert sw.option_tokens("reassociate", None) == []
    assert sw.option_tokens("pmodel", ["LC", "ECM"]) == ["--pmodel=LC", "--pmodel=ECM"]
    assert sw.option_tokens("compiler_flags", "-O3 -ffast-math") == ["--compiler-flags=-O3 -ffast-math"]
    assert {"cache_predictor", "incore", "cores", "sweeps", "clock"} <= sw.option_names()
    assert not {"json", "unit", "machine", "define", "verbose"} & sw.option_names()
    aliases = sw.option_aliases()
    assert aliases["incore_model"] == "incore" and aliases["mem_bw"] == "mem_bw" and "no_reassociation" not in aliases


def test_option_spellings(tmp_path):
    study = sw.read_study(write_study(tmp_path, """\
        kernels: [KERNELS/daxpy.c]
        machines: [SkylakeSP_Gold-6148]
        options: {incore-model: [analytic], reassociate: [false], nt_stores: [true, false]}
    """))
    assert study.options == {"incore": ("analytic",), "reassociate": (False,), "nt_stores": (True, False)}
    assert [c.argv for c in sw.chunks(study)] == [("--incore=analytic", "--no-reassociation", "--nt-stores"),
                                                  ("--incore=analytic", "--no-reassociation")]


# ---------------------------------------------------------------- points


def test_each_kernel_gets_only_its_defines(tmp_path):
    study = sw.read_study(write_study(tmp_path, """\
        kernels: [KERNELS/daxpy.c, KERNELS/2d-5pt.c]
        machines: [SkylakeSP_Gold-6148, HaswellEP_E5-2695v3]
        defines: {N: [100, 200, 300], M: "10:20:10"}
        options: {cache_predictor: [lc, sim]}
    """))
    tasks = sw.chunks(study)
    daxpy = [p for c in tasks if c.kernel.given.endswith("daxpy.c") for p in c.points]
    stencil = [p for c in tasks if c.kernel.given.endswith("2d-5pt.c") for p in c.points]
    assert len(daxpy) == 2 * 2 * 3 and all(set(p) == {"N"} for p in daxpy)
    assert len(stencil) == 2 * 2 * 6 and all(set(p) == {"M", "N"} for p in stencil)
    assert study.points() == len(daxpy) + len(stencil)
    assert [p for c in tasks[:1] for p in c.points] == [{"N": 100}, {"N": 200}, {"N": 300}]
    assert stencil[:3] == [{"N": 100, "M": 10}, {"N": 100, "M": 20}, {"N": 200, "M": 10}]  # last fastest
    assert [c.options for c in tasks[:2]] == [(("cache_predictor", "lc"),), (("cache_predictor", "sim"),)]
    small = sw.chunks(study, size=2)
    assert [len(c.points) for c in small[:2]] == [2, 1] and [c.index for c in small] == list(range(len(small)))


def test_flatten():
    doc = {"a": {"b": 1, "c": {"d": None}}, "e": [1, {"f": 2}], "g": {}, "h": "x"}
    assert sw.flatten(doc) == {"a.b": 1, "a.c.d": None, "e": '[1, {"f": 2}]', "g": "{}", "h": "x"}


# ---------------------------------------------------------------- running


def test_two_worker_cluster_rows_equal_analyze_point_by_point(tmp_path, capsys, fresh_cache):
    import psutil

    study = sw.read_study(write_study(tmp_path, TINY))
    with sw.dask_client(workers=2) as client:
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
    study = sw.read_study(write_study(tmp_path, """\
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
    assert main(["sweep", study, "-o", str(out_csv), "--no-progress"]) == 0
    assert main(["sweep", study, "-o", str(out_pq)]) == 0
    rows, _ = sw.run_study(sw.read_study(study), None)
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
    assert main(["sweep", study, "-o", str(out_csv), "--force"]) == 0
    assert main(["sweep", study, "-o", str(tmp_path / "r.xlsx")]) == 2
    assert main(["sweep", study]) == 0
    assert capsys.readouterr().out == out_csv.read_text()


def test_rerun_reads_the_result_cache(tmp_path, monkeypatch, fresh_cache):
    study = sw.read_study(EXAMPLE)
    first, s1 = sw.run_study(study, None)
    assert s1.cached == 0 and s1.tasks == len(sw.chunks(study))

    def no_compute(chunk):
        raise AssertionError("computed again")

    monkeypatch.setattr(sw, "run_chunk", no_compute)
    started = []
    second, s2 = sw.run_study(study, lambda: started.append(1))  # no cluster needed
    assert s2.cached == s2.points == study.points() and s2.tasks == 0 and not started
    assert second.rows() == first.rows()


def test_plot_is_called_with_rows_and_the_varying_define(tmp_path, monkeypatch, in_process, fresh_cache):
    import types

    calls = []
    fake = types.ModuleType("loopmodel.report.study_plot")
    fake.plot_study = lambda rows, path, x, y="ecm.performance.cy_per_cl", title=None, group=None: calls.append(
        (rows, path, x, y, title, group))
    monkeypatch.setitem(sys.modules, "loopmodel.report.study_plot", fake)
    study = write_study(tmp_path, TINY)
    png = str(tmp_path / "p.png")
    assert main(["sweep", study, "-o", str(tmp_path / "r.csv"), "--plot", png]) == 0
    (rows, path, x, y, title, group), = calls
    assert path == png and x == "N" and y == "ecm.performance.cy_per_cl" and "study.yml" in title
    assert group[:2] == ("kernel", "machine") and "N" not in group   # lines: kernel x machine x options
    assert len(rows) == 8 and rows[0]["N"] == 1000 and "ecm.performance.cy_per_cl" in rows[0]


def test_plot_without_module_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "loopmodel.report.study_plot", None)  # import fails
    assert main(["sweep", write_study(tmp_path, TINY), "--plot", str(tmp_path / "p.png")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("loopmodel: --plot:") and "study plot" in err and "\n" not in err


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
    study = sw.read_study(write_study(tmp_path, """\
        kernels: [strided.c]
        machines: [SkylakeSP_Gold-6148]
        defines: {M: 1000, N: "1:2"}
        options: {incore: [analytic]}
    """))
    rows = sw.run_study(study, None)[0].rows()
    assert [r["iterations_per_cl"] for r in rows] == [8, 4]
    assert [r["incore.T_nOL_cy_per_cl"] for r in rows] == [1.0, 0.5]
    for row in rows:
        assert_row_is_analyze(capsys, row, study)


def test_unexpected_failure_is_an_error_row_and_not_cached(tmp_path, monkeypatch, fresh_cache):
    def broken(*args):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(sw, "_prepared", broken)
    study = sw.read_study(write_study(tmp_path, TINY))
    for _ in range(2):
        table, stats = sw.run_study(study, None)
        assert stats.cached == 0 and stats.failed == stats.points == 8
        assert set(table.columns["error"]) == {"internal error: RuntimeError: boom second line"}
