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
        assert re.search(rf"[*(]{name_}\)?(\[\d+\])* = \(void \*\)\({name_}_loopmodel_block \+ \d+\);", src), name_
        assert f"char *{name_}_loopmodel_block = aligned_alloc(4096, " in src and f"free({name_}_loopmodel_block);" in src


def test_cli_codegen_prints_the_program():
    p = run_cli("codegen", KERNELS / "2d-5pt.c", "-D", "N=100", "-D", "M=50")
    assert p.returncode == 0, p.stderr
    assert "#define M 50" in p.stdout and "#define N 100" in p.stdout
    assert "double (*a)[100] = (void *)(a_loopmodel_block + 0);" in p.stdout
    assert "double (*b)[100] = (void *)(b_loopmodel_block + 2048);" in p.stdout


def test_cli_codegen_needs_sizes():
    p = run_cli("codegen", KERNELS / "2d-5pt.c", "-D", "N=100")
    assert p.returncode == 2
    assert p.stderr.startswith("loopmodel: ") and "no value for M" in p.stderr and p.stderr.count("\n") == 1


def test_arrays_start_spread_over_the_page():
    """Invariant: the harness's arrays are cache-line aligned and their starts are spread evenly
    over a 4 KiB page (a common start makes every load of one array after a store to another at
    the same index a 4K-aliasing stall, which the model of the kernel does not have)."""
    from loopmodel.compiled.codegen import array_offset
    for n in range(1, 17):
        offsets = [array_offset(k, n) for k in range(n)]
        assert offsets[0] == 0 and all(o % 64 == 0 and 0 <= o < 4096 for o in offsets)
        assert len(set(offsets)) == n
        gaps = sorted(offsets) + [4096]
        assert min(b - a for a, b in zip(gaps, gaps[1:])) >= (4096 // n) // 64 * 64
    assert [array_offset(k, 2) for k in range(2)] == [0, 2048]
