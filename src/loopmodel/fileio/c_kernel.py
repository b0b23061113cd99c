"""C kernel front-end: kernel source text -> :class:`~loopmodel.ir.kernel.Kernel`.

Accepts what kerncraft-tool-paper.txt §2.1 allows (double/float array and
scalar declarations, multi-dimensional or flattened indices, one perfect loop
nest with constant steps, any number of assignments in the innermost loop) and
more: the kernel written as a C function (:mod:`loopmodel.fileio.c_function`),
arrays of integer types (:mod:`loopmodel.ir.ctypes`), ``size_t``/``long``/``unsigned``
indices, ``const`` integer sizes, ``<=``/``>``/``>=``/``!=`` conditions, loop bounds affine in
outer indices, scalar reductions, ``sqrt exp fabs fmin fmax`` calls, mixed element types,
``#pragma`` lines (recorded; unknown ones ignored with a note,
:mod:`loopmodel.fileio.c_source`), and Kerncraft's ``swap(x, y);`` calls after the loop
nest (recorded in :attr:`Kernel.swaps`). Everything else is rejected with a
:class:`~loopmodel.errors.KernelError` that names ``file:line:col`` and what is accepted
(docs/c-frontend.md lists the forms).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from pycparser import c_ast

from ..errors import KernelError
from ..ir.ctypes import TYPE_BYTES, is_integer, type_name
from ..ir.dependency import SOURCE, DependencyGraph
from ..ir.kernel import Access, Array, Kernel, Loop, Recurrence, Scalar, coefficient
from ..ir.poly import Poly
from ..ir.kernel_source import KernelSource
from ..ir.sequence import NestSequence, SequenceNest
from . import c_function, c_nests
from .c_guards import apply_guards
from .c_pragma import parse_pragma, pragma_string
from .c_print import nest_code
from .c_source import c_integer, function_form, parse_source, parse_unit, prepare, unit_source, wrap
from .defines import MAX_SIZE
from .reader import KERNEL_MAX_BYTES, read_text

#: element types of OpenMP programs and YAML descriptions (the C kernel front-end takes
#: every type of :data:`loopmodel.ir.ctypes.TYPE_BYTES`)
ELEMENT_SIZES = {"double": 8, "float": 4}
SCALAR_TYPES = {"double": 8, "float": 4, "int": 4, "long": 8, "unsigned": 4}
#: the C library's maths the kernel may call -> operation type (``fma(a, b, c)`` is a * b + c,
#: one MUL and one ADD that the machine's FMA may fuse; the others' cost is the machine model's
#: throughput of the type, where it gives one)
FUNCTIONS = {
    "sqrt": "SQRT", "sqrtf": "SQRT", "exp": "EXP", "expf": "EXP", "log": "LOG", "logf": "LOG",
    "pow": "POW", "powf": "POW", "fma": "FMA", "fmaf": "FMA",
    "fabs": "FABS", "fabsf": "FABS", "fmin": "FMIN", "fminf": "FMIN",
    "fmax": "FMAX", "fmaxf": "FMAX",
}
#: arguments of each operation type of :data:`FUNCTIONS` (one where not named)
ARITY = {"FMIN": 2, "FMAX": 2, "POW": 2, "FMA": 3}
#: the text of the allowed calls, for refusals
ALLOWED_CALLS = ", ".join(sorted({f for f in FUNCTIONS if not f.endswith("f") or f[:-1] not in FUNCTIONS}))
BINOPS = {"+": "ADD", "-": "ADD", "*": "MUL", "/": "DIV"}
COMPOUND = {"+=": "+", "-=": "-", "*=": "*", "/=": "/"}
_UNSUPPORTED_STMT = {
    "If": "'if' statements", "While": "'while' loops", "DoWhile": "'do'/'while' loops",
    "Switch": "'switch' statements", "Goto": "'goto'", "Return": "'return' (only as the last statement of a "
    "kernel function)", "Break": "'break'", "Continue": "'continue'", "TernaryOp": "conditional expressions (?:) as statements",
    "FuncDef": "function definitions", "Label": "labels",
}
_ACCEPTED_TYPES = "double, float, int, long, long long, unsigned, short, size_t, ptrdiff_t, int32_t, int64_t, ..."
#: the note on integer arrays (the arithmetic counts do not tell integer from floating point)
INTEGER_NOTE = ("integer arrays ({names}): their loads, stores and traffic use their element size; their arithmetic "
                "is timed as floating-point operations of the same kind (the analytic in-core model) and counted as "
                "FLOPs where the kernel has floating-point data (none without)")


#: the note on conditional expressions (``c ? a : b``: a branch-free select, as compilers emit in a vectorised loop)
SELECT_NOTE = ("conditional expressions (?:) at line {lines}: each timed as one compare-and-select (an FMAX: a vector "
               "max or blend), the loads of its condition and of both values counted; a compiler that branches instead "
               "is not modelled")


@dataclass(frozen=True)
class CKernel:
    """A parsed C kernel file.

    Attributes:
        kernel: the :class:`Kernel`.
        defaults: size constant -> default (``#define NAME <integer>``, ``const int N = 1000;``).
        text: the file's text, which the front-end reads as the same kernel (the in-core
            measurement writes it to a file of its own, benchmark cache keys hold it); no
            compiler sees it: compiled programs hold :attr:`Kernel.code`, the nest printed
            from the syntax tree.
        notes: one-line notes on what the front-end left out or inferred.
    """

    kernel: Kernel
    defaults: dict
    text: str
    notes: tuple = ()


@dataclass
class _Node:
    """Expression tree node used for operation counts and dependency chains."""

    kind: str  # op | load | scalar | const
    op: str = ""
    children: list = field(default_factory=list)
    key: object = None  # access key for loads, name for scalars


def parse_kernel_file(path) -> tuple:
    """Read and parse a kernel file of one loop nest (a path, or a
    :class:`~loopmodel.ir.kernel_source.KernelSource`).

    Returns:
        ``(kernel, defaults)``: the :class:`Kernel` and a dict of ``#define``
        default values for size constants.

    Raises:
        KernelError: the file cannot be read, is malformed or unsupported, or holds several nests.
    """
    parsed = load_c_kernel(path)
    return parsed.kernel, parsed.defaults


def load_c_kernel(path) -> CKernel:
    """Read and parse a C kernel file of one loop nest (a path, or a
    :class:`~loopmodel.ir.kernel_source.KernelSource`): :class:`CKernel` (with the text to compile),
    for the commands that compile and run one nest (``bench``, ``validate``, ``codegen``).

    Raises:
        KernelError: the file cannot be read, is malformed or unsupported, or holds several loop
            nests (one line: ``analyze`` takes those).
    """
    parsed = parse_c(read_kernel_text(path), str(path), path if isinstance(path, KernelSource) else None)
    if isinstance(parsed.kernel, NestSequence):
        raise KernelError(f"the kernel holds {len(parsed.kernel.nests)} loop nests; this command runs one (loopmodel "
                          "analyze analyses each and sums them; --function names a function of one nest)",
                          file=str(path))
    return parsed


def read_kernel_text(path) -> str:
    """The text of a kernel file (C or YAML description).

    Raises:
        KernelError: the file cannot be read, is not a regular file, is larger than
            :data:`loopmodel.fileio.reader.KERNEL_MAX_BYTES` or is not UTF-8 text (naming the
            file; :mod:`loopmodel.fileio.reader`).
    """
    return read_text(path, "kernel file", KernelError, KERNEL_MAX_BYTES)


def parse_kernel(text: str, filename: str = "<kernel>") -> tuple:
    """Parse kernel source text; see :func:`parse_kernel_file`."""
    parsed = parse_c(text, filename)
    return parsed.kernel, parsed.defaults


def parse_c(text: str, filename: str = "<kernel>", source=None) -> CKernel:
    """Parse C kernel text, a Kerncraft kernel file or a kernel function
    (:func:`loopmodel.fileio.c_source.function_form`).

    Args:
        source: the :class:`~loopmodel.ir.kernel_source.KernelSource` read (the function named,
            the ``-I`` folders, the ``-D`` sizes the preprocessor sees); None: the file alone.

    Returns:
        :class:`CKernel`; its ``kernel`` is a :class:`~loopmodel.ir.sequence.NestSequence` where
        the code holds several nests or an imperfect one (:mod:`loopmodel.fileio.c_nests`).

    Raises:
        KernelError: malformed or unsupported (one line, ``file:line:col``).
    """
    prepared = prepare(text, filename, source=source)
    ignored = tuple(f"line {n}: '#pragma {p}' ignored (only OpenMP and loop-hint pragmas are kept)"
                    for n, p in prepared.ignored)
    function_name = getattr(source, "function", None)
    globals_, params, notes, typedefs = [], [], (), {}
    is_function = function_form(prepared.text)
    if is_function:
        unit = parse_unit(unit_source(prepared.text), filename)
        function, globals_, notes, typedefs = c_function.select_function(unit, filename, function_name)
        params = c_function.parameters(function, filename)
        items = function.body.block_items or []
    elif function_name is not None:
        raise KernelError(f"--function {function_name}: the file defines no function (its statements are the kernel)",
                          file=filename)
    else:
        items = parse_source(wrap(prepared.text), filename)
    declared = (filename, typedefs, globals_, params)
    cut = c_nests.split(items, filename)
    if cut is not None:
        kernel, defaults, more = _sequence(cut, items, declared)
        return CKernel(kernel, _used({**prepared.defaults, **defaults}, kernel), text, ignored + tuple(notes) + more)
    builder = _builder(*declared)
    kernel = builder.build(items, function=is_function)
    return CKernel(kernel, _used({**prepared.defaults, **builder.defaults}, kernel), text,
                   ignored + tuple(notes) + builder.notes())


def _used(defaults: dict, kernel) -> dict:
    """The size defaults of the constants ``kernel`` names (a file's other size defines, e.g. of
    the functions left out, are not the kernel's sizes)."""
    return {name: value for name, value in defaults.items() if name in kernel.constants}


def _builder(filename: str, typedefs: dict, globals_: list, params: list) -> "KernelBuilder":
    """A :class:`KernelBuilder` with the file's global declarations and the kernel function's
    parameters declared (``typedefs``: the scalar typedefs the function names)."""
    builder = KernelBuilder(filename, typedefs)
    for decl in globals_:
        builder.declare(decl)
    for decl in params:
        builder.declare(decl, parameter=True)
    return builder


def _sequence(cut: tuple, items: list, declared: tuple) -> tuple:
    """``(kernel, defaults, notes)`` of a body cut into nests (:func:`loopmodel.fileio.c_nests.split`):
    each nest built with the function's declarations (``declared``: the arguments of
    :func:`_builder`), a :class:`NestSequence` of them (one nest that runs once: its :class:`Kernel`)."""
    pieces, notes = cut
    filename = declared[0]
    if not pieces:
        raise KernelError("no for-loop found in kernel", file=filename)
    decls = [it for it in items if isinstance(it, c_ast.Decl)]
    nests, defaults, seen = [], {}, dict.fromkeys(notes)
    for piece in pieces:
        builder = _builder(*declared)
        kernel = builder.build(decls + list(piece.pragmas) + [piece.loop], function=True, guards=piece.guards)
        if not kernel.reads and not kernel.writes:
            seen[f"line {piece.line}: statements on scalars only (no array access, a register's work): not timed"] = None
            continue
        repeat = builder.repeat_loops(piece.repeat)
        nests.append(SequenceNest(kernel, piece.line, repeat, piece.path))
        defaults.update(builder.defaults)
        seen.update(dict.fromkeys(builder.notes()))
    if not nests:
        raise KernelError("no loop nest of the kernel accesses an array", file=filename)
    if len(nests) == 1 and not nests[0].repeat:
        return nests[0].kernel, defaults, tuple(seen)
    return NestSequence(filename, tuple(nests)), defaults, tuple(seen)


class KernelBuilder:
    """Collects a kernel's declarations, loops, accesses and operations into the kernel IR.

    Used by the C front-end (:func:`parse_kernel_file`, from pycparser's AST) and by the
    YAML kernel descriptions (:mod:`loopmodel.fileio.kernel_yaml`), which share its
    declarations (``arrays``, ``scalars``, ``loops``, ``constants``) and its integer
    expression reader :meth:`affine`. Errors are :class:`~loopmodel.errors.KernelError`
    naming the file and line.
    """

    def __init__(self, filename: str, typedefs: dict | None = None):
        self.filename = filename
        self.typedefs = dict(typedefs or {})  # typedef name -> the words of its scalar type
        self.arrays: dict = {}
        self.scalars: dict = {}
        self.constants: set = set()
        self.loops: list = []
        self.pragma_models: list = []  # KernelPragma of the pragmas before the nest's loops
        self.reads: dict = {}
        self.writes: dict = {}
        self.ops: dict = {}
        self.fma = 0
        self.statements: list = []  # (target kind, key, node, compound op)
        self.swaps: list = []  # (x, y) of 'swap(x, y);' after the loop nest
        self.index_values: set = set()  # loop indices used as values in the arithmetic
        self.sizes: dict = {}  # declared size constants (integer parameters, const integers): name -> Poly
        self.defaults: dict = {}  # const integers initialised with a literal: name -> value
        self.open_arrays: dict = {}  # arrays whose first dimension the accesses give: name -> declaration
        self.extent_notes: list = []
        self.selects: list = []  # lines of conditional expressions (c ? a : b)
        self.parameters: set = set()  # the kernel function's integer parameters
        self.guard_notes: list = []  # what the 'if' conditions around the statements restrict

    # helpers --------------------------------------------------------------
    def c_integer(self, node, what: str) -> int:
        """The value of the integer constant ``node`` (:func:`c_integer`).

        Raises:
            KernelError: not a valid C integer literal (``09``) or larger than 2**62, naming
                the line.
        """
        value = c_integer(node.value)
        if value is None:
            raise self.err(node, f"{what}: '{node.value}' is not a valid integer constant")
        if value > MAX_SIZE:
            raise self.err(node, f"{what}: {node.value[:24]} is larger than 2**62, the largest size")
        return value

    def err(self, node, message: str) -> KernelError:
        """A one-line error at ``node``: the kernel file's line, or a header's where the node came
        from one (the preprocessor's ``#line`` markers name it)."""
        line = col = None
        coord = getattr(node, "coord", None)
        if coord is not None and coord.line:
            line, col = coord.line - 1, coord.column
        return KernelError(message, file=getattr(coord, "file", None) or self.filename, line=line, col=col)

    def unsupported(self, node) -> KernelError:
        name = type(node).__name__
        what = _UNSUPPORTED_STMT.get(name, f"'{name}' constructs")
        return self.err(node, f"{what} not supported in kernels (accepted: declarations, one perfect nest of for "
                              "loops, assignments to array elements and scalars in its innermost body)")

    # declarations -----------------------------------------------------------
    def declare(self, decl, parameter: bool = False):
        """A declaration (or, with ``parameter``, a parameter of the kernel function): an array,
        a scalar, or a size constant (an integer parameter; a ``const`` integer).

        Raises:
            KernelError: an unsupported type or form, or a name declared twice (naming the line
                and what is accepted).
        """
        t, dims, open_first = self._dimensions(decl, parameter)
        if isinstance(t, c_ast.FuncDecl):
            raise self.err(decl, f"function declaration '{decl.name}' not supported (a kernel function is "
                                 "defined with its body)")
        if isinstance(t, c_ast.PtrDecl):
            raise self.err(decl, f"'{decl.name}': pointer to pointer not supported (pass a contiguous array: "
                                 f"double *{decl.name} indexed {decl.name}[i*M+j], or double {decl.name}[][M])")
        if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType):
            raise self.err(decl, f"unsupported declaration of '{decl.name}' (accepted: arrays and scalars of "
                                 f"{_ACCEPTED_TYPES})")
        names = t.type.names
        ctype = type_name(self.typedefs.get(names[-1], names) if len(names) == 1 else names)
        if ctype is None:
            raise self.err(decl, f"'{decl.name}' has type '{' '.join(t.type.names)}'; accepted: {_ACCEPTED_TYPES}")
        if decl.name in self.arrays or decl.name in self.scalars or decl.name in self.sizes:
            raise self.err(decl, f"'{decl.name}' declared twice")
        if dims or open_first:
            distinct = not parameter or _declared_restrict(decl.type)
            self.arrays[decl.name] = Array(decl.name, ctype, TYPE_BYTES[ctype], tuple(dims), distinct)
            if open_first:
                self.open_arrays[decl.name] = decl
        elif is_integer(ctype) and not self.loops and (parameter or "const" in (decl.quals or []) + (t.quals or [])):
            self.sizes[decl.name] = self._size_value(decl)
            if parameter:
                self.parameters.add(decl.name)
        else:
            self.scalars[decl.name] = Scalar(decl.name, ctype, TYPE_BYTES[ctype])

    def _dimensions(self, decl, parameter: bool) -> tuple:
        """``(element type node, dims, open_first)`` of a declaration: the dimensions as Polys,
        the first a placeholder where the declaration leaves it out (a pointer or ``a[]``
        parameter: ``open_first``)."""
        t, dims, open_first = decl.type, [], False
        if parameter and isinstance(t, c_ast.PtrDecl) and isinstance(t.type, (c_ast.TypeDecl, c_ast.ArrayDecl)):
            t, open_first = t.type, True  # double *a, double (*a)[M]
        elif parameter and isinstance(t, c_ast.ArrayDecl) and t.dim is None:
            t, open_first = t.type, True  # double a[][M]
        if open_first:
            dims.append(_OPEN)
        while isinstance(t, c_ast.ArrayDecl):
            if t.dim is None:
                raise self.err(decl, f"array '{decl.name}' needs explicit dimensions (only a parameter may leave "
                                     "out the first: double a[][M])")
            dims.append(self.size_expr(t.dim))
            t = t.type
        if isinstance(t, c_ast.PtrDecl) and not parameter and not dims:
            raise self.err(decl, f"pointer '{decl.name}' not supported here (declare an array, double "
                                 f"{decl.name}[N]; a pointer is accepted as a parameter of a kernel function)")
        return t, dims, open_first

    def _size_value(self, decl) -> Poly:
        """A declared size constant: its own symbol (a parameter, or ``const int N = 1000;``,
        whose value becomes the default), or the size expression it is initialised with
        (``const int n2 = n + 2;``)."""
        init = decl.init
        if init is None or isinstance(init, c_ast.Constant):
            if init is not None:
                self.defaults[decl.name] = self.c_integer(init, f"'{decl.name}'")
            return Poly.symbol(decl.name)
        before = set(self.constants)
        value = self.affine(init, (), f"the value of '{decl.name}'")
        self.constants = before  # its sizes count where it is used
        return value

    def size_symbol(self, name: str) -> Poly | None:
        """The value of a declared size constant (its symbols become constants of the kernel),
        or None for a name that is not one."""
        value = self.sizes.get(name)
        if value is not None:
            self.constants |= value.symbols
        return value

    def size_expr(self, node) -> Poly:
        """Array dimension: a polynomial in size constants."""
        return self.affine(node, allowed_indices=(), what="array dimension")

    def affine(self, node, allowed_indices, what) -> Poly:
        """Integer expression of size constants and loop indices, affine in the indices."""
        def rec(n) -> Poly:
            if isinstance(n, c_ast.Constant):
                if n.type not in ("int", "long int", "unsigned int", "long long int", "unsigned long int",
                                  "unsigned long long int"):
                    raise self.err(n, f"{what} must be an integer expression, got '{n.value}'")
                return Poly.const(self.c_integer(n, what))
            if isinstance(n, c_ast.ID):
                if n.name in allowed_indices:
                    return Poly.symbol(n.name)
                if any(n.name == lp.index for lp in self.loops):
                    raise self.err(n, f"loop index '{n.name}' is not allowed in {what}")
                if n.name in self.arrays:
                    raise self.err(n, f"array '{n.name}' used as a value in {what}")
                if n.name in self.scalars:
                    raise self.err(n, f"variable '{n.name}' in {what}; only size constants and loop indices are "
                                      f"allowed (a size: #define {n.name} 1000, const int {n.name} = 1000, an integer "
                                      "parameter of the kernel function, or a name given with -D)")
                if n.name in FUNCTIONS:
                    raise self.err(n, f"function '{n.name}' in {what}")
                value = self.size_symbol(n.name)
                if value is not None:
                    return value
                self.constants.add(n.name)
                return Poly.symbol(n.name)
            if isinstance(n, c_ast.BinaryOp) and n.op in ("+", "-", "*"):
                a, b = rec(n.left), rec(n.right)
                return a + b if n.op == "+" else a - b if n.op == "-" else a * b
            if isinstance(n, c_ast.UnaryOp) and n.op in ("-", "+"):
                v = rec(n.expr)
                return -v if n.op == "-" else v
            if isinstance(n, c_ast.Cast) and _integer_cast(n):
                return rec(n.expr)
            if isinstance(n, c_ast.ArrayRef):
                raise self.err(n, f"indirect indexing (an array reference in {what}) not supported (accepted: "
                                  "expressions affine in the loop indices, a[i], a[2*j+1], a[j*N+i])")
            if isinstance(n, c_ast.FuncCall):
                raise self.err(n, f"function call in {what} not supported")
            if isinstance(n, c_ast.BinaryOp):
                raise self.err(n, f"operator '{n.op}' not supported in {what}")
            if isinstance(n, c_ast.UnaryOp) and n.op in ("*", "&"):
                raise self.err(n, f"pointer operator '{n.op}' not supported")
            raise self.err(n, f"unsupported expression in {what}")

        value = rec(node)
        for m in value.terms:
            if sum(e for s, e in m if s in allowed_indices) > 1:
                raise self.err(node, f"{what} is not affine in the loop indices")
        return value

    # loops ---------------------------------------------------------------------
    def build(self, items, function: bool = False, guards: tuple = ()) -> Kernel:
        """The kernel of the statements ``items`` (the top level of a kernel file, or with
        ``function`` the body of a kernel function, which may end in ``return``), its iteration
        space restricted by the ``if`` conditions ``guards`` (:mod:`.c_guards`).

        Raises:
            KernelError: anything but declarations, pragmas, one loop nest and ``swap(x, y);``
                calls after it (naming the line).
        """
        loop = None
        pending_pragmas, before = [], []
        for item in items:
            if isinstance(item, c_ast.Decl):
                if loop is not None:
                    raise self.err(item, "declarations must come before the loop nest")
                self.declare(item)
            elif isinstance(item, c_ast.Pragma):
                pending_pragmas.append(item)
            elif isinstance(item, c_ast.For):
                if loop is not None:
                    raise self.err(item, "only one loop nest per kernel is supported (put each nest in a kernel "
                                         "file of its own)")
                if self.swaps:
                    raise self.err(item, "only 'swap(x, y);' calls may follow the loop nest")
                loop = item
                before = pending_pragmas
                self.pragma(*before)
                pending_pragmas = []
            elif isinstance(item, c_ast.FuncCall) and getattr(item.name, "name", None) == "swap":
                if loop is None:
                    raise self.err(item, "'swap(x, y);' must follow the loop nest (it exchanges arrays between sweeps)")
                self.swaps.append(self.swap(item))
            elif isinstance(item, c_ast.Return) and function and item is items[-1] and loop is not None:
                continue  # the function's result is not modelled
            elif isinstance(item, (c_ast.Assignment, c_ast.UnaryOp, c_ast.FuncCall)):
                if loop is not None:
                    raise self.err(item, "only 'swap(x, y);' calls (and a last 'return') may follow the loop nest")
                raise self.err(item, "statements outside the loop nest are not supported (the kernel is one loop "
                                     "nest after its declarations; initialise scalars in their declaration)")
            else:
                raise self.unsupported(item)
        if loop is None:
            raise KernelError("no for-loop found in kernel", file=self.filename)
        if pending_pragmas:
            raise self.err(pending_pragmas[0], "a pragma after the loop nest applies to nothing (put it before the "
                                               "loop it is for)")
        self.loop(loop)
        self.guard_notes = apply_guards(self, guards)
        if self.guard_notes:
            self.guard_notes.append("the compiled nest of the in-core analysis keeps the loops' own bounds (its body is "
                                    "the guarded statements)")
        return self.finish(nest_code(before, loop, self.filename))

    def pragma(self, *nodes) -> None:
        """Record pragmas before a loop of the nest (:mod:`.c_pragma`: typed, printed again).

        Raises:
            KernelError: a pragma the typed model refuses (naming the line).
        """
        for node in nodes:
            line = node.coord.line - 1 if node.coord is not None and node.coord.line else None
            self.pragma_models.append(parse_pragma(pragma_string(node, self.filename), self.filename, line))

    def swap(self, call) -> tuple:
        """``swap(x, y);`` after the loop nest (Kerncraft's grammar): two arrays trade places between sweeps.

        Returns:
            ``(x, y)``.

        Raises:
            KernelError: not two array names, an undeclared name, or arrays of
                different type or dimensions.
        """
        args = call.args.exprs if call.args else []
        if len(args) != 2 or not all(isinstance(a, c_ast.ID) for a in args):
            raise self.err(call, "swap takes two array names: 'swap(x, y);'")
        x, y = (a.name for a in args)
        for name, node in ((x, args[0]), (y, args[1])):
            if name not in self.arrays:
                what = "a scalar" if name in self.scalars else "not declared"
                raise self.err(node, f"swap: '{name}' is {what}; only declared arrays can be swapped")
        if x == y:
            raise self.err(call, f"swap: '{x}' is swapped with itself")
        a, b = self.arrays[x], self.arrays[y]
        if a.ctype != b.ctype or a.dims != b.dims:
            def decl(arr):
                return arr.ctype + "".join(f"[{d}]" for d in arr.dims)
            raise self.err(call, f"swap: '{x}' ({decl(a)}) and '{y}' ({decl(b)}) differ in type or dimensions")
        return x, y

    def repeat_loops(self, nodes) -> tuple:
        """The :class:`Loop` of each ``for`` in ``nodes`` (enclosing loops a nest does not use,
        outermost first; :mod:`loopmodel.fileio.c_nests`), read after the nest: their bounds are
        affine in the indices of the ones before them and in sizes.

        Raises:
            KernelError: a loop header outside the accepted forms (naming the line).
        """
        out = []
        for node in nodes:
            index, start = self.loop_init(node)
            out.append(self._header(node, index, start, tuple(lp.index for lp in out)))
        return tuple(out)

    def _header(self, node, index: str, start, outer: tuple) -> Loop:
        """The :class:`Loop` of a ``for`` whose index and start expression :meth:`loop_init` read: its
        step, its condition's bound and its start, affine in the ``outer`` indices and sizes."""
        step = self.loop_step(node.next, index)
        stop = self.loop_cond(node.cond, index, outer, step)
        return Loop(index, self.affine(start, outer, "loop bound"), stop, step, node.coord.line - 1)

    def loop(self, node):
        index, start = self.loop_init(node)
        if any(lp.index == index for lp in self.loops):
            raise self.err(node, f"loop index '{index}' reused in nested loop")
        if index in self.arrays:
            raise self.err(node, f"loop index '{index}' is declared as an array")
        self.loops.append(self._header(node, index, start, tuple(lp.index for lp in self.loops)))
        body = node.stmt
        items = body.block_items or [] if isinstance(body, c_ast.Compound) else [body]
        real = [it for it in items if not isinstance(it, c_ast.Pragma)]
        pragmas = [it for it in items if isinstance(it, c_ast.Pragma)]
        fors = [it for it in real if isinstance(it, c_ast.For)]
        if fors:
            if len(real) != 1:
                raise self.err(fors[0] if len(fors) > 1 else real[0] if real[0] is not fors[0] else real[1],
                               "imperfect loop nest (statements beside an inner loop) not supported")
            self.pragma(*pragmas)
            self.loop(fors[0])
        elif pragmas:
            raise self.err(pragmas[0], "a pragma in the innermost loop's body is not supported (put it before "
                                       "the loop it applies to)")
        else:
            if not real:
                raise self.err(node, "innermost loop body is empty")
            for stmt in real:
                self.statement(stmt)

    def loop_init(self, node):
        init = node.init
        if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None:
            d = init.decls[0]
            return d.name, d.init
        if isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
            name = init.lvalue.name
            if name in self.scalars and not is_integer(self.scalars[name].ctype):
                raise self.err(init, f"loop index '{name}' must be an integer")
            if name in self.sizes and (name in self.constants or self.sizes[name] != Poly.symbol(name)):
                raise self.err(init, f"loop index '{name}' is a size constant (an integer parameter or a const "
                                     "used as a size)")
            self.sizes.pop(name, None)  # an integer parameter used as the loop's counter
            self.scalars.pop(name, None)
            return name, init.rvalue
        raise self.err(node, "loop must initialise one index, e.g. 'for (int i = 0; ...)'")

    def loop_step(self, nxt, index) -> int:
        def is_index(n):
            return isinstance(n, c_ast.ID) and n.name == index

        def const(n):
            if isinstance(n, c_ast.Constant) and n.type == "int":
                return int(n.value, 0)
            if isinstance(n, c_ast.UnaryOp) and n.op == "-" and isinstance(n.expr, c_ast.Constant) and n.expr.type == "int":
                return -int(n.expr.value, 0)
            return None

        step = None
        if isinstance(nxt, c_ast.UnaryOp) and is_index(nxt.expr):
            step = {"p++": 1, "++": 1, "p--": -1, "--": -1}.get(nxt.op)
        elif isinstance(nxt, c_ast.Assignment) and is_index(nxt.lvalue):
            if nxt.op in ("+=", "-=") and const(nxt.rvalue) is not None:
                step = const(nxt.rvalue) * (1 if nxt.op == "+=" else -1)
            elif nxt.op == "=" and isinstance(nxt.rvalue, c_ast.BinaryOp) and nxt.rvalue.op in "+-":
                b = nxt.rvalue
                if is_index(b.left) and const(b.right) is not None:
                    step = const(b.right) * (1 if b.op == "+" else -1)
                elif b.op == "+" and is_index(b.right) and const(b.left) is not None:
                    step = const(b.left)
        if step is None:
            raise self.err(nxt if nxt is not None else None,
                           f"loop step of '{index}' must be a constant increment (i++, i+=2)")
        if step == 0:
            raise self.err(nxt, f"loop step of '{index}' is zero")
        return step

    def loop_cond(self, cond, index, outer, step) -> Poly:
        if not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">=", "!=")):
            raise self.err(cond, f"loop condition must compare '{index}' with <, <=, > or >= (or != with a step "
                                 "of 1 or -1)")
        op, left, right = cond.op, cond.left, cond.right
        if op == "!=":
            if abs(step) != 1:
                raise self.err(cond, f"loop condition '!=' with a step of {step}: the loop may never end; use < or >")
            op = "<" if step > 0 else ">"
        if not (isinstance(left, c_ast.ID) and left.name == index):
            if isinstance(right, c_ast.ID) and right.name == index:
                op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
                left, right = right, left
            else:
                raise self.err(cond, f"loop condition must test the loop index '{index}'")
        bound = self.affine(right, outer, "loop bound")
        if (op in ("<", "<=")) != (step > 0):
            raise self.err(cond, f"loop condition '{op}' does not match the step direction of '{index}'")
        if op == "<=":
            bound = bound + 1
        elif op == ">=":
            bound = bound - 1
        return bound

    # statements -----------------------------------------------------------------
    def statement(self, stmt):
        if isinstance(stmt, c_ast.Decl):
            if stmt.init is None:
                raise self.err(stmt, "declarations inside the loop need an initial value")
            self.declare(stmt)
            if stmt.name in self.arrays:
                raise self.err(stmt, "arrays cannot be declared inside the loop nest")
            node = self.expr(stmt.init)
            self.statements.append(("scalar", stmt.name, node, None, stmt))
            return
        if isinstance(stmt, c_ast.UnaryOp) and stmt.op in ("p++", "++", "p--", "--"):
            raise self.err(stmt, "increment/decrement statements not supported in the loop body")
        if isinstance(stmt, c_ast.FuncCall):
            name = getattr(stmt.name, "name", "?")
            raise self.err(stmt, f"call to '{name}' not supported as a statement")
        if not isinstance(stmt, c_ast.Assignment):
            if isinstance(stmt, c_ast.Compound):
                for s in stmt.block_items or []:
                    self.statement(s)
                return
            raise self.unsupported(stmt)
        if stmt.op not in ("=",) + tuple(COMPOUND):
            raise self.err(stmt, f"assignment operator '{stmt.op}' not supported")
        lv = stmt.lvalue
        node = self.expr(stmt.rvalue)
        compound = COMPOUND.get(stmt.op)
        if isinstance(lv, c_ast.ArrayRef):
            key = self.array_ref(lv)
            self.writes.setdefault(key[:2], key[2])
            if compound:
                self.reads.setdefault(key[:2], key[2])
                node = _Node("op", BINOPS[compound], [_Node("load", key=key[:2]), node])
                self.count(node, top_only=True)
            self.statements.append(("array", key[:2], node, compound, stmt))
        elif isinstance(lv, c_ast.ID):
            name = lv.name
            if any(lp.index == name for lp in self.loops):
                raise self.err(lv, f"assignment to loop index '{name}' not supported")
            if name in self.arrays:
                raise self.err(lv, f"assignment to whole array '{name}'")
            if name not in self.scalars:
                raise self.err(lv, f"undefined identifier '{name}'")
            if compound:
                node = _Node("op", BINOPS[compound], [_Node("scalar", key=name), node])
                self.count(node, top_only=True)
            self.statements.append(("scalar", name, node, compound, stmt))
        elif isinstance(lv, c_ast.UnaryOp) and lv.op == "*":
            raise self.err(lv, "pointer dereference not supported")
        else:
            raise self.err(lv, "left-hand side must be an array element or a scalar")

    def array_ref(self, node):
        """Resolve ``a[..][..]`` to ``(array, offset, Access)``."""
        subs = []
        n = node
        while isinstance(n, c_ast.ArrayRef):
            subs.append(n.subscript)
            n = n.name
        subs.reverse()
        if not isinstance(n, c_ast.ID):
            raise self.err(node, "only direct array references (a[i][j]) are supported")
        name = n.name
        if name not in self.arrays:
            if name in self.scalars:
                raise self.err(node, f"'{name}' is a scalar, not an array")
            raise self.err(node, f"undefined array '{name}'")
        arr = self.arrays[name]
        if len(subs) != len(arr.dims):
            raise self.err(node, f"'{name}' has {len(arr.dims)} dimension(s) but is indexed with {len(subs)}")
        indices = tuple(self.affine(s, self.loop_indices(), f"index of '{name}'") for s in subs)
        offset = Poly()
        for idx, stride in zip(indices, arr.strides):
            offset = offset + idx * stride
        access = Access(name, indices, offset, node.coord.line - 1, node.coord.column)
        return name, offset, access

    def loop_indices(self):
        return tuple(lp.index for lp in self.loops)

    def expr(self, n) -> _Node:
        """Build the expression tree and count its operations."""
        node = self._expr(n)
        self.count(node)
        return node

    def _expr(self, n) -> _Node:
        if isinstance(n, c_ast.Constant):
            if n.type in ("char", "string"):
                raise self.err(n, f"{n.type} literal not supported")
            return _Node("const")
        if isinstance(n, c_ast.ID):
            if n.name in self.scalars:
                return _Node("scalar", key=n.name)
            if n.name in self.loop_indices():
                self.index_values.add(n.name)
                return _Node("const")
            if n.name in self.arrays:
                raise self.err(n, f"array '{n.name}' used without index")
            if n.name in self.constants or self.size_symbol(n.name) is not None:
                return _Node("const")
            raise self.err(n, f"undefined identifier '{n.name}'")
        if isinstance(n, c_ast.ArrayRef):
            name, offset, access = self.array_ref(n)
            self.reads.setdefault((name, offset), access)
            return _Node("load", key=(name, offset))
        if isinstance(n, c_ast.BinaryOp):
            if n.op not in BINOPS:
                raise self.err(n, f"operator '{n.op}' not supported in kernel expressions")
            op = "MUL" if n.op == "/" and _power_of_two(n.right) else BINOPS[n.op]
            return _Node("op", op, [self._expr(n.left), self._expr(n.right)])
        if isinstance(n, c_ast.UnaryOp):
            if n.op in ("-", "+"):
                return self._expr(n.expr)
            if n.op in ("*", "&"):
                raise self.err(n, f"pointer operator '{n.op}' not supported")
            raise self.err(n, f"operator '{n.op}' not supported in kernel expressions")
        if isinstance(n, c_ast.Cast):
            return self._expr(n.expr)
        if isinstance(n, c_ast.FuncCall):
            fname = getattr(n.name, "name", None)
            if fname not in FUNCTIONS:
                raise self.err(n, f"call to '{fname}' not supported (allowed: {ALLOWED_CALLS})")
            args = n.args.exprs if n.args else []
            want = ARITY.get(FUNCTIONS[fname], 1)
            if len(args) != want:
                raise self.err(n, f"'{fname}' takes {want} argument(s), got {len(args)}")
            kids = [self._expr(a) for a in args]
            if FUNCTIONS[fname] == "FMA":  # a * b + c: counted as the expression, an FMA candidate
                return _Node("op", "ADD", [_Node("op", "MUL", kids[:2]), kids[2]])
            return _Node("op", FUNCTIONS[fname], kids)
        if isinstance(n, c_ast.TernaryOp):
            self.selects.append(n.coord.line - 1 if n.coord else 0)
            kids = self._condition(n.cond) + [self._expr(n.iftrue), self._expr(n.iffalse)]
            return _Node("op", "FMAX", kids)
        if isinstance(n, c_ast.Assignment):
            raise self.err(n, "assignment inside an expression not supported")
        raise self.unsupported(n)

    def _condition(self, n) -> list:
        """The operands of a conditional expression's condition (``a < b``, ``x && y``, ``!x``, a
        value tested against zero): their loads and operations count, the comparison is the select's."""
        if isinstance(n, c_ast.BinaryOp) and n.op in ("<", "<=", ">", ">=", "==", "!="):
            return [self._expr(n.left), self._expr(n.right)]
        if isinstance(n, c_ast.BinaryOp) and n.op in ("&&", "||"):
            return self._condition(n.left) + self._condition(n.right)
        if isinstance(n, c_ast.UnaryOp) and n.op == "!":
            return self._condition(n.expr)
        return [self._expr(n)]

    def count(self, node: _Node, top_only: bool = False):
        """Add the node's operations (and FMA candidates) to the kernel totals."""
        stack = [node]
        while stack:
            nd = stack.pop()
            if nd.kind != "op":
                continue
            self.ops[nd.op] = self.ops.get(nd.op, 0) + 1
            if nd.op == "ADD" and any(c.kind == "op" and c.op == "MUL" for c in nd.children):
                self.fma += 1
            if not top_only:
                stack.extend(nd.children)

    # finishing --------------------------------------------------------------------
    def finish(self, code: str = "") -> Kernel:
        """The :class:`Kernel` of what was collected; ``code``: its loop nest as C
        (:func:`~.c_print.nest_code`; '' for a description with no C).

        Raises:
            KernelError: no statements, nothing written, swapped arrays of different sizes, a
                pragma naming a variable the kernel does not have.
        """
        if not self.statements:
            raise KernelError("innermost loop has no statements", file=self.filename)
        if not self.writes and not any(k == "scalar" for k, *_ in self.statements):
            raise KernelError("kernel writes nothing", file=self.filename)
        self.extent_notes = c_function.resolve_extents(self, self.open_arrays)
        for x, y in self.swaps:
            if self.arrays[x].dims != self.arrays[y].dims:
                raise KernelError(f"swap({x}, {y}): the arrays reach {self.arrays[x].dims[0]} and "
                                  f"{self.arrays[y].dims[0]} elements; swapped arrays need the same size (give it "
                                  "in the parameters)", file=self.filename)
        self.check_pragma_names()
        return Kernel(
            source=self.filename,
            arrays=dict(self.arrays),
            scalars=dict(self.scalars),
            loops=tuple(self.loops),
            reads=tuple(self.reads.values()),
            writes=tuple(self.writes.values()),
            operations={k: v for k, v in sorted(self.ops.items())},
            fma_candidates=self.fma,
            recurrences=tuple(self.recurrences()),
            constants=frozenset(self.constants),
            pragmas=tuple(p.text() for p in self.pragma_models),
            swaps=tuple(self.swaps),
            index_values=tuple(lp.index for lp in self.loops if lp.index in self.index_values),
            code=code,
            parameters=frozenset(self.parameters),
        )

    def check_pragma_names(self) -> None:
        """Every variable a pragma's clause names is an array, scalar or loop index of the kernel.

        Raises:
            KernelError: the first that is not (naming the pragma).
        """
        known = set(self.arrays) | set(self.scalars) | set(self.loop_indices())
        for p in self.pragma_models:
            unknown = [n for n in p.names() if n not in known]
            if unknown:
                raise KernelError(f"'#pragma {p.text()}' names '{unknown[0]}', which is not an array, scalar or "
                                  "loop index of the kernel", file=self.filename)

    def notes(self) -> tuple:
        """Notes on the kernel: the extents taken from the accesses (:attr:`extent_notes`) and
        the integer arrays (:data:`INTEGER_NOTE`)."""
        ints = [a.name for a in self.arrays.values() if is_integer(a.ctype)]
        selects = (SELECT_NOTE.format(lines=", ".join(map(str, sorted(set(self.selects))))),) if self.selects else ()
        return tuple(self.extent_notes) + ((INTEGER_NOTE.format(names=", ".join(ints)),) if ints else ()) + selects + \
            tuple(self.guard_notes)

    def recurrences(self):
        """Loop-carried dependencies of the innermost loop (scalars and arrays)."""
        inner = self.loops[-1]
        out = []
        # scalars: read before (re)definition in the iteration, and written in the body
        defined: dict = {}
        written = {key for kind, key, *_ in self.statements if kind == "scalar"}
        for kind, key, node, compound, stmt in self.statements:
            if kind == "scalar" and key in written and key not in defined:
                graph = _dependency_graph(node, lambda nd: nd.kind == "scalar" and nd.key == key, defined)
                if graph:
                    out.append(Recurrence(key, 1, graph, _reduction(graph)))
            if kind == "scalar":
                defined[key] = node
        # arrays: a[i] = f(a[i-d]) with constant d > 0 along the inner loop
        for kind, key, node, compound, stmt in self.statements:
            if kind != "array":
                continue
            name, w_off = key
            coef_w = coefficient(w_off, inner.index)
            if coef_w.is_zero():
                # element invariant in the inner loop (y[j] += ...): a reduction
                if (name, w_off) in self.reads:
                    graph = _dependency_graph(node, lambda nd, k=key: nd.kind == "load" and nd.key == k, defined)
                    if graph:
                        out.append(Recurrence(name, 1, graph, _reduction(graph)))
                continue
            for (rname, r_off), acc in self.reads.items():
                if rname != name:
                    continue
                diff = w_off - r_off
                if not diff.is_constant() or diff.is_zero():
                    continue
                c = coef_w.constant_value() if coef_w.is_constant() else None
                if not c:
                    continue
                d = diff.constant_value() / (c * inner.step)
                if d <= 0 or d != int(d):
                    continue
                graph = _dependency_graph(node, lambda nd, k=(rname, r_off): nd.kind == "load" and nd.key == k,
                                          defined)
                if graph:
                    out.append(Recurrence(name, int(d), graph, False))
        return out


#: the first dimension of an array parameter declared without it, until the accesses give it
_OPEN = Poly.symbol("?")


def _integer_cast(node) -> bool:
    """Whether a ``Cast`` converts to an integer type (``(long)n``, ``(size_t)n``)."""
    t = node.to_type.type
    return isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) and \
        is_integer(type_name(t.type.names) or "")


def _power_of_two(node) -> bool:
    """True for a floating-point or integer literal that is a power of two (``2.0``, ``0.5f``, ``4``):
    dividing by it is exact as a multiplication by its reciprocal, and compilers emit that
    multiplication at -O1 and above without -ffast-math (a division by any other constant stays a
    division unless -freciprocal-math is given)."""
    if not isinstance(node, c_ast.Constant) or node.type not in ("double", "float", "int", "long double"):
        return False
    try:
        value = float(node.value.rstrip("fFlLuU")) if node.type != "int" else c_integer(node.value)
    except (TypeError, ValueError):
        return False
    return bool(value) and value > 0 and math.frexp(value)[0] == 0.5


def _dependency_graph(node: _Node, match, env) -> DependencyGraph | None:
    """The operations on the paths from leaves satisfying ``match`` up to ``node``, as a
    :class:`~loopmodel.ir.dependency.DependencyGraph`; None when no leaf reaches ``node``.

    Scalars defined earlier in the same iteration (``env``) are expanded, so a dependency
    through a temporary (``t = a[i-1]*c; a[i] = t + 1``) is seen; a temporary used several
    times is one node, so the graph stays linear in the kernel's size (the number of paths
    does not). A scalar reached again while it is being expanded (a temporary redefined
    from itself) ends that path. Iterative depth-first search, no recursion limit.
    """
    def resolve(nd):
        seen = set()
        while not match(nd) and nd.kind == "scalar" and nd.key in env and id(nd) not in seen:
            seen.add(id(nd))
            nd = env[nd.key]
        return nd

    nodes = [("", ())]  # SOURCE: the dependent read
    index: dict = {}  # id(node) -> graph index, None: no path
    open_ = set()  # expanded, not finished: the ancestors of the top of the stack
    stack = [resolve(node)]
    while stack:
        nd = stack[-1]
        key = id(nd)
        if key in index:
            stack.pop()
        elif match(nd) or nd.kind != "op":
            index[key] = SOURCE if match(nd) else None
            stack.pop()
        elif key not in open_:
            open_.add(key)
            stack += [c for c in map(resolve, nd.children) if id(c) not in index and id(c) not in open_]
        else:
            kids = sorted({index.get(id(c)) for c in map(resolve, nd.children)} - {None})
            index[key] = None
            if kids:
                nodes.append((nd.op, tuple(kids)))
                index[key] = len(nodes) - 1
            open_.discard(key)
            stack.pop()
    root = index.get(id(resolve(node)))
    return None if root is None else DependencyGraph(tuple(nodes), root)


def _reduction(graph: DependencyGraph) -> bool:
    """A reduction a compiler may split into partial sums: every path is one ADD, or one MUL."""
    return graph.single_operation() in ("ADD", "MUL")


def _declared_restrict(t) -> bool:
    """Whether a parameter's type node declares the pointer it is ``restrict``: ``double *restrict
    a``, ``double (*restrict a)[M]`` (the pointer's qualifiers) or ``double a[restrict][M]`` (an
    array parameter is a pointer; the qualifiers in its first brackets are the pointer's,
    C11 §6.7.6.3)."""
    if isinstance(t, c_ast.PtrDecl):
        return "restrict" in (t.quals or [])
    return isinstance(t, c_ast.ArrayDecl) and "restrict" in (t.dim_quals or [])
