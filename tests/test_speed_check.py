"""benchmarks/speed_check.py fails on a regression: a case whose ratio to the reference workload
exceeds twice its recorded ratio is named with both ratios, and the script exits 1; a case within
the limit passes; a case without a recorded ratio fails. (The speed itself is measured by the
script in CI, not here: these runs only check that it decides right.)"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

from helpers import ROOT

SCRIPT = ROOT / "benchmarks" / "speed_check.py"


def _module():
    spec = importlib.util.spec_from_file_location("speed_check", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("speed_check", mod)  # its dataclass looks its module up there
    spec.loader.exec_module(mod)
    return mod


def test_regressions_name_each_case_over_the_limit():
    sc = _module()
    recorded = {"a": {"ratio": 1.0}, "b": {"ratio": 2.0}, "c": {"ratio": 0.5}}
    lines = sc.regressions({"a": 2.5, "b": 3.9, "c": 1.0, "d": 1.0}, recorded)
    assert len(lines) == 2
    assert "a: ratio 2.500" in lines[0] and "recorded 1.000" in lines[0] and "2.50 x slower" in lines[0]
    assert "d: ratio 1.000" in lines[1] and "none recorded" in lines[1]
    assert sc.regressions({"a": 2.0, "b": 4.0, "c": 1.0}, recorded) == []  # exactly 2x is within the limit


def test_case_names_are_unique():
    names = [c.name for c in _module().CASES]
    assert len(names) == len(set(names))


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--only", "version", "--k", "3", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_the_script_fails_on_a_doctored_reference_and_passes_within_the_limit(tmp_path):
    reference = tmp_path / "reference.json"
    proc = _run("--record", "--reference", reference)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(reference.read_text())
    measured = data["cases"]["version"]["ratio"]
    assert measured > 0 and data["reference_s"] > 0
    data["cases"]["version"]["ratio"] = measured / 10  # as if loopmodel --version had been 10x faster
    reference.write_text(json.dumps(data))
    proc = _run("--reference", reference)
    failed = [ln for ln in proc.stdout.splitlines() if ln.startswith("speed_check: ")]
    assert proc.returncode == 1 and len(failed) == 1, proc.stdout + proc.stderr
    assert "version: ratio" in failed[0] and "x slower (limit 2 x)" in failed[0]
    data["cases"]["version"]["ratio"] = measured * 10
    reference.write_text(json.dumps(data))
    proc = _run("--reference", reference)
    assert proc.returncode == 0, proc.stdout + proc.stderr
