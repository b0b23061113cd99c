"""What the user asked for by name fails with a one-line error; only ``--incore auto``'s own
choice of analyzer falls back to the analytic model."""
from __future__ import annotations

import importlib.util
import shutil

import pytest

from helpers import KERNELS, SNB, run_cli
from loopmodel.compiled.llvm_mca import find_llvm_mca

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc needed")
ANALYZER = find_llvm_mca() is not None or importlib.util.find_spec("osaca") is not None


@needs_gcc
@pytest.mark.parametrize("args,words", [
    # with an analyzer the label is looked up; without one the option cannot be honoured at all
    (("--asm-block", ".L99"), ("--asm-block .L99", "no loop with that label" if ANALYZER else
                               "no compiled in-core analysis possible")),
    (("--compiler", "no-such-cc-4711"), ("compiler 'no-such-cc-4711' not found",)),
    (("--compiler-flags", "-O3 'unclosed"), ("--compiler-flags", "cannot split")),
])
def test_explicit_option_that_cannot_be_honoured_is_an_error_under_auto(args, words):
    p = run_cli("analyze", KERNELS / "triad.c", "-m", SNB, "-D", "N=1000", "--incore", "auto", *args, "--no-cache")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
    assert all(w in p.stderr for w in words), p.stderr
    assert p.stdout == ""


def test_auto_still_falls_back_when_no_analyzer_works(monkeypatch):
    """Without llvm-mca and OSACA the analytic model is used, with a note (auto's own choice)."""
    from helpers import analyze

    import loopmodel.compiled.llvm_mca as mca
    import loopmodel.compiled.osaca_backend as osa
    monkeypatch.setattr(mca, "find_llvm_mca", lambda: None)
    monkeypatch.setattr(osa, "available", lambda: False)
    r = analyze("triad.c", SNB, {"N": 1000}, incore="auto", kernel_text=(KERNELS / "triad.c").read_text(),
                models=("ECM",), use_cache=False)
    assert r.incore.source == "analytic" and any("analytic model used" in n for n in r.notes)
