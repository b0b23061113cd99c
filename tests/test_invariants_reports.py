"""Invariants of what loopmodel reports and how: the coherence model's per-line MESI states
against a brute-force simulation, the API's JSON against the CLI's, every printed figure of
the text report in the JSON, and every note of the text in the JSON.

Seeded (``derandomize``) hypothesis tests over random kernels (:mod:`kernel_strategies`), the
bundled machines and random sizes; the CLI is run in subprocesses, a few per test.
"""
from __future__ import annotations

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
    import pytest

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
