"""T_OL and T_nOL from port pressure have one definition, and the reports compute nothing.

``loopmodel.models.incore.port_pressure_times`` maps port pressure to (T_OL, T_nOL)
(kerncraft-tool-paper.txt §2.3) for both analyzers' paths; the balanced port table is
computed once (``compiled.incore.port_table``) and kept in the compiled result, which the
text and JSON reports only render.
"""
from __future__ import annotations

import io
import json
import shutil

import pytest
from helpers import KERNELS, SNB, analyze

from loopmodel.compiled import incore as compiled_incore_module
from loopmodel.compiled.incore import CompiledInCore, to_incore_result
from loopmodel.compiled.llvm_mca import find_llvm_mca
from loopmodel.compiled.ports import InstrPressure
from loopmodel.fileio.machine_files import load_machine
from loopmodel.models.incore import InCoreResult, port_pressure_times

needs_tools = pytest.mark.skipif(shutil.which("gcc") is None or find_llvm_mca() is None,
                                 reason="gcc and llvm-mca needed")


def test_port_pressure_times_by_hand():
    """Ports P0 (arithmetic, 2 cy), P4 (store data, 1 cy), P23 (address + load data, 3 cy of which
    loads 2 cy; listed as both): T_OL = 3 (P23's whole pressure), T_nOL = 2 (its loads)."""
    pressure = {"P0": 2.0, "P4": 1.0, "P23": 3.0, "P7": 5.0}
    loads = {"P23": 2.0, "P0": 9.0}
    assert port_pressure_times(pressure, loads, {"P0", "P4", "P23"}, {"P23"}) == (3.0, 2.0)
    # a port in neither list (P7) counts for neither; no lists at all: zero
    assert port_pressure_times(pressure, loads, set(), set()) == (0.0, 0.0)


def _info(analyzer, ports, instructions=()):
    return CompiledInCore(analyzer, "x", "gcc", "12", ("-O3",), ".L2", "vaddpd (%rax), %ymm0, %ymm0\n", 4.0, 32.0,
                          ports, 1.0, 1.0, "", tuple(instructions))


def test_both_analyzer_paths_use_the_one_definition(monkeypatch):
    """llvm-mca (per-instruction table) and OSACA (port totals) results go through port_pressure_times,
    and the T_OL/T_nOL of to_incore_result are its values per pass x iterations per CL / per pass."""
    seen = []

    def spy(pressure, load_pressure, over, non):
        seen.append((dict(pressure), set(over), set(non)))
        return 1.5, 0.5

    monkeypatch.setattr(compiled_incore_module, "port_pressure_times", spy)
    m = load_machine(SNB)
    mca = _info("llvm-mca", {"SBPort0": 1.0, "SBPort23": 1.0},
                [InstrPressure("vaddpd (%rax), %ymm0, %ymm0", {"SBPort1": 1.0, "SBPort23": 1.0})])
    osaca = _info("osaca", {"1": 1.0, "2": 0.5, "3": 0.5, "2D": 1.0})
    for info in (mca, osaca):
        r = to_incore_result(info, m, 8)
        assert (r.T_OL, r.T_nOL) == (1.5 * 8 / 4, 0.5 * 8 / 4)
    assert len(seen) == 2 and "SBPort23" in seen[0][2] and "2D" in seen[1][2]


def test_core_time_is_the_larger_of_t_ol_and_t_nol():
    """RooflineASM's CPU roof: max(T_OL, T_nOL) (T_ECM with data in L1), one property of the result."""
    assert InCoreResult("llvm-mca", 3.0, 5.0, {}, 4, {}).core_time == 5.0
    assert InCoreResult("llvm-mca", 6.0, 5.0, {}, 4, {}).core_time == 6.0


@needs_tools
def test_reports_render_the_stored_port_table(monkeypatch):
    """After the analysis no report balances ports again: with effective_ports disabled the text and
    JSON reports still render, from the table kept in the compiled result."""
    from rich.console import Console

    from loopmodel.report import json_report, text

    path = KERNELS / "triad.c"
    res = analyze(str(path), SNB, {"N": 10000}, incore="llvm-mca", kernel_text=path.read_text())
    table = res.compiled.port_table
    assert table is not None and [r.port for r in table.rows] == sorted(res.compiled.ports_cy_per_pass)

    def refuse(*_):
        raise AssertionError("port balancing re-run at render time")

    monkeypatch.setattr(compiled_incore_module, "effective_ports", refuse)
    out = io.StringIO()
    text.render(res, Console(file=out, width=200), verbose=1)
    assert "Port pressure" in out.getvalue()
    doc = json.loads(json.dumps(json_report.to_dict(res), default=str))
    assert doc["incore"]["compiled"]["balanced_ports_cy_per_pass"] == dict(sorted(table.balanced.items()))
    assert doc["incore"]["compiled"]["load_ports_cy_per_pass"] == dict(sorted(table.loads.items()))
    # the roles and cy/CL shown are the table's: T_nOL (loads) on the load port, its load pressure;
    # the port is listed as overlapping too, so its whole pressure is a T_OL candidate
    row = {r.port: r for r in table.rows}["SBPort23"]
    assert row.role == "T_nOL (loads) + T_OL (all)" and row.counted == row.loads
    assert row.counted_cy_per_cl == pytest.approx(row.loads * table.cy_per_cl_per_pass)
    # where T_OL and T_nOL come from, with their values, is printed under the table
    for name in ("T_OL", "T_nOL"):
        line = f"{name} = {getattr(res.incore, name):.2f} cy/CL from {res.incore.origin[name]}"
        assert line in out.getvalue()
