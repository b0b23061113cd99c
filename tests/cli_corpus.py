"""Command lines whose output (stdout, stderr, exit status and files written) is fixed: every
command, text and JSON, errors included. ``tests/test_cli_corpus.py`` runs each against the
recorded output in ``tests/fixtures/corpus/outputs.json`` and checks that the Python API gives
the CLI's JSON document for the same inputs.

Placeholders: ``{tmp}`` a fresh empty folder per command line (files written there are part
of the output); ``{coherence}`` a machine file with a made-up coherence table (``omp``).
Every analysis names ``--incore analytic`` (or a command that defaults to it), so that the
output does not depend on which in-core analyzers the host has.
"""
K = "examples/kernels/"
SKX = "SkylakeSP_Gold-6148"
HSW = "HaswellEP_E5-2695v3"
IVB = "IvyBridgeEP_E5-2690v2"
AN = ("--incore", "analytic")
W = ("--w0", "23.6 W", "--w1", "1.9 W/GHz", "--w2", "1.2 W/GHz^2")

COMMANDS = [
    # analyze: one size, text
    ("analyze", K + "3d-long-range.c", "-m", IVB, "-D", "M=130", "-D", "N=1015", *AN),
    ("analyze", K + "triad.c", "-m", SKX, "-D", "N=10000000", *AN),
    ("analyze", K + "2d-5pt.c", "-m", HSW, "-D", "M=2000", "-D", "N=2000", *AN, "-v"),
    ("analyze", K + "daxpy.c", "-m", SKX, "-D", "N=1000000", *AN, "--unit", "FLOP/s"),
    ("analyze", K + "daxpy.c", "-m", SKX, "-D", "N=1000000", *AN, "--unit", "it/s", "-p", "ECM"),
    ("analyze", K + "dot.c", "-m", SKX, "-D", "N=1000000", *AN, "--no-reassociation"),
    ("analyze", K + "dot.c", "-m", SKX, "-D", "N=1000000", *AN, "--reassociation", "--scalar"),
    ("analyze", K + "2d-5pt.c", "-m", SKX, "-D", "M=2000", "-D", "N=500", *AN, "--cores", "20"),
    ("analyze", K + "2d-5pt.c", "-m", SKX, "-D", "M=300", "-D", "N=300", *AN, "-P", "sim"),
    ("analyze", K + "triad.c", "-m", HSW, "-D", "N=4000000", *AN, "--nt-stores", "-p", "ECM"),
    ("analyze", K + "triad.c", "-m", HSW, "-D", "N=4000", *AN, "--sweeps", "single", "-p", "ECM"),
    ("analyze", K + "3d-7pt.c", "-m", SKX, "-D", "N=200", "-D", "M=200", *AN, "--cache-factor", "0.5", "-p", "LC"),
    ("analyze", K + "3d-7pt.c", "-m", SKX, "-D", "N=200", "-D", "M=200", *AN, "--lc-variable", "N", "-p", "LC"),
    ("analyze", K + "matvec.c", "-m", IVB, "-D", "N=3000", "-D", "M=3000", *AN, "--mem-bw", "40 GB/s"),
    ("analyze", K + "uxx.c", "-m", SKX, "-D", "N=100", *AN, "--clock", "2.0 GHz", "-p", "ECM", "-p", "Roofline"),
    ("analyze", K + "box27.c", "-m", SKX, "-D", "L=100", *AN, "-p", "ECMData", "-p", "ECMCPU"),
    ("analyze", K + "daxpy.yml", "-m", SKX, "-D", "N", "1000000", "-i", "ANALYTIC", "--unit", "cy/It"),
    ("analyze", K + "2d-5pt.yml", "-m", SKX, "--define", "N", "5000", "--define", "M", "5000"),
    ("analyze", K + "2d-5pt.c", "-m", SKX, "-D", "M=300", "-D", "N=300", *AN, "-P", "sim",
     "--array-alignment", "64 B", "--array-padding", "128 B", "-p", "LC"),
    # analyze: one size, JSON
    ("analyze", K + "triad.c", "-m", SKX, "-D", "N=10000000", *AN, "--json"),
    ("analyze", K + "2d-5pt.c", "-m", HSW, "-D", "M=1000", "-D", "N=1000", *AN, "-P", "sim", "--json"),
    ("analyze", K + "dot.c", "-m", IVB, "-D", "N=1000", *AN, "--cores", "4", "--json"),
    ("analyze", K + "daxpy.c", "-m", SKX, "-D", "N=1000000", *AN, "--json", "{tmp}/out.json"),
    ("analyze", K + "daxpy.c", "-m", SKX, "-D", "N=1000000", *AN, "--json={tmp}/out.json", "-p", "ECM"),
    # analyze: size ranges (text rows, JSON Lines)
    ("analyze", K + "daxpy.c", "-m", SKX, "-D", "N=1000:100000:20000", *AN, "--no-progress"),
    ("analyze", K + "2d-5pt.c", "-m", SKX, "-D", "M=1000", "-D", "N=100:2100:500", *AN, "--json"),
    ("analyze", K + "daxpy.c", "-m", SKX, "-D", "N=10-1000000:3log10", *AN, "-p", "ECM", "--unit", "cy/it"),
    # analyze: errors
    ("analyze", K + "triad.c", "-m", "NoSuchMachine", "-D", "N=1000", *AN),
    ("analyze", K + "no-such-kernel.c", "-m", SKX, "-D", "N=1000", *AN),
    ("analyze", K + "triad.c", "-m", SKX, "-D", "Q=1000", *AN),
    ("analyze", K + "triad.c", "-m", SKX, "-D", "N=1000", *AN, "--cache-factor", "2"),
    ("analyze", K + "triad.c", "-m", SKX, "-D", "N=1000", *AN, "--mem-bw", "fast"),
    ("analyze", K + "triad.c", "-m", SKX, "-D", "N=1000", *AN, "-p", "Magic"),
    ("analyze", K + "triad.c", "-m", SKX, "-D", "N=1000", "--incore", "iaca"),
    ("analyze", K + "triad.c", "-m", SKX, "-D", "N=1000", *AN, "--sweeps", "sometimes"),
    ("analyze", K + "triad.c", "-m", SKX, "-D", "N=1000", *AN, "--assume-aligned", "48"),
    ("analyze", K + "triad.c", "-m", SKX, "-D", "N=1000", *AN, "--array-padding", "-3"),
    ("analyze", K + "triad.c", "-m", SKX, "-D", "N=1000", *AN, "--clock", "fast"),
    ("analyze", K + "daxpy.yml", "-m", SKX, "-D", "N=1000", "--incore", "llvm-mca"),
    ("analyze", K + "triad.c", "-m", SKX, "-D", "N=1000", *AN, "--plot", "{tmp}/p.png"),
    ("analyze", K + "triad.c", "-D", "N=1000"),
    # scaling
    ("scaling", K + "triad.c", "-m", SKX, "-D", "N=10000000", *AN),
    ("scaling", K + "2d-5pt.c", "-m", SKX, "-D", "M=2000", "-D", "N=500", *AN, "--model", "both", "--cores", "1,2,4,8"),
    ("scaling", K + "triad.c", "-m", HSW, "-D", "N=10000000", *AN, "--json", "--model", "saturation"),
    ("scaling", K + "daxpy.c", "-m", SKX, "-D", "N=10000000", *AN, "--placement", "one-domain", "--p0", "0.3",
     "--cores", "1:4"),
    ("scaling", K + "triad.c", "-m", SKX, "-D", "N=10000000", *AN, "--measured",
     "tests/fixtures/corpus/measured.json", "--fit-p0", "--cores", "1:4"),
    ("scaling", K + "triad.c", "-m", SKX, "-D", "N=10000000", *AN, "--data-in", "L5"),
    ("scaling", K + "triad.c", "-m", SKX, "-D", "N=10000000", *AN, "--cores", "1:99"),
    ("scaling", K + "triad.c", "-m", SKX, "-D", "N=1000:2000:1000", *AN),
    ("scaling", K + "triad.c", "-m", SKX, "-D", "N=100000", *AN, "--fit-p0"),
    # compare
    ("compare", K + "triad.c", "-m", SKX, "-m", "Zen_EPYC-7451", "-D", "N=10000000", *AN),
    ("compare", K + "triad.c", "-m", SKX, "-m", HSW, "-D", "N=10000000", *AN, "-o", "json"),
    ("compare", K + "triad.c", "-m", SKX, "-m", "NoSuchMachine", "-D", "N=1000", *AN),
    ("compare", K + "no-such-kernel.c", "-m", SKX, "-D", "N=1000", *AN),
    # energy
    ("energy", K + "triad.c", "-m", SKX, "-D", "N=10000000", *AN, "--cores", "1:4", *W),
    ("energy", K + "daxpy.c", "-m", SKX, "-D", "N=10000000", *AN, "--cores", "1,2", "--clock", "1.6:2.4:0.4 GHz",
     "--json", *W),
    ("energy", K + "triad.c", "-m", SKX, "-D", "N=10000000", *AN, "--cores", "1:2"),
    ("energy", K + "daxpy.c", "-m", SKX, "-D", "N=10000000", *AN, "--w0", "20 W", "--w1", "2 W/GHz", "--w2",
     "1 W/GHz^2", "--cores", "2", "--model", "saturation"),
    ("energy", K + "daxpy.c", "-m", SKX, "-D", "N=10000000", *AN, "--w0", "lots", "--w1", "2 W/GHz", "--w2",
     "1 W/GHz^2"),
    # app
    ("app", "examples/pcg/pcg.yml", "-m", SKX, "--incore", "analytic"),
    ("app", "examples/pcg/pcg.yml", "-m", SKX, "--incore", "analytic", "--cores", "1,4,8", "--json"),
    ("app", "examples/pcg/pcg.yml", "-m", SKX, "--incore", "analytic", "--p0", "9"),
    ("app", "tests/fixtures/corpus/missing-app.yml", "-m", SKX),
    # codegen
    ("codegen", K + "triad.c", "-D", "N=1000"),
    ("codegen", K + "2d-5pt.c", "-D", "N=100", "-D", "M=100", "--assume-aligned", "64"),
    ("codegen", K + "triad.c"),
    ("codegen", K + "daxpy.yml", "-D", "N=10"),
    # machine
    ("machine", "list"),
    ("machine", "show", SKX),
    ("machine", "show", "examples/machines/EpycZen4_2vCPU.yml"),
    ("machine", "show", "nosuch"),
    ("machine", "convert", "tests/fixtures/corpus/kerncraft-machine.yml"),
    ("machine", "convert", "tests/fixtures/corpus/kerncraft-machine.yml", "-o", "{tmp}/converted.yml"),
    ("machine", "convert", "tests/fixtures/corpus/kerncraft-machine.yml", "-o", "README.md"),
    ("machine", "probe", "--cores", "x"),
    ("machine",),
    # sweep
    ("sweep", "examples/studies/stencil-sizes.yml", "--workers", "1", "--no-progress"),
    ("sweep", "tests/fixtures/corpus/study.yml", "--workers", "1", "--no-progress", "-o", "{tmp}/r.csv"),
    ("sweep", "tests/fixtures/corpus/missing-study.yml"),
    ("sweep", "examples/studies/stencil-sizes.yml", "-o", "{tmp}/r.txt"),
    # omp (a made-up coherence table)
    ("omp", "examples/omp/dot_thread0.c", "-m", "{coherence}", "-D", "N=100000", "--threads", "1,2"),
    ("omp", "examples/omp/cg_banded.c", "-m", "{coherence}", "-D", "N=20000", "--json", "--threads", "1:2"),
    ("omp", "examples/omp/dot_mkl.yml", "-m", "{coherence}", "--threads", "1:2"),
    ("omp", "examples/omp/dot_thread0.c", "-m", SKX, "-D", "N=1000"),
    ("omp", "examples/omp/cg_banded.c", "-m", "{coherence}", "-D", "N=1000:3000:1000", "--threads", "1:2"),
    ("omp", "examples/omp/dot_firsttouch.c", "-m", "{coherence}", "-D", "N=1000", "-D", "N=5000", "--json"),
    # measuring commands: what they refuse before running anything
    ("bench", K + "no-such-kernel.c", "-D", "N=1000"),
    ("bench", K + "daxpy.yml", "-D", "N=1000"),
    ("bench", K + "triad.c", "-D", "N=1000", "--threads", "0"),
    ("bench", K + "triad.c", "-D", "N=1000", "--cache", "lukewarm"),
    ("validate", K + "triad.c", "-m", "NoSuchMachine", "-D", "N=1000"),
    ("validate", K + "no-such-kernel.c", "-m", SKX, "-D", "N=1000"),
    ("roofline", K + "triad.c", "-m", "NoSuchMachine", "-D", "N=1000"),
    ("roofline", K + "triad.c", "-m", SKX, "-D", "N=1000", "--cache", "tepid"),
    ("measure", "copy"),
    ("measure", "triad", "--size", "huge"),
    ("measure", "triad", "--repetitions", "0"),
    ("measure", "triad", "--min-time", "-1"),
    # top level, and the help of every command (generated from the Options dataclasses)
    ("nosuchcommand",),
    (),
    ("--help",),
    ("--version",),
    *((command, "--help") for command in ("analyze", "scaling", "compare", "energy", "app", "codegen", "bench", "validate",
                                          "roofline", "measure", "omp", "sweep", "machine")),
    ("machine", "probe", "--help"),
    ("machine", "convert", "--help"),
]
