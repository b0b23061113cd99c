"""Malformed Kerncraft-format machine files: one line naming the file, the Kerncraft key and the problem.

Each case takes a reference file (read from ../shared at test time, never copied into the
repository), breaks one thing a user could get wrong when writing or editing such a file,
and runs both the analysis (``analyze -m BAD.yml``) and ``machine convert`` through the
command line: exit status 2, one line ``loopmodel: BAD.yml: <key path>: <problem>``, no
traceback and no KeyError/ValueError text.
"""
from __future__ import annotations

import copy

import pytest
import yaml

from helpers import KERNELS, REFERENCE_MACHINES, reference_dir, run_cli, run_main_inprocess

#: a reference file with cache descriptions, a victim cache, a full-duplex link and benchmarks
REFERENCE = "SkylakeSP_Gold-6148.yml"


def _plain(value):
    """PyYAML reads ``!!omap`` as lists of tuples; lists of pairs dump back as plain YAML."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


_BASE = None


def _base() -> dict:
    global _BASE
    if _BASE is None:
        path = reference_dir() / REFERENCE
        if not path.is_file():
            pytest.skip(f"{path} not available")
        _BASE = _plain(yaml.safe_load(path.read_text()))
    return copy.deepcopy(_BASE)


def _level(i):
    return lambda d: d["memory hierarchy"][i]


def _set(get, key, value):
    def mutate(d):
        target = get(d)
        if value is KeyError:
            del target[key]
        else:
            target[key] = value
        return d
    return mutate


def _top(key, value):
    return _set(lambda d: d, key, value)


def _cache(i, key, value):
    return _set(lambda d: d["memory hierarchy"][i]["cache per group"], key, value)


def _no_cache_description(d):
    for key in ("cache per group", "size per group"):
        del d["memory hierarchy"][1][key]
    return d


def _drop_kernel(d):
    del d["benchmarks"]["kernels"]["copy"]
    return d


def _short_results(d):
    d["benchmarks"]["measurements"]["MEM"][1]["results"]["copy"].pop()
    return d


#: id -> (mutation, key path the message must name, words of the problem)
CASES = {
    "cache_without_sets": (_cache(0, "sets", KeyError), "memory hierarchy[0].cache per group.sets", ("missing",)),
    "no_cache_description": (_no_cache_description, "memory hierarchy[1]", ("cache per group",)),
    "no_clock": (_top("clock", KeyError), "clock", ("missing",)),
    "clock_not_a_frequency": (_top("clock", "fast"), "clock", ("fast",)),
    "cores_per_socket_text": (_top("cores per socket", "twenty"), "cores per socket", ("'twenty'", "integer")),
    "sockets_zero": (_top("sockets", 0), "sockets", ("at least 1",)),
    "bandwidth_text": (_set(_level(1), "upstream throughput", ["fast", "half-duplex"]),
                       "memory hierarchy[1].upstream throughput", ("fast",)),
    "bandwidth_wrong_unit": (_set(_level(2), "upstream throughput", ["16 GHz", "full-duplex"]),
                             "memory hierarchy[2].upstream throughput", ("GHz",)),
    "duplex_unknown": (_set(_level(1), "upstream throughput", ["64 B/cy", "sideways"]),
                       "memory hierarchy[1].upstream throughput", ("sideways",)),
    "level_without_name": (_set(_level(2), "level", KeyError), "memory hierarchy[2].level", ("missing",)),
    "level_not_mapping": (lambda d: d["memory hierarchy"].__setitem__(1, "L2") or d, "memory hierarchy[1]",
                          ("mapping",)),
    "hierarchy_not_list": (_top("memory hierarchy", "L1 L2 L3"), "memory hierarchy", ("list",)),
    "cache_per_group_text": (_set(_level(0), "cache per group", "big"), "memory hierarchy[0].cache per group",
                             ("mapping",)),
    "sets_text": (_cache(1, "sets", "many"), "memory hierarchy[1].cache per group.sets", ("'many'", "integer")),
    "cores_per_group_text": (_set(_level(2), "cores per group", "all"), "memory hierarchy[2].cores per group",
                             ("'all'", "integer")),
    "cl_size_text": (_cache(0, "cl_size", "wide"), "memory hierarchy[0].cache per group.cl_size", ("'wide'",)),
    "cacheline_size_text": (_top("cacheline size", "wide"), "cacheline size", ("'wide'",)),
    "penalty_text": (_set(_level(3), "penalty cycles per cacheline load", "slow"),
                     "memory hierarchy[3].penalty cycles per cacheline load", ("'slow'", "number")),
    "flops_not_mapping": (_top("FLOPs per cycle", "lots"), "FLOPs per cycle", ("mapping",)),
    "benchmarks_not_mapping": (_top("benchmarks", "none"), "benchmarks", ("mapping",)),
    "benchmark_kernel_missing": (_drop_kernel, "benchmarks.measurements.L1.1.results.copy",
                                 ("'copy'", "not defined")),
    "benchmark_kernel_without_streams": (_set(lambda d: d["benchmarks"]["kernels"]["triad"], "read streams", KeyError),
                                         "benchmarks.kernels.triad.read streams", ("missing",)),
    "benchmark_streams_text": (_set(lambda d: d["benchmarks"]["kernels"]["load"]["read streams"], "streams", "one"),
                               "benchmarks.kernels.load.read streams.streams", ("'one'", "integer")),
    "benchmark_results_short": (_short_results, "benchmarks.measurements.MEM.1.results.copy",
                                ("one bandwidth per core count",)),
    "benchmark_result_unit": (lambda d: d["benchmarks"]["measurements"]["L2"][1]["results"]["load"]
                              .__setitem__(0, "12 GHz") or d, "benchmarks.measurements.L2.1.results.load", ("GHz",)),
    # physical ranges (loopmodel.machine.fields), named by the Kerncraft key
    "clock_huge": (_top("clock", "1e300 GHz"), "clock", ("too large",)),
    "clock_tiny": (_top("clock", "1e-30 GHz"), "clock", ("physical range", "1 MHz .. 100 GHz")),
    "cores_huge": (_top("cores per socket", 10 ** 9), "cores per socket", ("beyond any real machine",)),
    "sets_huge": (_cache(0, "sets", 10 ** 25), "memory hierarchy[0].cache per group.sets", ("beyond any real",)),
    "cache_beyond_1_tib": (_cache(2, "sets", 2 ** 36), "memory hierarchy[2].cache per group", ("1 TiB",)),
    "bandwidth_tiny": (_set(_level(1), "upstream throughput", ["1e-300 B/cy", "half-duplex"]),
                       "memory hierarchy[1].upstream throughput", ("physical range",)),
    "benchmark_result_tiny": (lambda d: d["benchmarks"]["measurements"]["L2"][1]["results"]["load"]
                              .__setitem__(0, "1e-300 GB/s") or d, "benchmarks.measurements.L2.1.results.load",
                              ("physical range",)),
    "top_level_list": (lambda d: ["memory hierarchy", d["memory hierarchy"]], None, ("mapping",)),
}


def _write(tmp_path, case) -> str:
    mutate = CASES[case][0]
    data = mutate(_base())
    (tmp_path / "BAD.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    return "BAD.yml"


def _check(proc, case):
    _, where, words = CASES[case]
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    err = proc.stderr
    assert err.count("\n") == 1 and "Traceback" not in err and "KeyError" not in err, err
    prefix = "loopmodel: BAD.yml: " + (f"{where}: " if where else "")
    assert err.startswith(prefix), (prefix, err)
    for w in words:
        assert w in err, (w, err)


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_kerncraft_file_analyze(case, tmp_path):
    name = _write(tmp_path, case)
    proc = run_main_inprocess(["analyze", KERNELS / "triad.c", "-m", name, "-D", "N=1000"], tmp_path)
    _check(proc, case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_kerncraft_file_convert(case, tmp_path):
    name = _write(tmp_path, case)
    proc = run_main_inprocess(["machine", "convert", name], tmp_path)
    _check(proc, case)
    assert proc.stdout == ""


@pytest.mark.parametrize("case", ["cache_without_sets", "cores_per_socket_text", "benchmark_kernel_missing"])
def test_malformed_kerncraft_file_command_line(case, tmp_path):
    """The real command line (a separate interpreter): exit status 2 and the same one line."""
    name = _write(tmp_path, case)
    _check(run_cli("analyze", KERNELS / "triad.c", "-m", name, "-D", "N=1000", cwd=tmp_path), case)
    _check(run_cli("machine", "convert", name, cwd=tmp_path), case)


def test_unchanged_reference_file_still_converts(tmp_path):
    """The mutations start from a file that converts and analyses (each case breaks only one thing)."""
    (tmp_path / "GOOD.yml").write_text(yaml.safe_dump(_base(), sort_keys=False))
    proc = run_main_inprocess(["analyze", KERNELS / "triad.c", "-m", "GOOD.yml", "-D", "N=1000"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert REFERENCE_MACHINES.is_dir()
