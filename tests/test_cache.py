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
    monkeypatch.setattr(cache, "_refused", {})
    key = cache.make_key("shared")
    cache.store("k", key, "mine")
    os.chmod(tmp_path / "c" / "k" if where == "kind folder" else _entry("k", key), mode)
    calls = _spy_unpickling(monkeypatch)
    assert cache.load("k", key) is None and calls == []
    os.chmod(_entry("k", key), 0o600)
    cache.store("k", key, "mine again")
    if where == "kind folder":  # refused, never made private behind the user's back: the cache is bypassed
        assert (tmp_path / "c" / "k").stat().st_mode & 0o777 == mode
        assert cache.load("k", key) is None and calls == [] and "chmod 700" in cache.problem()
    else:  # a file of this user's in a private folder: replaced by the next store
        assert cache.problem() is None
        assert cache.load("k", key) == "mine again" and len(calls) == 1


def test_entries_of_another_user_are_not_unpickled(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(cache, "_refused", {})
    key = cache.make_key("theirs")
    cache.store("k", key, "value")
    calls = _spy_unpickling(monkeypatch)
    uid = os.getuid()
    monkeypatch.setattr(cache.os, "getuid", lambda: uid + 1)
    assert cache.load("k", key) is None and calls == []
    cache.store("k", key, "other")  # nor written into their folder
    assert "belongs to another user" in cache.problem()
    monkeypatch.setattr(cache.os, "getuid", lambda: uid)
    assert cache.load("k", key) is None  # this process keeps bypassing the cache
    monkeypatch.setattr(cache, "_refused", {})  # the next process
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


# ---------------------------------------------------------------- unsafe cache folders


@pytest.fixture
def fresh_process(monkeypatch):
    """No folder refused yet, as in a new process."""
    monkeypatch.setattr(cache, "_refused", {})


def _files_under(folder: Path) -> list:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _use_cache():
    """One miss and one store of each of two kinds: what an analysis does."""
    for kind in ("machines", "things"):
        key = cache.make_key(kind)
        assert cache.load(kind, key) is None
        cache.store(kind, key, kind)
    return cache.load("things", cache.make_key("things"))


def test_a_fresh_root_is_made_private_and_entries_round_trip(tmp_path, monkeypatch, fresh_process):
    root = tmp_path / "new" / "parents" / "c"
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(root))
    old = os.umask(0o002)
    try:
        assert _use_cache() == "things"
    finally:
        os.umask(old)
    assert root.stat().st_mode & 0o7777 == 0o700 and root.stat().st_uid == os.getuid()
    assert (root / "machines").stat().st_mode & 0o7777 == 0o700
    assert cache.problem() is None


def test_a_root_that_is_a_symbolic_link_is_not_used(tmp_path, monkeypatch, fresh_process):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    (tmp_path / "c").symlink_to(theirs)
    for root in (tmp_path / "c", f"{tmp_path / 'c'}/", tmp_path / "dangling"):
        if root == tmp_path / "dangling":
            root.symlink_to(tmp_path / "nothing")
        monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(root))
        monkeypatch.setattr(cache, "_refused", {})
        assert _use_cache() is None
        assert cache.problem() == (f"the cache folder {str(root).rstrip('/')} is a symbolic link: results are not "
                                   "cached; set LOOPMODEL_CACHE_DIR to a folder of your own")
    assert _files_under(tmp_path / "theirs") == [] and not (tmp_path / "nothing").exists()
    assert theirs.stat().st_mode & 0o7777 == 0o700


def test_a_kind_folder_that_is_a_symbolic_link_is_not_written_through(tmp_path, monkeypatch, fresh_process):
    root, elsewhere = tmp_path / "c", tmp_path / "elsewhere"
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(root))
    root.mkdir(mode=0o700)
    elsewhere.mkdir(mode=0o755)
    (root / "machines").symlink_to(elsewhere)
    assert _use_cache() is None  # the cache is bypassed for the whole process, not just that kind
    assert f"{root / 'machines'} is a symbolic link" in cache.problem()
    assert _files_under(elsewhere) == [] and elsewhere.stat().st_mode & 0o7777 == 0o755
    assert _files_under(root) == ["machines"]


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o770, 0o720])
@pytest.mark.parametrize("where", ["root", "kind folder"])
def test_a_folder_others_may_write_to_is_refused_not_changed(tmp_path, monkeypatch, fresh_process, mode, where):
    root = tmp_path / "c"
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(root))
    folder = root if where == "root" else root / "machines"
    folder.mkdir(parents=True)
    os.chmod(folder, mode)
    assert _use_cache() is None
    assert folder.stat().st_mode & 0o7777 == mode
    assert _files_under(root) == ([] if where == "root" else ["machines"])
    who = "others" if mode & 0o002 else "its group"
    assert cache.problem() == (f"the cache folder {folder} is writable by {who} (mode {mode:04o}): results are not "
                               f"cached; make it private (chmod 700 {folder}) or set LOOPMODEL_CACHE_DIR to a "
                               "folder of your own")


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")
@pytest.mark.parametrize("where", ["root", "kind folder"])
def test_a_folder_of_another_user_is_not_used(tmp_path, monkeypatch, fresh_process, where):
    root = tmp_path / "c"
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(root))
    folder = root if where == "root" else root / "machines"
    folder.mkdir(mode=0o700, parents=True)
    os.chown(folder, 65534, 65534)
    assert _use_cache() is None
    assert _files_under(root) == ([] if where == "root" else ["machines"])
    assert folder.stat().st_uid == 65534 and folder.stat().st_mode & 0o7777 == 0o700
    assert cache.problem() == (f"the cache folder {folder} belongs to another user (uid 65534): results are not "
                               "cached; set LOOPMODEL_CACHE_DIR to a folder of your own")


def test_an_entry_is_replaced_atomically_without_leftovers(tmp_path, monkeypatch, fresh_process):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "c"))
    key = cache.make_key("replaced")
    cache.store("k", key, "first")
    inode = _entry("k", key).stat().st_ino
    cache.store("k", key, "second")
    assert cache.load("k", key) == "second"
    assert _files_under(tmp_path / "c") == ["k", f"k/{key}.pickle"]  # no temporary file left
    assert _entry("k", key).stat().st_ino != inode  # a new file renamed over the old one

    class Unpicklable:
        def __reduce__(self):
            raise OSError("cannot pickle this")
    cache.store("k", key, Unpicklable())  # fails half-way: the entry kept, the temporary file removed
    assert cache.load("k", key) == "second" and _files_under(tmp_path / "c") == ["k", f"k/{key}.pickle"]


def test_the_entry_name_is_not_followed_when_stored(tmp_path, monkeypatch, fresh_process):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "c"))
    key = cache.make_key("linked entry")
    cache.store("k", key, "value")
    target = tmp_path / "target"
    target.write_text("theirs")
    _entry("k", key).unlink()
    _entry("k", key).symlink_to(target)
    cache.store("k", key, "mine")  # the link itself is replaced, its target untouched
    assert target.read_text() == "theirs" and not _entry("k", key).is_symlink()
    assert cache.load("k", key) == "mine"


def test_the_probed_host_model_is_kept_only_in_a_private_folder(tmp_path, monkeypatch, fresh_process):
    from loopmodel.errors import MachineError
    from loopmodel.fileio.host_models import store_host_model

    root = tmp_path / "c"
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(root))
    assert store_host_model("name: h\n").read_text() == "name: h\n"
    assert root.stat().st_mode & 0o7777 == 0o700 and (root / "hosts").stat().st_mode & 0o7777 == 0o700
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "link"))
    (tmp_path / "link").symlink_to(theirs)
    with pytest.raises(MachineError, match="is a symbolic link"):
        store_host_model("name: h\n")
    assert _files_under(theirs) == []
