"""Kerncraft's command-line spellings accepted by 'loopmodel analyze' as aliases.

Each alias runs the real command (loopmodel.cli.main) and is compared with the output of
loopmodel's own spelling: the same options must give the same analysis.
"""
from __future__ import annotations

import importlib.util
import json
import shutil

import pytest

from loopmodel.cli import main
from loopmodel.compiled.llvm_mca import find_llvm_mca

TRIAD = "examples/kernels/triad.c"
FIVE = "examples/kernels/2d-5pt.c"
SNB = "SandyBridgeEP_E5-2680"


def _run(capsys, *argv):
    rc = main(["analyze", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _json(capsys, *argv):
    rc, out, err = _run(capsys, *argv, "--json")
    assert rc == 0, err
    return json.loads(out)


def _without_notes(doc):
    return {k: v for k, v in doc.items() if k != "notes"}


def test_define_two_token_long_form_equals_native(capsys):
    peer = _json(capsys, FIVE, "-m", SNB, "--define", "N", "1000", "--define", "M", "200", "--incore", "analytic")
    native = _json(capsys, FIVE, "-m", SNB, "-D", "N=1000", "-D", "M=200", "--incore", "analytic")
    assert peer == native
    assert peer["defines"] == {"N": 1000, "M": 200}


def test_define_two_token_range_is_a_sweep(capsys):
    rc, out, err = _run(capsys, TRIAD, "-m", SNB, "--define", "N", "1000-4000:2", "-p", "LC", "--json")
    assert rc == 0, err
    assert [json.loads(ln)["defines"]["N"] for ln in out.splitlines()] == [1000, 4000]


@pytest.mark.parametrize("peer, native", [("SIM", "sim"), ("LC", "lc")])
def test_cache_predictor_short_option_and_upper_case(capsys, peer, native):
    a = _json(capsys, FIVE, "-m", SNB, "-D", "N=500", "-D", "M=100", "-P", peer, "--incore", "analytic", "-p", "ECM")
    b = _json(capsys, FIVE, "-m", SNB, "-D", "N=500", "-D", "M=100", "--cache-predictor", native,
              "--incore", "analytic", "-p", "ECM")
    assert a == b
    assert a["traffic_predictor"] == peer


_NO_GCC = shutil.which("gcc") is None
_NO_OSACA = importlib.util.find_spec("osaca") is None


@pytest.mark.parametrize("option, peer, native", [
    pytest.param("-i", "OSACA", "osaca", marks=pytest.mark.skipif(_NO_GCC or _NO_OSACA, reason="needs gcc and OSACA")),
    pytest.param("--incore-model", "LLVM-MCA", "llvm-mca",
                 marks=pytest.mark.skipif(_NO_GCC or find_llvm_mca() is None, reason="needs gcc and llvm-mca")),
    ("-i", "analytic", "analytic")])
def test_incore_model_aliases(capsys, option, peer, native):
    a = _json(capsys, TRIAD, "-m", SNB, "-D", "N=1000", option, peer, "-p", "ECM")
    b = _json(capsys, TRIAD, "-m", SNB, "-D", "N=1000", "--incore", native, "-p", "ECM")
    assert a == b
    assert a["incore"]["T_OL_cy_per_cl"] == b["incore"]["T_OL_cy_per_cl"] and a["incore"]["T_OL_cy_per_cl"] is not None


def test_incore_iaca_is_refused_in_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["analyze", TRIAD, "-m", SNB, "-D", "N=1000", "-i", "IACA"])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert len(err.strip().splitlines()) == 1 and "IACA is not supported" in err


@pytest.mark.parametrize("peer, native", [("cy/It", "cy/it"), ("It/s", "it/s"), ("flop/s", "FLOP/s"),
                                          ("CY/CL", "cy/CL")])
def test_unit_names_case_insensitive(capsys, peer, native):
    rc1, a, _ = _run(capsys, TRIAD, "-m", SNB, "-D", "N=1000", "--incore", "analytic", "--unit", peer)
    rc2, b, _ = _run(capsys, TRIAD, "-m", SNB, "-D", "N=1000", "--incore", "analytic", "--unit", native)
    assert rc1 == rc2 == 0 and a == b
    assert f"unit {native}" in a


def test_ecmdata_is_ecm_with_the_analytic_incore_part(capsys):
    peer = _json(capsys, FIVE, "-m", SNB, "-D", "N=1000", "-D", "M=50", "-p", "ECMData", "-P", "SIM")
    native = _json(capsys, FIVE, "-m", SNB, "-D", "N=1000", "-D", "M=50", "-p", "ECM", "--incore", "analytic",
                   "--cache-predictor", "sim")
    assert _without_notes(peer) == _without_notes(native)
    assert any("ECMData" in n and "T_L1L2" in n for n in peer["notes"])
    # the peer's data terms for this case (its tests/test_kerncraft.py, ECMData with SIM): 6, 6, 0 cy/CL
    terms = {c["name"]: c["busy_cy_per_cl"] for c in peer["ecm"]["contributions"]}
    assert terms["L1L2"] == pytest.approx(6, rel=0.05) and terms["L2L3"] == pytest.approx(6, rel=0.05)


def test_ecmcpu_and_rooflineflop_are_ecm_and_roofline(capsys):
    base = (TRIAD, "-m", SNB, "-D", "N=1000", "--incore", "analytic")
    cpu, ecm = _json(capsys, *base, "-p", "ECMCPU"), _json(capsys, *base, "-p", "ECM")
    assert _without_notes(cpu) == _without_notes(ecm)
    assert any("ECMCPU" in n and "T_OL" in n for n in cpu["notes"])
    flop, roof = _json(capsys, *base, "-p", "RooflineFLOP"), _json(capsys, *base, "-p", "Roofline")
    assert flop == roof and flop["roofline"] is not None


def test_json_file_writes_a_new_file_and_prints_the_text_report(capsys, tmp_path):
    base = (TRIAD, "-m", SNB, "-D", "N=1000", "--incore", "analytic")
    native = json.loads(_run(capsys, *base, "--json")[1])
    text = _run(capsys, *base)[1]
    out = tmp_path / "result.json"
    rc, stdout, err = _run(capsys, *base, "--json", str(out))
    assert rc == 0, err
    assert json.loads(out.read_text()) == native
    assert stdout == text
    other = tmp_path / "other"  # no .json suffix: a name that does not exist yet is the file
    rc, stdout, err = _run(capsys, "--json=" + str(other), *base)
    assert rc == 0 and json.loads(other.read_text()) == native


def test_json_file_never_overwrites(capsys, tmp_path):
    out = tmp_path / "result.json"
    out.write_text("the user's data\n")
    rc, stdout, err = _run(capsys, TRIAD, "-m", SNB, "-D", "N=1000", "--json", str(out))
    assert rc == 2 and stdout == ""
    assert len(err.strip().splitlines()) == 1 and "not overwritten" in err and str(out) in err
    assert out.read_text() == "the user's data\n"


def test_json_before_the_kernel_is_still_the_flag(capsys):
    rc, out, err = _run(capsys, "-m", SNB, "--json", TRIAD, "-D", "N=1000", "--incore", "analytic")
    assert rc == 0, err
    assert json.loads(out)["kernel"]["file"] == TRIAD


def test_json_file_for_a_sweep_holds_json_lines(capsys, tmp_path):
    base = (TRIAD, "-m", SNB, "-D", "N=1000:3000:1000", "-p", "LC")
    native = [json.loads(ln) for ln in _run(capsys, *base, "--json")[1].splitlines()]
    out = tmp_path / "sweep.json"
    rc, stdout, err = _run(capsys, *base, "--json", str(out))
    assert rc == 0, err
    assert [json.loads(ln) for ln in out.read_text().splitlines()] == native
    assert "3000" in stdout


def test_help_names_the_kerncraft_spellings(capsys):
    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for spelling in ("--define N 1000", "-P/--cache-predictor", "-i/--incore-model", "cy/It", "ECMData", "ECMCPU",
                     "RooflineFLOP", "--json FILE"):
        assert spelling in out


def test_peer_suite_reads_kernel_facts_from_the_kernel_ir():
    """The harness's mapping of the peer's tests/test_kernel.py, on loopmodel's own 2D 5-point
    kernel (no peer needed): at N=10, M=20 each array is 20*10*8 B, and the first iteration
    (j = i = 1) reads a at byte 8*(1*10+0), 8*(1*10+2), 8*(0*10+1), 8*(2*10+1) and writes b
    (placed after a) at 1600 + 8*(1*10+1), counted by hand."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import peer_suite as ps

    from loopmodel.fileio.c_kernel import parse_kernel_file

    k, _ = parse_kernel_file(FIVE)
    sizes = {"N": 10, "M": 20}
    assert ps.array_sizes_bytes(k, sizes) == {"a": 1600, "b": 1600}
    assert ps.first_offsets(k, sizes) == ([8, 80, 96, 168], [1688])
    assert ps.iteration_count(k, sizes) == 18 * 8
    assert ps.suite_of("test_global_offsets_2d") == "test_kernel.py"
    # the runs pass the peer's own spellings now that they are aliases
    options = " ".join(" ".join(c.options) for c in ps.all_cases())
    assert "-p ECMData" in options and "-P SIM" in options and "-i OSACA" in options
    assert "--cache-predictor" not in options
