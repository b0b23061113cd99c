"""Cache-line-split vector accesses (models/split_access) and their charge in the in-core models."""
from __future__ import annotations

import dataclasses
import shutil

import pytest
from hypothesis import given, settings, strategies as st

from helpers import SKX
from loopmodel.compiled.llvm_mca import find_llvm_mca
from loopmodel.fileio.c_kernel import parse_kernel_file
from loopmodel.fileio.machine_files import load_machine
from loopmodel.models.incore import analytic_incore
from loopmodel.models.split_access import split_accesses, split_share

JACOBI = """double a[M][N];
double b[M][N];
double s;

for (int j = 1; j < M-1; ++j)
    for (int i = 1; i < N-1; ++i)
        b[j][i] = (a[j][i-1] + a[j][i+1] + a[j-1][i] + a[j+1][i]) * s;
"""
STREAM = """double a[N];
double b[N];

for (int i = 0; i < N; ++i)
    a[i] = b[i];
"""


def _kernel(tmp_path, text):
    p = tmp_path / "k.c"
    p.write_text(text)
    return parse_kernel_file(str(p))[0]


@pytest.mark.parametrize("mis, width, share", [(0, 64, 0.0), (8, 64, 1.0), (8, 32, 0.5), (32, 32, 0.0),
                                               (8, 16, 0.25), (56, 16, 0.25), (0, 16, 0.0)])
def test_split_share(mis, width, share):
    assert split_share(mis, width, 64) == share


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 63), st.sampled_from([8, 16, 32, 64]))
def test_split_share_is_a_share_and_zero_when_aligned(mis, width):
    """Invariant: a share in [0, 1]; 0 where the vectors start on a multiple of their width; at
    most one vector per line splits (1 / (line / width) of them) for an unaligned start."""
    s = split_share(mis, width, 64)
    assert 0.0 <= s <= 1.0
    assert (s == 0.0) == (mis % width == 0)
    assert s <= width / 64 + 1e-12


def test_jacobi_rows_aligned_three_of_four_loads_and_the_store_split(tmp_path):
    """2-D 5-point, i from 1, rows of 200 doubles (25 lines): with 64 B vectors a[j][i-1] starts on a
    line, a[j][i+1], a[j-1][i], a[j+1][i] and the store b[j][i] do not."""
    k = _kernel(tmp_path, JACOBI)
    s = split_accesses(k, {"M": 10, "N": 200}, 64, 64)
    assert s.loads == pytest.approx(3 / 8) and s.stores == pytest.approx(1 / 8)
    assert {name for name, _ in s.streams} == {"load a[j][i + 1]", "load a[j - 1][i]", "load a[j + 1][i]",
                                               "store b[j][i]"}
    half = split_accesses(k, {"M": 10, "N": 200}, 32, 64)  # every other 32 B vector of those streams
    assert half.loads == pytest.approx(3 / 8) and all(share == 0.5 for _, share in half.streams)


def test_odd_rows_average_over_rows(tmp_path):
    """Rows of 201 doubles shift each row's start by 8 B: a[j][i-1] then splits in 7 of 8 rows."""
    k = _kernel(tmp_path, JACOBI)
    s = split_accesses(k, {"M": 10, "N": 201}, 64, 64)
    shares = dict(s.streams)
    assert shares["load a[j][i - 1]"] == pytest.approx(7 / 8)


def test_unit_stride_streams_from_zero_do_not_split(tmp_path):
    s = split_accesses(_kernel(tmp_path, STREAM), {"N": 1000}, 64, 64)
    assert s.loads == 0 and s.stores == 0 and s.streams == ()


def test_unknown_sizes_give_none(tmp_path):
    assert split_accesses(_kernel(tmp_path, JACOBI), {"M": 10}, 64, 64) is None


def _with_split(machine, load=1.0, store=1.0):
    ic = machine.in_core
    return dataclasses.replace(machine, in_core=dataclasses.replace(
        ic, load=dataclasses.replace(ic.load, split_extra=load), store=dataclasses.replace(ic.store, split_extra=store)))


def test_analytic_charges_split_loads_and_stores_at_the_sizes(tmp_path):
    """The analytic model charges the same split accesses as the compiled analysis: 3 of 4 loads
    and the store of the 2-D 5-point stencil with 64 B vectors (SKX), one extra slot each."""
    k = _kernel(tmp_path, JACOBI)
    m = load_machine(SKX)
    plain = analytic_incore(k, m, 8, defines={"M": 10, "N": 200})
    split = analytic_incore(k, _with_split(m), 8, defines={"M": 10, "N": 200})
    lanes = plain.lanes
    assert lanes == 8
    # LD: (4 + 3) vector loads per CL instead of 4; ST: 2 slots instead of 1
    assert split.components["LD"] == pytest.approx(plain.components["LD"] * 7 / 4)
    assert split.components["ST"] == pytest.approx(plain.components["ST"] * 2)
    assert any("cross a cache line" in n for n in split.notes)
    assert analytic_incore(k, _with_split(m, 0.0, 0.0), 8, defines={"M": 10, "N": 200}).T_nOL == plain.T_nOL


@pytest.mark.skipif(shutil.which("gcc") is None or find_llvm_mca() is None, reason="gcc and llvm-mca needed")
def test_compiled_adds_split_load_time_to_t_nol(tmp_path):
    from loopmodel.compiled.incore import compiled_incore
    k = _kernel(tmp_path, JACOBI)
    m = load_machine(SKX)
    flags = "-O3 -march=skylake-avx512 -mprefer-vector-width=512"
    plain, _ = compiled_incore(k, m, {"M": 10, "N": 200}, 8, flags=flags, use_cache=False, trust_machine=True)
    split, info = compiled_incore(k, _with_split(m, 1.0, 0.0), {"M": 10, "N": 200}, 8, flags=flags,
                                  use_cache=False, trust_machine=True)
    # 3 split loads per CL (8 iterations, one zmm vector per stream), each one more load at 2 per cy
    assert split.T_nOL == pytest.approx(plain.T_nOL + 3 / m.in_core.load.instructions_per_cycle)
    assert split.components["split loads"] == pytest.approx(1.5)
    assert split.T_OL == plain.T_OL


def _info(block, its=1.0):
    from loopmodel.compiled.incore import CompiledInCore
    return CompiledInCore("llvm-mca", "19", "gcc", "12", (), ".L3", block, its, 8.0 * its, {}, 1.0, 1.0, "")


SCALAR_COPY = "vmovsd (%rsi,%rax), %xmm0\nvmovsd %xmm0, (%rdi,%rax)\naddq $8, %rax\ncmpq $8000, %rax\njne .L3\n"


def test_issued_instructions_fuse_compare_and_branch():
    from loopmodel.compiled.incore import issued_instructions
    assert issued_instructions(SCALAR_COPY) == 4
    assert issued_instructions("fadd d0, d0, d1\nsubs x1, x1, #1\nb.ne .L3", aarch64=True) == 3


@pytest.mark.parametrize("ipc, expected", [(2.0, 16.0), (8.0, 8.0), (None, 8.0)])
def test_front_end_bound_raises_t_ol_only_above_the_ports(ipc, expected):
    """A scalar copy (4 issued instructions, one taken branch per pass, 8 passes per CL) at 2 per
    cy is front-end bound at 16 cy/CL; at 8 per cy the taken branch (1 per cy) gives 8 cy/CL, which
    the ports' 8 cy/CL already reach; without an issue width only the branch bound is known."""
    from loopmodel.compiled.incore import front_end_bound
    from loopmodel.models.incore import InCoreResult
    m = load_machine(SKX)
    m = dataclasses.replace(m, in_core=dataclasses.replace(m.in_core, instructions_per_cycle=ipc,
                                                           taken_branches_per_cycle=1.0))
    res = InCoreResult("llvm-mca", 8.0, 4.0, {}, 1, {}, 0.0, ())
    out = front_end_bound(res, _info(SCALAR_COPY), m, 8)
    assert out.T_OL == pytest.approx(expected) and out.T_nOL == 4.0
    assert (len(out.notes) == 1) == (expected > 8.0)
