"""Loop-carried dependency chains as a longest path over the dependency graph.

Hand-counted chains: latencies of the machine files (Sandy Bridge: ADD 3 cy, MUL 5 cy, no FMA;
Skylake-SP: ADD = MUL = FMA = 4 cy) or made up ones (ADD 3, MUL 4, FMA 5 cy) where FMA
contraction must be seen to pick the longer path. Contraction: a MUL directly followed by an
ADD on the path is one FMA (cross-architecture-machine-models.txt Fig. 4).
"""
from __future__ import annotations

import dataclasses

import pytest

from loopmodel.fileio.c_kernel import parse_kernel
from loopmodel.fileio.machine_files import load_machine
from loopmodel.models.incore import analytic_incore, missing_data

SNB = "SandyBridgeEP_E5-2680"
SKX = "SkylakeSP_Gold-6148"


def shared_temporaries(n: int) -> str:
    """a[i] = f(a[i-1]) through ``n`` temporaries, each used twice by the next one."""
    body = ["t1 = a[i-1]*s;"] + [f"t{k} = t{k-1}*t{k-1} + t{k-1};" for k in range(2, n + 1)] + [f"a[i] = t{n};"]
    decl = "double a[N];\ndouble s, " + ", ".join(f"t{k}" for k in range(1, n + 1)) + ";\n"
    return decl + "for (int i = 1; i < N; ++i) {\n  " + "\n  ".join(body) + "\n}\n"


def linear_temporaries(n: int) -> str:
    """a[i] = f(a[i-1]) through ``n`` temporaries, each used once: one path of 2n - 1 operations."""
    body = ["t1 = a[i-1]*c;"] + [f"t{k} = t{k-1}*c + d;" for k in range(2, n + 1)] + [f"a[i] = t{n};"]
    decl = "double a[N];\ndouble c, d, " + ", ".join(f"t{k}" for k in range(1, n + 1)) + ";\n"
    return decl + "for (int i = 1; i < N; ++i) {\n  " + "\n  ".join(body) + "\n}\n"


def _with_latencies(machine, **lat):
    ic = machine.in_core
    return dataclasses.replace(machine, in_core=dataclasses.replace(ic, latency={**ic.latency, **lat}))


def _recurrence(text):
    k, _ = parse_kernel(text)
    assert [(r.variable, r.distance, r.reassociable) for r in k.recurrences] == [("a", 1, False)]
    return k, k.recurrences[0]


def test_three_shared_temporaries_by_hand():
    """t1 = a[i-1]*s; t2 = t1*t1 + t1; t3 = t2*t2 + t2: the 4 paths from a[i-1] to a[i] are
    MUL MUL ADD MUL ADD, MUL MUL ADD ADD, MUL ADD MUL ADD, MUL ADD ADD."""
    k, r = _recurrence(shared_temporaries(3))
    g = r.graph
    assert g.longest_chain() == (5.0, ("MUL", "MUL", "ADD", "MUL", "ADD"))  # most operations
    lat = {"ADD": 3.0, "MUL": 4.0, "FMA": 5.0}
    # no contraction: 4 + 4 + 3 + 4 + 3 = 18 cy
    assert g.longest_chain(lat) == (18.0, ("MUL", "MUL", "ADD", "MUL", "ADD"))
    # contracted: MUL FMA FMA = 14, MUL FMA ADD = 12, FMA FMA = 10, FMA ADD = 8 cy
    assert g.longest_chain(lat, contract_fma=True) == (14.0, ("MUL", "FMA", "FMA"))
    assert set(g.operations()) == {"MUL", "ADD"}
    assert set(g.operations(contract_fma=True)) == {"MUL", "FMA", "ADD"}  # MUL ADD ADD -> FMA ADD
    # the in-core model's loop-carried dependency (cy/it) is that longest latency
    assert analytic_incore(k, load_machine(SNB), 8).dependency == 5 + 5 + 3 + 5 + 3
    made_up = _with_latencies(load_machine(SKX), ADD=3.0, MUL=4.0, FMA=5.0)
    assert analytic_incore(k, made_up, 8).dependency == 14.0


def test_long_linear_chain_is_kept():
    """30 temporaries used once: one path MUL (MUL ADD)x29; a search cut at a fixed depth lost
    the whole dependency (no recurrence, no latency bound)."""
    k, r = _recurrence(linear_temporaries(30))
    assert r.graph.longest_chain() == (59.0, ("MUL",) + ("MUL", "ADD") * 29)
    assert analytic_incore(k, load_machine(SNB), 8).dependency == 5 + 29 * (5 + 3)
    assert analytic_incore(k, load_machine(SKX), 8).dependency == 4 + 29 * 4  # MUL (FMA)x29


def test_forty_shared_temporaries_by_hand():
    """2^39 paths; the longest by count is MUL (MUL ADD)x39. Without FMA (SNB) every level adds
    MUL + ADD = 8 cy; with FMA 5 > ADD 3 cy every level after the first adds one FMA, the first
    one MUL + FMA (module docstring: MUL MUL ADD -> MUL FMA)."""
    k, r = _recurrence(shared_temporaries(40))
    assert r.graph.longest_chain() == (79.0, ("MUL",) + ("MUL", "ADD") * 39)
    assert len(r.graph.nodes) == 1 + 1 + 2 * 39  # the dependent read, t1's MUL, a MUL and an ADD per level
    assert analytic_incore(k, load_machine(SNB), 8).dependency == 5 + 39 * 8
    made_up = _with_latencies(load_machine(SKX), ADD=3.0, MUL=4.0, FMA=5.0)
    assert made_up.in_core.latency["FMA"] == 5.0
    assert analytic_incore(k, made_up, 8).dependency == 4 + 39 * 5
    assert r.graph.longest_chain(made_up.in_core.latency, True) == (4 + 39 * 5.0, ("MUL",) + ("FMA",) * 39)


def test_missing_latency_named_for_contracted_chain():
    """The machine model lacks the FMA latency the contracted chain needs: named, not skipped."""
    k, _ = _recurrence(shared_temporaries(3))
    skx = load_machine(SKX)
    no_fma_lat = dataclasses.replace(skx, micro_architecture="", in_core=dataclasses.replace(
        skx.in_core, latency={op: v for op, v in skx.in_core.latency.items() if op != "FMA"}))
    assert missing_data(k, no_fma_lat) == [("latency", "FMA")]
    documented = dataclasses.replace(no_fma_lat, micro_architecture="SKX")  # Skylake-SP: FMA 4 cy by the manuals
    assert missing_data(k, documented) == []


def test_reduction_and_plain_write_back():
    """``s += a[i]`` is a reduction (one ADD per path); ``s = s*a[i] + a[i]`` is not."""
    k, _ = parse_kernel("double a[N];\ndouble s;\nfor (int i = 0; i < N; ++i)\n  s += a[i];\n")
    (r,) = k.recurrences
    assert r.reassociable and r.graph.longest_chain() == (1.0, ("ADD",))
    k, _ = parse_kernel("double a[N];\ndouble s;\nfor (int i = 0; i < N; ++i)\n  s = s*a[i] + a[i];\n")
    (r,) = k.recurrences
    assert not r.reassociable and r.graph.longest_chain({"MUL": 5, "ADD": 3}) == (8, ("MUL", "ADD"))


@pytest.mark.parametrize("n", [18, 40])
def test_temporaries_without_recurrence(n):
    """The same temporaries writing another array: no loop-carried dependency at all."""
    text = shared_temporaries(n).replace("double a[N];", "double a[N], b[N];").replace(f"a[i] = t{n};",
                                                                                        f"b[i] = t{n};")
    k, _ = parse_kernel(text)
    assert k.recurrences == ()
    assert k.operations == {"ADD": n - 1, "MUL": n}
