"""The simulator's fast-forward (RunOptions.fast_forward: whole periods of a loop jumped once the
simulated state repeats, shifted, or once the levels above the last do and the last level's
operations are replayed on it alone) gives exactly what simulating every access gives: the run's
result, every counter, the dirty lines and every set's contents, on random hierarchies (victim,
inclusive and non-inclusive levels, every policy and store policy) and random loop nests, and the
simulation predictor's traffic on random kernels, sizes and machines."""
from __future__ import annotations

import dataclasses
import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernel_strategies as ks

from loopmodel.cachesim.hierarchy import Hierarchy, LevelSpec
from loopmodel.cachesim.nest import LoopNest, NestAccess, NestLoop, RunOptions
from loopmodel.predictors import simulation


def _run(levels, nest, options):
    h = Hierarchy(levels)
    res = h.run(nest, options)
    return h, res


def _same(levels, nest, options):
    """Run with and without fast-forward; assert identical outcomes; return the fast run's result."""
    fast_h, fast = _run(levels, nest, options)
    full_h, full = _run(levels, nest, dataclasses.replace(options, fast_forward=False))
    assert full.jumped_it == 0
    assert dataclasses.replace(fast, jumped_it=0) == full
    assert fast_h.stats() == full_h.stats()
    assert fast_h.dirty_lines() == full_h.dirty_lines()
    for i in range(len(levels)):
        assert fast_h.contents(i) == full_h.contents(i), f"level {i}"
    return fast


@st.composite
def hierarchies(draw, large_last: bool = False):
    """1 to 3 small levels of every kind, policy and store policy; ``large_last``: 2 or 3 levels, the
    last of 50 to 700 sets (it fills over many periods of the loops, the levels above repeat sooner)."""
    n = draw(st.integers(2, 3) if large_last else st.integers(1, 3))
    line = draw(st.sampled_from([16, 32, 64]))
    levels = []
    for i in range(n):
        kind = draw(st.sampled_from(["inclusive", "non-inclusive"] + (["victim", "victim"] if i > 0 else [])))
        policy = draw(st.sampled_from(["LRU", "LRU", "LRU", "FIFO", "RANDOM"]))
        sets = draw(st.integers(50, 700)) if large_last and i == n - 1 else draw(st.integers(1, 6)) * 2 ** i
        levels.append(LevelSpec(f"L{i + 1}", sets, draw(st.integers(1, 4)), line,
                                policy, draw(st.booleans()) or i > 0, draw(st.integers(0, 4)) > 0, kind,
                                draw(st.integers(1, 2 ** 64 - 1)), victim_clean=draw(st.booleans())))
    return levels


@st.composite
def nests(draw, line):
    """2- or 3-deep nests of 1-5 accesses: mostly arrays of one shape (every access moves by the same
    bytes per outer iteration: periodic), sometimes not; bounds constant or triangular; bases
    anywhere in the address space, near its top too."""
    depth = draw(st.integers(2, 3))
    trips = [draw(st.integers(1, 60)) for _ in range(depth - 1)] + [draw(st.integers(1, 40))]
    loops = []
    for d, t in enumerate(trips):
        step = draw(st.sampled_from([1, 1, 1, 2, -1]))
        start = draw(st.integers(-3, 3))
        coefs = tuple(draw(st.sampled_from([0, 0, 0, 1, -1])) for _ in range(d)) if draw(st.integers(0, 5)) == 0 \
            else ()
        stop = start + t * step
        loops.append(NestLoop(start, stop, step, coefs, coefs))
    elem = draw(st.sampled_from([4, 8, 8]))
    inner_stride = elem * draw(st.sampled_from([1, 1, 1, 2, -1]))
    row = draw(st.sampled_from([elem * 7, elem * 8, elem * 13, line * 3, line * 5 + elem, 0]))
    plane = row * draw(st.sampled_from([5, 9, 16]))
    shape = [plane, row, inner_stride][3 - depth:]
    accesses = []
    for _ in range(draw(st.integers(1, 5))):
        coefs = list(shape)
        if draw(st.integers(0, 6)) == 0:  # an access of another shape
            coefs[draw(st.integers(0, depth - 1))] = draw(st.sampled_from([0, elem, line * 2]))
        base = draw(st.sampled_from([1 << 30, (1 << 30) + 4096 * draw(st.integers(1, 40)), 2 ** 64 - (1 << 20), 0]))
        base += draw(st.integers(0, 3)) * elem
        kind = draw(st.sampled_from(["load", "load", "store", "nt"] if draw(st.integers(0, 4)) == 0 else
                                    ["load", "load", "store"]))
        phase = "inner" if coefs[-1] else draw(st.sampled_from(["before", "after"]))
        accesses.append(NestAccess((base,), tuple(coefs), draw(st.sampled_from([elem, elem, elem + 4])), kind,
                                   phase))
    work = draw(st.integers(0, len(accesses) - 1))
    return LoopNest(tuple(loops), tuple(accesses), work, max(1, line // elem))


@st.composite
def run_options(draw):
    target = draw(st.integers(1, 3000))
    return RunOptions(target_it=target, margin_it=draw(st.sampled_from([0, 0, 4, 16])),
                      max_sweeps=draw(st.integers(1, 5)), edges=draw(st.booleans()), start_mid=draw(st.booleans()),
                      max_it=draw(st.sampled_from([0, 0, 0, draw(st.integers(1, 40000))])),
                      cold=draw(st.integers(0, 9)) == 0, warm_caps_sweep=draw(st.integers(0, 3)),
                      warm_caps_full=draw(st.integers(0, 2)),
                      max_target_it=draw(st.sampled_from([0, 2 * target, 8 * target])),
                      settle_tol=draw(st.sampled_from([0.0, 0.02, 0.2])))


@settings(ks.PROPERTY_SETTINGS, max_examples=1000)
@given(data=st.data())
def test_fast_forward_equals_the_full_simulation_on_random_nests(data):
    levels = data.draw(hierarchies())
    nest = data.draw(nests(levels[0].line_size))
    _same(levels, nest, data.draw(run_options()))


@st.composite
def stencils_3d(draw, line):
    """3D stencils of doubles on grids of 6-40 x 6-40 x 20-120 points (rows padded or not): rows and
    planes both repeat, and the caches may hold more or less than a plane."""
    n, planes, elem = draw(st.integers(6, 40)), draw(st.integers(20, 120)), 8
    row = n * elem + draw(st.sampled_from([0, 0, 8, line]))
    plane = row * draw(st.integers(n, n + 3))
    offsets = draw(st.lists(st.sampled_from([0, elem, -elem, row, -row, plane, -plane]), min_size=1, max_size=5))
    base = draw(st.sampled_from([1 << 30, 1 << 31])) + 2 * plane + 2 * row + 2 * elem
    accs = [NestAccess((base + off,), (plane, row, elem), elem) for off in offsets]
    accs.append(NestAccess(((1 << 32) + draw(st.integers(0, 8)) * 64,), (plane, row, elem), elem,
                           draw(st.sampled_from(["store", "load"]))))
    return LoopNest((NestLoop(0, planes), NestLoop(0, n - 4), NestLoop(0, n - 4)), tuple(accs), len(accs) - 1,
                    max(1, line // elem))


@settings(ks.PROPERTY_SETTINGS, max_examples=300)
@given(data=st.data())
def test_fast_forward_equals_the_full_simulation_on_3d_stencils(data):
    """Jumps of rows inside planes and of whole planes, warming up and measuring."""
    levels = data.draw(hierarchies())
    options = data.draw(run_options())
    target = data.draw(st.integers(100, 30_000))
    options = dataclasses.replace(options, target_it=target,
                                  max_target_it=data.draw(st.sampled_from([0, 4 * target])))
    _same(levels, data.draw(stencils_3d(levels[0].line_size)), options)


def _stencil_2d(rows: int, cols: int, elem: int = 8):
    """b[j][i] = a[j][i-1] + a[j][i+1] + a[j-1][i] + a[j+1][i] over a rows x cols grid of doubles."""
    row = cols * elem
    a, b = 1 << 30, (1 << 30) + ((rows * row + 4095) // 4096) * 4096
    accs = tuple(NestAccess((a + off,), (row, elem), elem) for off in (-elem, elem, -row, row)) + \
        (NestAccess((b,), (row, elem), elem, "store"),)
    return LoopNest((NestLoop(1, rows - 1), NestLoop(1, cols - 1)), accs, 4, 64 // elem)


@pytest.mark.parametrize("l3", ["victim", "inclusive", "non-inclusive"])
@pytest.mark.parametrize("cols", [250, 251])
def test_fast_forward_jumps_most_of_a_long_2d_sweep(l3, cols):
    """A 2D 5-point stencil far larger than the caches: the rows repeat (one row shifts every line by
    the row's bytes: a whole number of lines after 1 or 8 rows), most of the warm-up and the window
    are jumped over, and the result is the full simulation's."""
    levels = [LevelSpec("L1", 8, 4), LevelSpec("L2", 32, 4), LevelSpec("L3", 96, 8, kind=l3)]
    res = _same(levels, _stencil_2d(1500, cols), RunOptions(target_it=60_000, margin_it=16, max_sweeps=5,
                                                             edges=True, start_mid=True, max_target_it=240_000))
    assert res.measured_it >= 60_000
    assert res.jumped_it > res.simulated_it / 2


@settings(ks.PROPERTY_SETTINGS, max_examples=200)
@given(data=st.data())
def test_fast_forward_equals_the_full_simulation_with_a_large_last_level(data):
    """2D stencils over 50-3000 rows on hierarchies whose last level fills slowly: the replays of its
    operations (undone where it could evict a line held above, gives a line back with another dirty
    bit, or the warm-up ends), warming up and measuring."""
    levels = data.draw(hierarchies(large_last=True))
    options = data.draw(run_options())
    target = data.draw(st.integers(100, 20_000))
    options = dataclasses.replace(options, target_it=target, cold=False,
                                  max_target_it=data.draw(st.sampled_from([0, 4 * target])))
    nest = _stencil_2d(data.draw(st.integers(50, 3000)), data.draw(st.sampled_from([13, 37, 64, 100, 250, 251])),
                       data.draw(st.sampled_from([4, 8])))
    _same(levels, nest, options)


@pytest.mark.parametrize("l3", ["victim", "inclusive", "non-inclusive"])
def test_fast_forward_replays_a_filling_last_level(l3):
    """A last level of 3000 sets (24000 lines, its set period 3000 rows of 251 doubles): its contents
    repeat only after a thousand rows, while the levels above repeat every 8 rows. The warm-up that
    fills it and the window are mostly jumped over all the same (the last level's operations of the
    8 rows before replayed on it alone: without that, 54 % of the iterations were jumped), and the
    result is the full simulation's."""
    levels = [LevelSpec("L1", 8, 4), LevelSpec("L2", 32, 4), LevelSpec("L3", 3000, 8, kind=l3)]
    res = _same(levels, _stencil_2d(4000, 251), RunOptions(target_it=60_000, margin_it=16, max_sweeps=5,
                                                           edges=True, start_mid=True, max_target_it=240_000))
    assert res.measured_it >= 60_000
    assert res.jumped_it > 0.9 * res.simulated_it


def test_fast_forward_jumps_whole_planes():
    """3D: rows do not repeat while the caches hold more than a plane; the planes do."""
    n = 24
    row, plane = n * 8, n * n * 8
    accs = tuple(NestAccess(((1 << 30) + off,), (plane, row, 8), 8) for off in (-plane, plane, -row, row, -8, 8)) + \
        (NestAccess(((1 << 31),), (plane, row, 8), 8, "store"),)
    nest = LoopNest((NestLoop(1, 200), NestLoop(1, n - 1), NestLoop(1, n - 1)), accs, 6, 8)
    levels = [LevelSpec("L1", 8, 4), LevelSpec("L2", 64, 8, kind="victim")]
    res = _same(levels, nest, RunOptions(target_it=20_000, max_sweeps=4, start_mid=True, max_target_it=80_000))
    assert res.jumped_it > res.simulated_it / 2


def test_fast_forward_stops_at_the_top_of_the_address_space():
    """Arrays just below 2**64: a jump that would carry addresses past the top (where they wrap
    around to 0 and the shift no longer holds) is not taken."""
    levels = [LevelSpec("L1", 4, 2), LevelSpec("L2", 16, 4)]
    nest = LoopNest((NestLoop(0, 3000), NestLoop(0, 16)),
                    (NestAccess((2 ** 64 - 3000 * 128 + 64 * 128,), (128, 8), 8),), 0, 8)
    res = _same(levels, nest, RunOptions(target_it=40_000, max_sweeps=2))
    assert res.simulated_it > 0


def test_a_replay_starts_after_the_addresses_wrap_around():
    """An array at address 0 swept from index -1: the first period's addresses lie just below 2**64
    and wrap around to 0 in it. The last level's operations of that period, moved on, are no
    operations of the next (line numbers past the top); no replay starts from it."""
    levels = [LevelSpec("L1", 1, 1, 16, write_allocate=False, write_back=False),
              LevelSpec("L2", 2, 2, 16, write_back=False)]
    nest = LoopNest((NestLoop(-1, 8), NestLoop(0, 1)), (NestAccess((0,), (28, 4), 4, "store"),), 0, 4)
    _same(levels, nest, RunOptions(target_it=1, max_sweeps=1, warm_caps_sweep=0, warm_caps_full=0))


def test_a_period_confirmed_before_the_addresses_wrap_around_is_not_carried_past_it():
    """Rows repeat (the line of the non-temporal store's load is invalidated at once, so the cache
    holds only the other array's lines) while one array runs from just below 2**64 over the top to
    0: its lines' sets no longer follow the shift there (2**64 is no multiple of 3 sets' lines), so
    the periods after the wrap-around are not the periods before it shifted, and are simulated."""
    levels = [LevelSpec("L1", 3, 1, 16, "LRU", write_allocate=False, write_back=False, kind="inclusive", seed=1)]
    arr = ((0,), (288, 32, 4), 4)
    nest = LoopNest((NestLoop(-1, 0), NestLoop(1, 12), NestLoop(1, 2)),
                    (NestAccess(*arr), NestAccess(*arr, "nt"), NestAccess((1 << 30,), (288, 32, 4), 4),
                     NestAccess((1 << 30,), (288, 32, 4), 4)), 0, 4)
    _same(levels, nest, RunOptions(target_it=7, max_sweeps=1, warm_caps_sweep=0, warm_caps_full=0))


def test_the_period_in_which_counting_begins_is_no_reference_for_the_units_of_work():
    """Rows whose last line of work is the next row's first (a row moves 4 lines, spans 5): a row
    counts a new line of work at its start only where the row before was counted too. The first
    row counted counts it, the later ones do not: a jump must not repeat the first one."""
    levels = [LevelSpec("L1", 1, 1, 16, "LRU", write_allocate=False, write_back=False, kind="inclusive", seed=1)]
    nest = LoopNest((NestLoop(0, 1), NestLoop(0, 10, 2), NestLoop(0, 18, 2)),
                    (NestAccess(((1 << 30) + 4,), (160, 32, 4), 4),), 0, 4)
    res = _same(levels, nest, RunOptions(target_it=37, max_sweeps=1, warm_caps_sweep=0, warm_caps_full=0))
    assert res.work_lines == 13


def test_a_plane_with_rows_jumped_is_no_reference_for_the_warm_up():
    """Rows of one line each, 2 lines apart, fill only half of the L2's sets: the L2 is warm once a
    capacity was placed with no net growth, in the third plane. Rows of the second plane are jumped,
    so its record of warm-up checks misses some: the third plane is simulated, not jumped over."""
    levels = [LevelSpec("L1", 1, 1, 16, "LRU", write_allocate=False, write_back=False, kind="inclusive", seed=1),
              LevelSpec("L2", 4, 3, 16, "LRU", write_back=False, kind="inclusive", seed=1)]
    arr = ((1 << 30,), (288, 32, 4), 4)
    nest = LoopNest((NestLoop(0, 4), NestLoop(0, 9), NestLoop(0, 3)), (NestAccess(*arr), NestAccess(*arr)), 0, 4)
    res = _same(levels, nest, RunOptions(target_it=1, max_sweeps=1, warm_caps_sweep=0, warm_caps_full=0))
    assert res.warm_it == 72 and res.jumped_it > 0


# --- the simulation predictor: every kernel, size and machine ---------------------------------------

@settings(ks.PROPERTY_SETTINGS, max_examples=100)
@given(data=st.data())
def test_predictor_with_fast_forward_equals_the_full_simulation(data):
    """Random 2D and 3D kernels (mostly of doubles: arrays of one shape repeat along the outer loops)
    on the bundled machines (victim L3s among them), caches shrunk (cache_factor) so that 10**5 to
    2 x 10**6 iterations span the hierarchy, on one to four cores, repeated and single sweeps: the
    same traffic, notes and simulation record either way (about half of the runs jump)."""
    case = data.draw(ks.kernels(dims=(2, 3), strided=data.draw(st.integers(0, 3)) == 0,
                                float_types=data.draw(st.integers(0, 3)) == 0))
    machine = data.draw(ks.machines())
    defines = data.draw(ks.sizes(case, small=1e5, large=2e6))
    options = dict(cores=data.draw(st.integers(1, 4)), cache_factor=data.draw(st.sampled_from([0.01, 0.03, 0.1])),
                   sweeps=data.draw(st.sampled_from(["repeated", "repeated", "single"])),
                   padding=data.draw(st.sampled_from([0, 0, 64, 200])), target_units=data.draw(st.integers(50, 3000)))
    predictor = simulation.SimulationPredictor(case.kernel)
    try:
        fast = predictor.predict(machine, defines, **options)
    except Exception as exc:  # noqa: BLE001 - the same failure either way
        fast = repr(exc)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(simulation, "RunOptions", functools.partial(RunOptions, fast_forward=False))
        try:
            full = predictor.predict(machine, defines, **options)
        except Exception as exc:  # noqa: BLE001
            full = repr(exc)
    assert fast == full
