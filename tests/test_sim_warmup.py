"""Cache-simulation warm-up with victim (exclusive) levels, settled measurement windows, and the
simulator's public loop-nest driver (Hierarchy.run) used by the simulation predictor."""
from __future__ import annotations

import ast
import inspect

import pytest

from helpers import KERNELS, analyze, reference_dir

from loopmodel.fileio.c_kernel import parse_kernel_file
from loopmodel.predictors import simulation


def _ecm_l3mem(result) -> float:
    return next(c.cycles for c in result.ecm.contributions if c.name == "L3MEM")


@pytest.mark.parametrize("machine_file", ["SkylakeSP_Gold-6148.yml", "Zen2_EPYC-7452.yml"])
def test_long_range_stencil_victim_l3_agrees_with_layer_conditions(machine_file):
    """3D long-range stencil, M=100 N=300: U is written, so each unit of work (one CL of U) writes one
    dirty line back to memory; a warm-up that stopped counting L3 (victim) insertions before the L3
    was full saw no write-back at all (L3-MEM 3.05 CL instead of 3 + 1 CL: T_L3MEM 3.9 instead of
    5.7 cy/CL on Skylake-SP). Both predictors must agree within a few per cent."""
    path = str(reference_dir() / machine_file)
    defines = {"M": 100, "N": 300}
    lc = analyze("3d-long-range.c", path, defines, models=("ECM",), cache_predictor="lc", incore="analytic")
    sim = analyze("3d-long-range.c", path, defines, models=("ECM",), cache_predictor="sim", incore="analytic")
    lc3, sim3 = lc.traffic.level("L3"), sim.traffic.level("L3")
    assert lc.machine.caches[-1].type == "victim"
    assert lc3.loads_cl == pytest.approx(3.0) and lc3.stores_cl == pytest.approx(1.0)
    assert sim3.stores_cl == pytest.approx(lc3.stores_cl, rel=0.05)
    assert sim3.loads_cl == pytest.approx(lc3.loads_cl, rel=0.03)
    assert _ecm_l3mem(sim) == pytest.approx(_ecm_l3mem(lc), rel=0.05)


def _victim_nest(n_lines: int):
    """A 1D read stream over ``n_lines`` cache lines of doubles: 8 iterations per CL."""
    from loopmodel.cachesim.nest import LoopNest, NestAccess, NestLoop

    return LoopNest((NestLoop(0, 8 * n_lines),), (NestAccess((1 << 30,), (8,), 8, "load"),), 0, 8)


def test_warm_up_fills_a_victim_level_that_only_receives_evictions():
    """L1 of 64 lines above an exclusive L2 of 1024 lines; the stream (4096 lines) is re-read
    every sweep. At the end of the warm-up every level is full, the victim level included, and
    in steady state every line comes from memory and is evicted into the victim level."""
    from loopmodel.cachesim.hierarchy import Hierarchy, LevelSpec
    from loopmodel.cachesim.nest import RunOptions

    specs = [LevelSpec("L1", 8, 8), LevelSpec("L2", 128, 8, kind="victim")]
    h = Hierarchy(specs)
    res = h.run(_victim_nest(4096), RunOptions(target_it=8 * 256, max_sweeps=4))
    assert res.warm and res.measured_it >= 8 * 256
    # the victim level took in at least its capacity before the window: full
    assert sum(len(s) for s in h.contents(1)) == 128 * 8
    st = h.stats()
    units = res.work_lines
    assert st["L1"]["load_lines"] / units == pytest.approx(1.0)
    assert st["L1"]["store_lines"] / units == pytest.approx(1.0)  # clean evictions into the victim L2
    assert st["L2"]["evicts"] / units == pytest.approx(1.0)  # the full victim level replaces a line each
    assert st["MEM"]["loads"] / units == pytest.approx(1.0)


def test_warm_up_ends_for_a_level_that_cannot_fill():
    """An L2 of 64 sets whose stream maps to 1 set only (a stride of 64 lines) can never be full:
    the warm-up must still end (the fill no longer grows) inside the first sweep."""
    from loopmodel.cachesim.hierarchy import Hierarchy, LevelSpec
    from loopmodel.cachesim.nest import LoopNest, NestAccess, NestLoop, RunOptions

    h = Hierarchy([LevelSpec("L1", 1, 4), LevelSpec("L2", 64, 4)])
    nest = LoopNest((NestLoop(0, 100_000),), (NestAccess((1 << 30,), (64 * 64,), 8, "load"),), 0, 1)
    res = h.run(nest, RunOptions(target_it=1000, max_sweeps=2))
    assert res.warm and res.measured_it == 1000 and res.sweeps == 1
    assert res.warm_it < 2000
    assert h.stats()["MEM"]["loads"] == 1000


@pytest.mark.parametrize("units", [6500, 7000, 7500])
def test_whole_row_window_is_settled(units):
    """Dirty evictions out of a 25 MiB L3 come in bursts; a window of a few thousand units of work
    sampled them at a biased phase (1.07 or 0.92 write-backs per unit depending on its length).
    The window grows until its halves agree: one write-back per unit, as layer conditions say."""
    from test_simulation import _highly_associative

    k, _ = parse_kernel_file(str(KERNELS / "3d-long-range.c"))
    sim, _ = simulation.SimulationPredictor(k).predict(_highly_associative(), {"M": 20, "N": 600},
                                                        target_units=units)
    assert sim.level("L3").stores_cl == pytest.approx(1.0, abs=0.02)


def test_public_run_matches_a_hand_count():
    """Hierarchy.run on a 2D nest: a[j][i] for j < 4, i < 64 (doubles, rows of 8 lines), a
    one-level cache far smaller than the array: one load of a line per 8 iterations."""
    from loopmodel.cachesim.hierarchy import Hierarchy, LevelSpec
    from loopmodel.cachesim.nest import LoopNest, NestAccess, NestLoop, RunOptions

    h = Hierarchy([LevelSpec("L1", 2, 2)])
    nest = LoopNest((NestLoop(0, 400), NestLoop(0, 64)), (NestAccess((1 << 20,), (512, 8), 8, "load"),), 0, 8)
    res = h.run(nest, RunOptions(target_it=640))
    assert res.measured_it >= 640
    assert h.stats()["L1"]["load_lines"] * 8 == res.measured_it
    assert h.counting is False


def test_simulation_predictor_uses_no_private_simulator_handles():
    """The predictor drives the simulator through its public API only (no ``_ffi``, ``_lib``,
    ``_h`` or other underscore attributes of the hierarchy)."""
    tree = ast.parse(inspect.getsource(simulation))
    private = sorted({node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                      and node.attr.startswith("_") and not node.attr.startswith("__")
                      and not (isinstance(node.value, ast.Name) and node.value.id == "self")})
    assert private == []


def test_column_walk_window_covers_the_line_reuse_period(tmp_path):
    """ijk matrix product, k innermost, N=2000 on Skylake-SP (L1 32 KiB, L2 1 MiB): B[k][j] walks a
    column, one new line per iteration; the column (2000 lines, 125 KiB) stays in L2 but not in L1,
    and each of its lines serves j .. j+7. Hand count per iteration: L1 misses 1 (B) + at most 1/8
    (A[i][k]; B's 16000 B stride maps to half of the 64 L1 sets, so part of A's row survives there),
    L2 misses 1/8 (a new column of lines every 8 rows of 2000 iterations). A window of a few rows
    counted no L2 miss at all (6 rows measured: L2 0.0001 CL per it)."""
    src = tmp_path / "matmul.c"
    src.write_text("double A[N][N];\ndouble B[N][N];\ndouble C[N][N];\n"
                   "for (int i = 0; i < N; ++i)\n  for (int j = 0; j < N; ++j)\n"
                   "    for (int k = 0; k < N; ++k)\n      C[i][j] += A[i][k] * B[k][j];\n")
    sim = analyze(str(src), "SkylakeSP_Gold-6148", {"N": 2000}, models=("ECM",), cache_predictor="sim",
                  incore="analytic")
    assert sim.traffic.iterations_per_unit == 1  # B's step (16000 B) exceeds a cache line
    assert 1.0 <= sim.traffic.level("L1").loads_cl <= 1.125 * 1.01
    assert sim.traffic.level("L2").loads_cl == pytest.approx(0.125, rel=0.03)


@pytest.mark.parametrize("machine", ["SkylakeSP_Gold-6148", "HaswellEP_E5-2695v3", "IvyBridgeEP_E5-2690v2"])
@pytest.mark.parametrize("stride", [2, 4])
def test_strided_read_writes_back_one_line_per_unit(tmp_path, machine, stride):
    """``a[i] = b[stride*i] + 1.0``, N = 4e6 (data 96-160 MB, beyond every L3): one line of ``a`` is
    written per unit of work, so exactly one goes back to memory. A window of 64000 iterations saw a
    biased phase of the L3's dirty fill: 1.707 / 1.492 / 0.8 write-backs per unit for stride 4 and
    0 / 1.541 / 1.526 for stride 2 (Skylake-SP / Haswell-EP / Ivy Bridge-EP). A window of whole
    periods of the caches' set mapping counts exactly."""
    src = tmp_path / f"stride{stride}.c"
    src.write_text(f"double a[N], b[{stride}*N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[{stride}*i] + 1.0;\n")
    k, _ = parse_kernel_file(str(src))
    from loopmodel.fileio.machine_files import load_machine

    sim, info = simulation.SimulationPredictor(k).predict(load_machine(machine), {"N": 4_000_000})
    for lv in sim.levels:
        assert lv.loads_cl == pytest.approx(stride + 1.0)  # b: stride lines, a: its write-allocate
    assert sim.level("L3").stores_cl == pytest.approx(1.0, abs=1e-9)
    assert info.simulated_iterations < 4_000_000  # inside the first sweep: no whole-sweep window


def test_window_of_a_work_access_never_at_a_line_start_ends(tmp_path):
    """``s += a[2*i+1]`` over floats: the work access is 4 B past every 8 B step, never at a cache-line
    start, where windows begin and end; the window never ended and ran through every allowed sweep
    (N = 2e7: 8e7 iterations simulated, 4 sweeps). The access moved to the start of its 8 B step
    touches the same lines: a window inside the first sweep, the same traffic."""
    src = tmp_path / "odd.c"
    src.write_text("float a[2*N];\ndouble s;\nfor (int i = 0; i < N; ++i)\n  s = s + a[2*i+1];\n")
    k, _ = parse_kernel_file(str(src))
    from loopmodel.fileio.machine_files import load_machine

    sim, info = simulation.SimulationPredictor(k).predict(load_machine("SkylakeSP_Gold-6148"), {"N": 20_000_000})
    assert info.sweeps == 1 and info.simulated_iterations < 20_000_000
    assert [lv.loads_cl for lv in sim.levels] == pytest.approx([1.0, 1.0, 1.0])
    assert sim.level("L3").stores_cl == 0


@pytest.mark.parametrize("source,defines,cores,was,lines", [
    ("float a[M][N];\ndouble b[M][N];\nfloat c[M][N];\nfloat d[M][N];\ndouble c0;\n"
     "for (int j = 1; j < M-1; ++j)\n  for (int i = 2; i < N-2; ++i)\n"
     "    a[j][i] = b[j+1][i-1] + b[j][i-2] + c0 * c[j+1][i-1] * d[j-1][i-2];\n",
     {"M": 23701, "N": 379}, 1, 2.0, 379 / 375),
    ("double a[L][M][N];\ndouble b[L][M][N];\ndouble c[L][M][N];\nfloat d[L][M][N];\n"
     "for (int k = 0; k < L; ++k)\n  for (int j = 2; j < M-2; ++j)\n    for (int i = 1; i < N-1; ++i)\n"
     "      a[k][j][i] = (b[k][j][i] + c[k][j+2][i] + c[k][j][i+1] + d[k][j][i]) / 2.0;\n",
     {"L": 410, "M": 8, "N": 3051}, 2, 1.15, 1.0),
], ids=["2d-rows-of-379", "3d-4-rows"])
def test_write_backs_do_not_depend_on_where_the_window_cuts_the_dirty_fill(tmp_path, source, defines, cores, was,
                                                                          lines):
    """The probed 2-vCPU Xeon guest (an L3 of 69508 sets, no power of two): the set pattern repeats
    only after far more iterations than a window holds, and the dirty fill of the L3 drifts across
    a window: 2.0 and 1.15 write-backs per unit where one line is written (a whole-row window settled
    by halves). Windows of whole sweeps, or a window corrected by the change of the dirty fill over
    it, count one line of the written array per line written (rows of 379 floats, 375 written: all
    379 / 375 of its lines per unit of work are written back)."""
    src = tmp_path / "k.c"
    src.write_text(source)
    k, _ = parse_kernel_file(str(src))
    from loopmodel.fileio.machine_files import load_machine

    machine = load_machine(str(KERNELS.parent / "machines" / "XeonKVM_2vCPU_probed.yml"))
    sim, _ = simulation.SimulationPredictor(k).predict(machine, defines, cores=cores)
    assert sim.level("L3").stores_cl == pytest.approx(lines, abs=0.002), f"was {was}"


def test_run_records_the_dirty_fill_at_the_window_start():
    """A store stream through a 4-line cache: warm, every line held is dirty, at the start of the
    window and after it (``RunResult.dirty_start``, ``Hierarchy.dirty_lines``); one line written
    back per line written."""
    from loopmodel.cachesim.hierarchy import Hierarchy, LevelSpec
    from loopmodel.cachesim.nest import LoopNest, NestAccess, NestLoop, RunOptions

    h = Hierarchy([LevelSpec("L1", 2, 2)])
    nest = LoopNest((NestLoop(0, 8 * 1000),), (NestAccess((1 << 20,), (8,), 8, "store"),), 0, 8)
    res = h.run(nest, RunOptions(target_it=8 * 100, margin_it=16))
    assert res.dirty_start == (4,) and h.dirty_lines() == (4,)
    assert h.stats()["L1"]["store_lines"] * 8 == res.measured_it
