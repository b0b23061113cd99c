"""The one reader of user files: kernels, machine files, study, application and OpenMP files,
measured-point documents.

These files come from anyone (DEVELOPERS.md "Data from strangers"), so reading one is
bounded: only a regular file is read (``/dev/zero``, a FIFO or a folder is refused before a
byte is read, and opening never blocks), at most a size limit is read (a larger file is a
one-line error, not a memory exhaustion), the text must be UTF-8, and YAML is read with a
safe loader (:mod:`loopmodel.fileio.yaml_reader`, apart so that reading a kernel or a machine
file whose analysis is cached does not import PyYAML).

Every error is one line of the caller's error class (a
:class:`~loopmodel.errors.LoopmodelError` subclass) naming the file and, where there is one,
the line and column.
"""
from __future__ import annotations

import os
import stat

from ..errors import LoopmodelError

#: largest kernel or OpenMP program source read (bytes): real kernels are a few KiB
KERNEL_MAX_BYTES = 1 << 20
#: largest YAML or JSON file read (bytes): a probed host model with its tables is ~100 KiB
DATA_MAX_BYTES = 8 << 20


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB"


def read_bytes(path, what: str, error=LoopmodelError, limit: int = DATA_MAX_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Args:
        path: file path (str or path-like).
        what: how messages name the file (``"kernel file"``).
        error: the :class:`~loopmodel.errors.LoopmodelError` subclass raised.
        limit: the largest size read, in bytes.

    Raises:
        ``error``: missing or unreadable, not a regular file, or larger than ``limit``
        (one line naming ``path``).
    """
    name = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise error(f"cannot read {what}: no such file", file=name) from None
    except (OSError, TypeError, ValueError) as exc:
        raise error(f"cannot read {what}: {getattr(exc, 'strerror', None) or exc}", file=name) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise error(f"cannot read {what}: {kind}", file=name)
        if st.st_size > limit:
            raise error(f"{what} is larger than {_mib(limit)} ({st.st_size} B): not read", file=name)
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise error(f"cannot read {what}: {exc.strerror or exc}", file=name) from None
    finally:
        os.close(fd)
    if total > limit:
        raise error(f"{what} is larger than {_mib(limit)}: not read", file=name)
    return b"".join(chunks)


def decode(raw: bytes, name: str, what: str, error=LoopmodelError) -> str:
    """``raw`` as UTF-8 text (a leading byte-order mark dropped).

    Raises:
        ``error``: not UTF-8, or a NUL character (one line with the line of the first bad byte).
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise error(f"{what} is not UTF-8 text (byte {raw[exc.start]:#04x})", file=name, line=line) from None
    if "\0" in text:
        raise error(f"{what} is not text (it holds a NUL character)", file=name, line=text.count("\n", 0,
                                                                                                 text.index("\0")) + 1)
    return text


def read_text(path, what: str, error=LoopmodelError, limit: int = DATA_MAX_BYTES) -> str:
    """The UTF-8 text of the regular file ``path`` (:func:`read_bytes`, :func:`decode`).

    Raises:
        ``error``: see :func:`read_bytes` and :func:`decode`.
    """
    return decode(read_bytes(path, what, error, limit), str(path), what, error)
