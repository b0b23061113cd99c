"""The program model over OpenMP phases (benchmark-based-coherence-model.txt §III): chunk
extraction with static schedules, state tracking across phases, Algorithm 1 per phase, and the
timing lookup from a measured transition table, on hand-computed programs."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopmodel.errors import ModelError
from loopmodel.ir.omp import AffineAccess, LoopBound, OmpArray, OmpProgram, Phase, Repeat
from loopmodel.machine.coherence import TRANSITION_KEYS, CoherenceTable
from loopmodel.models.coherence import Chunk
from loopmodel.models.coherence_timing import Timing
from loopmodel.models.omp_program import phase_statements, predict_program

SIZES = (4096, 65536, 1 << 20)
# bytes/s per transition key: remote misses slow, hits fast, memory slowest
RATE = {k: 20e9 for k in TRANSITION_KEYS}
RATE.update({"L M other": 5e9, "L E other": 8e9, "L I": 4e9, "S I": 2e9, "S M other": 3e9})


def table(threads=(1, 2), overhead=None, drop=()):
    secs = {k: {t: tuple(s / RATE[k] for s in SIZES) for t in threads} for k in TRANSITION_KEYS if k not in drop}
    return CoherenceTable(SIZES, threads, secs, region_overhead=overhead or {})


def acc(array, kind, c=1, off=0, var="i"):
    return AffineAccess(array, kind, ((var, c),), off)


def program(n, init_kind):
    arrays = {"x": OmpArray("x", dims=(n,)), "y": OmpArray("y", dims=(n,))}
    init = Phase(init_kind, (LoopBound("i", 0, n),), (acc("x", "write"), acc("y", "write")), line=3)
    dot = Phase("parallel", (LoopBound("i", 0, n),), (acc("x", "read"), acc("y", "read")), line=6)
    return OmpProgram(arrays, (init, dot))


def test_dot_product_initialised_by_thread_0_vs_first_touch():
    """Hand-computed: n = 16384 doubles (128 KiB per vector). After a sequential init, thread 1
    loads its halves from (M,{0}) at 5 GB/s; thread 0 hits its own at 20 GB/s. With first touch
    both hit."""
    n = 16384
    tm = Timing(table())
    seq = predict_program(program(n, "sequential"), tm, 2)
    init_s = 2 * n * 8 / 2e9                      # thread 0 writes 256 KiB from I at 2 GB/s
    dot_s = n * 8 / 5e9                           # thread 1: 2 x 64 KiB from M other
    assert seq.phases[0].seconds == pytest.approx(init_s)
    assert seq.phases[1].seconds == pytest.approx(dot_s)
    top = seq.phases[1].transitions[0]
    assert top.transition == "L_t from (M,{0})" and top.benchmark == "L M other"
    assert top.share == pytest.approx((n * 8 / 5e9) / (n * 8 / 5e9 + n * 8 / 20e9))
    assert seq.phases[1].hints and "first touch" in seq.phases[1].hints[0]
    ft = predict_program(program(n, "parallel"), tm, 2)
    assert ft.phases[0].seconds == pytest.approx(n * 8 / 2e9)
    assert ft.phases[1].seconds == pytest.approx(n * 8 / 20e9)
    assert ft.phases[1].transitions[0].transition == "L_t from (M,{t})" and not ft.phases[1].hints
    assert ft.total_seconds == pytest.approx(n * 8 / 2e9 + n * 8 / 20e9)


def test_parallel_overhead_is_added_to_parallel_phases_only():
    tm = Timing(table(overhead={1: 1e-7, 2: 1e-6}))
    p = predict_program(program(1000, "sequential"), tm, 2)
    assert p.phases[0].overhead_seconds == 0 and p.phases[1].overhead_seconds == 1e-6


def test_chunks_with_remainders_offsets_and_master():
    """Static schedule of 10 iterations on 3 threads: 4, 3, 3; reads of a[i-1] and a[i+1]
    merge to one chunk per thread; a master phase puts everything on thread 0."""
    arrays = {"a": OmpArray("a", dims=(12,)), "b": OmpArray("b", dims=(12,))}
    ph = Phase("parallel", (LoopBound("i", 1, 11),),
               (acc("a", "read", off=-1), acc("a", "read", off=1), acc("b", "write")))
    prog = OmpProgram(arrays, (ph,))
    reads, writes = phase_statements(prog, ph, 3)
    assert reads.kind == "read" and writes.kind == "write"
    assert reads.chunks == {0: Chunk("a", 0, 6), 1: Chunk("a", 4, 9), 2: Chunk("a", 7, 12)}
    assert writes.chunks == {0: Chunk("b", 1, 5), 1: Chunk("b", 5, 8), 2: Chunk("b", 8, 11)}
    m = Phase("master", ph.loops, ph.accesses)
    (r, w) = phase_statements(prog, m, 3)
    assert r.chunks == {0: Chunk("a", 0, 12)} and w.chunks == {0: Chunk("b", 1, 11)}


def test_two_dimensional_rows_and_strided_columns():
    """a[i][j] of a 4 x 8 array, rows shared among 2 threads; a column walk a[j][i] gives a
    strided triplet (step 8)."""
    arrays = {"a": OmpArray("a", dims=(4, 8))}
    loops = (LoopBound("i", 0, 4), LoopBound("j", 0, 8))
    rows = Phase("parallel", loops, (AffineAccess("a", "read", (("i", 8), ("j", 1))),))
    (st,) = phase_statements(OmpProgram(arrays, (rows,)), rows, 2)
    assert st.chunks == {0: Chunk("a", 0, 16), 1: Chunk("a", 16, 32)}
    cols = Phase("parallel", (LoopBound("i", 0, 8), LoopBound("j", 0, 4)),
                 (AffineAccess("a", "read", (("i", 1), ("j", 8))),))
    (st,) = phase_statements(OmpProgram(arrays, (cols,)), cols, 2)
    assert st.chunks[0] == Chunk("a", 0, 28, 1) and st.chunks[1] == Chunk("a", 4, 32, 1)
    one = Phase("sequential", (LoopBound("j", 0, 4),), (AffineAccess("a", "read", (("j", 8),)),))
    (st,) = phase_statements(OmpProgram(arrays, (one,)), one, 2)
    assert st.chunks == {0: Chunk("a", 0, 25, 8)} and st.chunks[0].size == 4 * 8


def test_repeats_carry_the_state_between_iterations():
    """A repeated parallel update y = 2x after a sequential init: iteration 0 reads x from
    (M,{0}) (thread 1 misses) and writes y from I; iteration 1 finds x shared and y owned."""
    n = 8192
    arrays = {"x": OmpArray("x", dims=(n,)), "y": OmpArray("y", dims=(n,))}
    init = Phase("sequential", (LoopBound("i", 0, n),), (acc("x", "write"),))
    upd = Phase("parallel", (LoopBound("i", 0, n),), (acc("x", "read"), acc("y", "write")))
    p = predict_program(OmpProgram(arrays, (init, Repeat(2, (upd,), line=5))), Timing(table()), 2)
    half = n // 2 * 8
    ws = 2 * half
    first = max(ws / 5e9 * half / ws, ws / 2e9 * half / ws)    # thread 1: L M other, S I
    second = max(ws / 20e9 * half / ws, ws / 20e9 * half / ws)  # L S own, S M own
    assert [ph.iteration for ph in p.phases] == [None, 0, 1]
    assert p.repeats[0].seconds == (pytest.approx(first), pytest.approx(second))


def test_timing_interpolates_sizes_and_threads_and_falls_back():
    t = table(threads=(1, 4), drop=("L S other",))
    tm = Timing(t)
    assert tm.seconds("L I", 8, 4096, 1) == pytest.approx(4096 / 4e9)
    assert tm.seconds("L I", 8, 2048, 1) == pytest.approx(2048 / 4e9)        # below: same B/s
    assert tm.seconds("L I", 8, 1 << 22, 1) == pytest.approx((1 << 22) / 4e9)  # above: plateau
    assert tm.seconds("L I", 8, 20000, 2) == pytest.approx(20000 / 4e9)      # between T: linear
    assert tm.seconds("L I", 64, 4096, 1) == pytest.approx(8 * 4096 / 4e9)   # stride: line footprint
    assert tm.key_for("L S other") == "L E other"
    with pytest.raises(ModelError, match="1..4 threads"):
        tm.seconds("L I", 8, 4096, 5)
    with pytest.raises(ModelError, match="no timing"):
        Timing(table(drop=("L S other", "L E other"))).seconds("L S other", 8, 4096, 1)


def test_log_interpolation_between_sizes():
    secs = {"L I": {1: (4096 / 4e9, 65536 / 8e9, (1 << 20) / 8e9)}}
    tm = Timing(CoherenceTable(SIZES, (1,), secs))
    # midway in log2 between 4 KiB (4 GB/s) and 64 KiB (8 GB/s): time per byte is the mean
    assert tm.seconds("L I", 8, 16384, 1) == pytest.approx(16384 * (1 / 4e9 + 1 / 8e9) / 2)


def test_fallback_is_noted_in_the_prediction():
    """Thread 1 reads part of the last third, shared by threads 0 and 2 after the first
    parallel read: 'L S other', which this table lacks (a 2-CPU host cannot set it up), is timed
    as 'L E other' and the prediction says so."""
    n = 9 * 512
    arrays = {"x": OmpArray("x", dims=(n,))}
    w = Phase("sequential", (LoopBound("i", 0, n),), (acc("x", "write"),))
    r1 = Phase("parallel", (LoopBound("i", 0, n),), (acc("x", "read"),))
    r2 = Phase("parallel", (LoopBound("i", 0, n - n // 3),), (acc("x", "read", off=n // 3),))
    p = predict_program(OmpProgram(arrays, (w, r1, r2)), Timing(table(threads=(1, 2, 3), drop=("L S other",))), 3)
    assert {t.benchmark for t in p.phases[1].transitions} == {"L M own", "L M other"}
    assert "L S other" in {t.benchmark for t in p.phases[2].transitions}
    assert p.notes == ("'L S other' was not measured on this host; timed as 'L E other'",)
    full = predict_program(OmpProgram(arrays, (w, r1, r2)), Timing(table(threads=(1, 2, 3))), 3)
    assert not full.notes


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6), st.integers(0, 5), st.integers(1, 7), st.integers(1, 3),
       st.integers(-3, 3), st.integers(0, 3), st.integers(0, 4), st.integers(1, 5))
def test_chunks_cover_every_touched_element(lo, extra, inner, step, ci, cj, off, threads):
    """Property: for any 2-deep affine access, each thread's chunk (bounding triplet) contains
    every flat index the thread touches under schedule(static), on the triplet's lattice, and
    the threads' iterations are exactly the loop's (brute force)."""
    hi = lo + extra
    ci = ci or 1
    loops = (LoopBound("i", lo, hi, step), LoopBound("j", 0, inner))
    access = AffineAccess("a", "read", (("i", ci), ("j", cj)), off + 40)
    arrays = {"a": OmpArray("a", dims=(200,))}
    ph = Phase("parallel", loops, (access,))
    stmts = phase_statements(OmpProgram(arrays, (ph,)), ph, threads)
    values = list(range(lo, hi, step))
    if not values:
        assert stmts == []
        return
    from loopmodel.models.coherence import static_schedule
    sched = static_schedule(0, len(values), threads)
    (st_,) = stmts
    assert set(st_.chunks) == set(sched)
    for t, (a, b) in sched.items():
        c = st_.chunks[t]
        for i in values[a:b]:
            for j in range(inner):
                idx = ci * i + cj * j + off + 40
                assert c.start <= idx < c.stop and (idx - c.start) % c.step == 0


def test_in_core_time_of_reductions_with_and_without_simd():
    """The dot's loop on SkylakeSP (ADD latency 4 cy, FMA 4 cy; gcc -march=skylake-avx512 prefers
    256-bit vectors: 4 double lanes): without simd the reduction is kept in source order, 4 cy/it;
    with simd gcc keeps one vector accumulator: an FMA chain of 4 cy per 4 iterations, 1.0 cy/it;
    a YAML phase has no code."""
    from loopmodel.fileio.machine_files import load_machine
    from loopmodel.fileio.omp_program import parse_omp_c, parse_omp_yaml
    from loopmodel.workflows.omp import phase_core_seconds

    m = load_machine("SkylakeSP_Gold-6148")
    assert m.in_core.latency["ADD"] == 4 and m.in_core.latency["FMA"] == 4
    src = ("double x[1000], y[1000];\ndouble s;\n#pragma omp parallel for {simd}reduction(+:s)\n"
           "for (int i = 0; i < 1000; ++i) s += x[i] * y[i];\n")
    plain = parse_omp_c(src.format(simd=""), "dot.c")
    vec = parse_omp_c(src.format(simd="simd "), "dot.c")
    (cp,), notes_p = phase_core_seconds(plain, m)[0].values(), phase_core_seconds(plain, m)[1]
    (cv,), notes_v = phase_core_seconds(vec, m)[0].values(), phase_core_seconds(vec, m)[1]
    assert cp * m.clock == pytest.approx(4.0) and cv * m.clock == pytest.approx(1.0)
    assert not notes_p and "one vector accumulator" in notes_v[0]
    yml = parse_omp_yaml("arrays: {x: {length: 10}}\nphases:\n  - name: r\n    kind: parallel\n"
                         "    loops: [{var: i, lo: 0, hi: 10}]\n    accesses: [{array: x, kind: read, index: i}]\n",
                         "p.yml")
    core, notes = phase_core_seconds(yml, m)
    assert list(core.values()) == [None] and "no C code" in notes[0]


def test_item_slices_number_the_executed_phases():
    """A phase, a repeat of 2 phases x 3 iterations, a phase: executed phases 0, 1..6, 7."""
    ph = Phase("sequential", (LoopBound("i", 0, 4),), (acc("x", "read"),))
    prog = OmpProgram({"x": OmpArray("x", dims=(4,))}, (ph, Repeat(3, (ph, ph)), ph))
    assert [s for _, s in prog.item_slices()] == [((0, 1),), ((1, 3), (3, 5), (5, 7)), ((7, 8),)]
    assert sum(1 for _ in prog.phases()) == 8 and OmpArray("a", dims=(2, 3)).declarator == "a[2][3]"


@pytest.mark.parametrize("change,words", [
    ({"threads": (1, 10 ** 9)}, "1 .. 4096"),
    ({"sizes": (4096, 2 ** 50)}, "1 TiB"),
    ({"seconds": {"L I": {1: (float("inf"),) * 2}}}, "at most 10000 s"),
    ({"element_size": 10 ** 9}, "element size"),
])
def test_coherence_table_quantities_are_physical(change, words):
    base = {"sizes": (4096, 8192), "threads": (1,), "seconds": {"L I": {1: (1e-6, 2e-6)}}}
    with pytest.raises(ValueError) as exc:
        CoherenceTable(**{**base, **change})
    assert words in str(exc.value)


_PHASE_POOL = [
    ("sequential", "x", "write", 0, 64), ("parallel", "x", "read", 0, 64), ("parallel", "y", "write", 0, 64),
    ("master", "y", "read", 8, 40), ("parallel", "x", "write", 16, 48), ("single", "x", "write", 0, 32),
    ("parallel", "y", "read", 0, 64),
]


def _pool_phase(k: int, line: int) -> Phase:
    kind, array, what, lo, hi = _PHASE_POOL[k]
    return Phase(kind, (LoopBound("i", lo, hi),), (acc(array, what),), line=line)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(pre=st.lists(st.integers(0, len(_PHASE_POOL) - 1), max_size=2),
       body=st.lists(st.integers(0, len(_PHASE_POOL) - 1), min_size=1, max_size=3),
       count=st.integers(0, 9), threads=st.sampled_from([1, 2]))
def test_a_repeat_predicts_as_its_unrolled_iterations(pre, body, count, threads):
    """Copying the iterations after the chunk states recur gives exactly what simulating every
    iteration of the unrolled program gives (times, transitions, states after the repeat)."""
    arrays = {"x": OmpArray("x", dims=(64,)), "y": OmpArray("y", dims=(64,))}
    first = tuple(_pool_phase(k, 1 + j) for j, k in enumerate(pre))
    loop = tuple(_pool_phase(k, 10 + j) for j, k in enumerate(body))
    after = (_pool_phase(1, 20), _pool_phase(6, 21))
    tm = Timing(table())
    rolled = predict_program(OmpProgram(arrays, first + (Repeat(count, loop, line=9),) + after), tm, threads)
    unrolled = predict_program(OmpProgram(arrays, first + loop * count + after), tm, threads)
    assert [(p.seconds, p.transitions, p.line) for p in rolled.phases] == \
        [(p.seconds, p.transitions, p.line) for p in unrolled.phases]
    assert rolled.total_seconds == unrolled.total_seconds
    its = [p.iteration for p in rolled.phases[len(first):len(first) + len(loop) * count]]
    assert its == [k for k in range(count) for _ in loop]


def test_a_huge_repeat_is_refused_in_one_line(tmp_path):
    """A repeat of 10**12 iterations is refused at once, naming the repeat's line."""
    from loopmodel.errors import KernelError
    from loopmodel.fileio.omp_program import MAX_EXECUTED_PHASES, read_omp_program

    path = tmp_path / "p.yml"
    path.write_text("arrays: {x: {length: 1000, type: double}}\nphases:\n"
                    "  - {name: init, kind: sequential, loops: [{var: i, lo: 0, hi: 1000}],\n"
                    "     accesses: [{array: x, kind: write, index: i}]}\n"
                    "  - repeat: 1000000000000\n    phases:\n"
                    "      - {name: dot, kind: parallel, loops: [{var: i, lo: 0, hi: 1000}],\n"
                    "         accesses: [{array: x, kind: read, index: i}]}\n")
    with pytest.raises(KernelError) as exc:
        read_omp_program(str(path))
    assert str(exc.value).startswith(f"{path}:5: the repeat loop runs 1000000000000 iterations")
    assert str(MAX_EXECUTED_PHASES) in str(exc.value)
    c = tmp_path / "p.c"
    c.write_text("#define N 1000\ndouble x[N];\nfor (int it = 0; it < 1000000000000; ++it) {\n"
                 "#pragma omp parallel for schedule(static)\nfor (int i = 0; i < N; ++i)\n    x[i] = 1.0;\n}\n")
    with pytest.raises(KernelError) as exc:
        read_omp_program(str(c))
    assert str(exc.value).startswith(f"{c}:3: the repeat loop runs 1000000000000 iterations")


@pytest.mark.parametrize("op,ok", [("^", False), ("&", False), ("|", False), ("&&", True), ("||", True),
                                   ("max", True), ("+", True), ("foo", False)])
def test_reduction_identifiers(tmp_path, op, ok):
    """OpenMP's bitwise reductions need an integer item; a double with ^ & | is refused (file:line)."""
    from loopmodel.errors import KernelError
    from loopmodel.fileio.omp_program import read_omp_program

    c = tmp_path / "r.c"
    c.write_text(f"#define N 1000\ndouble x[N];\ndouble s;\nint k;\n#pragma omp parallel for reduction({op}:s) "
                 "schedule(static)\nfor (int i = 0; i < N; ++i)\n    s += x[i];\n")
    if ok:
        read_omp_program(str(c))
        return
    with pytest.raises(KernelError) as exc:
        read_omp_program(str(c))
    assert str(exc.value).startswith(f"{c}:5: clause 'reduction({op}:s)'")
    if op != "foo":
        assert "double 's'" in str(exc.value)
        c.write_text(c.read_text().replace(f"reduction({op}:s)", f"reduction({op}:k)").replace("s += x[i]", "k += 1"))
        read_omp_program(str(c))


def test_interleaved_chunks_are_false_sharing_and_the_hint_says_so():
    """Threads t = 0, 1 write and re-read a[2*j + t] (interleaved doubles): every line is in
    both threads' chunks; the re-read is a miss on lines the other thread holds modified,
    and the hint names false sharing, not first touch."""
    arrays = {"a": OmpArray("a", dims=(1024,))}
    loops = (LoopBound("t", 0, 2), LoopBound("j", 0, 512))
    access = (("t", 1), ("j", 2))
    init = Phase("parallel", loops, (AffineAccess("a", "write", access),), line=3)
    reread = Phase("parallel", loops, (AffineAccess("a", "read", access),), line=7)
    p = predict_program(OmpProgram(arrays, (init, reread), source="fs.c"), Timing(table()), 2)
    top = p.phases[1].transitions[0]
    assert top.benchmark == "L M other" and top.transition == "L_t from (M,{1})"
    (hint,) = p.phases[1].hints
    assert "share cache lines (100 % of the lines the phase touches; false sharing)" in hint
    assert "first touch" not in hint


def test_a_chunk_over_too_many_lines_is_refused_naming_the_phase():
    from loopmodel.models.coherence import MAX_CHUNK_RUNS

    n = MAX_CHUNK_RUNS + 1
    arrays = {"a": OmpArray("a", dims=(16 * n,))}
    ph = Phase("sequential", (LoopBound("i", 0, n),), (acc("a", "read", 16),), line=5)
    with pytest.raises(ModelError) as exc:
        predict_program(OmpProgram(arrays, (ph,), source="sparse.c"), Timing(table()), 1)
    assert str(exc.value).startswith(f"sparse.c:5: a chunk of 'a' touches {n} separate cache lines (stride 128 B)")
