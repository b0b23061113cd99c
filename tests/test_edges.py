"""Edges that gave a traceback after all the work, or a silently wrong figure."""
from __future__ import annotations

import json
import shutil

from helpers import KERNELS, ROOT, SKX, run_cli


def _one_line_error(p, *words):
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
    assert all(w in p.stderr for w in words), p.stderr


def test_app_size_dividing_by_zero_is_an_error(tmp_path):
    """``M//0`` evaluated to 0 iterations (a loop that silently did no work)."""
    for name in ("dot.c", "daxpby.c"):
        shutil.copy(ROOT / "examples" / "pcg" / name, tmp_path / name)
    app = tmp_path / "app.yml"
    app.write_text("name: t\ndefines: {M: 100, N: 100}\nkernels:\n- {name: dot, file: dot.c, count: 1, "
                   "defines: {NN: M//0}}\n")
    _one_line_error(run_cli("app", app, "-m", SKX, "--incore", "analytic"), "M//0", "divides by zero")


def test_more_cores_than_the_machine_has_is_an_error():
    p = run_cli("analyze", KERNELS / "triad.c", "-m", SKX, "-D", "N=1000", "--cores", "100", "--incore", "analytic")
    _one_line_error(p, "--cores 100", "has 40 cores")


def test_scaling_plot_into_a_missing_folder_fails_before_the_work(tmp_path):
    target = tmp_path / "no-such-folder" / "x.png"
    p = run_cli("scaling", KERNELS / "triad.c", "-m", SKX, "-D", "N=10000000", "--plot", target,
                "--incore", "analytic")
    _one_line_error(p, "--plot", "does not exist")
    assert p.stdout == ""


def test_machine_convert_into_a_missing_folder_is_one_line(tmp_path):
    target = tmp_path / "no-such-folder" / "z.yml"
    p = run_cli("machine", "convert", "SandyBridgeEP_E5-2680", "-o", target)
    _one_line_error(p, "-o", "does not exist")


def test_repeated_define_adds_points_to_the_sweep():
    """As in Kerncraft: ``-D N 100 -D N 200`` is a sweep of two sizes (it used to keep the last)."""
    p = run_cli("analyze", KERNELS / "triad.c", "-m", SKX, "-D", "N=100", "-D", "N", "200", "-D", "N=100",
                "--incore", "analytic", "-p", "LC", "--json")
    assert p.returncode == 0, p.stderr
    docs = [json.loads(ln) for ln in p.stdout.splitlines() if ln.strip()]
    assert [d["defines"]["N"] for d in docs] == [100, 200]
