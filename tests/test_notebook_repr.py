"""The Python API's results in a notebook: ``_repr_html_`` (well-formed HTML holding the figures
of the text report, every text escaped) and ``.plot()`` (a matplotlib figure with the expected
artists, not held by pyplot)."""
from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest

import loopmodel
from helpers import KERNELS, SKX, run_cli
from loopmodel.measure.bench import BenchResult
from loopmodel.measure.kernel_bench import KernelMeasurement
from loopmodel.report import html as html_report
from loopmodel.report.figures import pyplot
from loopmodel.report.plain import Table

STENCIL = str(KERNELS / "2d-5pt.c")
SIZES = {"M": 2000, "N": 1000}
#: elements that have no end tag
VOID = {"br", "hr", "img", "meta", "link", "input", "col"}


class Checked(HTMLParser):
    """Parses HTML, checks that every element is closed in order, and keeps the text."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.stack, self.tags, self.data = [], [], []
        self.feed(text)
        self.close()
        assert not self.stack, f"unclosed elements {self.stack}"

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()

    def handle_data(self, data):
        self.data.append(data)

    @property
    def text(self) -> str:
        return "".join(self.data)


def _analysis(**options):
    return loopmodel.analyze(STENCIL, SKX, SIZES, incore="analytic", **options)


def test_result_html_holds_the_text_report_figures():
    """Every line of the ECM section of ``loopmodel analyze`` (the notation in cy/CL, the
    prediction per data location, the saturation point) and the layer conditions appear in
    the HTML's text; the tables are HTML tables."""
    res = _analysis()
    page = Checked(res._repr_html_())
    proc = run_cli("analyze", STENCIL, "-m", SKX, "-D", "M=2000", "-D", "N=1000", "--incore", "analytic")
    assert proc.returncode == 0, proc.stderr
    ecm = proc.stdout[proc.stdout.index("----- ECM -----") + 15:proc.stdout.index("regimes")]
    lines = [ln.strip() for ln in ecm.splitlines() if ln.strip() and ln.strip()[0] not in "┏┡└━"]
    assert "{ 5.0 || 4.0 | 3.0 | 8.0 | 4.3 } cy/CL" in lines and "{ 5.0 \\ 7.0 \\ 15.0 \\ 19.3 } cy/CL" in lines
    for line in lines:
        for cell in line.strip("┃│").split("│" if "│" in line else "┃"):
            assert cell.strip() in page.text, cell
    assert "L1: N <= 1024   (exact 1024.50)" in page.text
    assert "<h4>ECM</h4>" in res._repr_html_() and page.tags.count("table") == 4 and "Layer conditions (selected state per level)" in page.text
    assert res.ecm.notation() in page.text and f"prediction: {res.performance:.4g} cy/CL" in page.text


def test_result_html_escapes_names_and_conditions():
    kernel = loopmodel.Kernel.from_source((KERNELS / "2d-5pt.c").read_text(), name="<b>&stencil</b>.c")
    text = loopmodel.analyze(kernel, SKX, SIZES, incore="analytic")._repr_html_()
    assert "<b>&stencil</b>" not in text and html.escape("<b>&stencil</b>.c") in text
    assert "N &lt;= 1024" in text and "N <= 1024" not in text
    assert "<b>&stencil</b>.c" in Checked(text).text


def test_console_escapes_tables_and_resolves_markup():
    console = html_report.HtmlConsole()
    t = Table(title="a <title>")
    t.add_column("x \\[cy/CL]", justify="right")
    t.add_row("<script>")
    console.print("[bold]----- ECM -----[/bold]")
    console.print(t)
    console.print("a & b", markup=False)
    out = console.html()
    assert "<h4>ECM</h4>" in out and "<caption>a &lt;title&gt;</caption>" in out
    assert "x [cy/CL]</th>" in out and "&lt;script&gt;" in out and "<script>" not in out
    assert out.endswith("<pre>a &amp; b</pre>")
    Checked(out)


def test_result_plot_ecm_stack():
    fig = _analysis().plot()
    ax = fig.axes[0]
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert labels == ["T_OL", "T_ECM"]
    t_ecm = ax.get_lines()[1]
    assert list(t_ecm.get_ydata()) == pytest.approx([5.0, 7.0, 15.0, 19.30312], rel=1e-5)  # gcc's 256-bit vectors
    assert [c.get_label() for c in ax.containers] == ["T_nOL", "T_L1L2", "T_L2L3", "T_L3MEM"]
    tops = [sum(c[i].get_height() for c in ax.containers) for i in range(4)]
    assert tops == pytest.approx([4.0, 7.0, 15.0, 19.30312], rel=1e-5)  # T_nOL + transfers (eq. 4)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["data in L1", "data in L2", "data in L3", "data in MEM"]
    assert fig.number not in pyplot().get_fignums()  # detached: a notebook shows it once


def test_result_plot_roofline_and_bad_kind():
    res = _analysis()
    ax = res.plot("roofline").axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    star = next(ln for label, ln in lines.items() if label.startswith("prediction"))
    assert star.get_ydata()[0] == pytest.approx(res.roofline.performance)
    assert "(MEM bound)" in star.get_label() and ax.get_xscale() == "log"
    assert len(lines["kernel on each level's roof (I x b)"].get_xdata()) == 4
    with pytest.raises(loopmodel.ApiValueError, match="kind"):
        res.plot("bars")
    with pytest.raises(loopmodel.ModelError, match="ECM"):
        loopmodel.analyze(STENCIL, SKX, SIZES, models=("LC", "Roofline"), incore="analytic").plot()


def test_scaling_report_html_and_plot():
    rep = loopmodel.scaling(STENCIL, SKX, {"M": 20000, "N": 20000}, incore="analytic", cores="1:8")
    page = Checked(rep._repr_html_())
    assert rep.analysis.ecm.notation() in page.text and "saturation point: " in page.text
    assert page.tags.count("tr") == 1 + 8 and "T_ECM [cy/CL]" in page.text and "data in" in page.text
    ax = rep.plot().axes[0]
    model = next(ln for ln in ax.get_lines() if ln.get_label() == "contention model")
    assert list(model.get_xdata()) == list(range(1, 9))
    assert list(model.get_ydata()) == pytest.approx([p.it_per_s / 1e9 for p in rep.curves[0].points])


def _bench(n: int, seconds=(1e-6, 1.1e-6, 1.3e-6), threads=1) -> BenchResult:
    m = KernelMeasurement("k<1>.c", {"N": n}, n, seconds, "gcc", ("-O3",), 0, 10, True)
    return BenchResult("k<1>.c", {"N": n}, m, 3e9, 8, 2, threads=threads, openmp=threads > 1,
                       notes=("data <4 KiB & warm",))


def test_bench_report_html_and_plot():
    rep = loopmodel.BenchReport((_bench(1000), _bench(2000, (4e-6, 4e-6, 5e-6))))
    text = rep._repr_html_()
    page = Checked(text)
    best = rep[1].figures()["cy_per_CL"]
    assert f"<td style=\"text-align:right\">{best[0]:.2f}</td>" in text and "N=2000" in page.text
    assert "note: data &lt;4 KiB &amp; warm" in text and "note: data <4 KiB & warm" in page.text
    ax = rep.plot().axes[0]
    line = ax.get_lines()[0]
    assert list(line.get_xdata()) == [1000, 2000] and ax.get_xlabel() == "N"
    assert list(line.get_ydata()) == pytest.approx([rep[0].figures()["cy_per_CL"][0], best[0]])
    curve = loopmodel.BenchReport((_bench(1000), _bench(1000, threads=2)), curve=True)
    ax = curve.plot().axes[0]
    assert list(ax.get_lines()[0].get_xdata()) == [1, 2] and ax.get_xlabel() == "threads"


def test_compact_sweep_html_and_plots():
    sweep = loopmodel.sweep(STENCIL, SKX, {"M": 2000, "N": range(100, 50001, 100)}, models=("LC", "ECM"),
                            incore="analytic", compact=True)
    assert sweep.variable == "N" and len(sweep.ecm_points) == len(sweep.pieces)
    text = sweep._repr_html_()
    page = Checked(text)
    assert f"500 size points in {len(sweep.pieces)} pieces" in page.text
    rows = [[html.unescape(c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", text)]
    assert rows[0] == ["N from", "N to", "ecm.notation", "ecm.prediction_notation", "ecm.performance.cy_per_cl",
                       "confidence.level"]
    assert int(rows[1][0]) == 100 and int(rows[-1][1]) == 50000 and 3 <= len(rows) - 1 < len(sweep.pieces)
    for first, last, notation, _, cy, level in rows[1:]:  # a step: the figures of its first and last size alone
        for n in {int(first), int(last)}:
            alone = loopmodel.analyze(STENCIL, SKX, {"M": 2000, "N": n}, models=("LC", "ECM"), incore="analytic")
            assert (alone.ecm.notation(), f"{alone.performance:.4g}") == (notation, cy)
            assert alone.analysis.confidence.level == level
    ax = sweep.plot().axes[0]
    total = next(ln for ln in ax.get_lines() if ln.get_label() == "T_ECM")
    xs, ys = total.get_xdata(), total.get_ydata()
    assert xs[0] == 100 and xs[-1] == 50000
    for n in (100, 2000, 40000):  # the step holding n is the prediction of n analysed alone
        alone = loopmodel.analyze(STENCIL, SKX, {"M": 2000, "N": n}, models=("LC", "ECM"), incore="analytic")
        step = max(i for i, x in enumerate(xs) if x <= n)
        assert ys[step] == pytest.approx(alone.ecm.T_ECM["MEM"])
    ax = sweep.plot("ecm.performance.cy_per_cl").axes[0]
    assert ax.get_ylabel() == "ecm.performance [cy/CL]" and len(ax.get_lines()) == 1
    with pytest.raises(loopmodel.ApiValueError, match="no column"):
        sweep.plot("nothing")


def test_compact_sweep_of_two_sizes_has_no_plot():
    sweep = loopmodel.sweep(STENCIL, SKX, {"M": [100, 200], "N": [100, 200]}, models=("LC", "ECM"),
                            incore="analytic", compact=True)
    assert sweep.variable is None and not sweep.ecm_points
    with pytest.raises(loopmodel.ApiValueError, match="one size"):
        sweep.plot()
    Checked(sweep._repr_html_())
