"""Generated benchmark C program: compiles, runs, holds the loop nest printed from the parsed kernel."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from hypothesis import given, settings, strategies as st

from helpers import KERNELS, run_cli
from kernel_strategies import PROPERTY_SETTINGS, kernels

from loopmodel.compiled.codegen import generate_c
from loopmodel.fileio.c_kernel import parse_c, parse_kernel_file

EXAMPLES = sorted(p.name for p in KERNELS.glob("*.c"))
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")


@needs_gcc
@pytest.mark.parametrize("name", EXAMPLES)
def test_generated_program_compiles_and_runs(name, tmp_path):
    path = KERNELS / name
    k, _ = parse_kernel_file(str(path))
    src = generate_c(k, {c: 24 for c in k.constants})
    (tmp_path / "k.c").write_text(src)
    cc = subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-o", str(tmp_path / "k"),
                         str(tmp_path / "k.c"), "-lm"], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    run = subprocess.run([str(tmp_path / "k"), "3"], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("name", EXAMPLES)
def test_loop_nest_is_printed_from_the_parse(name):
    """The program holds the kernel's nest as the front-end printed it (Kernel.code), and that
    text read again is the same kernel: the same loops, accesses and operations."""
    path = KERNELS / name
    k, _ = parse_kernel_file(str(path))
    assert k.code.lstrip().startswith(("for", "#pragma"))
    src = generate_c(k, {c: 24 for c in k.constants})
    body = [ln.strip() for ln in k.code.splitlines() if ln.strip()]
    gen = [ln.strip() for ln in src.splitlines()]
    start = gen.index(body[0])
    assert gen[start:start + len(body)] == body
    again = parse_c(_declarations(k) + k.code, "again.c").kernel
    assert [(lp.index, lp.start, lp.stop, lp.step) for lp in again.loops] == \
        [(lp.index, lp.start, lp.stop, lp.step) for lp in k.loops]
    assert again.operations == k.operations and again.pragmas == k.pragmas
    assert {(a.array, a.offset) for a in again.reads} == {(a.array, a.offset) for a in k.reads}
    assert {(a.array, a.offset) for a in again.writes} == {(a.array, a.offset) for a in k.writes}
    assert again.code == k.code  # printing is a fixed point
    for name_ in k.arrays:  # declarations replaced by heap allocations under the program's own names
        assert re.search(rf"[*(]loopmodel_array_{name_}\)?(\[\d+\])* = \(void \*\)\(loopmodel_block_{name_} \+ \d+\);",
                         src), name_
        assert f"char *loopmodel_block_{name_} = aligned_alloc(4096, " in src and f"free(loopmodel_block_{name_});" in src


def _declarations(k) -> str:
    """Kerncraft-form declarations of ``k``'s arrays and scalars (dimensions as written)."""
    out = [f"{a.ctype} {name}" + "".join(f"[{d}]" for d in a.dims) + ";" for name, a in k.arrays.items()]
    out += [f"{s.ctype} {name};" for name, s in k.scalars.items() if name not in k.loop_indices]
    return "\n".join(out) + "\n"


def test_cli_codegen_prints_the_program():
    p = run_cli("codegen", KERNELS / "2d-5pt.c", "-D", "N=100", "-D", "M=50")
    assert p.returncode == 0, p.stderr
    assert "#define M 50" in p.stdout and "#define N 100" in p.stdout
    assert "double (*loopmodel_array_a)[100] = (void *)(loopmodel_block_a + 0);" in p.stdout
    assert "double (*loopmodel_array_b)[100] = (void *)(loopmodel_block_b + 2048);" in p.stdout


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


RESTRICT_FORMS = ("global", "pointer", "restrict pointer", "array parameter", "restrict array parameter")


def _function_kernel(case, forms: tuple) -> tuple:
    """``case`` (a :class:`kernel_strategies.KernelCase`) rewritten as a C function kernel, each array
    declared in the form of ``forms`` (one of :data:`RESTRICT_FORMS` per array, in declaration
    order): ``(source, {array: whether its declaration says the arrays do not overlap})``."""
    lines = case.source.splitlines()
    decls = [line for line in lines if re.match(r"(double|float) \w+\[", line)]
    rest = [line for line in lines if line not in decls]
    top, params, distinct = [], [], {}
    for line, form in zip(decls, forms):
        ctype, name, dims = re.match(r"(\w+) (\w+)((?:\[[^]]+\])+);", line).groups()
        first, inner = re.match(r"\[([^]]+)\](.*)", dims).groups()
        distinct[name] = form in ("global", "restrict pointer", "restrict array parameter")
        if form == "global":
            top.append(line)
        elif form.endswith("pointer"):
            star = "*restrict " if form.startswith("restrict") else "*"
            params.append(f"{ctype} ({star}{name}){inner}" if inner else f"{ctype} {star}{name}")
        else:
            params.append(f"{ctype} {name}[{'restrict ' if form.startswith('restrict') else ''}{first}]{inner}")
    scalars = [line for line in rest if line.startswith("double ") and not line.startswith("double (")]
    loops = [line for line in rest if line not in scalars]
    params += [f"int {s}" for s in case.sizes]
    source = "\n".join(top + scalars + [f"void kernel({', '.join(params)}) {{"] + loops + ["}"]) + "\n"
    return source, distinct


def _kernel_parameters(program: str) -> dict:
    """Array name -> its parameter of ``loopmodel_kernel`` in a generated program."""
    line = re.search(r"void loopmodel_kernel\((.*)\)\n", program).group(1)
    return {re.search(r"(\w+)\)?(\[\d+\])*$", p).group(1): p for p in line.split(", ") if "loopmodel_arg_" not in p}


def test_pointers_declared_without_restrict_stay_without():
    """A kernel function's pointer parameters without ``restrict`` may overlap: the generated program
    declares them so (it added ``restrict`` to every pointer, and the compiled analysis then
    modelled code without the overlap checks the user's code has)."""
    source = "void kernel(double *a, const double *b, double *restrict c, int n) {\n" \
             "  for (int i = 0; i < n; ++i)\n    a[i] = b[i] + c[i];\n}\n"
    ck = parse_c(source, "copy_fn.c")
    params = _kernel_parameters(generate_c(ck.kernel, {"n": 1000}))
    assert params == {"a": "double *a", "b": "double *b", "c": "double *restrict c"}
    triad = parse_kernel_file(str(KERNELS / "triad.c"))[0]  # declared arrays: distinct
    assert all("*restrict " in p for p in _kernel_parameters(generate_c(triad, {"N": 1000})).values())


@settings(PROPERTY_SETTINGS, max_examples=60)
@given(st.data())
def test_restrict_appears_iff_the_kernel_declares_the_arrays_distinct(data):
    """Over random kernels written as C functions, each array a declared array, a pointer or an array
    parameter, with or without ``restrict``: the generated kernel function's parameter of an array
    is ``restrict`` exactly where the kernel's declaration says it overlaps no other."""
    case = data.draw(kernels())
    count = len(re.findall(r"^(?:double|float) \w+\[", case.source, re.M))
    forms = tuple(data.draw(st.sampled_from(RESTRICT_FORMS)) for _ in range(count))
    source, distinct = _function_kernel(case, forms)
    kernel = parse_c(source, f"{case.name}.c").kernel
    program = generate_c(kernel, {s: 40 for s in case.sizes})
    params = _kernel_parameters(program)
    assert {n: "restrict" in p for n, p in params.items()} == {n: d for n, d in distinct.items() if n in params}
    assert {n: a.distinct for n, a in kernel.arrays.items()} == {n: distinct[n] for n in kernel.arrays}
