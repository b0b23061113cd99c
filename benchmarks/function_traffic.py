"""Per-nest data traffic of a kernel function: the model (each nest's own steady state, layer
conditions or cache simulation of the nest) against a cache simulation of the whole function
(its nests run one after the other on one simulated hierarchy, second call counted:
:func:`loopmodel.predictors.sequence_simulation.simulate_function`).

    python benchmarks/function_traffic.py POLYBENCH_ROOT [-m MACHINE] [--dataset SMALL]

Kernels: gemm, atax, jacobi-2d, fdtd-2d and the triangular lu, as PolyBench/C 4.2.1 ships them
(not vendored). Sizes: the dataset's, given to both the loop bounds (``-D ni=...``) and the
arrays (``-D NI=...``). Prints per nest and cache level: cache lines loaded + stored per CL of
work, model vs simulation, and the difference.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from polybench_suite import dataset_sizes, kernel_call  # noqa: E402

from loopmodel.fileio.kernel_file import load_kernel  # noqa: E402
from loopmodel.ir.kernel_source import KernelSource  # noqa: E402
from loopmodel.predictors.sequence_simulation import simulate_function  # noqa: E402
from loopmodel.workflows.analysis import AnalyzerSettings  # noqa: E402
from loopmodel.workflows.inputs import machine_model  # noqa: E402
from loopmodel.workflows.sequence import SequenceAnalyzer  # noqa: E402

KERNELS = ("linear-algebra/blas/gemm/gemm.c", "linear-algebra/kernels/atax/atax.c", "stencils/jacobi-2d/jacobi-2d.c",
           "stencils/fdtd-2d/fdtd-2d.c", "linear-algebra/solvers/lu/lu.c")


def rows(root: str, rel: str, machine, dataset: str) -> list:
    path = os.path.join(root, rel)
    function, params = kernel_call(path, dataset)
    sizes = dict(params)
    sizes.update({k: v for k, v in dataset_sizes(path[:-2] + ".h", dataset).items()})
    source = KernelSource(path, function, (os.path.join(root, "utilities"), os.path.dirname(path)),
                          tuple(sizes.items()))
    seq = load_kernel(source, use_cache=False)[0]
    defines = {k: v for k, v in sizes.items() if k in seq.constants}
    res = SequenceAnalyzer(seq, machine, AnalyzerSettings(models=("ECM",), incore="analytic")).run(defines)
    out = []
    for nest, simulated in zip(res.nests, (t.levels for t in simulate_function(seq, machine, defines))):
        for model, sim in zip(nest.result.traffic.levels, simulated):
            m, s = model.loads_cl + model.stores_cl, sim.loads_cl + sim.stores_cl
            out.append((os.path.basename(rel)[:-2], nest.nest.label, nest.result.traffic.predictor, model.level, m, s))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root")
    ap.add_argument("-m", "--machine", default="SkylakeSP_Gold-6148")
    ap.add_argument("--dataset", default="SMALL")
    args = ap.parse_args()
    machine = machine_model(args.machine)
    print(f"machine {args.machine}, {args.dataset}_DATASET; CL loaded + stored per CL of work on the link below "
          "each level")
    print(f"{'kernel':10s} {'nest':18s} {'model':5s} {'level':5s} {'model':>8s} {'whole-fn sim':>12s} {'diff':>8s}")
    for rel in KERNELS:
        for kernel, label, predictor, level, m, s in rows(args.root, rel, machine, args.dataset):
            diff = "-" if max(m, s) < 1e-9 else f"{(m - s) / max(s, 1e-9) * 100:+.0f} %" if s > 1e-9 else "inf"
            print(f"{kernel:10s} {label:18s} {predictor:5s} {level:5s} {m:8.3f} {s:12.3f} {diff:>8s}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
