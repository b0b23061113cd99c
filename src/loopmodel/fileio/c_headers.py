"""The headers a C kernel file may include: the standard ones, skipped (the generated program
includes what it needs), and the user's own, which the C preprocessor reads
(:mod:`loopmodel.fileio.c_preprocess`). No parser is imported here: the parse cache
(:mod:`loopmodel.fileio.kernel_file`) asks :func:`includes_own_header` before it loads one.
"""
from __future__ import annotations

import re

#: ``#include`` lines a kernel may carry without the preprocessor reading a file (the C library, POSIX
#: and the compilers' intrinsics headers)
STANDARD_HEADERS = frozenset({
    "assert.h", "complex.h", "ctype.h", "errno.h", "fenv.h", "float.h", "inttypes.h", "iso646.h", "limits.h",
    "locale.h", "math.h", "setjmp.h", "signal.h", "stdalign.h", "stdarg.h", "stdbool.h", "stddef.h", "stdint.h",
    "stdio.h", "stdlib.h", "stdnoreturn.h", "string.h", "strings.h", "tgmath.h", "threads.h", "time.h", "uchar.h",
    "wchar.h", "wctype.h",  # C11
    "unistd.h", "fcntl.h", "pthread.h", "sched.h", "sys/time.h", "sys/times.h", "sys/types.h", "sys/resource.h",
    "sys/mman.h", "sys/stat.h", "malloc.h", "alloca.h",  # POSIX and glibc
    "omp.h", "immintrin.h", "x86intrin.h", "arm_neon.h", "arm_sve.h", "altivec.h"})
_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include\b(.*)$", re.M)


def standard_include(rest: str) -> bool:
    """Whether the text after ``#include`` names a standard header (``<math.h>``)."""
    m = re.fullmatch(r"<\s*([\w./]+)\s*>", rest.strip())
    return m is not None and m.group(1) in STANDARD_HEADERS


def includes_own_header(text: str) -> bool:
    """Whether kernel text includes a header that is not a standard one (``#include "x.h"``, or
    ``<x.h>`` found in the kernel's folder or an ``-I`` folder): a file whose parse depends on
    other files than itself. Comments are not removed (one in a comment only makes this True)."""
    return any(not standard_include(m.group(1)) for m in _INCLUDE.finditer(text))
