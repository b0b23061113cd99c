"""Trip counts of loops with steps: hand-counted iterations (every value of the index listed)."""
from __future__ import annotations

import pytest

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
