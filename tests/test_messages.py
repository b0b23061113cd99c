"""Messages new users meet when an in-core analyzer is missing: notes printed verbatim (rich would
read ``[osaca]`` in ``pip install 'loopmodel[osaca]'`` as a markup tag and drop it), and
suggestions that name only an alternative that can run here (not the analyzer that has just
refused)."""
from __future__ import annotations

import re
import sys

import pytest

from helpers import KERNELS, SKX

import loopmodel.compiled.osaca_backend as osaca_backend
from loopmodel.cli import main
from loopmodel.compiled import available
from loopmodel.fileio.machine_files import load_machine
from loopmodel.report import roofline as roofline_report
from loopmodel.report.plain import PlainConsole

DAXPY = str(KERNELS / "daxpy.c")
OSACA_HINT = "OSACA is not installed (pip install 'loopmodel[osaca]')"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: the numerical integration loop: the analytic model leaves out its index conversion and says so
PI = "double sum, dx, x;\nfor (int i = 0; i < N; ++i) {\n  x = (i + 0.5) * dx;\n  sum = sum + 4.0 / (1.0 + x * x);\n}\n"


def _flat(text: str) -> str:
    """``text`` without colour codes, its lines joined (notes are wrapped to the console width)."""
    return " ".join(ANSI.sub("", text).split())


@pytest.fixture
def no_osaca(monkeypatch):
    monkeypatch.setattr(osaca_backend, "available", lambda: False)


@pytest.fixture
def no_llvm_mca(monkeypatch, tmp_path):
    monkeypatch.setenv("LOOPMODEL_LLVM_MCA", str(tmp_path / "no-such-llvm-mca"))


@pytest.fixture
def fake_llvm_mca(monkeypatch, tmp_path):
    """An llvm-mca that is found (its availability is all these tests ask; it never runs)."""
    tool = tmp_path / "llvm-mca"
    tool.write_text("#!/bin/sh\nexit 1\n")
    tool.chmod(0o755)
    monkeypatch.setenv("LOOPMODEL_LLVM_MCA", str(tool))


@pytest.fixture
def fake_osaca(monkeypatch):
    """OSACA installed, as far as the availability check asks (never run here)."""
    monkeypatch.setattr(osaca_backend, "available", lambda: True)


def test_osaca_is_found_without_being_imported(tmp_path, monkeypatch):
    """Whether OSACA is installed is asked of the import system, not by importing it (networkx and
    pyparsing: 0.2-0.4 s of every compiled analysis, warm or not)."""
    (tmp_path / "osaca").mkdir()
    (tmp_path / "osaca" / "__init__.py").write_text("raise RuntimeError('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "osaca", raising=False)
    assert osaca_backend.available() and "osaca" not in sys.modules
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(tmp_path)])
    assert not osaca_backend.available()


def test_an_analyzer_that_runs_looks_up_no_alternative(fake_llvm_mca, monkeypatch):
    """The alternative a refusal suggests (:func:`available.instead`, which asks for every analyzer)
    is looked up only when the analyzer named is refused."""
    from loopmodel.compiled import incore, llvm_mca

    monkeypatch.setattr(llvm_mca, "version", lambda tool: "19.1.7")
    monkeypatch.setattr(available, "instead", lambda *a: pytest.fail("an alternative looked up"))
    assert incore._analyzer_tool(load_machine(SKX), "llvm-mca", suggest=True)[1] == "19.1.7"


@pytest.mark.parametrize("terminal", [False, True], ids=["plain", "rich"])
@pytest.mark.parametrize("command", [["analyze", DAXPY, "-m", SKX, "-D", "N=1000", "--no-cache"],
                                     ["scaling", DAXPY, "-m", SKX, "-D", "N=10000000", "--no-cache"]])
def test_missing_analyzers_note_is_verbatim_and_suggests_nothing_that_refused(
        command, terminal, no_osaca, no_llvm_mca, monkeypatch, capsys):
    """--incore auto with neither analyzer: the note keeps '[osaca]' (plain text and rich's
    console alike) and names no --incore that just failed: the analytic model is used."""
    if terminal:
        monkeypatch.setenv("FORCE_COLOR", "1")  # rich's own console, as on a terminal
    assert main(command) == 0
    out = _flat(capsys.readouterr().out)
    assert OSACA_HINT in out
    assert "llvm-mca not found (Debian: apt-get install llvm)" in out and "analytic model used" in out
    assert "--incore llvm-mca" not in out and "--incore osaca" not in out


def test_a_note_with_brackets_is_printed_verbatim_by_every_console(capsys, monkeypatch):
    notes = ["OSACA is not installed (pip install 'loopmodel[osaca]')", "a[i] and b[j][k] \\[x]"]
    roofline_report.render([], [], notes, PlainConsole(200))
    plain = capsys.readouterr().out
    rich_console = pytest.importorskip("rich.console").Console(width=200, force_terminal=True)
    roofline_report.render([], [], notes, rich_console)
    rich = ANSI.sub("", capsys.readouterr().out)
    for n in notes:
        assert f"note: {n}\n" in plain and f"note: {n}" in rich


def test_explicit_osaca_missing_suggests_llvm_mca_only_where_it_runs(no_osaca, fake_llvm_mca, capsys):
    assert main(["analyze", DAXPY, "-m", SKX, "-D", "N=1000", "--incore", "osaca", "--no-cache"]) == 2
    assert capsys.readouterr().err == f"loopmodel: {OSACA_HINT}; or use --incore llvm-mca\n"


def test_explicit_osaca_missing_without_llvm_mca_suggests_the_analytic_model(no_osaca, no_llvm_mca, capsys):
    assert main(["analyze", DAXPY, "-m", SKX, "-D", "N=1000", "--incore", "osaca", "--no-cache"]) == 2
    assert capsys.readouterr().err == f"loopmodel: {OSACA_HINT}; or use --incore analytic\n"


def test_explicit_llvm_mca_missing_suggests_osaca_where_it_models_the_cpu(no_llvm_mca, fake_osaca, capsys):
    assert main(["analyze", DAXPY, "-m", SKX, "-D", "N=1000", "--incore", "llvm-mca", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err == "loopmodel: llvm-mca not found (Debian: apt-get install llvm); or use --incore osaca\n"


def test_usable_analyzers(no_llvm_mca, fake_osaca):
    """OSACA has no model of POWER9: with it installed and no llvm-mca, analytic is suggested."""
    skx, p9 = load_machine(SKX), load_machine("Power9_8335-GTX")
    assert available.usable(skx, "osaca") and not available.usable(skx, "llvm-mca")
    assert not available.usable(p9, "osaca")
    assert available.instead(skx, ("llvm-mca",)) == "osaca" and available.instead(skx, ("osaca",)) == "analytic"
    assert available.instead(p9, ("llvm-mca",)) == "analytic"


@pytest.mark.parametrize("tools, named", [(("llvm-mca",), "--incore llvm-mca"), ((), None)],
                         ids=["llvm-mca-found", "none"])
def test_analytic_note_names_a_compiled_analysis_only_where_one_runs(tools, named, tmp_path, monkeypatch, capsys,
                                                                     no_osaca):
    """The analytic model leaves out the index's int-to-double conversion and says a compiled
    analysis counts it: naming --incore llvm-mca where llvm-mca is found, no --incore otherwise."""
    if tools:
        tool = tmp_path / "llvm-mca"
        tool.write_text("#!/bin/sh\nexit 1\n")
        tool.chmod(0o755)
        monkeypatch.setenv("LOOPMODEL_LLVM_MCA", str(tool))
    else:
        monkeypatch.setenv("LOOPMODEL_LLVM_MCA", str(tmp_path / "none"))
    src = tmp_path / "pi.c"
    src.write_text(PI)
    assert main(["analyze", str(src), "-m", SKX, "-D", "N=1000000", "--incore", "analytic", "--no-cache"]) == 0
    out = _flat(capsys.readouterr().out)
    note = next(n for n in out.split("note: ") if "integer-to-floating-point conversion" in n)
    assert "a compiled in-core analysis" in note
    if named:
        assert f"a compiled in-core analysis ({named}) counts it" in note
    else:
        assert "--incore" not in note


def test_probe_time_is_the_same_in_the_hint_and_the_help(monkeypatch, tmp_path, capsys):
    """The hint of a missing '-m host' model and 'machine probe --help' give the one measured
    figure (fileio.host_models.PROBE_TIME), minutes for the probe and for --quick."""
    from loopmodel.fileio.host_models import PROBE_TIME

    assert re.fullmatch(r"about \d+ minutes? on 2 cores; --quick about \d+", PROBE_TIME)
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["analyze", DAXPY, "-m", "host", "-D", "N=1000", "--incore", "analytic"]) == 2
    assert f"({PROBE_TIME})" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["machine", "probe", "--help"])
    assert f"(the probe takes {PROBE_TIME})" in _flat(capsys.readouterr().out)
