"""The one reader of user files (:mod:`loopmodel.fileio.reader`): bounded, regular files only,
UTF-8, YAML without duplicate keys or exploding aliases; and every reader of the package uses it."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from helpers import KERNELS, run_cli

from loopmodel.errors import KernelError, LoopmodelError, MachineError
from loopmodel.fileio import reader, yaml_reader

DAXPY = str(KERNELS / "daxpy.c")
SKL = "SkylakeSP_Gold-6148"


def test_regular_files_only(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    for path, why in (("/dev/zero", "not a regular file"), (fifo, "not a regular file"), (tmp_path, "a folder"),
                      (tmp_path / "missing", "no such file")):
        with pytest.raises(KernelError, match=why):
            reader.read_text(path, "kernel file", KernelError)
    assert time.monotonic() - t0 < 5  # opening a FIFO with no writer does not block


def test_size_bound(tmp_path):
    big = tmp_path / "big.c"
    big.write_bytes(b"x" * 2001)
    with pytest.raises(KernelError, match="larger than"):
        reader.read_text(big, "kernel file", KernelError, limit=2000)
    assert len(reader.read_text(big, "kernel file", KernelError, limit=2001)) == 2001


def test_text_only(tmp_path):
    bad = tmp_path / "k.c"
    bad.write_bytes(b"double a[N];\n\xff\n")
    with pytest.raises(KernelError, match=r"k.c:2: kernel file is not UTF-8 text \(byte 0xff\)"):
        reader.read_text(bad, "kernel file", KernelError)
    bad.write_bytes(b"double a[N];\n\x00\n")
    with pytest.raises(KernelError, match="NUL"):
        reader.read_text(bad, "kernel file", KernelError)


@pytest.mark.parametrize("text, line", [
    ("a: 1\nb: 2\na: 3\n", 3),
    ("top:\n  x: 1\n  x: 1\n", 3),
    ("- {k: 1, k: 2}\n", 1),
])
def test_duplicate_keys(text, line):
    with pytest.raises(MachineError, match=rf"^m.yml:{line}:\d+: not valid YAML: key '\w+' is given twice"):
        yaml_reader.load_yaml(text, "m.yml", MachineError)


def test_merge_keys_may_be_overridden():
    assert yaml_reader.load_yaml("base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  x: 3\n", "m.yml") == {
        "base": {"x": 1, "y": 2}, "d": {"x": 3, "y": 2}}


def test_alias_bomb_and_recursion():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))
    t0 = time.monotonic()
    with pytest.raises(LoopmodelError, match="more than 1000000 nodes"):
        yaml_reader.load_yaml(bomb, "b.yml")
    assert time.monotonic() - t0 < 5
    with pytest.raises(LoopmodelError, match="recursive alias"):
        yaml_reader.load_yaml("a: &a [1, *a]\n", "r.yml")


def test_no_python_objects():
    with pytest.raises(LoopmodelError, match="not valid YAML"):
        yaml_reader.load_yaml("!!python/object/apply:os.system ['true']\n", "p.yml")
    assert yaml_reader.load_yaml("x: !!python/tuple [1, 2]\n", "k.yml", tuples=True) == {"x": [1, 2]}


@pytest.mark.parametrize("command", [
    ["analyze", "/dev/zero", "-m", SKL, "-D", "N=1000"],
    ["bench", "/dev/zero", "-D", "N=1000"],
    ["codegen", "/dev/zero", "-D", "N=1000"],
    ["sweep", "/dev/zero", "--workers", "1"],
    ["app", "/dev/zero", "-m", SKL],
    ["analyze", DAXPY, "-m", "/dev/zero", "-D", "N=1000"],
])
def test_endless_files_are_one_line_errors(command):
    r = run_cli(*command, timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "/dev/zero: cannot read" in r.stderr and "not a regular file" in r.stderr


def _study(tmp_path, body: str) -> str:
    path = tmp_path / "s.yml"
    path.write_text(body)
    return str(path)


def test_duplicate_keys_in_every_yaml_loopmodel_reads(tmp_path):
    """Study, application, machine, kernel description and OpenMP program: a key given twice
    is one line naming the file and the line."""
    machine = (tmp_path / "m.yml")
    from loopmodel.fileio.machine_files import _builtin_path
    text = Path(_builtin_path(SKL)).read_text()
    machine.write_text(text + "clock: 3.0 GHz\n")
    study = _study(tmp_path, f"kernels: [{DAXPY}]\nmachines: [{SKL}]\nmachines: [HaswellEP_E5-2695v3]\n"
                             "defines: {N: 1000}\n")
    app = tmp_path / "app.yml"
    app.write_text(f"kernels:\n- {{name: d, file: {DAXPY}, count: 1, count: 2}}\n")
    kyml = tmp_path / "k.yml"
    kyml.write_text((KERNELS / "daxpy.yml").read_text() + "flops: {'+': 1}\n")
    omp = tmp_path / "p.yml"
    omp.write_text("arrays: {x: {length: N, type: double}}\narrays: {}\nphases: []\n")
    for command, name in ((["analyze", DAXPY, "-m", str(machine), "-D", "N=100"], machine),
                          (["sweep", study, "--workers", "1"], study),
                          (["app", str(app), "-m", SKL], app),
                          (["analyze", str(kyml), "-m", SKL, "-D", "N=100"], kyml),
                          (["omp", str(omp), "-m", SKL], omp)):
        r = run_cli(*command, timeout=60)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert f"{name}:" in r.stderr and "is given twice" in r.stderr, r.stderr


def test_every_reader_uses_the_one_reader():
    """No module of the package opens a file for reading except the reader, the cache, the
    probe's system files and the package's own data (an AST scan of open/read_text calls)."""
    import ast

    import loopmodel

    allowed = {"fileio/reader.py", "cache.py", "cachesim/_build.py", "measure/power_probe.py", "measure/stream.py",
               "measure/topology.py", "fileio/host_models.py", "measure/bandwidth.py", "measure/latency.py",
               "toolchain.py",
               "fileio/machine_writer.py"}  # re-reads the text it wrote, to validate it
    root = Path(loopmodel.__file__).parent
    seen = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in ("read_text", "read_bytes", "safe_load", "load") and isinstance(f, ast.Attribute) \
                    and isinstance(f.value, ast.Name) and f.value.id in ("yaml", "json", "pickle"):
                name = f"{f.value.id}.{name}"
            reading = (isinstance(f, ast.Name) and name == "open" and not any(isinstance(a, ast.Constant) and isinstance(a.value, str)
                                                  and any(m in a.value for m in "wax") for a in node.args[1:2])
                       and not any(k.arg == "mode" for k in node.keywords)) \
                or name in ("yaml.safe_load", "yaml.load", "json.load")
            if reading and rel not in allowed:
                seen.append(f"{rel}:{node.lineno} {name}")
    assert seen == []
