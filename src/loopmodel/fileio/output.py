"""Output files the user names (``-o``, ``--json FILE``): checked before the work, written whole,
never overwritten.

Nothing the user had is replaced: an existing file is refused (unless the command has a
``--force`` and it was given), and the new file is put in place with a hard link, which
fails if a file appeared meanwhile. Nothing half-written is left either: a file is written
under a hidden temporary name beside its path and appears under its name only when it is
whole; the temporary file is removed on any failure, an interruption (Ctrl-C, SIGTERM)
included (:func:`loopmodel.atomic.write_whole`).
"""
from __future__ import annotations

import os

from ..atomic import write_whole
from ..errors import DefineError


def check_new_output(path: str, option: str, force: bool = False) -> None:
    """Fail before the work (which may take minutes) if ``path`` could not be written.

    Raises:
        DefineError: the file exists (and not ``force``; the hint names ``--force`` only
            when ``force`` is an option of the command, ``option == "--plot"``), or its folder
            does not exist or is not writable; one line naming the path and the option.
    """
    if os.path.lexists(path) and not force:
        hint = " (use --force)" if option == "--plot" else ""
        raise DefineError(f"{option}: output file exists; not overwritten{hint}", file=path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise DefineError(f"{option}: folder {folder} does not exist", file=path)
    if not os.access(folder, os.W_OK):
        raise DefineError(f"{option}: folder {folder} is not writable", file=path)


def _write_data(partial: str, data: str | bytes) -> None:
    """Create ``partial`` with ``data``: bytes as they are, str as UTF-8."""
    with open(partial, "xb") if isinstance(data, bytes) else open(partial, "x", encoding="utf-8") as fh:
        fh.write(data)


def write_new_output(path: str, text: str | bytes, option: str) -> None:
    """Create ``path`` with ``text`` (str: UTF-8; bytes: as they are), whole; never replaces a file.

    Raises:
        DefineError: the file exists by now, or the system refuses to write it (one line).
    """
    write_output(path, text, option)


def replace_atomically(path, text: str | bytes) -> None:
    """Write ``text`` (str: UTF-8; bytes: as they are) to a temporary file beside ``path`` and
    rename it over ``path``, so a reader sees the old file or the whole new one, never half a file.

    Raises:
        OSError: the folder cannot be written (the temporary file is removed).
    """
    write_whole(path, lambda partial: _write_data(partial, text), True, "output")


def write_output(path: str, text: str | bytes, option: str, force: bool = False) -> None:
    """Create ``path`` with ``text``, whole (:func:`write_whole`); with ``force`` (the command's
    ``--force``) an existing file is replaced atomically, else never.

    Raises:
        DefineError: the file exists by now (not ``force``), or the system refuses to write it
            (one line naming the file, the option and the system's reason).
    """
    try:
        write_whole(path, lambda partial: _write_data(partial, text), force, option)
    except OSError as exc:
        raise DefineError(f"{option}: cannot write: {exc.strerror or exc}", file=path) from None
