"""``#pragma`` lines of kernels and OpenMP programs as a typed model, printed from that model.

A compiled program never holds a pragma's text as the user wrote it: :func:`parse_pragma`
reads it into a :class:`KernelPragma` (directive words and typed clauses) and
:meth:`KernelPragma.text` prints it again. What the model cannot represent is refused in
one line, so an argument that the compiler would evaluate (``num_threads(system("..."))``,
``if(...)``, ``schedule(dynamic, f())``) cannot reach it. docs/reference/trust.md states the
rule.

Accepted (every integer a decimal literal within the bounds given):

* OpenMP (``omp``): ``parallel for [simd]``, ``for [simd]``, ``simd``, ``parallel``,
  ``master``, ``masked``, ``single``, ``barrier``; clauses ``schedule(kind[, chunk])``
  (static, dynamic, guided, auto, runtime), ``num_threads(n)``, ``collapse(n)``,
  ``safelen(n)``, ``simdlen(n)``, ``reduction([modifier,] op: names)``, ``private``,
  ``firstprivate``, ``lastprivate``, ``shared``, ``copyprivate`` (names), ``linear(names[:
  step])``, ``aligned(names[: bytes])``, ``default(shared|none)``, ``proc_bind(close|spread|
  master|primary)``, ``nowait``;
* GCC: ``GCC unroll n`` (0..:data:`MAX_UNROLL`), ``GCC ivdep``, ``GCC novector``;
* clang: ``clang loop`` with ``vectorize``/``interleave``/``unroll``/``distribute``
  ``(enable|disable|assume_safety|full)`` and ``vectorize_width``/``interleave_count``/
  ``unroll_count(n)``;
* the Intel compilers' loop hints: ``ivdep``, ``novector``, ``vector [always|aligned|
  unaligned|temporal|nontemporal]``, ``simd``, ``unroll [(n)]`` (or ``unroll n``), ``nounroll``,
  ``loop_count(n[, n...])``.

Other pragmas (``GCC optimize``, ``once``, ``acc``) are not kernel pragmas: :func:`kept`
says so, and the front-ends leave them out with a note (or refuse them in OpenMP programs).
"""
from __future__ import annotations

from dataclasses import dataclass

import re

from ..errors import KernelError

#: the largest unroll factor a pragma may ask for (gcc accepts 65534, and compiles for minutes)
MAX_UNROLL = 64
#: the largest of the other integer arguments (threads, vector lengths, alignments, chunks)
MAX_ARGUMENT = 1 << 20

#: first words of the pragmas a kernel keeps (OpenMP and the compilers' loop hints)
_KEPT = re.compile(r"(?:omp|simd|ivdep|novector|vector|unroll|nounroll|loop_count|"
                   r"GCC\s+(?:ivdep|unroll|novector)|clang\s+loop)\b")
_TOKEN = re.compile(r"\s*(?:(?P<word>[A-Za-z_]\w*)|(?P<int>[0-9]+)|(?P<op>&&|\|\||[-+*&|^(),:]))")

OMP_DIRECTIVES = frozenset({"parallel for", "parallel for simd", "for", "for simd", "simd", "parallel", "master",
                            "masked", "single", "barrier"})
_SCHEDULES = ("static", "dynamic", "guided", "auto", "runtime")
_REDUCTIONS = ("+", "-", "*", "&", "|", "^", "&&", "||", "max", "min")
_LISTS = ("private", "firstprivate", "lastprivate", "shared", "copyprivate")
_INTEGERS = {"num_threads": (1, 4096), "collapse": (1, 16), "safelen": (1, MAX_ARGUMENT),
             "simdlen": (1, MAX_ARGUMENT)}
_WORDS = {"default": ("shared", "none"), "proc_bind": ("close", "spread", "master", "primary")}
_CLANG_WORDS = {"vectorize": ("enable", "disable", "assume_safety"), "interleave": ("enable", "disable"),
                "unroll": ("enable", "disable", "full"), "distribute": ("enable", "disable"),
                "vectorize_predicate": ("enable", "disable")}
_CLANG_INTEGERS = {"vectorize_width": (1, 1024), "interleave_count": (1, 64), "unroll_count": (1, MAX_UNROLL)}
_VECTOR_WORDS = ("always", "aligned", "unaligned", "temporal", "nontemporal")


@dataclass(frozen=True)
class Clause:
    """One clause: ``name`` and ``args``, the printed arguments (words, integers and name
    lists already checked; ``()`` for a bare clause such as ``nowait``).

    ``names`` are the variables the clause lists (to be checked against the program's)."""

    name: str
    args: tuple = ()
    names: tuple = ()

    def text(self) -> str:
        return f"{self.name}({''.join(self.args)})" if self.args else self.name


@dataclass(frozen=True)
class KernelPragma:
    """A pragma of the typed model: ``family`` (``omp``, ``GCC``, ``clang`` or ``""`` for the
    Intel hints), ``directive`` (its words, ``"parallel for"``, ``"unroll"``, ``"loop"``) and
    ``clauses``."""

    family: str
    directive: str
    clauses: tuple = ()

    def text(self) -> str:
        """The pragma as printed into a compiled program (after ``#pragma``)."""
        head = " ".join(w for w in (self.family, self.directive) if w)
        return " ".join([head] + [c.text() for c in self.clauses])

    def names(self) -> tuple:
        """The variables its clauses name."""
        return tuple(n for c in self.clauses for n in c.names)

    def clause(self, name: str):
        """The first clause called ``name``, or None."""
        return next((c for c in self.clauses if c.name == name), None)


def kept(text: str) -> bool:
    """Whether ``text`` (a pragma's text after ``#pragma``) is a kernel pragma (OpenMP or a loop
    hint) rather than one the front-ends leave out (``GCC optimize``, ``once``)."""
    return _KEPT.match(text.strip()) is not None


def parse_pragma(text: str, filename: str = "<kernel>", line: int | None = None) -> KernelPragma:
    """A kernel pragma's text (after ``#pragma``; :func:`kept` true) -> :class:`KernelPragma`.

    Raises:
        KernelError: anything the typed model does not represent (module docstring): an
            unknown directive or clause, an argument that is not a literal of its kind, an
            integer out of its bounds (one line naming ``filename:line``).
    """
    reader = _Reader(text, filename, line)
    head = reader.word("a pragma name")
    if head == "omp":
        return _omp(reader)
    if head == "GCC":
        return _gcc(reader)
    if head == "clang":
        return _clang(reader)
    return _intel(head, reader)


def pragma_string(node, filename: str = "<kernel>") -> str:
    """The text of a pycparser ``Pragma`` node: ``#pragma TEXT`` gives TEXT, and ``_Pragma("TEXT")``
    (whose node holds the string literal) the literal's content.

    Raises:
        KernelError: a ``_Pragma`` string with escape sequences (naming the line).
    """
    value = node.string
    if isinstance(value, str):
        return value.strip()
    literal = getattr(value, "value", "")
    coord = getattr(node, "coord", None)
    if not (literal.startswith('"') and literal.endswith('"')) or "\\" in literal:
        raise KernelError("_Pragma takes a plain string literal (no escape sequences)", file=filename,
                          line=coord.line - 1 if coord and coord.line else None)
    return literal[1:-1].strip()


class _Reader:
    """The tokens of a pragma's text (words, decimal integers, operators), read in order."""

    def __init__(self, text: str, filename: str, line: int | None):
        self.source, self.filename, self.line = " ".join(text.split()), filename, line
        self.tokens, pos = [], 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m:
                if text[pos:].strip():
                    raise self.error(f"cannot read '{' '.join(text[pos:].split())[:40]}' (a pragma's arguments are "
                                     "names, decimal integer literals and ( ) , : or an operator)")
                break
            self.tokens.append((m.lastgroup, m.group(m.lastgroup)))
            pos = m.end()
        self.pos = 0

    def error(self, why: str) -> KernelError:
        shown = self.source if len(self.source) <= 80 else self.source[:77] + "..."
        return KernelError(f"'#pragma {shown}': {why}", file=self.filename, line=self.line)

    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def done(self) -> bool:
        return self.pos >= len(self.tokens)

    def take(self, kind: str, what: str) -> str:
        if self.done() or self.tokens[self.pos][0] != kind:
            found = self.peek()
            raise self.error(f"expected {what}" + (f", found '{found}'" if found is not None else ""))
        self.pos += 1
        return self.tokens[self.pos - 1][1]

    def word(self, what: str) -> str:
        return self.take("word", what)

    def op(self, symbol: str) -> None:
        if self.peek() != symbol:
            found = self.peek()
            raise self.error(f"expected '{symbol}'" + (f", found '{found}'" if found is not None else ""))
        self.pos += 1

    def accept(self, symbol: str) -> bool:
        if self.peek() == symbol:
            self.pos += 1
            return True
        return False

    def integer(self, what: str, bounds: tuple) -> int:
        text = self.take("int", f"an integer literal for {what}")
        value = int(text)
        lo, hi = bounds
        if not lo <= value <= hi:
            raise self.error(f"{what} is {value}; accepted {lo}..{hi}")
        return value

    def choice(self, what: str, words) -> str:
        word = self.word(f"{what} ({', '.join(words)})")
        if word not in words:
            raise self.error(f"{what} '{word}' is not one of {', '.join(words)}")
        return word

    def names(self, what: str) -> tuple:
        out = [self.word(f"a variable name in {what}")]
        while self.accept(","):
            out.append(self.word(f"a variable name in {what}"))
        return tuple(out)


def _omp(r: _Reader) -> KernelPragma:
    words = []
    while not r.done() and r.peek() in ("parallel", "for", "simd", "master", "masked", "single", "barrier"):
        words.append(r.word("a directive"))
    directive = " ".join(words)
    if directive not in OMP_DIRECTIVES:
        raise r.error(f"'omp {directive or r.peek() or ''}' is not a supported directive "
                      f"({', '.join(sorted(OMP_DIRECTIVES))})")
    clauses = []
    while not r.done():
        r.accept(",")
        clauses.append(_omp_clause(r))
    return KernelPragma("omp", directive, tuple(clauses))


def _omp_clause(r: _Reader) -> Clause:
    name = r.word("a clause")
    if name == "nowait":
        return Clause(name)
    r.op("(")
    clause = _omp_arguments(r, name)
    r.op(")")
    return clause


def _omp_arguments(r: _Reader, name: str) -> Clause:
    if name == "schedule":
        kind = r.choice("the schedule kind", _SCHEDULES)
        if r.accept(","):
            return Clause(name, (kind, ", ", str(r.integer("the chunk size", (1, MAX_ARGUMENT)))))
        return Clause(name, (kind,))
    if name in _INTEGERS:
        return Clause(name, (str(r.integer(name, _INTEGERS[name])),))
    if name in _WORDS:
        return Clause(name, (r.choice(name, _WORDS[name]),))
    if name in _LISTS:
        names = r.names(name)
        return Clause(name, (", ".join(names),), names)
    if name == "reduction":
        return _reduction(r)
    if name in ("linear", "aligned"):
        names = r.names(name)
        if r.accept(":"):
            step = r.integer("the linear step" if name == "linear" else "the alignment", (1, MAX_ARGUMENT))
            return Clause(name, (", ".join(names), ": ", str(step)), names)
        return Clause(name, (", ".join(names),), names)
    raise r.error(f"clause '{name}' is not supported (schedule, num_threads, collapse, reduction, private, "
                  "firstprivate, lastprivate, shared, default, proc_bind, linear, aligned, safelen, simdlen, nowait)")


def _reduction(r: _Reader) -> Clause:
    """``reduction([inscan|task|default,] op: names)``."""
    modifier = ""
    if r.peek() in ("inscan", "task", "default"):
        modifier = r.word("a modifier") + ", "
        r.op(",")
    op = r.peek()
    if op in ("&", "|", "^", "+", "-", "*", "&&", "||"):
        r.pos += 1
    else:
        op = r.choice("the reduction operator", ("max", "min"))
    r.op(":")
    names = r.names("reduction")
    return Clause("reduction", (modifier, op, ": ", ", ".join(names)), names)


def _gcc(r: _Reader) -> KernelPragma:
    what = r.choice("the GCC loop pragma", ("unroll", "ivdep", "novector"))
    if what == "unroll":
        n = r.integer("the unroll factor", (0, MAX_UNROLL))
        _end(r)
        return KernelPragma("GCC", f"unroll {n}")
    _end(r)
    return KernelPragma("GCC", what)


def _clang(r: _Reader) -> KernelPragma:
    r.choice("the clang pragma", ("loop",))
    clauses = []
    while not r.done():
        name = r.choice("the loop hint", tuple(_CLANG_WORDS) + tuple(_CLANG_INTEGERS))
        r.op("(")
        value = (r.choice(name, _CLANG_WORDS[name]) if name in _CLANG_WORDS
                 else str(r.integer(name, _CLANG_INTEGERS[name])))
        r.op(")")
        clauses.append(Clause(name, (value,)))
    if not clauses:
        raise r.error("'clang loop' needs a hint, e.g. vectorize(enable)")
    return KernelPragma("clang", "loop", tuple(clauses))


def _intel(head: str, r: _Reader) -> KernelPragma:
    if head in ("ivdep", "novector", "simd", "nounroll"):
        _end(r)
        return KernelPragma("", head)
    if head == "vector":
        words = []
        while not r.done():
            words.append(r.choice("the vector hint", _VECTOR_WORDS))
        return KernelPragma("", " ".join(["vector"] + words))
    if head == "unroll":  # unroll, unroll(n), unroll n (clang's spelling)
        if r.done():
            return KernelPragma("", "unroll")
        parenthesised = r.accept("(")
        n = r.integer("the unroll factor", (0, MAX_UNROLL))
        if parenthesised:
            r.op(")")
        _end(r)
        return KernelPragma("", f"unroll({n})")
    if head == "loop_count":
        r.op("(")
        counts = [str(r.integer("the loop count", (0, 1 << 62)))]
        while r.accept(","):
            counts.append(str(r.integer("the loop count", (0, 1 << 62))))
        r.op(")")
        _end(r)
        return KernelPragma("", f"loop_count({', '.join(counts)})")
    raise r.error(f"'{head}' is not a supported pragma (OpenMP, GCC unroll/ivdep/novector, clang loop, ivdep, "
                  "novector, vector, simd, unroll, nounroll, loop_count)")


def _end(r: _Reader) -> None:
    if not r.done():
        raise r.error(f"unexpected '{r.peek()}'")
