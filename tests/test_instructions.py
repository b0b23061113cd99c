"""The one assembly classifier (:mod:`loopmodel.compiled.instructions`) and what reads it.

* Regressions: a scalar ``vdivsd`` on a chain next to 512-bit instructions keeps its 8 B latency
  (14 cy, not the 64 B 23 cy); an analyzer's latency is labelled by that analyzer (OSACA's not
  "llvm-mca"); the probe check classifies SVE instructions at the machine's vector length, and a
  check that compared no row says so, scores worst and does not pick ``--incore auto``'s analyzer.
* Invariants (hypothesis, over instruction forms of x86, NEON and SVE and the bundled machines):
  every FP arithmetic instruction gets a class, with a width or an explicit unknown width that the
  check reports; a chain's FP latencies are the probe's at each instruction's own width; a check
  without rows never scores better than one with rows.
"""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st
from kernel_strategies import machines

from loopmodel.compiled import chain_latency as CL
from loopmodel.compiled import checked, instructions as I
from loopmodel.compiled.llvm_mca import InstrTiming
from loopmodel.fileio.machine_files import load_machine
from loopmodel.machine import latency as mlat
from loopmodel.machine.probe_section import probe_section
from loopmodel.workflows.analysis import Analyzer

SETTINGS = settings(derandomize=True, deadline=None, max_examples=60, database=None)
OPS = ("ADD", "MUL", "FMA", "DIV", "SQRT")
#: a made-up probe latency per operation and width, distinct for every pair
LATENCY = {(op, w): 2.0 + 3 * k + w / 8 for k, op in enumerate(OPS) for w in (4, 8, 16, 32, 64)}


def _probed(machine, simd_width=None, kinds=("latency",)):
    """``machine`` with the probe figures of :data:`LATENCY` (throughput: a tenth of them)."""
    pts = [{"op": op, "width_bytes": w, "kind": kind, "cy_per_instruction_min": cy / (1 if kind == "latency" else 10)}
           for (op, w), cy in LATENCY.items() for kind in kinds]
    ic = machine.in_core if simd_width is None else dataclasses.replace(machine.in_core, simd_width=float(simd_width))
    return dataclasses.replace(machine, in_core=ic, probe=probe_section({"in_core": {"points": pts}}))


# -- regressions ---------------------------------------------------------------------------------

ZMM_DIV = """vmulpd (%rdi,%rax), %zmm5, %zmm1
vmovupd %zmm1, (%rsi,%rax)
vdivsd %xmm1, %xmm0, %xmm0
addq $64, %rax
cmpq $8000, %rax
jne .L3"""


def test_scalar_divide_next_to_zmm_keeps_its_own_latency():
    m = load_machine("SkylakeSP_Gold-6148")
    pts = [{"op": "DIV", "width_bytes": w, "kind": "latency", "cy_per_instruction_min": cy}
           for w, cy in ((8, 14.0), (16, 14.0), (32, 16.0), (64, 23.0))]
    m = dataclasses.replace(m, probe=probe_section({"in_core": {"points": pts}}))
    (c,) = CL.chain_latencies(ZMM_DIV.split("\n"), False, m, ((1.0, 1.0, 13.0, 1.0, 1.0, 1.0), 5.0))
    assert c.cy_per_pass == 14.0 and c.describe() == "vdivsd 14 cy (probe, 8 B) = 14 cy per pass"


def test_analyzer_latencies_are_labelled_by_their_analyzer():
    block = "vpermilpd $1, %xmm0, %xmm0\nvpermilpd $1, %xmm0, %xmm0\njne .L3".split("\n")
    m = load_machine("SkylakeSP_Gold-6148")
    (c,) = CL.chain_latencies(block, False, m, ((1.0, 1.0, 1.0), 4.0), "osaca")
    assert c.describe() == "2 x vpermilpd 1 cy (osaca) = 2 cy per pass"
    (c,) = CL.chain_latencies(block, False, m, ((1.0, 1.0, 1.0), 4.0))
    assert "(llvm-mca)" in c.describe()


SVE_BLOCK = ("ld1d {z1.d}, p0/z, [x1, x3, lsl #3]\nfmla z0.d, p0/m, z1.d, z2.d\nfadd z3.d, z3.d, z1.d\nincd x3\n"
             "whilelo p0.d, x3, x4\nb.first .L3")
SVE_TIMINGS = (InstrTiming("ld1d {z1.d}, p0/z, [x1, x3, lsl #3]", 6.0, 0.5),
               InstrTiming("fmla z0.d, p0/m, z1.d, z2.d", 9.0, 2.0), InstrTiming("fadd z3.d, z3.d, z1.d", 6.0, 1.0))


def _sve_info(analyzer="llvm-mca", timings=SVE_TIMINGS, block=SVE_BLOCK):
    return SimpleNamespace(analyzer=analyzer, analyzer_version="19.1.7", target="neoverse-v1", aarch64=True,
                           timings=timings, block=block, check=None)


def test_sve_block_is_checked_at_the_machines_vector_length():
    m = _probed(load_machine("ThunderX2_CN9980"), simd_width=32, kinds=("latency", "throughput"))
    check = checked.check_block(_sve_info(), m)
    assert {(r.op, r.width, r.kind) for r in check.rows} == {("FMA", 32, "latency"), ("FMA", 32, "throughput"),
                                                             ("ADD", 32, "latency"), ("ADD", 32, "throughput")}
    assert checked.score(check)[0] == sum(not r.agrees for r in check.rows) and not check.unknown_width


def test_check_without_rows_says_so_and_does_not_pick_the_analyzer():
    m = _probed(load_machine("ThunderX2_CN9980"))
    m = dataclasses.replace(m, in_core=dataclasses.replace(m.in_core, simd_width=0.0))  # no vector length known
    empty = checked.check_block(_sve_info(), m)
    assert empty.rows == () and empty.unknown_width == ("fmla z0.d, p0/m, z1.d, z2.d", "fadd z3.d, z3.d, z1.d")
    assert checked.score(empty) == (float("inf"), float("inf"))
    assert "no rows compared" in empty.notes()[0] and "fmla z0.d" in empty.notes()[0]
    row = checked.CheckRow("ADD", 8, "latency", "fadd d0, d0, d1", 1, 9.0, 2.0)  # far off the probe
    bad = checked.BackendCheck("osaca", "0.7.1", "TX2", (row,))
    done = [("mca", SimpleNamespace(analyzer="llvm-mca", analyzer_version="19.1.7", target="x", check=empty)),
            ("osaca", SimpleNamespace(analyzer="osaca", analyzer_version="0.7.1", target="TX2", check=bad))]
    (res, _), notes = Analyzer._closest_to_probe(done)
    assert res == "osaca" and "llvm-mca 19.1.7 (x): no rows compared" in notes[0]
    both = [done[0], ("osaca", SimpleNamespace(analyzer="osaca", analyzer_version="0.7.1", target="TX2", check=empty))]
    (res, _), notes = Analyzer._closest_to_probe(both)
    assert res == "mca" and "no figure of either was compared" in notes[0]


def test_a_square_root_on_its_own_result_is_a_chain():
    """``x = sqrt(x)``: vsqrtsd writes a register it does not read as destination, like a move, but
    it is FP arithmetic (the classifier's SQRT), so its loop-carried value is a chain."""
    (c,) = CL.chain_latencies(["vsqrtsd %xmm0, %xmm0, %xmm0", "decl %eax", "jne .L3"], False,
                              _probed(load_machine("SkylakeSP_Gold-6148")))
    assert c.cy_per_pass == LATENCY[("SQRT", 8)]


# -- invariants ----------------------------------------------------------------------------------

_X86_OPS = {"ADD": ("add", "sub"), "MUL": ("mul",), "DIV": ("div",), "SQRT": ("sqrt",),
            "FMA": ("fmadd231", "fnmadd213", "fmsub132")}
_A64_OPS = {"ADD": ("fadd", "fsub"), "MUL": ("fmul",), "DIV": ("fdiv",), "SQRT": ("fsqrt",), "FMA": ("fmla", "fmls")}


@st.composite
def fp_instruction(draw, n=0, isa=None):
    """``(text, aarch64, op, width or None where only sve_bytes tells it)``: an FP arithmetic
    instruction of x86 (scalar, xmm/ymm/zmm), NEON (scalar d/s, v.2d/v.4s/v.2s) or SVE, writing
    and reading register number ``n`` (so a sequence of them is a chain)."""
    isa = isa or draw(st.sampled_from(("x86", "neon", "sve")))
    op = draw(st.sampled_from(OPS))
    if isa == "x86":
        name = draw(st.sampled_from(_X86_OPS[op]))
        kind, width = draw(st.sampled_from((("sd", 8), ("ss", 4), ("pd", 16), ("ps", 32), ("pd", 64))))
        reg = {8: "xmm", 4: "xmm", 16: "xmm", 32: "ymm", 64: "zmm"}[width]
        srcs = f"%{reg}{n}" if op == "SQRT" else f"%{reg}9, %{reg}{n}"
        return f"v{name}{kind} {srcs}, %{reg}{n}", False, op, width
    name = draw(st.sampled_from(_A64_OPS[op]))
    if isa == "sve":
        return f"{name} z{n}.d, p0/m, z{n}.d, z9.d", True, op, None
    reg, width = draw(st.sampled_from(((f"d{n}", 8), (f"s{n}", 4), (f"v{n}.2d", 16), (f"v{n}.4s", 16),
                                       (f"v{n}.2s", 8))))
    other = reg.replace(str(n), "9", 1) if reg[0] != "v" else reg.replace(f"v{n}", "v9")
    return (f"{name} {reg}, {reg}" if op == "SQRT" else f"{name} {reg}, {reg}, {other}"), True, op, width


@SETTINGS
@given(ins=fp_instruction(), sve=st.sampled_from((None, 16, 32, 64, 256)))
def test_every_fp_instruction_gets_a_class_or_an_explicit_unknown_width(ins, sve):
    text, aarch64, op, width = ins
    p = I.parse(text, aarch64, sve)
    assert p.fp_op == op
    want = width if width is not None else sve
    assert p.fp_width == want and p.fp_class == ((op, want) if want else None)
    assert p.simd and (p.vector_bytes is None) == (not want) and (p.vector_bytes or 0) >= (want or 0)
    assert not p.loads and not p.stores


@SETTINGS
@given(machine=machines(), chain=st.lists(fp_instruction(n=0, isa="x86"), min_size=1, max_size=4),
       wide=st.booleans())
def test_a_chains_fp_latency_is_the_probes_at_each_instructions_own_width(machine, chain, wide):
    block = ["vmulpd (%rdi), %zmm5, %zmm1"] if wide else []  # unrelated 512-bit work in the block
    block += [t for t, _, _, _ in chain] + ["addq $8, %rax", "jne .L3"]
    m = _probed(machine)
    (c,) = CL.chain_latencies(block, False, m)
    for term in c.terms:
        p = I.parse(term.text)
        assert term.cy == mlat.op_latency(m, p.fp_op, p.fp_width).cy and "512-bit" not in term.source
    assert c.measured and c.cy_per_pass == pytest.approx(sum(mlat.op_latency(m, op, w).cy for _, _, op, w in chain))


@SETTINGS
@given(machine=machines(), chain=st.lists(fp_instruction(n=0, isa="sve"), min_size=1, max_size=3),
       sve=st.sampled_from((16, 32, 64)))
def test_sve_chains_take_the_machines_vector_length(machine, chain, sve):
    block = [t for t, _, _, _ in chain] + ["incd x3", "b.first .L3"]
    m = _probed(machine, simd_width=sve)
    (c,) = CL.chain_latencies(block, True, m)
    assert c.measured and c.cy_per_pass == pytest.approx(sum(mlat.op_latency(m, op, sve).cy for _, _, op, _ in chain))


@SETTINGS
@given(rows=st.lists(st.tuples(st.sampled_from(OPS), st.sampled_from((8, 16, 32, 64)),
                               st.floats(0.1, 50), st.floats(0.1, 50)), min_size=1, max_size=6))
def test_a_check_without_rows_never_scores_better(rows):
    full = checked.BackendCheck("a", "1", "t", tuple(checked.CheckRow(op, w, "latency", "x", 1, a, p)
                                                     for op, w, a, p in rows))
    empty = checked.BackendCheck("b", "1", "t", ())
    assert checked.score(full) < checked.score(empty) == checked.score(None)
    assert empty.notes() and "no rows compared" in empty.notes()[0]


@pytest.mark.parametrize("text,aarch64,element", [
    ("vdivps (%rdi,%rax), %zmm1, %zmm0", False, 4), ("vdivpd %zmm1, %zmm2, %zmm0", False, 8),
    ("vsqrtss %xmm1, %xmm2, %xmm0", False, 4), ("vfmadd231sd %xmm1, %xmm2, %xmm0", False, 8),
    ("fdiv v0.4s, v1.4s, v2.4s", True, 4), ("fdiv d0, d1, d2", True, 8), ("fsqrt z0.d, p0/m, z1.d", True, 8),
    ("vmovupd (%rax), %zmm0", False, None), ("ldr d0, [x1]", True, None),
])
def test_the_element_of_fp_arithmetic_is_named(text, aarch64, element):
    assert I.parse(text, aarch64).fp_element == element
