"""Invariants of the in-core models and of the machine model's in-core rules.

* SIMD: the analytic model never assumes more lanes than an access has contiguous elements
  (an access that moves by other than one element per inner iteration: scalar code).
* Stores: one machine-model rule (``in_core.stores_in``, ``MachineModel.stores_overlap``) puts
  the L1 cycles of stores in T_OL or T_nOL, for the analytic and the compiled analyzers alike;
  the two analyzers' T_ECM agree within 25 % or the report names why.
* Shared units: operations sharing a unit (a divider) or a port group add up in T_OL.
* Split loads count per CL of work with the element size of the stream.

The property tests are seeded (``kernel_strategies.PROPERTY_SETTINGS``); counts and times are in
each test's docstring.
"""
from __future__ import annotations

import dataclasses
import shutil
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings, strategies as st

import kernel_strategies as ks
from helpers import ROOT, SKX, run_cli
from loopmodel.compiled.llvm_mca import find_llvm_mca
from loopmodel.fileio.c_kernel import parse_kernel
from loopmodel.fileio.machine_files import load_machine
from loopmodel.ir.kernel import coefficient
from loopmodel.workflows.analysis import analytic_incore  # the library's: T_OL None where the machine lacks a figure

JACOBI_COLUMNS = """double a[M][N], b[M][N];
double s;
for (int i = 1; i < N-1; ++i)
  for (int j = 1; j < M-1; ++j)
    b[j][i] = (a[j][i-1] + a[j][i+1] + a[j-1][i] + a[j+1][i]) * s;
"""
STORE = "double a[N];\ndouble s;\nfor (int i = 0; i < N; ++i)\n  a[i] = s;\n"
DIV_SQRT = "double a[N], b[N], c[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i] / c[i] + sqrt(b[i]);\n"
STENCIL3 = "{t} a[N], b[N];\nfor (int i = 1; i < N-1; ++i)\n  b[i] = a[i-1] + a[i] + a[i+1];\n"

needs_llvm_mca = pytest.mark.skipif(shutil.which("gcc") is None or find_llvm_mca() is None,
                                    reason="needs gcc and llvm-mca")


def _case(source: str, name: str = "k") -> ks.KernelCase:
    return ks.KernelCase(source, name, 1, ("N",), (0,))


def _incore(source: str, machine, at: dict, **kw):
    kernel = parse_kernel(source, "k.c")[0]
    m = load_machine(machine) if isinstance(machine, str) else machine
    return kernel, analytic_incore(kernel, m, kernel.iterations_per_cacheline(m.cacheline_size, at), **kw)


def _contiguous(kernel, defines: dict) -> bool:
    """Every access that moves with the inner loop moves by exactly one element per iteration."""
    idx, step = kernel.inner_loop.index, kernel.inner_loop.step
    for a in list(kernel.streamed_reads()) + list(kernel.streamed_writes()):
        c = coefficient(a.offset, idx).subs(defines)
        if not c.is_constant() or abs(Fraction(c.constant_value()) * step) != 1:
            return False
    return True


# --- SIMD lanes of strided accesses -----------------------------------------------------------------

def test_column_order_jacobi_is_scalar_code():
    """Inner loop j over rows (stride N*8 B): four scalar loads at 2/cy need 2 cy/it, not 0.25."""
    res = ks.analyze(_case(JACOBI_COLUMNS), SKX, {"M": 2000, "N": 2000}, models=("ECM",))
    assert res.traffic.iterations_per_unit == 1 and res.incore.lanes == 1
    assert res.incore.T_nOL >= 4 / 2 and res.ecm.T_ECM["L1"] >= 2.0
    assert any("not contiguous in the inner loop 'j'" in n and "scalar code" in n for n in res.notes)


def test_strided_read_is_scalar_and_unit_stride_stays_simd():
    _, strided = _incore("double a[N], b[2*N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[2*i] + 1.0;\n", SKX,
                         {"N": 1000})
    assert strided.lanes == 1 and any("b moves 2 elements" in n for n in strided.notes)
    _, unit = _incore("double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i] + 1.0;\n", SKX, {"N": 1000})
    assert unit.lanes == 8 and not any("contiguous" in n for n in unit.notes)


def test_note_with_subscripts_is_printed_whole(tmp_path):
    """Notes go through the terminal's markup: the subscripts of 'a[j][i - 1]' are not style tags
    (the text report printed "'a' has stride")."""
    src = tmp_path / "jacobi_columns.c"
    src.write_text(JACOBI_COLUMNS)
    r = run_cli("analyze", src, "-m", SKX, "-D", "M=200", "-D", "N=200", "-p", "ECM", "--incore", "analytic")
    assert r.returncode == 0, r.stderr
    assert "'a[j][i - 1]' has stride" in " ".join(r.stdout.split())


@settings(ks.PROPERTY_SETTINGS, max_examples=150)
@given(case=ks.kernels(strided=True), machine=ks.machines(), data=st.data())
def test_lanes_never_exceed_contiguous_elements(case, machine, data):
    """150 examples, about 3 s: strided/transposed kernels on every bundled machine. An access that
    moves by other than one element per inner iteration gives scalar code (1 lane, with a note),
    and T_nOL is at least the load instructions over the load ports at that lane count."""
    defines = data.draw(ks.sizes(case, 1e3, 1e7))
    kernel = case.kernel
    it = kernel.iterations_per_cacheline(machine.cacheline_size, defines)
    res = analytic_incore(kernel, machine, it, defines=defines)
    if not _contiguous(kernel, defines):
        assert res.lanes == 1
        assert any("not contiguous" in n for n in res.notes) or any("prevents SIMD" in n for n in res.notes)
    assert res.lanes <= max(1, machine.in_core.simd_width // min(a.element_size for a in kernel.arrays.values()))
    ld = kernel.loads_per_iteration() / res.lanes / machine.in_core.load.instructions_per_cycle * it
    assert res.T_nOL >= ld * (1 - 1e-9)


# --- where stores count: one machine-model rule ---------------------------------------------------

def test_store_only_kernel_follows_the_machine_rule():
    """SkylakeSP (Intel ECM rule, stores in T_OL): a[i] = s is { 2.0 || 0.0 | 2.0 | ...} (gcc's 256-bit
    stores, two per CL), T_ECM(L2) 2.0; the cross-architecture Skylake model (stores in T_nOL, its
    flags ask for 512-bit vectors) puts its one store cycle in T_nOL."""
    res = ks.analyze(_case(STORE), SKX, {"N": 10 ** 8}, models=("ECM",))
    assert load_machine(SKX).stores_overlap()
    assert (res.incore.T_OL, res.incore.T_nOL) == (2.0, 0.0)
    assert res.ecm.T_ECM["L2"] == pytest.approx(2.0)
    snc = ks.analyze(_case(STORE), "SkylakeSP_Gold-6148_SNC", {"N": 10 ** 8}, models=("ECM",))
    assert not load_machine("SkylakeSP_Gold-6148_SNC").stores_overlap()
    assert snc.incore.T_nOL == pytest.approx(1.0) and snc.incore.T_OL < 1.0


@needs_llvm_mca
def test_store_only_kernel_llvm_mca_agrees_with_analytic():
    """The compiled path follows the same rule: T_nOL 0 on SkylakeSP (stores in T_OL), and the store
    ports' pressure in T_nOL on the SNC model; T_ECM(L2) as the analytic model's."""
    case = _case(STORE)
    ana = ks.analyze(case, SKX, {"N": 10 ** 8}, models=("ECM",))
    mca = ks.analyze(case, SKX, {"N": 10 ** 8}, models=("ECM",), incore="llvm-mca", use_cache=False)
    assert mca.incore.T_nOL == 0.0 and mca.ecm.T_ECM["L2"] == pytest.approx(ana.ecm.T_ECM["L2"])
    snc = ks.analyze(case, "SkylakeSP_Gold-6148_SNC", {"N": 10 ** 8}, models=("ECM",), incore="llvm-mca",
                     use_cache=False)
    rows = {r.port: r for r in snc.compiled.port_table.rows}
    assert rows["SKXPort4"].role == "T_nOL (loads, stores)" and rows["SKXPort4"].counted_cy_per_cl > 0
    assert snc.incore.T_nOL >= rows["SKXPort4"].counted_cy_per_cl and snc.incore.T_nOL >= 1.0
    assert {r.role for r in mca.compiled.port_table.rows if r.port == "SKXPort4"} == {"T_OL"}


def test_both_analyzers_ask_the_machine_model(monkeypatch):
    """One function decides: flipping MachineModel.stores_overlap flips the analytic result."""
    from loopmodel.machine.model import MachineModel

    kernel, before = _incore(STORE, SKX, {"N": 1000})
    monkeypatch.setattr(MachineModel, "stores_overlap", lambda self: False)
    _, after = _incore(STORE, SKX, {"N": 1000})
    assert (before.T_OL, before.T_nOL) == (1.0, 0.0) and after.T_nOL == 1.0 and after.T_OL < 1.0
    import inspect

    from loopmodel.compiled import incore as compiled
    assert "stores_overlap()" in inspect.getsource(compiled.port_table)
    assert "stores_overlap()" in inspect.getsource(compiled.to_incore_result)


@pytest.mark.parametrize("old, new, named", [
    ("stores_in: T_OL", "stores_in: sometimes", "stores_in"),
    ("  stores_in: T_OL\n", "  stores_in: T_OL\n  shared_units: [[DIV, TAN]]\n", "shared unit")])
def test_in_core_rule_fields_are_validated(tmp_path, old, new, named):
    """A bad ``stores_in`` or ``shared_units`` is one line naming the field, and a non-zero exit."""
    text = (ROOT / "src/loopmodel/machines/SkylakeSP_Gold-6148.yml").read_text()
    bad = tmp_path / "bad.yml"
    bad.write_text(text.replace(old, new))
    r = run_cli("analyze", ROOT / "examples/kernels/triad.c", "-m", bad, "-D", "N=1000")
    assert r.returncode != 0 and r.stderr.count("\n") == 1 and named in r.stderr


@settings(ks.PROPERTY_SETTINGS, max_examples=150)
@given(case=ks.kernels(), machine=ks.machines(), data=st.data())
def test_stores_count_where_the_machine_says(case, machine, data):
    """150 examples, about 3 s: with stores in T_nOL (eq. 1), T_nOL >= the store and LD+ST terms;
    with stores in T_OL (Intel ECM), T_nOL is the load term alone and T_OL >= the store and LD+ST
    terms. The components are the model's own; the rule is the machine's."""
    defines = data.draw(ks.sizes(case, 1e3, 1e6))
    kernel = case.kernel
    try:
        it = kernel.iterations_per_cacheline(machine.cacheline_size, defines)
    except Exception:  # a reduction over invariant data has no unit of work
        return
    res = analytic_incore(kernel, machine, it)
    c = res.components
    store_terms = [c["ST"]] + ([c["LDST"]] if "LDST" in c else [])
    if machine.stores_overlap():
        assert res.T_nOL == pytest.approx(c["LD"])
        assert res.T_OL is None or res.T_OL >= max(store_terms) * (1 - 1e-9)
    else:
        assert res.T_nOL >= max(store_terms + [c["LD"]]) * (1 - 1e-9)


_MCA_MACHINES = tuple(m for m in ks.MACHINES if ks.load(m).in_core.llvm_mca_cpu and ks.load(m).isa == "x86")


@needs_llvm_mca
@settings(ks.PROPERTY_SETTINGS, max_examples=20)
@given(case=ks.kernels(dims=(1, 2)), machine=st.sampled_from(_MCA_MACHINES), data=st.data())
def test_analyzers_agree_or_say_why(case, machine, data):
    """20 examples, about 12 s with an empty cache (gcc + llvm-mca per example), 4 s with the per-user
    cache: llvm-mca's T_ECM is within 25 % of the analytic model's in every data location, or a note
    says by how much and names the differences (SIMD lanes, division, dependency, bottlenecks).
    Kernels calling sqrt are left out: without -fno-math-errno the block calls the library."""
    from loopmodel.errors import ToolError

    assume("sqrt" not in case.source)
    defines = data.draw(ks.sizes(case, 1e3, 1e6))
    try:
        mca = ks.analyze(case, machine, defines, models=("ECM",), incore="llvm-mca")
    except ToolError:  # a call (sqrt without -ffast-math) or an instruction llvm-mca cannot time
        return
    ana = ks.analyze(case, machine, defines, models=("ECM",))
    worst = max(abs(mca.ecm.T_ECM[k] / ana.ecm.T_ECM[k] - 1) for k in ana.ecm.T_ECM if ana.ecm.T_ECM[k])
    notes = [n for n in mca.notes if "and the analytic in-core model differ by" in n]
    if worst > 0.25 + 1e-9:
        assert len(notes) == 1 and "largest contributions" in notes[0]
        if mca.incore.lanes and "lane" not in notes[0]:
            assert ana.incore.lanes == _compiled_lanes(mca, case.kernel)
    else:
        assert not notes


def _compiled_lanes(res, kernel) -> int:
    from loopmodel.compiled.asm import packed_bytes

    width = max(packed_bytes(ln) for ln in res.compiled.block.split("\n"))
    return max(1, width // max(a.element_size for a in kernel.arrays.values()))


# --- shared units ------------------------------------------------------------------------------------

def test_division_and_square_root_share_the_divider():
    """SkylakeSP: DIV 16 and SQRT 32 cy/CL on the one divider add up to T_OL 48, not max 32."""
    kernel, res = _incore(DIV_SQRT, SKX, {"N": 1000})
    assert res.components["DIV"] == 16 and res.components["SQRT"] == 32
    assert res.T_OL == pytest.approx(48) and res.components["DIV+SQRT"] == pytest.approx(48)
    m = load_machine(SKX)
    unshared = dataclasses.replace(m, in_core=dataclasses.replace(m.in_core, shared_units=[]))
    assert analytic_incore(kernel, unshared, 8).T_OL == pytest.approx(32)
    # not x86: the ISA's rule shares nothing unless the file says so
    tx2 = load_machine("ThunderX2_CN9980")
    assert tx2.summed_groups() == [] and ["DIV", "SQRT"] in dataclasses.replace(
        tx2, in_core=dataclasses.replace(tx2.in_core, shared_units=[["DIV", "SQRT"]])).summed_groups()


@settings(ks.PROPERTY_SETTINGS, max_examples=200)
@given(case=ks.kernels(), machine=ks.machines(), data=st.data())
def test_shared_units_add_up(case, machine, data):
    """200 examples, about 3 s: for every port group and shared unit of the machine, T_OL is at least
    the sum of its members' times (count / lanes / throughput per CL), eq. 2 of the cross-architecture
    paper; on x86 DIV and SQRT always share."""
    defines = data.draw(ks.sizes(case, 1e3, 1e6))
    kernel = case.kernel
    try:
        it = kernel.iterations_per_cacheline(machine.cacheline_size, defines)
    except Exception:
        return
    res = analytic_incore(kernel, machine, it)
    tp = machine.in_core.throughput
    if res.T_OL is None:  # the machine lacks a throughput: T_OL unknown, nothing to add up
        return
    for group in machine.summed_groups():
        total = sum(n / res.lanes / tp[op] * it for op, n in res.operations.items() if op in group)
        assert res.T_OL >= total * (1 - 1e-9), (group, res.components)
    if machine.isa == "x86":
        assert any(sorted(g) == ["DIV", "SQRT"] or {"DIV", "SQRT"} <= set(g) for g in machine.summed_groups())


# --- split loads -------------------------------------------------------------------------------------

@pytest.mark.parametrize("ctype", ["float", "double"])
def test_split_loads_count_per_cl_of_work(ctype):
    """Two streams 1 and 2 elements off the line (the loop from i = 1, not peeled) split half of
    their 32 B vectors: 2 split loads per CL of work, for 4-byte and 8-byte elements alike."""
    m = load_machine(str(ROOT / "examples/machines/XeonKVM_2vCPU_probed.yml"))
    kernel, res = _incore(STENCIL3.format(t=ctype), m, {"N": 10000}, defines={"N": 10000})
    assert res.split.loads * kernel.iterations_per_cacheline(m.cacheline_size, {"N": 10000}) == pytest.approx(2)
    assert any("split loads" in n for n in res.notes)


# --- divisions on fewer lanes than the machine's width ------------------------------------------------

@settings(ks.PROPERTY_SETTINGS, max_examples=150)
@given(case=ks.kernels(strided=True), machine=ks.machines(), data=st.data())
def test_narrow_divisions_are_an_upper_bound_and_say_so(case, machine, data):
    """150 examples, about 2 s: where the analytic model runs DIV or SQRT on fewer SIMD lanes than the
    machine's width (strided access, a reduction kept in order), it charges each narrow instruction the
    full-width figure, so a note calls those times an upper bound; at full width there is no such note."""
    defines = data.draw(ks.sizes(case, 1e3, 1e6))
    res = analytic_incore(case.kernel, machine, 8.0, defines=defines)
    elem = max(a.element_size for a in case.kernel.arrays.values())
    full = max(1, int(machine.in_core.simd_width // elem))
    divides = any(res.operations.get(op) for op in ("DIV", "SQRT"))
    noted = any("upper bound" in n and "lane(s) instead of" in n for n in res.notes)
    assert noted == (divides and res.lanes < full)


def test_scalar_division_of_the_pi_loop_says_its_time_is_an_upper_bound():
    """The numerical integration loop is scalar (its reduction kept in order): DIV is charged the
    full-width figure, 128 cy/CL on Skylake SP, and the note says it is an upper bound."""
    k, _ = parse_kernel("double sum, dx, x;\nfor (int i = 0; i < N; ++i) {\n  x = (i + 0.5) * dx;\n"
                        "  sum = sum + 4.0 / (1.0 + x * x);\n}\n", "pi.c")
    res = analytic_incore(k, load_machine(SKX), 8.0, reassociate=False)
    assert res.lanes == 1 and res.components["DIV"] == pytest.approx(128)
    assert any("DIV at 1 lane(s) instead of 8" in n and "upper bound" in n for n in res.notes)
