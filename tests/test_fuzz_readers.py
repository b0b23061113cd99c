"""Fuzzing the readers of data from strangers (hypothesis with a fixed seed, so CI sees the same
examples): kernels in C and YAML, machine files, study files, application files, OpenMP
programs in C and YAML, ``-D`` values. The only outcomes allowed are a result or a
:class:`~loopmodel.errors.LoopmodelError` whose message is one line, each within a time bound
(no traceback, no hang). Examples per reader: :data:`EXAMPLES` (the whole file runs in about a
minute on two cores)."""
from __future__ import annotations

import copy
import math
import time

import pytest
import yaml
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from helpers import KERNELS, ROOT

import loopmodel
from loopmodel.errors import LoopmodelError

EXAMPLES = 60
#: seconds one example may take (a result or an error)
BOUND_S = 10.0
MACHINES = ("SkylakeSP_Gold-6148", "HaswellEP_E5-2695v3", "Zen_EPYC-7451", "ThunderX2_CN9980")
_SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def FUZZ(test):
    """The fuzz settings with a fixed seed: CI sees the same examples every run."""
    return seed(20261126)(_SETTINGS(test))


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("LOOPMODEL_NO_CACHE", "1")


def outcome(call):
    """``call()``'s result, or None for a LoopmodelError with a one-line message; anything else
    (another exception, a multi-line message, more than :data:`BOUND_S`) fails the test."""
    t0 = time.monotonic()
    try:
        result = call()
    except LoopmodelError as exc:
        assert "\n" not in str(exc) and str(exc).strip(), repr(str(exc))
        result = None
    assert time.monotonic() - t0 < BOUND_S, "took too long"
    return result


def _analyze(kernel, machine="SkylakeSP_Gold-6148", defines=None, **options):
    return loopmodel.analyze(kernel, machine, defines or {}, models=("LC", "ECM", "Roofline"), incore="analytic",
                             **options)


# ---------------------------------------------------------------- C kernels

_INDEX = st.sampled_from(["i", "i+1", "i-1", "i+2", "2*i", "i-3"])
_OPS = st.sampled_from(["+", "-", "*", "/"])


@st.composite
def affine_kernel(draw) -> str:
    """A kernel of the supported grammar: 1-D or 2-D arrays, one or two loops, expressions of
    loads, constants and scalars (float or double)."""
    ctype = draw(st.sampled_from(["double", "float"]))
    two_d = draw(st.booleans())
    names = ["a", "b", "c", "d"][:draw(st.integers(2, 4))]
    decl = "".join(f"{ctype} {n}[M][N];\n" if two_d else f"{ctype} {n}[N];\n" for n in names) + f"{ctype} s;\n"

    def ref(name):
        i = draw(_INDEX)
        return f"{name}[j+{draw(st.integers(-1, 1))}][{i}]" if two_d else f"{name}[{i}]"

    terms = [ref(draw(st.sampled_from(names[1:]))) if draw(st.booleans()) else draw(st.sampled_from(["s", "1.5"]))
             for _ in range(draw(st.integers(1, 5)))]
    expr = terms[0] + "".join(f" {draw(_OPS)} {t}" for t in terms[1:])
    if draw(st.booleans()):
        expr = f"sqrt({expr})"
    body = f"{ref('a')} = {expr};" if draw(st.booleans()) else f"s += {expr};"
    loop = f"for (int i = 3; i < N-3; ++i)\n    {body}\n"
    return decl + (f"for (int j = 1; j < M-1; ++j)\n  {loop}" if two_d else loop)


@given(affine_kernel(), st.integers(0, 3000), st.integers(0, 50), st.sampled_from(MACHINES))
@FUZZ
def test_generated_kernels(text, n, m, machine):
    outcome(lambda: _analyze(text, machine, {"N": n, "M": m}))


def _mutations(text: str):
    return st.lists(st.tuples(st.integers(0, len(text)), st.integers(0, 3),
                              st.text(alphabet="[]()+-*/=;{}<>#\\?/ \n0123456789ijNMabs.\"'", max_size=4)),
                    max_size=4)


_EXAMPLE_KERNELS = sorted(p for p in KERNELS.glob("*.c"))


@given(st.sampled_from(_EXAMPLE_KERNELS), st.data())
@FUZZ
def test_mutated_example_kernels(path, data):
    text = path.read_text()
    for at, cut, insert in data.draw(_mutations(text)):
        text = text[:at] + insert + text[at + cut:]
    outcome(lambda: _analyze(text, "SkylakeSP_Gold-6148", {"N": 200, "M": 20, "L": 10}))


# ---------------------------------------------------------------- -D values

@given(st.text(max_size=30))
@FUZZ
def test_define_values(value):
    from loopmodel.fileio.defines import parse_define_lazy

    result = outcome(lambda: parse_define_lazy(f"N={value}"))
    if result is not None:
        assert all(isinstance(v, int) and v >= 0 for v in result[1][:5])
        assert value.isascii(), "non-ASCII digits taken as a size"


# ---------------------------------------------------------------- machine files

_WILD = st.one_of(st.none(), st.booleans(), st.integers(-10, 10), st.integers(min_value=2 ** 40),
                  st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0, 0.0, -1, 1e300, 1e-300, 10 ** 25]),
                  st.text(max_size=12), st.sampled_from(["1e300 GHz", "1e-30 GHz", "0 B/cy", "-3 GB/s", "1e-300 B/cy",
                                                         "64 B", "0 B", "12 cy", "nan GHz", "inf B/cy"]),
                  st.lists(st.integers(0, 4), max_size=3))


def _leaves(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, path + (i,))
    yield path


def _replace(data, path, value):
    if not path:
        return value
    node = data
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return data


_MACHINE_DATA = {m: yaml.safe_load((ROOT / "src" / "loopmodel" / "machines" / f"{m}.yml").read_text())
                 for m in MACHINES}


_SCALES = (0, -1, 1e-300, 1e-30, 1e-3, 1e3, 1e25, 1e300, float("nan"), float("inf"))


def _scaled(value, scale):
    """``value`` (a number, or text such as ``2.4 GHz``) times ``scale``, unit kept."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value * scale if isinstance(scale, float) or isinstance(value, float) else value * scale
    number, _, unit = str(value).partition(" ")
    try:
        return f"{float(number) * scale:g} {unit}".strip()
    except ValueError:
        return value


def _numeric_leaves(doc):
    out = []
    for path in _leaves(doc):
        node = doc
        for k in path:
            node = node[k]
        if isinstance(node, (int, float)) and not isinstance(node, bool) or (
                isinstance(node, str) and node[:1].isdigit()):
            out.append((path, node))
    return out


@given(st.sampled_from(MACHINES), st.data())
@FUZZ
def test_mutated_machine_files(tmp_path_factory, name, data):
    """Physical quantities scaled to the absurd (0, negative, 1e-300, 1e300, NaN, inf), or a
    leaf replaced by anything: a one-line error or a result without NaN."""
    doc = copy.deepcopy(_MACHINE_DATA[name])
    for _ in range(data.draw(st.integers(1, 3))):
        if data.draw(st.booleans()):
            path, value = data.draw(st.sampled_from(_numeric_leaves(doc)))
            doc = _replace(doc, path, _scaled(value, data.draw(st.sampled_from(_SCALES))))
        else:
            doc = _replace(doc, data.draw(st.sampled_from(list(_leaves(doc)))), data.draw(_WILD))
    path = tmp_path_factory.mktemp("m") / "fuzz.yml"
    try:
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
    except (ValueError, yaml.YAMLError):
        return
    predictor = data.draw(st.sampled_from(["lc", "sim"]))
    kernel, sizes = data.draw(st.sampled_from([("daxpy.c", {"N": 4000}), ("2d-5pt.c", {"N": 400, "M": 50})]))
    _check_result(outcome(lambda: _analyze(str(KERNELS / kernel), str(path), sizes, cache_predictor=predictor)))


@pytest.mark.parametrize("scale", [0, 1e-300, 1e300])
def test_every_number_of_a_machine_file_at_absurd_values(tmp_path, scale):
    """Each number of a machine file in turn (clock, sizes, bandwidths, throughputs, ...)
    scaled to the absurd: a one-line error or a result without NaN, never a traceback."""
    base = _MACHINE_DATA["SkylakeSP_Gold-6148"]
    for i, (where, value) in enumerate(_distinct_numeric_leaves(base)):
        doc = _replace(copy.deepcopy(base), where, _scaled(value, scale))
        path = tmp_path / f"m{i}.yml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        _check_result(outcome(lambda: _analyze(str(KERNELS / "daxpy.c"), str(path), {"N": 4000})), where)


def _distinct_numeric_leaves(doc) -> list:
    """:func:`_numeric_leaves` less the repetitions: one measured bandwidth per memory level
    and one number per key of the coherence table (a table has hundreds or thousands, read by
    one function), no port names, no provenance texts."""
    out, seen = [], set()
    for where, value in _numeric_leaves(doc):
        if "analyzer_ports" in where or where[0] == "provenance":
            continue
        table = where[:3] if where[:2] == ("benchmarks", "measurements") else \
            where[:2] if where[0] == "coherence" else None
        if table is not None:
            if table in seen:
                continue
            seen.add(table)
        out.append((where, value))
    return out


def _check_result(result, where=()) -> None:
    """A result has no NaN, and its time for daxpy or the 2-D 5-point stencil lies between 10^-3
    and 10^6 cy/CL: a machine file giving a time outside these (a clock of 10^-30 GHz, a
    bandwidth of 10^-300 B/cy) is not a physical machine and must have been refused."""
    if result is None:
        return
    _check_finite(result.to_dict())
    perf = result.performance
    assert perf is None or 1e-3 < perf < 1e6, f"{'.'.join(map(str, where))}: performance {perf} cy/CL"


def _check_finite(doc):
    """No NaN anywhere in a result document (undefined figures are null)."""
    if isinstance(doc, float):
        assert not math.isnan(doc)
    elif isinstance(doc, dict):
        for v in doc.values():
            _check_finite(v)
    elif isinstance(doc, list):
        for v in doc:
            _check_finite(v)


# ---------------------------------------------------------------- study, application and OpenMP files

_KEYS = st.sampled_from(["kernels", "machines", "defines", "options", "name", "count", "file", "phases", "arrays",
                         "scalars", "repeat", "var", "loops", "accesses", "kind", "index", "lo", "hi", "N", "M",
                         "incore", "cache_predictor", "compiler", "compiler_flags", "length", "type", "dims"])
_VALUES = st.recursive(_WILD | st.sampled_from([str(KERNELS / "daxpy.c"), "SkylakeSP_Gold-6148", "1:100:10",
                                                 "parallel", "read", "write", "i", "N", "double"]),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=4),
                       max_leaves=12)
_DOCS = st.dictionaries(_KEYS, _VALUES, max_size=6)


def _write_yaml(tmp_path_factory, doc, name):
    path = tmp_path_factory.mktemp("d") / name
    try:
        path.write_text(yaml.safe_dump(doc))
    except (ValueError, yaml.YAMLError):
        return None
    return str(path)


def _read_study(path):
    from loopmodel.workflows.study import read_study

    return read_study(path)


def _read_app(path):
    from loopmodel.fileio.app_file import read_app

    return read_app(path)


def _read_omp(path):
    from loopmodel.fileio.omp_program import read_omp_program

    return read_omp_program(path, {"N": 1000})


@pytest.mark.parametrize("read, name", [(_read_study, "study.yml"), (_read_app, "app.yml"), (_read_omp, "p.yml")],
                         ids=["study", "application", "openmp-yaml"])
@given(doc=_DOCS)
@FUZZ
def test_yaml_files(tmp_path_factory, read, name, doc):
    """Study, application and OpenMP YAML files built from random mappings of the readers' keys."""
    path = _write_yaml(tmp_path_factory, doc, name)
    if path:
        outcome(lambda: read(path))


_OMP_EXAMPLES = sorted((ROOT / "examples" / "omp").glob("*"))


@given(st.sampled_from(_OMP_EXAMPLES), st.data())
@FUZZ
def test_mutated_openmp_programs(tmp_path_factory, path, data):
    from loopmodel.fileio.omp_program import read_omp_program

    text = path.read_text()
    for at, cut, insert in data.draw(_mutations(text)):
        text = text[:at] + insert + text[at + cut:]
    out = tmp_path_factory.mktemp("o") / path.name
    out.write_text(text)
    outcome(lambda: read_omp_program(str(out), {"N": 1000}))
