"""One saturation point for ``analyze --cores`` and ``scaling``.

The definition (cross-architecture-machine-models.txt §3.4.4, ecm-model-slides.txt "ECM
model – saturation", kerncraft-tool-paper.txt §3.2): n_s = ceil(T_ECM^Mem / T_Mem) and
P_sat = it_per_CL · f / T_Mem, with T_Mem the time the memory interface is *busy* (the sum of
the memory links' busy times, no latency penalties: those are part of the single-core T_ECM).
"""
from __future__ import annotations

import json
import math
import re

import pytest

from helpers import ROOT, analyze, run_main_inprocess

from loopmodel.report import json_report
from loopmodel.report import scaling as scaling_report
from loopmodel.models.scaling import scaling

PWR9 = "Power9_8335-GTX"
MACHINES = sorted(p.stem for p in (ROOT / "src" / "loopmodel" / "machines").glob("*.yml"))


def _machine_numbers(name: str) -> dict:
    """Clock (Hz), CL size (B), memory bandwidth (B/s) and load penalty (cy/CL) read from the
    bundled YAML text itself (not through the machine-file loader)."""
    text = (ROOT / "src" / "loopmodel" / "machines" / f"{name}.yml").read_text()
    clock = float(re.search(r"^clock: ([\d.]+) GHz", text, re.M).group(1)) * 1e9
    cl = int(re.search(r"^cacheline_size: (\d+) B", text, re.M).group(1))
    mem = re.search(r"between: \[L3, MEM\], bandwidth: ([\d.]+) GB/s, penalty_load: ([\d.]+) cy", text)
    return {"clock": clock, "cl": cl, "mem_bw": float(mem.group(1)) * 1e9, "penalty": float(mem.group(2))}


def _json(*args) -> dict:
    p = run_main_inprocess(args, ROOT)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_daxpby_power9_one_saturation_point_by_hand():
    """daxpby on Power9 (paper §5.1-5.2): write-through L1, memory delivers x and y to L2, the
    victim L3 writes y back. Per CL of work (8 it): 2 CL from memory (plus 1.2 cy latency
    penalty each), 1 CL to memory; T_ECM^Mem = T_nOL + T_L1L2 + T_L2Mem + T_L3Mem (L2-L3 overlaps).
    The penalty-inclusive time (6.76 cy/CL) gave n_s = 3 and 3.67 G it/s in ``analyze`` while
    ``scaling`` said 4 and 5.68 G it/s."""
    nums = _machine_numbers(PWR9)
    assert nums == {"clock": 3.1e9, "cl": 64, "mem_bw": 136.4e9, "penalty": 1.2}
    b = nums["mem_bw"] / nums["clock"]  # 44 B/cy
    t_mem = 3 * 64 / b  # busy: 2 CL in + 1 CL out over the half-duplex memory interface = 4.36 cy/CL
    t_nol = (8 + 4) / 2  # 8 loads + 4 stores of 16 B, 2 per cy
    t_l1l2 = max(128 / 64, 64 / 16)  # two uni-directional links: 64 B/cy in, 16 B/cy out
    t_ecm = t_nol + t_l1l2 + (128 / b + 2 * nums["penalty"]) + 64 / b  # 16.76 cy/CL
    n_s = math.ceil(t_ecm / t_mem)
    p_sat = 8 * nums["clock"] / t_mem
    assert n_s == 4 and p_sat == pytest.approx(5.683e9, rel=1e-3)

    args = ("examples/kernels/daxpby.c", "-m", PWR9, "-D", "N=10000000", "--incore", "analytic", "--json")
    an = {n: _json("analyze", *args, "--cores", str(n), "--multicore-model", "saturation") for n in (2, 4, 6)}
    sc = _json("scaling", *args, "--cores", "1:6", "--model", "saturation")
    curve = sc["curves"][0]
    for n, doc in an.items():
        e = doc["ecm"]
        assert e["T_ECM_cy_per_cl"]["MEM"] == pytest.approx(t_ecm)
        assert e["memory_busy_cy_per_cl"] == pytest.approx(t_mem)
        assert e["saturation_cores"] == curve["saturation_cores"] == n_s
        assert e["performance"]["it_s"] == pytest.approx(min(n * 8 * nums["clock"] / t_ecm, p_sat))
        assert e["saturated_per_domain_it_s"] == pytest.approx(curve["saturated_per_domain_it_s"])
        assert e["saturated_per_domain_it_s"] == pytest.approx(p_sat)
        # the predicted performance for n cores: min(n P1, P_sat), the same in both commands
        point = curve["points"][n - 1]
        assert point["cores"] == n
        assert e["performance"]["it_s"] == pytest.approx(point["it_s"])
        assert e["performance"]["it_s"] == pytest.approx(min(n * 8 * nums["clock"] / t_ecm, p_sat))


def test_no_memory_traffic_saturates_nowhere():
    """Repeated sweeps of triad N=1000 stay in cache: nothing saturates, in both commands."""
    args = ("examples/kernels/triad.c", "-m", "SandyBridgeEP_E5-2680", "-D", "N=1000", "--cache-predictor", "sim",
            "--incore", "analytic")
    an = _json("analyze", *args, "--cores", "4", "--json")
    sc = _json("scaling", *args, "--cores", "1:4", "--json")
    assert an["ecm"]["memory_busy_cy_per_cl"] == 0
    assert an["ecm"]["saturation_cores"] is None and an["ecm"]["saturated_per_domain_it_s"] is None
    assert sc["curves"][0]["saturation_cores"] is None and sc["curves"][0]["saturated_per_domain_it_s"] is None
    assert an["ecm"]["performance"]["it_s"] == pytest.approx(sc["curves"][0]["points"][3]["it_s"])
    for cmd, more in (("analyze", ("--cores", "4")), ("scaling", ("--cores", "1:4"))):
        p = run_main_inprocess((cmd, *args, *more), ROOT)
        assert p.returncode == 0 and "no memory traffic (data in L" in p.stdout and "): nothing to saturate" in p.stdout, (cmd, p.stdout)
        assert "saturating at" not in p.stdout and "saturation point:" not in p.stdout


# larger than the L3 of all cores together on every bundled model (2 x 384 MiB on Zen 4), so that the
# data stay in memory at any core count
KERNEL_SIZES = (("daxpby.c", {"N": 500_000_000}), ("triad.c", {"N": 500_000_000}),
                ("2d-5pt.c", {"N": 20_000, "M": 20_000}), ("dot.c", {"N": 500_000_000}))


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("kernel,defines", KERNEL_SIZES, ids=[k for k, _ in KERNEL_SIZES])
def test_analyze_and_scaling_agree(machine, kernel, defines):
    """For every bundled machine: ``analyze --cores n`` and ``scaling`` (saturation rule, from the
    single-core analysis) give the same n_s, P_sat and performance at n cores, with n inside the
    first ccNUMA domain, one past it and the whole machine; where no shared cache caps the cores,
    that is sum over the domains of min(m · P1, P_sat)."""
    one = analyze(kernel, machine, defines, models=("ECM",), incore="analytic")
    m, it = one.machine, one.traffic.iterations_per_unit
    if one.ecm.unknown:
        pytest.skip(f"no T_ECM on {machine}: {one.ecm.unknown}")
    per_dom, total = m.cores_per_numa_domain, m.cores_per_socket * m.sockets
    counts = sorted({2, min(per_dom + 1, total), total})
    sc = scaling_report.to_dict([scaling(one.ecm, m, counts, it, "saturation")], one)["curves"][0]
    p1 = it * m.clock / one.ecm.T_ECM["MEM"]
    docs = {n: analyze(kernel, machine, defines, models=("ECM",), incore="analytic", cores=n,
                       multicore_model="saturation") for n in counts}
    for n, point in zip(counts, sc["points"]):  # the multicore performance
        assert docs[n].ecm.T_ECM == pytest.approx(one.ecm.T_ECM)  # data in memory at any core count
        e = json_report.to_dict(docs[n])["ecm"]
        assert e["saturation_cores"] == sc["saturation_cores"]
        assert e["performance"]["it_s"] == pytest.approx(point["it_s"]), n
    p_sat = sc["saturated_per_domain_it_s"]
    if p_sat is not None:
        assert p_sat == pytest.approx(it * m.clock / sum(c.busy for c in one.ecm.contributions
                                                         if c.name.endswith("MEM")))
        assert sc["saturation_cores"] == math.ceil(p_sat / p1 - 1e-9)
    for n, point in zip(counts, sc["points"]):
        e = json_report.to_dict(docs[n])["ecm"]
        assert e["saturated_per_domain_it_s"] == pytest.approx(p_sat)
        if not docs[n].ecm.shared_links["MEM"]:
            full, rest = divmod(n, per_dom)
            expect = full * min(per_dom * p1, p_sat) + min(rest * p1, p_sat)
            assert point["it_s"] == pytest.approx(expect)
