"""Invariants of what loopmodel reports and how: the coherence model's per-line MESI states
against a brute-force simulation, the API's JSON against the CLI's, every printed figure of
the text report in the JSON, and every note of the text in the JSON.

Seeded (``derandomize``) hypothesis tests over random kernels (:mod:`kernel_strategies`), the
bundled machines and random sizes; the CLI is run in subprocesses, a few per test.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_strategies import PROPERTY_SETTINGS

from loopmodel.models.coherence import Chunk, ChunkStates, Statement, phase_time

# ---------------------------------------------------------------- coherence: states per cache line

#: seconds per byte of each transition (distinct, so a misclassified byte changes the shares)
RATE = {"L I": 1.0, "S I": 2.0, "L M own": 0.1, "L E own": 0.11, "L S own": 0.12, "S M own": 0.13,
        "S E own": 0.14, "S S own": 0.15, "L M other": 3.0, "L E other": 2.5, "L S other": 1.5,
        "S M other": 4.0, "S E other": 3.5, "S S other": 3.3}


def _linear(key, stride, size, threads):
    return RATE[key] * size


def _mesi(line_state, kind: str, t: int) -> tuple:
    """One thread's access to one line, by the MESI rules of benchmark-based-coherence-model.txt
    Fig. 2, written out: ``(benchmark key, state after)``; a state is ``(letter, holders)``."""
    letter, holders = line_state
    key = f"{kind} I" if letter == "I" else f"{kind} {letter} {'own' if t in holders else 'other'}"
    if kind == "S":
        return key, ("M", frozenset({t}))
    if letter == "I":
        return key, ("E", frozenset({t}))
    if letter in "ME" and holders == {t}:
        return key, line_state
    return key, ("S", holders | {t})


def _brute_force(phases, line: int) -> tuple:
    """Per phase, transition key -> seconds, and the final line -> state, simulated element by
    element on a dictionary of lines: each thread's chunk in program order (statements, then
    threads 0, 1, ...), each line it touches once, in ascending order, its bytes those of the
    elements that begin in it."""
    lines: dict = {}
    out = []
    for statements in phases:
        secs: dict = {}
        for st_ in statements:
            for t, c in st_.chunks.items():
                touched: dict = {}
                for x in range(c.start, c.stop, c.step):
                    first, last = x * c.element_size // line, ((x + 1) * c.element_size - 1) // line
                    for k in range(first, last + 1):
                        touched[k] = touched.get(k, 0) + (c.element_size if k == first else 0)
                for k in sorted(touched):
                    key, lines[(c.array, k)] = _mesi(lines.get((c.array, k), ("I", frozenset())),
                                                     "S" if st_.kind == "write" else "L", t)
                    if touched[k]:
                        secs[key] = secs.get(key, 0.0) + RATE[key] * touched[k]
        out.append(secs)
    return out, lines


@st.composite
def _chunks(draw, threads: int, length: int, element_size: int, array: str):
    """thread -> Chunk of one statement: contiguous blocks, interleaved elements (t::T),
    strided blocks, or random triplets (overlapping ones included)."""
    kind = draw(st.sampled_from(("blocks", "interleaved", "strided", "random")))
    out = {}
    for t in range(threads):
        if kind == "blocks":
            lo, hi = length * t // threads, length * (t + 1) // threads
            start, stop, step = lo, hi, 1
        elif kind == "interleaved":
            start, stop, step = t, length, threads
        elif kind == "strided":
            step = draw(st.sampled_from((2, 3, 8, 16, 17, 40)))
            start, stop, step = t * draw(st.integers(0, 8)), length, step
        else:
            start = draw(st.integers(0, length - 1))
            stop = draw(st.integers(start + 1, length))
            step = draw(st.integers(1, 20))
        if start < stop and draw(st.integers(0, 9)):  # now and then a thread without work
            out[t] = Chunk(array, start, stop, step, element_size)
    return out


@st.composite
def _programs(draw):
    """``(threads, line size, phases)``: 1-4 threads, 64 or 128 B lines, two arrays (float or
    double), 1-4 phases of 1-3 statements each."""
    threads = draw(st.integers(1, 4))
    line = draw(st.sampled_from((64, 128)))
    arrays = {name: (draw(st.sampled_from((4, 8))), draw(st.integers(1, 200))) for name in ("a", "b")}
    phases = []
    for _ in range(draw(st.integers(1, 4))):
        statements = []
        for _ in range(draw(st.integers(1, 3))):
            name = draw(st.sampled_from(sorted(arrays)))
            size, length = arrays[name]
            chunks = draw(_chunks(threads, length, size, name))
            statements.append(Statement(draw(st.sampled_from(("read", "write"))), chunks))
        phases.append(statements)
    return threads, line, phases


@settings(PROPERTY_SETTINGS, max_examples=500)
@given(_programs())
def test_phase_shares_equal_a_per_line_mesi_simulation(program):
    """Invariant: per phase, the transitions' shares of the time sum to 1 and equal those of a
    brute-force per-cache-line MESI simulation; after the last phase every line of every array
    is in the state the simulation gives it (chunks of several threads that share a line
    share its state)."""
    threads, line, phases = program
    expected, final = _brute_force(phases, line)
    states = ChunkStates()
    for statements, want in zip(phases, expected):
        ph = phase_time(statements, states, _linear, _linear, threads, line)
        states = ph.states
        total = sum(ph.transitions.values())
        assert set(ph.transitions) == set(want)
        if total:
            shares = {k: v / total for k, v in ph.transitions.items()}
            assert sum(shares.values()) == pytest.approx(1.0)
            assert shares == pytest.approx({k: v / sum(want.values()) for k, v in want.items()})
    for (array, k), (letter, holders) in final.items():
        got = states.state_at(array, k)
        assert (got.state, got.threads) == (letter, holders), (array, k)
    assert all(states.state_at(a, k + 1).state == "I" for a, k in final if (a, k + 1) not in final)


# ---------------------------------------------------------------- every note of the text is in the JSON

#: command -> argument lists (bundled inputs that run fast; the measuring commands measure a tiny
#: kernel a few times); ``{coherence}``: a machine file with a made-up coherence table
NOTE_CASES = {
    "analyze-sim": ["analyze", "examples/kernels/3d-7pt.c", "-m", "Zen_EPYC-7451", "-D", "N=100", "-D", "M=100",
                    "-P", "sim", "--incore", "analytic", "--cores", "4"],
    "analyze-yaml": ["analyze", "examples/kernels/daxpy.yml", "-m", "SkylakeSP_Gold-6148", "-D", "N=1000"],
    "analyze-range": ["analyze", "examples/kernels/dot.c", "-m", "Zen_EPYC-7451", "-D", "N=1000:3000:1000",
                      "--incore", "analytic"],
    "scaling": ["scaling", "examples/kernels/daxpy.yml", "-m", "SkylakeSP_Gold-6148", "-D", "N=10000000", "-c", "1:4"],
    "app": ["app", "examples/pcg/pcg.yml", "-m", "SkylakeSP_Gold-6148", "-c", "1,2", "--incore", "analytic"],
    "energy": ["energy", "examples/kernels/triad.c", "-m", "SandyBridgeEP_E5-2680", "-D", "N=10000000",
               "--w0", "23.6 W", "--w1", "1.9 W/GHz", "--w2", "1.2 W/GHz^2", "--incore", "analytic"],
    "omp": ["omp", "examples/omp/dot_thread0.c", "-m", "{coherence}", "-D", "N=100000"],
    "omp-yaml": ["omp", "examples/omp/dot_mkl.yml", "-m", "{coherence}"],
    "bench": ["bench", "examples/kernels/daxpy.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=1000", "--repeat", "3"],
    "validate": ["validate", "examples/kernels/daxpy.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=1000", "--repeat", "3"],
    "roofline": ["roofline", "examples/kernels/daxpy.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=1000", "--repeat", "3"],
    "measure": ["measure", "triad", "--threads", "1", "--size", "8 MiB", "-r", "1", "--min-time", "0.01"],
}
MEASURING = ("bench", "validate", "roofline", "measure")


def _json_commands() -> set:
    """The commands whose help offers ``--json``."""
    import argparse

    from loopmodel.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {name for name, p in sub.choices.items() if any("--json" in a.option_strings for a in p._actions)}


def test_note_cases_cover_every_command_with_json():
    assert {case.split("-")[0] for case in NOTE_CASES} == _json_commands()


def _text_notes(text: str) -> list:
    """The ``note: ...`` lines of a text report, each with the lines rich wrapped it onto joined
    (up to the next note, hint or blank line), whitespace normalised."""
    notes, current = [], None
    for line in text.splitlines():
        if line.startswith("note: "):
            current = [line[len("note: "):]]
            notes.append(current)
        elif current is not None and line.strip() and not line.startswith(("hint", "plot written")):
            current.append(line)
        else:
            current = None
    return [" ".join(" ".join(n).split()) for n in notes]


def _json_notes(text: str) -> list:
    """The top-level ``notes`` of a JSON document, or of every document of JSON Lines."""
    import json

    try:
        docs = [json.loads(text)]
    except json.JSONDecodeError:
        docs = [json.loads(line) for line in text.splitlines()]
    return [" ".join(n.split()) for d in docs for n in d.get("notes", [])]


@pytest.fixture(scope="module")
def coherence_file(tmp_path_factory):
    from loopmodel.report.json_schema import coherence_machine

    return coherence_machine(str(tmp_path_factory.mktemp("coherence")))


@pytest.mark.parametrize("case", sorted(NOTE_CASES))
def test_every_note_of_the_text_report_is_in_the_json(case, coherence_file):
    """Invariant: for every command with ``--json``, each ``note:`` line the text report prints
    (stdout or stderr) is one of the JSON document's ``notes``."""
    import shutil

    from helpers import ROOT, run_cli_batch

    if case.split("-")[0] in MEASURING and shutil.which("gcc") is None:
        pytest.skip("gcc needed to measure")
    argv = [a.format(coherence=coherence_file) for a in NOTE_CASES[case]]
    runs = run_cli_batch({"text": (argv, ROOT), "json": (argv + ["--json"], ROOT)})
    text, doc = runs["text"], runs["json"]
    assert text.returncode == 0 and doc.returncode == 0, (text.stderr, doc.stderr)
    in_json = _json_notes(doc.stdout)
    missing = [n for n in _text_notes(text.stdout + "\n" + text.stderr) if n not in in_json]
    assert not missing, missing
