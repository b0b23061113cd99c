"""Output files appear whole or not at all (:mod:`loopmodel.atomic`): a picture or a ``-o`` /
``--json`` file that cannot be written (a full disk) or whose writing is interrupted leaves no
file, no temporary file, and a file that was there unchanged; the error is one line naming
the file and the system's reason."""
from __future__ import annotations

import errno
import os
import subprocess
import sys

import pytest

from helpers import KERNELS
from loopmodel.atomic import temporary_path, write_whole
from loopmodel.errors import DefineError, LoopmodelError
from loopmodel.fileio.output import write_output

ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.fixture
def figure():
    from loopmodel.report.figures import pyplot

    fig, ax = pyplot().subplots()
    ax.plot([1, 2, 3], [3, 1, 2])
    return fig


@pytest.fixture
def full_disk(monkeypatch):
    """Every figure saved writes a few bytes, then the disk is full."""
    import matplotlib.figure

    def savefig(self, fname, **kwargs):
        with open(fname, "wb") as fh:
            fh.write(b"\x89PNG half a picture")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), fname)
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)


def test_a_plot_that_cannot_be_written_leaves_no_file(tmp_path, figure, full_disk):
    from loopmodel.report.figures import save

    path = tmp_path / "out.png"
    with pytest.raises(LoopmodelError) as got:
        save(figure, str(path))
    assert str(got.value) == f"{path}: cannot write the plot: No space left on device"
    assert os.listdir(tmp_path) == []


def test_a_plot_that_cannot_be_written_leaves_the_old_file_as_it_was(tmp_path, figure, full_disk):
    from loopmodel.report.figures import save

    path = tmp_path / "out.png"
    path.write_bytes(b"the old picture")
    with pytest.raises(LoopmodelError):
        save(figure, str(path))
    assert path.read_bytes() == b"the old picture" and os.listdir(tmp_path) == ["out.png"]


@pytest.mark.parametrize("ext, magic", [(".png", b"\x89PNG"), (".pdf", b"%PDF"), (".svg", b"<?xml")])
def test_a_plot_is_written_in_the_format_of_its_extension(tmp_path, figure, ext, magic):
    """The temporary file's name ends in ``.tmp``: the format comes from the real name."""
    from loopmodel.report.figures import save

    path = tmp_path / f"out{ext}"
    save(figure, str(path))
    assert path.read_bytes().startswith(magic) and os.listdir(tmp_path) == [path.name]


def test_an_interrupted_write_leaves_nothing(tmp_path):
    def write(partial):
        with open(partial, "w") as fh:
            fh.write("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_whole(tmp_path / "out.csv", write, False, "-o")
    assert os.listdir(tmp_path) == []


def test_an_output_file_that_cannot_be_written_leaves_nothing(tmp_path, monkeypatch):
    import loopmodel.atomic

    def publish(partial, path, force, option):  # written whole, then the rename fails
        raise ENOSPC
    monkeypatch.setattr(loopmodel.atomic, "publish", publish)
    with pytest.raises(DefineError) as got:
        write_output(str(tmp_path / "m.yml"), "text\n", "-o")
    assert str(got.value) == f"{tmp_path / 'm.yml'}: -o: cannot write: No space left on device"
    assert os.listdir(tmp_path) == []


def test_the_temporary_file_is_hidden_beside_its_file(tmp_path):
    partial = temporary_path(tmp_path / "r.parquet")
    assert os.path.dirname(partial) == str(tmp_path)
    assert os.path.basename(partial).startswith(".r.parquet.") and partial.endswith(".tmp")
    assert partial != temporary_path(tmp_path / "r.parquet")


# ---------------------------------------------------------------- the real command line

def _limited(size: int):
    """A child process that may write files of at most ``size`` bytes (EFBIG beyond; Python
    ignores SIGXFSZ): a full disk that does not need one, and root cannot write past."""
    import resource

    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE as on Linux")
@pytest.mark.parametrize("option, name, message", [(["--plot"], "out.png", "cannot write the plot: File too large"),
                                                   (["--json"], "out.json", "--json: cannot write: File too large")],
                         ids=["plot", "json-file"])
def test_cli_output_too_large_for_the_disk_is_one_line_and_no_file(tmp_path, option, name, message):
    """``analyze --plot`` / ``--json FILE`` of a sweep that cannot be written whole: exit 2, one
    line naming the file and the reason, and no file (an existing one: ``--force`` leaves it)."""
    old = tmp_path / "old.png"
    old.write_bytes(b"the old picture")
    for target, force in ((tmp_path / name, []), (old, ["--force"])):
        if option == ["--json"] and force:
            continue  # --json FILE has no --force
        proc = subprocess.run([sys.executable, "-m", "loopmodel.cli", "analyze", str(KERNELS / "daxpy.c"), "-m",
                               "SkylakeSP_Gold-6148", "-D", "N=1000:100000:500", "--incore", "analytic", "-p", "ECM",
                               "--no-cache", *option, str(target), *force], capture_output=True, text=True,
                              timeout=120, preexec_fn=_limited(8192))
        assert proc.returncode == 2 and proc.stderr == f"loopmodel: {target}: {message}\n", proc.stderr
        assert sorted(os.listdir(tmp_path)) == ["old.png"] and old.read_bytes() == b"the old picture"
