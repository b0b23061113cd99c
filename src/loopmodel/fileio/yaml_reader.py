"""YAML user files, read safely (:mod:`loopmodel.fileio.reader` reads their bytes, bounded).

The loader is PyYAML's safe one (plain data only) that also refuses

* a key given twice in one mapping (PyYAML would keep the last silently),
* a document that grows past :data:`YAML_MAX_NODES` nodes once its aliases are expanded
  (the "billion laughs" document: a few lines that expand to 10^9 nodes), and recursive
  aliases.

Every error is one line of the caller's error class (a
:class:`~loopmodel.errors.LoopmodelError` subclass) naming the file and, where there is one,
the line and column.
"""
from __future__ import annotations

import yaml

from ..errors import LoopmodelError
from .reader import DATA_MAX_BYTES, read_text

#: most YAML nodes a document may have with its aliases expanded
YAML_MAX_NODES = 1_000_000


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
