"""Shared helpers for the loopmodel test suite (imported as `helpers`; tests/ has no __init__.py)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "examples" / "kernels"
REFERENCE_MACHINES = ROOT.parent / "shared" / "reference-machine-files"
#: built-in models carrying the facts of a Kerncraft description of the same name (with measured bandwidths)
KERNCRAFT_BUILTINS = ("HaswellEP_E5-2695v3", "IvyBridgeEP_E5-2690v2", "SandyBridgeEP_E5-2680", "SkylakeSP_Gold-6148")
#: built-in models of cross-architecture-machine-models.txt (Tables 1-3) -> reference file with the cache facts
PAPER_BUILTINS = {"SkylakeSP_Gold-6148_SNC": "SkylakeSP_Gold-6148_SNC.yml", "Zen_EPYC-7451": "Zen_EPYC-7451.yml",
                  "ThunderX2_CN9980": "ARMv8_ThunderX2-CN9980.yml", "Power9_8335-GTX": None}
#: built-in models of current servers, each figure sourced in the file's provenance section
SERVER_BUILTINS = ("SapphireRapids_Xeon-8480", "GraniteRapids_Xeon-6980P", "Zen4_EPYC-9654", "Zen5_EPYC-9755",
                   "Grace_NeoverseV2", "Graviton3_NeoverseV1", "A64FX_FX1000")
BUILTINS = tuple(sorted(KERNCRAFT_BUILTINS + tuple(PAPER_BUILTINS) + SERVER_BUILTINS))
IVB = "IvyBridgeEP_E5-2690v2"
SNB = "SandyBridgeEP_E5-2680"
SKX = "SkylakeSP_Gold-6148"


def run_cli(*args, cwd=None, timeout=60) -> subprocess.CompletedProcess:
    """Run the real command line (``python -m loopmodel.cli ...``) and capture its output."""
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    return subprocess.run([sys.executable, "-m", "loopmodel.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout, env=env)


def analyze(kernel: str, machine: str, defines: dict, **options):
    """Library-level analysis of an example kernel (or a kernel path); the analytic in-core model
    unless ``incore`` is given (the library's default is the CLI's ``auto``)."""
    options.setdefault("incore", "analytic")
    from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
    from loopmodel.fileio.c_kernel import parse_kernel_file
    from loopmodel.fileio.machine_files import load_machine

    path = Path(kernel)
    if not path.is_absolute():
        path = KERNELS / kernel
    k, _ = parse_kernel_file(str(path))
    return Analyzer(k, load_machine(machine), AnalyzerSettings(**options)).run(defines)


def reference_dir() -> Path:
    """The Kerncraft reference machine files, or skip the test."""
    if not REFERENCE_MACHINES.is_dir() or not any(REFERENCE_MACHINES.glob("*.yml")):
        pytest.skip(f"reference machine files not available at {REFERENCE_MACHINES}")
    return REFERENCE_MACHINES


def reference_files() -> list:
    """Reference files for parametrization (empty list if the folder is absent)."""
    if not REFERENCE_MACHINES.is_dir():
        return []
    return sorted(REFERENCE_MACHINES.glob("*.yml"))


def run_cli_batch(jobs: dict) -> dict:
    """Run many CLI invocations concurrently: ``{key: (args, cwd)}`` -> ``{key: CompletedProcess}``.

    Every job is a separate real ``python -m loopmodel.cli`` process; running them side by
    side only saves wall time (interpreter start-up dominates each run).
    """
    from concurrent.futures import ThreadPoolExecutor

    workers = max(2, min(8, (os.cpu_count() or 2)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {key: pool.submit(run_cli, *args, cwd=cwd) for key, (args, cwd) in jobs.items()}
        return {key: f.result() for key, f in futures.items()}


def run_main_inprocess(args, cwd) -> subprocess.CompletedProcess:
    """Run ``loopmodel.cli.main(args)`` in this process (same code path as the console script,
    without the interpreter start-up); an escaping exception is reported like the interpreter
    would: a traceback on stderr and exit status 1."""
    import contextlib
    import io
    import traceback

    from loopmodel.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main([str(a) for a in args])
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except Exception:  # noqa: BLE001 - what a user would see
            err.write("Traceback (most recent call last):\n" + "".join(traceback.format_exc().splitlines(True)[1:]))
            rc = 1
    return subprocess.CompletedProcess(["loopmodel", *map(str, args)], rc, out.getvalue(), err.getvalue())


@__import__("functools").lru_cache(maxsize=None)
def tool_version(name: str) -> str | None:
    """Version string ("12.2.0", "14.0.6", "0.7.1") of ``gcc``, ``llvm-mca`` or ``osaca`` as loopmodel
    probes it (the versions it records with a compiled in-core result), or None when not installed."""
    import re
    import shutil

    if name == "llvm-mca":
        from loopmodel.compiled.llvm_mca import find_llvm_mca, version
        path = find_llvm_mca()
        text = version(path) if path else None
    elif name == "osaca":
        from loopmodel.compiled.osaca_backend import available, version
        text = version() if available() else None
    elif name == "gcc":
        from loopmodel.toolchain import tool_version as probe
        path = shutil.which("gcc")
        text = probe(path) if path else None  # "gcc (Debian 12.2.0-14) 12.2.0"
    else:
        raise ValueError(f"unknown tool {name!r}")
    found = re.findall(r"\d+(?:\.\d+)+", text or "")
    return found[-1] if found else None


def requires_tool(name: str, version: str, why: str = "expected values read from its output"):
    """Skip marker for a test whose expected numbers or strings were read from the output of one
    version of a tool: skip unless ``name``'s version starts with the components of ``version``
    ("12" matches 12.2.0, "0.7.1" only 0.7.1), saying which version was found."""
    found = tool_version(name)
    ok = found is not None and found.split(".")[:len(version.split("."))] == version.split(".")
    reason = f"{name} {version} needed ({why}); found {found or 'none'}"
    return pytest.mark.skipif(not ok, reason=reason)


#: the resource table of an llvm-mca report for -mcpu=sandybridge (the same in every SNB report), up
#: to the header of the per-iteration pressure row; a test adds the summary before it and the rows after
SNB_MCA_RESOURCES = """Resources:
[0]   - SBDivider
[1]   - SBFPDivider
[2]   - SBPort0
[3]   - SBPort1
[4]   - SBPort4
[5]   - SBPort5
[6.0] - SBPort23
[6.1] - SBPort23


Resource pressure per iteration:
[0]    [1]    [2]    [3]    [4]    [5]    [6.0]  [6.1]
"""


def schema_errors(doc: dict, command: str) -> list:
    """Problems of a ``--json`` document against its declared type (the source of the committed
    ``docs/schema/<command>.schema.json``)."""
    from loopmodel.report.doctypes import check

    return check(command, doc)
