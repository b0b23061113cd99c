"""Per-user result cache: validated machine models, compiled in-core analyses, the SIMD
level of compiler flags, tool versions.

Entries live under ``$LOOPMODEL_CACHE_DIR``, else ``$XDG_CACHE_HOME/loopmodel``,
else ``~/.cache/loopmodel`` -- never next to the user's files. Keys are SHA-256
hashes of everything that affects the entry: the inputs the caller passes to
:func:`make_key`, loopmodel's version and :func:`code_digest`, the digest of the source
of the whole package (every ``.py`` and ``.c`` file under ``loopmodel/``). So an entry is
never stale: a changed input, or a change anywhere in the code that produced it (the
assembly parser, an analyzer back-end, the port mapping, the machine schema), is a
different key. The digest itself is kept here too (kind ``source-digest``), keyed by the
size, modification time (ns) and inode of every source file: the signals by which Python
decides that a module's bytecode is current, so a file Python would compile anew is hashed
anew. ``LOOPMODEL_NO_CACHE=1`` disables reading and writing. A cache that cannot be read or
written is silently bypassed (e.g. read-only home).

An entry is the file ``<kind>/<key>.pickle``: a header naming the kind and the full key it
was computed for, then the pickled object. :func:`load` compares the header with the kind
and key asked for before unpickling, so an entry renamed, copied or swapped on disk is a
miss (recomputed and stored again), never another input's result.

Loading a pickle can run code, so the cache is used only where nobody else can have written
to it. The root and the kind folder must be real folders (not symbolic links), owned by this
user (``os.getuid()``) and writable neither by the group nor by others; a folder that is not
is never changed (no ``chmod``), only refused: this process then bypasses the cache (reads and
writes nothing) and :func:`problem` says which folder and how to fix it, for the command line
to print. The checks are made on opened descriptors (the root opened with ``O_NOFOLLOW``, the
kind folder, the entry and the temporary file relative to their folder's descriptor), so that
nothing can be swapped in between check and use. :func:`load` also requires the entry file to
be private (else a miss, not unpickled). :func:`store` creates a missing root and kind folder
with mode 0o700 (the root's parents as usual) and writes a temporary file of mode 0o600,
renamed over the entry.
"""
from __future__ import annotations

import functools
import hashlib
import os
import pickle
from pathlib import Path

from .version import __version__

#: the package whose source :func:`code_digest` covers (a folder)
PACKAGE_ROOT = os.path.dirname(os.path.realpath(__file__))


#: ``sha256(data=b"")``: the hash of every key and digest
sha256 = hashlib.sha256


def enabled() -> bool:
    return os.environ.get("LOOPMODEL_NO_CACHE", "") in ("", "0")


def cache_dir() -> Path:
    """The cache root (not created here)."""
    return Path(_root())


def _root() -> str:
    """The cache root as a string: absolute and normalised, so that its last part is the folder itself (a trailing ``/`` would
    make opening it follow a symbolic link)."""
    if os.environ.get("LOOPMODEL_CACHE_DIR"):
        return os.path.abspath(os.environ["LOOPMODEL_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.abspath(os.path.join(base, "loopmodel"))


def make_key(*parts) -> str:
    """Cache key: SHA-256 hex digest of the parts (bytes, or anything with a stable ``repr``),
    loopmodel's version and :func:`code_digest` (so every entry dies with a code change)."""
    h = sha256(__version__.encode())
    h.update(code_digest())
    for p in parts:
        b = p if isinstance(p, bytes) else repr(p).encode()
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def code_digest() -> bytes:
    """SHA-256 (32 bytes) over the relative path and bytes of every ``.py`` and ``.c`` file
    of the package (:data:`PACKAGE_ROOT`), in path order; once per process, read back from
    the cache while no file's size, modification time or inode changed (:func:`_stamp`), else
    computed (about 3.5 ms for the 1.9 MB of source on a 2-vCPU guest, reading and hashing;
    the stamp about 0.5 ms: the folders walked with ``os.scandir``, ``__pycache__`` skipped,
    one ``stat`` per file)."""
    return _digest_of(str(PACKAGE_ROOT))


def _source_files(folder: str, parts: tuple = ()) -> list:
    """``(relative path parts, path)`` of the ``.py`` and ``.c`` files under ``folder`` (symbolic
    links to folders not followed, ``__pycache__`` skipped)."""
    out = []
    with os.scandir(folder) as entries:
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                if e.name != "__pycache__":
                    out += _source_files(e.path, parts + (e.name,))
            elif e.name.endswith((".py", ".c")) and e.is_file():
                out.append((parts + (e.name,), e.path))
    return out


def _read_bytes(path: str) -> bytes:
    """The bytes of the file ``path`` (``Path.read_bytes`` without a Path per file: 200 of them
    per process), ``b"<unreadable>"`` where it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b"<unreadable>"


@functools.lru_cache(maxsize=None)
def _digest_of(root: str) -> bytes:
    files = sorted(_source_files(root))
    stamp = _stamp(root, files)
    known = load(_DIGEST_KIND, stamp)
    if isinstance(known, bytes) and len(known) == 32:
        return known
    h = sha256()
    for parts, path in files:
        rel = "/".join(parts).encode()
        data = _read_bytes(path)
        for b in (rel, data):
            h.update(len(b).to_bytes(8, "little"))
            h.update(b)
    digest = h.digest()
    store(_DIGEST_KIND, stamp, digest)
    return digest


#: the cache kind of :func:`code_digest`'s results, keyed by :func:`_stamp`
_DIGEST_KIND = "source-digest"


def _stamp(root: str, files: list) -> str:
    """SHA-256 (hex) of ``root`` and, per file of :func:`_source_files`, its relative path, size,
    modification time (ns) and inode: what changes when a file is written, replaced or renamed
    (what Python's bytecode cache checks, and more); a file that cannot be read stamps as such."""
    h = sha256(root.encode())
    for parts, path in files:
        try:
            st = os.stat(path)
            sig = f"{st.st_size} {st.st_mtime_ns} {st.st_ino}"
        except OSError:
            sig = "<unreadable>"
        h.update(f"\0{'/'.join(parts)}\0{sig}".encode())
    return h.hexdigest()


#: the first line of every entry (the format); the kind and the key follow, one line each
_MAGIC = b"loopmodel cache entry 1\n"


def _header(kind: str, key: str) -> bytes:
    return _MAGIC + f"{kind}\n{key}\n".encode()


def _private(st: os.stat_result) -> bool:
    """Owned by this user and writable by nobody else (see the module docstring)."""
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


#: opening a folder of the cache: a folder, and not through a symbolic link as its last part
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW

#: cache root -> why this process does not use the cache under it (:func:`problem`)
_refused: dict = {}


def problem() -> str | None:
    """Why this process bypasses the cache (the first unsafe folder found under the current root,
    and how to fix it: one line), or None. The cache never prints; the command line does."""
    return _refused.get(_root())


def _folder_problem(path: str, st: os.stat_result | None) -> str | None:
    """Why the folder ``path`` (``st``: its fstat; None: a symbolic link) is not used, or None."""
    fix = "set LOOPMODEL_CACHE_DIR to a folder of your own"
    if st is None:
        return f"the cache folder {path} is a symbolic link: results are not cached; {fix}"
    if st.st_uid != os.getuid():
        return f"the cache folder {path} belongs to another user (uid {st.st_uid}): results are not cached; {fix}"
    if st.st_mode & 0o022:
        who = "others" if st.st_mode & 0o002 else "its group"
        return (f"the cache folder {path} is writable by {who} (mode {st.st_mode & 0o7777:04o}): results are not "
                f"cached; make it private (chmod 700 {path}) or {fix}")
    return None


def _open_folder(path: str, name: str, dir_fd: int | None, create: bool) -> int | None:
    """A descriptor of the folder ``name`` (relative to ``dir_fd``; ``path``: how a note names it),
    opened without following a symbolic link and checked on the descriptor; None where it is not
    private to this user (the reason recorded for :func:`problem`; nothing about it changed).
    With ``create`` a missing folder is made, mode 0o700.

    Raises:
        OSError: it is missing (and not created), or cannot be opened or made.
    """
    try:
        fd = os.open(name, _FOLDER, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise
        if dir_fd is None:  # the root: its missing parents made as usual, itself private
            os.makedirs(os.path.dirname(name), exist_ok=True)
        try:
            os.mkdir(name, 0o700, dir_fd=dir_fd)
        except FileExistsError:  # made meanwhile (another process), or a dangling link: opened below
            pass
        fd = _reopen(path, name, dir_fd)
    except NotADirectoryError:
        fd = _reopen(path, name, dir_fd)
    if fd is None:
        return None
    why = _folder_problem(path, os.fstat(fd))
    if why is not None:
        os.close(fd)
        _refused.setdefault(_root(), why)
        return None
    return fd


def _reopen(path: str, name: str, dir_fd: int | None) -> int | None:
    """:func:`_open_folder`'s second try: None, with the reason recorded, where ``name`` is a
    symbolic link (what opening it without following said; ``lstat`` only tells which note).

    Raises:
        OSError: anything else in its way (a file, a missing folder).
    """
    try:
        return os.open(name, _FOLDER, dir_fd=dir_fd)
    except NotADirectoryError:
        if not os.path.islink(path):
            raise
    _refused.setdefault(_root(), _folder_problem(path, None))
    return None


def _kind_folder(kind: str, create: bool = False) -> int | None:
    """A descriptor of the folder of ``kind`` under the cache root, both opened and checked as
    :func:`_open_folder` says (the kind folder relative to the root's descriptor, so that nothing
    can be swapped in between); None where the cache is bypassed (this process found an unsafe
    folder under the root). With ``create`` missing folders are made: the root's parents as
    usual, the root and the kind folder with mode 0o700.

    Raises:
        OSError: a folder is missing (and not created), or cannot be opened or made.
    """
    if os.sep in kind or kind in ("", ".", ".."):
        raise ValueError(f"cache kind {kind!r} is not one folder name")
    root = _root()
    if root in _refused:
        return None
    rfd = _open_folder(root, root, None, create)
    if rfd is None:
        return None
    try:
        return _open_folder(os.path.join(root, kind), kind, rfd, create)
    finally:
        os.close(rfd)


def folder(kind: str) -> str | None:
    """The folder of ``kind`` under the cache root, for files kept there by name (the probed host
    models): made where missing and checked as :func:`store` does (root and folder 0o700, this
    user's, no symbolic link); None where the cache is bypassed (:func:`problem` says why).
    Files are then written by path, inside a folder nobody else can write to.

    Raises:
        OSError: a folder cannot be opened or made.
    """
    dfd = _kind_folder(kind, create=True)
    if dfd is None:
        return None
    os.close(dfd)
    return os.path.join(_root(), kind)


def load(kind: str, key: str):
    """The object stored under ``kind/key``, or None (a miss): the cache is off or bypassed, the
    entry is missing or unreadable, it or its folders are not private to this user, or it was
    stored for another kind or key (see the module docstring)."""
    if not enabled():
        return None
    try:
        fh = _open_private(kind, f"{key}.pickle")
        if fh is None:
            return None
        with fh:
            header = _header(kind, key)
            if fh.read(len(header)) != header:
                return None
            return pickle.load(fh)
    except Exception:  # missing, unreadable or from an incompatible build: recompute
        return None


def _open_private(kind: str, name: str):
    """``<root>/<kind>/<name>`` open for reading, or None where a folder or the file is not
    private (checked on the opened descriptors, so that nothing can be swapped in between; no
    symbolic link followed for the root, the kind folder or the file).

    Raises:
        OSError: a folder or the file cannot be opened.
    """
    dfd = _kind_folder(kind)
    if dfd is None:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dfd)
    finally:
        os.close(dfd)
    fh = os.fdopen(fd, "rb")
    if not _private(os.fstat(fd)):
        fh.close()
        return None
    return fh


def store(kind: str, key: str, obj) -> None:
    """Store ``obj`` under ``kind/key`` with its header, atomically (written to a temporary
    file of mode 0o600 in the kind folder, then renamed over the entry, both relative to the
    folder's checked descriptor); nothing where the cache is bypassed or cannot be written."""
    if not enabled():
        return
    try:
        dfd = _kind_folder(kind, create=True)
    except OSError:
        return
    if dfd is None:
        return
    try:
        _write_entry(dfd, f"{key}.pickle", _header(kind, key), obj)
    except OSError:
        pass
    finally:
        os.close(dfd)


def _write_entry(dfd: int, name: str, header: bytes, obj) -> None:
    """``header`` and ``obj`` pickled into ``name`` in the folder ``dfd``: a new temporary file
    (never a link followed), renamed over ``name``; the temporary file is removed on failure."""
    tmp = f".{name}.{os.getpid()}.tmp"
    try:
        os.unlink(tmp, dir_fd=dfd)  # left by a process of the same id that died writing it
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dfd)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(header)
            pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except OSError:
            pass
        raise
