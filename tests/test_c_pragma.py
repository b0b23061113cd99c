"""The typed pragma model (loopmodel.fileio.c_pragma): what it accepts is printed again from the
model, what it cannot represent is refused in one line. Invariant: printing is a fixed point
(the printed pragma read again is the same model) and the printed text holds only names,
decimal integers and the punctuation of the grammar, whatever text it was read from."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopmodel.errors import KernelError
from loopmodel.fileio.c_pragma import MAX_UNROLL, kept, parse_pragma

ACCEPTED = {
    "omp parallel for": "omp parallel for",
    "omp  parallel   for schedule( dynamic ,4 )": "omp parallel for schedule(dynamic, 4)",
    "omp parallel for reduction(+:s) private(t,u) num_threads(8)": "omp parallel for reduction(+: s) private(t, u) "
                                                                   "num_threads(8)",
    "omp for simd linear(i:2) aligned(a,b:64) nowait": "omp for simd linear(i: 2) aligned(a, b: 64) nowait",
    "omp parallel for reduction(task, max: m) collapse(2) proc_bind(close)": "omp parallel for reduction(task, max: m) "
                                                                          "collapse(2) proc_bind(close)",
    "omp simd safelen(8) simdlen(4)": "omp simd safelen(8) simdlen(4)",
    "GCC unroll 8": "GCC unroll 8", "GCC ivdep": "GCC ivdep", "GCC novector": "GCC novector",
    "clang loop vectorize(enable) interleave_count(2)": "clang loop vectorize(enable) interleave_count(2)",
    "unroll": "unroll", "unroll 4": "unroll(4)", "unroll(4)": "unroll(4)", "nounroll": "nounroll",
    "ivdep": "ivdep", "simd": "simd", "vector always aligned": "vector always aligned",
    "loop_count(100, 1000)": "loop_count(100, 1000)",
}
REFUSED = [
    'omp parallel for num_threads(system("touch M"))', "omp parallel for if(n > 100)",
    "omp parallel for schedule(dynamic, f())", "omp parallel for schedule(dynamic, n)", "omp parallel for num_threads(0)",
    f"GCC unroll {MAX_UNROLL + 1}", "GCC unroll 65534", "GCC unroll n", "GCC optimize", "omp task", "omp critical",
    "omp parallel for copyin(x)", "omp parallel for reduction(foo: s)", "clang loop vectorize(always)",
    "clang loop", "ivdep loop", "unroll(4", "omp parallel for private()", "omp parallel for schedule(static, 1e3)",
    "omp parallel for schedule(static, 0x10)", "omp parallel for num_threads(4) /* */", "vector x",
]


@pytest.mark.parametrize("text, printed", ACCEPTED.items())
def test_accepted_pragmas_are_printed_from_the_model(text, printed):
    p = parse_pragma(text)
    assert p.text() == printed and parse_pragma(p.text()) == p and kept(text)


@pytest.mark.parametrize("text", REFUSED)
def test_what_the_model_cannot_represent_is_refused_in_one_line(text):
    with pytest.raises(KernelError) as err:
        parse_pragma(text, "k.c", 3)
    message = str(err.value)
    assert message.startswith("k.c:3: '#pragma ") and "\n" not in message


def test_clause_names_are_the_variables_they_list():
    assert parse_pragma("omp parallel for reduction(+: s) private(t, u) linear(i: 1)").names() == ("s", "t", "u", "i")


def test_other_pragmas_are_not_kept():
    assert not kept("once") and not kept("GCC optimize(\"O3\")") and not kept("acc parallel") and kept("omp simd")


_WORDS = ["omp", "parallel", "for", "simd", "schedule", "static", "dynamic", "num_threads", "reduction", "private",
          "GCC", "unroll", "clang", "loop", "vectorize", "enable", "ivdep", "system", "if", "s", "t", "max", "nowait",
          "(", ")", ",", ":", "+", "*", "4", "64", "65534", '"x"', ";", "{", "}", "\\", "/*", "#", "\r", "\n"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=12))
def test_printing_is_a_fixed_point_and_only_prints_the_grammar(words):
    try:
        p = parse_pragma(" ".join(words))
    except KernelError as exc:
        assert "\n" not in str(exc) and "\r" not in str(exc)
        return
    assert parse_pragma(p.text()) == p
    assert re.fullmatch(r"[A-Za-z0-9_ (),:+*&|^-]+", p.text()), p.text()
