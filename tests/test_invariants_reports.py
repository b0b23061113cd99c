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
    "compare": ["compare", "examples/kernels/dot.c", "-m", "SkylakeSP_Gold-6148", "-m", "Zen_EPYC-7451", "-D",
                "N=10000000", "--incore", "analytic"],
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
    from json_samples import coherence_machine

    return coherence_machine(str(tmp_path_factory.mktemp("coherence")))


@pytest.mark.parametrize("case", sorted(NOTE_CASES))
def test_every_note_of_the_text_report_is_in_the_json(case, coherence_file):
    """Invariant: for every command with ``--json``, each ``note:`` line the text report prints
    (stdout or stderr) is one of the JSON document's ``notes``."""
    import shutil

    from helpers import ROOT, run_cli, run_cli_batch

    if case.split("-")[0] in MEASURING and shutil.which("gcc") is None:
        pytest.skip("gcc needed to measure")
    argv = [a.format(coherence=coherence_file) for a in NOTE_CASES[case]]
    if case.split("-")[0] in MEASURING:  # one measurement: the JSON run reads the text run's from the cache
        text, doc = run_cli(*argv, cwd=ROOT), run_cli(*argv, "--json", cwd=ROOT)
    else:
        runs = run_cli_batch({"text": (argv, ROOT), "json": (argv + ["--json"], ROOT)})
        text, doc = runs["text"], runs["json"]
    assert text.returncode == 0 and doc.returncode == 0, (text.stderr, doc.stderr)
    in_json = _json_notes(doc.stdout)
    missing = [n for n in _text_notes(text.stdout + "\n" + text.stderr) if n not in in_json]
    assert not missing, missing


# ---------------------------------------------------------------- the API's JSON, the CLI's JSON and its text

from kernel_strategies import MACHINES, kernels, sizes  # noqa: E402


def _half_up(value: float, digits: int) -> str:
    """``value`` rounded half up at ``digits`` decimals from its shortest decimal form (what the
    JSON prints), written out independently of loopmodel's own formatting."""
    from decimal import ROUND_HALF_UP, Decimal

    return f"{Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP):f}"


def _near(printed: str, value, digits: int | None = None, sig: int | None = None) -> bool:
    """``printed`` is ``value`` at the printed precision: within half a unit of its last
    printed digit (``digits`` decimals, or ``sig`` significant digits)."""
    import math

    if value is None or isinstance(value, str):
        return False
    p = float(printed)
    if sig is not None:
        digits = sig - 1 - math.floor(math.log10(abs(value))) if value else 0
    return abs(p - value) <= 0.5 * 10.0 ** -digits * (1 + 1e-9) + 1e-12 * abs(value)


_SI = {"T": 1e12, "G": 1e9, "M": 1e6, "k": 1e3, "": 1.0}


def _si(text: str) -> tuple:
    """``'25.39 GFLOP/s'`` -> ``(25.39, 1e9, 'FLOP/s')``."""
    number, unit = text.split()
    prefix = unit[0] if unit[0] in "TGMk" and unit[1:] in ("FLOP/s", "it/s", "B/s") else ""
    return float(number), _SI[prefix], unit[len(prefix):]


def _table(text: str, title: str, strip: bool = True) -> list:
    """The body rows (lists of stripped cells; with ``strip`` False the first cell keeps its
    indentation) of the rich table whose title starts ``title``."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(title)), None)
    if start is None:
        return []
    rows, body = [], False
    for line in lines[start + 1:]:
        if line.startswith("┡"):
            body = True
        elif line.startswith("└"):
            break
        elif body and line.startswith("│"):
            cells = [c[1:].rstrip() for c in line.strip("│").split("│")]  # the padding space on the left
            rows.append([c.strip() if strip or k else c for k, c in enumerate(cells)])
    return rows


def _check_ecm(text: str, ecm: dict) -> int:
    """The ECM tuple, the prediction tuple and the ECM table against the JSON (tuples at one
    decimal, the table at two, both rounded half up); returns how many figures were checked."""
    def fig(v, digits):
        return "n/a" if v is None else _half_up(v, digits)

    lines = text.splitlines()
    tuple_line = next(line for line in lines if line.startswith("{ ") and "||" in line)
    ol, rest = tuple_line[2:-len(" } cy/CL")].split(" || ")
    printed = [ol, *rest.split(" | ")]
    want = [ecm["T_OL_cy_per_cl"], ecm["T_nOL_cy_per_cl"], *(c["time_cy_per_cl"] for c in ecm["contributions"])]
    assert printed == [fig(v, 1) for v in want], (tuple_line, want)
    pred_line = next(line for line in lines if line.startswith("{ ") and " \\ " in line)
    levels = list(ecm["T_ECM_cy_per_cl"])
    assert pred_line == "{ " + " \\ ".join(fig(ecm["T_ECM_cy_per_cl"][lv], 1) for lv in levels) + " } cy/CL"
    (row,) = _table(text, "ECM prediction, ")
    assert row == [f"{fig(ecm['T_ECM_cy_per_cl'][lv], 2)} cy/CL" if ecm["T_ECM_cy_per_cl"][lv] is not None
                   else "n/a" for lv in levels]
    multi = next((line for line in lines if " cores, data in " in line), None)
    if multi is not None:  # --cores n: the aggregate figure
        assert multi.split(": ")[1].split()[0] == fig(ecm["multicore_cy_per_cl"], 2), multi
        assert f"data in {ecm['data_location']}:" in multi, multi
    return len(want) + 2 * len(levels) + (multi is not None)


def _check_traffic(text: str, traffic: list) -> int:
    rows = _table(text, "Data traffic per CL of work")
    keys = ("loads_cl_per_cl", "stores_cl_per_cl", "volume_B_per_cl", "hits_cl_per_cl", "misses_cl_per_cl",
            "evicts_cl_per_cl")
    assert len(rows) == len(traffic)
    n = 0
    for row, lt in zip(rows, traffic):
        assert row[0].startswith(f"{lt['level']}-")
        for cell, key in zip(row[1:], keys):
            assert _near(cell, lt[key], sig=4), (row, key, lt[key])
            n += 1
    return n


def _check_roofline(text: str, roof: dict, flops: bool) -> int:
    rows = _table(text, "Bottlenecks (")
    cpu, levels = rows[0], rows[1:]
    n = 0
    if cpu[2] != "n/a":
        value, scale, unit = _si(cpu[2])
        key = {"FLOP/s": "cpu_performance_flop_s", "it/s": "cpu_performance_it_s"}[unit]
        assert roof.get(key) is not None and _near(f"{value}", roof[key] / scale, 2), (cpu, roof)
        n += 1
    assert len(levels) == len(roof["levels"])
    for row, lv in zip(levels, roof["levels"]):
        assert row[0] == lv["level"] and row[4] == lv["bandwidth_kernel"]
        if lv["intensity_flop_per_B"] is not None:
            assert _near(row[1].split()[0], lv["intensity_flop_per_B"], sig=3), (row, lv)
        if row[2] != "no traffic":
            value, scale, unit = _si(row[2])
            key = "performance_flop_s" if flops else "performance_it_s"
            assert unit == ("FLOP/s" if flops else "it/s") and _near(f"{value}", lv[key] / scale, 2), (row, lv)
        value, scale, _ = _si(row[3])
        assert _near(f"{value}", lv["bandwidth_B_s"] / scale, 2), (row, lv)
        n += 3
    return n


def _check_lc(text: str, layer_conditions: list) -> int:
    """The whole-data-set limits (``L1: N <= 3   (exact 3.05)``) against the JSON."""
    import re

    lines = text.splitlines()
    if "Whole data set (repeated sweeps):" not in lines:
        return 0
    start = lines.index("Whole data set (repeated sweeps):") + 1
    by_level = {lc["level"]: lc.get("whole_data_set") for lc in layer_conditions}
    n = 0
    for line in lines[start:]:
        m = re.match(r"  (\w+): \w+ <= (\d+)\s+\(exact ([\d.]+)\)$", line)
        if not m:
            break
        whole = by_level[m.group(1)]
        assert float(m.group(2)) == whole["largest_size"] and _near(m.group(3), whole["max_size_exact"], 2)
        n += 2
    return n


def _check_verbose(text: str, incore: dict, ecm: dict) -> int:
    """The ``-v`` lines: the in-core components, each transfer's line and the contributions per
    data location against the JSON (two decimals rounded half up where loopmodel rounds so,
    else at the printed precision)."""
    import re

    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("in-core ("))
    head = " ".join(" ".join(lines[start:start + 3]).split()).split(" cy/CL")[0]  # rich may wrap it
    m = re.match(r"in-core \((\S+), (\d+) SIMD lanes\): (.*)$", head)
    assert m and int(m.group(2)) == incore["simd_lanes"], head
    comps = dict(part.split(" = ") for part in m.group(3).split(", "))
    assert comps == {k: _half_up(v, 2) for k, v in incore["components_cy_per_cl"].items()}
    n = len(comps)
    for c in ecm["contributions"]:
        at = next(i for i, line in enumerate(lines) if line.startswith(f"  T_{c['name']} = "))
        end = next(i for i in range(at + 1, len(lines) + 1)
                   if i == len(lines) or lines[i].startswith(("  T_", "Contributions", "{ ")))
        line = " ".join(" ".join(lines[at:end]).split())  # rich may wrap it
        m = re.match(r"T_\w+ = (\S+) cy/CL \((\S+) B in, (\S+) B out at (\S+) B/cy from .*; penalty (\S+) cy\)$",
                     line)
        assert m, line
        assert m.group(1) == _half_up(c["time_cy_per_cl"], 2) and m.group(5) == _half_up(c["penalty_cy_per_cl"], 2)
        assert _near(m.group(2), c["in_B_per_cl"], sig=6) and _near(m.group(3), c["out_B_per_cl"], sig=6)
        assert all(_near(b, v, 1) for b, v in zip(m.group(4).split("+"), c["bandwidth_B_per_cy"], strict=True))
        n += 5
    rows = {r[0]: r[1:] for r in _table(text, "Contributions per data location", strip=False)}
    for j, (level, loc) in enumerate(ecm["by_location"].items()):
        want = {"T_OL (T_comp)": ecm["T_OL_cy_per_cl"], "T_nOL (T_LD/ST)": ecm["T_nOL_cy_per_cl"],
                "T_ECM": loc["T_ECM_cy_per_cl"]}
        for c in loc["contributions"]:  # the transfer time and, in a row of its own, the penalty
            want[f"T_{c['name']}"] = c["busy_cy_per_cl"]
            if f"  penalty {c['name']}" in rows:
                want[f"  penalty {c['name']}"] = c["penalty_cy_per_cl"]
        for name, value in want.items():
            cell = rows[name][j]
            assert cell == "n/a" if value is None else _near(cell, value, sig=4), (name, level, cell, value)
            n += 1
    return n


@settings(PROPERTY_SETTINGS, max_examples=25)
@given(data=st.data())
def test_api_json_equals_the_cli_json_and_the_text_prints_its_figures(data, tmp_path_factory):
    """Invariants, for random kernels, bundled machines and sizes (analytic in-core model):
    ``loopmodel.analyze(...).to_dict()`` equals ``loopmodel analyze --json``; every figure of the
    ``-v`` text report's ECM tuples, tables and transfer lines, in-core components, traffic
    table, Roofline table and whole-data-set limits is the JSON's value at the printed
    precision (ECM figures rounded half up from the JSON's decimal value)."""
    import json
    import os
    import subprocess
    import sys

    import loopmodel
    from helpers import ROOT, run_main_inprocess

    case = data.draw(kernels(), label="kernel")
    machine = data.draw(st.sampled_from(MACHINES), label="machine")
    defines = data.draw(sizes(case), label="defines")
    path = case.write(tmp_path_factory.mktemp("kernel"))
    argv = ["analyze", str(path), "-m", machine, "--incore", "analytic", *(f"-D{n}={v}" for n, v in defines.items())]
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    with subprocess.Popen([sys.executable, "-m", "loopmodel.cli", *argv, "--json"], cwd=ROOT, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:  # the real CLI, meanwhile:
        shown = run_main_inprocess(argv + ["-v"], ROOT)  # the text report (the CLI's code path, in this process)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == shown.returncode, (err, shown.stderr)
    if proc.returncode:  # a one-line refusal (e.g. a data set beyond 2**62 B) both ways
        assert err == shown.stderr and err.count("\n") == 1
        return
    cli = json.loads(out)
    api = loopmodel.analyze(str(path), machine, defines, incore="analytic").to_dict()
    assert api == cli
    text = shown.stdout
    checked = _check_ecm(text, cli["ecm"]) + _check_traffic(text, cli["traffic"])
    if "roofline" in cli:  # else skipped, with a note (no measured bandwidths)
        checked += _check_roofline(text, cli["roofline"], bool(cli["kernel"]["flops_per_it"]))
    checked += _check_lc(text, cli["layer_conditions"]) + _check_verbose(text, cli["incore"], cli["ecm"])
    assert checked > 10


# ---------------------------------------------------------------- rounding of printed figures


def test_format_fixed_rounds_half_up_from_the_decimal_form():
    from loopmodel.units import format_fixed, format_si

    assert [format_fixed(v, 1) for v in (2.25, 1.25, 0.75, 13.75, 0.05, -2.25, 2.0)] == [
        "2.3", "1.3", "0.8", "13.8", "0.1", "-2.3", "2.0"]
    assert format_fixed(2.675, 2) == "2.68" and format_fixed(1e-20, 2) == "0.00"  # 2.675 as JSON prints it
    assert format_fixed(float("inf"), 1) == "inf" and format_si(2.125e9, "B/s") == "2.13 GB/s"


def test_ecm_tuple_rounds_2_25_as_the_table_and_the_json_read():
    """The tuple printed 2.25 as '2.2' (Python rounds the binary 2.25 half to even) while the -v
    table said 2.25; now every ECM figure is rounded half up from the JSON's decimal value."""
    import dataclasses

    from helpers import analyze

    e = analyze("2d-5pt.c", "SkylakeSP_Gold-6148", {"N": 1000, "M": 1000}).ecm
    e = dataclasses.replace(e, T_OL=2.25, T_nOL=0.75, T_ECM={**e.T_ECM, "L1": 1.25})
    assert e.notation().startswith("{ 2.3 || 0.8 | ")
    assert e.prediction_notation().startswith("{ 1.3 \\ ")
