"""A kernel file read once: the parsed kernel of an unchanged file comes from the per-user cache.

Parsing a C kernel (pycparser) or a YAML kernel description (PyYAML) takes longer than the
whole rest of an analysis whose machine model and compiled in-core analysis are cached, and
loading the parsers longer still. :func:`load_kernel` reads the file (bounded,
:mod:`loopmodel.fileio.reader`), looks the parse up in :mod:`loopmodel.cache` under the file's
name and text (and loopmodel's version and source, as every entry), and parses only on a miss,
with the front-end of :func:`loopmodel.fileio.kernel_yaml.kernel_from_text`. A cached parse is
the very objects the parser built, pickled: the same kernel, sizes and notes.
"""
from __future__ import annotations

import importlib

from .. import cache
from ..errors import KernelError
from ..ir.kernel_source import KernelSource
from .c_headers import includes_own_header
from .reader import KERNEL_MAX_BYTES, read_text

#: the cache kind of parsed kernels (:mod:`loopmodel.cache`)
KIND = "kernels"


def load_kernel(path, use_cache: bool = True) -> tuple:
    """Read a kernel file, C or YAML description by suffix
    (:data:`loopmodel.fileio.kernel_yaml.YAML_SUFFIXES`).

    Args:
        path: the file (str or path-like; its name as given is the kernel's ``source``), or a
            :class:`~loopmodel.ir.kernel_source.KernelSource` (the function, ``-I`` folders and
            ``-D`` sizes it is read with).
        use_cache: read and write the parse in the per-user cache (:mod:`loopmodel.cache`). A
            file that includes a header of its own (``#include "x.h"``, a ``<x.h>`` that is not a
            standard header: :func:`~loopmodel.fileio.c_headers.includes_own_header`) is parsed
            every time: the key holds the kernel file's text, not the headers'.

    Returns:
        ``(kernel, defaults, text, notes)``: the :class:`~loopmodel.ir.kernel.Kernel`,
        ``#define`` defaults (constant -> int; none for YAML), the C text for compiled analyses
        (None for YAML) and notes on what the description leaves out (a tuple of one-line strings).

    Raises:
        KernelError: unreadable, malformed or unsupported file (one line naming it).
    """
    text = read_text(path, "kernel file", KernelError, KERNEL_MAX_BYTES)
    source = path if isinstance(path, KernelSource) and not path.plain else None
    use_cache = use_cache and not includes_own_header(text)
    key = cache.make_key("kernel-v2", str(path), repr(source), text)
    hit = cache.load(KIND, key) if use_cache else None
    if isinstance(hit, tuple) and len(hit) == 4:
        return hit
    parts = _front_end().kernel_from_text(text, str(path), source)
    if use_cache:
        cache.store(KIND, key, parts)
    return parts


def _front_end():
    """:mod:`loopmodel.fileio.kernel_yaml` (with the C front-end, pycparser and PyYAML), loaded
    on a cache miss only: an unchanged kernel file is not parsed again, so its parsers are not
    imported (benchmarks/import_time.py)."""
    return importlib.import_module(f"{__package__}.kernel_yaml")
