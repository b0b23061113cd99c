#!/bin/sh
# Case 4 (Roofline against ECM): the command lines of 4.before / 4.after, run from the repository root.
K=benchmarks/results/one-owner/kernels
run() { echo "\$ loopmodel $*"; python -m loopmodel "$@" 2>&1 | awk '/^note: Roofline/ {p = 1; print; next} /^(note|caution|regimes):|^$/ {p = 0} p {print; next} /^\{|cy\/CL \(aggregate|^│ CPU|due to|^no floating|^performance/'; echo; }
run analyze $K/div.c -m SkylakeSP_Gold-6148 -D N=1000 -p ECM -p Roofline --incore analytic
run analyze $K/seidel-2d.c -m SkylakeSP_Gold-6148 -D N=5000 -p ECM -p Roofline --incore analytic
run analyze $K/int-triad.c -m SkylakeSP_Gold-6148 -D N=10000000 -p ECM -p Roofline --incore analytic
run analyze examples/kernels/triad.c -m SkylakeSP_Gold-6148 -D N=10000000 -p ECM -p Roofline --incore analytic
run analyze examples/kernels/triad.c -m SkylakeSP_Gold-6148 -D N=10000000 -p ECM -p Roofline --incore analytic --cores 4
