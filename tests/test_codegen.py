"""Generated benchmark C program: compiles, runs, keeps the kernel verbatim."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from helpers import KERNELS, run_cli

from loopmodel.compiled.codegen import generate_c, kernel_loop_text
from loopmodel.fileio.c_kernel import parse_kernel_file

EXAMPLES = sorted(p.name for p in KERNELS.glob("*.c"))
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")


@needs_gcc
@pytest.mark.parametrize("name", EXAMPLES)
def test_generated_program_compiles_and_runs(name, tmp_path):
    path = KERNELS / name
    k, _ = parse_kernel_file(str(path))
    src = generate_c(k, path.read_text(), {c: 24 for c in k.constants})
    (tmp_path / "k.c").write_text(src)
    cc = subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-o", str(tmp_path / "k"),
                         str(tmp_path / "k.c"), "-lm"], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    run = subprocess.run([str(tmp_path / "k"), "3"], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("name", EXAMPLES)
def test_loop_nest_is_verbatim(name):
    path = KERNELS / name
    text = path.read_text()
    k, _ = parse_kernel_file(str(path))
    loop = kernel_loop_text(k, text)
    assert loop.lstrip().startswith(("for", "#pragma"))
    src = generate_c(k, text, {c: 24 for c in k.constants})
    body = [ln.strip() for ln in loop.splitlines() if ln.strip()]
    gen = [ln.strip() for ln in src.splitlines()]
    start = gen.index(body[0])
    assert gen[start:start + len(body)] == body
    for name_ in k.arrays:  # declarations replaced by heap allocations
        assert re.search(rf"[*(]{name_}\)?(\[\d+\])* = aligned_alloc\(", src), name_


def test_cli_codegen_prints_the_program():
    p = run_cli("codegen", KERNELS / "2d-5pt.c", "-D", "N=100", "-D", "M=50")
    assert p.returncode == 0, p.stderr
    assert "#define M 50" in p.stdout and "#define N 100" in p.stdout
    assert "double (*a)[100] = aligned_alloc(" in p.stdout


def test_cli_codegen_needs_sizes():
    p = run_cli("codegen", KERNELS / "2d-5pt.c", "-D", "N=100")
    assert p.returncode == 2
    assert p.stderr.startswith("loopmodel: ") and "no value for M" in p.stderr and p.stderr.count("\n") == 1
