"""Design-space studies: the cartesian product of kernels, machines, sizes and analyze options.

A study file (YAML) names ``kernels`` (paths relative to the study file), ``machines``
(built-in names or paths), ``defines`` (name -> value or range in the ``-D`` syntax; each
kernel takes the ones it declares) and ``options`` (analyze option -> list of values).
:func:`read_study` checks it (ranges stay ranges: a study of 10^8 points is counted, not
listed), :func:`chunks` cuts its points into tasks of one kernel, machine and option set
each, made one at a time, :func:`run_chunk` computes a task exactly as
``loopmodel analyze KERNEL -m MACHINE -D ... --json`` computes each of its points (same
argument parsing, same :class:`~loopmodel.workflows.analysis.Analyzer`, same JSON document, from the
kernel's bytes and the machine's model that the task carries), and :func:`study_results`
runs the tasks on a ``dask.distributed`` client (:mod:`loopmodel.workflows.sweep_dask`) or in this
process, a bounded number in flight, reusing the per-user result cache
(:mod:`loopmodel.cache`) for tasks computed before. :func:`write_study` streams the rows to a
CSV or Parquet file (:mod:`loopmodel.workflows.sweep_output`), :func:`run_study` keeps them in a
:class:`Table` (at most :data:`MAX_TABLE_ROWS`).

Each point becomes one row: ``kernel`` (as given), ``machine`` (as given), one column per
define, one per option, ``error`` (the point's one-line :class:`LoopmodelError`, else None;
any other exception is a bug and stops the sweep) and the JSON report's fields flattened
with dots (:func:`flatten`). dask and pyarrow are imported only inside the functions that
need them.

Called, this module is the Python API's :func:`loopmodel.api.sweep`
(``loopmodel.sweep(kernel, machine, {"N": range(...)})``): the package's attribute ``sweep``
is this module once it is imported, so the module itself takes the call.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import hashlib
import itertools
import json
import os
import platform
import shlex
import sys
import types
from dataclasses import dataclass

from ..errors import LoopmodelError

#: points per task (a task prepares one analyzer and runs its points; the cache stores tasks)
CHUNK_POINTS = 32
#: the study file's keys
STUDY_KEYS = ("kernels", "machines", "defines", "options")
#: columns every table starts with (then the defines, the options, ``error``)
FIXED_COLUMNS = ("kernel", "machine")
#: analyze options a study cannot vary: they choose the input or the output, not the analysis
NOT_OPTIONS = frozenset({"help", "machine", "define", "json", "json_file", "verbose", "no_progress", "unit",
                         "plot", "force", "output"})
#: the report's fields a row holds (``y`` of the study plot)
DEFAULT_Y = "ecm.performance.cy_per_cl"


class StudyError(LoopmodelError):
    """A malformed study file (one line naming the file and the key)."""


@dataclass(frozen=True)
class StudyKernel:
    """A kernel of a study, with its bytes: a task carries them to the worker, which parses
    them (:meth:`parts`) and reads no file, so a worker with another working folder, or on
    another host, analyzes exactly the bytes the result cache's key (``digest``) names.

    Attributes:
        given: the path as written in the study.
        path: ``given`` relative to the study file's folder: the file read, and the kernel's
            name in the reports (as ``loopmodel analyze PATH`` names it).
        constants: the kernel's size constants.
        digest: SHA-256 hex of the file's bytes.
        raw: the file's bytes (at most :data:`loopmodel.fileio.reader.KERNEL_MAX_BYTES`).
    """

    given: str
    path: str
    constants: frozenset
    digest: str
    raw: bytes = dataclasses.field(default=b"", repr=False, compare=False)

    def parts(self) -> tuple:
        """``(kernel, defaults, text, notes)`` as :func:`loopmodel.fileio.kernel_yaml.load_kernel_file`
        gives them for the file, from :attr:`raw` (``loopmodel analyze`` takes this in place of
        the path).

        Raises:
            KernelError: the bytes are not UTF-8 text or not a valid kernel (one line naming ``path``).
        """
        from ..errors import KernelError
        from ..fileio.c_kernel import parse_kernel
        from ..fileio.kernel_yaml import YAML_SUFFIXES, load_yaml_text, parse_kernel_yaml
        from ..fileio.reader import decode

        text = decode(self.raw, self.path, "kernel file", KernelError)
        if self.path.lower().endswith(YAML_SUFFIXES):
            kernel, notes = parse_kernel_yaml(load_yaml_text(text, self.path), self.path)
            return kernel, {}, None, notes
        kernel, defaults = parse_kernel(text, self.path)
        return kernel, defaults, text, ()

    def __str__(self) -> str:
        return self.path


@dataclass(frozen=True)
class StudyMachine:
    """A machine of a study: ``given`` as written, ``spec`` what ``-m`` gets (a built-in
    name, ``host``, or a path relative to the study file's folder; the reports name the
    machine by it), ``digest`` SHA-256 hex of the validated model, ``model`` the model itself
    (loaded here once: a worker reads no machine file, and ``host`` is this host's model)."""

    given: str
    spec: str
    digest: str
    model: object = dataclasses.field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Study:
    """A checked study file.

    Attributes:
        path: the study file.
        kernels, machines: tuples of :class:`StudyKernel` / :class:`StudyMachine`.
        defines: size constant -> sequence of sizes (int), in file order: a ``range`` for a
            range however long (never expanded), else a list.
        options: analyze option (argparse dest, e.g. ``cache_predictor``) -> tuple of values
            as given (str, int, float, bool, None or a list of those).
        tokens: option -> tuple of analyze argument tuples, one per value.
    """

    path: str
    kernels: tuple
    machines: tuple
    defines: dict
    options: dict
    tokens: dict

    def columns(self) -> tuple:
        """The table's leading columns: kernel, machine, the defines, the options, error."""
        return FIXED_COLUMNS + tuple(self.defines) + tuple(self.options) + ("error",)

    def points(self) -> int:
        """How many points the study has (each kernel with its own defines only), counted
        from the lengths of the define sequences (nothing is expanded)."""
        combos = len(self.machines)
        for vals in self.options.values():
            combos *= len(vals)
        return sum(combos * _product_size([self.defines[n] for n in self._own(k)]) for k in self.kernels)

    def _own(self, kernel: StudyKernel) -> list:
        return [n for n in self.defines if n in kernel.constants]

    def varying_define(self) -> str | None:
        """The first define (file order) that takes more than one value, else None."""
        return next((n for n, vals in self.defines.items() if len(vals) > 1), None)


@dataclass(frozen=True)
class Chunk:
    """One task: points of one kernel, machine and option set.

    Attributes:
        index: position among the study's tasks (rows come out in this order).
        kernel, machine: :class:`StudyKernel`, :class:`StudyMachine`.
        options: ``((option, value), ...)`` of this task, in file order.
        argv: analyze arguments after ``KERNEL -m MACHINE`` that give these options.
        points: tuple of ``{define: size}`` (the kernel's own defines of the study).
    """

    index: int
    kernel: StudyKernel
    machine: StudyMachine
    options: tuple
    argv: tuple
    points: tuple


@dataclass(frozen=True)
class ChunkResult:
    """What a task returns, compactly (most fields are the same for every point of a task).

    Attributes:
        columns: the flattened report fields and ``error``, in the order they first appear.
        shared: column -> value that every point of the task has (sent once).
        rows: one tuple per point: the values of the other columns (in ``columns`` order),
            None where the point has no such field.
    """

    columns: tuple
    shared: dict
    rows: list

    @classmethod
    def of(cls, rows: list) -> "ChunkResult":
        """From one flat dict per point."""
        columns = tuple(dict.fromkeys(c for r in rows for c in r))
        first = rows[0] if rows else {}
        shared = {c: v for c, v in first.items()
                  if all(c in r and type(r[c]) is type(v) and r[c] == v for r in rows)}
        rest = [c for c in columns if c not in shared]
        return cls(columns, shared, [tuple(r.get(c) for c in rest) for r in rows])

    def failures(self) -> int:
        """How many points have an ``error``."""
        if "error" in self.shared:
            return len(self.rows) if self.shared["error"] is not None else 0
        if "error" not in self.columns:
            return 0
        at = [c for c in self.columns if c not in self.shared].index("error")
        return sum(1 for values in self.rows if values[at] is not None)

    def dicts(self):
        """One flat dict per point (every column of the task, in ``columns`` order)."""
        rest = [c for c in self.columns if c not in self.shared]
        for values in self.rows:
            own = dict(zip(rest, values))
            yield {c: self.shared[c] if c in self.shared else own[c] for c in self.columns}


# ---------------------------------------------------------------- study file


def read_study(path: str, trust_machine_flags: bool = False) -> Study:
    """Read and check a study file.

    Args:
        path: the study file.
        trust_machine_flags: ``loopmodel sweep --trust-machine-flags`` (the person running it
            trusts the machine files; a study cannot say so): every point is analyzed with
            ``--trust-machine-flags`` (a column ``trust_machine_flags`` in the rows).

    Returns:
        :class:`Study`; kernels are parsed (their constants) and machines loaded once here.

    Raises:
        StudyError: unreadable YAML, an unknown key, a missing or empty list, a kernel that
            cannot be read, an unknown machine, a bad define or option (one line naming the
            file and the key).
    """
    from ..fileio.reader import read_yaml

    data = read_yaml(path, "study file", StudyError)
    if not isinstance(data, dict):
        raise StudyError("expected a mapping with keys " + ", ".join(STUDY_KEYS), file=path)
    unknown = [k for k in data if k not in STUDY_KEYS]
    if unknown:
        raise StudyError(f"unknown key (choose {', '.join(STUDY_KEYS)})", file=path, where=str(unknown[0]))
    folder = os.path.dirname(path)
    kernels = tuple(_kernel(path, folder, i, k) for i, k in enumerate(_names(data, "kernels", path)))
    machines = tuple(_machine(path, folder, i, m) for i, m in enumerate(_names(data, "machines", path)))
    defines = _defines(data.get("defines") or {}, path)
    options, tokens = _options(data.get("options") or {}, path)
    if trust_machine_flags:
        options["trust_machine_flags"], tokens["trust_machine_flags"] = (True,), (("--trust-machine-flags",),)
    clash = [n for n in defines if n in FIXED_COLUMNS + ("error",) or n in options]
    if clash:
        raise StudyError("a define cannot have the name of a column (kernel, machine, error, an option)",
                         file=path, where=f"defines.{clash[0]}")
    return Study(path, kernels, machines, defines, options, tokens)


def _names(data: dict, key: str, path: str) -> list:
    """``data[key]``: a non-empty list of strings.

    Raises:
        StudyError: missing, not a list (one name must be written as a list of one, so that a
            typo cannot turn a list into a string), empty, or an item that is not a string.
    """
    value = data.get(key)
    if value is not None and not isinstance(value, list):
        example = f"[{value}]" if isinstance(value, str) else "[...]"
        raise StudyError(f"expected a list (e.g. {key}: {example}), got {type(value).__name__}",
                         file=path, where=key)
    if not value:
        raise StudyError("expected a non-empty list", file=path, where=key)
    for i, v in enumerate(value):
        if not isinstance(v, str) or not v:
            raise StudyError("expected a path or a name", file=path, where=f"{key}[{i}]")
    return value


def _kernel(path: str, folder: str, i: int, given: str) -> StudyKernel:
    from ..fileio.reader import KERNEL_MAX_BYTES, read_bytes

    where = f"kernels[{i}]"
    kpath = os.path.normpath(os.path.join(folder, given))
    try:
        raw = read_bytes(kpath, "kernel file", StudyError, KERNEL_MAX_BYTES)
    except StudyError as exc:
        raise StudyError(f"{given}: {exc.message}", file=path, where=where) from None
    kernel = StudyKernel(given, kpath, frozenset(), hashlib.sha256(raw).hexdigest(), raw)
    try:
        constants = kernel.parts()[0].constants
    except LoopmodelError as exc:
        raise StudyError(str(exc), file=path, where=where) from None
    return dataclasses.replace(kernel, constants=frozenset(constants))


def _machine(path: str, folder: str, i: int, given: str) -> StudyMachine:
    from ..fileio.machine_files import load_machine

    spec = given
    if given.lower().endswith((".yml", ".yaml")) or "/" in given or os.sep in given:
        spec = os.path.normpath(os.path.join(folder, given))
    try:
        model = load_machine(spec)
    except LoopmodelError as exc:
        raise StudyError(str(exc), file=path, where=f"machines[{i}]") from None
    return StudyMachine(given, spec, hashlib.sha256(repr(model).encode()).hexdigest(), model)


def _defines(data, path: str) -> dict:
    """``defines``: name -> value, ``-D`` range text, or a list of those -> name -> sequence of
    sizes, as ``-D`` options give them (:func:`loopmodel.fileio.defines.sweep`: a range stays
    a ``range``, however many sizes it holds; a list gives each size once, in order)."""
    from ..fileio.defines import sweep

    if not isinstance(data, dict):
        raise StudyError("expected a mapping of size constants to values or ranges", file=path, where="defines")
    out = {}
    for name, spec in data.items():
        specs = spec if isinstance(spec, list) else [spec]
        if not specs:
            raise StudyError("no values", file=path, where=f"defines.{name}")
        if any(isinstance(s, bool) or not isinstance(s, (int, str)) for s in specs):
            raise StudyError("expected a size or a range such as 100:2000:100", file=path, where=f"defines.{name}")
        try:
            out[str(name)] = sweep([f"{name}={s}" for s in specs]).values[str(name)]
        except LoopmodelError as exc:
            raise StudyError(exc.message, file=path, where=f"defines.{name}") from None
    return out


def _options(data, path: str) -> tuple:
    """``options`` -> ``(option -> tuple of values, option -> tuple of argument tuples)``."""
    if not isinstance(data, dict):
        raise StudyError("expected a mapping of analyze options to lists of values", file=path, where="options")
    known = option_aliases()
    options, tokens = {}, {}
    for key, values in data.items():
        name = known.get(str(key).replace("-", "_"))
        if name is None:
            raise StudyError(f"unknown analyze option (choose {', '.join(sorted(option_names()))})", file=path,
                             where=f"options.{key}")
        if name in options:
            raise StudyError(f"given twice (as {name})", file=path, where=f"options.{key}")
        values = values if isinstance(values, list) else [values]
        if not values:
            raise StudyError("expected a non-empty list of values", file=path, where=f"options.{key}")
        toks = []
        for i, v in enumerate(values):
            _check_untrusted(name, v, path, f"options.{key}[{i}]")
            try:
                toks.append(tuple(option_tokens(name, v)))
                check_options(toks[-1])
            except StudyError as exc:
                raise StudyError(exc.message, file=path, where=f"options.{key}[{i}]") from None
        options[name], tokens[name] = tuple(values), tuple(toks)
    return options, tokens


def _check_untrusted(name: str, value, path: str, where: str) -> None:
    """A study is data (:mod:`loopmodel.gate`): the compiler it names and the flags it gives
    pass the checks a machine file's do, and it cannot grant trust.

    Raises:
        StudyError: a compiler that is not a known compiler name, a flag off the allow-list,
            or ``trust_machine_flags`` (one line naming the file and the option).
    """
    from .. import gate

    if name == "trust_machine_flags":
        raise StudyError("a study file cannot grant trust: pass --trust-machine-flags to 'loopmodel sweep' "
                         "if you trust the machine files", file=path, where=where)
    if name == "compiler" and value is not None:
        gate.check_compiler_name(value, path, where, error=StudyError)
    if name == "compiler_flags" and value is not None:
        try:
            flags = shlex.split(str(value))
        except ValueError as exc:
            raise StudyError(f"cannot split the compiler flags {value!r}: {exc}", file=path, where=where) from None
        gate.check_flags(flags, path, where, error=StudyError)


# ---------------------------------------------------------------- analyze's own arguments


def _raise_argument_error(message: str):
    raise StudyError(message)


@functools.lru_cache(maxsize=1)
def analyze_parser() -> argparse.ArgumentParser:
    """``loopmodel analyze``'s own parser (one per process); errors raise :class:`StudyError`."""
    from ..cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    analyze = sub.choices["analyze"]
    analyze.error = _raise_argument_error  # one exception instead of a message and exit 2
    return analyze


def _actions() -> dict:
    """analyze option (dest) -> its argparse actions (two for ``--reassociation``/``--no-...``)."""
    out = {}
    for a in analyze_parser()._actions:
        if a.option_strings and a.dest not in NOT_OPTIONS and a.help != argparse.SUPPRESS:
            out.setdefault(a.dest, []).append(a)
    return out


def option_names() -> set:
    """The options a study may vary (analyze's argparse dests, e.g. ``cache_predictor``)."""
    return set(_actions())


def option_aliases() -> dict:
    """Name in a study -> option (argparse dest): the dest itself, and each long option name
    with ``_`` for ``-`` (``incore_model`` -> ``incore``); not the names of switches that set a
    fixed value (``no_reassociation``: write ``reassociate: false``)."""
    out = {}
    for dest, actions in _actions().items():
        out[dest] = dest
        for a in actions:
            if isinstance(a, argparse._StoreConstAction) and not isinstance(a, argparse._StoreTrueAction):
                continue
            out.update({f.lstrip("-").replace("-", "_"): dest for f in a.option_strings if f.startswith("--")})
    return out


def _flag(action) -> str:
    return next((s for s in action.option_strings if s.startswith("--")), action.option_strings[0])


def option_tokens(name: str, value, actions: dict | None = None) -> list:
    """analyze arguments that set option ``name`` (argparse dest) to ``value``: a switch is
    given for True and left out for False, ``reassociate`` takes True, False or None, an
    appending option (``pmodel``) a value or a list, any other option one value (None: its
    default).

    Raises:
        StudyError: the value does not fit the option (one line, no file).

    ``actions``: option -> its argparse actions, of another command (default: analyze's).
    """
    actions = (_actions() if actions is None else actions)[name]
    a = actions[0]
    if isinstance(a, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
        if not isinstance(value, bool):
            raise StudyError(f"expected true or false, got {value!r}")
        return [_flag(a)] if value == a.const else []
    if isinstance(a, argparse._StoreConstAction):
        if value is None:
            return []
        hit = next((x for x in actions if x.const == value and isinstance(value, type(x.const))), None)
        if hit is None:
            raise StudyError(f"expected one of {', '.join(json.dumps(x.const) for x in actions)} or null, "
                             f"got {value!r}")
        return [_flag(hit)]
    values = value if isinstance(a, argparse._AppendAction) and isinstance(value, list) else [value]
    if value is None:
        return []
    out = []
    for v in values:
        if isinstance(v, (list, dict)) or v is None:
            raise StudyError(f"expected a single value, got {json.dumps(v)}")
        out.append(f"{_flag(a)}={json.dumps(v) if isinstance(v, bool) else v}")
    return out


def check_options(argv) -> argparse.Namespace:
    """Parse ``argv`` (analyze options) as analyze would, and check its model names.

    Raises:
        StudyError: what analyze would refuse (one line).
    """
    from .analyze import model_names

    args = analyze_parser().parse_args(["KERNEL", "-m", "MACHINE", *argv])
    try:
        model_names(args.pmodel)
    except LoopmodelError as exc:
        raise StudyError(exc.message) from None
    return args


# ---------------------------------------------------------------- points and tasks


def _product_size(seqs: list) -> int:
    n = 1
    for s in seqs:
        n *= len(s)
    return n


def _product(seqs: list):
    """The cartesian product of ``seqs`` (last fastest) as tuples, one at a time: unlike
    ``itertools.product``, which first copies every sequence into a tuple, a ``range`` of
    10^8 sizes is walked, never stored."""
    if not seqs:
        yield ()
        return
    for value in seqs[0]:
        for rest in _product(seqs[1:]):
            yield (value, *rest)


def chunks(study: Study, size: int = CHUNK_POINTS):
    """The study's tasks, in row order: kernels, then machines, then the options' product
    (first option slowest), then the kernel's own defines' product (last define fastest),
    cut into tasks of at most ``size`` points.

    Yields:
        :class:`Chunk`, one at a time: the points of a task are made when it is taken, so a
        study of any number of points takes the memory of one task here.
    """
    names = list(study.options)
    index = itertools.count()
    for kernel in study.kernels:
        own = study._own(kernel)
        for machine in study.machines:
            for combo in itertools.product(*(range(len(study.options[n])) for n in names)):
                opts = tuple((n, study.options[n][i]) for n, i in zip(names, combo))
                argv = tuple(t for n, i in zip(names, combo) for t in study.tokens[n][i])
                points = (dict(zip(own, values)) for values in _product([study.defines[n] for n in own]))
                while batch := tuple(itertools.islice(points, size)):
                    yield Chunk(next(index), kernel, machine, opts, argv, batch)


def flatten(doc: dict, prefix: str = "") -> dict:
    """A JSON document -> one level: nested mappings joined with dots (``ecm.T_ECM_cy_per_cl.MEM``);
    lists and empty mappings as JSON text; numbers, strings, booleans and None as they are."""
    out = {}
    for key, value in doc.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, name + "."))
        elif isinstance(value, (list, tuple, dict)):
            out[name] = json.dumps(value)
        else:
            out[name] = value
    return out


@functools.lru_cache(maxsize=16)
def _prepared(kernel: StudyKernel, machine: StudyMachine, argv: tuple):
    """``(Analyzer, #define defaults)`` exactly as ``loopmodel analyze`` prepares them for one
    point, from the kernel's bytes and the machine's model that the task carries (the
    digests key this per-process memo, so a changed file is prepared again)."""
    from ..cli.arguments import options_from_args
    from .analyze import AnalyzeOptions, run

    args = analyze_parser().parse_args([kernel.path, "-m", machine.spec, *argv])
    # parsed from the task, no file read here
    prepared = run(kernel, machine, options_from_args(AnalyzeOptions, args))
    analyzer, points = prepared.analyzer, prepared.points
    return analyzer, dict(points.base)


def run_chunk(chunk: Chunk) -> ChunkResult:
    """Compute a task's points as ``loopmodel analyze KERNEL -m MACHINE -D ... --json`` would,
    one JSON document each, flattened (:func:`flatten`). Runs on a Dask worker (or here).

    Returns:
        :class:`ChunkResult`; a point that fails with a :class:`LoopmodelError` (bad input, a
        size the machine cannot take, a failing tool) has only ``error``, its one line.

    Raises:
        Exception: anything else (a bug in loopmodel) propagates: it is not data.
    """
    k, m = chunk.kernel, chunk.machine
    try:
        analyzer, base = _prepared(k, m, chunk.argv)
    except LoopmodelError as exc:  # every point of the task fails the same way
        return ChunkResult.of([{"error": str(exc)}] * len(chunk.points))
    return ChunkResult.of([point_row(analyzer, {**base, **point}) for point in chunk.points])


def point_row(analyzer, point: dict) -> dict:
    """One point as a row: the JSON report of ``analyzer.run(point)`` flattened (:func:`flatten`)
    with ``error`` None, or only ``error`` (the one-line message) when the point fails with a
    :class:`LoopmodelError`.

    Raises:
        Exception: any other failure (a bug, not a property of the point) propagates.
    """
    from ..report.json_report import to_dict
    from ..report.schema import ENVELOPE

    try:
        # through JSON text, so that the values are those analyze --json prints (the envelope,
        # schema and tool version, is not a column)
        doc = json.loads(json.dumps(to_dict(analyzer.run(point))))
    except LoopmodelError as exc:
        return {"error": str(exc)}
    flat = flatten({n: v for n, v in doc.items() if n not in ENVELOPE})
    flat["error"] = None
    return flat


# ---------------------------------------------------------------- the result cache


@functools.lru_cache(maxsize=64)
def _cacheable(kernel_path: str, argv: tuple) -> bool:
    """Whether the results of a task of this kernel with these analyze arguments depend only
    on the key of :func:`chunk_key`: not when an external tool (llvm-mca, OSACA, a compiler)
    may take part, or ``no_cache`` is set."""
    from ..fileio.kernel_yaml import YAML_SUFFIXES
    from .analyze import model_names, peer_models

    args = analyze_parser().parse_args(["KERNEL", "-m", "MACHINE", *argv])
    models = model_names(args.pmodel)
    notes, incore_default = peer_models(args.pmodel)
    incore = "analytic" if args.scalar else args.incore or incore_default
    if args.no_cache or "RooflineASM" in models:
        return False
    return incore == "analytic" or kernel_path.lower().endswith(YAML_SUFFIXES) or set(models) <= {"LC"}


def chunk_key(chunk: Chunk) -> str:
    """The result cache's key of a task: kernel path and bytes, machine spec and model, analyze
    arguments, the points, the host's ISA (and loopmodel's code, :func:`loopmodel.cache.make_key`)."""
    from .. import cache

    k, m = chunk.kernel, chunk.machine
    return cache.make_key("sweep-chunk-v1", k.path, k.digest, m.spec, m.digest, chunk.argv,
                          tuple(tuple(sorted(p.items())) for p in chunk.points), platform.machine())


# ---------------------------------------------------------------- running a study

#: most rows a table in memory holds (:func:`run_study`, ``loopmodel.sweep(...)``): 10^7 rows
#: of ~100 fields take some GB; a larger study is written to a file as it runs (:func:`write_study`)
MAX_TABLE_ROWS = 10 ** 7


class SweepStopped(LoopmodelError):
    """A sweep that could not finish: no worker left, or the scheduler lost (one line that
    says how many points were done)."""


class SweepInterrupted(SweepStopped):
    """A sweep stopped by SIGINT (Ctrl-C): exit status 130, as for any interrupted command."""

    exit_code = 130


@dataclass
class SweepStats:
    """How a study runs, counted while it runs: ``points`` done, ``failed`` (rows with an
    error), ``cached`` (points read from the result cache), ``tasks`` (tasks sent to the
    workers), ``total`` (the study's points)."""

    points: int = 0
    failed: int = 0
    cached: int = 0
    tasks: int = 0
    total: int = 0

    def done(self) -> str:
        """``"N of M points done"``."""
        return f"{self.points} of {self.total} points done"


def study_results(study: Study, client=None, use_cache: bool = True, stats: SweepStats | None = None,
                  advance=None):
    """Run every point of ``study``; yield ``(Chunk, ChunkResult)`` in the order of :func:`chunks`.

    Tasks are made as they are sent, and at most a few per worker thread are in flight or
    done but waiting for an earlier one (:meth:`loopmodel.workflows.sweep_dask.Pool.capacity`), so the
    memory taken does not grow with the number of points. Tasks found in the result cache
    are read, not sent.

    Args:
        study: :class:`Study`.
        client: a ``distributed.Client`` (its workers compute the tasks); a callable giving a
            context manager that yields one (e.g. ``lambda: dask_client(workers=2)``), entered
            when the first task is not in the cache; or None (or a context manager yielding
            None): compute the tasks in this process, one after the other.
        use_cache: read and write the per-user result cache (tasks whose results depend on
            nothing outside the key, :func:`chunk_key`).
        stats: :class:`SweepStats` to count in (``total`` is not set here).
        advance: called with a number of points each time that many are done (progress).

    Raises:
        SweepStopped: no Dask worker left, the scheduler lost, or a task that killed its
            workers (:class:`loopmodel.workflows.sweep_dask.Pool`).
        Exception: what a point raised other than a LoopmodelError (a bug, :func:`run_chunk`).
    """
    from .. import cache

    stats = SweepStats() if stats is None else stats
    keys = {}

    def cached(chunk):
        key = chunk_key(chunk) if use_cache and _cacheable(chunk.kernel.path, chunk.argv) else None
        hit = cache.load("sweep", key) if key else None
        keys[chunk.index] = key
        return hit if isinstance(hit, ChunkResult) else None

    with contextlib.ExitStack() as stack:
        def pool():
            from .sweep_dask import Pool

            dask = stack.enter_context(client()) if callable(client) else client
            return _Here() if dask is None else stack.enter_context(Pool(dask))

        for chunk, res, hit in _in_order(chunks(study), cached, pool):
            key = keys.pop(chunk.index)
            if key and not hit:
                cache.store("sweep", key, res)
            n = len(chunk.points)
            stats.points, stats.failed = stats.points + n, stats.failed + res.failures()
            stats.cached, stats.tasks = stats.cached + (n if hit else 0), stats.tasks + (0 if hit else 1)
            if advance:
                advance(n)
            yield chunk, res


def _in_order(tasks, cached, make_pool):
    """``(chunk, result, from_cache)`` in task order. ``cached(chunk)`` gives a cached result
    or None; the others go to the pool (``make_pool()``, called at the first of them), which
    is never given more than its ``capacity()`` tasks, counting those done and held back
    until the tasks before them are done."""
    held, nxt, pool, more = {}, 0, None, True
    tasks = iter(tasks)
    while True:
        busy = pool.busy if pool else 0
        if more and len(held) + busy < (pool.capacity() if pool else 1):
            chunk = next(tasks, None)
            if chunk is None:
                more = False
                continue
            hit = cached(chunk)
            if hit is not None:
                held[chunk.index] = (chunk, hit, True)
            else:
                pool = pool or make_pool()
                pool.submit(chunk)
        elif busy:
            held.update((chunk.index, (chunk, res, False)) for chunk, res in pool.collect())
        elif not held:
            return
        while nxt in held:
            yield held.pop(nxt)
            nxt += 1


class _Here:
    """The tasks computed in this process, each when it is submitted (one at a time)."""

    def __init__(self):
        self.done = []

    @property
    def busy(self) -> int:
        return len(self.done)

    def capacity(self) -> int:
        return 1

    def submit(self, chunk: Chunk) -> None:
        self.done.append((chunk, run_chunk(chunk)))

    def collect(self) -> list:
        done, self.done = self.done, []
        return done


def chunk_rows(study: Study, chunk: Chunk, result: ChunkResult) -> list:
    """A task's rows (flat dicts): its study columns (kernel and machine as given, the
    options, lists as JSON text), its point's defines, then the point's result (a report
    field with an option's name holds the report's value)."""
    lead = {"kernel": chunk.kernel.given, "machine": chunk.machine.given}
    lead.update({n: json.dumps(v) if isinstance(v, (list, dict)) else v for n, v in chunk.options})
    return [{**lead, **point, **row} for point, row in zip(chunk.points, result.dicts())]


def run_study(study: Study, client=None, use_cache: bool = True, advance=None) -> tuple:
    """Run every point of ``study`` into a table in memory (:func:`study_results`).

    Args:
        study, client, use_cache, advance: as for :func:`study_results`.

    Returns:
        ``(Table, SweepStats)``; rows in the order of :func:`chunks`.

    Raises:
        StudyError: the study has more than :data:`MAX_TABLE_ROWS` points (write it to a
            file with :func:`write_study` instead).
        SweepStopped: see :func:`study_results`.
    """
    stats = SweepStats(total=_fits_in_memory(study))
    table = Table(study.columns())
    for chunk, res in study_results(study, client, use_cache, stats, advance):
        for row in chunk_rows(study, chunk, res):
            table.add(row)
    return table, stats


def _fits_in_memory(study: Study) -> int:
    total = study.points()
    if total > MAX_TABLE_ROWS:
        raise StudyError(f"{total} points: a table in memory holds at most {MAX_TABLE_ROWS} rows; write the "
                         "rows to a file as they are computed (loopmodel sweep -o FILE, or write_study)",
                         file=study.path)
    return total


def write_study(study: Study, path: str | None, client=None, use_cache: bool = True, advance=None,
                force: bool = False, on_rows=None) -> SweepStats:
    """Run every point of ``study`` and write its table to ``path`` (``.csv``, ``.parquet`` or
    ``.pq``; None: CSV on stdout), rows kept in a spool as they come and written at the end
    (:class:`loopmodel.workflows.sweep_output.ResultFile`): memory does not grow with the number of
    points, and the file appears whole or not at all.

    Args:
        study, client, use_cache, advance: as for :func:`study_results`.
        force: replace an existing ``path`` (atomically); else an existing file is an error.
        on_rows: called with each task's rows (a list of flat dicts), e.g. to keep what a plot needs.

    Returns:
        :class:`SweepStats`.

    Raises:
        DefineError: unknown extension, the file exists (not ``force``), or cannot be written.
        SweepStopped: no Dask worker left or the scheduler lost; SweepInterrupted: SIGINT.
            One line with the points done and what was written (nothing, for a file).
    """
    from .sweep_output import ResultFile

    stats = SweepStats(total=study.points())
    out = ResultFile(path, study.columns(), force)
    try:
        with out, contextlib.closing(study_results(study, client, use_cache, stats, advance)) as results:
            for chunk, res in results:
                rows = chunk_rows(study, chunk, res)
                out.add(rows)
                if on_rows:
                    on_rows(rows)
            out.finish()
    except KeyboardInterrupt:
        raise SweepInterrupted(f"interrupted; {stats.done()}, {out.left()}") from None
    except SweepStopped as exc:
        raise SweepStopped(f"{exc.message}; {stats.done()}, {out.left()}") from None
    return stats


# ---------------------------------------------------------------- the table


class Table:
    """Results in columns: name -> list with one value per row (None where a row has no such
    field). Columns come in the order they first appear, after ``leading``.

    Attributes:
        columns: name -> list of values.
        n: number of rows.
    """

    def __init__(self, leading: tuple = ()):
        self.columns = {c: [] for c in leading}
        self.n = 0

    def add(self, row: dict) -> None:
        """Append one row (column -> value)."""
        for name in row:
            if name not in self.columns:
                self.columns[name] = [None] * self.n
        for name, col in self.columns.items():
            col.append(row.get(name))
        self.n += 1

    def rows(self) -> list:
        """The rows as flat dicts (every column, None where a row has no value)."""
        names = list(self.columns)
        return [dict(zip(names, vals)) for vals in zip(*self.columns.values())] if names else []


class _CallableModule(types.ModuleType):
    """This module, callable as :func:`loopmodel.api.sweep` (see the module docstring)."""

    def __call__(self, *args, **kwargs):
        from ..api import sweep

        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule


def __getattr__(name):
    if name == "__signature__":  # inspect.signature(loopmodel.workflows.sweep): the API function's
        import inspect

        from ..api import sweep

        return inspect.signature(sweep)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
