"""Layer conditions against cache simulation for outputs reused across an outer loop, and the
limits the layer-condition lines print.

An output invariant in an outer loop (``y[j] += A[i][j]``, gemm's i-k-j order) stays in a cache
whose layer condition holds for its reuse: it is written back once per trip of the loop around
its reuse loop, not once per cache line of work (kerncraft-tool-paper.txt §2.4.2). The printed
limit of a condition is the largest size keeping it; a victim cache's layer conditions and its
whole-data-set condition compare with one effective size, the level above included
(cross-architecture-machine-models.txt §3.3).
"""
from __future__ import annotations

import math
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import kernel_strategies as ks
from helpers import ROOT, run_cli

from loopmodel import Kernel
from loopmodel.predictors.layer_conditions import LayerConditionAnalysis, effective_sizes
from loopmodel.report.text import _condition
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings

KERNELS = ROOT / "benchmarks" / "results" / "one-owner" / "kernels"
IVB = "IvyBridgeEP_E5-2690v2"
#: machines of every kind of hierarchy: inclusive L3, victim L3 (clean evictions counted or not),
#: write-through L1
MACHINES = ("IvyBridgeEP_E5-2690v2", "SkylakeSP_Gold-6148", "Zen_EPYC-7451", "Power9_8335-GTX",
            "ThunderX2_CN9980")


def _traffic(kernel, machine, defines, predictor):
    model = ks.load(machine)
    res = Analyzer(kernel, model, AnalyzerSettings(incore="analytic", cache_predictor=predictor,
                                                   models=("LC",))).run(defines)
    return res


# --- the cases: y[j] += A[i][j], gemm i-k-j, interchanged mvt on Ivy Bridge EP ------------------------

@pytest.mark.parametrize("name, defines, stores", [("sumrows", {"M": 1000, "N": 1000}, 0.0),
                                                   ("gemm-ikj", {"N": 1000}, 0.001),
                                                   ("mvt-interchanged", {"N": 1000}, 0.0)])
def test_an_output_kept_over_an_outer_loop_is_not_written_back_every_line(name, defines, stores):
    """IvyBridgeEP, N = 1000: LC wrote the output back once per CL of work on L1-L2 and L2-L3
    ({ 4.0 || 4.0 | 4.0 | 4.0 | 0.0 }) where the simulator writes back 0 (y and x2 stay in L1 over
    repeated sweeps) or one row of C per i (0.001 CL per CL of work, benchmarks/results/one-owner/
    3.before); T_L1L2 = T_L2L3 = 2.0 as in the simulation."""
    import json

    res = run_cli("analyze", KERNELS / f"{name}.c", "-m", IVB, *[f"-D{k}={v}" for k, v in defines.items()],
                  "--incore", "analytic", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    for lt in doc["traffic"][:2]:
        assert lt["loads_cl_per_cl"] == 1.0 and lt["stores_cl_per_cl"] == pytest.approx(stores, abs=1e-12)
    assert [round(c["time_cy_per_cl"], 2) for c in doc["ecm"]["contributions"][:2]] == [2.0, 2.0]
    evicts = [lv["conditions"][lv["selected"]]["evicts_per_it"] for lv in doc["layer_conditions"][:2]]
    assert evicts == pytest.approx([stores] * 2)
    if name != "gemm-ikj":  # 10**6 iterations: simulated here (gemm's 10**9 in the .before file)
        kernel = Kernel.from_source((KERNELS / f"{name}.c").read_text(), name=f"{name}.c")
        sim = _traffic(kernel, IVB, defines, "sim")
        assert [lt.stores_cl for lt in sim.traffic.levels[:2]] == pytest.approx([stores] * 2, abs=1e-4)


# --- invariant: LC write-backs against the simulation over generated nests ------------------------------

#: loops outermost first, as (index, size constant); the inner loop is the last
NESTS = {2: (("i", "M"), ("j", "N")), 3: (("i", "L"), ("k", "M"), ("j", "N"))}


def _ref(name, loops, keep):
    """``name`` indexed by the loops in ``keep`` (the inner loop always), declared over their sizes."""
    used = [lp for lp, k in zip(loops, keep) if k] + [loops[-1]]
    return f"{name}[{']['.join(i for i, _ in used)}]", f"{name}[{']['.join(s for _, s in used)}]"


@st.composite
def nests(draw, streaming: bool = False):
    """Strategy: ``(source, dims, streaming)`` of a 2- or 3-deep nest writing an output indexed by
    the inner loop and by any of the outer loops (all of them with ``streaming``), reading one or
    two arrays indexed likewise."""
    dims = draw(st.sampled_from((2, 3)))
    loops = NESTS[dims]
    outer = len(loops) - 1

    def keep():
        return (True,) * outer if streaming else tuple(draw(st.booleans()) for _ in range(outer))

    out_ref, out_decl = _ref("y", loops, keep())
    reads = [_ref(n, loops, keep()) for n in ("A", "B")[:draw(st.integers(1, 2))]]
    update = draw(st.booleans())
    expr = " * ".join(r for r, _ in reads)
    body = f"{out_ref} = {out_ref} + {expr};" if update else f"{out_ref} = {expr} + 1.0;"
    decls = "".join(f"double {d};\n" for d in [out_decl] + [d for _, d in reads])
    text = decls
    for depth, (i, s) in enumerate(loops):
        text += "  " * depth + f"for (int {i} = 0; {i} < {s}; ++{i})\n"
    text += "  " * len(loops) + body + "\n"
    return text, dims


def _sizes(draw, dims):
    """Sizes of 2 * 10**5 to 3 * 10**6 iterations (long enough for the simulation's steady state)."""
    n = draw(st.sampled_from((128, 400, 1000, 3000, 12000)))
    low, high = max(2, 200_000 // n), max(2, 3_000_000 // n)
    if dims == 2:
        return {"M": draw(st.integers(low, high)), "N": n}
    m = draw(st.integers(2, 40))
    return {"L": draw(st.integers(max(2, low // m), max(2, high // m))), "M": m, "N": n}


def _clear_of_thresholds(levels, band=1.5):
    """No layer condition and no whole-data-set condition within a factor ``band`` of its cache:
    there the fully associative LRU of the layer conditions and the simulated sets may differ."""
    for lv in levels:
        for s in lv.states[1:]:
            if lv.cache_size / band <= s.requirement_bytes <= lv.cache_size * band:
                return False
        if lv.data_set is not None and lv.capacity / band <= lv.data_set.requirement_bytes <= lv.capacity * band:
            return False
    return True


def _lc_and_simulation(data, streaming: bool) -> tuple:
    """``(source, machine, defines, LC analysis, simulation)`` of a drawn nest away from capacity thresholds."""
    source, dims = data.draw(nests(streaming=streaming), label="nest")
    machine = data.draw(st.sampled_from(MACHINES), label="machine")
    defines = _sizes(data.draw, dims)
    kernel = Kernel.from_source(source, name="nest.c")
    lc = _traffic(kernel, machine, defines, "lc")
    assume(_clear_of_thresholds(lc.lc_levels))
    return source, machine, defines, lc, _traffic(kernel, machine, defines, "sim")


@settings(ks.PROPERTY_SETTINGS, max_examples=40)
@given(st.data())
def test_lc_write_backs_stay_within_one_line_per_outer_iteration_of_the_simulation(data):
    """Nests writing outputs indexed by the inner loop and any outer loops, five machines: on every
    link LC's stores per CL of work are at most the simulator's plus one cache line per iteration
    of the loop around the inner loop (normalised per CL of work), away from capacity thresholds."""
    source, machine, defines, lc, sim = _lc_and_simulation(data, streaming=False)
    per_outer = lc.traffic.iterations_per_unit / defines["N"]  # outer iterations per CL of work
    for a, b in zip(lc.traffic.levels, sim.traffic.levels):
        assert a.stores_cl <= b.stores_cl + per_outer + 1e-9, (source, machine, defines, a, b)


@settings(ks.PROPERTY_SETTINGS, max_examples=25)
@given(st.data())
def test_lc_equals_the_simulation_for_streaming_outputs(data):
    """Outputs and inputs indexed by every loop (plain streams), five machines: LC's loads and stores
    on every link equal the simulator's, away from capacity thresholds."""
    source, machine, defines, lc, sim = _lc_and_simulation(data, streaming=True)
    for a, b in zip(lc.traffic.levels, sim.traffic.levels):
        assert a.stores_cl == pytest.approx(b.stores_cl, rel=0.02, abs=0.02), (source, machine, defines, a, b)
        assert a.loads_cl == pytest.approx(b.loads_cl, rel=0.02, abs=0.02), (source, machine, defines, a, b)


# --- the printed limits: the largest size keeping the condition ----------------------------------------

def test_the_printed_limit_is_the_largest_size_keeping_the_condition():
    """2d-5pt on Haswell EP: ``N <= 1025 (exact 1024.50; largest block 1024)`` while N = 1025 is
    already broken (32*1025 - 16 > 32768); the line now says ``N <= 1024 (exact 1024.50)``, rounded
    as the whole-data-set lines are."""
    res = run_cli("analyze", ROOT / "examples" / "kernels" / "2d-5pt.c", "-m", "HaswellEP_E5-2695v3",
                  "-D", "M=2000", "-D", "N=2000", "-p", "LC")
    assert res.returncode == 0, res.stderr
    assert "  L1: N <= 1024   (exact 1024.50)\n" in res.stdout
    assert "  L3: N <= 1148   (exact 1148.45)\n" in res.stdout
    assert "largest block" not in res.stdout


@settings(ks.PROPERTY_SETTINGS, max_examples=60)
@given(st.data())
def test_every_printed_limit_holds_there_and_fails_one_above(data):
    """Random stencils, machines, sizes and cores: the size ``n`` a layer-condition or whole-data-set
    line prints keeps the condition, ``n + 1`` breaks it."""
    case = data.draw(ks.kernels(strided=False), label="kernel")
    machine = data.draw(ks.machines(), label="machine")
    defines = data.draw(ks.sizes(case), label="sizes")
    cores = data.draw(st.sampled_from((1, machine.cores_per_socket)), label="cores")
    lca = LayerConditionAnalysis(case.kernel)
    _, levels = lca.predict(machine, defines, cores)
    var = lca.variable
    for lv in levels:
        for cond, limit in [(s, lv.cache_size) for s in lv.states[1:]] + [(lv.data_set, lv.capacity)]:
            line = _condition(cond, var, "cache")
            m = re.fullmatch(rf"{var} <= (\d+)   \(exact [\d.]+\)", line)
            if not m:
                continue
            n = int(m.group(1))
            at = {**defines, var: n}
            assert float(cond.requirement.evaluate(at)) <= limit, (lv.level, line)
            assert float(cond.requirement.evaluate({**defines, var: n + 1})) > limit, (lv.level, line)


# --- one effective size per level: the layer conditions and the whole data set of a victim cache -------

def test_a_victim_l3_has_one_effective_size():
    """SkylakeSP (victim L3): the LC table showed the L3 alone (27.50 MiB, 28835840 B) while the
    whole-data-set line used L2 + L3 (29884416 B); both use L2 + L3 now."""
    res = run_cli("analyze", ROOT / "examples" / "kernels" / "2d-5pt.c", "-m", "SkylakeSP_Gold-6148",
                  "-D", "M=5000", "-D", "N=5000", "-p", "LC")
    assert res.returncode == 0, res.stderr
    assert "28.50 MiB" in res.stdout and "32*N - 16 B <= 29884416 B" in res.stdout
    assert "  L3: N <= 933888   (exact 933888.50)\n" in res.stdout
    assert "  L3: N <= 374   (exact 374.63)\n" in res.stdout  # 16*5000*N <= 29884416


@settings(ks.PROPERTY_SETTINGS, max_examples=40)
@given(ks.kernels(strided=False), ks.machines(), st.data())
def test_layer_conditions_and_whole_data_set_compare_with_one_size(case, machine, data):
    """Every machine and core count: each level's layer conditions compare with
    :func:`effective_sizes` and its whole-data-set condition with that size times the data set's
    parts; a victim level's size includes the level above's."""
    defines = data.draw(ks.sizes(case), label="sizes")
    cores = data.draw(st.sampled_from((1, machine.cores_per_socket)), label="cores")
    _, levels = LayerConditionAnalysis(case.kernel).predict(machine, defines, cores)
    sizes = effective_sizes(machine.caches, cores)
    for i, (lv, size, cache) in enumerate(zip(levels, sizes, machine.caches)):
        assert lv.cache_size == size
        if lv.data_set is not None:
            assert lv.capacity == pytest.approx(size * (lv.capacity / size))
            assert lv.capacity / size == pytest.approx(levels[0].capacity / sizes[0])
        if cache.type == "victim" and i:
            assert size > sizes[i - 1]
    assert all(math.isfinite(s) for s in sizes)
