"""OpenMP program front end: a C file of loops with OpenMP pragmas, or a YAML description of
the same phases -> :class:`~loopmodel.ir.omp.OmpProgram`.

The program model of benchmark-based-coherence-model.txt §III-A: a program is a sequence of
phases, each a loop nest whose array accesses are affine in the loop variables (§II); a phase
is a static ``parallel for`` (the outermost loop shared among the threads), a sequential loop,
a ``master`` or a ``single`` section (both run on thread 0). An outer sequential loop around
phases whose variable indexes no array (a solver iteration) is kept as a
:class:`~loopmodel.ir.omp.Repeat`. Triangular bounds are widened to their box, with a note
(§III-A: "for triangular sequential loops, the chunks are then over-approximated").

C input is kernel-style (:func:`loopmodel.fileio.c_source.wrap_source`): declarations and
statements at top level, ``#define NAME <integer>`` defaults, ``-D`` values override::

    #define N 100000
    double x[N], y[N];
    double s;
    for (int i = 0; i < N; ++i) { x[i] = 1.0; y[i] = 2.0; }     // sequential: thread 0
    #pragma omp parallel for reduction(+:s) schedule(static)
    for (int i = 0; i < N; ++i)
        s += x[i] * y[i];

Scalar statements between loops (``alpha = rho / pq;``, and the initial value of a scalar
declaration) do not touch memory in the model (scalars live in registers) but must run in
the measurement harness in program order: they are put at the start of the ``code`` of the
next phase (before its pragma) or of the next repeat's ``code_head`` (before its ``for``);
those after the last phase of a repeat body end that phase's ``code``; those after the last
phase of the program are dropped with a note (nothing after them reads them). ``code`` and
``code_head`` have the ``#define`` values substituted, so they compile wherever the arrays
and scalars are declared with the same names.

Accesses: every array reference of a phase, statements in source order and, within a
statement, in execution order (the right-hand side's reads left to right, then the write; a
compound ``a[i] += ...`` reads ``a[i]`` first). A descending worksharing loop is modelled
ascending over the same indices (noted: a static schedule hands thread 0 the highest ones).
``OmpProgram.notes`` holds the program's notes (ignored non-OpenMP pragmas, dropped trailing
statements) followed by every phase's notes as ``"line N: ..."``.

OpenMP accepted: ``parallel for``, ``for`` (in a ``parallel`` block, or orphaned: one thread),
``master``/``masked``, ``single``, ``barrier`` between loops, ``simd`` (alone, in
``parallel for simd`` and ``for simd``: a no-op for the model); clauses ``schedule(static)``,
``reduction``, ``private``, ``firstprivate``, ``lastprivate``, ``shared``, ``default``,
``copyprivate``, ``nowait`` (noted: the model keeps the barrier) and the ``simd`` clauses.
Everything else (other schedules or a chunk size, ``num_threads``, ``collapse``, ``if``,
``ordered``, tasks, sections, ``critical``/``atomic``/``barrier`` inside loops) is an error.

Every error is a one-line :class:`~loopmodel.errors.KernelError` naming the file and line.
"""
from __future__ import annotations

import copy
import math
import re
from dataclasses import replace

import yaml
from pycparser import c_ast, c_generator, c_parser

from ..errors import KernelError
from ..ir.kernel import Loop
from ..ir.omp import PHASE_KINDS, AffineAccess, LoopBound, OmpArray, OmpProgram, Phase, Repeat
from ..ir.point import MAX_DATA_BYTES
from ..ir.poly import Poly
from .c_kernel import ALLOWED_CALLS, ARITY, COMPOUND, ELEMENT_SIZES, FUNCTIONS, SCALAR_TYPES, KernelBuilder, \
    read_kernel_text
from .c_pragma import parse_pragma, pragma_string
from .c_print import CodePrinter
from .c_source import parse_source, wrap_source
from .kernel_yaml import YAML_SUFFIXES, load_yaml_text, read_expression
from .omp_swept import SweptResolver

#: label length limit (characters)
LABEL_MAX = 48
#: the most phases a program may execute, repeats unrolled (each is timed and is a row of the report)
MAX_EXECUTED_PHASES = 10_000
#: directives a phase may carry (``parallel`` alone opens a block; ``simd`` is a no-op)
DIRECTIVES = {"parallel for", "parallel for simd", "for", "for simd", "parallel", "master", "masked",
              "single", "simd", "barrier"}
#: clauses accepted (``schedule`` only as ``schedule(static)``)
CLAUSES = {"schedule", "reduction", "private", "firstprivate", "lastprivate", "shared", "default", "nowait",
           "copyprivate"}
SIMD_CLAUSES = {"safelen", "simdlen", "aligned", "linear"}
#: the implicitly declared reduction identifiers of OpenMP for C (OpenMP 5.2 §5.5, reduction clauses)
REDUCTION_OPERATORS = ("+", "-", "*", "&", "|", "^", "&&", "||", "max", "min")
#: clauses a ``parallel`` region hands on to a worksharing loop taken out of it
_REGION_CLAUSES = {"private", "firstprivate", "shared", "default", "reduction"}
_WORKSHARING = {"parallel for", "for", "parallel", "master", "masked", "single"}
#: clauses written without parentheses (they end the directive words)
_BARE_CLAUSES = {"nowait", "untied", "mergeable", "nogroup", "ordered", "inbranch", "notinbranch"}
_WORD = re.compile(r"\s*([A-Za-z_]\w*)")
_CLAUSE = re.compile(r"[\s,]*([A-Za-z_]\w*)")


def read_omp_program(path, defines: dict | None = None) -> OmpProgram:
    """Read an OpenMP program: YAML description for ``.yml``/``.yaml``, C otherwise.

    Args:
        path: the file.
        defines: ``-D`` values (name -> int), overriding the file's ``#define`` / ``defines``.

    Returns:
        The :class:`OmpProgram` with every size concrete.

    Raises:
        KernelError: unreadable, malformed or unsupported file, or a bad ``-D`` value (one line).
    """
    text = read_kernel_text(path)
    if str(path).lower().endswith(YAML_SUFFIXES):
        return check_program_size(parse_omp_yaml(text, str(path), defines))
    return check_program_size(parse_omp_c(text, str(path), defines))


def check_program_size(program: OmpProgram) -> OmpProgram:
    """``program`` if the model can time it: its arrays fit a 64-bit address space and it
    executes at most :data:`MAX_EXECUTED_PHASES` phases (repeats unrolled: the model times and
    reports every executed phase).

    Raises:
        KernelError: arrays of more than 2**62 bytes, or too many executed phases (naming the
            repeat loop's line).
    """
    total = sum(a.element_size * math.prod(a.dims) for a in program.arrays.values())
    if total > MAX_DATA_BYTES:
        raise KernelError(f"the arrays take {total} bytes, more than 2**62 (4 EiB), which no 64-bit machine "
                          "addresses", file=program.source)
    executed = 0
    for item in program.items:
        executed += item.count * len(item.body) if isinstance(item, Repeat) else 1
        if executed > MAX_EXECUTED_PHASES:
            what = (f"the repeat loop runs {item.count} iterations of {len(item.body)} phase(s)"
                    if isinstance(item, Repeat) else "the program")
            raise KernelError(f"{what}: more than {MAX_EXECUTED_PHASES} executed phases, each of which the model "
                              "times and reports", file=program.source, line=item.line or None)
    return program


def read_omp_form(path, defines: dict, swept) -> OmpProgram:
    """The form of an OpenMP program (:mod:`loopmodel.fileio.omp_swept`): read once with the
    constants named in ``swept`` kept as symbols, the others at their ``defines`` values (which
    give every swept constant one of its values too: the form is read at that size).

    Raises:
        KernelError: what :func:`read_omp_program` raises at that size for the file.
        SizeDependent: a program whose integers are not plain polynomials of the swept
            constants (read it size by size).
    """
    text = read_kernel_text(path)
    swept = frozenset(swept)
    if str(path).lower().endswith(YAML_SUFFIXES):
        return parse_omp_yaml(text, str(path), defines, swept)
    return parse_omp_c(text, str(path), defines, swept)


def parse_omp_c(text: str, filename: str = "<program.c>", defines: dict | None = None,
                swept: frozenset = frozenset()) -> OmpProgram:
    """C program text -> :class:`OmpProgram` (see the module text); ``defines`` as in
    :func:`read_omp_program`; ``swept``: the form with those constants kept as symbols
    (:func:`read_omp_form`)."""
    text = _join_pragma_continuations(text)
    source, defaults = wrap_source(text, filename)
    parser = c_parser.CParser()
    try:
        items = parse_source(source, filename, parser)
    except KernelError as exc:
        _reject_function_definitions(text, filename)
        if exc.line is None:  # pycparser gave no position: the token it stopped at
            last = max(k for k, line in enumerate(text.split("\n"), 1) if line.strip())
            raise KernelError(exc.message, file=filename, line=_stop_line(parser, last)) from None
        raise
    values = _merge_defines(defaults, defines, filename)
    builder = _SweptC(filename, values) if swept else _CProgram(filename, values)
    builder.swept = swept
    return builder.build(items)


def parse_omp_yaml(text: str, filename: str = "<program.yml>", defines: dict | None = None,
                   swept: frozenset = frozenset()) -> OmpProgram:
    """YAML program description text -> :class:`OmpProgram`::

        arrays:  {x: {length: N, type: double}, A: {dims: [N, M], type: float}}
        scalars: {s: double}                      # optional
        phases:
          - {name: init, kind: sequential, loops: [{var: i, lo: 0, hi: N}],
             accesses: [{array: x, kind: write, index: "i"}]}
          - repeat: 3                              # optional 'var' (default iter)
            phases: [...]
        defines: {N: 100000}                       # defaults; -D overrides

    ``index``: an affine expression over loop variables and defines (the flat element index),
    or a list with one per dimension. ``label`` is the phase's ``name``; ``code`` is empty.
    ``swept`` as for :func:`parse_omp_c`.
    """
    data = load_yaml_text(text, filename)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:  # tags the SafeLoader does not know (already loaded): no line numbers
        root = None
    builder = _SweptYaml(filename, root) if swept else _YamlProgram(filename, root)
    builder.swept = swept
    return builder.build(data, defines)


# -- shared helpers ---------------------------------------------------------------------------

def _join_pragma_continuations(text: str) -> str:
    """``#pragma ... \\`` continued on the next lines -> one line (the others left blank)."""
    lines = text.split("\n")
    k = 0
    while k < len(lines):
        if lines[k].lstrip().startswith("#") and lines[k].rstrip().endswith("\\"):
            j = k
            while lines[j].rstrip().endswith("\\") and j + 1 < len(lines):
                lines[k] = lines[k].rstrip()[:-1] + " " + lines[j + 1].strip()
                lines[j + 1] = ""
                j += 1
            k = j
        k += 1
    return "\n".join(lines)


_FUNCTION_HEAD = re.compile(r"^\s*(?:(?:static|inline|extern|const|unsigned|signed|long|short|void|char|int|float|"
                            r"double)\s+\**\s*)+([A-Za-z_]\w*)\s*\([^;]*\)\s*\{?\s*$")


def _reject_function_definitions(text: str, filename: str) -> None:
    """A syntax error from a function definition -> a clearer one-line error (else return)."""
    for n, line in enumerate(text.split("\n"), 1):
        m = _FUNCTION_HEAD.match(line)
        if m:
            raise KernelError(f"function definitions are not supported (write the statements of "
                              f"'{m.group(1)}' at top level)", file=filename, line=n)


def _stop_line(parser, last: int) -> int | None:
    """The file line of the token a failed pycparser parse stopped at, at most ``last`` (the
    wrapper's closing brace is past the file's end); None if unknown."""
    try:
        tok = parser._peek()  # pycparser keeps its token stream after a ParseError
        return min(max(tok.lineno - 1, 1), last) if tok is not None else None
    except Exception:  # another pycparser version: no position rather than a traceback
        return None


def _merge_defines(defaults: dict, defines: dict | None, filename: str) -> dict:
    """``#define`` defaults overridden by ``-D`` values; the values must be integers >= 0."""
    values = dict(defaults)
    for name, value in (defines or {}).items():
        if isinstance(value, str) and re.fullmatch(r"\s*\d+\s*", value):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise KernelError(f"bad -D value {name}={value!r}: expected an integer >= 0", file=filename)
        if not isinstance(name, str) or not name.isidentifier():
            raise KernelError(f"bad -D name {name!r}", file=filename)
        values[name] = value
    return values


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LABEL_MAX else text[:LABEL_MAX - 3] + "..."


class _Resolver:
    """Integer expressions (:class:`Poly` over defines and loop variables) -> concrete values.

    ``scope`` is the list of enclosing :class:`LoopBound` (outermost first); a bound that
    depends on one of them is widened to the box it spans (a note is recorded). ``swept``: the
    defines kept as symbols (none here; :class:`~loopmodel.fileio.omp_swept.SweptResolver`).
    """

    swept: frozenset = frozenset()

    def __init__(self, defines: dict):
        self.defines = defines
        self.scope: list = []
        self.locals: set = set()

    def fail(self, where, message: str) -> KernelError:  # pragma: no cover - overridden
        raise NotImplementedError

    def resolve(self, poly: Poly, where, what: str) -> Poly:
        """``poly`` with the define values substituted; only loop variables may remain."""
        loop_vars = {lb.var for lb in self.scope}
        for sym in sorted(poly.symbols - loop_vars - set(self.defines)):
            if sym in self.locals:
                raise self.fail(where, f"variable '{sym}' in {what}; only defines and loop variables are allowed")
            raise self.fail(where, f"{sym} has no value: give -D {sym}=...")
        value = poly.subs(self.defines)
        for mono, c in value.terms.items():
            if len(mono) > 1 or (mono and mono[0][1] != 1) or int(c) != c:
                raise self.fail(where, f"{what} '{poly}' is not affine in the loop variables")
        return value

    def span(self, value: Poly) -> tuple:
        """``(min, max)`` of an affine ``value`` over the loop box of :attr:`scope`."""
        lo = hi = int(value.terms.get((), 0))
        ranges = {lb.var: (lb.lo, lb.lo + max(lb.trips - 1, 0) * lb.step) for lb in self.scope}
        for mono, c in value.terms.items():
            if mono:
                a, b = (int(c) * r for r in ranges[mono[0][0]])
                lo, hi = lo + min(a, b), hi + max(a, b)
        return lo, hi

    def loop(self, var, start: Poly, stop: Poly, step: int, where, notes: list) -> LoopBound:
        """One loop (``stop`` exclusive, ``step`` non-zero) -> an ascending :class:`LoopBound`
        over the same index set; a bound that depends on an outer loop is widened (noted)."""
        s = self.resolve(start, where, "loop bound")
        e = self.resolve(stop, where, "loop bound")
        outer = sorted((s.symbols | e.symbols))
        if step > 0:
            lo, hi = self.span(s)[0], self.span(e)[1]
        else:
            lo, hi = self.span(s)[1], self.span(e)[0]
        if outer:
            notes.append(f"over-approximated: bounds of '{var}' depend on {', '.join(map(repr, outer))}; "
                         f"widened to the box")
        if step < 0:
            trips = max(0, -(-(lo - hi) // -step))
            lo, hi, step = lo - max(trips - 1, 0) * -step, lo + 1 if trips else lo, -step
        return LoopBound(var, lo, max(hi, lo), step)

    def access(self, array: OmpArray, offset: Poly, kind: str, where, text: str, notes: list) -> AffineAccess:
        """A flat index ``offset`` (Poly over defines and loop variables) -> :class:`AffineAccess`;
        an index that leaves the array is noted."""
        value = self.resolve(offset, where, f"index of '{array.name}'")
        order = [lb.var for lb in self.scope]
        coeffs = tuple((m[0][0], int(c)) for m, c in sorted(((m, c) for m, c in value.terms.items() if m),
                                                             key=lambda mc: order.index(mc[0][0][0])))
        lo, hi = self.span(value)
        if lo < 0 or hi >= array.length:
            notes.append(f"'{text}' reaches element {lo if lo < 0 else hi} of '{array.name}' "
                         f"({array.length} elements)")
        return AffineAccess(array.name, kind, coeffs, int(value.terms.get((), 0)))

    def dimension(self, value: Poly, where, name: str) -> int:
        """An array dimension (``value`` resolved): its size in elements.

        Raises:
            KernelError: not above 0 (naming ``where``).
        """
        v = value.constant_value()
        if v <= 0:
            raise self.fail(where, f"array '{name}' has a dimension of {v} elements")
        return int(v)

    def merged(self, old: LoopBound, lb: LoopBound, notes: list) -> LoopBound:
        """Two loops over one variable in one nest: their union (noted where they differ)."""
        if old == lb:
            return old
        notes.append(f"over-approximated: loops over '{lb.var}' with different bounds; widened to their union")
        return LoopBound(lb.var, min(old.lo, lb.lo), max(old.hi, lb.hi), math.gcd(old.step, lb.step))

    def count(self, lb: LoopBound) -> int:
        """The iterations of a repeat loop ``lb``."""
        return lb.trips

    def repeat_count(self, value: Poly, where) -> int:
        """A repeat count given as a number (``value`` resolved).

        Raises:
            KernelError: below 0 (naming ``where``).
        """
        count = value.constant_value()
        if count < 0:
            raise self.fail(where, f"repeat count {count} is negative")
        return int(count)


# -- C ----------------------------------------------------------------------------------------

class _Directive:
    """One ``#pragma omp`` line: ``name`` (e.g. ``"parallel for"``), ``clauses`` ((name, text)
    tuples), ``line``, ``text`` (the pragma text after ``#pragma``)."""

    def __init__(self, name: str, clauses: list, line: int, text: str):
        self.name, self.clauses, self.line, self.text = name, clauses, line, text

    @property
    def base(self) -> str:
        """``name`` without a trailing ``simd`` (a no-op for the model)."""
        return self.name[:-5] if self.name.endswith(" simd") else self.name


class _CProgram(_Resolver):
    """Builds an :class:`OmpProgram` from pycparser's statements of a kernel-style C file."""

    def __init__(self, filename: str, defines: dict):
        super().__init__(defines)
        self.filename = filename
        self.b = KernelBuilder(filename)  # declarations, loop headers, integer expressions
        self.arrays: dict = {}
        self.scalars: dict = {}
        self.notes: list = []
        self.gen = CodePrinter(filename)  # pragmas printed from their typed model
        self.short = c_generator.CGenerator(reduce_parentheses=True)  # labels and messages

    def fail(self, where, message: str) -> KernelError:
        return self.b.err(where, message)

    def line(self, node) -> int:
        return node.coord.line - 1

    def build(self, items) -> OmpProgram:
        out, trailing = self.block(items, repeat=None)
        if not any(isinstance(it, (Phase, Repeat)) for it in out):
            raise KernelError("no for-loop found in the program", file=self.filename)
        if trailing:
            if isinstance(out[-1], Phase):
                out[-1] = _with_code(out[-1], out[-1].code + "\n" + "\n".join(trailing))
            else:
                self.notes.append("statements after the last loop are not part of any phase: "
                                  + " ".join(trailing))
        return OmpProgram(arrays=dict(self.arrays), items=tuple(out),
                          scalars=tuple(self.scalars.items()), notes=tuple(self.notes + _phase_notes(out)),
                          source=self.filename, defines=dict(self.defines))

    # blocks --------------------------------------------------------------------------------
    def block(self, items, repeat) -> tuple:
        """Statements of the program or of a repeat body -> ``(items, trailing statements)``."""
        out: list = []
        pre: list = []
        pending: list = []
        for item in items:
            if isinstance(item, c_ast.Pragma):
                d = self.directive(item)
                if d is not None and d.name != "barrier":  # the model has a barrier after each phase
                    pending.append(d)
            elif isinstance(item, c_ast.For):
                out.append(self.loop_item(item, pending, pre, repeat))
                pending, pre = [], []
            elif isinstance(item, c_ast.Compound) and [d.name for d in pending] == ["parallel"]:
                out += self.parallel_block(item, pending[0], pre)
                pending, pre = [], []
            else:
                self.check_alone(item, pending)
                pending = []
                self.statement_outside(item, pre)
        if pending:
            raise KernelError(f"'#pragma {pending[-1].text}' is not followed by a loop", file=self.filename,
                              line=pending[-1].line)
        return out, pre

    def check_alone(self, item, pending) -> None:
        """Only ``single``/``master``/``barrier`` may precede a statement that is not a loop."""
        for d in pending:
            if d.name not in ("single", "master", "masked", "barrier"):
                raise self.fail(item, f"'#pragma {d.text}' must be followed by a for loop")

    def statement_outside(self, item, pre: list) -> None:
        """A declaration or scalar statement outside loops: recorded, its C text kept in ``pre``."""
        if isinstance(item, c_ast.Decl):
            self.declare(item)
            if item.init is not None:
                pre.append(f"{item.name} = {self.code_text(item.init)};")
            return
        if isinstance(item, c_ast.EmptyStatement):
            return
        if isinstance(item, c_ast.Compound):
            for sub in item.block_items or []:
                self.statement_outside(sub, pre)
            return
        if isinstance(item, (c_ast.Assignment, c_ast.UnaryOp)):
            target = item.lvalue if isinstance(item, c_ast.Assignment) else item.expr
            if not isinstance(target, c_ast.ID) or target.name not in self.scalars:
                if isinstance(target, c_ast.ArrayRef):
                    raise self.fail(item, "array access outside any loop is not supported (put it in a loop)")
                raise self.fail(item, "only assignments to declared scalars are allowed between loops")
            self.scalar_expression(item)
            pre.append(self.code_text(item) + ";")
            return
        if isinstance(item, c_ast.FuncCall):
            name = getattr(item.name, "name", "?")
            raise self.fail(item, f"call to '{name}' not supported as a statement")
        raise self.b.unsupported(item)

    def scalar_expression(self, node) -> None:
        """An expression outside loops: scalars, defines and math functions only."""
        class V(c_ast.NodeVisitor):
            def visit_ArrayRef(v, n):
                raise self.fail(n, "array access outside any loop is not supported (put it in a loop)")

            def visit_ID(v, n):
                if n.name in self.arrays:
                    raise self.fail(n, f"array '{n.name}' used without index")
                if n.name not in self.scalars and n.name not in self.defines:
                    raise self.fail(n, f"undefined identifier '{n.name}'")

            def visit_FuncCall(v, n):
                self.check_call(n)
                for a in (n.args.exprs if n.args else []):
                    v.visit(a)

        V().visit(node)

    def declare(self, decl) -> None:
        """A top-level declaration -> :class:`OmpArray` (concrete dims) or a scalar."""
        if decl.name in self.arrays or decl.name in self.scalars:
            raise self.fail(decl, f"'{decl.name}' declared twice")
        self.b.declare(decl)
        if decl.name in self.b.arrays:
            arr = self.b.arrays[decl.name]
            if decl.init is not None:
                raise self.fail(decl, f"array '{decl.name}' cannot be initialised in its declaration")
            dims = [self.dimension(self.resolve(d, decl, "array dimension"), decl, decl.name) for d in arr.dims]
            self.arrays[decl.name] = OmpArray(decl.name, arr.ctype, ELEMENT_SIZES[arr.ctype], tuple(dims))
        else:
            self.scalars[decl.name] = self.b.scalars[decl.name].ctype

    # pragmas -------------------------------------------------------------------------------
    def directive(self, node) -> _Directive | None:
        """A ``#pragma`` -> :class:`_Directive`; None for ones the model ignores (noted)."""
        text = " ".join(pragma_string(node, self.filename).split())
        line = self.line(node)
        words = text.split(" ", 1)
        if words[0] != "omp":
            self.notes.append(f"line {line}: '#pragma {text}' ignored (not OpenMP)")
            return None
        rest = words[1] if len(words) > 1 else ""
        names, pos = [], 0
        while True:  # directive words: up to the first clause (a word before '(' or a bare clause)
            m = _WORD.match(rest, pos)
            if not m or m.group(1) in _BARE_CLAUSES or rest[m.end():].lstrip().startswith("("):
                break
            names.append(m.group(1))
            pos = m.end()
        name = " ".join(names)
        if name not in DIRECTIVES:
            what = f"'#pragma omp {name or rest}'" if rest else "'#pragma omp' without a directive"
            raise KernelError(f"{what} is not supported by the OpenMP program model "
                              "(parallel for, for, master, single, simd, barrier)", file=self.filename, line=line)
        self.check_clauses(rest[pos:], name, line)
        typed = parse_pragma(text, self.filename, line)  # what is compiled: printed from the typed model
        return _Directive(name, [(c.name, c.text()) for c in typed.clauses], line, typed.text())

    def check_clauses(self, text: str, directive: str, line: int) -> None:
        """The clauses after a directive against the model's restrictions (what is compiled is
        printed from :func:`~.c_pragma.parse_pragma`'s model, not from this reading).

        Raises:
            KernelError: the first clause the model refuses (naming the line)."""
        pos = 0
        while pos < len(text):
            m = _CLAUSE.match(text, pos)
            if not m:
                if text[pos:].strip(" ,"):
                    raise KernelError(f"cannot read the clauses '{text[pos:].strip()}'", file=self.filename, line=line)
                break
            name, pos = m.group(1), m.end()
            args = None
            if text[pos:].lstrip().startswith("("):
                start = text.index("(", pos)
                depth, k = 0, start
                for k in range(start, len(text)):
                    depth += {"(": 1, ")": -1}.get(text[k], 0)
                    if depth == 0:
                        break
                if depth:
                    raise KernelError(f"unbalanced parentheses in clause '{name}'", file=self.filename, line=line)
                args, pos = text[start + 1:k].strip(), k + 1
            self.check_clause(name, args, directive, line)

    def check_clause(self, name: str, args, directive: str, line: int) -> None:
        def bad(why):
            return KernelError(f"clause '{name}{'' if args is None else f'({args})'}' {why}",
                               file=self.filename, line=line)

        if name == "schedule":
            kind = (args or "").replace(" ", "")
            if kind != "static":
                raise bad("is not supported: the model needs schedule(static) without a chunk size")
            return
        if name in SIMD_CLAUSES and directive.endswith("simd"):
            return
        if name not in CLAUSES:
            raise bad("is not supported by the OpenMP program model")
        if name in ("reduction", "private", "firstprivate", "lastprivate", "shared", "copyprivate", "default"):
            if not args:
                raise bad("needs a parenthesised list")
        if name in ("reduction", "private", "firstprivate", "lastprivate", "shared", "copyprivate"):
            listed = (args or "").split(":", 1)[-1]
            for var in (v.strip() for v in listed.split(",")):
                if var not in self.scalars and var not in self.arrays:
                    raise bad(f"names '{var}', which is not a declared scalar or array")
        if name == "reduction":
            self.check_reduction(args, bad)

    def check_reduction(self, args: str, bad) -> None:
        """``reduction([modifier,] identifier: list)``: an identifier of OpenMP's C reductions
        (:data:`REDUCTION_OPERATORS`), and no bitwise one on a floating-point item (OpenMP
        5.2 §5.5: the combiner ``omp_out = omp_out ^ omp_in`` must be valid C for the type).

        Raises:
            KernelError: (through ``bad``) no ``:``, an unknown identifier, or ``&``, ``|``,
                ``^`` on a ``double`` or ``float``.
        """
        if ":" not in args:
            raise bad("needs 'operator: list', e.g. reduction(+: s)")
        head, listed = args.split(":", 1)
        op = head.split(",")[-1].strip()
        if op not in REDUCTION_OPERATORS:
            raise bad(f"has the reduction identifier '{op}'; OpenMP's are {' '.join(REDUCTION_OPERATORS)} "
                      "(user-defined reductions are not supported)")
        if op in ("&", "|", "^"):
            for var in (v.strip() for v in listed.split(",")):
                ctype = self.scalars[var] if var in self.scalars else self.arrays[var].ctype
                if ctype in ELEMENT_SIZES:
                    raise bad(f"applies the bitwise '{op}' to the {ctype} '{var}'; OpenMP allows & | ^ "
                              "on integer types only")

    # loops -------------------------------------------------------------------------------
    def loop_item(self, node, pending: list, pre: list, repeat):
        """A top-level (or repeat-body) ``for`` with its pragmas -> Phase or Repeat."""
        names = [d.base for d in pending]
        if names == ["parallel", "for"]:
            merged = _Directive("parallel for", _merge_clauses(pending[0].clauses, pending[1].clauses),
                                pending[1].line, "")
            return self.phase(node, "parallel", merged, pre)
        if names in (["parallel for"], ["for"]):
            if names == ["for"]:
                ph = self.phase(node, "sequential", pending[0], pre)
                return _with_notes(ph, ("orphaned 'omp for' outside a parallel region runs on one thread",))
            return self.phase(node, "parallel", pending[0], pre)
        if names in (["master"], ["masked"], ["single"], ["parallel", "master"], ["parallel", "single"]):
            return self.phase(node, "single" if names[-1] == "single" else "master", pending[-1], pre)
        if names in ([], ["simd"]):
            if not names and self.is_repeat(node):
                if repeat is not None:
                    raise self.fail(node, f"a repeat loop inside the repeat loop '{repeat}' is not supported")
                return self.repeat(node, pre)
            return self.phase(node, "sequential", pending[0] if pending else None, pre)
        if names[:1] == ["parallel"]:
            raise self.fail(node, "a loop directly in 'omp parallel' runs on every thread; use 'omp parallel for'")
        raise KernelError(f"'#pragma {pending[-1].text}' cannot follow '#pragma {pending[0].text}'",
                          file=self.filename, line=pending[-1].line)

    def is_repeat(self, node) -> bool:
        """A plain ``for`` around OpenMP loops or several loops, its variable in no array index."""
        body = _body_items(node)
        var, _ = self.loop_init(node)
        has_omp = _has_omp_loop(node.stmt)
        if not (has_omp or sum(isinstance(it, c_ast.For) for it in body) > 1):
            return False
        if _indexes_with(node.stmt, var):
            if has_omp:
                raise self.fail(node, f"the loop around OpenMP loops uses its variable '{var}' in array indices; "
                                      "only a repeat loop (variable in no index) may enclose them")
            return False
        return True

    def loop_init(self, node) -> tuple:
        """:meth:`KernelBuilder.loop_init` (``(variable, start node)``), keeping a loop variable
        declared at top level a program scalar."""
        saved = dict(self.b.scalars)
        try:
            return self.b.loop_init(node)
        finally:
            self.b.scalars = saved

    def header(self, node, where_notes: list) -> LoopBound:
        """A ``for`` header -> :class:`LoopBound` over :attr:`scope`."""
        var, start = self.loop_init(node)
        if any(lb.var == var for lb in self.scope):
            raise self.fail(node, f"loop variable '{var}' reused in a nested loop")
        if var in self.arrays:
            raise self.fail(node, f"loop variable '{var}' is declared as an array")
        outer = tuple(lb.var for lb in self.scope)
        step = self.b.loop_step(node.next, var)
        self.b.loops = [Loop(v, Poly(), Poly(), 1) for v in outer]
        stop = self.b.loop_cond(node.cond, var, outer, step)
        start = self.b.affine(start, outer, "loop bound")
        return self.loop(var, start, stop, step, node, where_notes)

    def repeat(self, node, pre: list) -> Repeat:
        notes: list = []
        lb = self.header(node, notes)
        if notes:
            raise self.fail(node, f"the repeat loop '{lb.var}' needs constant bounds")
        self.scope.append(lb)
        try:
            body, trailing = self.block(_body_items(node), repeat=lb.var)
        finally:
            self.scope.pop()
        if trailing:
            body[-1] = _with_code(body[-1], body[-1].code + "\n" + "\n".join(trailing))
        head = self.code_text(node, head_only=True)
        return Repeat(count=self.count(lb), body=tuple(body), var=lb.var, line=self.line(node),
                      code_head="\n".join(pre + [head]))

    def parallel_block(self, node, region: _Directive, pre: list) -> list:
        """``#pragma omp parallel { ... }``: its ``for``/``single``/``master`` loops -> phases."""
        out = []
        pending: list = []
        for item in node.block_items or []:
            if isinstance(item, c_ast.Pragma):
                d = self.directive(item)
                if d is not None and d.name not in ("barrier", "simd"):
                    pending.append(d)
            elif isinstance(item, c_ast.For):
                names = [d.base for d in pending]
                if names == ["for"]:
                    merged = _Directive("parallel for", _merge_clauses(region.clauses, pending[0].clauses),
                                        pending[0].line, "")
                    out.append(self.phase(item, "parallel", merged, pre))
                elif names in (["master"], ["masked"], ["single"]):
                    out.append(self.phase(item, "single" if names[0] == "single" else "master", pending[0], pre))
                else:
                    raise self.fail(item, "a loop in 'omp parallel' needs 'omp for', 'omp single' or 'omp master' "
                                          "(else every thread runs all of it)")
                pending, pre = [], []
            elif isinstance(item, c_ast.Decl):
                raise self.fail(item, "declarations inside 'omp parallel' are not supported (declare at top "
                                      "level; use private(...))")
            elif isinstance(item, (c_ast.Assignment, c_ast.UnaryOp)) and [d.name for d in pending] in (
                    ["single"], ["master"], ["masked"]):
                self.statement_outside(item, pre)
                pending = []
            else:
                raise self.fail(item, "only loops with 'omp for', 'omp single' or 'omp master' (and scalar "
                                      "statements under single/master) are supported inside 'omp parallel'")
        if pending:
            raise KernelError(f"'#pragma {pending[-1].text}' is not followed by a loop", file=self.filename,
                              line=pending[-1].line)
        if pre:
            if not out:
                raise self.fail(node, "'omp parallel' block without loops")
            out[-1] = _with_code(out[-1], out[-1].code + "\n" + "\n".join(pre))
        return out

    def phase(self, node, kind: str, directive, pre: list) -> Phase:
        """A loop nest -> :class:`Phase` (loops, accesses, label, self-contained code)."""
        notes: list = []
        nest = _Nest()
        depth = len(self.scope)
        try:
            self.nest(node, nest, notes)
        finally:
            del self.scope[depth:]
            self.locals = set()
        if directive is not None and any(n == "nowait" for n, _ in directive.clauses):
            notes.append("nowait ignored: the model keeps the barrier at the end of the loop")
        if kind == "parallel" and self.b.loop_step(node.next, nest.loops[0].var) < 0:
            notes.append(f"descending worksharing loop '{nest.loops[0].var}' taken as ascending: the static "
                         "schedule gives thread 0 the highest indices, the model the lowest")
        pragma = self.pragma_line(kind, directive)
        loop = self.code_text(node)
        code = "\n".join(pre + ([pragma] if pragma else []) + [loop])
        line = directive.line if directive is not None else self.line(node)
        return Phase(kind=kind, loops=tuple(nest.loops), accesses=tuple(nest.accesses), line=line,
                     label=_shorten(nest.label or ""), code=code.rstrip(), notes=tuple(dict.fromkeys(notes)),
                     loop_code=loop)

    def pragma_line(self, kind: str, directive) -> str:
        """The pragma of a phase's ``code``: as written for ``parallel for`` and ``simd``; rebuilt
        (without ``nowait``) for a ``for`` taken out of its parallel region; none otherwise
        (``master``/``single`` run on thread 0 in the harness)."""
        if directive is not None and directive.name == "simd":
            return "#pragma " + directive.text
        if kind != "parallel":
            return ""
        if directive.text:
            return "#pragma " + directive.text
        clauses = [t for n, t in directive.clauses if n != "nowait"]
        return " ".join(["#pragma omp parallel for"] + clauses)

    def nest(self, node, nest: "_Nest", notes: list) -> None:
        """Walk one loop and its body: loop bounds into ``nest.loops``, accesses in order."""
        lb = self.header(node, notes)
        same = [k for k, o in enumerate(nest.loops) if o.var == lb.var]
        if same:
            nest.loops[same[0]] = self.merged(nest.loops[same[0]], lb, notes)
        else:
            nest.loops.append(lb)
        self.scope.append(nest.loops[same[0]] if same else lb)
        body = _body_items(node)
        statements = [it for it in body if not isinstance(it, (c_ast.Pragma, c_ast.EmptyStatement, c_ast.For))]
        if statements and len(self.scope) > nest.label_depth:
            nest.label, nest.label_depth = self.short.visit(statements[0]), len(self.scope)
        elif not statements and not any(isinstance(it, c_ast.For) for it in body):
            raise self.fail(node, "loop body is empty")
        for item in body:
            if isinstance(item, c_ast.For):
                self.nest(item, nest, notes)
                self.scope.pop()
            else:
                self.body_statement(item, nest, notes)

    def body_statement(self, stmt, nest, notes: list) -> None:
        """One statement inside a loop: its array reads and writes, in execution order."""
        if isinstance(stmt, c_ast.Pragma):
            text = " ".join(pragma_string(stmt, self.filename).split())
            if text.split(" ")[0] != "omp":
                self.notes.append(f"line {self.line(stmt)}: '#pragma {text}' ignored (not OpenMP)")
            elif text not in ("omp simd",) and not text.startswith("omp simd "):
                raise self.fail(stmt, f"'#pragma {text}' inside a loop is not supported")
        elif isinstance(stmt, c_ast.Compound):
            for s in stmt.block_items or []:
                if isinstance(s, c_ast.For):
                    self.nest(s, nest, notes)
                    self.scope.pop()
                else:
                    self.body_statement(s, nest, notes)
        elif isinstance(stmt, c_ast.Decl):
            self.local(stmt, nest, notes)
        elif isinstance(stmt, c_ast.Assignment):
            self.assignment(stmt, nest, notes)
        elif isinstance(stmt, c_ast.UnaryOp) and stmt.op in ("p++", "++", "p--", "--"):
            self.target(stmt.expr, nest, notes, read=True)
        elif isinstance(stmt, c_ast.FuncCall):
            raise self.fail(stmt, f"call to '{getattr(stmt.name, 'name', '?')}' not supported as a statement")
        elif not isinstance(stmt, c_ast.EmptyStatement):
            raise self.b.unsupported(stmt)

    def local(self, decl, nest, notes: list) -> None:
        t = decl.type
        if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType):
            raise self.fail(decl, f"only scalar declarations are allowed inside loops ('{decl.name}')")
        if decl.name in self.arrays or decl.name in self.scalars:
            raise self.fail(decl, f"'{decl.name}' declared twice")
        if decl.init is not None:
            self.reads(decl.init, nest, notes)
        self.locals.add(decl.name)

    def assignment(self, stmt, nest, notes: list) -> None:
        if stmt.op != "=" and stmt.op not in COMPOUND:
            raise self.fail(stmt, f"assignment operator '{stmt.op}' not supported")
        if stmt.op != "=" and isinstance(stmt.lvalue, c_ast.ArrayRef):
            self.reads(stmt.lvalue, nest, notes)
        self.reads(stmt.rvalue, nest, notes)
        self.target(stmt.lvalue, nest, notes, read=False)

    def target(self, lv, nest, notes: list, read: bool) -> None:
        """The left-hand side: an array element (written; read first when ``read``) or a scalar."""
        if isinstance(lv, c_ast.ArrayRef):
            if read:
                self.reads(lv, nest, notes)
            nest.accesses.append(self.array_access(lv, "write", notes))
        elif isinstance(lv, c_ast.ID):
            if any(lb.var == lv.name for lb in self.scope):
                raise self.fail(lv, f"assignment to loop variable '{lv.name}' not supported")
            if lv.name in self.arrays:
                raise self.fail(lv, f"assignment to whole array '{lv.name}'")
            if lv.name not in self.scalars and lv.name not in self.locals:
                raise self.fail(lv, f"undefined identifier '{lv.name}'")
        else:
            raise self.fail(lv, "left-hand side must be an array element or a scalar")

    def reads(self, expr, nest, notes: list) -> None:
        """Array reads of an expression, left to right."""
        if isinstance(expr, c_ast.ArrayRef):
            nest.accesses.append(self.array_access(expr, "read", notes))
        elif isinstance(expr, c_ast.ID):
            name = expr.name
            if name in self.arrays:
                raise self.fail(expr, f"array '{name}' used without index")
            if not (name in self.scalars or name in self.locals or name in self.defines
                    or any(lb.var == name for lb in self.scope)):
                raise self.fail(expr, f"undefined identifier '{name}'")
        elif isinstance(expr, c_ast.BinaryOp):
            if expr.op not in ("+", "-", "*", "/"):
                raise self.fail(expr, f"operator '{expr.op}' not supported in loop bodies")
            self.reads(expr.left, nest, notes)
            self.reads(expr.right, nest, notes)
        elif isinstance(expr, c_ast.UnaryOp) and expr.op in ("-", "+"):
            self.reads(expr.expr, nest, notes)
        elif isinstance(expr, c_ast.Cast):
            self.reads(expr.expr, nest, notes)
        elif isinstance(expr, c_ast.FuncCall):
            self.check_call(expr)
            for a in (expr.args.exprs if expr.args else []):
                self.reads(a, nest, notes)
        elif isinstance(expr, c_ast.Constant):
            if expr.type in ("char", "string"):
                raise self.fail(expr, f"{expr.type} literal not supported")
        elif isinstance(expr, c_ast.Assignment):
            raise self.fail(expr, "assignment inside an expression not supported")
        else:
            raise self.b.unsupported(expr)

    def check_call(self, call) -> None:
        name = getattr(call.name, "name", None)
        if name not in FUNCTIONS:
            raise self.fail(call, f"call to '{name}' not supported (allowed: {ALLOWED_CALLS})")
        want = ARITY.get(FUNCTIONS[name], 1)
        got = len(call.args.exprs) if call.args else 0
        if got != want:
            raise self.fail(call, f"'{name}' takes {want} argument(s), got {got}")

    def array_access(self, ref, kind: str, notes: list) -> AffineAccess:
        """``a[..][..]`` -> :class:`AffineAccess` (flat, row-major, concrete)."""
        n = ref
        while isinstance(n, c_ast.ArrayRef):
            if any(isinstance(x, c_ast.ArrayRef) for _, x in _walk(n.subscript)):
                raise self.fail(ref, f"indirect index '{self.short.visit(ref)}' not supported "
                                     "(indices must be affine in the loop variables)")
            for _, x in _walk(n.subscript):
                if isinstance(x, c_ast.ID) and x.name in self.locals:
                    raise self.fail(x, f"variable '{x.name}' in the index of '{self.short.visit(ref)}'; only "
                                       "defines and loop variables are allowed")
            n = n.name
        self.b.loops = [Loop(lb.var, Poly(), Poly(), 1) for lb in self.scope]
        name, offset, _ = self.b.array_ref(ref)
        return self.access(self.arrays[name], offset, kind, ref, self.short.visit(ref), notes)

    # code ---------------------------------------------------------------------------------
    def code_text(self, node, head_only: bool = False) -> str:
        """C text of ``node`` with the define values substituted (a ``for`` header only when
        ``head_only``)."""
        node = _substitute(copy.deepcopy(node), self.defines)
        if head_only:
            node.stmt = c_ast.Compound([])
            return self.gen.visit(node).split("\n")[0].rstrip()
        return self.gen.visit(node).rstrip()


class _Nest:
    """What one phase's loop nest collects."""

    def __init__(self):
        self.loops: list = []
        self.accesses: list = []
        self.label = None
        self.label_depth = 0


def _body_items(node) -> list:
    """The statements of a ``for`` body (one, or a block's)."""
    return (node.stmt.block_items or []) if isinstance(node.stmt, c_ast.Compound) else [node.stmt]


def _phase_notes(items) -> list:
    """Every phase's notes, ``"line N: note"``, in program order."""
    out = []
    for it in items:
        for ph in (it.body if isinstance(it, Repeat) else (it,)):
            out += [f"line {ph.line}: {n}" for n in ph.notes]
    return out


def _walk(node):
    """``(name, node)`` of ``node`` and all its descendants."""
    yield "", node
    for name, child in node.children():
        yield from _walk(child)


def _has_omp_loop(node) -> bool:
    for _, n in _walk(node):
        if isinstance(n, c_ast.Pragma):
            words = pragma_string(n).split()
            if words[:1] == ["omp"] and len(words) > 1 and words[1] in {w.split()[0] for w in _WORKSHARING}:
                return True
    return False


def _indexes_with(node, var) -> bool:
    """Whether ``var`` appears in an array index inside ``node``."""
    for _, n in _walk(node):
        if isinstance(n, c_ast.ArrayRef):
            if any(isinstance(x, c_ast.ID) and x.name == var for _, x in _walk(n.subscript)):
                return True
    return False


def _substitute(node, values: dict):
    """Replace identifiers named in ``values`` by integer constants (in place); returns ``node``."""
    def repl(x):
        if isinstance(x, c_ast.ID) and x.name in values:
            return c_ast.Constant("int", str(values[x.name]), x.coord)
        return _substitute(x, values)

    if isinstance(node, c_ast.ID) and node.name in values:
        return repl(node)
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        v = getattr(node, attr, None)
        if isinstance(v, list):
            v[:] = [repl(x) if isinstance(x, c_ast.Node) else x for x in v]
        elif isinstance(v, c_ast.Node):
            setattr(node, attr, repl(v))
    return node


def _merge_clauses(region: list, loop: list) -> list:
    """Clauses of a ``parallel`` region that a loop taken out of it needs, then the loop's own
    (duplicates dropped)."""
    out = [c for c in region if c[0] in _REGION_CLAUSES] + list(loop)
    return list(dict.fromkeys(out))


def _with_code(item, code: str):
    """``item`` (Phase) with another ``code``."""
    return replace(item, code=code)


def _with_notes(item, notes: tuple):
    return replace(item, notes=item.notes + notes)


# -- YAML -------------------------------------------------------------------------------------

_TOP_KEYS = ("arrays", "phases", "defines", "scalars")
_PHASE_KEYS = ("name", "kind", "loops", "accesses")
_REPEAT_KEYS = ("repeat", "phases", "var")
_LOOP_KEYS = ("var", "lo", "hi", "step")
_ACCESS_KEYS = ("array", "kind", "index")
_ARRAY_KEYS = ("type", "length", "dims")


class _YamlProgram(_Resolver):
    """Builds an :class:`OmpProgram` from a loaded YAML description; errors name the key path
    and, where the YAML node is found, its line."""

    def __init__(self, filename: str, root):
        super().__init__({})
        self.filename = filename
        self.root = root
        self.b = KernelBuilder(filename)
        self.arrays: dict = {}
        self.phase_loops: list = []  # the loops of the phase being read

    def fail(self, where, message: str) -> KernelError:
        path = where if isinstance(where, tuple) else ()
        return KernelError(message, file=self.filename, line=self.line_of(path) or 1, where=_path_text(path))

    def line_of(self, path: tuple) -> int | None:
        """1-based line of the YAML node at ``path`` (the deepest one found)."""
        node, line = self.root, None
        for key in path:
            if node is None:
                break
            line = node.start_mark.line + 1
            if hasattr(node, "value") and isinstance(node.value, list) and isinstance(key, int):
                node = node.value[key] if key < len(node.value) else None
            elif hasattr(node, "value") and isinstance(node.value, list):
                hit = [(k, v) for k, v in node.value if getattr(k, "value", None) == key]
                node = hit[0][1] if hit else None
                if hit and isinstance(key, str):
                    line = hit[0][0].start_mark.line + 1
            else:
                node = None
        if node is not None:
            line = node.start_mark.line + 1
        return line

    def mapping(self, value, path: tuple, keys: tuple, required: tuple = ()) -> dict:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected a mapping with keys {', '.join(keys)}")
        for k in value:
            if k not in keys:
                raise self.fail(path + (k,), f"unknown key '{k}' (expected {', '.join(keys)})")
        for k in required:
            if k not in value:
                raise self.fail(path, f"missing key '{k}'")
        return value

    def expr(self, value, path: tuple, what: str) -> Poly:
        try:
            poly = read_expression(self.b, value, tuple(lb.var for lb in self.scope), what)
        except KernelError as exc:
            raise self.fail(path, exc.message) from None
        return self.resolve(poly, path, what)

    def build(self, data, defines) -> OmpProgram:
        self.mapping(data, (), _TOP_KEYS, ("arrays", "phases"))
        defaults = data.get("defines") or {}
        if not isinstance(defaults, dict) or not all(isinstance(v, int) and not isinstance(v, bool)
                                                     for v in defaults.values()):
            raise self.fail(("defines",), "expected a mapping of names to integers")
        self.defines = _merge_defines(defaults, defines, self.filename)
        self.declare(data["arrays"])
        scalars = data.get("scalars") or {}
        if not isinstance(scalars, dict) or not all(t in SCALAR_TYPES for t in scalars.values()):
            raise self.fail(("scalars",), f"expected a mapping of names to C types ({', '.join(SCALAR_TYPES)})")
        items = self.items(data["phases"], ("phases",), repeat=None)
        return OmpProgram(arrays=dict(self.arrays), items=tuple(items), scalars=tuple(scalars.items()),
                          notes=tuple(_phase_notes(items)), source=self.filename, defines=dict(self.defines))

    def declare(self, arrays) -> None:
        if not isinstance(arrays, dict) or not arrays:
            raise self.fail(("arrays",), "expected a mapping of array names to {type, length or dims}")
        for name, spec in arrays.items():
            path = ("arrays", name)
            if not isinstance(name, str) or not name.isidentifier():
                raise self.fail(path, f"'{name}' is not a valid array name")
            self.mapping(spec, path, _ARRAY_KEYS)
            ctype = spec.get("type", "double")
            if ctype not in ELEMENT_SIZES:
                raise self.fail(path + ("type",), f"array type must be double or float, got {ctype!r}")
            if ("length" in spec) == ("dims" in spec):
                raise self.fail(path, "give exactly one of 'length' and 'dims'")
            dims = spec["dims"] if "dims" in spec else [spec["length"]]
            if not isinstance(dims, list) or not dims:
                raise self.fail(path + ("dims",), "expected a list of sizes such as [N, M]")
            key = "dims" if "dims" in spec else "length"
            values = [self.dimension(self.expr(d, path + (key,), "array size"), path, name) for d in dims]
            self.arrays[name] = OmpArray(name, ctype, ELEMENT_SIZES[ctype], tuple(values))

    def items(self, phases, path: tuple, repeat) -> list:
        if not isinstance(phases, list) or not phases:
            raise self.fail(path, "expected a list of phases")
        out = []
        for k, spec in enumerate(phases):
            p = path + (k,)
            if isinstance(spec, dict) and "repeat" in spec:
                if repeat is not None:
                    raise self.fail(p, "a repeat inside a repeat is not supported")
                out.append(self.repeat(spec, p))
            else:
                out.append(self.phase(spec, p))
        return out

    def repeat(self, spec, path: tuple) -> Repeat:
        self.mapping(spec, path, _REPEAT_KEYS, ("repeat", "phases"))
        count = self.repeat_count(self.expr(spec["repeat"], path + ("repeat",), "repeat count"), path + ("repeat",))
        var = spec.get("var", "iter")
        if not isinstance(var, str) or not var.isidentifier():
            raise self.fail(path + ("var",), f"'{var}' is not a valid variable name")
        self.scope.append(LoopBound(var, 0, count))
        try:
            body = self.items(spec["phases"], path + ("phases",), repeat=var)
        finally:
            self.scope.pop()
        return Repeat(count=count, body=tuple(body), var=var, line=self.line_of(path) or 0)

    def phase(self, spec, path: tuple) -> Phase:
        self.mapping(spec, path, _PHASE_KEYS, ("kind", "loops", "accesses"))
        name = spec.get("name", f"phase {path[-1]}")
        if spec["kind"] not in PHASE_KINDS:
            raise self.fail(path + ("kind",), f"phase '{name}': kind must be one of {', '.join(PHASE_KINDS)}, "
                                              f"got {spec['kind']!r}")
        notes: list = []
        depth = len(self.scope)
        loops = []
        try:
            if not isinstance(spec["loops"], list) or not spec["loops"]:
                raise self.fail(path + ("loops",), f"phase '{name}': expected a list of loops (var, lo, hi, step)")
            for k, lp in enumerate(spec["loops"]):
                loops.append(self.loop_spec(lp, path + ("loops", k), name, notes))
                self.scope.append(loops[-1])
            self.phase_loops = loops
            if not isinstance(spec["accesses"], list):
                raise self.fail(path + ("accesses",), f"phase '{name}': expected a list of accesses")
            accesses = tuple(self.access_spec(a, path + ("accesses", k), name, notes)
                             for k, a in enumerate(spec["accesses"]))
        finally:
            del self.scope[depth:]
        return Phase(kind=spec["kind"], loops=tuple(loops), accesses=accesses, line=self.line_of(path) or 0,
                     label=str(name), code="", notes=tuple(notes))

    def loop_spec(self, lp, path: tuple, phase: str, notes: list) -> LoopBound:
        self.mapping(lp, path, _LOOP_KEYS, ("var", "lo", "hi"))
        var = lp["var"]
        if not isinstance(var, str) or not var.isidentifier():
            raise self.fail(path + ("var",), f"phase '{phase}': '{var}' is not a valid loop variable")
        if var in self.arrays or any(lb.var == var for lb in self.scope):
            raise self.fail(path + ("var",), f"phase '{phase}': loop variable '{var}' is already in use")
        step = self.expr(lp.get("step", 1), path + ("step",), "loop step")
        if not step.is_constant() or step.constant_value() <= 0:
            raise self.fail(path + ("step",), f"phase '{phase}': loop step must be a positive constant")
        lo = self.expr(lp["lo"], path + ("lo",), "loop bound")
        hi = self.expr(lp["hi"], path + ("hi",), "loop bound")
        return self.loop(var, lo, hi, int(step.constant_value()), path, notes)

    def access_spec(self, acc, path: tuple, phase: str, notes: list) -> AffineAccess:
        self.mapping(acc, path, _ACCESS_KEYS, _ACCESS_KEYS)
        name = acc["array"]
        if name not in self.arrays:
            raise self.fail(path + ("array",), f"phase '{phase}': unknown array '{name}'")
        if acc["kind"] not in ("read", "write"):
            raise self.fail(path + ("kind",), f"phase '{phase}': access kind must be read or write")
        arr = self.arrays[name]
        index = acc["index"]
        try:
            if isinstance(index, list):
                if len(index) != len(arr.dims):
                    raise self.fail(path + ("index",), f"phase '{phase}': '{name}' has {len(arr.dims)} "
                                                       f"dimension(s), the index list {len(index)}")
                flat, stride = Poly(), 1
                for k in reversed(range(len(index))):
                    flat = flat + self.expr(index[k], path + ("index", k), f"index of '{name}'") * stride
                    stride *= arr.dims[k]
            else:
                flat = self.expr(index, path + ("index",), f"index of '{name}'")
        except KernelError as exc:
            if exc.message.startswith("phase "):
                raise
            raise KernelError(f"phase '{phase}': {exc.message}", file=exc.file, line=exc.line,
                              where=exc.where) from None
        repeats = sorted(flat.symbols - {lb.var for lb in self.phase_loops} - self.swept)
        if repeats:
            raise self.fail(path + ("index",), f"phase '{phase}': the repeat variable '{repeats[0]}' cannot "
                                               "index an array (a repeat is a loop whose variable indexes none)")
        text = f"{name}[{index}]" if not isinstance(index, list) else name + "".join(f"[{i}]" for i in index)
        return self.access(arr, flat, acc["kind"], path + ("index",), text, notes)


class _SweptC(SweptResolver, _CProgram):
    """:class:`_CProgram` reading the form of a program (:func:`read_omp_form`)."""


class _SweptYaml(SweptResolver, _YamlProgram):
    """:class:`_YamlProgram` reading the form of a program (:func:`read_omp_form`)."""


def _path_text(path: tuple) -> str | None:
    out = ""
    for k in path:
        out += f"[{k}]" if isinstance(k, int) else (("." if out else "") + str(k))
    return out or None
