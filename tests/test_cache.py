"""The per-user cache of validated machine models: never stale, optional, invisible when broken."""
import os
from pathlib import Path

import pytest
import yaml

from loopmodel import cache
from loopmodel.fileio.machine_files import load_machine
from loopmodel.machine.model import MachineModel

IVB = "IvyBridgeEP_E5-2690v2"


def _copy_ivb(tmp_path, name="m.yml"):
    from loopmodel.fileio.machine_files import _builtin_path

    p = tmp_path / name
    p.write_bytes(Path(_builtin_path(IVB)).read_bytes())
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


# ---------------------------------------------------------------- integrity and privacy


def _entry(kind: str, key: str) -> Path:
    return cache.cache_dir() / kind / f"{key}.pickle"


def test_round_trip_with_private_modes_under_a_loose_umask(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "c"))
    key = cache.make_key("round trip")
    old = os.umask(0o002)
    try:
        cache.store("things", key, {"a": [1, 2.5]})
    finally:
        os.umask(old)
    assert cache.load("things", key) == {"a": [1, 2.5]}
    assert (tmp_path / "c").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "c" / "things").stat().st_mode & 0o777 == 0o700
    assert _entry("things", key).stat().st_mode & 0o777 == 0o600
    assert cache.load("things", cache.make_key("another")) is None


def test_entries_swapped_or_copied_on_disk_are_misses(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "c"))
    a, b = cache.make_key("a"), cache.make_key("b")
    cache.store("k", a, "value of a")
    cache.store("k", b, "value of b")
    data_a, data_b = _entry("k", a).read_bytes(), _entry("k", b).read_bytes()
    _entry("k", a).write_bytes(data_b)
    _entry("k", b).write_bytes(data_a)
    assert cache.load("k", a) is None and cache.load("k", b) is None
    (tmp_path / "c" / "other").mkdir(mode=0o700)
    _entry("other", a).write_bytes(data_a)  # the right key under another kind
    assert cache.load("other", a) is None
    cache.store("k", a, "value of a")  # a miss is recomputed and overwrites the bad entry
    assert cache.load("k", a) == "value of a"


def test_swapped_machine_entries_are_revalidated(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "c"))
    ivb, snb = load_machine(IVB), load_machine("SandyBridgeEP_E5-2680")
    files = sorted((tmp_path / "c" / "machines").glob("*.pickle"))
    assert len(files) == 2
    one, two = files[0].read_bytes(), files[1].read_bytes()
    files[0].write_bytes(two)
    files[1].write_bytes(one)
    assert load_machine(IVB) == ivb and load_machine("SandyBridgeEP_E5-2680") == snb
    assert [f.read_bytes().split(b"\n")[2].decode() for f in files] == [f.stem for f in files]  # rewritten


def _spy_unpickling(monkeypatch) -> list:
    calls = []
    real = cache.pickle.load
    monkeypatch.setattr(cache.pickle, "load", lambda fh: calls.append(fh) or real(fh))
    return calls


@pytest.mark.parametrize("where", ["kind folder", "file"])
@pytest.mark.parametrize("mode", [0o777, 0o770])
def test_entries_others_may_write_are_not_unpickled(tmp_path, monkeypatch, where, mode):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "c"))
    key = cache.make_key("shared")
    cache.store("k", key, "mine")
    os.chmod(tmp_path / "c" / "k" if where == "kind folder" else _entry("k", key), mode)
    calls = _spy_unpickling(monkeypatch)
    assert cache.load("k", key) is None and calls == []
    os.chmod(_entry("k", key), 0o600)
    cache.store("k", key, "mine again")  # the folder is this user's: made private again
    assert (tmp_path / "c" / "k").stat().st_mode & 0o777 == 0o700
    assert cache.load("k", key) == "mine again" and len(calls) == 1


def test_entries_of_another_user_are_not_unpickled(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "c"))
    key = cache.make_key("theirs")
    cache.store("k", key, "value")
    calls = _spy_unpickling(monkeypatch)
    uid = os.getuid()
    monkeypatch.setattr(cache.os, "getuid", lambda: uid + 1)
    assert cache.load("k", key) is None and calls == []
    cache.store("k", key, "other")  # nor written into their folder
    monkeypatch.setattr(cache.os, "getuid", lambda: uid)
    assert cache.load("k", key) == "value"


def test_a_symbolic_link_entry_is_not_followed(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "c"))
    key = cache.make_key("linked")
    cache.store("k", key, "value")
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    _entry("k", key).rename(shared / "entry")
    _entry("k", key).symlink_to(shared / "entry")
    assert cache.load("k", key) is None


def test_analyze_after_swapping_cache_entries_prints_what_it_printed_before(tmp_path, monkeypatch):
    from helpers import KERNELS, ROOT, SKX, run_cli

    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "c"))
    runs = {m: ("analyze", KERNELS / "triad.c", "-m", m, "-D", "N=100000", "--incore", "analytic")
            for m in (SKX, "HaswellEP_E5-2695v3")}
    first = {m: run_cli(*args, cwd=ROOT) for m, args in runs.items()}
    assert all(p.returncode == 0 for p in first.values())
    files = sorted((tmp_path / "c" / "machines").glob("*.pickle"))
    assert len(files) == 2
    one, two = files[0].read_bytes(), files[1].read_bytes()
    files[0].write_bytes(two)
    files[1].write_bytes(one)
    for m, args in runs.items():
        assert run_cli(*args, cwd=ROOT).stdout == first[m].stdout, m
