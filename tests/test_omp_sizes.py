"""``omp`` over a ``-D`` range: the size-vectorised path (the form read once, the coherence model
over all sizes at once) gives exactly the numbers of the per-size path (``read_omp_program`` and
``predict_program`` / ``analyse`` at each size alone), over the example programs, sizes from 1
to 10^7 and thread counts; and the command line, the JSON Lines and the Python API carry them."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml
from helpers import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopmodel
from loopmodel.fileio.defines import sweep
from loopmodel.fileio.machine_files import load_machine
from loopmodel.fileio.machine_writer import coherence_mapping, machine_text
from loopmodel.fileio.omp_program import read_omp_program
from loopmodel.fileio.omp_sizes import ProgramAtSizes
from loopmodel.ir.omp import Repeat
from loopmodel.ir.omp_sizes import program_sizes
from loopmodel.machine.coherence import TRANSITION_KEYS, CoherenceTable
from loopmodel.models import omp_sizes as omp_sizes_model
from loopmodel.models.coherence_timing import Timing
from loopmodel.models.omp_program import predict_program
from loopmodel.models.omp_sizes import Footprint, predict_sizes
from loopmodel.models.omp_trace import Traces, simulate
from loopmodel.report import doctypes
from loopmodel.workflows import omp_sizes
from loopmodel.workflows.omp import OmpOptions, analyse, phase_core_seconds

EXAMPLES = ("examples/omp/cg_banded.c", "examples/omp/dot_thread0.c", "examples/omp/dot_firsttouch.c",
            "examples/omp/dot_mkl.yml")
SIZES = tuple(int(2 ** (12 + k / 2)) for k in range(33))
MEASURED_T = (1, 2, 4, 8, 16)
# bytes/s per transition: remote misses slow, hits fast; 'S other' not measured (timed by a fallback)
RATE = {k: 20e9 + 1e9 * j for j, k in enumerate(TRANSITION_KEYS)}
RATE.update({"L M other": 5e9, "L E other": 8e9, "L I": 4e9, "S I": 2e9, "S M other": 3e9})

#: programs beyond the examples: 2D arrays, strides beyond a line, master/single, a swept repeat
#: count (YAML), a triangular nest and a descending loop (both read size by size)
EXTRA = {
    "rows.c": """#define N 100
#define M 24
double a[N][M], b[N][M], v[M];
#pragma omp parallel for schedule(static)
for (int i = 0; i < N; ++i)
    for (int j = 0; j < M; ++j)
        a[i][j] = 1.0;
#pragma omp single
for (int j = 0; j < M; ++j)
    v[j] = 0.0;
#pragma omp parallel for schedule(static)
for (int i = 1; i < N - 1; ++i)
    for (int j = 0; j < M; ++j)
        b[i][j] = a[i - 1][j] + a[i + 1][j] + v[j];
""",
    "columns.c": """#define N 64
double a[N][N], s[N];
#pragma omp parallel for schedule(static)
for (int j = 0; j < N; ++j)
    for (int i = 0; i < N; ++i)
        a[i][j] = 2.0;
#pragma omp parallel for schedule(static)
for (int j = 0; j < N; ++j)
    for (int i = 0; i < N; ++i)
        s[j] += a[i][j];
""",
    "strided.c": """#define N 1000
double x[4 * N + 8], y[N];
#pragma omp parallel for schedule(static)
for (int i = 0; i < N; ++i)
    x[4 * i + 3] = y[i];
#pragma omp master
for (int i = 0; i < 2 * N; i += 2)
    x[2 * i] = 1.0;
""",
    "edges.c": """#define N 100
float f[N];
double d[N + 4];
#pragma omp parallel for schedule(static)
for (int i = 0; i < N; ++i)
    f[i] = d[i - 2] + d[i + 5];
#pragma omp parallel for schedule(static)
for (int i = 0; i < N; ++i)
    d[i + 1] = f[i] * 2.0f;
""",
    "triangle.c": """#define N 50
double a[N][N];
#pragma omp parallel for schedule(static)
for (int i = 0; i < N; ++i)
    for (int j = 0; j <= i; ++j)
        a[i][j] = 1.0;
for (int i = N - 1; i >= 0; --i)
    a[i][0] = a[i][1];
""",
    "sweeps.yml": """arrays:
  x: {length: N, type: double}
  y: {dims: [N], type: float}
phases:
  - {name: init, kind: sequential, loops: [{var: i, lo: 0, hi: N}], accesses: [{array: x, kind: write, index: i}]}
  - repeat: ITERS
    phases:
      - name: scale
        kind: parallel
        loops: [{var: i, lo: 0, hi: N - 1}]
        accesses: [{array: x, kind: read, index: i + 1}, {array: y, kind: write, index: i}]
      - {name: back, kind: single, loops: [{var: i, lo: 0, hi: N}], accesses: [{array: x, kind: write, index: i}]}
defines: {N: 1000, ITERS: 3}
""",
}


def _table() -> CoherenceTable:
    secs = {k: {t: tuple(s / (RATE[k] / (1 + 0.07 * t)) for s in SIZES) for t in MEASURED_T}
            for k in TRANSITION_KEYS if "S other" not in k}
    return CoherenceTable(SIZES, MEASURED_T, secs, region_overhead={1: 1e-7, 4: 3e-7, 16: 9e-7})


@pytest.fixture(scope="module")
def machine(tmp_path_factory):
    """A built-in model (in-core figures) with a made-up 16-thread coherence table: sizes and
    thread counts interpolated, 'S other' timed by its fallback."""
    data = yaml.safe_load(open("src/loopmodel/machines/SkylakeSP_Gold-6148.yml"))
    path = tmp_path_factory.mktemp("m") / "coh16.yml"
    path.write_text(machine_text({**data, "coherence": coherence_mapping(_table())}, ["test"]))
    return str(path)


@pytest.fixture(scope="module")
def extra(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("p")
    for name, text in EXTRA.items():
        (tmp / name).write_text(text)
    return {name: str(tmp / name) for name in EXTRA}


def _per_size(path: str, model, point: dict, threads: list) -> list:
    """The per-size path: ``(threads, total, speedup, phase seconds, repeat seconds)`` per count."""
    rows = analyse(read_omp_program(path, point), model, threads)
    return [(r.threads, r.prediction.total_seconds, r.speedup, tuple(p.seconds for p in r.prediction.phases),
             tuple(rp.seconds for rp in r.prediction.repeats)) for r in rows]


def _study(path: str, machine: str, defines: list, threads: list, alone: list | None = None) -> list:
    """The study's results; ``alone`` (a list) collects the points predicted one by one."""
    study = omp_sizes.prepare(path, machine, OmpOptions(threads=",".join(map(str, threads))), sweep(defines, {}))
    one_by_one = omp_sizes.analyse

    def counted(program, *args, **kwargs):
        if alone is not None:
            alone.append(program.defines)
        return one_by_one(program, *args, **kwargs)

    omp_sizes.analyse = counted
    try:
        return list(study.results())
    finally:
        omp_sizes.analyse = one_by_one


def _vectorised(res) -> list:
    return [(r.threads, r.total_seconds, r.speedup, r.phase_seconds, r.repeat_seconds) for r in res.rows]


_NS = st.one_of(st.integers(1, 40), st.integers(41, 5000), st.integers(5001, 10 ** 7))


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(EXAMPLES), ns=st.lists(_NS, min_size=2, max_size=6, unique=True),
       threads=st.lists(st.integers(1, 16), min_size=1, max_size=3, unique=True))
def test_the_study_of_an_example_equals_each_size_alone(machine, path, ns, threads):
    """Every number of a size study (total, speed-up, every phase, every repeat iteration) is
    the per-size path's at that size, exactly."""
    model = load_machine(machine)
    alone: list = []
    results = _study(path, machine, [f"N={n}" for n in ns], threads, alone)
    assert [r.defines for r in results] == [{"N": n} for n in ns] and not alone
    for res in results:
        assert _vectorised(res) == _per_size(path, model, res.defines, threads), res.defines


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(EXAMPLES), ns=st.lists(_NS, min_size=3, max_size=9, unique=True),
       threads=st.lists(st.integers(1, 16), min_size=1, max_size=16, unique=True), block=st.integers(1, 4))
def test_a_study_in_blocks_equals_each_size_alone(machine, monkeypatch, path, ns, threads, block):
    """A study cut into blocks of a few sizes (the line states of the classes met in an
    earlier block reused) gives every number of the per-size path at every size, for any
    thread counts in any order."""
    monkeypatch.setattr(omp_sizes, "BLOCK", block)
    model = load_machine(machine)
    results = _study(path, machine, [f"N={n}" for n in ns], threads)
    assert [r.defines for r in results] == [{"N": n} for n in ns]
    for res in results:
        assert _vectorised(res) == _per_size(path, model, res.defines, threads), res.defines


def test_a_block_whose_classes_were_met_before_reuses_their_line_states(machine, monkeypatch):
    """The second block's sizes order their cuts as some of the first block's do: their line
    states are not simulated again, and every number is the same as in a study of them alone."""
    simulated = []

    def counted(*args):
        simulated.append(args)
        return simulate(*args)

    monkeypatch.setattr(omp_sizes_model, "simulate", counted)
    timing = Timing(load_machine(machine).coherence)
    ns = [1000 * k for k in range(1, 41)]
    whole = program_sizes([read_omp_program(EXAMPLES[0], {"N": n}) for n in ns])
    traces = Traces()
    first = list(predict_sizes(whole, timing, (3, 16), traces=traces))
    assert len(simulated) == 2
    again = list(predict_sizes(whole.take(np.arange(20, 40)), timing, (16, 3), traces=traces))
    assert len(simulated) == 2
    for a, b in zip(first, again[::-1]):
        assert np.array_equal(a.seconds[a.phase_rows][:, 20:], b.seconds[b.phase_rows])
        assert np.array_equal(a.transitions[a.phase_rows][..., 20:], b.transitions[b.phase_rows])


@pytest.mark.parametrize("path", EXAMPLES)
def test_every_thread_count_of_a_study_equals_each_size_alone(machine, monkeypatch, path):
    """T = 1..16 at sizes from one element per thread to 10^7, in blocks of 4 sizes."""
    ns = [1, 15, 16, 17, 100, 1000, 4099, 65536, 999_983, 10_000_000]
    model = load_machine(machine)
    threads = list(range(1, 17))
    monkeypatch.setattr(omp_sizes, "BLOCK", 4)
    results = _study(path, machine, [f"N={n}" for n in ns], threads)
    for res in results:
        assert _vectorised(res) == _per_size(path, model, res.defines, threads), res.defines


@pytest.mark.parametrize("name,defines,one_by_one", [
    ("rows.c", ["N=3:40:1", "M=1:17:8"], 0), ("columns.c", ["N=1:70:3"], 8), ("strided.c", ["N=1:30:1", "N=9000"], 0),
    ("edges.c", ["N=1:150:1"], 0), ("triangle.c", ["N=1:12:1"], 12), ("sweeps.yml", ["N=1:9:2", "ITERS=1:4:1"], 0)])
def test_the_study_of_other_programs_equals_each_size_alone(machine, extra, name, defines, one_by_one):
    """2D arrays, strides beyond a line (a thread with one column of 9 doubles or more: those
    sizes predicted one by one), master and single phases, indices outside the arrays, float
    and double arrays, a swept repeat count, a triangular nest and a descending loop (read size
    by size)."""
    model = load_machine(machine)
    alone: list = []
    for res in _study(extra[name], machine, defines, [1, 3, 16], alone):
        assert _vectorised(res) == _per_size(extra[name], model, res.defines, [1, 3, 16]), res.defines
    assert len(alone) == one_by_one


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(EXAMPLES), ns=st.lists(_NS, min_size=1, max_size=8, unique=True),
       threads=st.integers(1, 16))
def test_every_phase_equals_predict_program(machine, path, ns, threads):
    """The model alone: memory and in-core time, bound, overhead and the time of every
    transition of every executed phase are predict_program's at each size."""
    model = load_machine(machine)
    timing = Timing(model.coherence, int(model.cacheline_size))
    programs = [read_omp_program(path, {"N": n}) for n in ns]
    sizes = program_sizes(programs)
    cores = [phase_core_seconds(p, model)[0] for p in programs]
    unique = [sp for it in sizes.items for sp in (it if isinstance(it, tuple) else (it,))]
    per_phase = [[ph for it in p.items for ph in (it.body if isinstance(it, Repeat) else (it,))] for p in programs]
    core = {id(sp): np.array([math.nan if c.get(ph[j]) is None else c[ph[j]] for c, ph in zip(cores, per_phase)])
            for j, sp in enumerate(unique)}
    pred, = predict_sizes(sizes, timing, (threads,), core)
    assert pred.done.all()
    for s, (program, c) in enumerate(zip(programs, cores)):
        ref = predict_program(program, timing, threads, c)
        for p, ph in enumerate(ref.phases):
            row = pred.phase_rows[p]
            core_s = pred.core_seconds[row, s]
            got = (pred.seconds[row, s], pred.memory_seconds[row, s], None if math.isnan(core_s) else core_s,
                   "in-core" if pred.in_core[row, s] else "memory", pred.overhead[row], pred.iterations[p],
                   {TRANSITION_KEYS[k]: pred.transitions[row, k, s] for k in range(len(TRANSITION_KEYS))
                    if pred.transitions[row, k, s] > 0})
            assert got == (ph.seconds, ph.memory_seconds, ph.core_seconds, ph.bound, ph.overhead_seconds,
                           ph.iteration, {t.benchmark: t.seconds for t in ph.transitions}), (ns[s], p)


def test_more_threads_than_the_state_masks_hold_are_predicted_size_by_size(tmp_path):
    """65 threads: the holders' bit mask has 64 bits, so the sizes go to the per-size path, with
    its numbers (64 threads: the vectorised path, thread 63 in the mask's top bit)."""
    secs = {k: {t: tuple(s / RATE[k] for s in SIZES) for t in (1, 65)} for k in TRANSITION_KEYS}
    data = yaml.safe_load(open("src/loopmodel/machines/SkylakeSP_Gold-6148.yml"))
    path = tmp_path / "coh65.yml"
    path.write_text(machine_text({**data, "coherence": coherence_mapping(CoherenceTable(SIZES, (1, 65), secs))},
                                 ["test"]))
    model = load_machine(str(path))
    timing = Timing(model.coherence, int(model.cacheline_size))
    programs = [read_omp_program(EXAMPLES[1], {"N": n}) for n in (100, 1000)]
    over, top = predict_sizes(program_sizes(programs), timing, (65, 64))
    assert not over.done.any() and top.done.all()
    alone: list = []
    for res in _study(EXAMPLES[1], str(path), ["N=100", "N=1000"], [64, 65], alone):
        assert _vectorised(res) == _per_size(EXAMPLES[1], model, res.defines, [64, 65])
    assert len(alone) == 2


@settings(max_examples=40, deadline=None, derandomize=True)
@given(sizes=st.lists(st.integers(0, 1 << 40), min_size=1, max_size=20),
       stride=st.sampled_from([1, 8, 16, 64, 256]), threads=st.integers(1, 16),
       key=st.sampled_from(TRANSITION_KEYS))
def test_the_timing_functions_at_many_sizes_are_timings_seconds(sizes, stride, threads, key):
    timing = Timing(_table())
    size = np.array(sizes, dtype=np.int64)
    got = Footprint(timing, np.full(size.shape, stride), size, threads).seconds(key)
    assert got.tolist() == [timing.seconds(key, stride, s, threads) for s in sizes]


@pytest.mark.parametrize("path", EXAMPLES)
def test_the_form_gives_the_integers_of_each_size(path):
    """The program read once (swept N a symbol) and evaluated at many sizes has the integers of
    the program read at each size: loops, accesses, repeat counts."""
    ns = [1, 2, 3, 7, 8, 9, 63, 64, 65, 1000, 12345, 10 ** 7]
    reader = ProgramAtSizes(path, {"N": ns[0]}, ["N"])
    groups, alone = reader.block([{"N": n} for n in ns])
    assert len(groups) == 1 and alone.size == 0
    idx, sizes = groups[0]
    expect = program_sizes([read_omp_program(path, {"N": n}) for n in ns])
    for got, want in zip(sizes.items, expect.items):
        for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            for field in ("lo", "hi", "coeff", "offset"):
                assert np.array_equal(getattr(a, field), getattr(b, field)), field


def test_sizes_the_per_size_reading_refuses_are_refused_with_its_message(machine, tmp_path):
    """A size at which the program cannot be read (a dimension of 0) fails with the per-size
    reading's one-line error, after the sizes before it."""
    path = tmp_path / "gap.c"
    path.write_text("#define N 10\ndouble x[N - 5];\n#pragma omp parallel for\nfor (int i = 0; i < N - 5; ++i)\n"
                    "    x[i] = 1.0;\n")
    r = run_cli("omp", path, "-m", machine, "-D", "N=9", "-D", "N=5", "--threads", "2")
    assert r.returncode != 0 and "dimension of 0 elements" in r.stderr


def test_command_line_streams_one_document_per_size_as_the_single_sizes(machine):
    r = run_cli("omp", "examples/omp/cg_banded.c", "-m", machine, "-D", "N=1000:1600:300", "--threads", "1,4",
                "--json")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert [d["defines"] for d in lines] == [{"N": 1000}, {"N": 1300}, {"N": 1600}]
    for d in lines:
        assert doctypes.check("omp-sizes", d) == []
        one = json.loads(run_cli("omp", "examples/omp/cg_banded.c", "-m", machine, "-D", f"N={d['defines']['N']}",
                                 "--threads", "1,4", "--json").stdout)
        assert [t["total_time_s"] for t in d["threads"]] == [t["total_time_s"] for t in one["threads"]]
        assert [t["phase_time_s"] for t in d["threads"]] == [[p["time_s"] for p in t["phases"]]
                                                             for t in one["threads"]]
        assert [t["repeats"] for t in d["threads"]] == [t["repeats"] for t in one["threads"]]


def test_command_line_table_and_refusals(machine):
    r = run_cli("omp", "examples/omp/dot_thread0.c", "-m", machine, "-D", "N=1000:5000:1000", "--threads", "1:3")
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines()[2:7]]
    assert [row[0] for row in rows] == ["1000", "2000", "3000", "4000", "5000"] and all(len(row) == 5 for row in rows)
    measured = run_cli("omp", "examples/omp/dot_thread0.c", "-m", machine, "-D", "N=1000:2000:1000", "--measure")
    assert measured.returncode != 0 and "--measure runs the program at one size" in measured.stderr
    plotted = run_cli("omp", "examples/omp/dot_thread0.c", "-m", machine, "-D", "N=1000:2000:1000", "--plot", "x.png")
    assert plotted.returncode != 0 and "--plot" in plotted.stderr


def test_python_api_gives_a_row_per_size_and_thread_count(machine):
    df = loopmodel.omp_sweep("examples/omp/cg_banded.c", machine, {"N": range(1000, 2001, 500)}, threads=[1, 2])
    assert list(df.columns[:4]) == ["N", "threads", "total_time_s", "speedup"] and df.shape == (6, 4 + 18)
    model = load_machine(machine)
    for n in (1000, 1500, 2000):
        want = _per_size("examples/omp/cg_banded.c", model, {"N": n}, [1, 2])
        got = df[df["N"] == n]
        assert got["total_time_s"].tolist() == [w[1] for w in want]
        assert got.iloc[1, 4:].tolist() == list(want[1][3])
    with pytest.raises(loopmodel.ApiTypeError):
        loopmodel.omp_sweep("examples/omp/cg_banded.c", machine, {"N": 1000}, threads=["1"])
