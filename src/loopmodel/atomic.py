"""Files written whole or not at all: written under a hidden temporary name beside their path
and put in place when they are whole, the temporary file removed on any failure or interrupt
(Ctrl-C, SIGTERM). What every output the user names goes through: ``-o`` and ``--json FILE``
(:mod:`loopmodel.fileio.output`), a sweep's table (:mod:`loopmodel.fileio.result_file`), the
pictures (:func:`loopmodel.report.figures.save`).
"""
from __future__ import annotations

import os

from .errors import DefineError


def temporary_path(path) -> str:
    """A name for the file ``path`` while it is written: hidden, beside it (same folder, so a
    rename puts it in place atomically), unique (``.NAME.PID-RANDOM.tmp``)."""
    folder, base = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f".{base}.{os.getpid()}-{os.urandom(4).hex()}.tmp")


def publish(partial: str, path, force: bool, option: str) -> None:
    """Put the whole file ``partial`` (beside ``path``) in place at ``path``: as a new file
    (a hard link, which fails if ``path`` exists by now), or with ``force`` in place of the
    old one (an atomic rename). ``partial`` is gone afterwards.

    Raises:
        DefineError: ``path`` exists (not ``force``), or the system refuses (one line).
        OSError: another failure of the file system.
    """
    if force:
        os.replace(partial, path)
        return
    try:
        os.link(partial, path)
    except FileExistsError:
        raise DefineError(f"{option}: output file exists; not overwritten", file=str(path)) from None
    except OSError:  # a file system without hard links: check, then rename
        if os.path.lexists(path):
            raise DefineError(f"{option}: output file exists; not overwritten", file=str(path)) from None
        os.rename(partial, path)
        return
    os.unlink(partial)


def write_whole(path, write, force: bool, option: str) -> None:
    """Write the file ``path`` whole or not at all: ``write(partial)`` writes a temporary file
    beside it (:func:`temporary_path`), which is then put in place (:func:`publish`; with
    ``force`` over an existing file, else never over one). The temporary file is removed
    whatever happens (an error, an interrupt); ``path`` is then as it was.

    Raises:
        DefineError: ``path`` exists by now (not ``force``). OSError: the file cannot be
            written (what ``write`` raises; the caller makes it one line).
    """
    partial = temporary_path(path)
    try:
        write(partial)
        publish(partial, path, force, option)
    finally:
        if os.path.lexists(partial):
            os.unlink(partial)
