"""Per-user result cache: validated machine models, compiled in-core analyses, the SIMD
level of compiler flags, tool versions.

Entries live under ``$LOOPMODEL_CACHE_DIR``, else ``$XDG_CACHE_HOME/loopmodel``,
else ``~/.cache/loopmodel`` -- never next to the user's files. Keys are SHA-256
hashes of everything that affects the entry: the inputs the caller passes to
:func:`make_key`, loopmodel's version and :func:`code_digest`, the digest of the source
of the whole package (every ``.py`` and ``.c`` file under ``loopmodel/``). So an entry is
never stale: a changed input, or a change anywhere in the code that produced it (the
assembly parser, an analyzer back-end, the port mapping, the machine schema), is a
different key. ``LOOPMODEL_NO_CACHE=1`` disables reading and writing. A cache that
cannot be read or written is silently bypassed (e.g. read-only home).
"""
from __future__ import annotations

import functools
import hashlib
import os
import pickle
from pathlib import Path

from . import __version__

#: the package whose source :func:`code_digest` covers
PACKAGE_ROOT = Path(__file__).resolve().parent


def enabled() -> bool:
    return os.environ.get("LOOPMODEL_NO_CACHE", "") in ("", "0")


def cache_dir() -> Path:
    """The cache root (not created here)."""
    if os.environ.get("LOOPMODEL_CACHE_DIR"):
        return Path(os.environ["LOOPMODEL_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "loopmodel"


def make_key(*parts) -> str:
    """Cache key: SHA-256 hex digest of the parts (bytes, or anything with a stable ``repr``),
    loopmodel's version and :func:`code_digest` (so every entry dies with a code change)."""
    h = hashlib.sha256(__version__.encode())
    h.update(code_digest())
    for p in parts:
        b = p if isinstance(p, bytes) else repr(p).encode()
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def code_digest() -> bytes:
    """SHA-256 (32 bytes) over the relative path and bytes of every ``.py`` and ``.c`` file
    of the package (:data:`PACKAGE_ROOT`), in path order; computed once per process
    (about 2 ms for the 0.4 MB of source)."""
    return _digest_of(str(PACKAGE_ROOT))


@functools.lru_cache(maxsize=None)
def _digest_of(root: str) -> bytes:
    base = Path(root)
    h = hashlib.sha256()
    for p in sorted(q for q in base.rglob("*") if q.suffix in (".py", ".c") and q.is_file()):
        rel = p.relative_to(base).as_posix().encode()
        try:
            data = p.read_bytes()
        except OSError:
            data = b"<unreadable>"
        for b in (rel, data):
            h.update(len(b).to_bytes(8, "little"))
            h.update(b)
    return h.digest()


def load(kind: str, key: str):
    """The object stored under ``kind/key``, or None."""
    if not enabled():
        return None
    try:
        with open(cache_dir() / kind / f"{key}.pickle", "rb") as fh:
            return pickle.load(fh)
    except Exception:  # missing, unreadable or from an incompatible build: recompute
        return None


def store(kind: str, key: str, obj) -> None:
    """Store ``obj`` atomically (write to a temporary file, then rename)."""
    if not enabled():
        return
    d = cache_dir() / kind
    try:
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".{key}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, d / f"{key}.pickle")
    except OSError:
        pass

