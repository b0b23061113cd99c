"""Kerncraft's YAML kernel descriptions -> :class:`~loopmodel.ir.kernel.Kernel`, and the kernel
loader that picks the front-end by file suffix.

A kernel description (Kerncraft's alternative to C code) lists what the models need
directly (kerncraft-tool-paper.txt §2.1 names the same facts for the C front-end)::

    arrays:                      # name -> element type and dimensions (null: a scalar)
        a: {type: [double], dimension: [M, N]}
        s: {type: [double], dimension: null}
    loops:                       # outermost first; stop exclusive, as 'for (j = 1; j < M-1; ++j)'
        - {index: j, start: 1, stop: M-1, step: 1}
        - {index: i, start: 1, stop: N-1, step: 1}
    data sources:                # array -> index lists read per iteration (null: a scalar)
        a: [[j, i-1], [j, i+1], [j-1, i], [j+1, i]]
        s: [null]
    data destinations:           # array -> index lists written per iteration
        b: [[j, i]]
    flops: {"+": 3, "*": 1}      # arithmetic operations per iteration
    code: ...                    # decorative (unused, as in Kerncraft)

The file is read by :mod:`loopmodel.fileio.yaml_reader` (bounded, a safe loader, duplicate keys
refused; Kerncraft's ``!!python/tuple`` tag is read as a plain list; no other Python tag is
accepted), and every expression (dimensions,
bounds, indices) with the C front-end's integer-expression grammar
(:meth:`loopmodel.fileio.c_kernel.KernelBuilder.affine`: integer constants, size constants, loop
indices, ``+ - *``, affine in the loop indices): nothing in the file is evaluated as code.

What the description cannot say: the expression tree of the loop body. So no addition is
fused with a multiplication (no FMA candidates), and a loop-carried dependency through an
array (``a[i] = f(a[i-1])``) is not modelled by the analytic in-core model; a note says so.
A scalar destination is taken as a sum reduction (``s += ...``) when the flops contain an
addition. Compiled in-core analyses (llvm-mca, OSACA, RooflineASM) need C code and are not
possible.
"""
from __future__ import annotations

from pycparser import c_parser

from ..errors import KernelError
from ..ir.kernel import Access, Array, Kernel, Loop, Recurrence, Scalar, coefficient
from ..ir.poly import Poly
from .c_kernel import ELEMENT_SIZES, SCALAR_TYPES, KernelBuilder, parse_c
from .c_limits import check_depth, check_statement_tokens
from .yaml_reader import load_yaml

#: file suffixes read as YAML kernel descriptions (anything else is C)
YAML_SUFFIXES = (".yml", ".yaml")
#: Kerncraft's flop keys -> loopmodel's operation types (ir.kernel.OPERATION_TYPES)
FLOP_KEYS = {"+": "ADD", "-": "ADD", "*": "MUL", "/": "DIV"}
_KEYS = ("arrays", "loops", "data sources", "data destinations", "flops")
_OPTIONAL = ("code",)



def kernel_from_text(text: str, path, source=None) -> tuple:
    """A kernel file's ``text`` parsed, C or YAML description by the suffix of ``path``
    (:data:`YAML_SUFFIXES`); :func:`loopmodel.fileio.kernel_file.load_kernel` reads the file
    and caches this.

    Returns:
        ``(kernel, defaults, text, notes)``: the :class:`Kernel`, ``#define`` defaults
        (constant -> int; none for YAML), the C text for compiled analyses (None for YAML;
        :attr:`loopmodel.fileio.c_kernel.CKernel.text`) and notes on what the front-end
        inferred or left out, or what the description leaves out (a tuple of one-line strings).

    Args:
        source: the :class:`~loopmodel.ir.kernel_source.KernelSource` of a C kernel (function,
            ``-I`` folders, ``-D`` sizes), None for the file alone.

    Raises:
        KernelError: malformed or unsupported (one line naming ``path``).
    """
    if not path.lower().endswith(YAML_SUFFIXES):
        parsed = parse_c(text, path, source)
        return parsed.kernel, parsed.defaults, parsed.text, parsed.notes
    kernel, notes = parse_kernel_yaml(load_yaml_text(text, path), path)
    return kernel, {}, None, notes


def load_yaml_text(text: str, filename: str):
    """YAML text -> Python data (a :class:`yaml.SafeLoader` that also reads ``!!python/tuple``).

    Raises:
        KernelError: not valid YAML (one line naming ``filename``, line and column).
    """
    return load_yaml(text, filename, KernelError, tuples=True)


def parse_kernel_yaml(data, filename: str = "<kernel.yml>") -> tuple:
    """A loaded YAML kernel description (a dict, see the module text) -> ``(kernel, notes)``.

    Returns:
        ``(Kernel, notes)``: the kernel IR (accesses deduplicated by array and offset, in the
        order listed) and notes on what the analytic in-core model cannot know from it.

    Raises:
        KernelError: a missing or unknown key, a wrong type, an undeclared array, an index
            list of the wrong length, an expression outside the grammar (names ``where``).
    """
    if not isinstance(data, dict):
        raise KernelError("a YAML kernel description must be a mapping with keys " + ", ".join(_KEYS), file=filename)
    for key in data:
        if key not in _KEYS + _OPTIONAL:
            raise KernelError(f"unknown key '{key}' (expected {', '.join(_KEYS + _OPTIONAL)})", file=filename)
    for key in _KEYS:
        if key not in data:
            raise KernelError(f"missing key '{key}'", file=filename)
    return _YamlKernel(filename).build(data)


def read_expression(builder: KernelBuilder, value, allowed: tuple, what: str) -> Poly:
    """An integer or an expression string -> Poly, read with ``builder``'s C integer-expression
    grammar (:meth:`KernelBuilder.affine`: constants, size names, ``+ - *``, affine in the
    loop indices ``allowed``); ``what`` names the value in messages. Nothing is evaluated as code.

    Raises:
        KernelError: not an integer or a string, not an expression, outside the grammar, or
            beyond the limits of :mod:`loopmodel.fileio.c_limits` (message only: the caller
            adds the position).
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise KernelError(f"{what} must be an integer or an expression such as 'N-1', got {value!r}")
    if isinstance(value, int):
        return Poly.const(value)
    check_statement_tokens(value, None)
    try:
        ast = c_parser.CParser().parse(f"int __loopmodel_value = ({value});")
    except Exception:  # pycparser's ParseError (and sometimes others): not an expression
        raise KernelError(f"cannot read '{value[:40]}' as an integer expression") from None
    check_depth(ast, None)
    try:
        return builder.affine(ast.ext[0].init, allowed, what)
    except KernelError as exc:  # its position is in the wrapped text: the caller names the key
        raise KernelError(f"'{value}': {exc.message}") from None


class _YamlKernel:
    """Builds the Kernel; expressions go through the C front-end's ``affine`` grammar."""

    def __init__(self, filename: str):
        self.filename = filename
        self.b = KernelBuilder(filename)
        self.notes: list = []

    def err(self, where: str, message: str) -> KernelError:
        return KernelError(message, file=self.filename, where=where)

    def expr(self, value, allowed: tuple, what: str, where: str) -> Poly:
        """An integer or an expression string -> Poly (C integer-expression grammar, affine in ``allowed``)."""
        try:
            return read_expression(self.b, value, allowed, what)
        except KernelError as exc:
            raise self.err(where, exc.message) from None

    def mapping(self, data, key: str) -> dict:
        value = data[key]
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.err(key, "expected a mapping of names")
        return value

    def build(self, data) -> tuple:
        self.declare(self.mapping(data, "arrays"))
        self.loops(data["loops"])
        reads = self.accesses(self.mapping(data, "data sources"), "data sources")
        writes = self.accesses(self.mapping(data, "data destinations"), "data destinations")
        ops = self.flops(self.mapping(data, "flops"))
        scalar_writes = [n for n in self.mapping(data, "data destinations") if n in self.b.scalars]
        if not writes and not scalar_writes:
            raise self.err("data destinations", "the kernel writes nothing")
        recurrences = self.recurrences(reads, writes, scalar_writes, ops)
        if ops.get("ADD") and ops.get("MUL"):
            self.notes.append("YAML kernel description: no expression tree, so no addition is fused with a "
                              "multiplication (no FMA) in the analytic in-core model")
        kernel = Kernel(source=self.filename, arrays=dict(self.b.arrays), scalars=dict(self.b.scalars),
                        loops=tuple(self.b.loops), reads=reads, writes=writes, operations=ops, fma_candidates=0,
                        recurrences=recurrences, constants=frozenset(self.b.constants))
        return kernel, tuple(self.notes)

    def declare(self, arrays: dict) -> None:
        for name, spec in arrays.items():
            where = f"arrays.{name}"
            if not isinstance(name, str) or not name.isidentifier():
                raise self.err(where, f"'{name}' is not a valid array name")
            if not isinstance(spec, dict) or "type" not in spec:
                raise self.err(where, "expected 'type' and 'dimension'")
            words = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
            if not words or not all(isinstance(w, str) for w in words):
                raise self.err(where + ".type", f"expected a C type such as [double], got {spec['type']!r}")
            ctype = words[-1]
            dims = spec.get("dimension")
            if dims is None:
                if ctype not in SCALAR_TYPES:
                    raise self.err(where + ".type", f"scalar '{name}' has unsupported type '{ctype}'")
                self.b.scalars[name] = Scalar(name, ctype, SCALAR_TYPES[ctype])
                continue
            if not isinstance(dims, list) or not dims:
                raise self.err(where + ".dimension", "expected a list of sizes such as [M, N], or null for a scalar")
            if ctype not in ELEMENT_SIZES:
                raise self.err(where + ".type", f"array '{name}' has type '{ctype}'; only double and float arrays "
                                                "are supported")
            polys = tuple(self.expr(d, (), "array dimension", f"{where}.dimension[{k}]") for k, d in enumerate(dims))
            self.b.arrays[name] = Array(name, ctype, ELEMENT_SIZES[ctype], polys)

    def loops(self, loops) -> None:
        if not isinstance(loops, list) or not loops:
            raise self.err("loops", "expected a list of loops (index, start, stop, step), outermost first")
        for k, lp in enumerate(loops):
            where = f"loops[{k}]"
            if not isinstance(lp, dict) or set(lp) != {"index", "start", "stop", "step"}:
                raise self.err(where, "expected exactly the keys index, start, stop, step")
            index = lp["index"]
            if not isinstance(index, str) or not index.isidentifier():
                raise self.err(where + ".index", f"'{index}' is not a valid loop index name")
            if index in self.b.arrays or index in self.b.scalars or any(o.index == index for o in self.b.loops):
                raise self.err(where + ".index", f"loop index '{index}' is already declared")
            outer = tuple(o.index for o in self.b.loops)
            step = self.expr(lp["step"], (), "loop step", where + ".step")
            if not step.is_constant() or step.constant_value() == 0:
                raise self.err(where + ".step", f"loop step '{lp['step']}' must be a non-zero integer constant")
            start = self.expr(lp["start"], outer, "loop bound", where + ".start")
            stop = self.expr(lp["stop"], outer, "loop bound", where + ".stop")
            self.b.loops.append(Loop(index, start, stop, int(step.constant_value())))

    def accesses(self, spec: dict, key: str) -> tuple:
        """Index lists of ``data sources`` / ``data destinations`` -> distinct Accesses (scalars skipped)."""
        indices = tuple(lp.index for lp in self.b.loops)
        out: dict = {}
        for name, lists in spec.items():
            where = f"{key}.{name}"
            if name in self.b.scalars:
                if lists is not None and (not isinstance(lists, list) or any(x is not None for x in lists)):
                    raise self.err(where, f"'{name}' is a scalar: list it as [null]")
                continue
            if name not in self.b.arrays:
                raise self.err(where, f"'{name}' is not declared under 'arrays'")
            arr = self.b.arrays[name]
            if not isinstance(lists, list) or not lists:
                raise self.err(where, "expected a list of index lists such as [[j, i-1]]")
            for k, idx in enumerate(lists):
                if not isinstance(idx, list) or len(idx) != len(arr.dims):
                    raise self.err(f"{where}[{k}]", f"'{name}' has {len(arr.dims)} dimension(s); expected that "
                                                    f"many indices, got {idx!r}")
                polys = tuple(self.expr(e, indices, f"index of '{name}'", f"{where}[{k}][{d}]")
                              for d, e in enumerate(idx))
                offset = Poly()
                for p, stride in zip(polys, arr.strides):
                    offset = offset + p * stride
                out.setdefault((name, offset), Access(name, polys, offset))
        return tuple(out.values())

    def flops(self, flops: dict) -> dict:
        ops: dict = {}
        for key, count in flops.items():
            if key not in FLOP_KEYS:
                raise self.err(f"flops.{key}", f"unknown operation '{key}' (expected {', '.join(FLOP_KEYS)})")
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise self.err(f"flops.{key}", f"expected a count >= 0, got {count!r}")
            if count:
                ops[FLOP_KEYS[key]] = ops.get(FLOP_KEYS[key], 0) + count
        return dict(sorted(ops.items()))

    def recurrences(self, reads, writes, scalar_writes, ops) -> tuple:
        """Scalar destinations as sum reductions; array self-dependencies only noted."""
        out = []
        for name in scalar_writes:
            if ops.get("ADD"):
                out.append(Recurrence(name, 1, (("ADD",),), True))
                self.notes.append(f"YAML kernel description: scalar destination '{name}' taken as a sum reduction "
                                  f"({name} += ...)")
            else:
                self.notes.append(f"YAML kernel description: scalar destination '{name}' has no addition to reduce "
                                  "with; no loop-carried dependency assumed")
        inner = self.b.loops[-1]
        for w in writes:
            c = coefficient(w.offset, inner.index)
            for r in reads:
                d = w.offset - r.offset
                if r.array == w.array and c.is_constant() and not c.is_zero() and d.is_constant() \
                        and d.constant_value() * c.constant_value() * inner.step > 0:
                    self.notes.append(f"YAML kernel description: '{w}' depends on '{r}' of an earlier iteration; "
                                      "the analytic in-core model does not include that dependency (no expression "
                                      "tree)")
        return tuple(out)
