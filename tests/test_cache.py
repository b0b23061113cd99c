"""The per-user cache of validated machine models: never stale, optional, invisible when broken."""
import os
import subprocess
import sys
from pathlib import Path

import yaml

from loopmodel import cache
from loopmodel.fileio.machine_files import load_machine
from loopmodel.machine.model import MachineModel

IVB = "IvyBridgeEP_E5-2690v2"


def _copy_ivb(tmp_path, name="m.yml"):
    from loopmodel.fileio.machine_files import _builtin_path

    p = tmp_path / name
    p.write_bytes(_builtin_path(IVB).read_bytes())
    return p


def test_cache_dir_is_not_next_to_the_input(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "c"))
    p = _copy_ivb(tmp_path)
    load_machine(str(p))
    assert sorted(x.name for x in tmp_path.iterdir()) == ["c", "m.yml"]
    assert len(list((tmp_path / "c" / "machines").glob("*.pickle"))) == 1


def test_changed_file_is_revalidated_not_stale(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "c"))
    p = _copy_ivb(tmp_path)
    assert load_machine(str(p)).clock == 3.0e9
    data = yaml.safe_load(p.read_text())
    data["clock"] = "2.2 GHz"
    p.write_text(yaml.safe_dump(data))
    assert load_machine(str(p)).clock == 2.2e9
    data["clock"] = "0 GHz"  # and an invalid edit is reported, not served from the cache
    p.write_text(yaml.safe_dump(data))
    import pytest

    from loopmodel.errors import MachineError
    with pytest.raises(MachineError, match="clock"):
        load_machine(str(p))


def test_cached_model_equals_validated_one(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "c"))
    first = load_machine(IVB)
    second = load_machine(IVB)  # from the cache
    monkeypatch.setenv("LOOPMODEL_NO_CACHE", "1")
    fresh = load_machine(IVB)
    assert isinstance(second, MachineModel)
    assert first == second == fresh


def test_warm_load_does_not_import_pydantic(tmp_path):
    env = {**os.environ, "LOOPMODEL_CACHE_DIR": str(tmp_path / "c")}
    code = ("import sys; from loopmodel.fileio.machine_files import load_machine; "
            f"load_machine({IVB!r}); print('pydantic' in sys.modules)")
    cold = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    warm = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert cold.stdout.strip() == "True"
    assert warm.stdout.strip() == "False"


def test_no_cache_env_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("LOOPMODEL_NO_CACHE", "1")
    load_machine(IVB)
    assert not (tmp_path / "c").exists()


def test_unwritable_or_corrupt_cache_is_bypassed(tmp_path, monkeypatch):
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(blocker))
    assert load_machine(IVB).name == IVB  # cannot create the cache: still works
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "c"))
    load_machine(IVB)
    for f in (tmp_path / "c" / "machines").glob("*.pickle"):
        f.write_bytes(b"garbage")
    assert load_machine(IVB).name == IVB


def test_key_depends_on_every_part():
    assert cache.make_key(b"a", "x") != cache.make_key(b"a", "y")
    assert cache.make_key(b"ab", b"c") != cache.make_key(b"a", b"bc")
    assert cache.make_key(b"a", None) == cache.make_key(b"a", None)


def test_default_location_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("LOOPMODEL_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.cache_dir() == Path(tmp_path) / "loopmodel"
