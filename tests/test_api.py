"""The Python API (``loopmodel.analyze``, ``sweep``, ``Machine``, ``Kernel``, the errors): its
documents equal the command line's ``--json`` output, its errors carry the command line's one
line, and ``import loopmodel`` stays cheap."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import KERNELS, ROOT, SKX, SNB, run_cli, run_cli_batch

import loopmodel
from loopmodel.report.schema import SCHEMA_VERSION

#: the public names; a test fails when one disappears
PUBLIC = ["__version__", "analyze", "sweep", "scaling", "bench", "validate", "omp_sweep", "compare", "Kernel", "Machine",
          "Result", "ScalingReport", "BenchReport", "CompactSweep", "FunctionResult", "CompareReport", "LoopmodelError", "KernelError", "MachineError",
          "DefineError",
          "ModelError", "ToolError", "OptionError", "UsageError", "ApiTypeError", "ApiValueError"]
C_KERNELS = sorted(str(p) for p in KERNELS.glob("*.c"))
MACHINES = (SKX, SNB)


def _sizes(path: str) -> dict:
    """A value for every size constant of a kernel (small enough for any of them)."""
    return {c: 120 for c in sorted(loopmodel.Kernel.from_file(path).constants)}


@pytest.fixture(scope="module")
def cli_documents():
    """``loopmodel analyze KERNEL -m MACHINE -D ... --incore analytic --json`` of every example
    C kernel on both machines, each a real command line process."""
    jobs = {}
    for k in C_KERNELS:
        defs = [f"-D{n}={v}" for n, v in _sizes(k).items()]
        for m in MACHINES:
            jobs[(k, m)] = (["analyze", k, "-m", m, *defs, "--incore", "analytic", "--json"], ROOT)
    return run_cli_batch(jobs)


def test_public_names_are_listed_and_resolve():
    assert loopmodel.__all__ == PUBLIC
    for name in PUBLIC:
        assert getattr(loopmodel, name) is not None
    assert issubclass(loopmodel.UsageError, loopmodel.LoopmodelError)
    assert all(issubclass(getattr(loopmodel, e), loopmodel.LoopmodelError)
               for e in ("KernelError", "MachineError", "DefineError", "ToolError", "OptionError"))
    with pytest.raises(AttributeError):
        loopmodel.no_such_name  # noqa: B018


def test_import_is_lazy():
    code = ("import sys, loopmodel; heavy = ('sympy', 'pycparser', 'matplotlib', 'dask', 'pandas', 'numpy', "
            "'yaml', 'pydantic', 'rich'); print([m for m in heavy if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("kernel", C_KERNELS, ids=lambda p: p.rsplit("/", 1)[-1])
def test_analyze_document_equals_cli_json(cli_documents, kernel, machine):
    proc = cli_documents[(kernel, machine)]
    assert proc.returncode == 0, proc.stderr
    res = loopmodel.analyze(kernel, machine, _sizes(kernel), incore="analytic")
    assert res.to_dict() == json.loads(proc.stdout)


def test_default_options_equal_cli_json():
    """No options at all: the command line's defaults (``--incore auto``: llvm-mca where installed)."""
    k = str(KERNELS / "triad.c")
    proc = run_cli("analyze", k, "-m", SKX, "-D", "N=10000", "--json", cwd=ROOT)
    if proc.returncode != 0:
        pytest.skip(f"the command line fails here: {proc.stderr.strip()}")
    assert loopmodel.analyze(k, SKX, {"N": 10000}).to_dict() == json.loads(proc.stdout)


def test_result_attributes_and_repr():
    k = str(KERNELS / "triad.c")
    res = loopmodel.analyze(k, SKX, {"N": 10 ** 6}, incore="analytic", unit="it/s", cores=2)
    doc = res.to_dict()
    assert res.ecm.T_ECM["MEM"] == doc["ecm"]["T_ECM_cy_per_cl"]["MEM"] > 0
    assert res.performance == doc["ecm"]["performance"]["it_s"]
    assert res.incore.source == doc["incore"]["source"] and res.roofline.performance == \
        doc["roofline"]["performance_flop_s"]
    assert [lv.level for lv in res.traffic.levels] == [t["level"] for t in doc["traffic"]]
    assert len(res.layer_conditions) == len(doc["layer_conditions"]) and res.notes == tuple(doc["notes"])
    assert dict(res.defines) == {"N": 10 ** 6} and doc["cores"] == 2
    text = repr(res)
    assert "triad.c" in text and SKX in text and "N=1000000" in text and res.ecm.notation() in text
    assert "it/s" in text
    page = res._repr_html_()  # the report of `analyze` (tests/test_notebook_repr.py)
    assert "<table>" in page and res.ecm.notation() in page and "ECM prediction, per core of 2" in page
    with pytest.raises(AttributeError):
        res.unit = "cy/CL"
    with pytest.raises(TypeError):
        res.defines["N"] = 1


def test_kernel_text_machine_object_and_data_objects():
    path = KERNELS / "daxpy.c"
    text = path.read_text()
    m = loopmodel.Machine.load(SKX)
    by_text = loopmodel.analyze(text, m, {"N": 5000}, incore="analytic").to_dict()
    by_path = loopmodel.analyze(str(path), SKX, {"N": 5000}, incore="analytic").to_dict()
    assert by_text["kernel"]["file"] == "<kernel>"
    assert {**by_text, "kernel": None} == {**by_path, "kernel": None}
    assert SKX in loopmodel.Machine.list() and m.clock > 1e9 and m.spec == SKX
    k = loopmodel.Kernel.from_source(text)
    assert k.constants == loopmodel.Kernel.from_file(path).constants and k.text == text
    assert loopmodel.analyze(k, m, {"N": 5000}, incore="analytic").to_dict()["ecm"] == by_path["ecm"]
    with pytest.raises(AttributeError):
        m.spec = "x"


def _cli_error(*args) -> str:
    proc = run_cli(*args, cwd=ROOT)
    assert proc.returncode == 2 and proc.stderr.startswith("loopmodel: "), proc.stderr
    return proc.stderr.strip()


def test_errors_carry_the_cli_message(tmp_path):
    bad = tmp_path / "bad.c"
    bad.write_text("double a[N];\nfor (i = 0; i < N; i++) a[i] = b;\n")
    triad = str(KERNELS / "triad.c")
    cases = [
        ((str(bad), SKX, {"N": 10}), {}, loopmodel.KernelError, ("analyze", bad, "-m", SKX, "-D", "N=10")),
        ((triad, "NoSuchMachine", {"N": 10}), {}, loopmodel.MachineError, ("analyze", triad, "-m", "NoSuchMachine")),
        ((str(KERNELS / "2d-5pt.c"), SKX, {"N": 10}), {"incore": "analytic"}, loopmodel.DefineError,
         ("analyze", KERNELS / "2d-5pt.c", "-m", SKX, "-D", "N=10", "--incore", "analytic")),
        ((triad, SKX, {"N": 10}), {"cores": 1000}, loopmodel.DefineError,
         ("analyze", triad, "-m", SKX, "-D", "N=10", "--cores", "1000")),
    ]
    for args, opts, cls, cli in cases:
        with pytest.raises(cls) as exc:
            loopmodel.analyze(*args, **opts)
        assert _cli_error(*cli) == f"loopmodel: {exc.value}"
        assert "\n" not in str(exc.value)


def test_bad_options_are_one_line_usage_errors():
    triad = str(KERNELS / "triad.c")
    with pytest.raises(loopmodel.UsageError, match="unknown option 'no_such' of analyze .*cache_predictor"):
        loopmodel.analyze(triad, SKX, {"N": 10}, no_such=1)
    with pytest.raises(loopmodel.UsageError) as exc:
        loopmodel.analyze(triad, SKX, {"N": 10}, cache_predictor="xx")
    assert str(exc.value) in _cli_error("analyze", triad, "-m", SKX, "--cache-predictor", "xx")
    with pytest.raises(loopmodel.UsageError, match="scalar: expected true or false"):
        loopmodel.analyze(triad, SKX, {"N": 10}, scalar="yes")
    with pytest.raises(loopmodel.DefineError, match="not an integer"):
        loopmodel.analyze(triad, SKX, {"N": "x"})
    with pytest.raises(loopmodel.DefineError, match="one value per size"):
        loopmodel.analyze(triad, SKX, {"N": [10, 20]})


def test_sweep_dataframe_equals_the_study_table(tmp_path):
    import math

    import loopmodel.workflows.sweep as sw
    from loopmodel.workflows.study import read_study

    daxpy = str(KERNELS / "daxpy.c")
    study = tmp_path / "study.yml"
    study.write_text(f"kernels: [{daxpy}]\nmachines: [{SKX}]\ndefines: {{N: '1000:3000:1000'}}\n"
                     "options: {incore: [analytic]}\n")
    table, _ = sw.run_study(read_study(str(study)), None, use_cache=False)
    for defines in ({"N": range(1000, 3001, 1000)}, {"N": [1000, 2000, 3000]}, {"N": "1000:3000:1000"}):
        df = loopmodel.sweep(daxpy, SKX, defines, incore="analytic")
        assert list(df.columns) == list(table.columns)
        assert df.attrs == {"schema_version": SCHEMA_VERSION, "loopmodel_version": loopmodel.__version__}
        got = df.to_dict("records")
        for a, b in zip(got, table.rows(), strict=True):
            for col in table.columns:
                x, y = a[col], b[col]
                if y is None:
                    assert x is None or (isinstance(x, float) and math.isnan(x)), col
                else:
                    assert x == y, col


def test_sweep_is_the_api_function_with_its_help():
    import inspect
    import pydoc

    import loopmodel.api
    import loopmodel.workflows.sweep as sw

    assert loopmodel.sweep is loopmodel.api.sweep and inspect.isfunction(loopmodel.sweep)
    assert not callable(sw) and sw.flatten({"a": {"b": 1}}) == {"a.b": 1}
    assert list(inspect.signature(loopmodel.sweep).parameters)[:3] == ["kernel", "machine", "defines"]
    text = pydoc.render_doc(loopmodel.sweep, renderer=pydoc.plaintext)
    assert loopmodel.sweep.__doc__.splitlines()[0] in text and "Analyze every point of a size sweep" in text


def test_sweep_failing_point_is_an_error_row():
    df = loopmodel.sweep(str(KERNELS / "triad.c"), SKX, {"N": [1000, 2000]}, incore="analytic", cores=1)
    assert list(df["N"]) == [1000, 2000] and df["error"].isna().all() and "ecm.T_ECM_cy_per_cl.MEM" in df
    bad = loopmodel.sweep(str(KERNELS / "2d-5pt.c"), SKX, {"N": [1000, 2000]}, incore="analytic")
    assert list(bad.columns) == ["kernel", "machine", "N", "incore", "error"]
    assert all(e.startswith("no value for M: give -D M=<size>") for e in bad["error"])
    with pytest.raises(loopmodel.DefineError, match="no constant 'Q'"):
        loopmodel.sweep(str(KERNELS / "triad.c"), SKX, {"Q": 10})


def test_scaling_document_equals_cli_json(tmp_path):
    k = str(KERNELS / "triad.c")
    measured = tmp_path / "measured.json"
    measured.write_text(json.dumps({"points": [{"threads": 1, "it_per_s": 1e8}, {"threads": 2, "it_per_s": 1.9e8}]}))
    proc = run_cli("scaling", k, "-m", SKX, "-D", "N=10000000", "--cores", "1:4", "--model", "both",
                   "--incore", "analytic", "--measured", measured, "--fit-p0", "--json", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    rep = loopmodel.scaling(k, SKX, {"N": 10 ** 7}, cores=[1, 2, 3, 4], model="both", incore="analytic",
                            measured=measured, fit_p0=True)
    assert rep.to_dict() == json.loads(proc.stdout)
    as_mapping = loopmodel.scaling(k, SKX, {"N": 10 ** 7}, cores="1:4", model="both", incore="analytic",
                                   measured={1: 1e8, 2: 1.9e8}, fit_p0=True)
    assert as_mapping.to_dict() == rep.to_dict() and rep.analysis.ecm.T_ECM["MEM"] > 0
    with pytest.raises(loopmodel.DefineError, match="--cores 1:999: the machine model has 40 cores"):
        loopmodel.scaling(k, SKX, {"N": 100}, cores="1:999")


def _no_compiler(proc):
    if proc.returncode != 0 and "compiler" in proc.stderr:
        pytest.skip(f"no compiler here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr


def test_bench_and_validate_documents_equal_cli_json():
    """The command line measures first; the API reads the same measurement from the per-user cache."""
    k = str(KERNELS / "daxpy.c")
    proc = run_cli("bench", k, "-D", "N=2000", "--repeat", "2", "--json", cwd=ROOT)
    _no_compiler(proc)
    rep = loopmodel.bench(k, {"N": 2000}, repeat=2)
    assert len(rep) == 1 and rep[0].cached  # the command line's measurement
    doc = rep.to_dict()
    doc["points"] = [{**p, "cached": False} for p in doc["points"]]
    cache_note = "from the per-user cache (--no-cache measures again)"
    assert cache_note in doc["notes"]
    doc["notes"] = [n for n in doc["notes"] if n != cache_note]
    assert doc == json.loads(proc.stdout)
    proc = run_cli("validate", k, "-m", SKX, "-D", "N=1000:2000:1000", "--repeat", "2", "--json", cwd=ROOT)
    _no_compiler(proc)
    df = loopmodel.validate(k, SKX, {"N": range(1000, 2001, 1000)}, repeat=2)
    import loopmodel.workflows.sweep as sw

    validated = json.loads(proc.stdout)
    assert df.to_dict("records") == [sw.flatten(r) for r in validated["points"]]
    assert set(df.attrs["summary"]) == set(df["data_location"])
    assert df.attrs["notes"][0] == validated["notes"][0] and len(df.attrs["notes"]) >= 1
