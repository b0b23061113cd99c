"""--incore measured: the kernel benchmarked on this host with its data in L1 as the in-core time."""
from __future__ import annotations

import shutil
from importlib import resources

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from helpers import KERNELS, run_cli
from loopmodel.errors import OptionError
from loopmodel.fileio.c_kernel import parse_kernel_file
from loopmodel.workflows.incore_measured import L1_SHARE, data_set_bytes, l1_sizes

SIZES = {"triad.c": ("N",), "2d-5pt.c": ("M", "N"), "3d-7pt.c": ("M", "N"), "3d-long-range.c": ("M", "N"),
         "matvec.c": ("M", "N"), "box27.c": ("L",)}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(SIZES)), st.integers(50, 5000), st.sampled_from([32768, 49152, 65536]))
def test_l1_sizes_fit_in_l1(name, size, l1):
    """Invariant: the sizes returned hold a data set of at most L1_SHARE of L1, no constant grows,
    and the inner loop's size stays where the rest could shrink enough."""
    kernel, _ = parse_kernel_file(str(KERNELS / name))
    defines = {c: size for c in SIZES[name]}
    try:
        sizes = l1_sizes(kernel, defines, l1)
    except OptionError:
        return  # the smallest sizes do not fit (a long-range stencil's halo): refused, not measured
    assert data_set_bytes(kernel, sizes) <= L1_SHARE * l1
    assert all(sizes[k] <= defines[k] for k in defines)


def test_l1_sizes_keep_the_inner_loop_while_rows_fit():
    kernel, _ = parse_kernel_file(str(KERNELS / "2d-5pt.c"))
    sizes = l1_sizes(kernel, {"M": 5000, "N": 120}, 49152)
    assert sizes["N"] == 120 and sizes["M"] < 5000
    assert data_set_bytes(kernel, sizes) <= L1_SHARE * 49152


def test_a_bundled_machine_is_refused():
    p = run_cli("analyze", KERNELS / "triad.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=1000", "-p", "ECM",
                "--incore", "measured")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "model of this host" in p.stderr


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc needed")
def test_measured_incore_is_the_l1_composition(tmp_path):
    """On a (stand-in) model of this host, T_OL is the time measured with the data in L1 and the
    ECM prediction for data in L1 equals it: T_ECM^L1 = max(T_OL, T_nOL) with T_nOL capped."""
    import json
    data = yaml.safe_load(resources.files("loopmodel.machines").joinpath("SkylakeSP_Gold-6148.yml").read_text())
    data["probe"] = {"hostname": "test"}
    data["compiler"] = {"gcc": "-O2"}
    machine = tmp_path / "host.yml"
    machine.write_text(yaml.safe_dump(data))
    p = run_cli("analyze", KERNELS / "triad.c", "-m", machine, "-D", "N=100000", "-p", "ECM", "--incore",
                "measured", "--json", timeout=120)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["incore"]["source"] == "measured"
    t_ol, t_nol = d["ecm"]["T_OL_cy_per_cl"], d["ecm"]["T_nOL_cy_per_cl"]
    assert t_ol > 0 and t_nol <= t_ol
    assert d["ecm"]["by_location"]["L1"]["T_ECM_cy_per_cl"] == pytest.approx(t_ol)
    assert any("in-core time measured on this host" in n and "N=" in n for n in d["notes"])
