"""Design-space studies: the cartesian product of kernels, machines, sizes and analyze options.

A study file (YAML) names ``kernels`` (paths relative to the study file), ``machines``
(built-in names or paths), ``defines`` (name -> value or range in the ``-D`` syntax; each
kernel takes the ones it declares) and ``options`` (analyze option -> list of values).
:func:`read_study` checks it, :func:`chunks` cuts its points into tasks of one kernel,
machine and option set each, :func:`run_chunk` computes a task exactly as
``loopmodel analyze KERNEL -m MACHINE -D ... --json`` computes each of its points (same
argument parsing, same :class:`~loopmodel.analysis.Analyzer`, same JSON document), and
:func:`run_study` runs the tasks on a ``dask.distributed`` client (or in this process),
reusing the per-user result cache (:mod:`loopmodel.cache`) for tasks computed before.

Each point becomes one row of a :class:`Table`: ``kernel`` (as given), ``machine`` (as
given), one column per define, one per option, ``error`` (the point's one-line error, else
None) and the JSON report's fields flattened with dots (:func:`flatten`). dask and pyarrow
are imported only inside the functions that need them.

Called, this module is the Python API's :func:`loopmodel.api.sweep`
(``loopmodel.sweep(kernel, machine, {"N": range(...)})``): the package's attribute ``sweep``
is this module once it is imported, so the module itself takes the call.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import hashlib
import io
import itertools
import json
import os
import shlex
import platform
import sys
import types
from dataclasses import dataclass

from .errors import LoopmodelError

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
    """A kernel of a study.

    Attributes:
        given: the path as written in the study.
        path: the path analyze gets (``given`` relative to the study file's folder).
        constants: the kernel's size constants.
        digest: SHA-256 hex of the file's bytes.
    """

    given: str
    path: str
    constants: frozenset
    digest: str


@dataclass(frozen=True)
class StudyMachine:
    """A machine of a study: ``given`` as written, ``spec`` what ``-m`` gets (a built-in
    name, ``host``, or a path relative to the study file's folder), ``digest`` SHA-256 hex of
    the validated model."""

    given: str
    spec: str
    digest: str


@dataclass(frozen=True)
class Study:
    """A checked study file.

    Attributes:
        path: the study file.
        kernels, machines: tuples of :class:`StudyKernel` / :class:`StudyMachine`.
        defines: size constant -> tuple of sizes (int), in file order.
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
        """How many points the study has (each kernel with its own defines only)."""
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
        clean: False when a point failed for a reason other than a one-line loopmodel error
            (such a task is not cached).
    """

    columns: tuple
    shared: dict
    rows: list
    clean: bool = True

    @classmethod
    def of(cls, rows: list, clean: bool = True) -> "ChunkResult":
        """From one flat dict per point."""
        columns = tuple(dict.fromkeys(c for r in rows for c in r))
        first = rows[0] if rows else {}
        shared = {c: v for c, v in first.items()
                  if all(c in r and type(r[c]) is type(v) and r[c] == v for r in rows)}
        rest = [c for c in columns if c not in shared]
        return cls(columns, shared, [tuple(r.get(c) for c in rest) for r in rows], clean)

    def dicts(self):
        """One flat dict per point (every column of the task, in ``columns`` order)."""
        rest = [c for c in self.columns if c not in self.shared]
        for values in self.rows:
            own = dict(zip(rest, values))
            yield {c: self.shared[c] if c in self.shared else own[c] for c in self.columns}


# ---------------------------------------------------------------- study file


def read_study(path: str) -> Study:
    """Read and check a study file.

    Returns:
        :class:`Study`; kernels are parsed (their constants) and machines loaded once here.

    Raises:
        StudyError: unreadable YAML, an unknown key, a missing or empty list, a kernel that
            cannot be read, an unknown machine, a bad define or option (one line naming the
            file and the key).
    """
    from .fileio.reader import read_yaml

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
    clash = [n for n in defines if n in FIXED_COLUMNS + ("error",) or n in options]
    if clash:
        raise StudyError("a define cannot have the name of a column (kernel, machine, error, an option)",
                         file=path, where=f"defines.{clash[0]}")
    return Study(path, kernels, machines, defines, options, tokens)


def _names(data: dict, key: str, path: str) -> list:
    """``data[key]``: a non-empty list of strings (one string is a list of one)."""
    value = data.get(key)
    if isinstance(value, str):
        value = [value]
    if not value or not isinstance(value, list):
        raise StudyError("expected a non-empty list", file=path, where=key)
    for i, v in enumerate(value):
        if not isinstance(v, str) or not v:
            raise StudyError("expected a path or a name", file=path, where=f"{key}[{i}]")
    return value


def _kernel(path: str, folder: str, i: int, given: str) -> StudyKernel:
    from .fileio.kernel_yaml import load_kernel_file

    where = f"kernels[{i}]"
    kpath = os.path.normpath(os.path.join(folder, given))
    from .fileio.reader import KERNEL_MAX_BYTES, read_bytes

    try:
        raw = read_bytes(kpath, "kernel file", StudyError, KERNEL_MAX_BYTES)
    except StudyError as exc:
        raise StudyError(f"{given}: {exc.message}", file=path, where=where) from None
    try:
        kernel = load_kernel_file(kpath)[0]
    except LoopmodelError as exc:
        raise StudyError(str(exc), file=path, where=where) from None
    return StudyKernel(given, kpath, frozenset(kernel.constants), hashlib.sha256(raw).hexdigest())


def _machine(path: str, folder: str, i: int, given: str) -> StudyMachine:
    from .fileio.machine_files import load_machine

    spec = given
    if given.lower().endswith((".yml", ".yaml")) or "/" in given or os.sep in given:
        spec = os.path.normpath(os.path.join(folder, given))
    try:
        model = load_machine(spec)
    except LoopmodelError as exc:
        raise StudyError(str(exc), file=path, where=f"machines[{i}]") from None
    return StudyMachine(given, spec, hashlib.sha256(repr(model).encode()).hexdigest())


def _defines(data, path: str) -> dict:
    """``defines``: name -> value, ``-D`` range text, or a list of those -> name -> tuple of sizes."""
    from .fileio.defines import parse_define

    if not isinstance(data, dict):
        raise StudyError("expected a mapping of size constants to values or ranges", file=path, where="defines")
    out = {}
    for name, spec in data.items():
        specs = spec if isinstance(spec, list) else [spec]
        values = []
        for s in specs:
            if isinstance(s, bool) or not isinstance(s, (int, str)):
                raise StudyError("expected a size or a range such as 100:2000:100", file=path, where=f"defines.{name}")
            try:
                values += parse_define(f"{name}={s}")[1]
            except LoopmodelError as exc:
                raise StudyError(exc.message, file=path, where=f"defines.{name}") from None
        if not values:
            raise StudyError("no values", file=path, where=f"defines.{name}")
        out[str(name)] = tuple(dict.fromkeys(values))
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
    from . import gate

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
    from .cli import build_parser

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
    from .cli import _models

    args = analyze_parser().parse_args(["KERNEL", "-m", "MACHINE", *argv])
    try:
        _models(args.pmodel)
    except LoopmodelError as exc:
        raise StudyError(exc.message) from None
    return args


# ---------------------------------------------------------------- points and tasks


def _product_size(seqs: list) -> int:
    n = 1
    for s in seqs:
        n *= len(s)
    return n


def chunks(study: Study, size: int = CHUNK_POINTS) -> list:
    """The study's tasks, in row order: kernels, then machines, then the options' product
    (first option slowest), then the kernel's own defines' product (last define fastest),
    cut into tasks of at most ``size`` points.

    Returns:
        list of :class:`Chunk`.
    """
    out = []
    names = list(study.options)
    for kernel in study.kernels:
        own = study._own(kernel)
        defs = [dict(zip(own, combo)) for combo in itertools.product(*(study.defines[n] for n in own))]
        for machine in study.machines:
            for combo in itertools.product(*(range(len(study.options[n])) for n in names)):
                opts = tuple((n, study.options[n][i]) for n, i in zip(names, combo))
                argv = tuple(t for n, i in zip(names, combo) for t in study.tokens[n][i])
                for start in range(0, len(defs), size):
                    out.append(Chunk(len(out), kernel, machine, opts, argv, tuple(defs[start:start + size])))
    return out


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
def _prepared(kernel_path: str, kernel_digest: str, machine_spec: str, machine_digest: str, argv: tuple):
    """``(Analyzer, #define defaults)`` exactly as ``loopmodel analyze`` prepares them for one
    point (the digests key this per-process memo, so a changed file is prepared again)."""
    from . import cli

    args = analyze_parser().parse_args([kernel_path, "-m", machine_spec, *argv])
    analyzer, points, _ = cli.prepare_analyze(args)
    return analyzer, dict(points.base)


def _one_line(exc: Exception) -> tuple:
    """``(message, clean)``: a loopmodel error's own line; anything else named by its type."""
    if isinstance(exc, LoopmodelError):
        return str(exc), True
    return f"internal error: {type(exc).__name__}: {exc}".replace("\n", " "), False


def run_chunk(chunk: Chunk) -> ChunkResult:
    """Compute a task's points as ``loopmodel analyze KERNEL -m MACHINE -D ... --json`` would,
    one JSON document each, flattened (:func:`flatten`). Runs on a Dask worker (or here).

    Returns:
        :class:`ChunkResult`; a point that fails has only ``error`` (its one-line error).
    """
    k, m = chunk.kernel, chunk.machine
    try:
        analyzer, base = _prepared(k.path, k.digest, m.spec, m.digest, chunk.argv)
    except Exception as exc:  # every point of the task fails the same way
        message, clean = _one_line(exc)
        return ChunkResult.of([{"error": message}] * len(chunk.points), clean)
    rows, clean = [], True
    for point in chunk.points:
        flat, ok = point_row(analyzer, {**base, **point})
        rows.append(flat)
        clean = clean and ok
    return ChunkResult.of(rows, clean)


def point_row(analyzer, point: dict) -> tuple:
    """One point as a row: ``(flat, clean)``, ``flat`` the JSON report of ``analyzer.run(point)``
    flattened (:func:`flatten`) with ``error`` None, or only ``error`` (the one-line error) when
    the point fails; ``clean`` False for a failure other than a loopmodel error."""
    from .report.json_report import to_dict
    from .report.schema import ENVELOPE

    try:
        # through JSON text, so that the values are those analyze --json prints (the envelope,
        # schema and tool version, is not a column)
        doc = json.loads(json.dumps(to_dict(analyzer.run(point))))
        flat = flatten({n: v for n, v in doc.items() if n not in ENVELOPE})
        flat["error"] = None
        return flat, True
    except Exception as exc:
        message, ok = _one_line(exc)
        return {"error": message}, ok


# ---------------------------------------------------------------- the result cache


def _cacheable(chunk: Chunk) -> bool:
    """Whether a task's results depend only on the key of :func:`chunk_key`: not when an
    external tool (llvm-mca, OSACA, a compiler) may take part, or ``no_cache`` is set."""
    from . import cli
    from .fileio.kernel_yaml import YAML_SUFFIXES

    args = analyze_parser().parse_args(["KERNEL", "-m", "MACHINE", *chunk.argv])
    models = cli._models(args.pmodel)
    notes, incore_default = cli._peer_models(args.pmodel)
    incore = "analytic" if args.scalar else args.incore or incore_default
    if args.no_cache or "RooflineASM" in models:
        return False
    return incore == "analytic" or chunk.kernel.path.lower().endswith(YAML_SUFFIXES) or set(models) <= {"LC"}


def chunk_key(chunk: Chunk) -> str:
    """The result cache's key of a task: kernel path and bytes, machine spec and model, analyze
    arguments, the points, the host's ISA (and loopmodel's code, :func:`loopmodel.cache.make_key`)."""
    from . import cache

    k, m = chunk.kernel, chunk.machine
    return cache.make_key("sweep-chunk-v1", k.path, k.digest, m.spec, m.digest, chunk.argv,
                          tuple(tuple(sorted(p.items())) for p in chunk.points), platform.machine())


# ---------------------------------------------------------------- running a study


@dataclass(frozen=True)
class SweepStats:
    """How a study ran: ``points``, ``failed`` (rows with an error), ``cached`` (points read
    from the result cache), ``tasks`` (tasks sent to the workers)."""

    points: int
    failed: int
    cached: int
    tasks: int


def run_study(study: Study, client=None, use_cache: bool = True, advance=None) -> tuple:
    """Run every point of ``study``.

    Args:
        study: :class:`Study`.
        client: a ``distributed.Client`` (its workers compute the tasks); a callable giving a
            context manager that yields one (e.g. ``lambda: dask_client(workers=2)``), entered
            only when some task is not in the cache; or None: compute the tasks in this
            process, one after the other.
        use_cache: read and write the per-user result cache (tasks whose results depend on
            nothing outside the key, :func:`chunk_key`).
        advance: called with a number of points each time that many are done (progress).

    Returns:
        ``(Table, SweepStats)``; rows in the order of :func:`chunks`.
    """
    from . import cache

    tasks = chunks(study)
    results, todo, keys, cached = [None] * len(tasks), [], {}, 0
    for c in tasks:
        key = chunk_key(c) if use_cache and _cacheable(c) else None
        hit = cache.load("sweep", key) if key else None
        if isinstance(hit, ChunkResult):
            results[c.index], cached = hit, cached + len(c.points)
            if advance:
                advance(len(c.points))
        else:
            keys[c.index] = key
            todo.append(c)
    with contextlib.ExitStack() as stack:
        if callable(client) and todo:
            client = stack.enter_context(client())
        for c, res in _computed(client, todo):
            results[c.index] = res
            if keys[c.index] and res.clean:
                cache.store("sweep", keys[c.index], res)
            if advance:
                advance(len(c.points))
    table = Table(study.columns())
    for c, res in zip(tasks, results):
        lead = _lead(study, c)
        for point, row in zip(c.points, res.dicts()):
            table.add({**lead, **point, **row})
    failed = sum(1 for e in table.columns["error"] if e is not None)
    return table, SweepStats(table.n, failed, cached, len(todo))


def _lead(study: Study, chunk: Chunk) -> dict:
    """A task's study columns: kernel and machine as given, the options (lists as JSON text)."""
    lead = {"kernel": chunk.kernel.given, "machine": chunk.machine.given}
    lead.update({n: json.dumps(v) if isinstance(v, (list, dict)) else v for n, v in chunk.options})
    return lead


def _computed(client, tasks: list):
    """``(task, ChunkResult)`` as each finishes: on the client's workers, or here (None).
    A task whose worker fails (e.g. is killed) yields error rows, not an exception."""
    if client is None:
        for c in tasks:
            yield c, run_chunk(c)
        return
    if not tasks:
        return
    from distributed import as_completed

    futures = client.map(run_chunk, tasks, pure=False)
    owner = {f.key: c for f, c in zip(futures, tasks)}
    done = as_completed(futures, with_results=True, raise_errors=False)  # results fetched in batches
    del futures  # each result is let go once read
    for fut, res in done:
        c = owner[fut.key]
        if not isinstance(res, ChunkResult):  # the task raised, or its worker died
            exc = fut.exception() if fut.status == "error" else res
            message = f"worker failed: {type(exc).__name__}: {exc}".replace("\n", " ")
            res = ChunkResult.of([{"error": message}] * len(c.points), clean=False)
        fut.release()
        yield c, res


@contextlib.contextmanager
def dask_client(address: str | None = None, workers: int | None = None):
    """A ``distributed.Client`` (context manager): connected to the scheduler at ``address``,
    else on a new ``LocalCluster`` of ``workers`` processes (default: the CPUs this process may
    use), one thread each; client and cluster are closed on exit.

    Raises:
        LoopmodelError: the scheduler cannot be reached (one line).
    """
    import logging
    import warnings

    from distributed import Client, LocalCluster

    if address:
        try:
            client = Client(address, timeout="10s")
        except (OSError, TimeoutError, ValueError) as exc:
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise LoopmodelError(f"--dask {address}: cannot connect to the scheduler: {text}") from None
        with client:
            yield client
        return
    from .measure.topology import allowed_cpus

    n = workers or len(allowed_cpus())
    try:
        with warnings.catch_warnings():  # its HTTP port taken (another cluster): it takes another, say nothing
            warnings.filterwarnings("ignore", message="Port .* is already in use")
            cluster = LocalCluster(n_workers=n, processes=True, threads_per_worker=1, dashboard_address=None,
                                   silence_logs=logging.ERROR)
    except RuntimeError as exc:  # e.g. a worker process that cannot start
        raise LoopmodelError(f"cannot start a local Dask cluster of {n} worker(s): {exc}") from None
    with cluster, Client(cluster) as client:
        yield client


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


def csv_text(table: Table) -> str:
    """The table as CSV: a header row, then one line per row; None is an empty field."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(table.columns)
    for vals in zip(*table.columns.values()):
        w.writerow(["" if v is None else v for v in vals])
    return buf.getvalue()


def parquet_bytes(table: Table) -> bytes:
    """The table as a Parquet file: booleans, 64-bit integers, doubles (a column of integers
    and floats) or strings; a column mixing other types holds text (non-strings as JSON). The
    file's key-value metadata holds the document envelope (``schema_version``,
    ``loopmodel_version``: :func:`loopmodel.report.schema.document`); a CSV table has none."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .report.schema import document

    meta = {k: str(v) for k, v in document({}).items()}
    t = pa.table({name: _arrow_column(vals) for name, vals in table.columns.items()}, metadata=meta)
    sink = pa.BufferOutputStream()
    pq.write_table(t, sink)
    return sink.getvalue().to_pybytes()


def _arrow_column(values: list):
    import pyarrow as pa

    kinds = {type(v) for v in values if v is not None}
    try:
        if kinds and kinds <= {bool}:
            return pa.array(values, pa.bool_())
        if kinds and kinds <= {int}:
            return pa.array(values, pa.int64())
        if kinds and kinds <= {int, float}:
            return pa.array([None if v is None else float(v) for v in values], pa.float64())
    except (pa.ArrowInvalid, OverflowError):
        pass
    return pa.array([v if v is None or isinstance(v, str) else json.dumps(v) for v in values], pa.string())


class _CallableModule(types.ModuleType):
    """This module, callable as :func:`loopmodel.api.sweep` (see the module docstring)."""

    def __call__(self, *args, **kwargs):
        from .api import sweep

        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule


def __getattr__(name):
    if name == "__signature__":  # inspect.signature(loopmodel.sweep): the API function's
        import inspect

        from .api import sweep

        return inspect.signature(sweep)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
