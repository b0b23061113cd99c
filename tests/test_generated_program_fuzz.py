"""The differential check of generated programs (tests/compile_fuzz.py): for every kernel text
with hostile bytes inserted that the front-end accepts, the compiler reads the kernel loopmodel
printed, token for token, and no payload runs. benchmarks/fuzz_generated_programs.py runs the
same check longer."""
from __future__ import annotations

import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings

from compile_fuzz import BASES, INSERTS, check, kernel_texts

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")


@needs_gcc
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernel_texts())
def test_the_compiler_reads_what_loopmodel_printed(text):
    with tempfile.TemporaryDirectory(prefix="loopmodel-fuzz-") as d:
        check(text, d)


@needs_gcc
@pytest.mark.parametrize("insert", INSERTS)
def test_each_insert_after_the_loop_header(insert, tmp_path):
    """Every hostile insert at the place the reported attacks used: inside the loop body, after
    the statement (a comment's end there is where a payload would start)."""
    base = BASES[0]
    cut = base.index(";\n", base.index("for")) + 1
    check(base[:cut] + " " + insert + base[cut:], str(tmp_path), run=False)


@needs_gcc
def test_the_reported_attacks_are_refused_or_harmless(tmp_path):
    attacks = [
        'double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i] * 2.0; // x\r'
        '{ int system(const char *); system("touch M"); }\n',
        'double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i] * 2.0; // x\r#include "/etc/passwd"\n',
        'double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i] * 2.0; // x\\\f\n'
        '{ int system(const char *); system("touch M"); }\n',
        'double a[N], b[N];\n#pragma omp parallel for num_threads(system("touch M"))\n'
        'for (int i = 0; i < N; ++i)\n  a[i] = b[i];\n',
    ]
    outcomes = [check(text, str(tmp_path)) for text in attacks]
    assert outcomes[3] == "refused" and "compiled" in outcomes[:3]
