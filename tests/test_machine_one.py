"""The machine model is declared once and read once.

The frozen dataclasses of loopmodel.machine.model are the schema of a machine file (no
second, pydantic-model declaration beside them); units and benchmark tables are converted
when the file is read, so evaluating a model parses no strings; fileio does not import the
models layer.
"""
from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from helpers import BUILTINS, SKX, analyze


def test_no_second_declaration_of_the_machine_model():
    """fileio validates the dataclasses themselves: it declares no pydantic models of its own."""
    import inspect

    from pydantic import BaseModel

    from loopmodel.fileio import machine_schema

    declared = [name for name, obj in inspect.getmembers(machine_schema, inspect.isclass)
                if issubclass(obj, BaseModel) and obj.__module__ == machine_schema.__name__]
    assert declared == []


def test_bandwidths_and_tables_are_parsed_when_the_file_is_read():
    from loopmodel.fileio.machine_files import load_machine
    from loopmodel.machine.model import LevelMeasurements, LinkBandwidth

    m = load_machine(SKX)
    for lk in m.links:
        assert all(isinstance(b, LinkBandwidth) for b in lk.bandwidth)
    mem = m.benchmarks.measurements["MEM"]
    assert isinstance(mem, LevelMeasurements)
    assert mem.cores[:3] == (1, 2, 3)
    assert all(isinstance(v, float) for v in mem.bandwidths["copy"])
    # written '32 B/cy' and 'measured' in the file
    assert m.link("L2").bandwidth == (LinkBandwidth(32.0, "B/cy"),)
    assert m.link("L3").measured and m.link("L3").bandwidth == (LinkBandwidth(None, "measured"),)
    # written '60 GB/s' (kept in B/s: converted with the clock at evaluation)
    assert load_machine("SkylakeSP_Gold-6148_SNC").link("L3").bandwidth == (LinkBandwidth(60e9, "B/s"),)


def test_evaluation_parses_no_quantity(monkeypatch):
    """ECM and Roofline on a loaded model read no unit strings (units.parse_quantity is not called)."""
    from loopmodel import units
    from loopmodel.fileio.machine_files import load_machine
    from loopmodel.machine import model as dm

    load_machine(SKX)  # read (and cached) before parsing is forbidden

    def forbidden(*args, **kwargs):
        raise AssertionError(f"parse_quantity{args} called at evaluation")

    monkeypatch.setattr(units, "parse_quantity", forbidden)
    monkeypatch.setattr(dm, "parse_quantity", forbidden, raising=False)
    res = analyze("triad.c", SKX, {"N": 10**6}, models=("ECM", "Roofline"))
    assert res is not None


@pytest.mark.parametrize("name", BUILTINS)
def test_link_bandwidths_in_bytes_per_cycle(name):
    """B/s links are converted with the clock at evaluation (a clock override does not scale them)."""
    from loopmodel.fileio.machine_files import load_machine

    m = load_machine(name)
    slow = dataclasses.replace(m, clock=m.clock / 2)
    for lk in m.links:
        for b, fast_cy, slow_cy in zip(lk.bandwidth, m.link_bandwidths_cy(lk, 1e10),
                                       slow.link_bandwidths_cy(lk, 1e10)):
            if b.unit == "B/cy":
                assert fast_cy == slow_cy == b.value
            else:
                assert slow_cy == pytest.approx(2 * fast_cy)


def test_fileio_does_not_import_models():
    code = ("import sys, loopmodel.fileio.machine_schema, loopmodel.fileio.machine_files\n"
            "bad = sorted(m for m in sys.modules if m.startswith('loopmodel.models'))\n"
            "assert not bad, bad\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_p0_limit_is_one_constant():
    from loopmodel.machine.model import P0_MAX
    from loopmodel.models import scaling

    assert scaling.P0_MAX is P0_MAX
