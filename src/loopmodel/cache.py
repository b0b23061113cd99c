"""Per-user result cache (validated machine models now; compiled artefacts later).

Entries live under ``$LOOPMODEL_CACHE_DIR``, else ``$XDG_CACHE_HOME/loopmodel``,
else ``~/.cache/loopmodel`` -- never next to the user's files. Keys are SHA-256
hashes of everything that affects the entry (input bytes, loopmodel version,
the source of the code that produced it), so an entry is never stale: a changed
input is a different key. ``LOOPMODEL_NO_CACHE=1`` disables reading and writing.
A cache that cannot be read or written is silently bypassed (e.g. read-only home).
"""
from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

from . import __version__


def enabled() -> bool:
    return os.environ.get("LOOPMODEL_NO_CACHE", "") in ("", "0")


def cache_dir() -> Path:
    """The cache root (not created here)."""
    if os.environ.get("LOOPMODEL_CACHE_DIR"):
        return Path(os.environ["LOOPMODEL_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "loopmodel"


def make_key(*parts) -> str:
    """SHA-256 hex digest of the parts (bytes, or anything with a stable ``repr``) and the version."""
    h = hashlib.sha256(__version__.encode())
    for p in parts:
        b = p if isinstance(p, bytes) else repr(p).encode()
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def source_digest(*modules) -> bytes:
    """Bytes identifying the source code of ``modules`` (so entries die with code changes)."""
    out = []
    for m in modules:
        try:
            out.append(Path(m.__file__).read_bytes())
        except (OSError, AttributeError, TypeError):
            out.append(repr(m).encode())
    return hashlib.sha256(b"\0".join(out)).digest()


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


def tool_version(path: str, probe) -> str:
    """``probe(path)`` (a tool's version string), cached per user by the executable's path,
    size and modification time, so that a warm analysis starts no ``--version`` process and
    an upgraded tool is asked again."""
    try:
        st = os.stat(path)
    except OSError:
        return probe(path)
    key = make_key("tool-version", os.path.realpath(path), st.st_size, st.st_mtime_ns)
    hit = load("tools", key)
    if isinstance(hit, str):
        return hit
    ver = probe(path)
    store("tools", key, ver)
    return ver
