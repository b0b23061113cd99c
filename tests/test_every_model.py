"""Every command's model on every bundled machine model: a number, or one line saying what the
model lacks (the machine library's promise, docs/machines.md)."""
from __future__ import annotations

import math

import pytest

import loopmodel
from helpers import KERNELS, ROOT, analyze
from loopmodel.errors import DefineError
from loopmodel.fileio.machine_files import builtin_names, load_machine
from loopmodel.workflows import energy, omp

MODELS = builtin_names()


@pytest.mark.parametrize("name", MODELS)
def test_ecm_and_roofline_on_every_model(name):
    """ECM per data location and a Roofline bottleneck, a derived bandwidth where none is measured."""
    res = analyze("triad.c", name, {"N": 10 ** 7}, models=("ECM", "Roofline"))
    assert all(math.isfinite(v) and v > 0 for v in res.ecm.T_ECM.values())
    assert res.roofline is not None and res.roofline.bottleneck
    machine = load_machine(name)
    derived = [n for n in res.notes if "derived from the machine model's ECM transfer rates" in n]
    assert bool(derived) == any(lv.level not in machine.benchmarks.measurements for lv in machine.memory_hierarchy)


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("kernel", ["dot.c", "daxpby.c"])
def test_reductions_have_an_ecm_total(name, kernel):
    res = analyze(kernel, name, {"N": 10 ** 7}, models=("ECM",), reassociate=False)
    assert res.ecm.T_ECM["MEM"] is not None and math.isfinite(res.ecm.T_ECM["MEM"])


@pytest.mark.parametrize("name", MODELS)
def test_scaling_on_every_model(name):
    rep = loopmodel.scaling(KERNELS / "triad.c", name, {"N": 10 ** 7}, incore="analytic")
    for curve in rep.curves:
        rates = [p.it_per_s for p in curve.points]
        assert len(rates) == load_machine(name).cores_per_socket * load_machine(name).sockets or len(rates) >= 1
        assert all(r > 0 and math.isfinite(r) for r in rates)
        assert all(b >= a * (1 - 1e-9) for a, b in zip(rates, rates[1:]))  # a core more never slows it down


@pytest.mark.parametrize("name", MODELS)
def test_omp_on_every_model(name):
    """The estimated coherence section lets ``omp`` run, and the result says it is estimated."""
    res = omp.run(str(ROOT / "examples" / "omp" / "dot_thread0.c"), name,
                  omp.OmpOptions(threads="1,2", define=("N=100000",)))
    assert all(r.prediction.total_seconds > 0 and math.isfinite(r.prediction.total_seconds) for r in res.rows)
    assert any("estimated" in n for n in res.notes)


@pytest.mark.parametrize("name", MODELS)
def test_energy_says_what_the_model_lacks(name):
    machine = load_machine(name)
    if machine.power is not None:
        assert energy.run(str(KERNELS / "triad.c"), name, energy.EnergyOptions(define=("N=10000000",)))
        return
    with pytest.raises(DefineError) as exc:
        energy.run(str(KERNELS / "triad.c"), name, energy.EnergyOptions(define=("N=10000000",), incore="analytic"))
    assert "power" in str(exc.value) and "\n" not in str(exc.value)


def test_compare_puts_every_model_in_one_table():
    rep = loopmodel.compare(KERNELS / "triad.c", "all", {"N": 10 ** 7}, incore="analytic")
    assert [r.machine for r in rep.rows] == MODELS
    assert all(r.analysis is not None for r in rep.rows)


@pytest.mark.parametrize("name", MODELS)
def test_cores_never_use_more_domains_than_the_machine_has(name):
    """Filling ccNUMA domains of cores_per_numa_domain cores one after the other uses at most the
    machine's domains with every core busy (Granite Rapids' SNC3: 128 cores in 3 domains)."""
    m = load_machine(name)
    total = m.cores_per_socket * m.sockets
    assert math.ceil(total / m.cores_per_numa_domain) <= m.numa_domains_per_socket * m.sockets
    assert math.ceil(m.cores_per_socket / m.cores_per_numa_domain) == m.numa_domains_per_socket
    rep = loopmodel.scaling(KERNELS / "triad.c", name, {"N": 10 ** 9}, incore="analytic", cores=f"{total}")
    assert rep.curves[0].points[-1].domains <= m.numa_domains_per_socket * m.sockets
