"""Robustness of `loopmodel analyze`: machine models without some in-core data, output that
does not depend on the per-user cache or the interpreter's hash seed, and sweeps that stream
(bounded memory, first rows at once, quiet end on a closed pipe)."""
from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
import tracemalloc

import pytest
import yaml

from helpers import IVB, KERNELS, ROOT, SNB, analyze, reference_dir, run_cli

from loopmodel.compiled.llvm_mca import find_llvm_mca
from loopmodel.models.roofline import PEAK_SOURCE

BUILTIN_DIR = ROOT / "src" / "loopmodel" / "machines"


def _a64fx() -> str:
    return str(reference_dir() / "A64FX_qpace4.yml")


def _machine_copy(tmp_path, name: str, edit) -> str:
    """A temporary copy of built-in machine ``name`` with ``edit(data)`` applied."""
    data = yaml.safe_load((BUILTIN_DIR / f"{name}.yml").read_text())
    data["name"] = f"{name}_edited"
    edit(data)
    path = tmp_path / f"{name}_edited.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def _drop_div(data):
    del data["in_core"]["throughput"]["DIV"]


@pytest.fixture
def no_llvm_mca(monkeypatch):
    """No llvm-mca to fill a missing throughput or latency in (loopmodel.compiled.incore_fill): the
    figure stays unknown, as where llvm-mca is not installed (tests/test_incore_fill.py fills it)."""
    monkeypatch.setenv("LOOPMODEL_LLVM_MCA", "/nonexistent/llvm-mca")


# --- machine models without some in-core data ------------------------------------------------------

def test_layer_conditions_need_no_incore_data():
    """A64FX (Kerncraft file) gives no DIV throughput: the layer conditions of the UXX
    stencil (which divides) do not need it, on the library level or on the command line
    (default --incore auto, which falls back to the analytic model here or not)."""
    res = analyze("uxx.c", _a64fx(), {"N": 100}, models=("LC",))
    assert res.incore is None and res.ecm is None and res.roofline is None
    assert [lv.level for lv in res.lc_levels] == ["L1", "L2"]
    p = run_cli("analyze", KERNELS / "uxx.c", "-m", _a64fx(), "-p", "LC", "-D", "N=100")
    assert p.returncode == 0, p.stderr
    assert "Layer-Condition" in p.stdout and "Traceback" not in p.stderr


def test_ecm_without_div_throughput_reports_the_transfers(no_llvm_mca):
    """A64FX: ECM keeps T_nOL and every data-transfer contribution; T_OL and T_ECM are
    unknown (null), never a number, and a note names DIV."""
    p = run_cli("analyze", KERNELS / "uxx.c", "-m", _a64fx(), "-D", "N=100", "--incore", "analytic", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    e = doc["ecm"]
    assert e["T_OL_cy_per_cl"] is None and doc["incore"]["T_OL_cy_per_cl"] is None
    assert e["T_nOL_cy_per_cl"] > 0 and [c["name"] for c in e["contributions"]] == ["L1L2", "L2MEM"]
    assert all(c["time_cy_per_cl"] > 0 for c in e["contributions"])
    assert set(e["T_ECM_cy_per_cl"]) == {"L1", "L2", "MEM"} and all(v is None for v in e["T_ECM_cy_per_cl"].values())
    # eq. 4 without T_OL (A64FX: only T_OL overlaps): T_nOL plus the transfers up to the level.
    # The file names its non-overlapping ports (load ports 5D, 6D): stores count in T_OL
    # (kerncraft-tool-paper.txt §2.3), so T_nOL is the loads' 34.0 cy/CL (LD), not LD+ST 36.0;
    # L1L2 = (2304 + 256) B / 64 B/cy = 40.0; L2MEM = 11.62 cy/CL:
    # eq. 4 without T_OL: L1 34.0, L2 34 + 40 = 74.0, MEM 74 + 11.62 = 85.62
    assert [c["time_cy_per_cl"] for c in e["contributions"]] == pytest.approx([40.0, 11.62], abs=0.01)
    assert e["T_transfer_cy_per_cl"] == pytest.approx({"L1": 34.0, "L2": 74.0, "MEM": 85.62}, abs=0.01)
    assert e["saturation_cores"] is None and e["multicore_cy_per_cl"] is None
    assert all(v is None for v in e["performance"].values())
    assert "DIV" in e["unknown"] and e["notation"].startswith("{ n/a || ")
    assert any("no throughput for DIV" in n for n in doc["notes"])
    # no FLOPs per cycle in the file either: the CPU roof would be T_OL, so Roofline is unknown too
    r = doc["roofline"]
    assert r["cpu_time_cy_per_cl"] is None and r["performance_flop_s"] is None and r["bottleneck"] is None
    assert "DIV" in r["unknown"] and len(r["levels"]) == 3


def test_ecm_without_div_throughput_text(no_llvm_mca):
    p = run_cli("analyze", KERNELS / "uxx.c", "-m", _a64fx(), "-D", "N=100", "--incore", "analytic", "-v")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "{ n/a || 34.0 | 40.0 | 11.6 } cy/CL" in out
    assert "{ n/a \\ n/a \\ n/a } cy/CL" in out
    assert "data transfers (eq. 4 without T_OL, lower bounds of T_ECM): { 34.0 \\ 74.0 \\ 85.6 } cy/CL" in out
    assert "saturating at" not in out and "no throughput for DIV" in out
    assert "performance n/a" in out


def test_builtin_model_without_div_throughput(tmp_path, no_llvm_mca):
    """The same model with and without DIV throughput: the transfers, T_nOL and the bandwidth roofs are
    equal; T_OL and T_ECM become unknown instead of another number, and the Roofline's CPU roof falls
    back from T_OL to the applicable peak FLOP/s (which needs no DIV throughput, a lower bound of T_OL)."""
    full = analyze("uxx.c", SNB, {"N": 100})
    part = analyze("uxx.c", _machine_copy(tmp_path, SNB, _drop_div), {"N": 100})
    assert part.incore.T_OL is None and part.incore.T_nOL == full.incore.T_nOL
    assert "DIV" not in part.incore.components and "MUL+DIV" not in part.incore.components
    assert part.incore.components["MUL"] == full.incore.components["MUL"]
    assert [c.cycles for c in part.ecm.contributions] == [c.cycles for c in full.ecm.contributions]
    assert all(v is None for v in part.ecm.T_ECM.values())
    assert all(part.ecm.T_transfer[lv] <= full.ecm.T_ECM[lv] for lv in full.ecm.T_ECM)
    assert part.roofline.unknown is None and part.roofline.cpu_source == PEAK_SOURCE
    assert part.roofline.levels == full.roofline.levels and part.roofline.cpu_time <= full.roofline.cpu_time
    assert any("no throughput for DIV (in_core.throughput.DIV)" in n for n in part.notes)


def test_builtin_model_without_div_throughput_and_flops(tmp_path, no_llvm_mca):
    """Without FLOPs per cycle the CPU roof is T_OL: unknown here, so the Roofline prediction is
    n/a while its bandwidth roofs stay."""
    def edit(data):
        _drop_div(data)
        del data["in_core"]["flops_per_cycle"]
    res = analyze("uxx.c", _machine_copy(tmp_path, SNB, edit), {"N": 100})
    r = res.roofline
    assert r.cpu_time is None and r.time is None and r.performance is None and r.bottleneck is None
    assert "DIV" in r.unknown and [lv.level for lv in r.levels] == ["L1", "L2", "L3", "MEM"]
    assert r.bandwidth_bound().time == max(lv.time for lv in r.levels)


def test_builtin_model_without_add_latency(tmp_path, no_llvm_mca):
    """A strict (not reassociated) dot product is bound by the ADD latency: without it, and on a
    micro-architecture with no documented latency, T_OL is unknown, the dependency too, and the
    note names the latency."""
    def edit(data):
        del data["in_core"]["latency"]["ADD"]
        data["micro_architecture"] = "XYZ"
    res = analyze("dot.c", _machine_copy(tmp_path, SNB, edit), {"N": 100000}, reassociate=False)
    assert res.incore.T_OL is None and res.incore.dependency is None
    assert "dependency" not in res.incore.components
    assert all(v is None for v in res.ecm.T_ECM.values())
    assert any("no latency for ADD (in_core.latency.ADD)" in n for n in res.notes)


def test_model_without_add_latency_takes_the_documented_one(tmp_path):
    """Without ``in_core.latency.ADD`` a known micro-architecture (SNB) takes its documented ADD
    latency (3 cy): the strict dot product is 3 cy x 8 it = 24 cy/CL, as with the model's own."""
    def edit(data):
        del data["in_core"]["latency"]["ADD"]
    res = analyze("dot.c", _machine_copy(tmp_path, SNB, edit), {"N": 100000}, reassociate=False)
    assert res.incore.T_OL == pytest.approx(24.0) and res.incore.dependency == pytest.approx(3.0)  # cy/it
    assert any("documented for SNB" in n for n in res.notes), res.notes


def test_scaling_without_ecm_prediction_is_a_one_line_error(tmp_path, no_llvm_mca):
    machine = _machine_copy(tmp_path, SNB, _drop_div)
    p = run_cli("scaling", KERNELS / "uxx.c", "-m", machine, "-D", "N=100", "--incore", "analytic")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip().count("\n") == 0
    assert "no ECM prediction: machine model" in p.stderr and "no throughput for DIV" in p.stderr


# --- deterministic output ----------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("gcc") is None or find_llvm_mca() is None, reason="gcc and llvm-mca needed")
@pytest.mark.parametrize("fmt", ["--json", "-v"])
def test_same_output_computed_and_from_cache(tmp_path, fmt):
    """Three runs of one llvm-mca analysis: the first computes and fills a fresh cache, the
    others read it. Each process has its own hash seed (as every real run does); the output
    must be the same bytes (port tables sorted, not in set order)."""
    args = ["analyze", str(KERNELS / "2d-5pt.c"), "-m", SNB, "-D", "M=100", "-D", "N=1000",
            "--incore", "llvm-mca", fmt]
    outs = []
    for seed in ("1", "2", "3"):
        env = dict(os.environ, LOOPMODEL_CACHE_DIR=str(tmp_path / "cache"), PYTHONHASHSEED=seed)
        env.pop("COLUMNS", None)
        p = subprocess.run([sys.executable, "-m", "loopmodel.cli", *args], capture_output=True, text=True,
                           env=env, timeout=120)
        assert p.returncode == 0, p.stderr
        outs.append(p.stdout)
    assert list((tmp_path / "cache" / "incore").iterdir())  # the later runs read the cache
    assert outs[1] == outs[0] and outs[2] == outs[0]
    if fmt == "--json":
        ports = json.loads(outs[0])["incore"]["compiled"]
        for key in ("ports_cy_per_pass", "balanced_ports_cy_per_pass", "load_ports_cy_per_pass"):
            assert list(ports[key]) == sorted(ports[key])


# --- streamed sweeps -----------------------------------------------------------------------------------

def test_sweep_points_are_lazy():
    """A trillion points: counted, indexed and iterated without a list of them."""
    from loopmodel.fileio.defines import sweep

    pts = sweep(["N=1:1000000000000", "M=2:4"], {"K": 7})
    assert len(pts) == 3 * 10 ** 12
    it = iter(pts)
    assert [next(it) for _ in range(4)] == [{"K": 7, "N": 1, "M": m} for m in (2, 3, 4)] + [{"K": 7, "N": 2, "M": 2}]
    assert pts[len(pts) - 1] == pts.largest() == {"K": 7, "N": 10 ** 12, "M": 4}
    assert pts.names() == {"K", "N", "M"}


def _first_lines(args, n, deadline=30.0):
    """Start the CLI, read ``n`` stdout lines (each must come before ``deadline`` s), close the
    pipe; returns ``(lines, seconds to the first, returncode, stderr)``."""
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    p = subprocess.Popen([sys.executable, "-m", "loopmodel.cli", *map(str, args)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    t0 = time.monotonic()
    lines, first = [], None
    try:
        import selectors

        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        while len(lines) < n:
            left = deadline - (time.monotonic() - t0)
            if left <= 0 or not sel.select(timeout=left):
                break
            line = p.stdout.readline()
            if not line:
                break
            first = first if first is not None else time.monotonic() - t0
            lines.append(line)
        p.stdout.close()  # like '| head': the next write hits a closed pipe
        rc = p.wait(timeout=30)
        return lines, first, rc, p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


MILLION = ["analyze", KERNELS / "triad.c", "-m", SNB, "-D", "N=1:1000000", "--incore", "analytic"]


def test_million_point_sweep_streams_json_lines():
    lines, first, rc, err = _first_lines(MILLION + ["--json"], 3)
    assert len(lines) == 3, err
    docs = [json.loads(line) for line in lines]  # each line one complete document
    assert [d["defines"]["N"] for d in docs] == [1, 2, 3]
    assert all(set(d["ecm"]["T_ECM_cy_per_cl"]) == {"L1", "L2", "L3", "MEM"} for d in docs)
    assert rc == 0 and err == ""  # closed pipe: quiet end, no traceback


def test_million_point_sweep_streams_text_rows():
    lines, first, rc, err = _first_lines(MILLION, 6)
    assert len(lines) == 6, err
    assert "ECM MEM" in lines[2] and lines[1].startswith("┏")
    assert [ln.split("│")[1].strip() for ln in lines[4:6]] == ["1", "2"]
    assert rc == 0 and err == ""


def test_closed_pipe_on_a_single_point_is_quiet():
    lines, _, rc, err = _first_lines(["analyze", KERNELS / "2d-5pt.c", "-m", IVB, "-D", "M=100", "-D", "N=100",
                                      "--incore", "analytic", "--json"], 1)
    assert lines == ["{\n"] and rc == 0 and err == ""


class _Discard(io.TextIOBase):
    def write(self, s):
        return len(s)


def _peak_bytes(args) -> int:
    from loopmodel.cli import main

    tracemalloc.start()
    try:
        with contextlib.redirect_stdout(_Discard()):
            assert main([str(a) for a in args]) == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("fmt", [[], ["--json"]])
def test_sweep_memory_does_not_grow_with_points(fmt):
    """Python memory allocated during a 400-point sweep stays far below what holding the
    results would take (about 15 kB per point)."""
    base = ["analyze", KERNELS / "triad.c", "-m", SNB, "--incore", "analytic", "--no-progress", *fmt]
    _peak_bytes(base + ["-D", "N=1:2"])  # imports and caches first
    assert _peak_bytes(base + ["-D", "N=1:400"]) < 1_500_000
