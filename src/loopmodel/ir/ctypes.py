"""The C types of kernel arrays and scalars: their spelling and their size in bytes.

A kernel's array element type sets the bytes each access moves (traffic, layer conditions,
ECM; kerncraft-tool-paper.txt §2.1 "the type ... determines the size of the elements"). Sizes
are those of the LP64 data model of 64-bit Linux and macOS (``long`` and pointers 8 B), the
model of every machine loopmodel describes.

:func:`type_name` turns the words of a declaration (``unsigned long int``, ``long long``,
``const size_t``) into one spelling (``unsigned long``, ``long long``, ``size_t``), which is
also how the generated program declares the array (:mod:`loopmodel.compiled.codegen`).
"""
from __future__ import annotations

import re

#: bytes of each floating-point element type
FLOAT_BYTES = {"double": 8, "float": 4}
#: bytes of each integer type, by its spelling (:func:`type_name`); the typedef names are those of
#: :data:`TYPEDEFS`
INTEGER_BYTES = {"char": 1, "signed char": 1, "unsigned char": 1, "short": 2, "unsigned short": 2, "int": 4, "unsigned int": 4, "long": 8, "unsigned long": 8,
                 "long long": 8, "unsigned long long": 8, "size_t": 8, "ptrdiff_t": 8, "ssize_t": 8,
                 "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8}
#: bytes of every element type an array may have
TYPE_BYTES = {**FLOAT_BYTES, **INTEGER_BYTES}
#: the standard typedef names a kernel may use, with their LP64 definition and the header that
#: declares them (a generated program includes it where the kernel uses the name)
TYPEDEFS = {"size_t": ("unsigned long", "stddef.h"), "ptrdiff_t": ("long", "stddef.h"),
            "ssize_t": ("long", "sys/types.h"), "int32_t": ("int", "stdint.h"), "uint32_t": ("unsigned int", "stdint.h"),
            "int64_t": ("long", "stdint.h"), "uint64_t": ("unsigned long", "stdint.h")}
#: words of a declaration that do not change the type (qualifiers, storage, function specifiers)
QUALIFIERS = frozenset({"const", "restrict", "volatile", "static", "extern", "register", "inline", "auto"})


def type_name(words) -> str | None:
    """The spelling of the C type of declaration words (pycparser's ``IdentifierType.names``
    with qualifiers), or None for a type that is not one of :data:`TYPE_BYTES` (``_Bool``, ``long double``, ``void``, a struct).

    ``["unsigned"]`` -> ``"unsigned int"``, ``["long", "int"]`` -> ``"long"``,
    ``["long", "unsigned", "long"]`` -> ``"unsigned long long"``, ``["signed"]`` -> ``"int"``.
    """
    names = [w for w in words if w not in QUALIFIERS]
    if len(names) == 1 and names[0] in TYPE_BYTES:
        return names[0]
    if "char" in names and len(names) == 2 and names[0] in ("signed", "unsigned"):
        return f"{names[0]} char"
    if not names or any(w not in ("signed", "unsigned", "short", "long", "int") for w in names):
        return None
    longs, unsigned = names.count("long"), "unsigned" in names
    if longs > 2 or ("short" in names and longs) or ("signed" in names and unsigned) or names.count("int") > 1:
        return None
    base = "short" if "short" in names else ("long " * longs).strip() or "int"
    return f"unsigned {base}" if unsigned else base


def is_integer(ctype: str) -> bool:
    """Whether ``ctype`` (a spelling of :func:`type_name`) is an integer type."""
    return ctype in INTEGER_BYTES


def headers(words) -> tuple:
    """The headers that declare the typedef names among ``words`` (sorted, each once)."""
    return tuple(sorted({TYPEDEFS[w][1] for w in words if w in TYPEDEFS}))


def typedef_line(text: str | None = None) -> str:
    """The typedefs of :data:`TYPEDEFS` as one line of C (for a parser that knows no headers):
    those whose names occur in ``text`` as words (all where ``text`` is None)."""
    return " ".join(f"typedef {base} {name};" for name, (base, _) in TYPEDEFS.items()
                    if text is None or re.search(rf"\b{name}\b", text))
