"""Where a kernel comes from and how its file is read (pure data).

A kernel file may hold several functions (PolyBench's ``init_array``, ``kernel_gemm``,
``print_array`` and ``main``) and include headers of its own (``polybench.h``, ``gemm.h``):
:class:`KernelSource` names the file, the function that is the kernel, the folders searched
for headers (``-I``) and the sizes the preprocessor sees (``-D``). Every loader of a C kernel
takes one (:func:`loopmodel.fileio.kernel_file.load_kernel`,
:func:`loopmodel.fileio.c_kernel.parse_c`), so that ``analyze``, the Python API and the
measurements read the same kernel from the same file.
"""
from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class KernelSource:
    """A kernel file and how to read it.

    Attributes:
        path: the file (its name as given is the kernel's ``source``).
        function: the name of the function that is the kernel (``--function``); None: the one
            function with loops.
        include_dirs: the ``-I`` folders, searched after the kernel's own folder.
        sizes: ``(name, value)`` of each ``-D`` size (value None where it is given several
            values): the preprocessor sees them defined (``#ifndef N``, ``#if N > 100``).
        macros: the names of ``-D NAME`` without a value, defined as 1 for the preprocessor only.
    """

    path: str
    function: str | None = None
    include_dirs: tuple = ()
    sizes: tuple = ()
    macros: tuple = ()

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return str(self.path)

    @property
    def plain(self) -> bool:
        """Whether the file is read as it is (no function named, no folders, no sizes)."""
        return self.function is None and not self.include_dirs and not self.sizes and not self.macros
