"""Every cached result is keyed by the digest of loopmodel's source: a change in the code that
produced it (the assembly parser, an analyzer back-end, ...) is never answered from the cache,
while unchanged code still is."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import KERNELS, SNB

from loopmodel import cache
from loopmodel.compiled.llvm_mca import find_llvm_mca

needs_tools = pytest.mark.skipif(shutil.which("gcc") is None or find_llvm_mca() is None,
                                 reason="gcc and llvm-mca needed")
PACKAGE = Path(cache.__file__).resolve().parent


def _copy_package(tmp_path) -> Path:
    """A copy of the installed package (compiled simulator included) under ``tmp_path/src``."""
    dest = tmp_path / "src" / "loopmodel"
    shutil.copytree(PACKAGE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_key_changes_with_one_byte_of_any_module(tmp_path, monkeypatch):
    copy = _copy_package(tmp_path)
    monkeypatch.setattr(cache, "PACKAGE_ROOT", copy)
    before = cache.make_key("compiled-incore-v3", "same inputs")
    assert cache.make_key("compiled-incore-v3", "same inputs") == before  # stable
    for module in ("compiled/asm.py", "compiled/ports.py", "compiled/osaca_backend.py", "models/incore.py"):
        f = copy / module
        original = f.read_bytes()
        f.write_bytes(original + b"#")
        cache._digest_of.cache_clear()
        assert cache.make_key("compiled-incore-v3", "same inputs") != before, module
        f.write_bytes(original)
        cache._digest_of.cache_clear()
        assert cache.make_key("compiled-incore-v3", "same inputs") == before, module


def test_digest_is_computed_once_per_process(monkeypatch):
    cache.code_digest()
    monkeypatch.setattr(cache, "_read_bytes", lambda path: pytest.fail("source read again"))
    monkeypatch.setattr(cache, "_stamp", lambda root, files: pytest.fail("sources stamped again"))
    for _ in range(3):
        cache.make_key("x")


def test_digest_is_read_back_while_no_source_file_changed(tmp_path, monkeypatch):
    """A process after the first reads the digest back (no source file read) while every file
    keeps its size, modification time and inode; a file written, even with the same size, is
    read and hashed again, and gives the digest of its new bytes."""
    copy = _copy_package(tmp_path)
    monkeypatch.setattr(cache, "PACKAGE_ROOT", copy)
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))
    first = cache.code_digest()
    cache._digest_of.cache_clear()
    read = []
    real = cache._read_bytes
    monkeypatch.setattr(cache, "_read_bytes", lambda path: read.append(path) or real(path))
    assert cache.code_digest() == first and read == []
    f = copy / "units.py"
    text = f.read_bytes()
    os.utime(f, ns=(0, f.stat().st_mtime_ns + 10 ** 9))  # touched: read again, the same bytes
    cache._digest_of.cache_clear()
    assert cache.code_digest() == first and len(read) > 100
    f.write_bytes(text.replace(b"import math", b"import sys ", 1))  # the same size, other bytes
    cache._digest_of.cache_clear()
    assert cache.code_digest() != first


@needs_tools
def test_same_process_twice_second_analysis_is_from_the_cache(tmp_path, monkeypatch):
    from loopmodel.compiled import incore as incore_module
    from loopmodel.compiled.incore import compiled_incore
    from loopmodel.fileio.c_kernel import parse_kernel_file
    from loopmodel.fileio.machine_files import load_machine

    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path))
    compiled = []
    real = incore_module.assembly_and_report
    monkeypatch.setattr(incore_module, "assembly_and_report", lambda *a: compiled.append(1) or real(*a))
    kernel = parse_kernel_file(str(KERNELS / "triad.c"))[0]
    text = (KERNELS / "triad.c").read_text()
    machine = load_machine(SNB)
    _, a = compiled_incore(kernel, machine, {"N": 1000}, 8)
    _, b = compiled_incore(kernel, machine, {"N": 1000}, 8)
    assert a == b and len(compiled) == 1


_MARK_CALLS = '''

# -- test change: the loop block found is relabelled, and every search is counted
_find_kernel_block_unchanged = find_kernel_block


def find_kernel_block(*args, **kwargs):
    import dataclasses as _dc
    import os as _os
    with open(_os.environ["LOOPMODEL_TEST_CALLS"], "a") as _fh:
        _fh.write("x")
    _block = _find_kernel_block_unchanged(*args, **kwargs)
    return _dc.replace(_block, label=_block.label + "-changed")
'''


def _analyze(src: Path, cache_dir: Path, calls: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "LOOPMODEL_CACHE_DIR": str(cache_dir),
           "LOOPMODEL_TEST_CALLS": str(calls)}
    env.pop("LOOPMODEL_NO_CACHE", None)
    p = subprocess.run([sys.executable, "-m", "loopmodel", "analyze", str(KERNELS / "triad.c"), "-m", SNB,
                        "-D", "N=1000", "-p", "ECM", "--incore", "llvm-mca", "--json"],
                       capture_output=True, text=True, env=env, timeout=120, cwd=str(src))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["incore"]["compiled"]


@needs_tools
def test_changed_assembly_parser_is_not_served_an_old_result(tmp_path):
    """A real run: analyse with the package as it is, change the assembly parser (the block
    label it returns), analyse again with the same per-user cache: the new code's result, not
    the cached one; a third run with the same code is served from the cache (no block search)."""
    copy = _copy_package(tmp_path)
    calls = tmp_path / "calls"
    first = _analyze(copy.parent, tmp_path / "cache", calls)
    assert not first["block_label"].endswith("-changed")
    with open(copy / "compiled" / "asm.py", "a", encoding="utf-8") as fh:
        fh.write(_MARK_CALLS)
    second = _analyze(copy.parent, tmp_path / "cache", calls)
    assert second["block_label"] == first["block_label"] + "-changed"
    assert calls.read_text() == "x"
    third = _analyze(copy.parent, tmp_path / "cache", calls)
    assert third == second
    assert calls.read_text() == "x"  # warm: from the cache, the parser did not run again
