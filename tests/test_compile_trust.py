"""How loopmodel compiles kernels: which floating-point reassociation the analytic in-core model
assumes (from the compiler and flags), what the compiler may know about the arrays (alignment), and
which compiler flags and names a machine file may bring (it is untrusted input)."""
from __future__ import annotations

import json
import shlex
import shutil
import subprocess

import pytest
import yaml

from helpers import IVB, KERNELS, REFERENCE_MACHINES, SNB, requires_tool, run_cli

from loopmodel.compiled.asm import find_kernel_block
from loopmodel.compiled.codegen import generate_c
from loopmodel.compiled.compile import choose_compiler, compile_to_assembly, fp_reassociation, resolve_compiler
from loopmodel.compiled.llvm_mca import find_llvm_mca
from loopmodel.errors import MachineError
from loopmodel.fileio.c_kernel import parse_kernel_file
from loopmodel.fileio.machine_files import builtin_names, load_machine
from loopmodel.gate import check_compiler_name


def check_machine_flags(flags, origin, key="gcc"):
    """The gate's check of a machine file's ``compiler.<key>`` flags."""
    from loopmodel.gate import check_flags

    check_flags(flags, origin, f"compiler.{key}")

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
needs_tools = pytest.mark.skipif(shutil.which("gcc") is None or find_llvm_mca() is None,
                                 reason="gcc and llvm-mca needed")
DOT = KERNELS / "dot.c"
TRIAD = KERNELS / "triad.c"


def _json(*args):
    p = run_cli(*map(str, args))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


# --- floating-point reassociation follows the compiler and its flags ---------------------------

#: gcc flags -> whether gcc 12 splits the dot product into partial sums (checked against gcc below)
GCC_CASES = {
    "": False,
    "-fassociative-math": False,  # disabled by gcc: needs -fno-signed-zeros -fno-trapping-math too
    "-fassociative-math -fno-signed-zeros": False,
    "-fassociative-math -fno-trapping-math": False,
    "-fassociative-math -fno-signed-zeros -fno-trapping-math": True,
    "-fno-signed-zeros -fno-trapping-math -fassociative-math": True,
    "-funsafe-math-optimizations": True,
    "-ffast-math": True,
    "-Ofast": True,
    "-Ofast -fno-fast-math": False,
    "-fno-fast-math -Ofast": False,  # explicit -f options win over -Ofast in either order
    "-Ofast -O3": False,  # the last -O level counts
    "-O3 -Ofast": True,
    "-ffast-math -fno-associative-math": False,
    "-ffast-math -fsigned-zeros": False,
    "-ffast-math -ftrapping-math": False,
}


@pytest.mark.parametrize("extra", sorted(GCC_CASES))
def test_gcc_reassociation_rule(extra):
    flags = ["-O3", "-march=corei7-avx", *shlex.split(extra)]
    assumed, why = fp_reassociation("gcc", flags)
    assert assumed is GCC_CASES[extra]
    assert why.startswith("gcc ")


@needs_gcc
@requires_tool("gcc", "12", "the table is gcc 12's behaviour")
def test_gcc_reassociation_rule_matches_gcc(tmp_path):
    """The table above is what the installed gcc does: packed adds (vaddpd) in the dot product's loop
    only when it splits the reduction into partial sums (the in-order form adds scalars, vaddsd)."""
    src = tmp_path / "dot.c"
    src.write_text("double dot(const double *restrict a, const double *restrict b, int n)\n"
                   "{ double s = 0; for (int i = 0; i < n; ++i) s += a[i] * b[i]; return s; }\n")
    for extra, expected in GCC_CASES.items():
        flags = ["-O3", "-march=corei7-avx", *shlex.split(extra)]
        p = subprocess.run(["gcc", *flags, "-S", "-o", "-", str(src)], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        assert ("vaddpd" in p.stdout) is expected is fp_reassociation("gcc", flags)[0], extra


@pytest.mark.parametrize("compiler, flags, expected", [
    ("clang", "-O3 -march=skylake-avx512", False),
    ("clang-14", "-O3 -ffast-math", True),
    ("clang", "-O3 -fassociative-math -fno-signed-zeros", True),  # clang: no trapping math by default
    ("clang", "-O3 -ffp-model=fast", True),
    ("clang", "-Ofast -ffp-model=precise", False),
    ("icc", "-O3 -xAVX -fno-alias", True),  # Intel default: -fp-model fast=1
    ("icc", "-O3 -fp-model precise", False),
    ("icc", "-O3 -fp-model strict", False),
    ("icc", "-O3 -fp-model consistent", False),
    ("icc", "-O3 -fp-model fast=2", True),
    ("icc", "-O3 -fp-model precise -fp-model except", False),
    ("/opt/intel/bin/icx", "-O3 -fp-model=precise", False),
    ("icx", "-O3 -xCORE-AVX2", True),
    ("aarch64-linux-gnu-gcc", "-Ofast -mcpu=thunderx2t99", True),
])
def test_reassociation_other_compilers(compiler, flags, expected):
    assert fp_reassociation(compiler, shlex.split(flags))[0] is expected


def test_dot_default_is_latency_bound_with_gcc_flags():
    """SNB's gcc entry has no -ffast-math: the analytic model keeps the reduction in order, 3 cy ADD
    latency per iteration, 8 it per CL = 24 cy/CL (it assumed partial sums: 2 cy/CL)."""
    d = _json("analyze", DOT, "-m", SNB, "-D", "N=1000", "-p", "ECM", "--incore", "analytic", "--json")
    r = d["incore"]["reassociation"]
    assert r["assumed"] is False and "gcc" in r["source"] and "-ffast-math" in r["source"]
    assert d["incore"]["T_OL_cy_per_cl"] == pytest.approx(24.0) and d["incore"]["simd_lanes"] == 1
    assert any("kept in source order" in n and "--reassociation" in n for n in d["notes"])


@pytest.mark.parametrize("extra, source_has", [
    (["--compiler-flags=-O3 -march=corei7-avx -ffast-math"], "-ffast-math"),
    (["--compiler", "icc"], "icc"),
    (["--reassociation"], "--reassociation given"),
])
def test_dot_partial_sums_when_the_compiler_would(extra, source_has):
    """Reassociated: 4 lanes of partial sums in one vector accumulator (gcc's code), its 3 cy ADD
    chain per 4 iterations, 8 it per CL = 6 cy/CL (not the 2 cy/CL of the loads and FP ports alone)."""
    d = _json("analyze", DOT, "-m", SNB, "-D", "N=1000", "-p", "ECM", "--incore", "analytic", "--json", *extra)
    r = d["incore"]["reassociation"]
    assert r["assumed"] is True and source_has in r["source"]
    assert d["incore"]["T_OL_cy_per_cl"] == pytest.approx(6.0) and d["incore"]["simd_lanes"] == 4
    assert any("one vector accumulator" in n for n in d["notes"])


def test_no_reassociation_overrides_intel_default():
    d = _json("analyze", DOT, "-m", IVB, "-D", "N=1000", "--incore", "analytic", "--json", "--compiler", "icc",
              "--no-reassociation")
    assert d["incore"]["reassociation"] == {"assumed": False, "source": "--no-reassociation given"}
    p = run_cli("analyze", DOT, "-m", IVB, "-D", "N=1000", "--reassociation", "--no-reassociation")
    assert p.returncode == 2 and p.stderr.count("\n") == 1


@needs_tools
def test_analytic_dot_agrees_with_llvm_mca_on_gccs_code():
    """gcc -O3 -march=corei7-avx keeps the dot product's additions in order (vaddsd chain): llvm-mca
    finds the loop latency-bound, as the analytic model now assumes."""
    ana = _json("analyze", DOT, "-m", SNB, "-D", "N=1000", "-p", "ECM", "--incore", "analytic", "--json")
    mca = _json("analyze", DOT, "-m", SNB, "-D", "N=1000", "-p", "ECM", "--incore", "llvm-mca", "--json")
    assert any("latency-bound" in n for n in mca["notes"])
    assert ana["ecm"]["T_OL_cy_per_cl"] == pytest.approx(mca["ecm"]["T_OL_cy_per_cl"], rel=0.1)


# --- the compiler knows what it would know about user code -------------------------------------

def _mnemonics(machine: str, kernel=TRIAD, defines=None, **kw) -> list:
    k, _ = parse_kernel_file(str(kernel))
    src = generate_c(k, defines or {"N": 1000}, **kw)
    asm = compile_to_assembly(src, choose_compiler(load_machine(machine)))
    return [ln.split()[0] for ln in find_kernel_block(asm, 8).lines]


@needs_gcc
@requires_tool("gcc", "12", "hand-checked gcc 12 assembly")
def test_triad_unaligned_by_default_aligned_on_request():
    """SNB (gcc -march=corei7-avx): without alignment knowledge gcc splits every 32 B access into
    16 B halves (vmovupd xmm + vinsertf128, vextractf128 for the store), as in code whose arrays
    come from malloc or as arguments; --assume-aligned 32 gives full-width aligned accesses."""
    default = _mnemonics(SNB)
    assert default.count("vinsertf128") == 2 and "vextractf128" in default and "vmovupd" in default
    aligned = _mnemonics(SNB, assume_aligned=32)
    assert "vinsertf128" not in aligned and "vextractf128" not in aligned
    assert "vmovapd" in aligned and {"vmulpd", "vaddpd"} <= set(aligned)


@needs_tools
def test_assume_aligned_option_and_cache_key(tmp_path):
    """The option reaches the compiled analysis through the command line, and the per-user cache
    keeps the two programs apart (same kernel, machine and sizes)."""
    base = ["analyze", TRIAD, "-m", SNB, "-D", "N=1000", "-p", "ECM", "--incore", "llvm-mca", "--json"]
    first = _json(*base)["incore"]["compiled"]["block"]
    aligned = _json(*base, "--assume-aligned", "32")["incore"]["compiled"]["block"]
    again = _json(*base)["incore"]["compiled"]["block"]
    assert "vinsertf128" in first and "vinsertf128" not in aligned and "vmovapd" in aligned
    assert again == first


def test_assume_aligned_must_be_a_power_of_two():
    p = run_cli("analyze", TRIAD, "-m", SNB, "-D", "N=1000", "--assume-aligned", "24")
    assert p.returncode == 2 and "--assume-aligned" in p.stderr and p.stderr.count("\n") == 1


@needs_gcc
def test_codegen_output_compiles_and_links_alone(tmp_path):
    p = run_cli("codegen", TRIAD, "-D", "N=100")
    assert p.returncode == 0, p.stderr
    (tmp_path / "k.c").write_text(p.stdout)
    cc = subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", str(tmp_path / "k"), str(tmp_path / "k.c")],
                        capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    assert subprocess.run([str(tmp_path / "k"), "2"], timeout=30).returncode == 0
    p32 = run_cli("codegen", TRIAD, "-D", "N=100", "--assume-aligned", "32")
    assert "__builtin_assume_aligned(a, 32)" in p32.stdout and "__builtin_assume_aligned" not in p.stdout


class _WithSwaps:
    """A parsed kernel plus the ``swaps`` of a ``swap(a, b);`` statement."""

    def __init__(self, kernel, swaps):
        self._k, self.swaps = kernel, swaps

    def __getattr__(self, name):
        return getattr(self._k, name)


@needs_gcc
def test_swaps_become_pointer_exchanges_after_each_call(tmp_path):
    text = ("double a[N], b[N];\n\nfor (int i = 1; i < N - 1; ++i)\n"
            "    b[i] = 0.5 * (a[i - 1] + a[i + 1]);\n")
    (tmp_path / "jacobi.c").write_text(text)
    k, _ = parse_kernel_file(str(tmp_path / "jacobi.c"))
    src = generate_c(_WithSwaps(k, (("a", "b"),)), {"N": 100})
    call = src.index("loopmodel_kernel_call(loopmodel_array_a, loopmodel_array_b);")
    exchange = src.index("{ void *loopmodel_t = loopmodel_array_a; loopmodel_array_a = loopmodel_array_b; "
                         "loopmodel_array_b = loopmodel_t; }")
    assert call < exchange < src.index("if (loopmodel_argc > 1000)")
    assert "\n    swap(a, b);" not in src  # the statement itself is not compiled
    (tmp_path / "k.c").write_text(src)
    cc = subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", str(tmp_path / "k"), str(tmp_path / "k.c")],
                        capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    assert subprocess.run([str(tmp_path / "k"), "3"], timeout=30).returncode == 0


# --- machine files are untrusted: their compiler flags and names are checked -------------------

def _machine_file(tmp_path, compiler: dict, name="evil.yml"):
    data = yaml.safe_load(load_machine_text(SNB))
    data["compiler"] = compiler
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def load_machine_text(name: str) -> str:
    """The YAML text of a built-in machine model."""
    from pathlib import Path

    import loopmodel.machines

    return (Path(loopmodel.machines.__file__).parent / f"{name}.yml").read_text()


@needs_gcc
@pytest.mark.parametrize("incore", ["auto", "llvm-mca"])
def test_malicious_machine_file_runs_nothing(tmp_path, incore):
    marker = tmp_path / "PWNED"
    evil = _machine_file(tmp_path, {"gcc": f"-O3 -march=corei7-avx -wrapper '/bin/sh,-c,touch {marker}'"})
    p = run_cli("analyze", TRIAD, "-m", evil, "-D", "N=1000", "--incore", incore, "--no-cache", cwd=tmp_path)
    assert not marker.exists()
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert str(evil) in p.stderr and "'-wrapper'" in p.stderr and "--trust-machine-flags" in p.stderr


@pytest.mark.parametrize("flags", [
    "-wrapper /bin/sh,-c,id", "-fplugin=./x.so", "-fplugin-arg-x-y=1", "-B/tmp/x", "-B", "-specs=/tmp/x.specs",
    "@/tmp/args", "-fuse-ld=/tmp/ld", "-Wl,-plugin,/tmp/x.so", "-o /tmp/out", "-save-temps=obj", "-save-temps",
    "-Xlinker -plugin", "-Xassembler --defsym", "-Wa,-o,/tmp/x", "-Wp,-imacros,/etc/passwd", "-Xclang -load",
    "-mllvm -x", "-fdump-tree-all=/tmp/x", "-fdump-tree-optimized", "-fprofile-use=/tmp/p", "-fopt-info=x.txt",
    "-I/tmp", "-include /etc/passwd", "-isystem /tmp", "--sysroot=/tmp", "-fpass-plugin=x.so",
    "-fmodules-cache-path=/tmp/m", "-ftime-trace=/tmp/t", "-fsanitize-ignorelist=/tmp/l", "-foffload=nvptx-none",
    "-dumpdir /tmp/", "-fp-model /tmp", "-march=/tmp", "-D/x=1", "-l:/tmp/lib.so", "-x c", "-E", "-M",
])
def test_dangerous_flags_refused(flags):
    with pytest.raises(MachineError) as err:
        check_machine_flags(shlex.split("-O3 " + flags), "evil.yml")
    assert shlex.split(flags)[0] in str(err.value) and str(err.value).startswith("evil.yml: compiler.gcc: ")


def test_link_flags_dropped_before_compiling_are_still_checked(tmp_path):
    """A machine file's -l flags never reach the compiler (loopmodel links what it needs), but
    one other than -lm is refused, as the allow-list says, not silently left out."""
    from loopmodel.compiled.compile import choose_compiler
    machine = load_machine(str(_machine_file(tmp_path, {"gcc": "-O3 -lcrypt"})))
    with pytest.raises(MachineError, match="'-lcrypt'"):
        choose_compiler(machine, machine_file="evil.yml")
    fine = load_machine(str(_machine_file(tmp_path, {"gcc": "-O3 -lm"}, "fine.yml")))
    if shutil.which("gcc"):
        assert "-lm" not in choose_compiler(fine).flags


def _all_machine_flags():
    out = []
    for name in builtin_names():
        out += [(name, k, v) for k, v in load_machine(name).compiler.items()]
    if REFERENCE_MACHINES.is_dir():
        for path in sorted(REFERENCE_MACHINES.glob("*.yml")):
            out += [(path.name, k, v) for k, v in load_machine(str(path)).compiler.items()]
    return out


def test_every_known_machine_files_flags_are_allowed():
    """The allow-list takes the flags of the built-in models and of the Kerncraft reference files
    (-O3/-Ofast, -march/-mtune/-mcpu/-m<feature>, -f<option>, -D, -x<ISA>, -q<option>, -target...)."""
    seen = _all_machine_flags()
    assert len(seen) > len(builtin_names())
    for origin, key, flags in seen:
        check_compiler_name(key, origin)
        check_machine_flags(shlex.split(flags), origin, key)


@pytest.mark.parametrize("name, ok", [
    ("gcc", True), ("gcc-12", True), ("cc", True), ("clang", True), ("clang-14", True), ("icc", True),
    ("icx", True), ("armclang", True), ("aarch64-linux-gnu-gcc", True), ("x86_64-linux-gnu-gcc-12", True),
    ("/usr/bin/gcc", False), ("./gcc", False), ("sh", False), ("python3", False), ("gcc;id", False),
    ("gcc -wrapper", False), ("../gcc", False),
])
def test_compiler_names(name, ok):
    if ok:
        check_compiler_name(name, "m.yml")
    else:
        with pytest.raises(MachineError, match=f"m.yml: compiler '{name}'"):
            check_compiler_name(name, "m.yml")


@needs_gcc
def test_compiler_path_from_machine_file_refused(tmp_path):
    evil = _machine_file(tmp_path, {"/tmp/bin/gcc": "-O3"})
    p = run_cli("analyze", TRIAD, "-m", evil, "-D", "N=1000", "--incore", "auto", "--no-cache")
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert str(evil) in p.stderr and "'/tmp/bin/gcc'" in p.stderr


def test_machine_compiler_name_is_used_when_allowed():
    m = load_machine(SNB)
    import dataclasses

    m12 = dataclasses.replace(m, compiler={"icc": "-O3 -xAVX", "gcc-12": "-O2 -march=corei7-avx"})
    s = resolve_compiler(m12)
    assert (s.command, s.flags, s.machine_key, s.command_from_machine) == \
        ("gcc-12", ("-O2", "-march=corei7-avx"), "gcc-12", True)


@needs_gcc
def test_command_line_flags_and_opt_in_are_trusted(tmp_path):
    """--compiler-flags replaces the machine file's flags (they are then not used, so not checked);
    --trust-machine-flags takes a flag outside the allow-list (here a harmless one)."""
    odd = _machine_file(tmp_path, {"gcc": "-O3 -march=corei7-avx -Xpreprocessor -DLOOPMODEL_TEST=1"}, "odd.yml")
    base = ["analyze", TRIAD, "-m", odd, "-D", "N=1000", "-p", "ECM", "--incore", "llvm-mca", "--no-cache"]
    refused = run_cli(*base)
    assert refused.returncode == 2 and "'-Xpreprocessor'" in refused.stderr
    m = load_machine(str(odd))
    assert choose_compiler(m, flags="-O3 -march=corei7-avx").flags == ("-O3", "-march=corei7-avx")
    assert "-Xpreprocessor" in choose_compiler(m, trust_machine=True).flags
    if find_llvm_mca() is not None:
        assert run_cli(*base, "--trust-machine-flags").returncode == 0
        assert run_cli(*base, "--compiler-flags=-O3 -march=corei7-avx").returncode == 0


def test_analytic_model_runs_no_compiler_and_needs_no_trust(tmp_path):
    """With --incore analytic nothing is compiled: the machine file's flags are only read (for the
    reassociation assumption), so the analysis works whatever they contain."""
    evil = _machine_file(tmp_path, {"gcc": "-O3 -wrapper /bin/sh,-c,false -ffast-math"})
    d = _json("analyze", DOT, "-m", evil, "-D", "N=1000", "--incore", "analytic", "--json")
    assert d["incore"]["reassociation"]["assumed"] is True
