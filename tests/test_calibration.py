"""Fitted latency penalty of the memory link: synthetic measurements with known answers."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopmodel.models.calibration import PenaltySample, fit_latency_penalty


def _samples(penalty, noise=(0.0, 0.0, 0.0)):
    """Three memory-bound kernels (hand-made ECM terms): copy-like 2 CL, triad-like 4 CL,
    stencil-like 3 CL over the memory link; measured = busy time + penalty x CL, with noise."""
    kernels = [(2.0, 20.0, 2.0), (3.0, 35.0, 4.0), (8.0, 26.0, 3.0)]  # T_OL, t_transfer, CL
    return [PenaltySample(t_ol, tr, cl, (tr + penalty * cl) * (1 + e))
            for (t_ol, tr, cl), e in zip(kernels, noise)]


def test_exact_measurements_give_the_penalty_back():
    """Measured = busy time + 3 cy per CL: copy 20 + 6 = 26, triad 35 + 12 = 47, stencil 26 + 9 = 35."""
    fit = fit_latency_penalty(_samples(3.0))
    assert [s.measured for s in _samples(3.0)] == [26.0, 47.0, 35.0]
    assert fit.penalty == pytest.approx(3.0, abs=1e-6)
    assert fit.error_after == pytest.approx(0.0, abs=1e-6)
    assert fit.predicted == pytest.approx((26.0, 47.0, 35.0))
    # without the penalty the busy times are off by 6/26, 12/47, 9/35: mean 24.7 %
    assert fit.error_before == pytest.approx(100 * (6 / 26 + 12 / 47 + 9 / 35) / 3)


def test_noisy_measurements_give_a_nearby_penalty():
    fit = fit_latency_penalty(_samples(5.0, noise=(0.02, -0.03, 0.01)))
    assert fit.penalty == pytest.approx(5.0, abs=0.5)
    assert fit.error_after < 3.0 < fit.error_before


def test_no_penalty_where_the_busy_time_already_explains_the_measurement():
    fit = fit_latency_penalty(_samples(0.0, noise=(-0.05, -0.02, -0.04)))  # faster than modelled
    assert fit.penalty == 0.0 and fit.error_after == fit.error_before


def test_overlapping_in_core_time_hides_a_penalty():
    """A kernel bound by T_OL = 40 cy/CL measures 40 cy/CL whatever the penalty up to 10: it cannot
    pull the fit; the memory-bound sample alone decides it (20 + 2 x 4 = 28)."""
    samples = [PenaltySample(40.0, 20.0, 2.0, 40.0), PenaltySample(1.0, 20.0, 2.0, 28.0)]
    assert fit_latency_penalty(samples).penalty == pytest.approx(4.0, abs=1e-6)


@pytest.mark.parametrize("samples,words", [
    ([], "no samples"),
    ([PenaltySample(1.0, 10.0, 2.0, 0.0)], "measured time"),
    ([PenaltySample(1.0, -1.0, 2.0, 10.0)], "model times"),
    ([PenaltySample(1.0, 10.0, 0.0, 12.0)], "no sample moves data"),
])
def test_bad_samples(samples, words):
    with pytest.raises(ValueError, match=words):
        fit_latency_penalty(samples)


@settings(max_examples=50, deadline=None)
@given(st.floats(min_value=0.0, max_value=40.0))
def test_noise_free_measurements_recover_any_penalty(penalty):
    assert fit_latency_penalty(_samples(penalty)).penalty == pytest.approx(penalty, abs=1e-6)
