"""Property: for any kernel the analyzer accepts (the example kernels, C and YAML, and random
kernels of the supported grammar) on any bundled machine model at any sizes, the regime tags
are computed without an error, are known tags, come in :data:`REGIMES` order, and the
confidence attached to the result is the same."""
from __future__ import annotations

from functools import lru_cache

from hypothesis import assume, given, settings
from hypothesis import strategies as st

import kernel_strategies as ks
from helpers import KERNELS
from loopmodel.errors import LoopmodelError
from loopmodel.fileio.kernel_file import load_kernel
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
from loopmodel.workflows.confidence import REGIMES, regime_tags

EXAMPLES = tuple(sorted(p.name for p in KERNELS.iterdir() if p.suffix in (".c", ".yml")))


@lru_cache(maxsize=None)
def example(name: str):
    path = str(KERNELS / name)
    return load_kernel(path, use_cache=False)[0]


def check(kernel, machine, defines: dict, **options) -> None:
    try:
        res = Analyzer(kernel, ks.load(machine), AnalyzerSettings(incore="analytic", **options)).run(defines)
    except LoopmodelError:  # sizes or options the model refuses: not a case for the tags
        assume(False)
    got = regime_tags(res)
    assert set(got) <= set(REGIMES)
    assert list(got) == [t for t in REGIMES if t in got]
    assert res.confidence.tags == got and res.confidence.level in [lv.level for lv in res.machine.memory_hierarchy]


@settings(ks.PROPERTY_SETTINGS, max_examples=40)
@given(name=st.sampled_from(EXAMPLES), machine=st.sampled_from(ks.MACHINES),
       exponent=st.floats(0.5, 7.0), cores=st.integers(1, 2), predictor=st.sampled_from(("lc", "lc", "sim")),
       sweeps=st.sampled_from(("repeated", "single")))
def test_example_kernels_on_every_machine(name, machine, exponent, cores, predictor, sweeps):
    kernel = example(name)
    n = max(12, int(10 ** (exponent / max(1, len(kernel.loops)))))
    size = 10 ** 6 if predictor == "sim" else 10 ** 18
    assume(n ** len(kernel.loops) <= size)  # the cache simulation runs every iteration
    check(kernel, machine, {c: n for c in kernel.constants}, cores=cores, cache_predictor=predictor, sweeps=sweeps)


@settings(ks.PROPERTY_SETTINGS, max_examples=40)
@given(data=st.data(), machine=st.sampled_from(ks.MACHINES), scalar=st.booleans())
def test_random_kernels_on_every_machine(data, machine, scalar):
    case = data.draw(ks.kernels(strided=True) | ks.kernels(compute_only=True))
    defines = data.draw(ks.sizes(case, 10, 1e7))
    check(case.kernel, machine, defines, vectorize=not scalar)
