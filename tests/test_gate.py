"""What may reach a subprocess (:mod:`loopmodel.gate`): one module starts processes, data
cannot choose what runs, and no data file can make loopmodel run a program of its own."""
from __future__ import annotations

import ast
import shlex
import shutil
import sys

import pytest
import yaml

from helpers import KERNELS, ROOT, run_cli

from loopmodel import gate, toolchain
from loopmodel.errors import MachineError, ToolError

PACKAGE = ROOT / "src" / "loopmodel"
#: calls that start a process (module attribute names)
_SPAWNING = {("os", n) for n in ("system", "popen", "fork", "forkpty", "execv", "execve", "execvp", "execvpe",
                                   "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp",
                                   "spawnvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe", "posix_spawn",
                                   "posix_spawnp", "startfile")}
_PROCESS_MODULES = {"subprocess", "pty", "multiprocessing", "pickle", "marshal", "shelve", "dill", "cloudpickle"}
#: the modules allowed to use one of :data:`_PROCESS_MODULES`, and why
_ALLOWED = {"subprocess": {"gate.py"},            # the one place that starts processes
            "pickle": {"cache.py"}}               # the per-user cache, verified entries in a private folder


def _python_files():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _imports(tree) -> set:
    """Top-level names of the modules imported: import statements and modules loaded by name
    (``importlib.import_module("subprocess")``, as gate.py loads it)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "import_module" and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            out.add(node.args[0].value.split(".")[0])
    return out


def _spawning_calls(tree) -> set:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and (node.value.id, node.attr) in _SPAWNING:
            out.add(f"{node.value.id}.{node.attr}")
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            out |= {f"os.{a.name}" for a in node.names if ("os", a.name) in _SPAWNING}
    return out


def test_only_the_gate_starts_processes():
    """Every module of the package, parsed: subprocess (and pty, multiprocessing) only in
    gate.py, pickle only in cache.py, and no os.system/popen/exec*/spawn*/fork anywhere."""
    seen = []
    for path in _python_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        rel = path.relative_to(PACKAGE).as_posix()
        for module in _imports(tree) & _PROCESS_MODULES:
            if rel not in _ALLOWED.get(module, set()):
                seen.append(f"{rel} imports {module}")
        seen += [f"{rel} calls {c}" for c in sorted(_spawning_calls(tree))]
    assert seen == []
    assert len(_python_files()) > 100  # the scan saw the package


def test_the_scan_finds_a_bypass(tmp_path):
    """The scan itself: a module that imports subprocess or calls os.system is found."""
    for text in ("import subprocess\n", "from subprocess import run\n", "import os\nos.system('x')\n",
                 "from os import execv\n", "import pickle\n",
                 "import importlib\nimportlib.import_module('subprocess')\n"):
        tree = ast.parse(text)
        assert (_imports(tree) & _PROCESS_MODULES) or _spawning_calls(tree), text


@pytest.mark.parametrize("flag, ok", [
    ("-DNDEBUG", True), ("-D_POSIX_C_SOURCE=200809L", True), ("-DLIKWID_PERFMON", True), ("-UNDEBUG", True),
    ("-DN=1000", True), ("-DVALUE=1.5e-3", True),
    ("-Dmain=main(int c,char**v){system(\"x\");return 0;}int orig_main", False),
    ("-Dmain=foo", False), ("-Dprintf=system", False), ("-DX=a b", False), ("-DX='1'", False),
    ("-DX=f(1)", False), ("-DX={", False), ("-DX=1;", False), ("-DX=\"s\"", False), ("-D/x=1", False),
    ("-D", False), ("-DX=$(id)", False), ("-Umain", False),
])
def test_macro_flags_from_data(flag, ok):
    """-D/-U from data: macro-style names (capitals, digits, _) and plain values only."""
    if ok:
        gate.check_flags([flag], "m.yml", "compiler.gcc")
    else:
        with pytest.raises(MachineError, match="^m.yml: compiler.gcc: compiler flag"):
            gate.check_flags([flag], "m.yml", "compiler.gcc")


#: -f options and linking flags that data gave and compilers took: the compiler then read the
#: kernel in another charset than loopmodel's parser, added code to the program, ran code or linked
ATTACK_FLAGS = [
    "-finput-charset=ISO-2022-JP", "-fexec-charset=EBCDIC-US", "-fwide-exec-charset=UTF-16", "-fextended-identifiers",
    "-fsanitize=address", "-fsanitize=undefined", "-fno-sanitize-recover=all", "-finstrument-functions",
    "-finstrument-functions-exclude-file-list=x", "-fpatchable-function-entry=16", "-fcf-protection=full",
    "-fself-test=/tmp", "-fresolution=/tmp/r", "-fdirectives-only", "-fpreprocessed", "-fworking-directory",
    "-fdebug-prefix-map=/a=/b", "-fplugin=./x.so", "-fprofile-generate", "-fprofile-arcs", "-fdump-tree-all",
    "-flto", "-flto=auto", "-fuse-linker-plugin", "-fuse-ld=bfd", "-fopenmp=libomp", "-fcallgraph-info",
    "-fstack-usage", "-fno-stack-protector-strong", "-fnonexistent-option", "-ftrapv",
    "-lm2", "-lfoo", "-l:libx.so", "-static", "-nostdlib", "-nodefaultlibs", "-pie", "-no-pie",
    "-falign-loops=x", "-falign-loops=99999", "-falign-loops=1:2:3:4:5", "-fno-align-loops=4",
    "-fvect-cost-model=foo", "-fvect-cost-model", "-fno-vect-cost-model=cheap", "-ftree-parallelize-loops",
    "-ftree-parallelize-loops=-1", "-ftree-parallelize-loops=four", "-ffp-contract=maybe",
    "-fexcess-precision=slow", "-fdenormal-fp-math=dynamic", "-funroll-loops=4", "-fp-model=/tmp",
]

#: what a performance engineer gives: loop, vectorisation, math, alignment and code-generation -f
#: options (with their no- forms and typed values) and the flags of the Kerncraft machine files
ALLOWED_FLAGS = [
    "-funroll-loops", "-fno-unroll-loops", "-funroll-all-loops", "-fpeel-loops", "-ftree-vectorize",
    "-fno-tree-vectorize", "-fno-tree-slp-vectorize", "-fvectorize", "-fno-slp-vectorize",
    "-fvect-cost-model=unlimited", "-fvect-cost-model=very-cheap", "-fsimd-cost-model=dynamic",
    "-fno-tree-loop-distribute-patterns", "-floop-interchange", "-fgraphite-identity", "-floop-nest-optimize",
    "-ftree-parallelize-loops=4", "-fprefetch-loop-arrays", "-fno-ivopts", "-fgcse-after-reload",
    "-fschedule-insns", "-fno-schedule-insns2", "-fsched-pressure", "-fmodulo-sched", "-fomit-frame-pointer",
    "-fno-strict-aliasing", "-fwrapv", "-fno-inline", "-finline-functions", "-fipa-cp-clone", "-fno-builtin",
    "-fno-common", "-fPIC", "-fno-pie", "-fno-plt", "-fno-alias", "-fno-fnalias", "-fargument-noalias",
    "-ffreestanding", "-fopenmp", "-fopenmp-simd", "-fiopenmp", "-fverbose-asm", "-fno-asynchronous-unwind-tables",
    "-fstack-protector-strong", "-fno-stack-protector", "-fexpensive-optimizations", "-fcx-limited-range",
    "-ffast-math", "-fno-fast-math", "-fno-math-errno", "-funsafe-math-optimizations", "-fassociative-math",
    "-freciprocal-math", "-ffinite-math-only", "-fno-signed-zeros", "-fno-trapping-math", "-frounding-math",
    "-fsignaling-nans", "-ffp-contract=fast", "-ffp-contract=off", "-fexcess-precision=16",
    "-ffp-model=precise", "-fdenormal-fp-math=preserve-sign", "-falign-loops", "-fno-align-jumps",
    "-falign-loops=32", "-falign-loops=32:16", "-falign-functions=64:32:8:4", "-falign-labels=0",
    "-O3", "-Ofast", "-fno-alias", "-xCORE-AVX512", "-xHost", "-qopenmp", "-qopt-zmm-usage=high",
    "-nolib-inline", "-mavx2", "-D_POSIX_C_SOURCE=200809L", "-msve-vector-bits=512", "-march=armv8.2-a+sve",
    "-mcpu=thunderx2t99", "-lm", "-fp-model=precise", "-fp-model=fast=2",
]


@pytest.mark.parametrize("flag", ATTACK_FLAGS)
def test_f_options_and_linking_flags_off_the_allow_list_are_refused(flag):
    assert not gate.flag_allowed(flag)
    with pytest.raises(MachineError) as err:
        gate.check_flags(["-O3", flag], "m.yml", "compiler.gcc")
    message = str(err.value)
    assert message.startswith(f"m.yml: compiler.gcc: compiler flag '{flag}' is not allowed") and "\n" not in message


@pytest.mark.parametrize("flag", ALLOWED_FLAGS)
def test_the_flags_a_performance_engineer_sets_are_allowed(flag):
    assert gate.flag_allowed(flag)
    gate.check_flags(["-O3", flag], "m.yml", "compiler.gcc")


def test_f_options_are_data_with_typed_values():
    """The -f allow-list is a table (option -> value kind); each kind takes its forms only."""
    kinds = set(gate.F_OPTIONS.values())
    assert kinds <= {gate.SWITCH, gate.ON, gate.INT, gate.ALIGN} | {k for k in kinds if isinstance(k, frozenset)}
    for name, kind in gate.F_OPTIONS.items():
        assert gate.flag_allowed(f"-f{name}") == (kind in (gate.SWITCH, gate.ON, gate.ALIGN)), name
        assert gate.flag_allowed(f"-fno-{name}") == (kind in (gate.SWITCH, gate.ALIGN)), name
        if isinstance(kind, frozenset):
            assert all(gate.flag_allowed(f"-f{name}={v}") for v in kind) and not gate.flag_allowed(f"-f{name}=x")
    assert gate.flag_allowed("-f" + "lto") is False and "lto" not in gate.F_OPTIONS


def test_command_line_flags_are_not_checked(tmp_path):
    """--compiler-flags are the user's own: trusted, passed as typed (here an -f option off the
    allow-list); only a data file's flags are checked."""
    from loopmodel.compiled.compile import choose_compiler
    from loopmodel.fileio.machine_files import load_machine

    machine = load_machine("SkylakeSP_Gold-6148")
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    flags = "-O3 -finput-charset=UTF-8 -fsanitize=address"
    assert choose_compiler(machine, "gcc", flags).flags == tuple(flags.split())


def test_macro_naming_a_program_identifier_is_refused():
    src = "#define N 100\nint main(void) { double a[N]; return 0; }\n"
    gate.check_macros_unused(["-O2", "-DNDEBUG", "-D_GNU_SOURCE"], src, "the program")
    for flag in ("-DN=5", "-Dmain=x", "-Umain", "-Ddouble=float"):
        with pytest.raises(ToolError, match="is a name the program uses"):
            gate.check_macros_unused([flag], src, "the program")


def test_program_environment_is_plain_words():
    env = gate.program_env({}, OMP_NUM_THREADS=4, OMP_PLACES="{0},{2}", OMP_PROC_BIND=None)
    assert env == {"OMP_NUM_THREADS": "4", "OMP_PLACES": "{0},{2}"}
    with pytest.raises(ValueError):
        gate.program_env({}, OMP_PLACES="0;id")
    with pytest.raises(ValueError):
        gate.program_env({}, LD_PRELOAD="x.so")


def test_only_programs_loopmodel_built_are_run(tmp_path):
    with pytest.raises(ToolError, match="not a program loopmodel built"):
        toolchain.run_program(["/bin/sh", "-c", "true"], "a shell", 10)
    exe = toolchain.compile_c("int main(void) { return 0; }\n", "gcc", ["-O1"], "executable", "ok", str(tmp_path))
    assert toolchain.run_program([exe], "the program", 30) == ""


def test_tools_are_known_tools(tmp_path):
    script = tmp_path / "gcc-wrapper"
    script.write_text("#!/bin/sh\ntouch \"$0.ran\"\n")
    script.chmod(0o755)
    with pytest.raises(ToolError, match="not a tool loopmodel runs"):
        gate.run_tool(str(script), ["--version"], "a script", 10)
    with pytest.raises(ToolError, match="not a known compiler name"):
        toolchain.compile_c("int main(void){return 0;}\n", str(script), [], "assembly", "k")
    assert not (tmp_path / "gcc-wrapper.ran").exists()


# ---------------------------------------------------------------- resource limits of the children

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")


@needs_gcc
def test_a_compiler_reading_dev_zero_stops_at_its_memory_limit(tmp_path, monkeypatch):
    """A kernel that makes cc1 read /dev/zero grew it to GiBs; the tool's address-space limit
    (lowered here to 256 MiB) stops it within a second, a one-line ToolError."""
    monkeypatch.setattr(gate, "TOOL_MEMORY_LIMIT_B", 256 << 20)
    source = '#include "/dev/zero"\n'
    (tmp_path / "zero.c").write_text(source)
    with pytest.raises(ToolError) as err:
        gate.compile_c(shutil.which("gcc"), ["-S", "-o", "zero.s", "zero.c"], source, str(tmp_path), 120,
                       "gcc compiling zero.c")
    assert str(err.value) == "gcc compiling zero.c ran out of its 256 MiB memory limit"


def test_a_tool_past_its_cpu_limit_is_stopped(tmp_path, monkeypatch):
    """A tool that keeps computing is stopped by its CPU-time limit (lowered here to 1 s), long
    before the wall-clock timeout; a shell loop burns CPU without memory."""
    spin = tmp_path / "spin"
    spin.write_text("#!/bin/sh\nwhile :; do :; done\n")
    spin.chmod(0o755)
    monkeypatch.setattr(gate, "_CHOSEN", set())
    monkeypatch.setattr(gate, "CPU_LIMIT_S", 1)
    gate.allow_compiler(str(spin))
    with pytest.raises(ToolError, match=r"^a spinning tool exceeded its CPU-time limit \(1 s\)$"):
        gate.run_tool(str(spin), [], "a spinning tool", 300)


@needs_gcc
def test_programs_loopmodel_built_get_no_memory_limit(tmp_path, monkeypatch):
    """A benchmark may allocate many GiB: run_program limits CPU time and core files only (the
    tool's memory limit, lowered to 256 MiB, does not reach it; the program asks for 1 GiB)."""
    monkeypatch.setattr(gate, "TOOL_MEMORY_LIMIT_B", 256 << 20)
    source = ("#include <stdlib.h>\nint main(void) { char *volatile p = malloc((size_t)1 << 30); "
              "return p == NULL; }\n")
    exe = toolchain.compile_c(source, "gcc", ["-O0"], "executable", "big", str(tmp_path))
    assert gate.run_program([exe], "the program", 60).returncode == 0
    assert set(gate._limits("program", 60)) == {"RLIMIT_CPU", "RLIMIT_CORE"}


def test_limits_follow_the_timeout_and_need_resource(monkeypatch):
    """CPU seconds: the timeout rounded up, +1 (a program's on every CPU it may use); without the
    resource module (not Unix) a child runs with no limits set."""
    tool = gate._limits("tool", 29.5)
    assert tool == {"RLIMIT_CORE": 0, "RLIMIT_CPU": 31, "RLIMIT_AS": gate.TOOL_MEMORY_LIMIT_B,
                    "RLIMIT_FSIZE": gate.TOOL_FILE_LIMIT_B}
    assert gate._limits("program", 29.5)["RLIMIT_CPU"] == 31 * gate._cpus()
    assert callable(gate._preexec(tool)) and gate._preexec({}) is None
    monkeypatch.setitem(sys.modules, "resource", None)
    assert gate._preexec(tool) is None


def test_a_failure_that_is_no_limit_is_the_callers_error():
    """Only a limit's signature becomes the gate's error: a compiler's own error passes through."""
    p = type("P", (), {"returncode": 1, "stderr": "k.c:3:5: error: 'x' undeclared\n    3 | out of memory\n"})()
    assert gate._stopped_by_limit(p, "gcc", gate._limits("tool", 10)) is None
    p.stderr = "gcc: fatal error: CPU time limit exceeded signal terminated program cc1\n"
    assert gate._stopped_by_limit(p, "gcc", gate._limits("tool", 10)) == "gcc exceeded its CPU-time limit (11 s)"
    p.returncode, p.stderr = -9, ""
    assert gate._stopped_by_limit(p, "the program", gate._limits("program", 10)) is None  # toolchain says it


# ---------------------------------------------------------------- data that tried to run a program

def _machine(tmp_path, compiler: dict) -> str:
    data = yaml.safe_load((PACKAGE / "machines" / "SkylakeSP_Gold-6148.yml").read_text())
    data["compiler"] = compiler
    path = tmp_path / "evil.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


@pytest.mark.parametrize("command", [
    ("bench", "--repeat", "1"),
    ("validate", "--repeat", "1"),
    ("roofline",),
])
def test_machine_file_macro_cannot_replace_main(tmp_path, command):
    """A machine file whose -D redefines main (with a value that calls system()) ran that
    program under bench, validate and roofline; now the flag is refused before compiling."""
    marker = tmp_path / "MARKER"
    inject = f'-Dmain=main(int c,char**v){{system("touch {marker}");return 0;}}int orig_main'
    machine = _machine(tmp_path, {"gcc": f"-O2 {shlex.quote(inject)}"})
    name, *rest = command
    r = run_cli(name, str(KERNELS / "daxpy.c"), "-m", machine, "-D", "N=1000", *rest, timeout=120)
    assert r.returncode == 2 and not marker.exists()
    assert r.stderr.strip().count("\n") == 0 and "compiler flag '-Dmain=" in r.stderr, r.stderr


def test_kernel_text_reaching_the_compiler_is_what_the_parser_read(tmp_path):
    """Line splices and trigraphs make the compiler read other code than the parser; both are
    refused, with the line."""
    splice = tmp_path / "splice.c"
    splice.write_text('double a[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = 1.0; /* *\\\n/ a[i] = 2.0; /* */\n')
    tri = tmp_path / "tri.c"
    tri.write_text("double a[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = 1.0; // ??/\n")
    for path, line, what in ((splice, 3, "line splice"), (tri, 3, "trigraph")):
        r = run_cli("codegen", str(path), "-D", "N=10")
        assert r.returncode == 2 and f"{path.name}:{line}" in r.stderr and what in r.stderr, r.stderr


def test_generated_program_comment_cannot_be_closed_by_a_file_name(tmp_path):
    folder = tmp_path / "x*"
    folder.mkdir()
    kernel = folder / "k.c"
    kernel.write_text((KERNELS / "daxpy.c").read_text())
    r = run_cli("codegen", str(kernel), "-D", "N=10")
    assert r.returncode == 0, r.stderr
    first_comment = r.stdout[:r.stdout.index("*/") + 2]
    assert "k.c" in first_comment and "x*/" not in r.stdout


def test_study_compiler_options_are_data(tmp_path):
    """A study's compiler and flags are checked like a machine file's, a study cannot grant
    trust, and the person running the sweep can (--trust-machine-flags)."""
    from loopmodel.workflows.study import read_study

    kernel = KERNELS / "daxpy.c"
    cases = {"compiler_flags: ['-O2 -wrapper /bin/sh,-c,id']": "compiler flag '-wrapper' is not allowed",
             f"compiler: ['{tmp_path}/cc.sh']": "is not a known compiler name",
             "trust_machine_flags: [true]": "a study file cannot grant trust"}
    for i, (option, message) in enumerate(cases.items()):
        study = tmp_path / f"s{i}.yml"
        study.write_text(f"kernels: [{kernel}]\nmachines: [SkylakeSP_Gold-6148]\ndefines: {{N: 100}}\n"
                         f"options: {{{option}, incore: [llvm-mca]}}\n")
        r = run_cli("sweep", str(study), "--workers", "1", "--no-progress", timeout=120)
        assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1, r.stderr
    ok = tmp_path / "ok.yml"
    ok.write_text(f"kernels: [{kernel}]\nmachines: [SkylakeSP_Gold-6148]\ndefines: {{N: 100}}\n")
    assert read_study(str(ok), trust_machine_flags=True).settings["trust_machine_flags"] == (True,)
    assert "trust_machine_flags" not in read_study(str(ok)).options
