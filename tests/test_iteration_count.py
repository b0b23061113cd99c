"""The exact innermost iterations of loop nests with bounds affine in the outer indices
(:func:`loopmodel.ir.iteration_count.nest_iterations`): hand-counted nests, against enumeration."""
from __future__ import annotations

import math
import time
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopmodel.errors import ModelError
from loopmodel.ir.iteration_count import ENUMERATION_BUDGET, nest_iterations
from loopmodel.ir.kernel import Kernel, Loop
from loopmodel.ir.poly import Poly
from loopmodel.models.application import iterations

N, M = Poly.symbol("N"), Poly.symbol("M")
I, J = Poly.symbol("i"), Poly.symbol("j")


def loop(index, start, stop, step=1) -> Loop:
    return Loop(index, Poly.coerce(start), Poly.coerce(stop), step)


def enumerate_nest(loops, defines, env=None) -> int:
    """Brute force: run the nest, loop by loop (``range`` has the semantics of a C loop)."""
    env = dict(defines, **(env or {}))
    lp, rest = loops[0], loops[1:]
    values = range(lp.start.evaluate(env), lp.stop.evaluate(env), lp.step)
    if not rest:
        return len(values)
    return sum(enumerate_nest(rest, defines, {**(env or {}), lp.index: v}) for v in values)


CASES = [  # (name, loops, defines, count by hand)
    ("rectangular", (loop("i", 0, N), loop("j", 1, M - 1)), {"N": 7, "M": 5}, 7 * 3),
    ("lower j < i", (loop("i", 0, N), loop("j", 0, I)), {"N": 10}, 45),
    ("lower j <= i", (loop("i", 0, N), loop("j", 0, I + 1)), {"N": 10}, 55),
    ("upper j = i+1 .. N-1", (loop("i", 0, N), loop("j", I + 1, N)), {"N": 10}, 45),
    ("lu-like k < j < i", (loop("i", 0, N), loop("j", 0, I), loop("k", 0, J)), {"N": 10}, math.comb(10, 3)),
    ("nussinov: i = N-1 down to 0, j = i+1 .. N-1, k = i+1 .. j-1",
     (loop("i", N - 1, -1, -1), loop("j", I + 1, N), loop("k", I + 1, J)), {"N": 10}, math.comb(10, 3)),
    ("descending i, j = i+1 .. N-1", (loop("i", N - 1, -1, -1), loop("j", I + 1, N)), {"N": 6}, 15),
    ("step 2 inside a triangle", (loop("i", 0, N), loop("j", 0, I, 2)), {"N": 6}, 0 + 1 + 1 + 2 + 2 + 3),
    ("step 3 outside a triangle", (loop("i", 0, N, 3), loop("j", I, N)), {"N": 7}, 7 + 4 + 1),
    ("step -2 with an inner triangle", (loop("i", N, 0, -2), loop("j", 0, I)), {"N": 5}, 5 + 3 + 1),
    ("empty outer range", (loop("i", 5, N), loop("j", 0, I)), {"N": 3}, 0),
    ("empty at N = 0", (loop("i", 0, N), loop("j", 0, I), loop("k", 0, J)), {"N": 0}, 0),
    ("negative trip counts for i < 5", (loop("i", 0, N), loop("j", 5, I)), {"N": 10}, 0 + 1 + 2 + 3 + 4),
    ("negative trip counts, 3 deep", (loop("i", 0, N), loop("j", 5, I), loop("k", 0, J)), {"N": 8},
     5 + (5 + 6)),
    ("inner range empty in the middle", (loop("i", 0, N), loop("j", N - I, I), loop("k", J, N)), {"N": 6},
     None),
]


@pytest.mark.parametrize("loops,defines,count", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hand_counted_nests(loops, defines, count):
    expected = enumerate_nest(loops, defines)
    if count is not None:
        assert expected == count  # the brute force agrees with the hand count
    assert nest_iterations(loops, defines) == expected


def test_no_loops_run_once():
    assert nest_iterations((), {}) == 1


def test_triangular_nest_at_large_sizes_is_a_closed_form():
    """lu's k < j < i at N = 4000: C(N, 3) in well under 50 ms (time independent of N)."""
    loops = (loop("i", 0, N), loop("j", 0, I), loop("k", 0, J))
    t0 = time.perf_counter()
    assert nest_iterations(loops, {"N": 4000}) == math.comb(4000, 3)
    assert time.perf_counter() - t0 < 0.05
    assert nest_iterations(loops, {"N": 10 ** 9}) == math.comb(10 ** 9, 3)


def test_negative_trip_counts_are_enumerated_over_the_outer_loop_only():
    loops = (loop("i", 0, N), loop("j", 5, I), loop("k", 0, J))
    assert nest_iterations(loops, {"N": 4000}) == sum(j for i in range(4000) for j in range(5, i))


def test_too_many_outer_points_raise_value_error():
    """k from i to j may run no iteration (j < i): (i, j) would be enumerated, N**2 points."""
    loops = (loop("i", 0, N), loop("j", 0, N), loop("k", I, J))
    n = math.isqrt(ENUMERATION_BUDGET) + 10
    with pytest.raises(ValueError, match="more than"):
        nest_iterations(loops, {"N": n})
    assert nest_iterations(loops, {"N": 30}) == enumerate_nest(loops, {"N": 30})


def test_missing_size_raises_key_error_and_index_names_in_defines_are_ignored():
    loops = (loop("i", 0, N), loop("j", 0, I + M))
    with pytest.raises(KeyError) as info:
        nest_iterations(loops, {"N": 4})
    assert info.value.args[0] == "M"
    assert nest_iterations(loops, {"N": 4, "M": 1, "i": 100}) == 1 + 2 + 3 + 4


def test_kernel_and_application_count_triangular_nests():
    loops = (loop("i", 0, N), loop("j", 0, I + 1))
    kernel = Kernel("k.c", {}, {}, loops, (), (), {}, 0)
    assert kernel.total_iterations({"N": 100}) == 5050
    assert iterations(kernel, {"N": 100}) == 5050
    with pytest.raises(ModelError, match="'N'"):
        iterations(kernel, {})
    wide = SimpleNamespace(source="w.c", loops=(loop("i", 0, N), loop("j", 0, N), loop("k", I, J)))
    with pytest.raises(ModelError, match="w.c"):
        iterations(wide, {"N": math.isqrt(ENUMERATION_BUDGET) + 10})


def _affine(draw, outer: list) -> Poly:
    """A random bound ``c + a*N + sum(b_x * x)`` over the outer indices, coefficients -2 .. 2
    (the constant -3 .. 3)."""
    bound = Poly.const(draw(st.integers(-3, 3))) + draw(st.integers(-2, 2)) * N
    for name in outer:
        bound = bound + draw(st.integers(-2, 2)) * Poly.symbol(name)
    return bound


@st.composite
def nests(draw):
    names = ["i", "j", "k"][:draw(st.integers(1, 3))]
    return tuple(Loop(x, _affine(draw, names[:d]), _affine(draw, names[:d]), draw(st.sampled_from([-2, -1, 1, 2, 3])))
                 for d, x in enumerate(names))


@st.composite
def running_nests(draw):
    """Nests that mostly run: each loop's other bound is its first one plus ``c + a*N + b*x``
    with ``c, a >= 0``, toward the direction of its step."""
    names = ["i", "j", "k"][:draw(st.integers(1, 3))]
    loops = []
    for d, x in enumerate(names):
        first, step = _affine(draw, names[:d]), draw(st.sampled_from([-2, -1, 1, 2, 3]))
        length = Poly.const(draw(st.integers(0, 3))) + draw(st.integers(0, 2)) * N
        for name in names[:d]:
            length = length + draw(st.integers(-2, 2)) * Poly.symbol(name)
        loops.append(Loop(x, first, first + length if step > 0 else first - length, step))
    return tuple(loops)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(loops=nests(), n=st.integers(0, 12))
def test_nest_iterations_equal_enumeration(loops, n):
    assert nest_iterations(loops, {"N": n}) == enumerate_nest(loops, {"N": n})


@settings(max_examples=300, deadline=None, derandomize=True)
@given(loops=running_nests(), n=st.integers(0, 12))
def test_nest_iterations_of_running_nests_equal_enumeration(loops, n):
    assert nest_iterations(loops, {"N": n}) == enumerate_nest(loops, {"N": n})


@settings(max_examples=150, deadline=None, derandomize=True)
@given(n=st.integers(0, 12), lows=st.tuples(st.integers(-2, 2), st.integers(-2, 2)),
       steps=st.tuples(st.sampled_from([-1, 1]), st.sampled_from([-1, 1])))
def test_triangular_unit_step_nests_equal_enumeration(n, lows, steps):
    """The nests the closed form covers (triangles with unit steps, ascending or descending)."""
    first = loop("i", 0, N) if steps[0] > 0 else loop("i", N - 1, -1, -1)
    second = loop("j", lows[0], I) if steps[1] > 0 else loop("j", I - 1, lows[0] - 1, -1)
    loops = (first, second, loop("k", lows[1], J + 1))
    assert nest_iterations(loops, {"N": n}) == enumerate_nest(loops, {"N": n})
