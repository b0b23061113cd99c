"""The Python API: ``loopmodel.analyze``, ``sweep``, ``scaling``, ``compare``, ``bench``, ``validate`` and the
data objects :class:`Kernel`, :class:`Machine`, :class:`Result`.

Every function takes the options of its command line counterpart by name
(``loopmodel analyze --cache-predictor sim`` is ``analyze(..., cache_predictor="sim")``): the
keyword arguments build the command's Options dataclass (:mod:`loopmodel.workflows`), whose
fields also generate the command line's arguments, with the command line's defaults,
conversions and messages (:func:`loopmodel.workflows.options.from_values`); then the command's
workflow computes the result (:func:`loopmodel.workflows.analyze.run`,
:func:`loopmodel.workflows.scaling.run`, :func:`loopmodel.workflows.bench.run`,
:func:`loopmodel.workflows.validate.run`). ``to_dict()`` returns the document the command
prints with ``--json``.

Models and formulas: see the modules named in each result's docstring (layer conditions and
ECM: kerncraft-tool-paper.txt §2; Roofline: §2.2).
"""
from __future__ import annotations

from dataclasses import dataclass

import dataclasses
import json
import math
import numbers
import os
import re
from collections.abc import Mapping
from types import MappingProxyType

from .errors import ApiTypeError, ApiValueError, DefineError, LoopmodelError, ModelError
from .fileio.c_kernel import parse_c
from .fileio.kernel_file import load_kernel
from .fileio.machine_files import builtin_names, load_machine
from .fileio.output import check_new_output
from .fileio.result_file import output_format
from .ir.kernel import Kernel as KernelModel
from .machine.model import MachineModel
from .report import bench as bench_report
from .report import compare_json, compare_plot
from .report import ecm_plot, ecm_stack_plot, roofline_plot, study_plot
from .report import html as html_report
from .report import json_report
from .report import scaling as scaling_report
from .report.figures import detached
from .report.output_units import UNIT_KEYS, convert_all
from .report.schema import document
from .report.sequence_json import sequence_dict
from .workflows import analyze as analyze_workflow
from .workflows import bench as bench_workflow
from .workflows import compare as compare_workflow
from .workflows import omp as omp_workflow
from .workflows import scaling as scaling_workflow
from .workflows import sweep as sweep_workflow
from .workflows import validate as validate_workflow
from .workflows.analysis import AnalysisResult
from .workflows.analyze import AnalyzeOptions, model_names
from .workflows.bench import BenchOptions
from .workflows.compare import CompareOptions
from .workflows.omp import OmpOptions
from .workflows.inputs import machine_name
from .workflows.options import from_values, names
from .workflows.scaling import ScalingOptions
from .workflows.sequence import SequenceResult
from .workflows.validate import ValidateOptions

# ---------------------------------------------------------------- data objects


@dataclass(frozen=True, repr=False)
class Kernel:
    """A parsed loop kernel (immutable).

    Attributes:
        model: the :class:`loopmodel.ir.kernel.Kernel`; its fields are also read through this
            object: ``source`` (file name), ``arrays`` (name -> ``Array``: ``ctype``,
            ``element_size`` in bytes, ``dims``), ``loops`` (outermost first: ``index``,
            ``start``, ``stop`` exclusive, ``step`` in iterations), ``operations`` (count per
            innermost iteration by type), ``flops_per_iteration`` (FLOP/it),
            ``constants`` (size constants), ``recurrences``, ``pragmas``, ``swaps``.
        text: the kernel's C source (None for a YAML kernel description: no code to
            compile; :attr:`loopmodel.fileio.c_kernel.CKernel.text`). Compiled analyses take
            ``model.code``, the loop nest printed from the parsed syntax tree, never this text.
        defaults: ``#define`` (and ``const int N = 1000;``) defaults, constant -> int (elements
            or iterations, as the kernel uses them).
        notes: one-line notes on what the C front-end inferred or left out (extents of pointer
            parameters, ignored pragmas, functions left out), or what a YAML description leaves out.
    """
    model: object
    text: str | None
    defaults: MappingProxyType
    notes: tuple = ()

    def __post_init__(self):

        _check_type("model", self.model, KernelModel, "a loopmodel.ir.kernel.Kernel")
        _check_type("text", self.text, (str, type(None)), "C source text or None")
        _check_type("defaults", self.defaults, Mapping, "a mapping constant -> int")
        _check_type("notes", self.notes, tuple, "a tuple of one-line notes")

    @classmethod
    def from_file(cls, path) -> "Kernel":
        """Read a C kernel or a Kerncraft YAML kernel description (by suffix).

        Args:
            path: the file (str or os.PathLike).

        Raises:
            ApiTypeError: ``path`` is not a str or os.PathLike (a TypeError too).
            ApiValueError: ``path`` is empty or holds a NUL character (a ValueError too).
            KernelError: unreadable, malformed or unsupported (one line naming the file).
        """
        kernel, defaults, text, notes = load_kernel(_path_arg("path", path))
        return cls(kernel, text, MappingProxyType(dict(defaults)), tuple(notes))

    @classmethod
    def from_source(cls, text: str, name: str = "<kernel>") -> "Kernel":
        """Parse C kernel text (``name`` stands for the file in messages and reports).

        Raises:
            ApiTypeError: ``text`` or ``name`` is not a str (a TypeError too).
            KernelError: malformed or unsupported code (one line, ``name:line:col``).
        """
        _check_type("text", text, str, "C source text (str)")
        _check_type("name", name, str, "a str")
        parsed = parse_c(text, name)
        return cls(parsed.kernel, parsed.text, MappingProxyType(dict(parsed.defaults)), parsed.notes)

    def parts(self) -> tuple:
        """``(kernel, defaults, text, notes)`` as :func:`loopmodel.fileio.kernel_file.load_kernel`
        returns them."""
        return self.model, dict(self.defaults), self.text, self.notes

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.model, name)

    def __str__(self) -> str:
        return str(self.model.source)

    def __repr__(self) -> str:
        loops = ", ".join(f"{lp.index}={lp.start}..{lp.stop}" for lp in self.model.loops)
        return (f"Kernel({self.model.source!r}, loops: {loops}, arrays: {', '.join(self.model.arrays)}, "
                f"constants: {', '.join(sorted(self.model.constants)) or 'none'})")


@dataclass(frozen=True, repr=False)
class Machine:
    """A validated machine model (immutable).

    Attributes:
        model: the :class:`loopmodel.machine.model.MachineModel`; its fields are also read
            through this object: ``name``, ``clock`` (Hz), ``cores_per_socket``, ``sockets``,
            ``cacheline_size`` (bytes), ``memory_hierarchy`` (``level`` names, ``size`` in bytes, MEM last),
            ``links`` (bandwidths in B/cy or B/s), ``in_core`` (throughputs per cycle),
            ``contention_p0``.
        spec: what it was loaded from: a built-in name, a path or ``host``.
    """
    model: object
    spec: str

    def __post_init__(self):

        _check_type("model", self.model, MachineModel, "a loopmodel.machine.model.MachineModel")
        _check_type("spec", self.spec, str, "the name or path it was loaded from (str)")

    @classmethod
    def load(cls, name_or_path) -> "Machine":
        """A built-in model by name (:meth:`list`), a machine YAML file (loopmodel's or
        Kerncraft's format) or ``"host"`` (this host's last probe).

        Args:
            name_or_path: str or os.PathLike.

        Raises:
            ApiTypeError: ``name_or_path`` is not a str or os.PathLike (a TypeError too).
            ApiValueError: it is empty or holds a NUL character (a ValueError too).
            MachineError: unknown name, missing file or invalid model (one line).
        """
        spec = _path_arg("name_or_path", name_or_path, "a machine name or path")
        return cls(load_machine(spec), spec)

    @staticmethod
    def list() -> tuple:
        """The names of the built-in machine models."""
        return tuple(builtin_names())

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.model, name)

    def __repr__(self) -> str:
        m = self.model
        levels = ", ".join(lv.level for lv in m.memory_hierarchy)
        return (f"Machine({self.spec!r}, {m.model_name or m.name}, {m.clock / 1e9:g} GHz, "
                f"{m.sockets}x{m.cores_per_socket} cores, {levels})")


# ---------------------------------------------------------------- arguments


def _type_name(value) -> str:
    return "None" if value is None else type(value).__name__


def _check_type(name: str, value, types, expected: str) -> None:
    """Raise :class:`ApiTypeError` ``name: expected EXPECTED, got TYPE`` unless ``value`` is
    one of ``types`` (a bool is no number here)."""
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in _as_tuple(types)):
        raise ApiTypeError(f"{name}: expected {expected}, got {_type_name(value)}")


def _as_tuple(types) -> tuple:
    return types if isinstance(types, tuple) else (types,)


def _path_arg(name: str, value, what: str = "a path") -> str:
    """``value`` (str or os.PathLike) as path text; ``what`` it stands for, in messages.

    Raises:
        ApiTypeError: another type (bytes included). ApiValueError: empty, or a NUL character.
    """
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    _check_type(name, value, str, f"{what} (str or os.PathLike)")
    if not value.strip():
        raise ApiValueError(f"{name}: expected {what}, got an empty string")
    if "\0" in value:
        raise ApiValueError(f"{name}: the path {value!r} holds a NUL character")
    return value


def define_argv(defines) -> list:
    """``defines`` -> ``-D`` texts: a mapping name -> int, ``range`` (step > 0), list of ints or
    ``-D`` value text (``"100:2000:100"``, ``"N=100:2000:100"``); or ``-D`` texts
    (``"N=1000"`` or a list of them); None: none.

    Raises:
        ApiTypeError: ``defines`` or a name or value of another type (a TypeError too).
        DefineError: an empty range or list (one line).
    """
    if defines is None:
        return []
    if isinstance(defines, str):
        return [defines]
    if isinstance(defines, (list, tuple)):
        for d in defines:
            _check_type("defines", d, str, "'-D' texts such as 'N=1000' in the list")
        return list(defines)
    _check_type("defines", defines, Mapping, "a mapping name -> size, '-D' text or a list of it")
    out = []
    for name, value in defines.items():
        _check_type("defines", name, str, "size constant names (str) as keys")
        values = value if isinstance(value, (list, tuple)) else [value]
        if isinstance(value, (list, tuple)) and not value:
            raise DefineError(f"-D {name}: no values")
        for v in values:
            out.append(_define_text(name, v))
    return out


def _define_text(name: str, v) -> str:
    if isinstance(v, range):
        if not len(v) or v.step < 1:
            raise DefineError(f"-D {name}: the range {v} has no ascending sizes")
        return f"{name}={v.start}:{v[-1]}:{v.step}"
    if isinstance(v, str):
        return v if v.startswith(f"{name}=") else f"{name}={v}"
    _check_type(f"defines[{name!r}]", v, numbers.Integral, "an int, a range, a list or '-D' text")
    return f"{name}={int(v)}"


def _kernel_kind(kernel) -> str:
    """``"object"`` (a :class:`Kernel`), ``"text"`` (C text: a str with a newline, ``{`` or ``;``
    that names no existing file) or ``"path"``.

    Raises:
        ApiTypeError: another type. ApiValueError: an empty path or one with a NUL character.
    """
    if isinstance(kernel, Kernel):
        return "object"
    if isinstance(kernel, str) and any(c in kernel for c in "\n{;") and not os.path.exists(kernel):
        return "text"
    if not isinstance(kernel, (str, os.PathLike)):
        raise ApiTypeError(f"kernel: expected a path, C source text or a loopmodel.Kernel, got {_type_name(kernel)}")
    _path_arg("kernel", kernel)
    return "path"


def _kernel_arg(kernel):
    """A path (as given, so that reports name it as the command line does), or a :class:`Kernel`
    (C text is parsed); errors as :func:`_kernel_kind`."""
    kind = _kernel_kind(kernel)
    if kind == "text":
        return Kernel.from_source(kernel)
    return kernel if kind == "object" else os.fspath(kernel)


def _c_kernel_path(kernel, command: str) -> str:
    """The C kernel file a measuring command (``bench``, ``validate``) compiles and runs.

    Raises:
        ApiTypeError: not a path (a :class:`Kernel` or C text has no file to build from).
    """
    if _kernel_kind(kernel) != "path":
        raise ApiTypeError(f"kernel: {command} measures a C kernel file: expected its path, got "
                           f"{'C source text' if isinstance(kernel, str) else _type_name(kernel)}")
    return os.fspath(kernel)


def _machine_arg(machine):
    """A name or path (str), or the :class:`Machine` / machine model given.

    Raises:
        ApiTypeError: another type (None included). ApiValueError: an empty name.
    """
    if isinstance(machine, (str, os.PathLike)):
        return _path_arg("machine", machine, "a machine name or path")
    if isinstance(machine, Machine) or hasattr(machine, "memory_hierarchy"):
        return machine
    raise ApiTypeError(f"machine: expected a name, a path, 'host' or a loopmodel.Machine, got {_type_name(machine)}")


def _check_inputs(kernel, machine, defines, models=()) -> None:
    """Type checks of the arguments shared by :func:`analyze`, :func:`sweep` and :func:`scaling`,
    done first, before anything is parsed, loaded or run.

    Raises:
        ApiTypeError, ApiValueError: one line naming the argument (:func:`_kernel_kind`,
            :func:`_machine_arg`, :func:`define_argv`, :func:`_model_argv`).
    """
    _kernel_kind(kernel)
    _machine_arg(machine)
    define_argv(defines)
    _model_names(models)


# ---------------------------------------------------------------- results


@dataclass(frozen=True, repr=False)
class Result:
    """One analysis: a kernel on a machine at one set of sizes (immutable).

    Attributes:
        analysis: the :class:`loopmodel.workflows.analysis.AnalysisResult` the command line renders.
        unit: the unit of :attr:`performance` (``unit=`` of :func:`analyze`: ``cy/CL``,
            ``cy/it``, ``it/s``, ``FLOP/s`` or ``LUP/s``).
    """
    analysis: object
    unit: str = "cy/CL"

    def __post_init__(self):

        _check_type("analysis", self.analysis, AnalysisResult, "a loopmodel.workflows.analysis.AnalysisResult")
        _check_type("unit", self.unit, str, f"one of {', '.join(UNIT_KEYS)}")
        if self.unit not in UNIT_KEYS:
            raise ApiValueError(f"unit: expected one of {', '.join(UNIT_KEYS)}, got {self.unit!r}")

    @property
    def kernel(self):
        """The :class:`loopmodel.ir.kernel.Kernel` analyzed."""
        return self.analysis.kernel

    @property
    def machine(self):
        """The :class:`loopmodel.machine.model.MachineModel` (``--clock`` applied)."""
        return self.analysis.machine

    @property
    def defines(self) -> MappingProxyType:
        """Size constant -> int."""
        return MappingProxyType(dict(self.analysis.defines))

    @property
    def layer_conditions(self) -> tuple:
        """Per cache level (``level``, ``cache_size`` in bytes, ``states``: each condition with
        ``requirement_bytes``, ``condition``, ``hits``, ``misses``; ``selected``), from
        :mod:`loopmodel.predictors.layer_conditions` (kerncraft-tool-paper.txt §2.1)."""
        return tuple(self.analysis.lc_levels)

    @property
    def traffic(self):
        """:class:`loopmodel.predictors.traffic.TrafficPrediction`: ``levels`` with
        ``loads_cl``/``stores_cl`` (cache lines) and ``bytes`` per CL of work,
        ``iterations_per_unit`` (it/CL), ``predictor``."""
        return self.analysis.traffic

    @property
    def incore(self):
        """:class:`loopmodel.models.incore.InCoreResult` (``T_OL``, ``T_nOL`` in cy/CL,
        ``source``), or None when no requested model needs it."""
        return self.analysis.incore

    @property
    def prediction(self):
        """:class:`loopmodel.models.prediction.Prediction` or None (no ECM): the figures every report reads,
        ``location`` (the data location), ``single_core_cy_per_cl`` (T_ECM there), ``cy_per_cl`` (all
        active cores together, by ``multicore_model``), ``saturation`` and ``roofline``."""
        return self.analysis.prediction

    @property
    def ecm(self):
        """:class:`loopmodel.models.ecm.ECMResult` or None: ``T_ECM`` (data location -> cy/CL,
        e.g. ``result.ecm.T_ECM["MEM"]``), ``T_OL``/``T_nOL`` and ``contributions`` in cy/CL,
        ``notation()``, ``prediction_notation()``, ``saturation_cores``
        (kerncraft-tool-paper.txt §2.3)."""
        return self.analysis.ecm

    @property
    def roofline(self):
        """:class:`loopmodel.models.roofline.RooflineResult` or None: ``performance`` (FLOP/s),
        ``time`` (cy/CL), ``bottleneck``, ``levels`` (intensity in FLOP/B, bandwidth in B/s)."""
        return self.analysis.roofline

    @property
    def roofline_asm(self):
        """The Roofline with the CPU roof of the compiled block (``models=("RooflineASM",)``), or None."""
        return self.analysis.roofline_asm

    @property
    def notes(self) -> tuple:
        """One-line notes on how the figures were obtained."""
        return tuple(self.analysis.notes)

    @property
    def performance(self) -> float | None:
        """The ECM prediction for the active cores in :attr:`unit` (None without ECM or when unknown)."""
        a = self.analysis
        if a.prediction is None:
            return None
        return convert_all(a.prediction.cy_per_cl, a)[UNIT_KEYS[self.unit]]

    def to_dict(self) -> dict:
        """The document ``loopmodel analyze ... --json`` prints (plain JSON values)."""
        return json.loads(json.dumps(json_report.to_dict(self.analysis)))

    def _head(self) -> tuple:
        a = self.analysis
        sizes = ", ".join(f"{k}={v}" for k, v in a.defines.items())
        return str(a.kernel.source), a.machine.name, sizes

    def __repr__(self) -> str:
        kernel, machine, sizes = self._head()
        out = f"Result({kernel} on {machine}, {sizes or 'no sizes'}"
        e = self.analysis.ecm
        if e:
            perf = self.performance
            out += f", ECM {e.notation()}, prediction {e.prediction_notation()}"
            out += f", {self.unit} {'unknown' if perf is None else f'{perf:.4g}'}"
        elif self.analysis.roofline:
            out += f", Roofline {self.analysis.roofline.performance:.4g} FLOP/s"
        return out + ")"

    def _repr_html_(self) -> str:
        """The report of ``loopmodel analyze`` as HTML (a notebook shows it): the ECM notation,
        the prediction in :attr:`unit`, the layer conditions, traffic, ECM and Roofline tables
        and the notes (:func:`loopmodel.report.html.analysis_html`)."""
        perf = self.performance
        line = "" if not self.analysis.ecm else f"prediction: {'unknown' if perf is None else f'{perf:.4g}'} {self.unit}"
        return html_report.analysis_html(self.analysis, self.unit, line)

    def plot(self, kind: str = "ecm"):
        """A picture of the analysis, returned as a matplotlib ``Figure`` (a notebook shows it;
        ``fig.savefig(path)`` writes it; pyplot does not hold it, so ``plt.show()`` does not).

        Args:
            kind: ``"ecm"``: the ECM contributions per data location as stacked bars, T_OL
                dashed, T_ECM marked (:mod:`loopmodel.report.ecm_stack_plot`; cy/CL);
                ``"roofline"``: the Roofline of each memory level with the kernel's intensity
                on it and the prediction (:func:`loopmodel.report.roofline_plot.plot_model`).

        Raises:
            ApiValueError: another ``kind``. ModelError: the model was not requested
                (``models=``), or the kernel has no FLOPs for a Roofline picture.
            ToolError: matplotlib is not installed.
        """
        a = self.analysis
        title = f"{os.path.basename(str(a.kernel.source))} on {a.machine.name} ({self._head()[2] or 'no sizes'})"
        if kind == "ecm":
            if not a.ecm:
                raise ModelError("no ECM prediction to draw: analyze with models including 'ECM'")
            return detached(ecm_stack_plot.plot(a.ecm, a.machine.overlap, f"{title}: ECM contributions, 1 core"))
        if kind == "roofline":
            if not a.roofline:
                raise ModelError("no Roofline prediction to draw: analyze with models including 'Roofline'")
            return detached(roofline_plot.plot_model(a.roofline, f"{title}: Roofline"))
        raise ApiValueError(f"kind: expected 'ecm' or 'roofline', got {kind!r}")


@dataclass(frozen=True)
class ScalingReport:
    """Predicted performance per core count (:func:`scaling`).

    Attributes:
        curves: one :class:`loopmodel.models.scaling.ScalingResult` per model, its ``points``
            with ``cores``, ``it_per_s`` (it/s), ``utilization``.
        analysis: the single-core :class:`Result`.
        measured: cores -> measured it/s, or None.
        fit: ``(p0, rms relative error)`` of ``fit_p0=True``, or None.
    """
    curves: tuple
    analysis: Result
    measured: MappingProxyType | None = None
    fit: tuple | None = None

    def __post_init__(self):
        _check_type("curves", self.curves, tuple, "a tuple of ScalingResult")
        _check_type("analysis", self.analysis, Result, "a loopmodel.Result")
        _check_type("measured", self.measured, (Mapping, type(None)), "a mapping cores -> it/s or None")
        _check_type("fit", self.fit, (tuple, type(None)), "(p0, rms relative error) or None")

    def to_dict(self) -> dict:
        """The document ``loopmodel scaling ... --json`` prints."""
        measured = dict(self.measured) if self.measured is not None else None
        return json.loads(json.dumps(scaling_report.to_dict(list(self.curves), self.analysis.analysis, measured, self.fit)))

    def _repr_html_(self) -> str:
        """The report of ``loopmodel scaling`` as HTML (a notebook shows it): the single-core
        ECM basis, the saturation point and the table per core count."""
        measured = dict(self.measured) if self.measured is not None else None
        return html_report.scaling_html(list(self.curves), self.analysis.analysis, measured, self.fit)

    def plot(self):
        """Predicted it/s per core count (one line per model), the saturation point and the
        measured points, as ``loopmodel scaling --plot`` draws them; a matplotlib ``Figure``
        (not held by pyplot: a notebook shows it, ``fig.savefig(path)`` writes it).

        Raises:
            ToolError: matplotlib is not installed.
        """
        measured = dict(self.measured) if self.measured is not None else None
        return detached(scaling_report.plot(list(self.curves), self.analysis.analysis, None, measured))


@dataclass(frozen=True)
class BenchReport:
    """Measurements of :func:`bench`: one :class:`loopmodel.measure.bench.BenchResult` per size
    and thread count (``figures()``: ``cy_per_CL``, ``seconds_per_it``, ``it_per_s``,
    ``FLOP_per_s`` as (min, median, max)); ``curve``: several thread counts of one size."""
    results: tuple
    curve: bool = False

    def __post_init__(self):
        _check_type("results", self.results, tuple, "a tuple of BenchResult")
        _check_type("curve", self.curve, bool, "a bool")

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self):
        return iter(self.results)

    def __getitem__(self, i):
        return self.results[i]

    def to_dict(self):
        """The document ``loopmodel bench ... --json`` prints (``{..., "points": [...]}``)."""
        return json.loads(json.dumps(bench_report.document(list(self.results), self.curve)))

    def _repr_html_(self) -> str:
        """The table ``loopmodel bench`` prints, as HTML (a notebook shows it)."""
        return html_report.bench_html(list(self.results))

    def plot(self):
        """The measurements as a picture (:func:`loopmodel.report.bench.plot`): cy/CL over the
        size that varies, or it/s per thread count for a thread range (``curve``); each point
        the best run with a bar to the worst. A matplotlib ``Figure`` (not held by pyplot).

        Raises:
            ToolError: matplotlib is not installed.
        """
        r0 = self.results[0]
        return detached(bench_report.plot(list(self.results), self.curve,
                                          f"{os.path.basename(r0.kernel)} measured on this host"))


# ---------------------------------------------------------------- functions


def analyze(kernel, machine, defines=None, *, models=("LC", "ECM", "Roofline"), **options) -> Result:
    """Analyze a kernel on a machine at one set of sizes, as ``loopmodel analyze`` does.

    Args:
        kernel: a C kernel file or Kerncraft YAML description (path), C source text, or a
            :class:`Kernel`.
        machine: a built-in name (:meth:`Machine.list`), a machine YAML path, ``"host"``, or a
            :class:`Machine`.
        defines: size constant -> int (one value each; see :func:`define_argv` for the forms);
            the kernel's ``#define`` defaults fill the rest.
        models: of ``LC``, ``ECM``, ``Roofline``, ``RooflineASM`` (Kerncraft's names accepted).
        options: ``loopmodel analyze`` options by name, with its defaults: ``cores`` (1),
            ``unit`` ("cy/CL"), ``incore`` ("auto"), ``cache_predictor`` ("lc"), ``sweeps``
            ("repeated"), ``clock`` (text such as "2.2 GHz"), ``cache_factor``, ``mem_bw``,
            ``scalar``, ``reassociate``, ``lc_variable``, ``array_alignment``, ``array_padding``,
            ``compiler``, ``compiler_flags``, ``asm_block``, ``pointer_increment``,
            ``assume_aligned``, ``trust_machine_flags``, ``no_cache``, ``nt_stores``, ``function``
            (the kernel function of a file with several), ``include`` (a tuple of ``-I`` folders).

    Returns:
        :class:`Result`; :class:`FunctionResult` for a kernel function of several loop nests.

    Raises:
        LoopmodelError: a bad kernel (KernelError), machine (MachineError), size (DefineError),
            option (UsageError) or a failing tool (ToolError); the command line's one line.
            An argument of the wrong type raises ApiTypeError (also a TypeError), an option
            value the command refuses ApiValueError (also a ValueError); both are UsageErrors.
    """
    _check_inputs(kernel, machine, defines, models)
    opts = command_options(AnalyzeOptions, "analyze", options, define=define_argv(defines),
                           pmodel=_model_names(models))
    prepared = analyze_workflow.run(_kernel_arg(kernel), _machine_arg(machine), opts)
    if len(prepared.points) != 1:
        raise DefineError("analyze takes one value per size constant; use loopmodel.sweep for ranges")
    res = prepared.analyzer.run(prepared.points[0])
    return FunctionResult(res) if isinstance(res, SequenceResult) else Result(res, opts.unit)


@dataclass(frozen=True, repr=False)
class FunctionResult:
    """The analysis of a kernel function of several loop nests (:func:`analyze` of such a file,
    with ``function=`` naming it where the file has several; :mod:`loopmodel.workflows.sequence`).

    Attributes:
        analysis: the :class:`loopmodel.workflows.sequence.SequenceResult` the command line renders.
    """

    analysis: object

    @property
    def nests(self) -> tuple:
        """Per nest in execution order: ``nest`` (its kernel, line, repeat loops), ``result`` (its
        analysis, rendered as :class:`Result` renders one; None where it does not run),
        ``iterations``, ``repeats``, ``cycles`` (per call), ``bottleneck``."""
        return self.analysis.nests

    @property
    def total_cycles(self) -> float | None:
        """Core cycles of one call on one core (None: a nest's ECM time is unknown)."""
        return self.analysis.total_cycles

    @property
    def seconds(self) -> float | None:
        """Seconds of one call on one core at the machine's clock."""
        return self.analysis.seconds

    def to_dict(self) -> dict:
        """The ``loopmodel analyze --json`` document (docs/schema/analyze-function.schema.json)."""
        return sequence_dict(self.analysis)

    def __repr__(self) -> str:
        total = "n/a" if self.total_cycles is None else f"{self.total_cycles:.4g} cy"
        return f"FunctionResult({self.analysis.sequence.source}: {len(self.nests)} nests, {total} per call)"


def command_options(cls, command: str, options: dict, **fixed):
    """``cls`` (a command's Options) from the keyword ``options`` of an API function, with
    ``fixed`` (the values the function takes as arguments of its own: sizes, models) set.

    Raises:
        ApiTypeError: an unknown option (the valid ones listed), one the function takes as an
            argument of its own, or a value of a wrong type. ApiValueError: a refused value.
    """
    bad = sorted(set(options) & set(fixed)) or sorted(set(options) - set(names(cls)))
    if bad:
        valid = sorted(set(names(cls)) - set(fixed))
        raise ApiTypeError(f"unknown option '{bad[0]}' of {command} (choose {', '.join(valid)})")
    return dataclasses.replace(from_values(cls, command, options), **fixed)


def _model_names(models) -> tuple:
    """The ``-p`` names of ``models`` (a model name or a list of them), checked.

    Raises:
        ApiTypeError: not a str or a list or tuple of str.
        ApiValueError: a name ``loopmodel analyze -p`` does not know.
    """
    if isinstance(models, str):
        models = (models,)
    _check_type("models", models, (list, tuple), "a model name or a list of them (LC, ECM, Roofline, RooflineASM)")
    for m in models:
        _check_type("models", m, str, "model names (str) in the list")
    try:
        model_names(models)
    except LoopmodelError as exc:
        raise ApiValueError(f"models: {exc.message}") from None
    return tuple(models)


@dataclass(frozen=True)
class CompactSweep:
    """A size sweep split into pieces of equal figures (:func:`sweep` with ``compact=True``; the
    Python form of ``loopmodel analyze --json compact``).

    Attributes:
        points: ``pandas.DataFrame``, one row per point in sweep order: the varying sizes and
            ``piece`` (the row of :attr:`pieces` holding the point's figures).
        pieces: ``pandas.DataFrame``, one row per piece: ``first_point``, ``points`` and the
            columns of :func:`sweep`'s table at the piece's first point (every figure holds for
            every point of the piece; the defines, ``requirement_B``/``data_set_B`` in
            ``layer_conditions`` and the sizes named in ``notes`` are the first point's).
            ``points.join(pieces, on="piece")`` gives a figure per point.
        constants: size constant -> the value it has at every point.
        piecewise: False where the sweep had to be analysed point by point (each point a
            piece); :attr:`note` says why.
        note: None, or why the sweep was analysed point by point.
        variable: the one size constant that varies (None: none, or several).
        ecm_points: per piece, its :class:`loopmodel.report.ecm_plot.EcmPoint` (the ECM
            contributions of the piece, what :meth:`plot` draws; empty without ECM or without
            :attr:`variable`).
        skipped_note: None, or how many points were left out of :attr:`points` because the
            kernel does nothing there (an empty loop, an array without elements), and why.
    """
    points: object
    pieces: object
    constants: MappingProxyType
    piecewise: bool
    note: str | None = None
    variable: str | None = None
    ecm_points: tuple = ()
    skipped_note: str | None = None

    #: the columns of :attr:`pieces` the HTML table shows (where present), after the sizes
    HTML_COLUMNS = ("ecm.notation", "ecm.prediction_notation", "ecm.performance.cy_per_cl", "confidence.level")

    def _repr_html_(self) -> str:
        """The sweep as an HTML table (a notebook shows it): with one varying size, a row per
        step (the sizes from .. to over which the figures shown stay the same), else a row per
        piece (first point, number of points, the sizes at the first point); then the ECM
        notation and prediction, cy/CL and the data location
        (:func:`loopmodel.report.html.compact_sweep_html`)."""
        shown = [c for c in self.HTML_COLUMNS if c in self.pieces.columns]
        if self.variable is None:
            sizes = [f"defines.{c}" for c in self.points.columns if c != "piece"]
            columns = [c for c in ("first_point", "points", *sizes) if c in self.pieces.columns] + shown
            rows = self.pieces[columns].head(html_report.MAX_PIECE_ROWS).to_dict("records")
            count = len(self.pieces)
        else:
            figures = self.pieces[shown].to_dict("records")
            runs = self._runs([tuple(map(repr, f.values())) for f in figures])
            columns = [f"{self.variable} from", f"{self.variable} to", *shown]
            rows = [{columns[0]: a, columns[1]: b, **figures[p]} for a, b, p in runs[:html_report.MAX_PIECE_ROWS]]
            count = len(runs)
        return html_report.compact_sweep_html(len(self.points), len(self.pieces), columns, rows, count,
                                              dict(self.constants), self.note)

    def plot(self, y: str | None = None):
        """The sweep over :attr:`variable` as a matplotlib ``Figure`` (not held by pyplot: a
        notebook shows it, ``fig.savefig(path)`` writes it).

        Args:
            y: None: the ECM contributions over the size, stacked, with T_OL, T_ECM and the
                layer-condition transitions (:func:`loopmodel.report.ecm_plot.plot`, the
                picture of ``loopmodel analyze -D N=a:b:c --plot``; cy/CL); or a column of
                :attr:`pieces` (e.g. ``"ecm.performance.it_s"``) drawn over the size
                (:func:`loopmodel.report.study_plot.plot_study`; its unit from its name).

        Raises:
            ApiValueError: no single varying size, or ``y`` not a column of :attr:`pieces`.
            ModelError: ``y`` None and no ECM among the models.
            ToolError: matplotlib is not installed.
        """
        if self.variable is None:
            raise ApiValueError("plot: the sweep needs exactly one size that varies (the x axis)")
        fixed = ", ".join(f"{k}={v}" for k, v in self.constants.items())
        title = f"{os.path.basename(str(self.pieces['kernel.file'].iloc[0]))} on {self.pieces['machine.name'].iloc[0]}"
        title += f" ({fixed})" if fixed else ""
        if y is None:
            if not self.ecm_points:
                raise ModelError("no ECM contributions to draw: sweep with models including 'ECM'")
            runs = self._runs([dataclasses.replace(p, x=0.0) for p in self.ecm_points])
            pts = [dataclasses.replace(self.ecm_points[p], x=float(x)) for a, b, p in runs for x in (a, b)]
            return detached(ecm_plot.plot(pts, self.variable, None, f"{title}: single-core ECM contributions"))
        if y not in self.pieces.columns:
            raise ApiValueError(f"plot: y={y!r} is no column of the pieces (e.g. 'ecm.performance.it_s')")
        values = self.pieces[y].tolist()
        rows = [{self.variable: x, y: values[p]} for a, b, p in self._runs([repr(v) for v in values]) for x in (a, b)]
        return detached(study_plot.plot_study(rows, None, self.variable, y, title))

    def _runs(self, keys: list) -> list:
        """``[(first size, last size, piece), ...]``: the runs of neighbouring sizes of
        :attr:`variable` (sorted) whose pieces have equal ``keys`` (one per piece; what a
        picture draws of the piece), each with the piece of its first size: what :meth:`plot`
        draws as one step."""
        ids = {k: i for i, k in enumerate(dict.fromkeys(keys))}
        xs = self.points[self.variable].to_numpy()
        order = xs.argsort(kind="stable")
        piece = self.points["piece"].to_numpy()[order]
        key = self.points["piece"].map(dict(enumerate(ids[k] for k in keys))).to_numpy()[order]
        xs = xs[order]
        ends = [*(key[1:] != key[:-1]).nonzero()[0].tolist(), len(xs) - 1]
        starts = [0, *(e + 1 for e in ends[:-1])]
        return [(int(xs[a]), int(xs[b]), int(piece[a])) for a, b in zip(starts, ends)]


def _compact_sweep(kernel, machine, opts) -> CompactSweep:
    """:class:`CompactSweep` of the prepared ``analyze`` options ``opts``."""
    run_ = analyze_workflow.run(_kernel_arg(kernel), _machine_arg(machine), opts)
    found, reason = run_.pieces()
    pd = _pandas()
    points = pd.DataFrame({**found.columns, "piece": found.piece})
    counts = found.counts()
    rows = [{"first_point": int(first), "points": int(n),
             **sweep_workflow.flatten({k: v for k, v in json.loads(json.dumps(json_report.to_dict(res))).items()
                                       if k not in ("schema_version", "loopmodel_version")})}
            for first, n, res in zip(found.first, counts, found.results)]
    variable = next(iter(found.columns)) if len(found.columns) == 1 else None
    ecm = tuple(ecm_plot.ecm_point(res, variable) for res in found.results) if variable and found.results[0].ecm else ()
    return CompactSweep(points, pd.DataFrame(rows), MappingProxyType(run_.constants()), reason is None, reason,
                        variable, ecm, run_.note())


def sweep(kernel, machine, defines=None, *, models=("LC", "ECM", "Roofline"), output=None, compact=False,
          **options):
    """Analyze every point of a size sweep, as ``loopmodel sweep`` does for a study of one
    kernel, one machine and one option set.

    Args:
        kernel, machine, models, options: as for :func:`analyze`.
        defines: size constant -> int, ``range`` (e.g. ``range(100, 2001, 100)``), list of
            ints or ``-D`` range text (``"100:2000:100"``, stop included); the product of all
            is swept, the last constant fastest.
        compact: True: the sweep split into pieces of equal figures, one analysis per piece
            (:class:`CompactSweep`; a million points in seconds); not with ``output``.
        output: None (a DataFrame, of at most :data:`loopmodel.workflows.sweep.MAX_TABLE_ROWS` = 10^7
            rows), or a file path ending in ``.parquet``, ``.pq`` or ``.csv``: the rows are
            written there as they are computed, with the columns and types ``loopmodel
            sweep -o`` gives (memory does not grow with the number of points; the file
            appears, whole, when the last point is done, and not at all if the sweep does
            not finish; an existing file is an error).

    Returns:
        Without ``output``: ``pandas.DataFrame``, one row per point, with the columns of the
        study table (:mod:`loopmodel.workflows.sweep`): ``kernel``, ``machine`` (as given), one per
        define, one per option given, ``error`` (a point's one-line error, else None), then
        the JSON report's fields flattened with dots (``ecm.T_ECM_cy_per_cl.MEM`` in cy/CL,
        ``ecm.performance.it_s``, ...). A compiled in-core analysis (``incore`` other than
        analytic) is done once, at the largest sizes, as ``loopmodel analyze`` does for a
        ``-D`` range. ``attrs`` holds the document envelope (``schema_version``,
        ``loopmodel_version``), as a study's Parquet file does. With ``output``: the path
        written (str).

    Raises:
        LoopmodelError: what :func:`analyze` raises for the inputs (a point that fails with a
            LoopmodelError gives a row with ``error`` instead; any other exception, a bug,
            propagates).
        UsageError: more than 10^7 points without ``output`` (counted before any is
            computed), or ``output`` not a path.
        DefineError: ``output`` with another extension, a file that exists, or a folder that
            cannot be written.
    """
    _check_inputs(kernel, machine, defines, models)
    _check_type("compact", compact, bool, "a bool")
    if compact and output is not None:
        raise ApiValueError("sweep: compact=True returns the pieces; output= writes one row per point (give one)")
    path = None if output is None else _output_path(output)
    opts = command_options(AnalyzeOptions, "analyze", options, define=define_argv(defines),
                           pmodel=_model_names(models))
    if compact:
        return _compact_sweep(kernel, machine, opts)
    given = dict(options)
    if tuple(models) != ("LC", "ECM", "Roofline"):
        given["pmodel"] = list(models) if not isinstance(models, str) else models
    points = sweep_workflow.size_sweep(_kernel_arg(kernel), _machine_arg(machine), opts, given)
    if path is not None:
        sweep_workflow.write_rows(points, path)
        return path
    if points.count > sweep_workflow.MAX_TABLE_ROWS:
        raise ApiValueError(f"sweep: {points.count} points, and a DataFrame holds at most "
                            f"{sweep_workflow.MAX_TABLE_ROWS} rows: pass output='FILE.parquet' (or .csv) to write the "
                            "rows to a file as they are computed")
    df = _pandas().DataFrame(sweep_workflow.table(points).columns)
    df.attrs.update(document({}))
    return df


def omp_sweep(program, machine, defines=None, *, threads=None):
    """Predict an OpenMP program at every point of a size sweep on every thread count, as
    ``loopmodel omp PROGRAM -D N=a:b:step`` does (the coherence-aware model of
    benchmark-based-coherence-model.txt: per-thread chunks, their MESI states across the
    phases, each phase timed from the host's transition benchmarks).

    The sizes are predicted a block at a time, all at once (numpy), with the same numbers as
    ``loopmodel omp -D N=...`` at each size alone; 10^4 sizes take seconds.

    Args:
        program: an OpenMP C file or a YAML program model (path).
        machine: a machine name or path, or a :class:`Machine`, with a ``coherence`` section
            (``'host'`` after ``loopmodel machine probe --coherence``).
        defines: as for :func:`sweep`: size constant -> int, ``range``, list of ints or ``-D``
            range text; the product of all is swept, the last constant fastest.
        threads: thread counts: ``"1:16"``, ``"1,2,4"``, an int or a list (default: 1 .. the
            most threads the coherence section measured).

    Returns:
        ``pandas.DataFrame``, one row per point and thread count: one column per define,
        ``threads``, ``total_time_s`` (one execution, s), ``speedup`` (the point's time on the
        first thread count / this one) and ``phase_<k>_time_s`` per executed phase k (the
        order of ``omp --json``'s ``phases``; NaN where a point executes fewer). ``attrs`` holds
        the document envelope.

    Raises:
        LoopmodelError: bad inputs (one line, as the command line prints).
        ApiTypeError, ApiValueError: arguments of the wrong type or value; more than
            :data:`loopmodel.workflows.sweep.MAX_TABLE_ROWS` rows.
    """
    path = _path_arg("program", program, "an OpenMP C or YAML program path")
    model = _machine_arg(machine)
    options = {}
    if threads is not None:
        if isinstance(threads, (list, tuple, range)):
            for t in threads:
                _check_type("threads", t, numbers.Integral, "thread counts (int) in the list")
            threads = ",".join(str(t) for t in threads)
        elif isinstance(threads, numbers.Integral):
            threads = str(int(threads))
        options["threads"] = threads
    opts = command_options(OmpOptions, "omp", options, define=define_argv(defines))
    points = omp_workflow.size_points(opts)
    sizes = omp_workflow.sizes_workflow()
    study = sizes.prepare(path, model, opts, points)
    if len(points) * len(study.threads) > sweep_workflow.MAX_TABLE_ROWS:
        raise ApiValueError(f"omp_sweep: {len(points) * len(study.threads)} rows, and a DataFrame holds at most "
                            f"{sweep_workflow.MAX_TABLE_ROWS}; use the command line (loopmodel omp -D ... --json), "
                            "which streams the points")
    df = _pandas().DataFrame(sizes.table(study))
    df.attrs.update(document({}))
    return df


def _output_path(output) -> str:
    """``output`` of :func:`sweep` as a path, checked before any point is computed.

    Raises:
        UsageError: not a str or path-like. DefineError: see :func:`sweep`.
    """
    if not isinstance(output, (str, os.PathLike)):
        raise ApiTypeError(f"output: expected a file path (.parquet, .pq or .csv), got {type(output).__name__}")
    path = os.fspath(output)
    output_format(path, "output")
    check_new_output(path, "output")
    return path


def _pandas():
    """pandas, imported here only, when a function returns a DataFrame (:func:`sweep`,
    :func:`validate`): it is an optional dependency and takes about a second to import, which
    ``import loopmodel`` and the other functions should not pay for."""
    import pandas

    return pandas


def machine_label(machine) -> str:
    """The ``machine`` column of a sweep: the name or path given (a :class:`Machine`: its spec).

    Raises:
        ApiTypeError, ApiValueError: not a machine argument (:func:`_machine_arg`).
    """
    return machine_name(_machine_arg(machine))


def scaling(kernel, machine, defines=None, *, measured=None, **options) -> ScalingReport:
    """Predicted performance per core count, as ``loopmodel scaling`` computes it.

    Args:
        kernel, machine, defines: as for :func:`analyze` (one value per size).
        measured: measured points, a ``loopmodel measure --json`` / ``bench --threads 1:N --json``
            file, or a mapping cores -> it/s.
        options: ``loopmodel scaling`` options by name: ``cores`` ("1:N", "1,2,4", an int or a
            list; default 1 .. all cores), ``model`` ("contention", "saturation" or "both"),
            ``p0``, ``placement`` ("first-touch" or "one-domain"), ``data_in`` ("MEM"),
            ``fit_p0``, and the analysis options of :func:`analyze`.

    Returns:
        :class:`ScalingReport`.

    Raises:
        LoopmodelError: bad inputs (one line, as the command line prints); arguments of the
            wrong type or value as for :func:`analyze` (ApiTypeError, ApiValueError).
    """
    _check_inputs(kernel, machine, defines)
    measured = _measured_arg(measured)
    if isinstance(options.get("cores"), (list, tuple, range)):
        for c in options["cores"]:
            _check_type("cores", c, numbers.Integral, "core counts (int) in the list")
        options["cores"] = ",".join(str(c) for c in options["cores"])
    opts = command_options(ScalingOptions, "scaling", options, define=define_argv(defines))
    if isinstance(measured, str):
        opts, measured = dataclasses.replace(opts, measured=measured), None
    out = scaling_workflow.run(_kernel_arg(kernel), _machine_arg(machine), opts, measured)
    meas = None if out.measured is None else MappingProxyType(out.measured)
    return ScalingReport(out.curves, Result(out.analysis), meas, out.fit)


@dataclass(frozen=True)
class CompareReport:
    """One kernel on several machine models (:func:`compare`).

    Attributes:
        rows: one :class:`loopmodel.workflows.compare.MachineRow` per machine model, in the order
            named: ``machine`` (name), ``analysis`` (the single-core analysis, as :func:`analyze`
            gives it: ``ecm.T_ECM`` per data location in cy/CL, ``prediction`` with the data
            location, T_ECM there and n_s, ``roofline``; None where it failed), ``socket`` (the
            prediction with every core of one socket active: ``point.it_per_s``), ``energy``
            (``energy`` 's result, None without a power model) and ``footnotes`` (``column``,
            ``text``: why a figure is missing).
        kernel: the kernel as given (text); defines: the sizes; model: the multicore model.
    """

    rows: tuple
    kernel: str
    defines: MappingProxyType
    model: str

    def to_dict(self) -> dict:
        """The document ``loopmodel compare ... --json`` prints."""
        run = compare_workflow.CompareRun(self.kernel, dict(self.defines), self.model, self.rows)
        return json.loads(json.dumps(compare_json.to_dict(run)))

    def plot(self):
        """T_ECM per data location in cy/it, one bar per machine model, as ``loopmodel compare
        --plot`` draws it; a matplotlib ``Figure`` (not held by pyplot).

        Raises:
            ToolError: matplotlib is not installed.
        """
        return detached(compare_plot.plot(self.to_dict(), None))


def compare(kernel, machines="all", defines=None, **options) -> CompareReport:
    """One kernel at one set of sizes on several machine models, as ``loopmodel compare`` does:
    per model the single-core ECM prediction per data location (cy/CL, cy/it), the data location
    and T_ECM there, the saturation point, the Roofline bottleneck, the performance of one core
    and of one socket, the energy per iteration (:mod:`loopmodel.workflows.compare` names the
    workflow each figure is read from; ecm-model-slides.txt, kerncraft-tool-paper.txt).

    Args:
        kernel: as for :func:`analyze`.
        machines: a machine name, path, ``"host"`` or :class:`Machine`, or a list of them;
            ``"all"`` (default) is every bundled model (:meth:`Machine.list`).
        defines: sizes, one value per size constant (forms of :func:`define_argv`).
        options: ``loopmodel compare`` options by name: ``model`` ("contention" or
            "saturation", the multicore model of the socket figures) and the analysis options of
            :func:`analyze` (``incore``, ``clock``, ``cache_predictor``, ...).

    Returns:
        :class:`CompareReport`; what one machine model cannot give is a footnote of its row.

    Raises:
        LoopmodelError: a bad kernel, size or option, or a named machine that cannot be read (one
            line, as the command line prints); arguments of the wrong type or value as for
            :func:`analyze` (ApiTypeError, ApiValueError).
    """
    listed = [machines] if isinstance(machines, (str, os.PathLike, Machine)) else machines
    _check_type("machines", listed, (list, tuple), "a machine (name, path or loopmodel.Machine) or a list of them")
    for m in listed:
        _check_inputs(kernel, m, defines)
    if not listed:
        raise ApiValueError("machines: expected at least one machine model")
    opts = command_options(CompareOptions, "compare", options, define=define_argv(defines))
    out = compare_workflow.run(_kernel_arg(kernel), [_machine_arg(m) for m in listed], opts)
    return CompareReport(out.rows, out.kernel, MappingProxyType(dict(out.defines)), out.model)


def _measured_arg(measured):
    """``measured`` of :func:`scaling`: None, a path (str), or ``{cores: it/s}``.

    Raises:
        ApiTypeError: another type, a key that is no core count or a value that is no number.
        ApiValueError: fewer than 1 core, or an it/s that is not positive and finite.
    """
    if measured is None:
        return None
    if not isinstance(measured, Mapping):
        if not isinstance(measured, (str, os.PathLike)):
            raise ApiTypeError("measured: expected a path to a 'measure'/'bench --json' file or a mapping "
                               f"cores -> it/s, got {_type_name(measured)}")
        return _path_arg("measured", measured)
    out = {}
    for cores, it_s in measured.items():
        if isinstance(cores, str) and re.fullmatch(r"[0-9]+", cores.strip()):
            cores = int(cores)
        if not isinstance(cores, numbers.Integral) or isinstance(cores, bool):
            raise ApiTypeError(f"measured: the key {cores!r} is no core count (expected a mapping cores -> it/s "
                               "or a path to a 'measure'/'bench --json' file)")
        _check_type(f"measured[{cores}]", it_s, numbers.Real, "a number (it/s)")
        if cores < 1 or not (math.isfinite(it_s) and it_s > 0):
            raise ApiValueError(f"measured[{cores}]: expected at least 1 core and a positive, finite it/s, "
                                f"got {it_s!r}")
        out[int(cores)] = float(it_s)
    return out


def bench(kernel, defines=None, machine=None, **options) -> BenchReport:
    """Measure a C kernel on this host, as ``loopmodel bench`` does (compiles and runs it).

    Args:
        kernel: a C kernel file.
        defines: sizes (forms of :func:`define_argv`); a range measures each size.
        machine: the machine model whose compiler and flags to use (default: the host's
            ``-O3 -march=native``), a name, path or ``"host"``.
        options: ``repeat`` (10), ``cache`` ("warm"/"cold"), ``cpu`` (0), ``threads`` (N or
            "1:N"), ``timeout`` (s, 120), ``no_cache``.

    Returns:
        :class:`BenchReport`.

    Raises:
        LoopmodelError: bad inputs, no compiler, or a failing run (one line); arguments of the
            wrong type or value as for :func:`analyze` (ApiTypeError, ApiValueError), before
            anything is compiled.
    """
    kernel = _c_kernel_path(kernel, "bench")
    define_argv(defines)
    if machine is not None:
        machine = machine_label(machine)
    opts = command_options(BenchOptions, "bench", options, define=tuple(define_argv(defines)), machine=machine)
    got = bench_workflow.run(kernel, opts)
    return BenchReport(got.results, got.curve)


def validate(kernel, machine, defines=None, **options):
    """The ECM prediction next to the measurement on this host, per size (``loopmodel validate``).

    Args:
        kernel: a C kernel file. machine: this host's model (``"host"`` or a probe file).
        defines: sizes (forms of :func:`define_argv`).
        options: ``repeat`` (10), ``cpu`` (0), ``no_cache``.

    Returns:
        ``pandas.DataFrame``: one row per size, the fields of ``validate --json`` flattened
        (``defines.N``, ``data_location``, ``predicted_cy_per_cl``, ``measured_min_cy_per_cl``,
        ``relative_error``, ...); ``attrs["summary"]``: per data location the number of points
        and the median and largest |relative error|; ``attrs["notes"]``: the notes of the
        command's table (how the runs were made, what could not be measured, e.g. hardware
        counters on a virtual machine).

    Raises:
        LoopmodelError: bad inputs, no compiler, or a failing run (one line); arguments of the
            wrong type or value as for :func:`analyze` (ApiTypeError, ApiValueError), before
            anything is compiled.
    """
    kernel = _c_kernel_path(kernel, "validate")
    define_argv(defines)
    machine = machine_label(machine)
    opts = command_options(ValidateOptions, "validate", options, define=tuple(define_argv(defines)))
    got = validate_workflow.run(kernel, machine, opts)
    df = _pandas().DataFrame([sweep_workflow.flatten(json.loads(json.dumps(r.to_dict()))) for r in got.rows])
    df.attrs["summary"] = got.summary
    df.attrs["notes"] = list(got.notes)
    return df
