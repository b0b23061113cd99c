"""Output files the user names (``-o``, ``--plot``): checked before the work, never overwritten.

Nothing the user had is replaced: an existing file is refused (unless the command has a
``--force`` and it was given), and the new file is created exclusively, so a file that
appeared meanwhile is not replaced either.
"""
from __future__ import annotations

import os

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


def write_new_output(path: str, text: str | bytes, option: str) -> None:
    """Create ``path`` with ``text`` (str: UTF-8; bytes: as they are); never replaces a file.

    Raises:
        DefineError: the file exists by now, or the system refuses to write it (one line).
    """
    try:
        with _open_new(path, text) as fh:  # "x": never replaces a file created meanwhile
            fh.write(text)
    except FileExistsError:
        raise DefineError(f"{option}: output file exists; not overwritten", file=path) from None
    except OSError as exc:
        raise DefineError(f"{option}: cannot write: {exc.strerror or exc}", file=path) from None


def _open_new(path, data: str | bytes):
    """``path`` opened for exclusive creation: binary for bytes, UTF-8 text for str."""
    return open(path, "xb") if isinstance(data, bytes) else open(path, "x", encoding="utf-8")


def replace_atomically(path, text: str | bytes) -> None:
    """Write ``text`` (str: UTF-8; bytes: as they are) to a temporary file beside ``path`` and
    rename it over ``path``, so a reader sees the old file or the whole new one, never half a file.

    Raises:
        OSError: the folder cannot be written (the temporary file is removed).
    """
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with _open_new(tmp, text) as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def write_output(path: str, text: str | bytes, option: str, force: bool = False) -> None:
    """Create ``path`` (:func:`write_new_output`); with ``force`` (the command's ``--force``) an
    existing file is replaced atomically (:func:`replace_atomically`).

    Raises:
        DefineError: as :func:`write_new_output`, or the replacement failed (one line).
    """
    if not force or not os.path.lexists(path):
        write_new_output(path, text, option)
        return
    try:
        replace_atomically(path, text)
    except OSError as exc:
        raise DefineError(f"{option}: cannot write: {exc.strerror or exc}", file=path) from None
