"""The plain-text console (:mod:`loopmodel.report.plain`) writes what rich writes, byte for byte:
random strings with markup, random tables, and the analysis reports of several kernels, machines
and options; what it cannot lay out itself goes to rich."""
from __future__ import annotations

import contextlib
import io
import os

import pytest
from hypothesis import given, settings, strategies as st
from rich.console import Console
from rich.markup import escape as rich_escape

from helpers import IVB, KERNELS, SKX, SNB

from loopmodel.cli import arguments, main
from loopmodel.report import plain

#: characters that exercise markup, escapes, wrapping, emoji codes and what rich alone handles
TEXT = st.text(alphabet=st.sampled_from(list("ab c  [/]\\:=@xyz-bold dim it \n.,0123\tµ─")), max_size=80)
MARKUP = st.builds(lambda o, s, c: o + s + c, st.sampled_from(["", "[bold]", "[dim]", "[it]", "[b]"]), TEXT,
                   st.sampled_from(["", "[/bold]", "[/dim]", "[/]", "[/b]", "[/x]"]))
CELL = st.one_of(st.sampled_from(["", "a", "N", "1280", "L1-L2", "reuse distance [it]", "  x ", "x  ", "[CL]",
                                  "[bold]h[/bold]", "x[/y]", ":a:", "a b c d e", "µs", "n/a"]), TEXT)


def _rich(obj, width: int, **kw) -> str:
    buf = io.StringIO()
    Console(highlight=False, width=width, file=buf).print(obj, **kw)
    return buf.getvalue()


def _plain(obj, width: int, **kw) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        plain.PlainConsole(width).print(obj, **kw)
    return buf.getvalue()


def _outcome(render, *args, **kw):
    try:
        return render(*args, **kw)
    except Exception as exc:  # noqa: BLE001 - rich refuses bad markup: so must the plain console
        return type(exc).__name__


@settings(max_examples=600, deadline=None)
@given(MARKUP, st.integers(1, 50), st.sampled_from([None, False]))
def test_a_string_is_written_as_rich_writes_it(text, width, markup):
    assert _outcome(_plain, text, width, markup=markup) == _outcome(_rich, text, width, markup=markup)


@settings(max_examples=600, deadline=None)
@given(TEXT)
def test_escape_is_rich_escape(text):
    assert plain.escape(text) == rich_escape(text)


@settings(max_examples=400, deadline=None)
@given(st.data(), st.integers(5, 70))
def test_a_table_is_drawn_as_rich_draws_it(data, width):
    columns = data.draw(st.lists(st.tuples(CELL, st.sampled_from(["left", "right", "right", "center"])), max_size=5))
    table = plain.Table(title=data.draw(st.one_of(st.none(), MARKUP)),
                        title_justify=data.draw(st.sampled_from(["left", "left", "center"])))
    for header, justify in columns:
        table.add_column(header, justify=justify)
    for _ in range(data.draw(st.integers(0, 4))):
        table.add_row(*data.draw(st.lists(CELL, min_size=len(columns), max_size=len(columns))))
    assert _outcome(_plain, table, width) == _outcome(_rich, table, width)


def test_the_plain_path_writes_what_it_can_itself(monkeypatch):
    """Printable ASCII and a table that fits are written without rich (the tests above would also
    pass if everything went to rich); wide characters, emoji codes and a closing tag of nothing
    open go to rich."""
    table = plain.Table(title="t", title_justify="left")
    table.add_column("a")
    table.add_row("1")
    expected = _rich(table, 80)
    asked = []
    real = plain.rich_module
    monkeypatch.setattr(plain, "rich_module", lambda name: asked.append(name) or real(name))
    assert _plain(table, 80) == expected and _plain("[bold]x[/bold] y", 80) == "x y\n"
    assert asked == []
    for text in ("µs", ":smile:", "[bold]x[/dim]"):
        _outcome(_plain, text, 80)
        assert asked, text
        asked.clear()


def test_text_console_is_plain_only_where_rich_writes_no_escape_codes(monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    with contextlib.redirect_stdout(io.StringIO()):
        assert isinstance(plain.text_console(120), plain.PlainConsole)
        monkeypatch.setenv("FORCE_COLOR", "1")
        assert isinstance(plain.text_console(120), Console)


CASES = [
    ["3d-long-range.c", "-m", IVB, "-D", "M=130", "-D", "N=1015", "--incore", "analytic"],
    ["2d-5pt.c", "-m", SKX, "-D", "M=2000", "-D", "N=2000", "--incore", "analytic", "-v"],
    ["triad.c", "-m", SNB, "-D", "N=1000000", "--incore", "analytic", "--cores", "4", "--unit", "FLOP/s"],
    ["dot.c", "-m", "Zen_EPYC-7451", "-D", "N=100000", "--incore", "analytic", "-p", "LC", "-p", "Roofline"],
    ["matvec.c", "-m", "ThunderX2_CN9980", "-D", "M=500", "-D", "N=500", "--incore", "analytic", "--cache-predictor",
     "sim", "-vv"],
    ["2d-5pt.yml", "-m", "Power9_8335-GTX", "-D", "M=100", "-D", "N=100", "--sweeps", "single"],
    ["3d-7pt.c", "-m", IVB, "-D", "M=100", "-D", "N=100", "--incore", "analytic", "--unit", "It/s"],
]


@pytest.mark.parametrize("argv", CASES, ids=lambda a: f"{a[0]}-{a[2]}")
def test_analysis_reports_are_the_same_as_rich_writes_them(argv, monkeypatch):
    """The whole text report of ``loopmodel analyze``, plain console against rich's."""
    def report(console_class) -> str:
        monkeypatch.setattr(arguments, "text_console", lambda width: console_class(width))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["analyze", str(KERNELS / argv[0]), *argv[1:]]) == 0
        return out.getvalue()

    rich_text = report(lambda width: Console(highlight=False, width=width))
    assert report(plain.PlainConsole) == rich_text
    assert "----- " in rich_text and os.linesep == "\n"
