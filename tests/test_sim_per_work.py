"""Cache simulation: traffic per unit of work is counted per ``iterations_per_unit`` iterations
(kerncraft-tool-paper.txt §2.4.1), checked against an independent LRU model; traffic that depends
on where the arrays lie is named in a note with the figures at both placements."""
from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import kernel_strategies as ks
from cachesim_reference import ReferenceHierarchy

from loopmodel.fileio.c_kernel import parse_kernel_file
from loopmodel.fileio.machine_files import load_machine
from loopmodel.predictors import simulation
from loopmodel.predictors.simulation import SimulationPredictor, level_specs, place_arrays

ONE_OWNER = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "one-owner" / "kernels"
SKX = "SkylakeSP_Gold-6148"


def _sweep_addresses(nest):
    """``(address, size, kind)`` of one sweep of ``nest``
    (:class:`~loopmodel.cachesim.nest.LoopNest`, first base of each access), in the simulator's
    order: per row the accesses fixed in the inner loop before it ("before") and after it
    ("after"), the others every iteration in their order."""
    loops = nest.loops

    def rows(depth, idx):
        lp = loops[depth]
        start = lp.start + sum(c * v for c, v in zip(lp.start_coefs, idx))
        stop = lp.stop + sum(c * v for c, v in zip(lp.stop_coefs, idx))
        for v in range(start, stop, lp.step):
            if depth + 1 == len(loops):
                yield idx + (v,)
            else:
                yield from rows(depth + 1, idx + (v,))

    def addr(acc, point):
        return acc.bases[0] + sum(c * v for c, v in zip(acc.coefs, point))

    inner = [a for a in nest.accesses if a.phase == "inner"]
    before = [a for a in nest.accesses if a.phase == "before"]
    after = [a for a in nest.accesses if a.phase == "after"]
    for _, row in itertools.groupby(rows(0, ()), key=lambda p: p[:-1]):
        row = list(row)
        yield from ((addr(a, row[0]), a.size, a.kind) for a in before)
        for point in row:
            yield from ((addr(a, point), a.size, a.kind) for a in inner)
        yield from ((addr(a, row[-1]), a.size, a.kind) for a in after)


def _reference(kernel, machine, defines, cache_factor, sweeps):
    """Lines loaded per level in sweep number ``sweeps`` of the kernel run again and again, on the
    pure-Python reference hierarchy, per ``iterations_per_unit`` iterations of that sweep."""
    cl = int(machine.cacheline_size)
    specs, _ = level_specs(machine, 1, cache_factor)
    pred = SimulationPredictor(kernel)
    unit = kernel.unit_of_work(cl, defines)
    nest = pred._nest(defines, place_arrays(kernel, defines), unit, False, "repeated", cl)
    trace = list(_sweep_addresses(nest))
    ref = ReferenceHierarchy(list(specs))
    ref.counting = False
    for _ in range(sweeps - 1):
        for a in trace:
            ref.access(*a)
    ref.counting = True
    for a in trace:
        ref.access(*a)
    iterations = math.prod(kernel.loops[i].iterations(defines) for i in range(len(kernel.loops)))
    st_ = ref.stats()
    return [st_[s.name]["load_lines"] * unit.iterations / iterations for s in specs]


def test_4d_stencil_short_rows_counted_per_iteration():
    """4D stencil, rows of 20 doubles (18 iterations): 46 lines of b per 40.5 CL of work per plane.
    Per iteration, as an independent LRU model (pure Python, two sweeps) counts: 4.768 lines into
    L1 and 2.623 into L2 per 8 iterations, 1.136 written back from L1; per line of b touched
    (the earlier count) 4.198 and 2.309, 1.0."""
    k, _ = parse_kernel_file(str(ONE_OWNER / "4d-stencil.c"))
    tp, info = SimulationPredictor(k).predict(load_machine(SKX), {"N": 20})
    l1, l2 = tp.levels[0], tp.levels[1]
    assert l1.loads_cl == pytest.approx(4.768, abs=0.001) and l2.loads_cl == pytest.approx(2.623, abs=0.001)
    assert l1.stores_cl == pytest.approx(46 / 40.5, abs=0.001)
    assert tp.levels[2].loads_cl == 0


def test_4d_stencil_agrees_with_the_reference_lru():
    """The reference hierarchy (tests/cachesim_reference.py) on the 4D stencil at N=12, second sweep."""
    k, _ = parse_kernel_file(str(ONE_OWNER / "4d-stencil.c"))
    m = load_machine(SKX)
    tp, _ = SimulationPredictor(k).predict(m, {"N": 12}, cache_factor=0.25)
    want = _reference(k, m, {"N": 12}, 0.25, 2)
    assert [lv.loads_cl for lv in tp.levels] == pytest.approx(want, rel=0.01, abs=0.01)


@settings(ks.PROPERTY_SETTINGS, max_examples=40)
@given(st.data())
def test_simulated_lines_are_whole_lines_per_measured_iteration(data):
    """Random kernels (strided and transposed reads included), every bundled machine, sizes up to
    3e5 iterations: the lines loaded, hits and misses per unit of work times the units of work in
    the measured iterations (``measured_iterations / iterations_per_unit``) are whole numbers: the
    counts are divided by iterations, not by lines of the written array touched."""
    case = data.draw(ks.kernels(strided=True), label="kernel")
    machine = data.draw(ks.machines(), label="machine")
    defines = data.draw(ks.sizes(case, 1e3, 3e5), label="sizes")
    tp, info = SimulationPredictor(case.kernel).predict(machine, defines)
    assume(info is not None)
    units = info.measured_iterations / tp.iterations_per_unit
    for lv in tp.levels:
        for count in (lv.loads_cl * units, lv.hits * units, lv.misses * units):
            assert count == pytest.approx(round(count), abs=1e-6 * max(1.0, count)), lv.level


@settings(ks.PROPERTY_SETTINGS, max_examples=30)
@given(st.data())
def test_simulation_agrees_with_a_reference_lru_on_small_kernels(data):
    """Random 1D and 2D kernels small enough to run whole in pure Python, every bundled machine with
    its caches shrunk (``cache_factor``), repeated sweeps: where the simulation measures a whole sweep,
    its lines loaded per level equal those of the reference hierarchy in the same sweep, per unit of
    work as iterations count it."""
    case = data.draw(ks.kernels(dims=(1, 2)), label="kernel")
    machine = data.draw(ks.machines(), label="machine")
    factor = data.draw(st.sampled_from((0.02, 0.1, 1.0)), label="cache factor")
    defines = data.draw(ks.sizes(case, 200, 3000), label="sizes")
    k = case.kernel
    sweep_it = math.prod(lp.iterations(defines) for lp in k.loops)
    tp, info = SimulationPredictor(k).predict(machine, defines, cache_factor=factor)
    assume(info is not None and info.measured_iterations == sweep_it)
    want = _reference(k, machine, defines, factor, info.sweeps)
    assert [lv.loads_cl for lv in tp.levels] == pytest.approx(want, rel=0.02, abs=0.02)


def test_float_dot_placement_note():
    """Float dot product, N=5000 (2 x 20000 B) on Skylake-SP's 32 KiB L1 (64 sets x 8 ways): with the
    arrays page-aligned a gap of 480 B leaves 7 sets with 8 lines, which keep them, 1.82 CL per CL of
    work; one after the other every set holds 9 or 10 lines, 2.00. Both figures, the level and the
    option are named in one note, at either placement."""
    k, _ = parse_kernel_file(str(ONE_OWNER / "float-dot.c"))
    m = load_machine(SKX)
    paged, _ = SimulationPredictor(k).predict(m, {"N": 5000})
    packed, _ = SimulationPredictor(k).predict(m, {"N": 5000}, alignment=64)
    assert paged.levels[0].loads_cl == pytest.approx(1.824, abs=0.001)
    assert packed.levels[0].loads_cl == pytest.approx(2.003, abs=0.001)
    note = [n for n in paged.notes if "where the arrays lie" in n]
    assert len(note) == 1 and "L1-L2 1.82 CL per CL of work (--array-alignment 4096) against 2.00 " \
        "(--array-alignment 64)" in note[0]
    note = [n for n in packed.notes if "where the arrays lie" in n]
    assert len(note) == 1 and "L1-L2 2.00 CL per CL of work (--array-alignment 64) against 1.82 " \
        "(--array-alignment 4096)" in note[0]


@pytest.mark.parametrize("name,defines", [("triad.c", {"N": 1_000_000}), ("dot.c", {"N": 1000}),
                                          ("2d-5pt.c", {"M": 1000, "N": 1000})])
def test_no_placement_note_where_no_level_is_near_its_capacity(name, defines, monkeypatch):
    """Data sets far above or below every level: the sets' shares of the data set are all above or
    all within the ways, and the second placement is not simulated."""
    k, _ = parse_kernel_file(str(ONE_OWNER.parents[3] / "examples" / "kernels" / name))
    runs = []
    original = SimulationPredictor._simulate
    monkeypatch.setattr(SimulationPredictor, "_simulate", lambda self, *a, **kw: runs.append(a) or
                        original(self, *a, **kw))
    tp, _ = SimulationPredictor(k).predict(load_machine(SKX), defines)
    assert len(runs) == 1 and not any("where the arrays lie" in n for n in tp.notes)


def test_set_fill_range_by_hand():
    """4 sets of 64 B lines: bytes 0..320 (5 lines) give sets 0 two lines, the others one; a second
    range sharing line 4 counts it once; wrapping around the sets."""
    assert simulation._set_fill_range([(0, 320)], 4, 64) == (1, 2)
    assert simulation._set_fill_range([(0, 320), (256, 384)], 4, 64) == (1, 2)
    assert simulation._set_fill_range([(192, 448)], 4, 64) == (1, 1)
    assert simulation._set_fill_range([(192, 512)], 4, 64) == (1, 2)
    assert simulation._set_fill_range([(0, 256 * 3)], 4, 64) == (3, 3)
