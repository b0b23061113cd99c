"""What a warm analysis reads back or computes a faster way gives what the slow way gives: the
parsed kernel from the per-user cache, the balanced port table from the cache, the machine
model's bounds without annotated_types, the source digest walked with ``os.scandir``, the
versioned llvm-mca found without a glob pattern. A cache entry is checked against the value
recomputed for the same inputs, and after other inputs (a stale entry would show there)."""
from __future__ import annotations

import dataclasses
import glob
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Optional

import annotated_types as at
import pydantic
import pytest
from hypothesis import given, settings, strategies as st

from helpers import IVB, KERNELS, ROOT, SKX, SNB

from loopmodel import cache
from loopmodel.compiled import incore as incore_module
from loopmodel.compiled.incore import CompiledInCore, balanced_ports, effective_ports, port_table
from loopmodel.compiled.llvm_mca import find_llvm_mca
from loopmodel.compiled.ports import InstrPressure
from loopmodel.fileio import kernel_file
from loopmodel.fileio.kernel_yaml import kernel_from_text
from loopmodel.fileio.machine_files import load_machine
from loopmodel.machine import fields as fx

EXAMPLES = sorted(str(p) for p in KERNELS.iterdir() if p.suffix in (".c", ".yml"))


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_cached_kernel_is_the_kernel_parsed_again(fresh_cache, monkeypatch):
    for path in EXAMPLES:
        parsed = kernel_from_text(Path(path).read_text(), path)
        assert kernel_file.load_kernel(path) == parsed  # a miss: parsed and stored
    monkeypatch.setattr(kernel_file, "_front_end", lambda: pytest.fail("parsed again, not read from the cache"))
    for path in EXAMPLES:
        assert kernel_file.load_kernel(path) == kernel_from_text(Path(path).read_text(), path)


def test_a_changed_kernel_file_is_parsed_again(fresh_cache, tmp_path):
    path = tmp_path / "k.c"
    text = (KERNELS / "daxpy.c").read_text()
    path.write_text(text)
    before = kernel_file.load_kernel(str(path))
    path.write_text(text.replace("a * x[i] + y[i];", "a * x[i] + y[i] * y[i];"))
    after = kernel_file.load_kernel(str(path))
    assert after != before and after == kernel_from_text(path.read_text(), str(path))
    assert kernel_file.load_kernel(str(path), use_cache=False) == after


def test_no_cache_reads_and_writes_no_kernel_entry(fresh_cache):
    kernel_file.load_kernel(str(KERNELS / "triad.c"), use_cache=False)
    assert not (fresh_cache / kernel_file.KIND).exists()


UNITS = ("SBPort0", "SBPort1", "SBPort5", "SBPort23.0", "SBPort23.1", "SBPort4", "SBDivider")
TEXTS = ("vmovupd (%rax,%rcx), %ymm0", "vaddpd %ymm0, %ymm1, %ymm2", "vmulpd 32(%rdx), %ymm3, %ymm4",
         "vmovupd %ymm2, (%rsi,%rcx)", "addq $32, %rcx", "cmpq %rcx, %r8", "jne .L4", "vdivpd %ymm1, %ymm2, %ymm3")
INSTRUCTION = st.builds(
    InstrPressure, st.sampled_from(TEXTS),
    st.dictionaries(st.sampled_from(UNITS), st.sampled_from([0.5, 1.0, 0.33, 2.0, 0.0]), min_size=1, max_size=3),
    st.lists(st.sampled_from(UNITS), max_size=3).map(tuple))


def _info(instructions) -> CompiledInCore:
    ports = {}
    for ins in instructions:
        for unit, v in ins.pressure.items():
            name = unit.split(".")[0]
            ports[name] = max(ports.get(name, 0.0), v)
    return CompiledInCore("llvm-mca", "19.1.7", "gcc", "12", ("-O3",), ".L4", "\n".join(i.text for i in instructions),
                          4.0, 32.0, ports, max(ports.values()), max(ports.values()), "", tuple(instructions))


def _machines():
    snb, ivb, skx = load_machine(SNB), load_machine(IVB), load_machine(SKX)
    lists = dict(snb.in_core.analyzer_ports)
    fewer = {**lists, "llvm-mca": {**lists["llvm-mca"], "overlapping": ["SBPort0", "SBPort5", "SBDivider"]}}
    none = {k: v for k, v in lists.items() if k != "llvm-mca"}
    other = [dataclasses.replace(snb, in_core=dataclasses.replace(snb.in_core, analyzer_ports=p)) for p in (fewer, none)]
    return [snb, ivb, skx, *other]


MACHINES = _machines()


@settings(max_examples=150, deadline=None)
@given(st.lists(INSTRUCTION, min_size=1, max_size=8), st.sampled_from(range(len(MACHINES))))
def test_the_cached_port_balancing_is_the_balancing_recomputed(tmp_path_factory, instructions, m):
    """One cache for all examples: an entry answered for inputs it was not computed for would
    differ from the recomputed balancing here."""
    before = os.environ.get("LOOPMODEL_CACHE_DIR")
    os.environ["LOOPMODEL_CACHE_DIR"] = str(tmp_path_factory.getbasetemp() / "ports-cache")
    try:
        info, machine = _info(instructions), MACHINES[m]
        expected = effective_ports(info, machine)
        assert balanced_ports(info, machine) == expected  # stored (or read)
        assert balanced_ports(info, machine) == expected  # read
        assert port_table(info, machine, 8.0, use_cache=True) == port_table(info, machine, 8.0)
    finally:
        os.environ["LOOPMODEL_CACHE_DIR"] = before


def test_the_port_balancing_is_read_from_the_cache(fresh_cache, monkeypatch):
    info = _info([InstrPressure(TEXTS[1], {"SBPort1": 1.0}, ("SBPort1", "SBPort5")),
                  InstrPressure(TEXTS[4], {"SBPort1": 1.0}, ("SBPort0", "SBPort1", "SBPort5"))])
    first = balanced_ports(info, MACHINES[0])
    monkeypatch.setattr(incore_module, "effective_ports", lambda *a: pytest.fail("balanced again"))
    assert balanced_ports(info, MACHINES[0]) == first
    with pytest.raises(pytest.fail.Exception):
        balanced_ports(info, MACHINES[3])  # other port lists: another entry


BOUNDS = [(float, (fx.Ge(0), fx.Le(64)), (at.Ge(0), at.Le(64))),
          (Optional[Annotated[float, fx.Ge(0), fx.Le(4096)]], (), ()),
          (int, (fx.Gt(0), fx.Le(2 ** 40)), (at.Gt(0), at.Le(2 ** 40))),
          (int, (fx.Ge(0), fx.Le(64)), (at.Ge(0), at.Le(64))),
          (float, (fx.Gt(0), fx.Le(0.75)), (at.Gt(0), at.Le(0.75)))]


def _adapter(tp, marks):
    return pydantic.TypeAdapter(Annotated[tp, *marks] if marks else tp)


@pytest.mark.parametrize("tp, ours, theirs", BOUNDS)
@given(value=st.one_of(st.integers(-5, 2 ** 41), st.floats(allow_nan=True), st.text(max_size=3), st.none()))
@settings(max_examples=60, deadline=None)
def test_the_model_bounds_validate_as_annotated_types_does(tp, ours, theirs, value):
    if not ours:  # the Optional[...] spelling of machine/model.py: compare with annotated_types' own
        tp_theirs = Optional[Annotated[float, at.Ge(0), at.Le(4096)]]
        a, b = _adapter(tp, ()), _adapter(tp_theirs, ())
    else:
        a, b = _adapter(tp, ours), _adapter(tp, theirs)

    def outcome(adapter):
        try:
            return "ok", adapter.validate_python(value)
        except pydantic.ValidationError as exc:
            return "error", [(e["type"], e["msg"], e["loc"]) for e in exc.errors()]
    assert outcome(a) == outcome(b)


def test_the_source_digest_is_the_digest_of_every_source_file_in_path_order():
    """:func:`loopmodel.cache.code_digest` (folders walked with ``os.scandir``) is the SHA-256
    its definition states: over every ``.py`` and ``.c`` file, relative path and bytes, in the
    order of their paths (as ``Path.rglob`` sorted lists them)."""
    for root in (cache.PACKAGE_ROOT, ROOT / "tests"):
        h = hashlib.sha256()
        for p in sorted(q for q in Path(root).rglob("*") if q.suffix in (".py", ".c") and q.is_file()):
            for b in (p.relative_to(root).as_posix().encode(), p.read_bytes()):
                h.update(len(b).to_bytes(8, "little"))
                h.update(b)
        assert cache._digest_of(str(root)) == h.digest()


def test_versioned_llvm_mca_names_are_what_the_glob_finds(tmp_path, monkeypatch):
    from loopmodel.compiled import llvm_mca

    for name in ("llvm-mca-14", "llvm-mca-19", "llvm-mca-", "llvm-mca-x1", "llvm-mca-19.1", "llvm-mcaa-3",
                 "xllvm-mca-5", "llvm-mca-٣"):
        (tmp_path / name).write_text("")
    (tmp_path / "llvm-mca-17").mkdir()
    for folder in (str(tmp_path), "", "/nonexistent", str(tmp_path / "llvm-mca-14"), *os.get_exec_path()):
        assert sorted(llvm_mca._versioned_names(folder)) == sorted(glob.glob(os.path.join(folder, "llvm-mca-[0-9]*")))
    for name in ("llvm-mca-14", "llvm-mca-19", "llvm-mca-19.1"):
        os.chmod(tmp_path / name, 0o755)
    monkeypatch.delenv(llvm_mca.ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_llvm_mca() == str(tmp_path / "llvm-mca-19")
    (tmp_path / "link").symlink_to(tmp_path)  # the folder again under other names: listed once, the same choice
    for path in (f"{tmp_path}/link:{tmp_path}", f"{tmp_path}:{tmp_path}/link:{tmp_path}"):
        monkeypatch.setenv("PATH", path)
        assert find_llvm_mca() == max(str(tmp_path / "llvm-mca-19"), str(tmp_path / "link" / "llvm-mca-19"))


WARM = ["analyze", str(KERNELS / "3d-long-range.c"), "-m", IVB, "-D", "M=130", "-D", "N=1015"]
#: what a warm analysis does not import: the parsers and validators of the files it reads back
#: from the cache, rich (plain text), the cache simulator, the plot, what only a probe needs, what
#: only starting a process or asking platform needs
NOT_WARM = ("rich", "pydantic", "pydantic_core", "annotated_types", "pycparser", "yaml", "importlib.metadata",
            "subprocess", "resource", "platform", "loopmodel.fileio.c_kernel", "loopmodel.fileio.kernel_yaml",
            "loopmodel.fileio.machine_schema",
            "loopmodel.fileio.kerncraft_machine", "loopmodel.cachesim", "loopmodel.predictors.simulation",
            "loopmodel.report.ecm_plot")


@pytest.mark.parametrize("extra, also_not", [((), ()), (("--json",), ()),
                                             (("--incore", "analytic"), ("loopmodel.compiled.incore",))])
def test_a_warm_analysis_imports_no_parser_validator_or_rich(tmp_path, extra, also_not):
    code = ("import sys; from loopmodel.cli import main; rc = main(sys.argv[1:]); "
            "sys.stderr.write(repr(sorted(sys.modules)))")
    env = {**os.environ, "LOOPMODEL_CACHE_DIR": str(tmp_path)}
    for _ in range(2):  # the first run fills the cache
        proc = subprocess.run([sys.executable, "-c", code, *WARM, *extra], capture_output=True, text=True, env=env,
                              cwd=ROOT, timeout=300)
        assert proc.returncode == 0, proc.stderr
    loaded = eval(proc.stderr)  # noqa: S307 - our own repr of a list of str
    at_start = eval(subprocess.run([sys.executable, "-c", "import sys; print(repr(sorted(sys.modules)))"],  # noqa: S307
                                   capture_output=True, text=True, env=env, timeout=60, check=True).stdout)
    bad = [m for m in loaded if any(m == n or m.startswith(n + ".") for n in NOT_WARM + also_not)
           and m not in at_start]  # what the interpreter's start (site, .pth files) loads is not the analysis's
    assert bad == [], bad
    if shutil.which("gcc") and find_llvm_mca() and not extra:
        assert "loopmodel.compiled.incore" in loaded  # the compiled analysis ran (from the cache)
