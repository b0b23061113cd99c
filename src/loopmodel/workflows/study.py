"""Study files: the cartesian product of kernels, machines, sizes and analyze options.

A study file (YAML) names ``kernels`` (paths relative to the study file), ``machines``
(built-in names or paths), ``defines`` (name -> value or range in the ``-D`` syntax; each
kernel takes the ones it declares, the others are ignored for it with a note, and a define
that no kernel declares is an error) and ``options`` (analyze option -> list of values).
:func:`read_study` checks it: kernels are parsed and machines loaded once, defines stay
ranges (a study of 10^8 points is counted, not listed), and every option value is read as
``loopmodel analyze`` reads it (:class:`~loopmodel.workflows.analyze.AnalyzeOptions`, through
:func:`loopmodel.workflows.options.from_values`), so that a bad value is refused before any
point is computed. Running a study: :mod:`loopmodel.workflows.sweep`.
"""
from __future__ import annotations

from dataclasses import dataclass

import dataclasses
import hashlib
import itertools
import os
import shlex

from .. import gate
from ..errors import KernelError, LoopmodelError
from ..fileio.c_kernel import parse_c
from ..fileio.defines import sweep
from ..fileio.kernel_yaml import YAML_SUFFIXES, load_yaml_text, parse_kernel_yaml
from ..fileio.machine_files import load_machine
from ..fileio.reader import KERNEL_MAX_BYTES, decode, read_bytes
from ..fileio.yaml_reader import read_yaml
from .analyze import AnalyzeOptions, model_names
from .options import fields, from_values

#: the study file's keys
STUDY_KEYS = ("kernels", "machines", "defines", "options")
#: columns every table starts with (then the defines, the options, ``error``)
FIXED_COLUMNS = ("kernel", "machine")
#: analyze options a study cannot vary: the sizes are its ``defines``, the unit is the JSON report's
NOT_OPTIONS = frozenset({"define", "unit"})


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
        """``(kernel, defaults, text, notes)`` as :func:`loopmodel.fileio.kernel_file.load_kernel`
        gives them for the file, from :attr:`raw` (``loopmodel analyze`` takes this in place of
        the path).

        Raises:
            KernelError: the bytes are not UTF-8 text or not a valid kernel (one line naming ``path``).
        """
        text = decode(self.raw, self.path, "kernel file", KernelError)
        if self.path.lower().endswith(YAML_SUFFIXES):
            kernel, notes = parse_kernel_yaml(load_yaml_text(text, self.path), self.path)
            return kernel, {}, None, notes
        parsed = parse_c(text, self.path)
        return parsed.kernel, parsed.defaults, parsed.text, parsed.notes

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
        options: analyze option (an :class:`AnalyzeOptions` field, e.g. ``cache_predictor``)
            -> tuple of values as given (str, int, float, bool, None or a list of those): the
            table's columns.
        settings: option -> tuple of the :class:`AnalyzeOptions` field values that those
            values give (``"LC"`` -> ``"lc"``, a list of models -> a tuple), one per value.
        notes: one line per kernel that does not declare some of the defines (they are
            ignored for it: its rows leave them empty).
    """

    path: str
    kernels: tuple
    machines: tuple
    defines: dict
    options: dict
    settings: dict
    notes: tuple = ()

    def columns(self) -> tuple:
        """The table's leading columns: kernel, machine, the defines, the options, error."""
        return FIXED_COLUMNS + tuple(self.defines) + tuple(self.options) + ("error",)

    def points(self) -> int:
        """How many points the study has (each kernel with its own defines only), counted
        from the lengths of the define sequences (nothing is expanded)."""
        combos = len(self.machines)
        for vals in self.options.values():
            combos *= len(vals)
        return sum(combos * product_size([self.defines[n] for n in self.own_defines(k)]) for k in self.kernels)

    def own_defines(self, kernel: StudyKernel) -> list:
        """The defines of the study that ``kernel`` declares, in file order."""
        return [n for n in self.defines if n in kernel.constants]

    def kernel_points(self, kernel: StudyKernel):
        """The points of ``kernel``: ``{define: size}`` of its own defines, the product with the
        last define fastest, made one at a time (:func:`product`)."""
        own = self.own_defines(kernel)
        return (dict(zip(own, values)) for values in product([self.defines[n] for n in own]))

    def option_sets(self):
        """Every combination of the option values (first option slowest), as ``(given,
        options)``: ``given`` the ``((option, value as given), ...)`` of the combination in
        file order, ``options`` the :class:`AnalyzeOptions` they set (the others at their
        defaults)."""
        names = list(self.options)
        for combo in itertools.product(*(range(len(self.options[n])) for n in names)):
            given = tuple((n, self.options[n][i]) for n, i in zip(names, combo))
            settings = {n: self.settings[n][i] for n, i in zip(names, combo)}
            yield given, AnalyzeOptions(**settings)

    def varying_define(self) -> str | None:
        """The first define (file order) that takes more than one value, else None."""
        return next((n for n, vals in self.defines.items() if len(vals) > 1), None)


def product_size(seqs: list) -> int:
    """The number of tuples of the cartesian product of ``seqs`` (their lengths multiplied)."""
    n = 1
    for s in seqs:
        n *= len(s)
    return n


def product(seqs: list):
    """The cartesian product of ``seqs`` (last fastest) as tuples, one at a time: unlike
    ``itertools.product``, which first copies every sequence into a tuple, a ``range`` of
    10^8 sizes is walked, never stored."""
    if not seqs:
        yield ()
        return
    for value in seqs[0]:
        for rest in product(seqs[1:]):
            yield (value, *rest)


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
    options, settings = _options(data.get("options") or {}, path)
    if trust_machine_flags:
        options["trust_machine_flags"], settings["trust_machine_flags"] = (True,), (True,)
    clash = [n for n in defines if n in FIXED_COLUMNS + ("error",) or n in options]
    if clash:
        raise StudyError("a define cannot have the name of a column (kernel, machine, error, an option)",
                         file=path, where=f"defines.{clash[0]}")
    return Study(path, kernels, machines, defines, options, settings, _define_notes(path, kernels, defines))


def _define_notes(path: str, kernels: tuple, defines: dict) -> tuple:
    """A note for each kernel that does not declare some of the ``defines`` (ignored for it).

    Raises:
        StudyError: a define that no kernel declares (a typo, or a kernel missing), naming the
            kernels' constants.
    """
    for name in defines:
        if not any(name in k.constants for k in kernels):
            have = "; ".join(f"{k.given}: {', '.join(sorted(k.constants)) or 'none'}" for k in kernels)
            raise StudyError(f"no kernel declares '{name}' (constants: {have})", file=path, where=f"defines.{name}")
    notes = []
    for k in kernels:
        left = [n for n in defines if n not in k.constants]
        if left:
            notes.append(f"{k.given} does not declare {', '.join(left)}: ignored for it (its rows leave "
                         f"{'it' if len(left) == 1 else 'them'} empty)")
    return tuple(notes)


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
    """The kernel ``given`` (``kernels[i]``), read and parsed (one-line StudyError)."""
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
    """The machine ``given`` (``machines[i]``), loaded (one-line StudyError)."""
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


# ---------------------------------------------------------------- options


def option_names() -> set:
    """The options a study may vary: the fields of :class:`AnalyzeOptions` (e.g.
    ``cache_predictor``) but :data:`NOT_OPTIONS` and hidden ones."""
    return {f.name for f in fields(AnalyzeOptions) if f.name not in NOT_OPTIONS and not f.metadata["hidden"]}


def option_aliases() -> dict:
    """Name in a study -> option: the field name itself, and each long option name with ``_``
    for ``-`` (``incore_model`` -> ``incore``); not the switches of an option of three states
    (``no_reassociation``: write ``reassociate: false``)."""
    out = {}
    for f in fields(AnalyzeOptions):
        if f.name not in option_names():
            continue
        out[f.name] = f.name
        if f.metadata["kind"] != "pair":
            out.update({s.lstrip("-").replace("-", "_"): f.name for s in f.metadata["flags"] if s.startswith("--")})
    return out


def _options(data, path: str) -> tuple:
    """``options`` -> ``(option -> tuple of values as given, option -> tuple of field values)``."""
    if not isinstance(data, dict):
        raise StudyError("expected a mapping of analyze options to lists of values", file=path, where="options")
    known = option_aliases()
    options, settings = {}, {}
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
        read = []
        for i, v in enumerate(values):
            where = f"options.{key}[{i}]"
            _check_untrusted(name, v, path, where)
            read.append(option_value(name, v, path, where))
        options[name], settings[name] = tuple(values), tuple(read)
    return options, settings


def option_value(name: str, value, path: str, where: str):
    """The :class:`AnalyzeOptions` field value of option ``name`` for the study's ``value``, read
    as ``loopmodel analyze`` reads it (:func:`loopmodel.workflows.options.from_values`: a switch
    takes true or false, ``reassociate`` also null, ``pmodel`` a model or a list of them, any
    other option one value, null for its default); models are checked by name.

    Raises:
        StudyError: a value the option cannot take (one line naming the file and ``where``;
            the message is analyze's, e.g. ``argument --cache-predictor/-P: invalid choice: ...``).
    """
    try:
        setting = getattr(from_values(AnalyzeOptions, "analyze", {name: value}), name)
        if name == "pmodel":
            model_names(setting)
    except LoopmodelError as exc:
        message = exc.message.removeprefix(f"{name}: ")  # the option is named by ``where``
        raise StudyError(message, file=path, where=where) from None
    return setting


def _check_untrusted(name: str, value, path: str, where: str) -> None:
    """A study is data (:mod:`loopmodel.gate`): the compiler it names and the flags it gives
    pass the checks a machine file's do, and it cannot grant trust.

    Raises:
        StudyError: a compiler that is not a known compiler name, a flag off the allow-list,
            or ``trust_machine_flags`` (one line naming the file and the option).
    """
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
