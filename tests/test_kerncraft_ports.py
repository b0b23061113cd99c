"""Kerncraft machine files read as the peer reads them: their port lists decide T_OL and T_nOL.

A Kerncraft file's ``non-overlapping model: ports`` names, per in-core analyzer, the ports whose
cycles are T_nOL (the peer's T_RegL1: the largest pressure on one of them, all instructions) and
``overlapping model: ports`` those whose cycles are T_OL (T_comp: the largest pressure on one of
them); kerncraft-tool-paper.txt §2.3. The converter marks such a file ``stores_in: ports``
(:meth:`loopmodel.machine.model.MachineModel.ports_decide`). Loopmodel's own machine files keep
their rule (``stores_in: T_OL`` on the Intel ECM built-ins, ``T_nOL`` elsewhere).

The tests build the compiled analysis from a port-pressure table (an OSACA-like result: no
per-instruction table, so nothing is rebalanced), so neither OSACA nor a compiler is needed;
the run through OSACA itself is skipped where it is not installed.
"""
from __future__ import annotations

import dataclasses
import shutil

import pytest
from hypothesis import given, settings, strategies as st

import kernel_strategies as ks
from helpers import KERNELS, SKX, SNB, reference_dir, run_cli
from loopmodel.compiled.incore import CompiledInCore, port_table, to_incore_result
from loopmodel.fileio.machine_files import load_machine

#: OSACA 0.7.1's port pressure (cy per pass, 4 iterations per pass) of gcc's AVX block of
#: examples/kernels/2d-5pt.c on the Kerncraft SandyBridgeEP file; 8 iterations per CL of work.
SNB_2D5PT = {"0": 3.0, "1": 3.0, "2": 5.0, "2D": 4.0, "3": 5.0, "3D": 4.0, "4": 2.0, "5": 5.0}
STORE_PORTS = ("2", "3", "4")


def _info(pressure: dict, analyzer: str = "osaca", store_ports=STORE_PORTS, per_pass: float = 4.0):
    """A compiled analysis with only a port table (as OSACA reports it), cy per pass."""
    return CompiledInCore(analyzer, "0", "gcc", "0", (), ".L4", "", per_pass, 32.0, dict(pressure),
                          max(pressure.values(), default=0.0), max(pressure.values(), default=0.0), "",
                          store_ports=tuple(store_ports))


def _kerncraft(name: str):
    return load_machine(str(reference_dir() / f"{name}.yml"))


# --- regression: case 2 (2-D 5-point on the peer's SandyBridgeEP and SkylakeSP files) -------------

@pytest.mark.parametrize("name", ["SandyBridgeEP_E5-2680", "SkylakeSP_Gold-6148", "ARMv8_ThunderX2-CN9980",
                                  "Zen_EPYC-7451"])
def test_kerncraft_file_lets_its_ports_decide(name):
    """A Kerncraft file with ``non-overlapping model: ports`` reads as ``stores_in: ports``; its
    stores count in T_OL for the analytic model (the paper's rule, no ports there)."""
    m = _kerncraft(name)
    assert m.in_core.stores_in == "ports" and m.ports_decide() and m.stores_overlap()


def test_2d5pt_osaca_table_gives_the_peers_split():
    """SandyBridgeEP file, OSACA table of 2d-5pt: T_OL 10 (ports 2, 3, 5: 5 cy per pass x 2 passes per
    CL), T_nOL 8 (2D/3D: 4 cy per pass x 2), the peer's T_comp 10 and T_RegL1 8; before, the store
    ports moved into T_nOL and it read 6.0 / 10.0."""
    m = _kerncraft("SandyBridgeEP_E5-2680")
    res = to_incore_result(_info(SNB_2D5PT), m, 8.0)
    assert (res.T_OL, res.T_nOL) == (pytest.approx(10.0), pytest.approx(8.0))
    rows = {r.port: r.role for r in port_table(_info(SNB_2D5PT), m, 8.0).rows}
    assert rows["2D"] == rows["3D"] == "T_nOL (all instructions)" and rows["4"] == "T_OL"


def test_llvm_mca_shared_port_counts_whole_in_both():
    """Kerncraft's llvm-mca lists put SBPort23 in both lists: its whole pressure (store addresses
    included) is T_nOL, as the peer's T_RegL1, and a T_OL candidate."""
    m = _kerncraft("SandyBridgeEP_E5-2680")
    table = port_table(_info({"SBPort23": 3.0, "SBPort4": 1.0, "SBPort0": 2.0, "SBPort1": 1.0}, "llvm-mca",
                             ("SBPort23", "SBPort4")), m, 4.0)
    assert (table.T_OL, table.T_nOL) == (3.0, 3.0)


@pytest.mark.parametrize("name, rule", [(SNB, "T_OL"), (SKX, "T_OL"), ("ThunderX2_CN9980", "T_nOL"),
                                        ("Zen_EPYC-7451", "T_nOL")])
def test_loopmodel_files_keep_their_rule(name, rule):
    """The built-in models are unchanged: their ``stores_in`` decides, never the port lists alone;
    the bundled SandyBridgeEP gives the same 10 / 8 on the same table (its loads are the whole
    pressure of the OSACA load-data ports)."""
    m = load_machine(name)
    assert m.in_core.stores_in == rule and not m.ports_decide()
    if name == SNB:
        res = to_incore_result(_info(SNB_2D5PT), m, 8.0)
        assert (res.T_OL, res.T_nOL) == (pytest.approx(10.0), pytest.approx(8.0))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("name, expected", [("SandyBridgeEP_E5-2680", "{ 10.0 || 8.0 |"),
                                            ("SkylakeSP_Gold-6148", "{ 5.0 || 4.0 |")])
def test_2d5pt_osaca_on_kerncraft_files(name, expected):
    """Through OSACA itself (skipped without it): the peer's T_comp / T_RegL1 (10 / 8 and 5 / 4)."""
    pytest.importorskip("osaca")
    r = run_cli("analyze", KERNELS / "2d-5pt.c", "-m", reference_dir() / f"{name}.yml", "-D", "M=5000",
                "-D", "N=5000", "--incore", "osaca", "--compiler", "gcc", timeout=300)
    assert r.returncode == 0, r.stderr
    assert expected in r.stdout


# --- invariant: T_nOL over exactly the non-overlapping ports ----------------------------------------

_PORTS = tuple(f"P{i}" for i in range(8)) + ("P2D", "P3D", "DIV")


@st.composite
def _tables(draw):
    """``(pressure, overlapping, non_overlapping, store ports)``: a port table and port lists drawn
    over the same names (a port may be in both lists, in either or in neither)."""
    pressure = draw(st.dictionaries(st.sampled_from(_PORTS), st.floats(0, 50, allow_nan=False), min_size=1))
    names = st.lists(st.sampled_from(_PORTS), unique=True, max_size=len(_PORTS))
    return pressure, draw(names), draw(names), draw(names)


def _with_ports(machine, analyzer: str, over, non, rule: str):
    ic = dataclasses.replace(machine.in_core, stores_in=rule,
                             analyzer_ports={analyzer: {"overlapping": list(over), "non_overlapping": list(non)}})
    return dataclasses.replace(machine, in_core=ic)


@settings(ks.PROPERTY_SETTINGS, max_examples=60)
@given(table=_tables(), machine=ks.machines(), analyzer=st.sampled_from(["osaca", "llvm-mca"]))
def test_ports_rule_is_max_over_the_lists(table, machine, analyzer):
    """60 generated tables on every built-in model made ``stores_in: ports``: T_nOL is the largest
    pressure on a non-overlapping port and T_OL the largest on an overlapping one (the lists not
    empty; 0 on an empty list), store ports or not: exactly the peer's T_RegL1 and T_comp."""
    pressure, over, non, stores = table
    m = _with_ports(machine, analyzer, over, non, "ports")
    if not over and not non:
        return  # no lists: the analyzer's own bound, not the lists' rule
    t = port_table(_info(pressure, analyzer, stores), m, 4.0)
    assert t.T_nOL == max((pressure.get(p, 0.0) for p in non), default=0.0)
    assert t.T_OL == max((pressure.get(p, 0.0) for p in over), default=0.0)


@settings(ks.PROPERTY_SETTINGS, max_examples=60)
@given(table=_tables(), machine=ks.machines(), analyzer=st.sampled_from(["osaca", "llvm-mca"]))
def test_own_files_rules_are_unchanged(table, machine, analyzer):
    """60 generated tables on the built-in models with their own ``stores_in``: with stores in T_OL
    the non-overlapping ports' load pressure is T_nOL and the overlapping ports (less those only
    non-overlapping) give T_OL; with stores in T_nOL the store-only ports join T_nOL and leave T_OL."""
    pressure, over, non, stores = table
    if not non:
        return
    rule = machine.in_core.stores_in
    m = _with_ports(machine, analyzer, over, non, rule)
    assert not m.ports_decide()
    t = port_table(_info(pressure, analyzer, stores), m, 4.0)
    shared = set(over) & set(non)
    if rule == "T_OL":
        assert t.T_nOL == max(pressure.get(p, 0.0) for p in non)
        assert t.T_OL == max((pressure.get(p, 0.0) for p in (set(over) - set(non)) | shared), default=0.0)
    else:
        nol = set(non) | set(stores)
        assert t.T_nOL == max(pressure.get(p, 0.0) for p in nol)
        assert t.T_OL == max((pressure.get(p, 0.0) for p in set(over) - nol), default=0.0)



def test_analytic_model_on_a_kerncraft_file_counts_stores_in_t_ol():
    """Without ports the analytic model takes the paper's rule on a ``stores_in: ports`` file: a
    store-only kernel has T_nOL 0 on the peer's SandyBridgeEP file, as on the built-in model."""
    case = ks.KernelCase("double a[N];\ndouble s;\nfor (int i = 0; i < N; ++i)\n  a[i] = s;\n", "k", 1, ("N",), (0,))
    path = str(reference_dir() / "SandyBridgeEP_E5-2680.yml")
    for machine in (path, SNB):
        res = ks.analyze(case, machine, {"N": 10 ** 6}, models=("ECM",))
        assert res.incore.T_nOL == 0.0 and res.incore.T_OL >= 1.0
