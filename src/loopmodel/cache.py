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

Loading a pickle can run code, so :func:`load` reads only entries nobody else can have
written: the kind folder and the file must be owned by this user (``os.getuid()``) and
writable neither by the group nor by others; otherwise the entry is a miss and is not
unpickled. :func:`store` creates the folders with mode 0o700 and the files with 0o600, and
takes the group's and others' write permission off a kind folder of this user's (one made
under an earlier, looser umask); it writes nothing into a folder of another user's.
"""
from __future__ import annotations

import functools
import importlib
import os
import pickle
from typing import TYPE_CHECKING

from .version import __version__

if TYPE_CHECKING:
    from pathlib import Path

#: the package whose source :func:`code_digest` covers (a folder)
PACKAGE_ROOT = os.path.dirname(os.path.realpath(__file__))


def _sha256_type():
    """SHA-256 (``hashlib.sha256``'s digests) without loading OpenSSL, which ``import hashlib``
    does and which costs every process a few milliseconds: CPython's built-in module where it has
    one (``_sha2`` from 3.12, ``_sha256`` before), else hashlib's."""
    for name in ("_sha2", "_sha256"):
        try:
            return importlib.import_module(name).sha256
        except ImportError:
            pass
    return importlib.import_module("hashlib").sha256


#: ``sha256(data=b"")``: a hash object as ``hashlib.sha256`` makes it
sha256 = _sha256_type()


def enabled() -> bool:
    return os.environ.get("LOOPMODEL_NO_CACHE", "") in ("", "0")


def path_class():
    """``pathlib.Path``, imported on first use: a warm analysis handles its paths (the cache's,
    the built-in machine files') as strings and does not load pathlib (a few ms of every process)."""
    return importlib.import_module("pathlib").Path


def cache_dir() -> Path:
    """The cache root (not created here)."""
    return path_class()(_root())


def _root() -> str:
    """The cache root as a string (reading an entry needs no ``pathlib``, a few ms of start-up)."""
    if os.environ.get("LOOPMODEL_CACHE_DIR"):
        return os.environ["LOOPMODEL_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "loopmodel")


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


def load(kind: str, key: str):
    """The object stored under ``kind/key``, or None (a miss): the cache is off, the entry is
    missing or unreadable, it or its folder is not private to this user, or it was stored for
    another kind or key (see the module docstring)."""
    if not enabled():
        return None
    try:
        fh = _open_private(os.path.join(_root(), kind), f"{key}.pickle")
        if fh is None:
            return None
        with fh:
            header = _header(kind, key)
            if fh.read(len(header)) != header:
                return None
            return pickle.load(fh)
    except Exception:  # missing, unreadable or from an incompatible build: recompute
        return None


def _open_private(folder: str, name: str):
    """``folder/name`` open for reading, or None where the folder or the file is not private
    (checked on the opened descriptors, so that nothing can be swapped in between; the file is
    not followed if it is a symbolic link).

    Raises:
        OSError: the folder or the file cannot be opened.
    """
    dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if not _private(os.fstat(dfd)):
            return None
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
    file of mode 0o600, then renamed); nothing where the folder cannot be made private."""
    if not enabled():
        return
    try:
        d = _private_folder(cache_dir() / kind)
        if d is None:
            return
        tmp = d / f".{key}.{os.getpid()}.tmp"
        tmp.unlink(missing_ok=True)
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as fh:
            fh.write(_header(kind, key))
            pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, d / f"{key}.pickle")
    except OSError:
        pass


def _private_folder(d: Path) -> Path | None:
    """``d`` and the cache root, created with mode 0o700 where missing; ``d`` made private
    (0o700) if it is this user's and others may write to it; None if it is another user's.

    Raises:
        OSError: a folder cannot be created or changed.
    """
    d.parent.parent.mkdir(parents=True, exist_ok=True)
    for folder in (d.parent, d):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            pass
    st = os.stat(d)
    if st.st_uid != os.getuid():
        return None
    if st.st_mode & 0o022:
        os.chmod(d, 0o700)
    return d
