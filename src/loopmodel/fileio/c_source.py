"""C kernel text before and at parsing: comments, preprocessor lines, GNU spellings, the two
forms of a kernel file, and pycparser's errors as one line naming ``file:line:col``.

A kernel file is either Kerncraft's form, declarations and one loop nest at the top level
(kerncraft-tool-paper.txt §2.1), parsed wrapped in a function (:func:`wrap`), or a C function
whose body holds the loop nest (``void kernel(double *restrict a, int n) { for ... }``),
parsed as the translation unit it is (:func:`unit_source`; :mod:`loopmodel.fileio.c_function`).
:func:`function_form` tells them apart. Both sources start with one line of typedefs
(:func:`loopmodel.ir.ctypes.typedef_line`: ``size_t``, ``ptrdiff_t``, ``int64_t``, ... as
pycparser knows no headers), so a line of the source is one below its line in the file.

Preprocessor lines: ``#define NAME <integer>`` gives a size's default, ``#include`` of a
standard header is dropped (the generated program includes what it needs), ``#pragma`` of
OpenMP and the compilers' loop hints (:func:`loopmodel.fileio.c_pragma.kept`) is kept (read
into the typed pragma model, compiled with the loop nest as printed from it); another
``#pragma`` (``GCC optimize``, ``once``, ``acc``) is ignored with a note and left out of what
the compiler sees, except in OpenMP programs (:func:`wrap_source`), where it is an error.
Any other directive is an error.
"""
from __future__ import annotations

from dataclasses import dataclass

import re

from pycparser import c_parser

from ..errors import KernelError
from ..ir.ctypes import typedef_line
from .c_headers import STANDARD_HEADERS, standard_include
from .c_limits import check_depth, check_statement_tokens, define_value
from .c_preprocess import preprocess
from .c_pragma import kept

#: sequences that make a C compiler read other text than the kernel parser: a backslash at
#: the end of a line (line splice) and trigraphs (``??/`` is a backslash under -std=c99)
_SPLICE = re.compile(r"\\[ \t]*$", re.M)
_TRIGRAPH = re.compile(r"\?\?[=/'()!<>-]")
#: GNU spellings pycparser does not know -> the standard word (padded to the same length, so
#: that every column stays where it is)
_GNU_WORDS = {"__restrict__": "restrict", "__restrict": "restrict", "__inline__": "inline", "__inline": "inline"}
_GNU = re.compile(r"\b(?:" + "|".join(sorted(_GNU_WORDS, key=len, reverse=True)) + r")\b")
#: words before ``(`` at the top level that do not start a function definition
_NOT_FUNCTIONS = frozenset({"for", "while", "if", "switch", "return", "sizeof", "swap"})
_TOP_TOKENS = re.compile(r"[{}]|([A-Za-z_]\w*)\s*\(")
_C_INTEGER = re.compile(r"(?:0[xX](?P<hex>[0-9a-fA-F]+)|0[bB](?P<bin>[01]+)|(?P<oct>0[0-7]*)|(?P<dec>[1-9][0-9]*))"
                        r"[uUlL]*")


@dataclass(frozen=True)
class Prepared:
    """A kernel file's text ready for pycparser.

    Attributes:
        text: the text with comments and preprocessor lines blanked (kept ``#pragma`` lines
            stay) and GNU spellings replaced; every character at its line and column in the file.
        defaults: ``#define NAME <integer>`` values (name -> int).
        ignored: ``(line, pragma text)`` of each ``#pragma`` left out (not :func:`~.c_pragma.kept`).
    """

    text: str
    defaults: dict
    ignored: tuple


def check_compiler_view(text: str, filename: str) -> None:
    """Refuse text that a C compiler would read differently from this front-end.

    A line splice (backslash-newline) joins lines before comments are removed, and a trigraph
    becomes another character, in a C compiler but not in this front-end: with them a comment
    here would be code there. The compiled program holds the nest printed from the syntax tree
    (:mod:`loopmodel.fileio.c_print`), so nothing of such text would reach a compiler; the
    refusal keeps what this front-end models the code a C compiler would read in the file.

    Raises:
        KernelError: the first such sequence (``file:line:col``).
    """
    for pattern, what in ((_SPLICE, "a line splice (backslash at the end of a line)"),
                          (_TRIGRAPH, "a trigraph (??x)")):
        m = pattern.search(text)
        if m:
            line = text.count("\n", 0, m.start()) + 1
            col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            raise KernelError(f"{what} is not supported: join the lines / write the character", file=filename,
                              line=line, col=col)


def strip_comments(text: str) -> str:
    """Remove C comments, keeping line/column positions of everything else."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"/\*.*?\*/|//[^\n]*", blank, text, flags=re.S)


def needs_preprocessor(text: str) -> bool:
    """Whether comment-free kernel text has a directive beyond the forms :func:`prepare` reads
    itself (``#define NAME <integer>``, ``#include`` of a standard header, ``#pragma``): then the
    C preprocessor reads it (:mod:`loopmodel.fileio.c_preprocess`)."""
    for m in re.finditer(r"^[ \t]*#[ \t]*(\w*)(.*)$", text, re.M):
        directive, rest = m.group(1), m.group(2).strip()
        if directive == "pragma":
            continue
        if directive == "define" and re.fullmatch(r"\w+\s+[0-9]+", rest, re.ASCII):
            continue
        if directive == "include" and standard_include(rest):
            continue
        return True
    return False


def prepare(text: str, filename: str, strict_pragmas: bool = False, source=None) -> Prepared:
    """Kernel file text -> :class:`Prepared` (see the module text).

    Args:
        strict_pragmas: refuse a ``#pragma`` that is not kept (OpenMP programs) instead
            of ignoring it.
        source: the :class:`~loopmodel.ir.kernel_source.KernelSource` read (its ``-I`` folders
            and ``-D`` sizes), for text that needs the C preprocessor (:func:`needs_preprocessor`);
            None: nothing but the kernel file.

    Raises:
        KernelError: another preprocessor directive, include or (``strict_pragmas``) pragma, a
            line splice or trigraph (:func:`check_compiler_view`), an empty file, or a
            statement of more than :data:`~loopmodel.fileio.c_limits.MAX_STATEMENT_TOKENS`
            tokens (``file:line:col``).
    """
    check_compiler_view(text, filename)
    text = strip_comments(text)
    check_statement_tokens(text, filename)
    if not strict_pragmas and needs_preprocessor(text):
        return _preprocessed(text, filename, source)
    defaults: dict = {}
    ignored = []
    lines = text.split("\n")
    for n, line in enumerate(lines, 1):
        s = line.strip()
        if not s.startswith("#"):
            continue
        m = re.match(r"#\s*(\w+)\s*(.*)", s)
        directive, col = m.group(1) if m else "", line.index("#") + 1
        if directive == "pragma" and kept(m.group(2)):
            continue
        if directive == "pragma" and not strict_pragmas:
            ignored.append((n, m.group(2).strip()))
        elif directive == "pragma":
            raise KernelError(f"'#pragma {m.group(2).strip()}' is not supported: only OpenMP pragmas and loop hints "
                              "(simd, ivdep, vector, unroll, GCC ivdep/unroll, clang loop)", file=filename, line=n,
                              col=col)
        elif directive == "include":
            _check_include(m.group(2), filename, n, col)
        elif directive == "define":
            dm = re.match(r"(\w+)\s+([0-9]+)\s*$", m.group(2), re.ASCII)
            if not dm:
                raise KernelError("only '#define NAME <integer>' is supported (a size and its default)",
                                  file=filename, line=n, col=col)
            defaults[dm.group(1)] = define_value(dm.group(1), dm.group(2), filename, n, col)
        else:
            raise KernelError(f"preprocessor directive '#{directive}' is not supported (accepted: #define NAME "
                              "<integer>, #include of a standard header, #pragma)", file=filename, line=n, col=col)
        lines[n - 1] = " " * len(line)
    return _prepared(lines, defaults, ignored, filename)


def _prepared(lines: list, defaults: dict, ignored: list, filename: str) -> Prepared:
    """The :class:`Prepared` of kernel lines whose directives are dealt with: GNU spellings
    replaced (each in its own columns).

    Raises:
        KernelError: no line but the preprocessor's ``#line`` markers holds anything (an empty file).
    """
    if not any(line.strip() and not line.startswith("#line") for line in lines):
        raise KernelError("kernel file is empty", file=filename)
    text = _GNU.sub(lambda w: _GNU_WORDS[w.group()].ljust(len(w.group())), "\n".join(lines))
    return Prepared(text, defaults, tuple(ignored))


def _preprocessed(text: str, filename: str, source) -> Prepared:
    """:func:`prepare` of text that needs the C preprocessor: its output, whose pragmas are kept
    or ignored as :func:`prepare` does (their lines named by the ``#line`` markers)."""
    out, defaults = preprocess(text, filename, tuple(getattr(source, "include_dirs", ())),
                               dict(getattr(source, "sizes", ())), tuple(getattr(source, "macros", ())))
    lines, ignored, line, where = out.split("\n"), [], 0, filename
    for k, row in enumerate(lines):
        marker = re.match(r'#line (\d+)(?: "([^"]*)")?', row)
        if marker:
            line, where = int(marker.group(1)) - 3, marker.group(2) or where
        line += 1
        m = re.match(r"\s*#\s*pragma\s+(.*)", row)
        if m and not kept(m.group(1)):
            ignored.append((line, m.group(1).strip()) if where == filename else (line, f"{m.group(1).strip()} "
                                                                                       f"(in {where})"))
            lines[k] = ""
    return _prepared(lines, defaults, ignored, filename)


def wrap_source(text: str, filename: str) -> tuple:
    """Kernel-style C text of an OpenMP program -> ``(source, defaults)``: the prepared text
    (:func:`prepare`, pragmas strict) wrapped in a function for pycparser (:func:`wrap`), and
    the ``#define NAME <integer>`` defaults.

    Raises:
        KernelError: see :func:`prepare`.
    """
    prepared = prepare(text, filename, strict_pragmas=True)
    return wrap(prepared.text), prepared.defaults


def wrap(text: str) -> str:
    """Prepared top-level statements -> a translation unit: the typedef line (the typedef names
    ``text`` uses) and the head of a function, then the statements in that function
    (:func:`parse_source` returns its body)."""
    return typedef_line(text) + " void __loopmodel_kernel(void) {\n" + text + "\n}\n"


def unit_source(text: str) -> str:
    """A prepared translation unit (a kernel function) -> pycparser's source: the typedef
    line (the typedef names ``text`` uses), then the text."""
    return typedef_line(text) + "\n" + text + "\n"


def function_form(text: str) -> bool:
    """Whether prepared kernel text defines a function: at the top level (outside braces) a
    name, a parenthesised list and ``{`` (``void kernel(double *a, int n) {``); loops,
    ``swap(x, y);`` and calls are not definitions."""
    depth = 0
    for m in _TOP_TOKENS.finditer(text):
        token = m.group()
        if token in "{}":
            depth += 1 if token == "{" else -1
        elif depth == 0 and m.group(1) not in _NOT_FUNCTIONS:
            close = matching(text, m.end() - 1, "(", ")")
            if close is not None and text[close + 1:].lstrip().startswith("{"):
                return True
    return False


def matching(text: str, start: int, opening: str, closing: str) -> int | None:
    """The offset of the ``closing`` bracket that matches the ``opening`` one at ``start``
    (prepared text: no comments), or None where it is missing."""
    depth = 0
    for k in range(start, len(text)):
        if text[k] == opening:
            depth += 1
        elif text[k] == closing:
            depth -= 1
            if depth == 0:
                return k
    return None


def c_integer(text: str) -> int | None:
    """The value of a C integer literal (``10``, ``0x1F``, ``017`` octal, ``0b101``, with
    ``u``/``l`` suffixes), or None when ``text`` is not one (``09``)."""
    m = _C_INTEGER.fullmatch(text)
    if m is None:
        return None
    base, digits = next((b, m.group(g)) for g, b in (("hex", 16), ("bin", 2), ("oct", 8), ("dec", 10))
                        if m.group(g) is not None)
    return int(digits, base)


def _check_include(rest: str, filename: str, line: int, col: int) -> None:
    if not standard_include(rest):
        raise KernelError(f"'#include {rest.strip()}' is not supported: only standard headers "
                          f"({', '.join(sorted(STANDARD_HEADERS))}) may be included, and are ignored",
                          file=filename, line=line, col=col)


def parse_unit(source: str, filename: str, parser=None):
    """A source of :func:`wrap` or :func:`unit_source` -> pycparser's ``FileAST``.

    Args:
        parser: a ``pycparser.c_parser.CParser`` to use (a new one if None).

    Raises:
        KernelError: a syntax error (``file:line:col`` where pycparser gives one), or an
            expression deeper than :data:`~loopmodel.fileio.c_limits.MAX_EXPRESSION_DEPTH`.
    """
    try:
        ast = (parser or c_parser.CParser()).parse(source, filename)
    except Exception as exc:  # pycparser raises ParseError (and sometimes others)
        msg = str(exc)
        m = re.match(r"(.*?):(\d+):(\d+):\s*(.*)", msg)
        if m:  # the file is the kernel's, or a header's (the preprocessor's #line markers name it)
            line, col, what = int(m.group(2)) - 1, int(m.group(3)), m.group(4)
            if what.startswith("before:"):
                what = f"syntax error before '{what[7:].strip()}'"
            raise KernelError(what, file=m.group(1) or filename, line=max(line, 1), col=col) from None
        raise KernelError("syntax error: " + msg.split(": ", 1)[-1], file=filename) from None
    check_depth(ast, filename, line_shift=-1)
    return ast


def parse_source(source: str, filename: str, parser=None) -> list:
    """A source from :func:`wrap` -> the wrapped function's statement nodes (:func:`parse_unit`).

    Raises:
        KernelError: see :func:`parse_unit`.
    """
    return parse_unit(source, filename, parser).ext[-1].body.block_items or []
