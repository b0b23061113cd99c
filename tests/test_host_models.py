"""``-m host`` with a folder where a file is expected: the stored probe's path in the cache, or a
folder named ``host`` in the working directory. Either way it is the stored probe or the one-line
hint that there is none, never "Is a directory"."""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import IVB, KERNELS

from loopmodel.cli import main
from loopmodel.errors import MachineError
from loopmodel.fileio.host_models import host_model_path
from loopmodel.fileio.machine_files import _builtin_path, load_machine

NO_PROBE = "no probe of this host yet: run 'loopmodel machine probe'"


@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _analyze_host(capsys) -> tuple:
    code = main(["analyze", str(KERNELS / "triad.c"), "-m", "host", "-D", "N=1000", "--incore", "analytic"])
    return code, capsys.readouterr().err


def test_a_folder_in_place_of_the_stored_probe_is_no_probe(cache, capsys):
    host_model_path().mkdir(parents=True)
    code, err = _analyze_host(capsys)
    assert code == 2 and err.count("\n") == 1 and NO_PROBE in err and "Errno" not in err
    with pytest.raises(MachineError, match="no probe of this host yet"):
        load_machine("host")


def test_a_folder_named_host_in_the_working_directory_is_not_the_machine(cache, tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    (work / "host").mkdir(parents=True)
    monkeypatch.chdir(work)
    code, err = _analyze_host(capsys)
    assert code == 2 and err.count("\n") == 1 and NO_PROBE in err and "Errno" not in err
    stored = host_model_path()
    stored.parent.mkdir(parents=True)
    stored.write_bytes(Path(_builtin_path(IVB)).read_bytes())
    assert load_machine("host") == load_machine(str(stored))
    assert _analyze_host(capsys)[0] == 0


def test_a_file_named_host_in_the_working_directory_is_still_read(cache, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "host").write_bytes(Path(_builtin_path(IVB)).read_bytes())
    assert load_machine("host").clock == load_machine(IVB).clock
