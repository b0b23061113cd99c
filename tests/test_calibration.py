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


# --- contention p0 from a 1..N-core curve (plain numbers) -------------------------------

from loopmodel.models.calibration import fit_link_bandwidth, fit_p0_curve  # noqa: E402
from loopmodel.models.scaling import P0_MAX, utilization  # noqa: E402

T_ECM, T_MEM = 40.0, 12.0
CORES = list(range(1, 11))


def _curve(p0, noise=None, scale=1.0):
    noise = noise or [0.0] * len(CORES)
    return [scale * utilization(n, T_ECM, T_MEM, p0) / T_MEM * (1 + e) for n, e in zip(CORES, noise)]


def test_exact_curve_gives_p0_back():
    fit = fit_p0_curve(CORES, _curve(0.3), T_ECM, T_MEM)
    assert fit.p0 == pytest.approx(0.3, rel=1e-4)
    assert fit.error < 1e-3
    assert [n for n, _, _ in fit.points] == CORES


def test_noisy_curve_in_bytes_per_second_gives_a_nearby_p0():
    scale = 2.4e9 * 64  # Hz x B/CL: CL/cy -> B/s
    noise = [0.01, -0.01, 0.005, -0.008, 0.01, -0.004, 0.006, -0.01, 0.002, -0.003]
    fit = fit_p0_curve(CORES, _curve(0.5, noise, scale), T_ECM, T_MEM, scale=scale)
    assert fit.p0 == pytest.approx(0.5, abs=0.08)
    assert fit.error < 2


@pytest.mark.parametrize("cores, measured, t_ecm, t_mem", [
    ([1], [1.0], 40, 12), ([1, 2], [1.0], 40, 12), ([0, 1], [1.0, 2.0], 40, 12),
    ([1, 2], [1.0, -2.0], 40, 12), ([1, 2], [1.0, 2.0], 0, 12), ([1, 2], [1.0, 2.0], 40, -1)])
def test_bad_curves(cores, measured, t_ecm, t_mem):
    with pytest.raises(ValueError):
        fit_p0_curve(cores, measured, t_ecm, t_mem)


@settings(max_examples=25, deadline=None)
@given(st.floats(0.05, P0_MAX))
def test_noise_free_curve_recovers_any_p0(p0):
    assert fit_p0_curve(CORES, _curve(p0), T_ECM, T_MEM).p0 == pytest.approx(p0, rel=1e-3)


# --- plateaus of a working-set sweep -----------------------------------------------------

CAPS = {"L1": 32e3, "L2": 1e6, "L3": 16e6, "MEM": float("inf")}


def _staircase():
    sizes = [2 ** k for k in range(12, 31)]  # 4 KiB .. 1 GiB
    def rate(s):  # L3 effectively ends at 8 MiB (shared host), not at its nominal 16 MB
        return 64.0 if s <= 32e3 else 32.0 if s <= 1e6 else 16.0 if s <= 2 ** 23 else 4.0
    return sizes, [rate(s) * (1 + 0.01 * ((-1) ** i)) for i, s in enumerate(sizes)]


def test_staircase_plateaus_and_effective_capacities():
    fits = {f.level: f for f in fit_link_bandwidth(*_staircase(), CAPS)}
    assert [fits[k].plateau for k in CAPS] == pytest.approx([64, 32, 16, 4], rel=0.02)
    assert fits["L1"].capacity == 2 ** 14
    assert fits["L2"].capacity == 2 ** 19
    assert fits["L3"].capacity == 2 ** 23
    assert fits["MEM"].capacity == 2 ** 30
    assert all(f.spread <= 0.021 for f in fits.values())


def test_bad_sweeps():
    with pytest.raises(ValueError):
        fit_link_bandwidth([1024], [1.0], CAPS)
    with pytest.raises(ValueError):
        fit_link_bandwidth([1024, 0], [1.0, 2.0], CAPS)
    with pytest.raises(ValueError):
        fit_link_bandwidth([1024, 2048], [1.0, 2.0], {"L1": 0})


def test_load_store_limit_recovered_from_l1_times():
    from loopmodel.models.calibration import fit_load_store_limit
    # instructions per CL, other limits, measured = max(other, n / 2.5)
    samples = [(n, t, max(t, n / 2.5)) for n, t in ((4, 1.0), (6, 1.5), (8, 2.0), (3, 2.0), (10, 1.0))]
    fit = fit_load_store_limit(samples)
    assert fit.per_cycle == pytest.approx(2.5, rel=1e-3)
    assert fit.error_after < 0.01 < fit.error_before


def test_no_load_store_limit_where_the_other_limits_explain_l1():
    from loopmodel.models.calibration import fit_load_store_limit
    fit = fit_load_store_limit([(4, 2.0, 1.9), (8, 3.0, 2.9)])
    assert fit.per_cycle is None and fit.error_after == fit.error_before
    with pytest.raises(ValueError):
        fit_load_store_limit([])
