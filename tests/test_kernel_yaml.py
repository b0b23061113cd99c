"""Kerncraft's YAML kernel descriptions (loopmodel.fileio.kernel_yaml).

A description and the C code of the same kernel must give the same kernel facts (arrays,
loops, accesses, operation counts) and the same layer conditions, data traffic and ECM
data-transfer terms. The peer's own description (tests/test_files/2d-5pt.yml of
Kerncraft 0.8.18, read at test time where unpacked) is compared with its C twin; the
examples in examples/kernels always run.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from loopmodel.cli import main
from loopmodel.fileio.c_kernel import parse_kernel_file
from loopmodel.fileio.kernel_file import load_kernel

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "kernels"
PEER = Path(os.environ.get("LOOPMODEL_PEER_SRC", "/tmp/kc/kerncraft-0.8.18"))
SNB = "SandyBridgeEP_E5-2680"


def _peer_twins() -> list:
    """(yml, c) pairs of the peer's YAML descriptions that have a C file of the same name."""
    pairs = []
    for sub in ("tests/test_files", "examples/kernels"):
        d = PEER / sub
        if d.is_dir():
            pairs += [(y, y.with_suffix(".c")) for y in sorted(d.glob("*.yml")) if y.with_suffix(".c").is_file()]
    return pairs


OWN = [(EXAMPLES / "2d-5pt.yml", EXAMPLES / "2d-5pt.c", {"N": 1000, "M": 1000}),
       (EXAMPLES / "daxpy.yml", EXAMPLES / "daxpy.c", {"N": 100000})]


def _facts(kernel) -> dict:
    return {"arrays": kernel.arrays, "scalars": {n: s.ctype for n, s in kernel.scalars.items()},
            "loops": [(lp.index, lp.start, lp.stop, lp.step) for lp in kernel.loops],
            "reads": {(a.array, a.indices, a.offset) for a in kernel.reads},
            "writes": {(a.array, a.indices, a.offset) for a in kernel.writes},
            "operations": dict(kernel.operations), "constants": kernel.constants}


def _doc(capsys, kernel, defines, *extra):
    argv = ["analyze", str(kernel), "-m", SNB, "--incore", "analytic", "--json", "--sweeps", "single", *extra]
    for n, v in defines.items():
        argv += ["-D", f"{n}={v}"]
    rc = main(argv)
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out)


def _data_terms(doc) -> dict:
    return {"layer_conditions": doc["layer_conditions"], "traffic": doc["traffic"],
            "ecm": [(c["name"], c["busy_cy_per_cl"]) for c in doc["ecm"]["contributions"]],
            "roofline_levels": doc["roofline"]["levels"]}


@pytest.mark.parametrize("yml, c, defines", OWN, ids=lambda x: getattr(x, "name", ""))
def test_own_yaml_examples_match_their_c_twins(capsys, yml, c, defines):
    ky = load_kernel(str(yml), use_cache=False)[0]
    kc, _ = parse_kernel_file(str(c))
    assert _facts(ky) == _facts(kc)
    assert _data_terms(_doc(capsys, yml, defines)) == _data_terms(_doc(capsys, c, defines))


@pytest.mark.skipif(not _peer_twins(), reason="Kerncraft 0.8.18 source not unpacked (LOOPMODEL_PEER_SRC)")
@pytest.mark.parametrize("sizes", [{"N": 1000, "M": 50}, {"N": 2000, "M": 2000}])
def test_peer_yaml_descriptions_match_their_c_twins(capsys, sizes):
    for yml, c in _peer_twins():
        ky = load_kernel(str(yml), use_cache=False)[0]
        kc, _ = parse_kernel_file(str(c))
        assert _facts(ky) == _facts(kc), yml
        y, cc = _doc(capsys, yml, sizes), _doc(capsys, c, sizes)
        assert _data_terms(y) == _data_terms(cc), yml
        for predictor in ("sim", "lc"):
            y = _doc(capsys, yml, sizes, "-p", "ECMData", "-P", predictor)
            cc = _doc(capsys, c, sizes, "-p", "ECMData", "-P", predictor)
            assert y["ecm"]["contributions"] == cc["ecm"]["contributions"], (yml, predictor)


def test_yaml_kernel_analyzes_through_the_cli_with_a_note(capsys):
    rc = main(["analyze", str(EXAMPLES / "2d-5pt.yml"), "-m", SNB, "-D", "N=1000", "-D", "M=1000", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert any("YAML kernel description" in n and "analytic" in n for n in doc["notes"])
    assert doc["incore"]["T_OL_cy_per_cl"] is not None and doc["roofline"]["performance_flop_s"] is not None


@pytest.mark.parametrize("argv, what", [(["--incore", "llvm-mca"], "--incore llvm-mca"),
                                        (["-i", "OSACA"], "--incore osaca"),
                                        (["-p", "RooflineASM"], "-p RooflineASM")])
def test_compiled_analyses_of_a_yaml_kernel_are_refused(capsys, argv, what):
    rc = main(["analyze", str(EXAMPLES / "daxpy.yml"), "-m", SNB, "-D", "N=1000", *argv])
    err = capsys.readouterr().err
    assert rc == 2
    assert len(err.strip().splitlines()) == 1 and what in err and "needs C code" in err and "daxpy.yml" in err


GOOD = (EXAMPLES / "daxpy.yml").read_text()

BAD = {
    "python_object": ("!!python/object/apply:os.system ['touch /tmp/loopmodel-yaml-ran']\n", "not valid YAML"),
    "syntax": ("arrays: [\n", "not valid YAML"),
    "not_a_mapping": ("- 1\n- 2\n", "must be a mapping"),
    "missing_loops": (GOOD.replace("loops:\n    - {index: i, start: 0, stop: N, step: 1}\n", ""), "missing key 'loops'"),
    "unknown_key": (GOOD + "flop: {}\n", "unknown key 'flop'"),
    "undeclared_array": (GOOD.replace("x: [[i]]", "z: [[i]]"), "data sources.z: 'z' is not declared"),
    "index_count": (GOOD.replace("x: [[i]]", "x: [[i, i]]"), "'x' has 1 dimension(s)"),
    "code_in_expression": (GOOD.replace("stop: N,", "stop: \"__import__('os').system('x')\","),
                           "loops[0].stop"),
    "nonaffine_index": (GOOD.replace("x: [[i]]", "x: [[i*i]]"), "not affine"),
    "zero_step": (GOOD.replace("step: 1", "step: 0"), "non-zero integer"),
    "unknown_flop": (GOOD.replace('"*": 1', '"^": 1'), "unknown operation '^'"),
    "int_array": (GOOD.replace("x: {type: [double], dimension: [N]}", "x: {type: [int], dimension: [N]}"),
                  "only double and float arrays"),
    "writes_nothing": (GOOD.replace("    y: [[i]]\nflops", "    {}\nflops"), "writes nothing"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_yaml_kernels_give_one_line_errors(capsys, tmp_path, name):
    text, what = BAD[name]
    path = tmp_path / f"{name}.yml"
    path.write_text(text)
    rc = main(["analyze", str(path), "-m", SNB, "-D", "N=1000"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1 and str(path) in err and what in err, err
    assert not os.path.exists("/tmp/loopmodel-yaml-ran")


def test_kernel_loader_picks_the_front_end_by_suffix():
    k, defaults, text, notes = load_kernel(str(EXAMPLES / "daxpy.c"))
    assert text.startswith("/* daxpy") and notes == ()
    k, defaults, text, notes = load_kernel(str(EXAMPLES / "daxpy.yml"))
    assert text is None and defaults == {} and any("FMA" in n for n in notes)


def test_codegen_refuses_a_yaml_description_in_one_line(capsys):
    rc = main(["codegen", str(EXAMPLES / "daxpy.yml"), "-D", "N=1000"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "codegen needs a C kernel" in err and "daxpy.yml" in err
