"""Trip counts of loops with steps: hand-counted iterations (every value of the index listed)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopmodel.fileio.c_kernel import parse_kernel_file
from loopmodel.models.application import iterations

# (loop header, defines, the index values the loop runs through, counted by hand)
CASES = [
    ("for (int i = 0; i < 10; i += 3)", {}, [0, 3, 6, 9]),
    ("for (int i = 0; i <= 9; i += 3)", {}, [0, 3, 6, 9]),
    ("for (int i = 0; i < 9; i += 3)", {}, [0, 3, 6]),
    ("for (int i = 1; i < N-1; i += 2)", {"N": 10}, [1, 3, 5, 7]),
    ("for (int i = 2; i < N-2; i += 2)", {"N": 11}, [2, 4, 6, 8]),
    ("for (int i = 10; i > 0; i -= 3)", {}, [10, 7, 4, 1]),
    ("for (int i = 0; i < N; ++i)", {"N": 7}, [0, 1, 2, 3, 4, 5, 6]),
    ("for (int i = 5; i < 3; i += 2)", {}, []),
]


@pytest.mark.parametrize("header,defines,values", CASES, ids=[c[0] for c in CASES])
def test_loop_iterations_are_the_ceiling_of_span_over_step(tmp_path, header, defines, values):
    path = tmp_path / "k.c"
    path.write_text(f"double a[40], b[40];\n\n{header}\n    a[i] = b[i];\n")
    kernel, _ = parse_kernel_file(str(path))
    assert kernel.loops[-1].iterations(defines) == len(values)


def test_application_counts_every_iteration_of_a_strided_nest(tmp_path):
    """j = 0, 3, 6, 9 (4) times i = 1, 3, 5, 7 (4): 16 innermost iterations per invocation."""
    path = tmp_path / "k.c"
    path.write_text("double a[N][N], b[N][N];\n\nfor (int j = 0; j < 10; j += 3)\n"
                    "    for (int i = 1; i < N-1; i += 2)\n        a[j][i] = b[j][i];\n")
    kernel, _ = parse_kernel_file(str(path))
    assert iterations(kernel, {"N": 10}) == 16


@settings(max_examples=150, deadline=None, derandomize=True)
@given(n=st.integers(1, 6), outer=st.tuples(st.integers(-3, 3), st.integers(-1, 1), st.integers(-3, 3),
                                             st.integers(-1, 1)),
       inner=st.tuples(st.integers(-3, 3), st.integers(-1, 1), st.integers(-1, 1), st.integers(-3, 3),
                       st.integers(-1, 1), st.integers(-1, 1)),
       steps=st.tuples(st.sampled_from([1, 2, -1]), st.sampled_from([1, 3, -2])))
def test_an_empty_iteration_space_is_refused_and_only_then(n, outer, inner, steps):
    """check_point refuses a nest only where enumerating it gives no iteration, and always
    where a rectangular nest (no index in the inner bounds) gives none."""
    from loopmodel.errors import ModelError
    from loopmodel.ir.kernel import Loop
    from loopmodel.ir.poly import Poly
    from loopmodel.ir.point import check_point

    N, j = Poly.symbol("N"), Poly.symbol("j")
    loops = (Loop("j", outer[0] + outer[1] * N, outer[2] + outer[3] * N, steps[0]),
             Loop("i", inner[0] + inner[1] * N + inner[2] * j, inner[3] + inner[4] * N + inner[5] * j, steps[1]))
    kernel = SimpleNamespace(source="k.c", arrays={}, loops=loops, constants=frozenset({"N"}))
    count = sum(loops[1].iterations({"N": n, "j": v})
                for v in range(int(loops[0].start.evaluate({"N": n})), int(loops[0].stop.evaluate({"N": n})), steps[0]))
    try:
        check_point(kernel, {"N": n})
        refused = False
    except ModelError as exc:
        refused = True
        assert "no iteration" in str(exc) and "N=" in str(exc)
    assert not (refused and count), "a nest with iterations was refused"
    if inner[2] == 0 and inner[5] == 0:
        assert refused == (count == 0)
