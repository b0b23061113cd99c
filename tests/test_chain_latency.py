"""Loop-carried chains of compiled blocks at the probe's latencies, and chains through memory.

Blocks are gcc 12 output (Gauss-Seidel ``gs2d.c`` of ``benchmarks/incore_classic`` at -O1: the
value a[j][i-1] is stored and reloaded; at -O2: it stays in %xmm0) or made-up forms of the same
patterns. Expected latencies are counted by hand from the fake probe figures below.
"""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from helpers import SKX, requires_tool, run_cli

from loopmodel.compiled import chain_latency as CL
from loopmodel.compiled.deps import critical_cycle, loop_carried_chains
from loopmodel.compiled.incore import CompiledInCore, latency_bound
from loopmodel.compiled.llvm_mca import find_llvm_mca
from loopmodel.fileio.c_kernel import parse_kernel
from loopmodel.fileio.machine_files import load_machine
from loopmodel.machine import latency as mlat
from loopmodel.machine.probe_section import probe_section
from loopmodel.models.incore import analytic_incore

ROOT = Path(__file__).resolve().parents[1]

GS_O1 = """vmovsd -8(%rdx,%rax), %xmm0
vaddsd 8(%rdx,%rax), %xmm0, %xmm0
vaddsd (%rsi,%rax), %xmm0, %xmm0
vaddsd (%rcx,%rax), %xmm0, %xmm0
vmulsd %xmm1, %xmm0, %xmm0
vmovsd %xmm0, (%rdx,%rax)
addq $8, %rax
cmpq $1592, %rax
jne .L3"""

GS_O2 = """vaddsd 8(%rdx,%rax), %xmm0, %xmm0
vaddsd (%rdi,%rax), %xmm0, %xmm0
vaddsd (%rcx,%rax), %xmm0, %xmm0
vmulsd %xmm1, %xmm0, %xmm0
vmovsd %xmm0, (%rdx,%rax)
addq $8, %rax
cmpq $1592, %rax
jne .L3"""

#: a[i+1] = a[i] * s through memory, base + displacement form
BASE_DISP = """vmovsd (%rax), %xmm0
vmulsd %xmm1, %xmm0, %xmm0
vmovsd %xmm0, 8(%rax)
addq $8, %rax
cmpq %rax, %rdx
jne .L3"""

#: a[i] = a[i-1] * s through memory, scaled index form
SCALED = """vmovsd -8(%rdx,%rax,8), %xmm0
vmulsd %xmm1, %xmm0, %xmm0
vmovsd %xmm0, (%rdx,%rax,8)
addq $1, %rax
cmpq %rax, %rcx
jne .L3"""

#: a[i+2] = a[i] * s: the store is read two passes later
TWO_PASSES = """vmovsd (%rax), %xmm0
vmulsd %xmm1, %xmm0, %xmm0
vmovsd %xmm0, 16(%rax)
addq $8, %rax
cmpq %rax, %rdx
jne .L3"""

#: four vector accumulators (a reassociated sum, gcc -Ofast -funroll-loops style)
FOUR_ACCUMULATORS = """vaddpd (%rdi), %ymm0, %ymm0
vaddpd 32(%rdi), %ymm1, %ymm1
vaddpd 64(%rdi), %ymm2, %ymm2
vaddpd 96(%rdi), %ymm3, %ymm3
addq $128, %rdi
cmpq %rdi, %rax
jne .L2"""

#: two values that swap every pass: x0' = x1 + c, x1' = x0 * c: one cycle over two passes
SWAP = """vaddsd %xmm1, %xmm4, %xmm5
vmulsd %xmm0, %xmm4, %xmm1
vmovapd %xmm5, %xmm0
addq $8, %rax
cmpq %rax, %rdx
jne .L3"""


def _point(op, width, cy):
    return {"op": op, "width_bytes": width, "kind": "latency", "form": "x", "cy_per_instruction_min": cy}


def probed(add=2.0, mul=4.0, add64=3.5, load=5.0):
    """Skylake-SP's machine file with a fake probe: ADD 8-32 B ``add``, 64 B ``add64``, MUL all ``mul``."""
    m = load_machine(SKX)
    points = [_point("ADD", w, add) for w in (8, 16, 32)] + [_point("ADD", 64, add64)]
    points += [_point("MUL", w, mul) for w in (8, 16, 32, 64)]
    return dataclasses.replace(m, probe=probe_section({"in_core": {"points": points}, "latency": [
        {"size_B": 12288, "cy_min": load}]}))


def _info(block, sim, thr, u=1.0):
    return CompiledInCore("llvm-mca", "14", "gcc", "12", ("-O2",), ".L3", block, u, 8 * u, {"P0": thr}, thr, sim, "")


def _chains(block):
    return loop_carried_chains(block.split("\n"))


# -- deps: chains and their critical cycles ------------------------------------------------

@pytest.mark.parametrize("block", [GS_O1, BASE_DISP, SCALED])
def test_memory_chain_found_in_indexed_and_base_displacement_forms(block):
    (chain,) = _chains(block)
    assert chain.memory and chain.memory[0][2] == 1
    assert any(via == "memory" and d == 1 for _, _, via, d in chain.edges)
    cyc = critical_cycle(chain, lambda i, via: 10.0 if via == "memory" else 1.0)
    assert cyc.passes == 1 and any(v == "memory" for _, v, _, _ in cyc.steps)


def test_register_chain_and_its_cycle():
    (chain,) = _chains(GS_O2)
    assert chain.registers == ("%xmm0",) and not chain.memory
    cyc = critical_cycle(chain, lambda i, via: float(i + 1))  # instructions 0..3 cost 1..4
    assert cyc.cy_per_pass == pytest.approx(10.0) and len(cyc.steps) == 4


def test_chain_over_two_passes_is_halved():
    (chain,) = _chains(TWO_PASSES)
    assert chain.memory[0][2] == 2
    cyc = critical_cycle(chain, lambda i, via: 6.0 if via == "memory" else 4.0 if i == 1 else 0.0)
    assert cyc.passes == 2 and cyc.cy_per_pass == pytest.approx(5.0)


def test_cycle_through_two_carried_registers():
    (chain,) = _chains(SWAP)
    cyc = critical_cycle(chain, lambda i, via: [3.0, 5.0, 1.0][i])
    assert cyc.passes == 2 and cyc.cy_per_pass == pytest.approx(4.5)


def test_unknown_latency_gives_no_cycle():
    (chain,) = _chains(GS_O2)
    assert critical_cycle(chain, lambda i, via: None if i == 3 else 1.0) is None


# -- latencies: probe, analyzer, machine model -------------------------------------------

def test_probe_latencies_sum_on_the_register_chain():
    (c,) = CL.chain_latencies(GS_O2.split("\n"), False, probed())
    assert c.measured and c.cy_per_pass == pytest.approx(3 * 2.0 + 4.0)
    assert "3 x vaddsd 2 cy (probe, 8 B)" in c.describe() and "vmulsd 4 cy (probe, 8 B)" in c.describe()


def test_memory_chain_counts_store_forwarding_assumed_then_measured(monkeypatch):
    (c,) = CL.chain_latencies(GS_O1.split("\n"), False, probed())
    assert c.measured and c.cy_per_pass == pytest.approx(CL.ASSUMED_CY + 3 * 2.0 + 4.0)
    assert "store-to-load forwarding 5 cy, assumed" in c.describe()
    monkeypatch.setattr(mlat, "store_forward", lambda machine: mlat.Latency(4.5, "probe"))
    (c,) = CL.chain_latencies(GS_O1.split("\n"), False, probed())
    assert c.cy_per_pass == pytest.approx(4.5 + 10.0) and "4.5 cy, probe" in c.describe()


def test_without_probe_the_machine_model_latency_is_not_measured():
    (c,) = CL.chain_latencies(GS_O2.split("\n"), False, load_machine(SKX))
    assert not c.measured and c.cy_per_pass == pytest.approx(4 * 4.0)  # Skylake-SP file: ADD = MUL = 4 cy
    assert c.unmeasured  # the FP instructions have no probe figure


def test_analyzer_latency_for_moves_and_folded_loads():
    lines = [" ".join(ln.split()) for ln in SWAP.split("\n")]
    analyzer = ((4.0, 4.0, 1.0, 1.0, 1.0, 1.0), 5.0)
    (c,) = CL.chain_latencies(lines, False, probed(add=2.0, mul=4.0), analyzer)
    assert c.measured and c.cy_per_pass == pytest.approx((2.0 + 4.0 + 1.0) / 2)
    (c,) = CL.chain_latencies(lines, False, probed())  # no analyzer: the move's latency is unknown
    assert c.cy_per_pass is None and "vmovapd %xmm5, %xmm0" in c.unmeasured


def test_zmm_block_keeps_each_add_at_its_own_width():
    block = "vmulpd (%rdi), %zmm5, %zmm1\n" + GS_O2
    (c,) = CL.chain_latencies(block.split("\n"), False, probed(add=2.0, add64=3.5))
    assert c.cy_per_pass == pytest.approx(3 * 2.0 + 4.0) and "512-bit" not in c.describe()


def test_chain_classes_by_width():
    """The chains classify FP instructions with the one classifier (:mod:`loopmodel.compiled.instructions`);
    SVE takes the machine's SIMD width."""
    from loopmodel.compiled.instructions import fp_class as classify
    assert classify("vaddsd %xmm1, %xmm0, %xmm0") == ("ADD", 8)
    assert classify("vsubps %ymm1, %ymm0, %ymm0") == ("ADD", 32)
    assert classify("vfmadd231pd (%rdi), %zmm3, %zmm0") == ("FMA", 64)
    assert classify("divss %xmm1, %xmm0") == ("DIV", 4)
    assert classify("vmovapd %xmm1, %xmm0") is None
    assert classify("fadd d0, d0, d1", aarch64=True) == ("ADD", 8)
    assert classify("fmla v0.2d, v1.2d, v2.2d", aarch64=True) == ("FMA", 16)
    assert classify("fmla z0.d, p0/m, z1.d, z2.d", aarch64=True) is None
    assert classify("fmla z0.d, p0/m, z1.d, z2.d", aarch64=True, sve_bytes=32) == ("FMA", 32)


def test_op_latency_prefers_latency_by_width_and_falls_back_by_width():
    m = probed(add=2.0)
    assert mlat.op_latency(m, "ADD", 8) == mlat.Latency(2.0, "probe, 8 B")
    assert mlat.op_latency(m, "ADD", 4) == mlat.Latency(2.0, "probe, 8 B")  # float scalar: the 8 B figure
    assert mlat.op_latency(m, "FMA", 8) is None and mlat.op_latency(load_machine(SKX), "ADD", 8) is None
    fake = SimpleNamespace(in_core=SimpleNamespace(latency_by_width={"ADD": {8: 1.5}}), probe=m.probe)
    assert mlat.op_latency(fake, "ADD", 8) == mlat.Latency(1.5, "probe, 8 B")
    with pytest.raises(ValueError, match=r"'in_core.points\[0\].cy_per_instruction_min' must be a number"):
        probe_section({"in_core": {"points": [_point("ADD", 8, "fast")]}})  # refused when the file is read
    bad = dataclasses.replace(m, probe=probe_section({"in_core": {"points": [_point("ADD", 8, -1)]}}))
    assert mlat.op_latency(bad, "ADD", 8) is None  # a number that is no latency is ignored
    assert mlat.load_to_use(m) == mlat.Latency(5.0, "probe, L1 pointer chase")


# -- latency_bound ---------------------------------------------------------------------------

def test_latency_bound_uses_the_probe_chain_not_the_simulated_time():
    t_ol, dep, notes, source = latency_bound(_info(GS_O2, 17.0, 2.0), 16.0, 8.0, probed())
    assert t_ol == pytest.approx(10.0 * 8) and dep == pytest.approx(10.0)
    assert "probe's latencies" in source
    assert any("3 x vaddsd 2 cy (probe, 8 B) + vmulsd 4 cy (probe, 8 B) = 10 cy per pass" in n for n in notes)


def test_latency_bound_without_probe_keeps_the_simulated_time():
    t_ol, dep, notes, source = latency_bound(_info(GS_O2, 17.0, 2.0), 16.0, 8.0, load_machine(SKX))
    assert t_ol == pytest.approx(17.0 * 8) and "simulated" in source


def test_memory_chain_raises_t_ol_above_the_simulated_time():
    """llvm-mca assumes no aliasing: its 2.33 cy per pass miss the chain through a[j][i-1]."""
    for machine, expected in ((probed(), 15.0), (load_machine(SKX), 5.0 + 16.0)):
        t_ol, dep, notes, _ = latency_bound(_info(GS_O1, 2.33, 2.2), 17.6, 8.0, machine)
        assert t_ol == pytest.approx(expected * 8)
        assert any("do not alias" in n and "store-to-load forwarding" in n for n in notes)


def test_independent_accumulators_give_the_longest_single_chain():
    t_ol, dep, notes, _ = latency_bound(_info(FOUR_ACCUMULATORS, 4.0, 1.0, u=16), 0.1, 0.5, probed(add=2.0))
    assert len(_chains(FOUR_ACCUMULATORS)) == 4
    assert t_ol == pytest.approx(2.0 * 0.5) and dep == pytest.approx(2.0 / 16)
    assert any("longest of 4 independent chains" in n for n in notes)


@settings(max_examples=40, deadline=None)
@given(add=st.floats(0.5, 30), mul=st.floats(0.5, 30), grow=st.floats(1.0, 3.0), t_ol=st.floats(0.0, 400.0),
       block=st.sampled_from([GS_O1, GS_O2, BASE_DISP]))
def test_chain_t_ol_bounds_below_and_grows_with_latencies(add, mul, grow, t_ol, block):
    low = latency_bound(_info(block, 3.0, 2.0), t_ol, 8.0, probed(add=add, mul=mul))[0]
    high = latency_bound(_info(block, 3.0, 2.0), t_ol, 8.0, probed(add=add * grow, mul=mul * grow))[0]
    assert low >= t_ol and high >= low - 1e-9


# -- analytic model: the reduction at its own width -----------------------------------------

SUM = "double a[N];\ndouble s;\nfor (int i = 0; i < N; ++i)\n    s = s + a[i];\n"


def test_analytic_reduction_at_the_probe_latency_of_its_width():
    k = parse_kernel(SUM)[0]
    plain = analytic_incore(k, load_machine(SKX), 8, reassociate=False)
    assert plain.dependency == pytest.approx(4.0)  # the machine file's in_core.latency
    r = analytic_incore(k, probed(add=2.0, add64=3.5), 8, reassociate=False)
    assert r.dependency == pytest.approx(2.0) and r.lanes == 1
    assert any("ADD 2 cy (probe, 8 B)" in n for n in r.notes)
    f = analytic_incore(parse_kernel(SUM.replace("double", "float"))[0], probed(add=2.5), 16, reassociate=False)
    assert f.dependency == pytest.approx(2.5)  # 4 B takes the 8 B figure


# -- the real command ------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("gcc") is None or find_llvm_mca() is None, reason="gcc and llvm-mca needed")
@requires_tool("gcc", "12", "hand-checked gcc 12 assembly")
def test_cli_gauss_seidel_chain_at_probe_latencies():
    """gs2d at -O2 keeps a[j][i-1] in %xmm0: three additions and a multiplication per iteration
    on the chain, at the fixture's probe latencies (ADD and MUL at 8 B), not llvm-mca's 17 cy."""
    kernel = ROOT / "benchmarks" / "incore_classic" / "gs2d.c"
    machine = ROOT / "tests" / "fixtures" / "host-probe-xeon-kvm.yml"
    out = run_cli("analyze", str(kernel), "-m", str(machine), "-D", "M=20", "-D", "N=200", "-p", "ECM",
                  "--incore", "llvm-mca", "--compiler-flags", "-O2 -march=skylake-avx512", "--json", timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    m = load_machine(str(machine))
    add, mul = mlat.op_latency(m, "ADD", 8), mlat.op_latency(m, "MUL", 8)
    assert doc["ecm"]["T_OL_cy_per_cl"] == pytest.approx(8 * (3 * add.cy + mul.cy))
    note = next(n for n in doc["notes"] if n.startswith("latency-bound"))
    assert f"3 x vaddsd {add.cy:.3g} cy (probe, 8 B) + vmulsd {mul.cy:.3g} cy (probe, 8 B)" in note
