"""The C preprocessor of kernel files that need one: ``#if``/``#ifdef``/``#ifndef``,
``#define`` with function-like macros, ``#include`` of the user's own headers (PolyBench's
``polybench.h`` and ``gemm.h``, STREAM's ``#ifndef STREAM_ARRAY_SIZE``).

It runs in-process (pcpp, a pure-Python C99 preprocessor) and reads no more than it is given:

* ``#include "x.h"`` and ``#include <x.h>`` are searched in the kernel file's folder and the
  folders given with ``-I`` only, and a header that resolves outside them (``../x.h``, a link)
  is refused; a standard header (:data:`loopmodel.fileio.c_headers.STANDARD_HEADERS`, the C
  library and POSIX ones) is skipped, as the generated program includes what it needs;
* every file is read by the bounded reader (:mod:`loopmodel.fileio.reader`), at most
  :data:`MAX_FILES` files and :data:`MAX_INCLUDED_BYTES` bytes in all, and macro expansion
  stops at :data:`MAX_TOKENS` tokens (a macro that doubles at each level ends in one line, not
  in an exhausted memory);
* sizes stay symbols: a ``-D NAME=VALUE`` size is defined for the preprocessor (``#ifdef``,
  ``defined(NAME)`` and ``#if NAME > 100`` see it) but stays the name ``NAME`` in the code, whose
  value the analysis takes from ``-D``; a ``#define NAME <integer>`` of the kernel file itself
  is Kerncraft's size default (kerncraft-tool-paper.txt §2.1: ``-D`` overrides it), kept as a
  symbol the same way. A macro of an included header expands as a C compiler expands it.

Nothing it reads reaches a compiler: the compiled program is printed from the parsed nest
(:mod:`loopmodel.fileio.c_print`). The output keeps ``#line`` markers, so that pycparser's
positions name the file and line each token came from (one line below it, as for every
kernel source: :func:`loopmodel.fileio.c_source.unit_source` puts a line of typedefs above).
"""
from __future__ import annotations

import io
import os
import re

from ..errors import KernelError
from .c_headers import STANDARD_HEADERS, standard_include
from .c_limits import define_value
from .reader import KERNEL_MAX_BYTES, read_text

#: most files a kernel may read through ``#include`` (a header including itself ends here)
MAX_FILES = 64
#: most bytes of all files read together
MAX_INCLUDED_BYTES = 4 * KERNEL_MAX_BYTES
#: most tokens macro expansion may produce, and most characters of the preprocessed text
MAX_TOKENS = 2_000_000
_LINE = re.compile(r'#line (\d+)( "[^"]*")?\s*$')


class _Limits(Exception):
    """Raised inside pcpp to stop it: the bound named in the message was reached."""


def preprocess(text: str, filename: str, include_dirs: tuple = (), sizes: dict | None = None,
               macros: tuple = ()) -> tuple:
    """Kernel text -> ``(text, defaults)``: the preprocessed translation unit with ``#line``
    markers (one above the file's line, see the module text) and the kernel file's own
    ``#define NAME <integer>`` defaults.

    Args:
        include_dirs: the ``-I`` folders, searched after the kernel's own.
        sizes: the ``-D`` sizes (name -> int, or None for one given several values: defined, but an
            ``#if`` on its value is refused).
        macros: names defined as 1 (``-D NAME`` without a value).

    Raises:
        KernelError: ``#error``, an unknown directive, a header not found or outside the
            folders, a malformed directive or expression, or a bound reached (one line naming
            the file and line).
    """
    pp = _make(filename, include_dirs, sizes or {})
    for name in macros:
        pp.define(f"{name} 1")
    try:
        pp.parse(text, source=filename)
        out = _Bounded()
        pp.write(out)
    except _Limits as exc:
        raise KernelError(str(exc), file=filename) from None
    except RecursionError:
        raise KernelError("the preprocessor's macro expansion nests too deeply", file=filename) from None
    return _shift_lines(out.getvalue().replace(f'"{pp.main}"', f'"{filename}"')), dict(pp.defaults)


def _shift_lines(text: str) -> str:
    """Every ``#line N`` marker to ``N + 1`` (the typedef line above the source)."""
    return "\n".join(_LINE.sub(lambda m: f"#line {int(m.group(1)) + 1}{m.group(2) or ''}", line)
                     if line.startswith("#line") else line for line in text.split("\n"))


class _Bounded(io.StringIO):
    """A text buffer that refuses to grow past :data:`MAX_TOKENS` characters."""

    def write(self, s: str) -> int:
        if self.tell() + len(s) > MAX_TOKENS:
            raise _Limits(f"the preprocessed kernel is longer than {MAX_TOKENS} characters: not read further")
        return super().write(s)


def _make(filename: str, include_dirs: tuple, sizes: dict):
    """A pcpp preprocessor with :class:`_Hooks`; pcpp (45 ms to import) is imported here, for the
    kernels that need it only."""
    from pcpp.preprocessor import Action, OutputDirective, Preprocessor
    cls = type("KernelPreprocessor", (_Hooks, Preprocessor),
               {"removed": staticmethod(lambda: OutputDirective(Action.IgnoreAndRemove))})
    return cls(filename, include_dirs, sizes)


class _Hooks:
    """pcpp's hooks with the bounds and the size rules of the module text (mixed into pcpp's
    ``Preprocessor`` by :func:`_make`, which gives :meth:`removed`: the exception that drops a
    directive)."""

    def __init__(self, filename: str, include_dirs: tuple, sizes: dict):
        super().__init__()
        self.filename = filename
        self.sizes = sizes
        self.defaults: dict = {}
        self.files = 0
        self.bytes = 0
        self.tokens = 0
        own = os.path.dirname(os.path.abspath(filename))
        self.allowed = tuple(dict.fromkeys(os.path.realpath(d) for d in (own,) + tuple(include_dirs)))
        for folder in (own,) + tuple(include_dirs):
            self.add_path(folder)
        self.rewrite_paths = []  # every token's source is its file's absolute path (``main`` for the kernel's)
        self.main = os.path.abspath(filename)
        for name in sizes:
            self.define(f"{name} {name}")

    # errors and directives ------------------------------------------------------------------
    def _fail(self, message: str, source=None, line=None):
        raise KernelError(message, file=self.filename if source in (None, self.main) else source, line=line or None)

    def on_error(self, file, line, msg):
        self._fail(msg, file, line)

    def on_directive_unknown(self, directive, toks, ifpassthru, precedingtoks):
        rest = "".join(t.value for t in toks).strip()
        if directive.value == "pragma":
            return None  # passed through: read as the kernel's pragma (kept or ignored with a note)
        if directive.value == "error":
            self._fail(f"#error {rest}", directive.source, directive.lineno)
        if directive.value == "warning":
            return True
        self._fail(f"preprocessor directive '#{directive.value}' is not supported", directive.source,
                   directive.lineno)

    def on_directive_handle(self, directive, toks, ifpassthru, precedingtoks):
        super().on_directive_handle(directive, toks, ifpassthru, precedingtoks)
        if directive.value == "include" and self._standard(toks):
            raise self.removed()
        return True

    def _standard(self, toks) -> bool:
        name = "".join(t.value for t in toks).strip()
        return standard_include(name) or name[:1] == '"' and name[1:-1].strip() in STANDARD_HEADERS

    def define(self, tokens):
        """pcpp's ``#define`` (called where the directive is live), with the kernel file's own
        ``#define NAME <integer>`` a size default whose name stays (module text)."""
        if not isinstance(tokens, str) and tokens and getattr(tokens[0], "source", None) == self.main:
            words = [t.value for t in tokens if t.type not in self.t_WS]
            if len(words) == 2 and re.fullmatch(r"[A-Za-z_]\w*", words[0]) and re.fullmatch(r"[0-9]+", words[1]):
                self.defaults[words[0]] = define_value(words[0], words[1], self.filename, tokens[0].lineno, None)
                tokens = f"{words[0]} {words[0]}"
        return super().define(tokens)

    def on_include_not_found(self, is_malformed, _system, _curdir, includepath):
        what = "malformed #include" if is_malformed else f"'#include {includepath}' not found"
        self._fail(f"{what} (searched: the kernel's folder and the -I folders; standard headers are skipped)",
                   self.lastdirective.source, self.lastdirective.lineno)

    def on_unknown_macro_in_expr(self, ident):
        if ident in self.sizes and self.sizes[ident] is None:
            self._fail(f"#if on the value of '{ident}', which -D gives several values: preprocess once per size",
                       self.lastdirective.source, self.lastdirective.lineno)
        return self.sizes.get(ident, self.defaults.get(ident, 0))

    # bounded reading -----------------------------------------------------------------------
    def on_file_open(self, _system, includepath):
        if not os.path.isfile(includepath):
            raise IOError(includepath)
        real = os.path.realpath(includepath)
        if not any(real == d or real.startswith(d + os.sep) for d in self.allowed):
            self._fail(f"'{includepath}' is outside the kernel's folder and the -I folders: not read",
                       self.lastdirective.source, self.lastdirective.lineno)
        self.files += 1
        if self.files > MAX_FILES:
            raise _Limits(f"more than {MAX_FILES} #include files (a header including itself?)")
        data = read_text(includepath, "header", KernelError, KERNEL_MAX_BYTES)
        self.bytes += len(data)
        if self.bytes > MAX_INCLUDED_BYTES:
            raise _Limits(f"the included headers hold more than {MAX_INCLUDED_BYTES} bytes: not read")
        return io.StringIO(data)

    def expand_macros(self, tokens, expanding_from=[]):  # noqa: B006 (pcpp's signature)
        out = super().expand_macros(tokens, expanding_from)
        self.tokens += len(out)
        if self.tokens > MAX_TOKENS:
            raise _Limits(f"macro expansion produced more than {MAX_TOKENS} tokens")
        return out
