"""Every user mistake gives one line on stderr naming the file/place, exit status 2, no traceback."""
from pathlib import Path

import pytest
import yaml

from loopmodel.cli import main

KERNELS = {
    "syntax": ("double a[N]\nfor(int i=0;i<N;i++) a[i]=1.0;\n", "bad.c:2"),
    "pointer": ("double *a;\nfor(int i=0;i<N;i++) a[i]=1.0;\n", "pointer"),
    "deref": ("double a[N]; double s;\nfor(int i=0;i<N;i++) a[i]=*s;\n", "pointer"),
    "if": ("double a[N];\nfor(int i=0;i<N;i++) if (i) a[i]=1.0;\n", "'if'"),
    "while": ("double a[N];\nwhile(1) { }\n", "'while'"),
    "call": ("double a[N];\nfor(int i=0;i<N;i++) a[i]=foo(1.0);\n", "'foo'"),
    "indirect": ("double a[N], b[N];\nfor(int i=0;i<N;i++) a[b[i]]=1.0;\n", "indirect"),
    "undefined": ("double a[N];\nfor(int i=0;i<N;i++) a[i]=q;\n", "'q'"),
    "step": ("double a[N]; int n;\nfor(int i=0;i<N;i+=n) a[i]=1.0;\n", "step"),
    "imperfect": ("double a[N][N];\nfor(int j=0;j<N;j++) { a[j][0]=1.0; for(int i=0;i<N;i++) a[j][i]=2.0; }\n", "imperfect"),
    "empty": ("\n", "empty"),
    "int_array": ("int a[N];\nfor(int i=0;i<N;i++) a[i]=1;\n", "type 'int'"),
    "define": ("#define N abc\ndouble a[N];\nfor(int i=0;i<N;i++) a[i]=1.0;\n", "#define"),
    "directive": ("#if 1\ndouble a[N];\nfor(int i=0;i<N;i++) a[i]=1.0;\n", "#if"),
    "nonaffine": ("double a[N];\nfor(int i=0;i<N;i++) a[i*i]=1.0;\n", "affine"),
    "ndims": ("double a[N][N];\nfor(int i=0;i<N;i++) a[i]=1.0;\n", "dimension"),
    "assign_index": ("double a[N];\nfor(int i=0;i<N;i++) i=1;\n", "loop index"),
    "two_nests": ("double a[N];\nfor(int i=0;i<N;i++) a[i]=1.0;\nfor(int i=0;i<N;i++) a[i]=2.0;\n", "one loop nest"),
    "no_loop": ("double a[N];\n", "no for-loop"),
    "ternary": ("double a[N];\nfor(int i=0;i<N;i++) a[i]= i ? 1.0 : 2.0;\n", "conditional"),
}


def _run(argv, capsys):
    rc = main(argv)
    err = capsys.readouterr().err
    return rc, err


def _check(rc, err, *needles):
    assert rc == 2
    assert err.count("\n") == 1, err
    assert err.startswith("loopmodel: ") and "Traceback" not in err
    for n in needles:
        assert n in err, err


@pytest.mark.parametrize("case", sorted(KERNELS))
def test_bad_kernel(case, tmp_path, capsys):
    src, needle = KERNELS[case]
    f = tmp_path / "bad.c"
    f.write_text(src)
    rc, err = _run(["analyze", str(f), "-m", "IvyBridgeEP_E5-2690v2", "-D", "N=100"], capsys)
    _check(rc, err, "bad.c", needle)
    assert f.read_text() == src  # the user's file is untouched


def _machine(tmp_path, mutate):
    from loopmodel.fileio.machine_files import _builtin_path
    from importlib import resources

    with resources.as_file(_builtin_path("IvyBridgeEP_E5-2690v2")) as p:
        data = yaml.safe_load(Path(p).read_text())
    mutate(data)
    f = tmp_path / "m.yml"
    f.write_text(yaml.safe_dump(data) if isinstance(data, dict) else data)
    return f


def _set(path, value):
    def mutate(d):
        cur = d
        for k in path[:-1]:
            cur = cur[k]
        if value is KeyError:
            del cur[path[-1]]
        else:
            cur[path[-1]] = value
    return mutate


MACHINES = {
    "missing_clock": (_set(["clock"], KeyError), "clock"),
    "clock_no_unit": (_set(["clock"], 3.0), "no unit"),
    "clock_bad_unit": (_set(["clock"], "3 GB"), "unit"),
    "unknown_key": (_set(["colour"], "red"), "unknown key"),
    "negative_tp": (_set(["in_core", "throughput", "ADD"], -1), "throughput"),
    "nonadjacent": (_set(["links", 0, "between"], ["L1", "L3"]), "adjacent"),
    "last_not_mem": (lambda d: d["memory_hierarchy"].pop(), "MEM"),
    "sets_ways": (_set(["memory_hierarchy", 0, "sets"], 65), "sets*ways"),
    "overlap": (_set(["overlap"], ["T_FOO"]), "overlap"),
    "bad_duplex": (_set(["links", 0, "duplex"], "full"), "duplex"),
    "bad_bw": (_set(["links", 0, "bandwidth"], "fast"), "bandwidth"),
}


@pytest.mark.parametrize("case", sorted(MACHINES))
def test_bad_machine(case, tmp_path, capsys):
    mutate, needle = MACHINES[case]
    f = _machine(tmp_path, mutate)
    rc, err = _run(["analyze", "examples/kernels/triad.c", "-m", str(f), "-D", "N=100"], capsys)
    _check(rc, err, "m.yml", needle)


def test_yaml_syntax(tmp_path, capsys):
    f = tmp_path / "m.yml"
    f.write_text("a: [\n")
    rc, err = _run(["analyze", "examples/kernels/triad.c", "-m", str(f), "-D", "N=100"], capsys)
    _check(rc, err, "m.yml:2", "YAML")


def test_not_mapping(tmp_path, capsys):
    f = tmp_path / "m.yml"
    f.write_text("- 1\n- 2\n")
    rc, err = _run(["analyze", "examples/kernels/triad.c", "-m", str(f), "-D", "N=100"], capsys)
    _check(rc, err, "mapping")


@pytest.mark.parametrize("argv,needle", [
    (["-D", "N=abc"], "not an integer"),
    (["-D", "N=0"], "positive"),
    (["-D", "1N=5"], "not a valid"),
    (["-D", "N=10:5"], "below start"),
    (["-D", "N=10", "-D", "X=5"], "no constant 'X'"),
    ([], "no value for N"),
    (["-D", "N=10", "--mem-bw", "5"], "expected B/s"),
    (["-D", "N=10", "-p", "Foo"], "unknown model"),
    (["-D", "N=10", "--cores", "0"], "--cores"),
    (["-D", "N=10", "-m", "NoSuchMachine"], "unknown machine"),
])
def test_bad_options(argv, needle, capsys):
    base = ["analyze", "examples/kernels/triad.c"]
    if "-m" not in argv:
        base += ["-m", "IvyBridgeEP_E5-2690v2"]
    rc, err = _run(base + argv, capsys)
    _check(rc, err, needle)


def test_missing_kernel(capsys):
    rc, err = _run(["analyze", "nope.c", "-m", "IvyBridgeEP_E5-2690v2"], capsys)
    _check(rc, err, "nope.c", "cannot read")


TRANSPOSED = "double a[N][N], b[N][N];\nfor(int j=0;j<N;j++) for(int i=0;i<N;i++) b[j][i]=a[i][j]+a[j][i];\n"


def test_transposed_layer_conditions_only_is_an_error(tmp_path, capsys):
    f = tmp_path / "bad.c"
    f.write_text(TRANSPOSED)
    rc, err = _run(["analyze", str(f), "-m", "IvyBridgeEP_E5-2690v2", "-D", "N=100", "-p", "LC"], capsys)
    _check(rc, err, "bad.c", "layer conditions do not apply", "--cache-predictor sim")


def test_transposed_falls_back_to_simulation(tmp_path, capsys):
    f = tmp_path / "t.c"
    f.write_text(TRANSPOSED)
    rc = main(["analyze", str(f), "-m", "IvyBridgeEP_E5-2690v2", "-D", "N=2000", "--json"])
    out = capsys.readouterr().out
    assert rc == 0
    import json
    doc = json.loads(out)
    assert doc["traffic_predictor"] == "SIM"
    assert doc["layer_conditions"] == []
    assert any("layer conditions do not apply" in n and "cache simulation instead" in n for n in doc["notes"])
    # a[i][j] walks a column: every iteration touches a new line of a (8 CL per CL of b), b and a[j][i] stream
    l1 = doc["traffic"][0]
    assert 9.5 <= l1["loads_cl"] <= 10.5


@pytest.mark.parametrize("args,needle", [
    (["--array-alignment", "0"], "--array-alignment"),
    (["--array-alignment", "3 GHz"], "--array-alignment"),
    (["--array-padding", "-64"], "--array-padding"),
    (["--array-padding", "1.5 B"], "--array-padding"),
    (["--cache-predictor", "pycachesim"], "--cache-predictor"),
])
def test_bad_simulation_options(args, needle, tmp_path, capsys):
    f = tmp_path / "k.c"
    f.write_text("double a[N], b[N];\nfor(int i=0;i<N;i++) a[i]=b[i];\n")
    try:
        rc = main(["analyze", str(f), "-m", "IvyBridgeEP_E5-2690v2", "-D", "N=1000", *args])
    except SystemExit as exc:  # argparse choices
        rc = exc.code
    err = capsys.readouterr().err
    _check(rc, err, needle)
