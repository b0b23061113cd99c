"""The one reader of user files: kernels, machine files, study, application and OpenMP files,
measured-point documents.

These files come from anyone (DEVELOPERS.md "Data from strangers"), so reading one is
bounded: only a regular file is read (``/dev/zero``, a FIFO or a folder is refused before a
byte is read, and opening never blocks), at most a size limit is read (a larger file is a
one-line error, not a memory exhaustion), the text must be UTF-8, and YAML is read with a
safe loader that also refuses

* a key given twice in one mapping (PyYAML would keep the last silently),
* a document that grows past :data:`YAML_MAX_NODES` nodes once its aliases are expanded
  (the "billion laughs" document: a few lines that expand to 10^9 nodes), and recursive
  aliases.

Every error is one line of the caller's error class (a
:class:`~loopmodel.errors.LoopmodelError` subclass) naming the file and, where there is one,
the line and column.
"""
from __future__ import annotations

import os
import stat

import yaml

from ..errors import LoopmodelError

#: largest kernel or OpenMP program source read (bytes): real kernels are a few KiB
KERNEL_MAX_BYTES = 1 << 20
#: largest YAML or JSON file read (bytes): a probed host model with its tables is ~100 KiB
DATA_MAX_BYTES = 8 << 20
#: most YAML nodes a document may have with its aliases expanded
YAML_MAX_NODES = 1_000_000


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


# ---------------------------------------------------------------- YAML

class _Checks:
    """Mixin for PyYAML loaders: duplicate keys are errors (kept as the offending key node)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    dup = key in seen
                    seen.add(key)
                except TypeError:  # an unhashable key: PyYAML refuses it itself
                    continue
                if dup:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key '{key}' is given twice in one mapping", key_node.start_mark)
        return super().construct_mapping(node, deep)


class SafeLoader(_Checks, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """PyYAML's safe loader (the C one where built) that refuses duplicate keys."""


class _TupleLoader(_Checks, yaml.SafeLoader):
    """The safe loader that also reads Kerncraft's ``!!python/tuple`` (as a plain list; no
    other Python tag) and refuses duplicate keys."""

    def construct_python_tuple(self, node):
        return self.construct_sequence(node)


_TupleLoader.add_constructor("tag:yaml.org,2002:python/tuple", _TupleLoader.construct_python_tuple)


def _expanded_size(node, limit: int) -> int:
    """Nodes of the document under ``node`` with aliases expanded (stops past ``limit``).

    Raises:
        ValueError: a recursive alias (a node inside itself).
    """
    sizes: dict = {}
    active: set = set()

    def size(n) -> int:
        key = id(n)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise ValueError("a recursive alias (a node that contains itself)")
        active.add(key)
        total = 1
        if isinstance(n, yaml.SequenceNode):
            children = n.value
        elif isinstance(n, yaml.MappingNode):
            children = [c for pair in n.value for c in pair]
        else:
            children = ()
        for c in children:
            total += size(c)
            if total > limit:
                break
        active.discard(key)
        sizes[key] = total
        return total

    return size(node)


def load_yaml(text: str, filename: str, error=LoopmodelError, tuples: bool = False):
    """YAML ``text`` -> Python data (safe: plain data only), with the checks above.

    Args:
        text: the document.
        filename: how messages name the file.
        error: the :class:`~loopmodel.errors.LoopmodelError` subclass raised.
        tuples: also read ``!!python/tuple``, as a list (Kerncraft's kernel descriptions).

    Raises:
        ``error``: not valid YAML, a duplicate key, more than one document, too many
        nodes or a recursive alias (one line with ``file:line:col`` where known).
    """
    loader = (_TupleLoader if tuples else SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_size(node, YAML_MAX_NODES) > YAML_MAX_NODES:
            raise error(f"YAML document has more than {YAML_MAX_NODES} nodes with its aliases expanded",
                        file=filename)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
        raise error(f"not valid YAML: {problem}", file=filename, line=mark.line + 1 if mark else None,
                    col=mark.column + 1 if mark else None) from None
    except ValueError as exc:
        raise error(f"not valid YAML: {exc}", file=filename) from None
    except RecursionError:
        raise error("not valid YAML: nested too deeply", file=filename) from None
    finally:
        loader.dispose()


def read_yaml(path, what: str, error=LoopmodelError, limit: int = DATA_MAX_BYTES, tuples: bool = False):
    """The data of the YAML file ``path`` (:func:`read_text`, :func:`load_yaml`).

    Raises:
        ``error``: see :func:`read_bytes`, :func:`decode` and :func:`load_yaml`.
    """
    return load_yaml(read_text(path, what, error, limit), str(path), error, tuples)
