"""Kerncraft's own test expectations, run through loopmodel.

Kerncraft 0.8.18 (the peer tool, AGPL) ships tests whose numbers are facts about the
models both tools implement: ECM data-transfer terms in cy/CL from layer conditions
(LC) and cache simulation (SIM), in-core T_OL/T_nOL (Kerncraft's T_comp/T_RegL1), the
Roofline bottlenecks, and the per-cache-level layer conditions (hits/misses/evicts per
cache line of work and the transition size). This script feeds the peer's test kernels
and machine files, read unchanged from its source tree at run time, to
``loopmodel analyze --json`` and prints one row per expectation:

    case | quantity | peer expects | loopmodel | holds / fails (...) / error: ... / not mapped: ...

The expected numbers below are transcribed from the peer's tests/test_kerncraft.py,
tests/test_layer_condition.py and tests/test_kernel.py (no code or file of the peer is
copied; the two inline kernels of test_kernel.py are read from that file at run time).
The runs pass the peer's own spellings where loopmodel accepts them as aliases
(``-p ECMData``, ``-p ECMCPU``, ``-p RooflineFLOP``, ``-P SIM``, ``-i OSACA``, ``-D N 1000``).
test_kernel.py's kernel-parsing facts (array sizes, iteration count, first-iteration
byte offsets, accesses per iteration, YAML description vs C code) are read from
loopmodel's kernel IR (this checkout's src/, imported in-process). "holds" uses the
tolerance of the peer's assertion: ``assertRelativlyEqual(actual, desired, r)`` as
|actual - desired| / |desired| <= r (the peer also takes that ``% 1.0``, which would let
a value off by a whole multiple pass; not reproduced), ``assertAlmostEqual(.., places=n)``
as round(actual - desired, n) == 0, ``assertEqual`` as equality.

Usage (the loopmodel run is this checkout's: its src/ goes first on PYTHONPATH):
    python benchmarks/peer_suite.py --kerncraft-src /tmp/kc/kerncraft-0.8.18 \
        [--strip-swap] [--out FILE]

``--strip-swap`` feeds copies of the kernels without their ``swap(a, b);`` lines (written
to a temporary directory), for loopmodel versions whose kernel grammar rejects them.
Exit status 0 whatever the outcome (the table is the result); 2 for a bad source path.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SNB = "SandyBridgeEP_E5-2680.yml"
HSW = "HaswellEP_E5-2695v3.yml"
SWAP_LINE = re.compile(r"^\s*swap\s*\(.*\)\s*;\s*$")


# ---------------------------------------------------------------- shared with compare_peer.py

@dataclass
class Outcome:
    """One loopmodel run: exit status, its JSON points (a list, one per -D point), the
    point the checks read (None if absent) and the last line of stderr."""

    rc: int
    docs: list
    doc: dict | None
    error: str = ""


def run_loopmodel(kernel: str, machine: str, args, timeout: float = 300.0) -> Outcome:
    """``loopmodel analyze KERNEL -m MACHINE ARGS --json`` with this checkout's src/ first
    on PYTHONPATH. Returns an Outcome (doc: the first point; see :func:`select_point`)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "src")]
                                        + [p for p in [env.get("PYTHONPATH")] if p])
    cmd = [sys.executable, "-m", "loopmodel.cli", "analyze", kernel, "-m", machine,
           "--json", "--no-progress", *map(str, args)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return Outcome(124, [], None, f"timed out after {timeout:.0f} s")
    lines = [ln.strip() for ln in p.stderr.splitlines() if ln.strip()]
    error = lines[-1][:200] if lines else ""
    if p.returncode != 0:
        return Outcome(p.returncode, [], None, error or f"exit status {p.returncode}")
    try:  # one document for one point, JSON Lines (one document a line) for a sweep
        data = json.loads(p.stdout)
        docs = data if isinstance(data, list) else [data]
    except ValueError:
        try:
            docs = [json.loads(ln) for ln in p.stdout.splitlines() if ln.strip()]
        except ValueError as e:
            return Outcome(1, [], None, f"unreadable JSON: {e}")
    return Outcome(0, docs, docs[0] if docs else None, error)


def select_point(out: Outcome, point) -> Outcome:
    """The Outcome with ``doc`` set to the sweep point whose defines include ``point``."""
    if out.rc != 0 or not point:
        return out
    want = dict(point)
    for d in out.docs:
        if all(d.get("defines", {}).get(k) == v for k, v in want.items()):
            return Outcome(out.rc, out.docs, d, out.error)
    label = ", ".join(f"{k}={v}" for k, v in point)
    return Outcome(out.rc, out.docs, None, f"no sweep point with {label} in loopmodel's output")


def rel_diff(value, reference):
    """(value - reference) / |reference|; 0 if both are 0, inf if only the reference is."""
    if value == reference:
        return 0.0
    if reference == 0:
        return math.inf
    return (value - reference) / abs(reference)


def fmt(v) -> str:
    """Compact, deterministic rendering of a table cell."""
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, float):
        return "inf" if v == math.inf else f"{v:.4g}"
    if isinstance(v, list):
        if len(v) > 6:
            return f"[{fmt(v[0])}, {fmt(v[1])}, ..., {fmt(v[-1])}] ({len(v)} values)"
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    return str(v)


def format_table(header, rows) -> str:
    """Plain-text table; ``rows`` are sequences of cells (rendered with :func:`fmt`)."""
    cells = [list(header)] + [[fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    line = lambda r: " | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    sep = "-+-".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), sep] + [line(r) for r in cells[1:]])


@dataclass(frozen=True)
class Check:
    """One expectation of the peer's tests.

    quantity: what is compared (with units); expected: the peer's value;
    tol: ("rel", r) | ("places", n) | ("eq",); get: Outcome -> loopmodel's value
    (None: not mapped, ``why`` says why); needs_json: False for checks that read the
    exit status or message instead of the JSON document.
    """

    quantity: str
    expected: object
    tol: tuple = ("eq",)
    get: object = None
    why: str = ""
    needs_json: bool = True


@dataclass(frozen=True)
class Case:
    """One loopmodel run: the peer's test name, test_files kernel and machine, -D tokens
    (the peer's own, in order), loopmodel options, the sweep point the checks read, and
    a note on how the peer's invocation was mapped (printed below the table)."""

    name: str
    kernel: str | None
    machine: str = SNB
    defines: tuple = ()
    options: tuple = ()
    point: tuple = ()
    checks: tuple = ()
    note: str = ""


def D(*pairs) -> tuple:
    """-D tokens in Kerncraft's two-word form: D("N", 1000, "M", 50)."""
    out = []
    for name, value in zip(pairs[::2], pairs[1::2]):
        out += ["-D", str(name), str(value)]
    return tuple(out)


# ---------------------------------------------------------------- JSON accessors

class Missing(Exception):
    """loopmodel's output lacks the quantity the peer expects (the expectation fails)."""


def _num(x):
    if isinstance(x, str) and x.lower() in ("inf", "-inf", "nan", "infinity"):
        return float(x)
    return x


def ecm_term(level: str):
    """Kerncraft's ECMData result for hierarchy level ``level`` (e.g. "L2") is the
    transfer time into that level from the one above, in cy/CL without penalties
    (kerncraft/models/ecm.py calculate_cycles): loopmodel's ECM contribution whose name
    ends with the level (L1L2, L2L3, L3MEM), its busy cycles."""
    def get(o: Outcome):
        for c in o.doc["ecm"]["contributions"]:
            if c["name"].upper().endswith(level.upper()):
                return _num(c.get("busy_cy_per_cl", c["time_cy_per_cl"]))
        raise KeyError(f"no ECM contribution ending in {level}")
    return get


def field(*path):
    """loopmodel JSON value at ``path`` of the selected sweep point."""
    def get(o: Outcome):
        v = o.doc
        for p in path:
            v = v[p]
        return _num(v)
    return get


def intensity_it_per_b(model: str, i: int):
    """Iterations per byte at Roofline level ``i``: loopmodel's iterations per CL over
    the level's bytes per CL (inf where no byte moves, as the peer prints it)."""
    def get(o: Outcome):
        b = _num(o.doc[model]["levels"][i]["volume_B_per_cl"])
        return math.inf if b == 0 else o.doc["iterations_per_cl"] / b
    return get


def n_points(o: Outcome):
    return len(o.docs)


def define_values(o: Outcome):
    return [d["defines"]["N"] for d in o.docs]


def ran(o: Outcome):
    return "runs" if o.rc == 0 else f"exit {o.rc}"


# ---------------------------------------------------------------- test_kerncraft.py

def _ecm_data_checks(l2, l3, mem, mem_places, l3_places=None):
    l3_tol = ("places", l3_places) if l3_places is not None else ("rel", 0.05)
    return (Check("T_L1L2 [cy/CL] (peer 'L2')", l2, ("rel", 0.05), ecm_term("L2")),
            Check("T_L2L3 [cy/CL] (peer 'L3')", l3, l3_tol, ecm_term("L3")),
            Check("T_L3Mem [cy/CL] (peer 'MEM')", mem, ("places", mem_places), ecm_term("MEM")))


def _incore_checks(t_comp, t_regl1):
    return (Check("T_OL [cy/CL] (peer T_comp)", t_comp, ("rel", 0.2), field("incore", "T_OL_cy_per_cl")),
            Check("T_nOL [cy/CL] (peer T_RegL1)", t_regl1, ("rel", 0.2), field("incore", "T_nOL_cy_per_cl")))


def ecm_cases() -> list:
    """ECMData (LC, SIM), ECMCPU, ECM cases; Kerncraft's default predictor is SIM and
    its default in-core model the machine file's first (OSACA in both test machines)."""
    sweep = D("N", "10000-100000:2log10", "N", 1000, "M", 50)
    points = Check("sweep points (peer: a repeated -D N adds values)", 3, ("eq",), n_points)
    data = ("-p", "ECMData")  # the peer's model name (loopmodel: ECM, analytic in-core part)
    osaca = ("-p", "ECMCPU", "-i", "OSACA", "--compiler", "gcc")
    big = D("N", 2000, "M", 1000)
    return [
        Case("test_2d5pt_ECMData_SIM", "2d-5pt.c", SNB, sweep, data + ("-P", "SIM"),
             (("N", 1000), ("M", 50)), (points,) + _ecm_data_checks(6, 6, 0.0, 3),
             "the peer's checks read the N=1000, M=50 point; -p ECMData is loopmodel's ECM "
             "contributions (in-core part analytic, the data terms do not depend on it)"),
        Case("test_2d5pt_ECMData_LC", "2d-5pt.c", SNB, sweep, data + ("-P", "LC"),
             (("N", 1000), ("M", 50)), (points,) + _ecm_data_checks(6, 6, 0.0, 2)),
        Case("test_sclar_product_ECMData", "scalar_product.c", HSW, D("N", 10000),
             data + ("-P", "SIM"), (), _ecm_data_checks(2, 0.0, 0.0, 2, 2)),
        Case("test_copy_ECMData", "copy.c", HSW, D("N", 1000000),
             data + ("-P", "SIM"), (), _ecm_data_checks(3, 6, 0, 2)),
        Case("test_copy_ECMData_LC", "copy.c", HSW, D("N", 1000000),
             data + ("-P", "LC"), (), _ecm_data_checks(3, 6, 0, 0)),
        Case("test_2d5pt_ECMCPU", "2d-5pt.c", SNB, big, osaca, (), _incore_checks(11, 8),
             "the peer's default in-core model is the machine file's first, OSACA"),
        Case("test_2d5pt_ECMCPU_OSACA", "2d-5pt.c", SNB, big, osaca, (), _incore_checks(10, 10)),
        Case("test_2d5pt_ECM", "2d-5pt.c", SNB, big,
             ("-p", "ECM", "-i", "OSACA", "--compiler", "gcc", "-P", "SIM"), (),
             _incore_checks(11, 8) + (
                 Check("T_L1L2 [cy/CL] (peer 'L2')", 10, ("rel", 0.05), ecm_term("L2")),
                 Check("T_L2L3 [cy/CL] (peer 'L3')", 6, ("rel", 0.05), ecm_term("L3")),
                 Check("T_L3Mem [cy/CL] (peer 'MEM')", 13, ("rel", 0.05), ecm_term("MEM"))),
             "the peer's ECM model always takes the traffic from cache simulation"),
        Case("test_2d5pt_pragma", "2d-5pt_pragma.c", SNB, D("N", 1000, "M", 50), data, (),
             (Check("#pragma unroll / #pragma simd kernel analyzed", "runs", ("eq",), ran,
                    needs_json=False),)),
    ]


# RooflineFLOP at N=4096, M=50 on the peer's SandyBridge file: per level (L1, L2, L3, MEM)
# the arithmetic intensity [It/B: the peer's report prints that unit], bandwidth [B/s],
# benchmark kernel and performance [FLOP/s] (tests/test_kerncraft.py,
# test_2d5pt_RooflineFLOP).
ROOFLINE_LEVELS = (("L1", 0.029411764705882353, 84.07e9, "load", 9.89e9),
                   ("L2", 0.025, 47.24e9, "triad", 4.72e9),
                   ("L3", 0.041, 32.9e9, "copy", 5.33e9),
                   ("MEM", math.inf, 12.01e9, "load", math.inf))


def roofline_cases() -> list:
    checks = [Check("sweep points of -D N 1024-4096:3log2", 3, ("eq",), n_points),
              Check("min performance [FLOP/s]", 4.72e9, ("rel", 0.01),
                    field("roofline", "performance_flop_s")),
              Check("bottleneck level (peer index 1)", "L2", ("eq",),
                    field("roofline", "bottleneck"))]
    for i, (lvl, ai, bw, kern, perf) in enumerate(ROOFLINE_LEVELS):
        checks += [
            Check(f"{lvl} arithmetic intensity [It/B]", ai, ("rel", 0.05),
                  intensity_it_per_b("roofline", i)),
            Check(f"{lvl} bandwidth [B/s]", bw, ("rel", 0.05),
                  field("roofline", "levels", i, "bandwidth_B_s")),
            Check(f"{lvl} bandwidth kernel", kern, ("eq",),
                  field("roofline", "levels", i, "bandwidth_kernel")),
            Check(f"{lvl} level name", lvl, ("eq",), field("roofline", "levels", i, "level")),
            Check(f"{lvl} performance [FLOP/s]", perf, ("rel", 0.05),
                  field("roofline", "levels", i, "performance_flop_s"))]
    asm = (Check("min performance [FLOP/s]", 2.9e9, ("rel", 0.05),
                 field("roofline_asm", "performance_flop_s")),
           Check("bottleneck level (peer index 3)", "MEM", ("eq",),
                 field("roofline_asm", "bottleneck")))
    return [
        Case("test_2d5pt_RooflineFLOP", "2d-5pt.c", SNB, D("N", "1024-4096:3log2", "M", 50),
             ("-p", "RooflineFLOP", "--incore", "analytic", "-P", "SIM"),
             (("N", 4096), ("M", 50)), tuple(checks),
             "the peer's checks read N=4096 and its default predictor is SIM; It/B is "
             "loopmodel's iterations per CL over the level's bytes per CL"),
        Case("test_2d5pt_RooflineASM", "2d-5pt.c", SNB, D("N", 4000, "M", 1000),
             ("-p", "RooflineASM", "-i", "OSACA", "--compiler", "gcc", "-P", "SIM"), (), asm),
        Case("test_2d5pt_Benchmark", None, checks=(Check(
            "measured runtime, MEM volume, MFLOP/s", "values", why="the peer runs the kernel "
            "under (a dummy) likwid-perfctr; loopmodel measures only its daxpby/triad"),)),
        Case("test_argument_parser_asm_block", None, checks=(Check(
            "--asm-block auto|manual|23 valid, foobar rejected", "exit 2 for foobar",
            why="the peer's --asm-block takes a block number; loopmodel's an assembly label"),)),
    ]


# ---------------------------------------------------------------- -D ranges (argument parser)

# (peer test, -D value, values the peer expects): tests/test_kerncraft.py,
# test_argument_parser_define and test_space_* (kc.space with endpoint=True is the -D
# range start-stop:num[log[base]]); run on copy.c, whose only size is N.
DEFINE_RANGES = (("test_argument_parser_define", "23-42", list(range(23, 43))),
                 ("test_argument_parser_define", "23-42:4", [23, 29, 36, 42]),
                 ("test_argument_parser_define", "1-8:4log2", [1, 2, 4, 8]),
                 ("test_argument_parser_define", "10-1000:3log10", [10, 100, 1000]),
                 ("test_space_linear", "1-10:10", list(range(1, 11))),
                 ("test_space_linear", "1-10:3", [1, 6, 10]),
                 ("test_space_linear", "20-40:2", [20, 40]),
                 ("test_space_log10", "1-1000:4log10", [1, 10, 100, 1000]),
                 ("test_space_log10", "1-10000:3log10", [1, 100, 10000]),
                 ("test_space_log10", "10-100:2log10", [10, 100]),
                 ("test_space_log2", "1-8:4log2", [1, 2, 4, 8]),
                 ("test_space_log2", "1-16:3log2", [1, 4, 16]),
                 ("test_space_log2", "4-8:2log2", [4, 8]))
BAD_DEFINES = (("N", "1000", "23"), ("N",), ("N", "foobar"))


def exit_status(o: Outcome):
    return f"exit {o.rc}"


def define_cases() -> list:
    lc = ("-p", "LC", "--incore", "analytic")
    note = ("the -D cases run on copy.c (one size, N) with -p LC; the peer's parse -D M "
            "for 2d-5pt.c")
    cases = [Case(name, "copy.c", SNB, ("-D", "N", spec), lc, (), (Check(
        f"values of -D N {spec}", values, ("eq",), define_values),), "" if i else note)
        for i, (name, spec, values) in enumerate(DEFINE_RANGES)]
    cases += [Case("test_argument_parser_define", "copy.c", SNB, ("-D",) + bad, lc, (), (Check(
        f"-D {' '.join(bad)} rejected", "exit 2", ("eq",), exit_status, needs_json=False),))
        for bad in BAD_DEFINES]
    cases.append(Case("test_space_*", None, checks=(Check(
        "kc.space(..., endpoint=False)", "values", why="no -D range syntax leaves out the "
        "endpoint (an internal helper of the peer)"),)))
    return cases


# ---------------------------------------------------------------- test_layer_condition.py

# Per cache level of the peer's SandyBridge file (L1 32 KiB, L2 256 KiB, L3 20 MiB), the
# peer's layer conditions in its order (whole data set, then shrinking reuse), each as
# (left side, comparison, right side, hits/misses/evicts per CL of work), transcribed from
# tests/test_layer_condition.py. The right sides are in elements of 8 B.
LC_3D7PT = {"L1": (("M*N**2", "<", 2048, "8/0/0"), ("2*N**2 - N", "<=", 2048, "6/2/1"),
                   ("3*N", "<=", 2050, "4/4/1"), (None, "", 0, "2/6/1")),
            "L2": (("M*N**2", "<", 16384, "8/0/0"), ("2*N**2 - N", "<=", 16384, "6/2/1"),
                   ("N", "<=", 5462, "4/4/1"), (None, "", 0, "2/6/1")),
            "L3": (("M*N**2", "<", 1310720, "8/0/0"), ("2*N**2 - N", "<=", 1310720, "6/2/1"),
                   ("3*N", "<=", 1310722, "4/4/1"), (None, "", 0, "2/6/1"))}
LC_CONSTANTDIM = {"L1": (("M*N", "<", 1024, "8/0/0"), ("2*M*N + N", "<=", 2048, "5/3/1"),
                         ("3*N", "<=", 2050, "4/4/1"), (None, "", 0, "2/6/1")),
                  "L2": (("M*N", "<", 8192, "8/0/0"), ("2*M*N + N", "<=", 16384, "5/3/1"),
                         ("N", "<=", 5462, "4/4/1"), (None, "", 0, "2/6/1")),
                  "L3": (("M*N", "<", 655360, "8/0/0"), ("2*M*N + N", "<=", 1310720, "5/3/1"),
                         ("3*N", "<=", 1310722, "4/4/1"), (None, "", 0, "2/6/1"))}
#: loopmodel's condition "dimension" for the peer's entries in that order; "all" is the
#: whole-data-set condition (a dimension above the kernel's reuse dimensions).
LC_DIMS = ("all", 3, 2, 1)


def n_max(lhs, rhs, sizes: dict):
    """Largest real N >= 1 with lhs(N, sizes) <= rhs (None if none, inf if all), as
    loopmodel's ``max_size_exact``; lhs: a transcribed expression in N and M."""
    if lhs is None:
        return math.inf
    f = lambda n: eval(lhs, {"__builtins__": {}}, dict(sizes, N=n))  # noqa: E731,S307
    lo, hi = 1.0, 2.0
    if f(lo) > rhs:
        return None
    while f(hi) <= rhs:
        lo, hi = hi, hi * 2
        if hi > 1e18:
            return math.inf
    while hi - lo > 1e-10 * lo:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) <= rhs else (lo, mid)
    return lo


def lc_condition(level: str, dim):
    """loopmodel's layer condition of ``level`` with reuse dimension ``dim`` ("all": the
    highest dimension above 3, or one with an infinite reuse distance)."""
    def get(o: Outcome):
        block = next(b for b in o.doc["layer_conditions"] if b["level"] == level)
        conds = block["conditions"]
        if dim != "all":
            return next(c for c in conds if c["dimension"] == dim)
        wds = block.get("whole_data_set")
        if wds is not None:  # the state it describes: every access hits, nothing is evicted
            n = conds[0]["hits_per_it"] + conds[0]["misses_per_it"]
            return {"hits_per_it": n, "misses_per_it": 0, "evicts_per_it": 0, "max_size_exact": wds["max_size_exact"]}
        whole = [c for c in conds if str(c.get("reuse_distance_it")) in ("inf", "oo")
                 or (isinstance(c["dimension"], int) and c["dimension"] > 3)]
        if not whole:
            raise Missing("no whole-data-set condition in loopmodel's layer_conditions")
        return max(whole, key=lambda c: c["dimension"] if isinstance(c["dimension"], int) else 99)
    return get


def _hme(cond_get):
    def get(o: Outcome):
        c = cond_get(o)
        return "/".join(str(int(c[k])) for k in ("hits_per_it", "misses_per_it", "evicts_per_it"))
    return get


def _max_size(cond_get):
    return lambda o: _num(cond_get(o)["max_size_exact"])


def lc_checks(table: dict, sizes: dict) -> tuple:
    checks = []
    for level, entries in table.items():
        for (lhs, op, rhs, hme), dim in zip(entries, LC_DIMS):
            cond = f"{lhs} {op} {rhs}" if lhs else "True"
            get = lc_condition(level, dim)
            checks.append(Check(f"{level} [{cond}] hits/misses/evicts per CL", hme, ("eq",),
                                _hme(get)))
            checks.append(Check(f"{level} [{cond}] largest N (at M={sizes['M']})",
                                n_max(lhs, rhs, sizes), ("rel", 1e-6), _max_size(get)))
    return tuple(checks)


def _refused(o: Outcome):
    if o.rc == 2 and "layer condition" in o.error.lower():
        return "refused"
    if o.rc == 0 and o.doc.get("traffic_predictor") != "LC":
        return "refused"  # fell back to cache simulation and says so
    return "LC result" if o.rc == 0 else f"exit {o.rc}: {o.error}"


def lc_cases() -> list:
    lc = ("-p", "LC", "--incore", "analytic")
    acc = lambda exp: Check("array accesses per it (reads/writes)", exp, ("eq",),  # noqa: E731
                            lambda o: f"{o.doc['kernel']['loads_per_it']}/"
                                      f"{o.doc['kernel']['stores_per_it']}")
    dist = Check("'distances' between consecutive accesses", "list", why="loopmodel reports "
                 "one reuse distance per condition, not the sorted offset gaps")
    return [
        Case("test_kernel_requirements", "2d-5pt-unrolled.c", SNB, D("N", 1000, "M", 1000), lc,
             (), (Check("LC on a stride-4 inner loop (peer: ValueError)", "refused", ("eq",),
                        _refused, needs_json=False),),
             "the peer gives no sizes; loopmodel needs them (N=M=1000); a fallback to "
             "cache simulation that says so also counts as refused"),
        Case("test_3d_7pt", "3d-7pt.c", SNB, D("M", 100, "N", 100), lc, (),
             (acc("7/1"), dist) + lc_checks(LC_3D7PT, {"M": 100}),
             "the peer keeps sizes symbolic (-D . 0); loopmodel needs them (M=N=100); only "
             "the whole-data-set condition depends on M"),
        Case("test_constantdim", "constantdim.c", SNB, D("N", 1224, "M", 1224), lc, (),
             (acc("7/1"), dist) + lc_checks(LC_CONSTANTDIM, {"M": 1224})),
    ]


# ---------------------------------------------------------------- test_kernel.py (kernel IR)

#: the peer's tests/test_kernel.py expectations at N=10, M=20 (8 B doubles): array sizes in
#: bytes, the iteration count, and the byte addresses of the first iteration's reads and
#: writes with the arrays laid out back to back in declaration order (spacing 0).
KERNEL_SIZES = {"N": 10, "M": 20}
OFFSETS_2D = ([(1 * 10 + 0) * 8, (1 * 10 + 2) * 8, (0 * 10 + 1) * 8, (2 * 10 + 1) * 8],
              [1600 + (1 * 10 + 1) * 8])
OFFSETS_3D = ([(1 * 100 + 1 * 10 + i) * 8 for i in (1, 0, 2)]
              + [(1 * 100 + j * 10 + 1) * 8 for j in (0, 2)]
              + [(k * 100 + 1 * 10 + 1) * 8 for k in (2, 0)],
              [16000 + (1 * 100 + 1 * 10 + 1) * 8])
#: inline kernels of test_kernel.py (read from that file at run time): test -> loads/stores
INLINE_KERNELS = {"test_global_offsets_consts_array": "5/2",
                  "test_global_offsets_variable_small_array": "2/1"}
INLINE_KERNEL = re.compile(r"KernelCode\(\s*(?:'''|\"\"\")(.*?)(?:'''|\"\"\")", re.S)


def _loopmodel_ir():
    """loopmodel's kernel front-ends (imported in-process): the installed package, else this
    checkout's source (never put in front of an installed one: processes started later, such as
    Dask workers, inherit ``sys.path`` and would import a source tree without the compiled
    cache simulator)."""
    src = os.path.join(ROOT, "src")
    if importlib.util.find_spec("loopmodel") is None and src not in sys.path:
        sys.path.append(src)
    from loopmodel.fileio.c_kernel import parse_kernel, parse_kernel_file
    from loopmodel.fileio.kernel_file import load_kernel
    return parse_kernel, parse_kernel_file, load_kernel


def array_sizes_bytes(kernel, sizes) -> dict:
    """Bytes of each array at ``sizes`` (scalars are not arrays), as the peer's array_sizes."""
    return {n: int(a.size_elements.evaluate(sizes)) * a.element_size
            for n, a in kernel.arrays.items()}


def iteration_count(kernel, sizes) -> int:
    """Iterations of the whole nest (bounds independent of outer indices, as in the peer's test)."""
    total = 1
    for lp in kernel.loops:
        total *= int(lp.iterations(sizes))
    return total


def first_offsets(kernel, sizes) -> tuple:
    """Sorted byte addresses of the reads and of the writes in the first iteration: every
    loop index at its start, the arrays back to back from address 0 in declaration order."""
    base, at = {}, 0
    for n, a in kernel.arrays.items():
        base[n] = at
        at += int(a.size_elements.evaluate(sizes)) * a.element_size
    point = dict(sizes)
    for lp in kernel.loops:
        point[lp.index] = int(lp.start.evaluate(point))

    def addr(acc):
        size = kernel.arrays[acc.array].element_size
        return base[acc.array] + int(acc.offset.evaluate(point)) * size
    return sorted(map(addr, kernel.reads)), sorted(map(addr, kernel.writes))


def ir_facts(kernel) -> dict:
    """What the peer's test_from_description compares, in loopmodel's kernel IR terms."""
    return {"flops (operation counts per it)": dict(kernel.operations),
            "sources (read accesses)": {(a.array, a.offset) for a in kernel.reads},
            "destinations (written accesses)": {(a.array, a.offset) for a in kernel.writes},
            "datatype": sorted({a.ctype for a in kernel.arrays.values()}),
            "variables (arrays: type, dimensions)": {n: (a.ctype, a.dims)
                                                     for n, a in kernel.arrays.items()},
            "loop stack (index, start, stop, step)": [(lp.index, lp.start, lp.stop, lp.step)
                                                      for lp in kernel.loops]}


def inline_kernel(test_py: str, test: str) -> str:
    """The C text given to KernelCode in the peer's test method ``test``."""
    with open(test_py) as f:
        text = f.read()
    body = re.search(rf"def {test}\(self\):(.*?)(?:\n    def |\Z)", text, re.S)
    m = INLINE_KERNEL.search(body.group(1)) if body else None
    if not m:
        raise Missing(f"no inline kernel in {test}")
    return m.group(1)


def ir_check(quantity, expected, compute) -> Check:
    """A check on loopmodel's kernel IR (no loopmodel run): ``compute()`` gives the value."""
    return Check(quantity, expected, ("eq",), lambda _o: compute(), needs_json=False)


def kernel_cases(test_files: str) -> list:
    """tests/test_kernel.py: kernel-parsing facts checked on loopmodel's kernel IR."""
    parse_kernel, parse_file, parse_yaml = _loopmodel_ir()
    path = lambda name: os.path.join(test_files, name)  # noqa: E731
    two = lambda: parse_file(path("2d-5pt.c"))[0]  # noqa: E731
    three = lambda: parse_file(path("3d-7pt.c"))[0]  # noqa: E731
    sz = KERNEL_SIZES
    cases = [
        Case("test_array_sizes_2d", None, checks=(ir_check(
            "array sizes [B] at N=10, M=20", {"a": 1600, "b": 1600},
            lambda: array_sizes_bytes(two(), sz)),)),
        Case("test_array_sizes_3d", None, checks=(ir_check(
            "array sizes [B] at N=10, M=20", {"a": 16000, "b": 16000},
            lambda: array_sizes_bytes(three(), sz)),)),
        Case("test_iterations_sizes_2d_linear", None, checks=(ir_check(
            "iterations of copy-2d-linearized.c at N=10, M=20", 200,
            lambda: iteration_count(parse_file(path("copy-2d-linearized.c"))[0], sz)),)),
    ]
    for name, kern, (reads, writes) in (("test_global_offsets_2d", two, OFFSETS_2D),
                                        ("test_global_offsets_3d", three, OFFSETS_3D)):
        cases.append(Case(name, None, checks=(
            ir_check("first-iteration read addresses [B]", sorted(reads),
                     lambda k=kern: first_offsets(k(), sz)[0]),
            ir_check("first-iteration write addresses [B]", sorted(writes),
                     lambda k=kern: first_offsets(k(), sz)[1]))))
    test_py = os.path.join(os.path.dirname(test_files), "test_kernel.py")
    for i, (name, counts) in enumerate(INLINE_KERNELS.items()):
        def per_it(name=name):
            k, _ = parse_kernel(inline_kernel(test_py, name), f"test_kernel.py:{name}")
            return f"{k.loads_per_iteration()}/{k.stores_per_iteration()}"
        cases.append(Case(name, None, checks=(ir_check(
            "load/store offsets per it (loads/stores)", counts, per_it),), note="" if i else (
            "the peer's per-iteration offsets leave out loop-invariant accesses (A[0][1]); "
            "loopmodel's loads/stores per it that move with the inner loop")))
    yml = lambda: ir_facts(parse_yaml(path("2d-5pt.yml"))[0])  # noqa: E731
    code = lambda: ir_facts(two())  # noqa: E731

    def same(key):
        y, c = yml()[key], code()[key]
        return "equal" if y == c else f"{y} vs {c}"
    cases.append(Case("test_from_description", None, checks=tuple(
        ir_check(f"2d-5pt.yml = 2d-5pt.c: {key}", "equal", lambda key=key: same(key))
        for key in ir_facts(two())), note="the YAML description read by loopmodel.fileio."
        "kernel_yaml, the C code by loopmodel's C front-end; both as kernel IR"))
    return cases


# ---------------------------------------------------------------- judging and reporting

def judge(expected, actual, tol) -> tuple:
    """(holds, detail) of ``actual`` against ``expected`` with the peer's tolerance."""
    if tol[0] == "eq" or expected is None or actual is None or isinstance(expected, str):
        return expected == actual, ""
    a, e = float(actual), float(expected)
    if a == e:  # inf, 0 (the peer's helper short-cuts these too)
        return True, ""
    if tol[0] == "rel":
        d = rel_diff(a, e)
        return abs(d) <= tol[1], f"{100 * d:+.1f} %"
    return round(a - e, tol[1]) == 0, f"diff {a - e:+.3g}"


def evaluate(case: Case, out: Outcome | None) -> list:
    """Rows (case, quantity, expected, loopmodel, result) of one case's checks."""
    rows = []
    for ck in case.checks:
        actual, result = "", ""
        if ck.get is None:
            result = f"not mapped: {ck.why}"
        elif ck.needs_json and (out is None or out.doc is None):
            result = f"error: {out.error if out else 'not run'}"
        else:
            try:
                actual = ck.get(out)
                ok, detail = judge(ck.expected, actual, ck.tol)
                result = "holds" if ok else f"fails ({detail})" if detail else "fails"
            except Missing as e:
                result = f"fails ({e})"
            except (KeyError, IndexError, LookupError, StopIteration, TypeError,
                    ValueError, AttributeError) as e:
                result = f"error: reading loopmodel's JSON: {type(e).__name__} {e}"
        rows.append((case.name, ck.quantity, ck.expected, actual, result))
    return rows


def suite_of(case_name: str) -> str:
    if case_name.startswith(("test_array_sizes", "test_iterations_sizes", "test_global_offsets",
                             "test_from_description")):
        return "test_kernel.py"
    if case_name.startswith(("test_kernel_requirements", "test_3d_7pt", "test_constantdim")):
        return "test_layer_condition.py"
    if case_name.startswith(("test_argument_parser", "test_space")):
        return "test_kerncraft.py -D ranges"
    return "test_kerncraft.py models"


def summary_lines(rows) -> list:
    """Per peer test file and in total: expectations that hold of those mapped."""
    groups = {}
    for name, *_, result in rows:
        for g in (suite_of(name), "all"):
            groups.setdefault(g, []).append(result.split(" ", 1)[0].rstrip(":"))
    lines = []
    for g, res in sorted(groups.items(), key=lambda kv: (kv[0] == "all", kv[0])):
        mapped = [r for r in res if r != "not"]
        n_ok = mapped.count("holds")
        pct = f" ({100 * n_ok / len(mapped):.0f} %)" if mapped else ""
        lines.append(f"{g}: {n_ok} of {len(mapped)} mapped expectations hold{pct}; "
                     f"{mapped.count('fails')} fail, {mapped.count('error')} error, "
                     f"{len(res) - len(mapped)} not mapped")
    tests = {}
    for name, *_, result in rows:
        if not result.startswith("not mapped"):
            tests.setdefault(name, []).append(result == "holds")
    lines.append(f"peer tests whose every mapped expectation holds: "
                 f"{sum(map(all, tests.values()))} of {len(tests)}")
    return lines


def all_cases() -> list:
    return ecm_cases() + roofline_cases() + define_cases() + lc_cases()


def stripped_copies(test_files: str, dest: str) -> str:
    """Copies of the peer's kernels without ``swap(...);`` lines in ``dest``."""
    for name in sorted(os.listdir(test_files)):
        if name.endswith(".c"):
            with open(os.path.join(test_files, name)) as f:
                text = "".join(ln for ln in f if not SWAP_LINE.match(ln))
            with open(os.path.join(dest, name), "w") as f:
                f.write(text)
    return dest


def run_cases(cases, kernel_dir: str, machine_dir: str, jobs: int = 2) -> list:
    """Runs every case that has a kernel (``jobs`` loopmodel processes at a time)."""
    def one(case):
        if case.kernel is None:
            return evaluate(case, None)
        out = run_loopmodel(os.path.join(kernel_dir, case.kernel),
                            os.path.join(machine_dir, case.machine),
                            case.options + case.defines)
        out.error = out.error.replace(kernel_dir + os.sep, "")  # no temporary paths
        return evaluate(case, select_point(out, case.point))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return [row for rows in pool.map(one, cases) for row in rows]


def report(rows, cases, strip_swap: bool) -> str:
    """The table, the notes on mapped invocations and the summary, as text."""
    mode = "swap(...) lines stripped" if strip_swap else "read unchanged"
    head = [f"Kerncraft 0.8.18 test expectations through loopmodel (peer kernels {mode})",
            "holds: within the peer's assertion tolerance (rel: (lm - peer) / |peer|)", ""]
    table = format_table(("case", "quantity", "peer expects", "loopmodel", "result"), rows)
    notes = [f"  {name}: {note}" for name, note in dict((c.name, c.note) for c in reversed(
        cases) if c.note).items()][::-1]
    return "\n".join(head + [table, "", "Notes:"] + notes + [""] + summary_lines(rows)) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kerncraft-src", required=True,
                    help="unpacked Kerncraft 0.8.18 source (with tests/test_files)")
    ap.add_argument("--strip-swap", action="store_true",
                    help="feed copies of the kernels without their swap(...); lines")
    ap.add_argument("--out", help="also write the table to this file")
    a = ap.parse_args(argv)
    test_files = os.path.join(a.kerncraft_src, "tests", "test_files")
    if not os.path.isfile(os.path.join(test_files, SNB)):
        print(f"peer_suite: {test_files}: no Kerncraft test files ({SNB}) there",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="peer-suite-") as tmp:
        kernel_dir = stripped_copies(test_files, tmp) if a.strip_swap else test_files
        cases = all_cases() + kernel_cases(test_files)
        text = report(run_cases(cases, kernel_dir, test_files), cases, a.strip_swap)
    print(text, end="")
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
