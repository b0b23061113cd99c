"""A kernel may name its arrays and scalars as C allows: the generated program's own names all
start ``loopmodel_``, and the kernel's are freed of the macros of headers and of the compiler
around its function (loopmodel.compiled.codegen). Invariant: the example kernels, their arrays
and scalars renamed to any identifier (the harness's old locals ``q t r p``, libc's ``free``,
``stderr``, ``NULL``, gcc's predefined ``linux``, ``main``), compile and run through codegen and
through the compiled in-core analysis (llvm-mca)."""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import KERNELS

from loopmodel.compiled.codegen import generate_c
from loopmodel.fileio.c_kernel import FUNCTIONS, parse_c
from loopmodel.ir.ctypes import TYPE_BYTES, TYPEDEFS

EXAMPLES = sorted(p.name for p in KERNELS.glob("*.c"))
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
#: names of the generated program's old locals and of libc, gcc and the harness
HOSTILE = ("q", "t", "r", "p", "run", "runs", "set", "el", "cpu", "seconds", "reps", "rep", "probe", "flush",
           "flush_n", "min_time", "pinned", "again", "t0", "argc", "argv", "free", "printf", "stderr", "stdin",
           "errno", "linux", "unix", "NULL", "EOF", "CLOCK_MONOTONIC", "timespec", "malloc", "calloc",
           "aligned_alloc", "sched_setaffinity", "main", "defined", "exit", "abs", "i386", "x86_64")
_KEYWORDS = {"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
             "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short",
             "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile",
             "while", "swap"}
_TAKEN = _KEYWORDS | set(FUNCTIONS) | set(TYPEDEFS) | {w for t in TYPE_BYTES for w in t.split()}
identifiers = st.sampled_from(HOSTILE) | st.from_regex(r"\A[a-z][a-z0-9_]{0,6}\Z").filter(lambda w: w not in _TAKEN)


def renamed(text: str, names: list, new: list) -> str:
    """``text`` with each whole word of ``names`` replaced by the same position of ``new``."""
    table = dict(zip(names, new))
    return re.sub(r"\b[A-Za-z_]\w*\b", lambda m: table.get(m.group(), m.group()), text)


def _renamings(draw_names, text: str, kernel) -> str:
    own = list(kernel.arrays) + [s for s in kernel.scalars if s not in kernel.loop_indices]
    others = set(re.findall(r"[A-Za-z_]\w*", text)) - set(own)
    new = draw_names(len(own), others)
    return renamed(text, own, new)


def _compile_and_run(program: str) -> None:
    with tempfile.TemporaryDirectory(prefix="loopmodel-names-") as d:
        with open(f"{d}/k.c", "w") as fh:
            fh.write(program)
        cc = subprocess.run(["gcc", "-O1", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-o", f"{d}/k", f"{d}/k.c",
                             "-lm"], capture_output=True, text=True)
        assert cc.returncode == 0, cc.stderr
        assert subprocess.run([f"{d}/k", "1"], capture_output=True, timeout=60).returncode == 0


@needs_gcc
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(EXAMPLES), st.data())
def test_any_names_compile_and_run(name, data):
    text = (KERNELS / name).read_text()
    kernel = parse_c(text, name).kernel

    def draw(n, others):
        return data.draw(st.lists(identifiers.filter(lambda w: w not in others), min_size=n, max_size=n,
                                  unique=True), label="names")
    k = parse_c(_renamings(draw, text, kernel), name).kernel
    _compile_and_run(generate_c(k, {c: 16 for c in k.constants}))


def _hostile_names(n: int, others) -> list:
    return [w for w in HOSTILE if w not in others][:n]


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_harness_words_through_llvm_mca(name):
    """Each example with its arrays and scalars named after the harness's old locals, analysed
    with the compiled in-core model: the program compiles and the block is found."""
    from loopmodel.compiled.incore import compiled_incore
    from loopmodel.compiled.llvm_mca import find_llvm_mca
    from loopmodel.fileio.machine_files import load_machine
    if shutil.which("gcc") is None or find_llvm_mca() is None:
        pytest.skip("gcc and llvm-mca needed")
    text = (KERNELS / name).read_text()
    k = parse_c(_renamings(_hostile_names, text, parse_c(text, name).kernel), name).kernel
    assert set(k.arrays) & set(HOSTILE)
    result, info = compiled_incore(k, load_machine("SkylakeSP_Gold-6148"), {c: 1000 for c in k.constants}, 8,
                                   "llvm-mca", use_cache=False)
    assert result.T_nOL > 0 and info.block
