"""Invariants of the data-traffic predictors (layer conditions and cache simulation), and the
cases from the field that broke them.

Property tests draw random affine kernels (``kernel_strategies``), the bundled machines and sizes;
they are derandomized (``PROPERTY_SETTINGS``), so every run checks the same examples.
"""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernel_strategies as ks
from helpers import KERNELS, analyze, run_cli

from loopmodel.ir.point import check_point
from loopmodel.predictors.layer_conditions import LayerConditionAnalysis


# --- whole-data-set and layer-condition limits: only where the loop runs, only where monotone ---------

def test_long_range_limits_only_where_the_loop_runs():
    """3d-long-range, N=600, ``--lc-variable M``: the loop ``k = 4 .. M-4`` is empty for M <= 8, where
    the data-set formula counts a negative number of planes; the whole-data-set limits were
    ``M <= 5 (exact 5.29)``, ``M <= 5``, ``M <= 9 (exact 8.81)``. No M with a running loop keeps the
    data set in any level: never fulfilled, from M = 9 on."""
    res = run_cli("analyze", KERNELS / "3d-long-range.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=600", "-D", "M=50",
                  "--lc-variable", "M", "-p", "LC")
    assert res.returncode == 0, res.stderr
    whole = res.stdout.split("Whole data set (repeated sweeps):")[1].splitlines()[1:4]
    assert [line.split(":")[0].strip() for line in whole] == ["L1", "L2", "L3"]
    assert all("never fulfilled (M >= 9 for a non-empty iteration space)" in line for line in whole), whole
    doc = json.loads(run_cli("analyze", KERNELS / "3d-long-range.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=600",
                             "-D", "M=50", "--lc-variable", "M", "-p", "LC", "--json").stdout)
    assert [lv["whole_data_set"]["max_size_exact"] for lv in doc["layer_conditions"]] == [None] * 3


def test_whole_data_set_limit_is_the_largest_size_keeping_it():
    """N=100: L3 keeps the data set up to M = 143.75; ``M <= 144`` (the nearest integer) claimed it
    at 144. The printed limit is the largest size at which the condition holds."""
    res = run_cli("analyze", KERNELS / "3d-long-range.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=100", "-D", "M=50",
                  "--lc-variable", "M", "-p", "LC")
    whole = res.stdout.split("Whole data set (repeated sweeps):")[1].splitlines()[1:4]
    assert "L1: never fulfilled (M >= 9" in whole[0]
    assert "L2: M <= 9   (exact 9.90)" in whole[1]
    assert "L3: M <= 143   (exact 143.75)" in whole[2]
