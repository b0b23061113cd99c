"""llvm-mca back-end: run it on the kernel's loop block and read its report.

The newest installed ``llvm-mca-NN`` (Debian's llvm packages) is preferred over plain
``llvm-mca``. Per pass of the block we read: the pressure per resource (port), the block
reciprocal throughput and the simulated cycles per iteration (which exceed the
throughput bound when a loop-carried dependency limits the loop).
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from ..errors import ToolError

ITERATIONS = 200


@dataclass(frozen=True)
class PortReport:
    """One analyzer run: cycles per pass of the block.

    Attributes:
        ports: resource name -> cycles per pass (max over units of a group).
        block_throughput: reciprocal throughput of the block (cy per pass).
        cycles_per_pass: simulated cycles per pass (dependencies included).
        raw: the analyzer's report text.
    """

    ports: dict
    block_throughput: float
    cycles_per_pass: float
    raw: str


def find_llvm_mca() -> str | None:
    """Path of the newest llvm-mca (``llvm-mca-NN`` or ``llvm-mca``), or None."""
    cands = []
    for d in os.environ.get("PATH", "").split(os.pathsep):
        for p in glob.glob(os.path.join(d, "llvm-mca-[0-9]*")):
            m = re.search(r"llvm-mca-(\d+)$", p)
            if m and os.access(p, os.X_OK):
                cands.append((int(m.group(1)), p))
    if cands:
        return max(cands)[1]
    return shutil.which("llvm-mca")


def version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    m = re.search(r"LLVM version ([\d.]+)", out)
    return m.group(1) if m else "unknown"


def run(block_text: str, cpu: str, path: str | None = None, aarch64: bool = False) -> PortReport:
    """Analyze ``block_text`` for ``-mcpu=cpu``.

    Raises:
        ToolError: llvm-mca missing or failing (one line).
    """
    path = path or find_llvm_mca()
    if path is None:
        raise ToolError("llvm-mca not found (Debian: apt-get install llvm); or use --incore analytic")
    cmd = [path, f"-mcpu={cpu}", f"-iterations={ITERATIONS}", "-instruction-info=false"]
    if aarch64:
        cmd.append("-mtriple=aarch64-linux-gnu")
    try:
        p = subprocess.run(cmd, input=block_text, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        raise ToolError("llvm-mca did not finish within 120 s") from None
    if p.returncode != 0:
        first = next((ln for ln in p.stderr.splitlines() if "error" in ln), p.stderr.strip().split("\n")[0])
        raise ToolError(f"llvm-mca failed (-mcpu={cpu}): {first.strip()}")
    return parse(p.stdout)


def parse(text: str) -> PortReport:
    """Parse an llvm-mca report (``-instruction-info=false``).

    Raises:
        ToolError: the report lacks the expected sections.
    """
    try:
        its = int(re.search(r"^Iterations:\s+(\d+)", text, re.M).group(1))
        total = int(re.search(r"^Total Cycles:\s+(\d+)", text, re.M).group(1))
        rthr = float(re.search(r"^Block RThroughput:\s+([\d.]+)", text, re.M).group(1))
        res = dict(re.findall(r"^\[([\d.]+)\]\s+-\s+(\S+)", text, re.M))
        lines = text.split("Resource pressure per iteration:")[1].strip().split("\n")
    except (AttributeError, IndexError):
        raise ToolError("cannot read llvm-mca's report (unexpected format)") from None
    heads = re.findall(r"\[([\d.]+)\]", lines[0])
    vals = lines[1].split()
    ports: dict = {}
    for h, v in zip(heads, vals):
        name = res.get(h, h)
        c = 0.0 if v == "-" else float(v)
        ports[name] = max(ports.get(name, 0.0), c)
    return PortReport(ports, rthr, total / its, text)
