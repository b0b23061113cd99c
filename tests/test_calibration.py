"""Fitted in-core load+store limit: synthetic measurements with known answers."""
from __future__ import annotations

import pytest

from loopmodel.models.calibration import fit_load_store_limit


def test_load_store_limit_recovered_from_l1_times():
    # instructions per CL, other limits, measured = max(other, n / 2.5)
    samples = [(n, t, max(t, n / 2.5)) for n, t in ((4, 1.0), (6, 1.5), (8, 2.0), (3, 2.0), (10, 1.0))]
    fit = fit_load_store_limit(samples)
    assert fit.per_cycle == pytest.approx(2.5, rel=1e-3)
    assert fit.error_after < 0.01 < fit.error_before


def test_no_load_store_limit_where_the_other_limits_explain_l1():
    fit = fit_load_store_limit([(4, 2.0, 1.9), (8, 3.0, 2.9)])
    assert fit.per_cycle is None and fit.error_after == fit.error_before
    with pytest.raises(ValueError):
        fit_load_store_limit([])
