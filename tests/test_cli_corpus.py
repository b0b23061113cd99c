"""The command corpus (``tests/cli_corpus.py``): every command line gives the recorded output
byte for byte (stdout, stderr, exit status, files written), and the Python API gives the
document the CLI prints with ``--json`` for the same inputs.

Record the outputs anew (only when a change of output is intended, and reviewed in the diff)::

    LOOPMODEL_RECORD_CORPUS=1 python -m pytest tests/test_cli_corpus.py
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from cli_corpus import COMMANDS
from helpers import ROOT, run_main_inprocess

FIXTURES = ROOT / "tests" / "fixtures" / "corpus"
OUTPUTS = FIXTURES / "outputs.json"
RECORD = bool(os.environ.get("LOOPMODEL_RECORD_CORPUS"))


def _key(argv: tuple) -> str:
    return " ".join(argv)


#: what varies between runs of the same command line: elapsed times
_ELAPSED = re.compile(r"in [0-9]+(\.[0-9]+)? s\b")


def run_corpus_line(argv: tuple, tmp: Path) -> dict:
    """Run one command line in the repository; its output with ``tmp`` written as ``{tmp}``, the
    repository as ``{root}`` and elapsed times as ``in <t> s``."""
    names = {"tmp": str(tmp), "coherence": "tests/fixtures/corpus/coherence.yml"}  # relative: tables wrap alike
    proc = run_main_inprocess([a.format(**names) for a in argv], ROOT)
    names["root"] = str(ROOT)  # absolute paths in the output (kernels named by an application file)
    files = {p.name: p.read_text(errors="replace") for p in sorted(tmp.iterdir()) if p.is_file()}
    text = json.dumps({"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr, "files": files})
    for path in sorted(names.values(), key=len, reverse=True):
        text = text.replace(path, "{" + next(k for k, v in names.items() if v == path) + "}")
    return json.loads(_ELAPSED.sub("in <t> s", text))


@pytest.fixture(scope="module")
def recorded():
    if RECORD:
        out = {}
        yield out
        OUTPUTS.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
        return
    yield json.loads(OUTPUTS.read_text())


def test_corpus_covers_every_command():
    commands = {argv[0] for argv in COMMANDS if argv}
    assert commands >= {"analyze", "scaling", "energy", "app", "measure", "bench", "validate", "roofline", "omp",
                        "codegen", "sweep", "machine"}
    assert {argv[1] for argv in COMMANDS if argv[:1] == ("machine",) and len(argv) > 1} >= {
        "list", "show", "convert", "probe"}
    assert len(COMMANDS) >= 60 and len(set(COMMANDS)) == len(COMMANDS)
    assert any("--json" in a for argv in COMMANDS for a in argv)
    assert sum(1 for argv in COMMANDS if argv[:1] != ("codegen",)) > 0


@pytest.mark.parametrize("argv", COMMANDS, ids=[_key(a)[:80] for a in COMMANDS])
def test_corpus_output_unchanged(argv, recorded, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")  # argparse's help: the same width on every terminal
    got = run_corpus_line(argv, tmp_path)
    if RECORD:
        recorded[_key(argv)] = got
        return
    want = recorded[_key(argv)]
    assert got["rc"] == want["rc"], got["stderr"] + got["stdout"][-2000:]
    assert got["stderr"] == want["stderr"]
    assert got["stdout"] == want["stdout"]
    assert got["files"] == want["files"]
    assert "Traceback" not in got["stderr"]


#: short options of the corpus -> the API's keyword names
_SHORT = {"-P": "cache_predictor", "-i": "incore", "-c": "cores", "-p": "models", "-u": "unit", "-D": "defines",
          "--define": "defines", "-m": "machine"}
#: options of the command line that choose an output, not a result (the switches take no value)
_OUTPUT_ONLY = {"json", "no_progress", "verbose", "unit"}
_SWITCHES = {"verbose", "no_progress", "v"}


def api_call(argv: tuple):
    """``(command, args, kwargs)`` of the Python API for a corpus line of ``analyze`` or ``scaling``
    at one size (no range, no picture), from the words of the command line alone; None for the
    others."""
    if len(argv) < 2 or argv[0] not in ("analyze", "scaling") or "-m" not in argv:
        return None
    command, kernel, *rest = argv
    if any(":" in a for a in rest if "=" in a) or "--plot" in rest:  # a size range, a picture
        return None
    kwargs, defines, models, i = {}, [], [], 0
    while i < len(rest):
        word = rest[i]
        name = _SHORT.get(word) or word.split("=")[0].lstrip("-").replace("-", "_")
        following = rest[i + 1] if i + 1 < len(rest) else "-"
        takes_value = (not following.startswith("-") or re.fullmatch(r"-[0-9.]+", following)) and name not in _SWITCHES
        if name == "defines" and "=" not in rest[i + 1]:  # Kerncraft's '-D N 1000'
            defines.append(f"{rest[i + 1]}={rest[i + 2]}")
            i += 3
            continue
        if name == "defines":
            defines.append(rest[i + 1])
        elif name == "models":
            models.append(rest[i + 1])
        elif name in ("reassociation", "no_reassociation"):
            kwargs["reassociate"] = name == "reassociation"
        elif name not in _OUTPUT_ONLY and name not in _SWITCHES:
            kwargs[name] = rest[i + 1] if takes_value else True
        i += 2 if takes_value else 1
    machine = kwargs.pop("machine")
    if models:
        kwargs["models"] = models
    return command, (kernel, machine, defines), kwargs


API_LINES = [argv for argv in COMMANDS if api_call(argv) is not None]


def test_api_lines_cover_both_commands_results_and_errors(recorded):
    assert {a[0] for a in API_LINES} == {"analyze", "scaling"} and len(API_LINES) >= 30
    codes = [recorded[_key(a)]["rc"] for a in API_LINES]
    assert codes.count(0) >= 15 and codes.count(2) >= 10


def _cli_message(stderr: str) -> str:
    """The one line of a CLI error without the program's prefix and argparse's pointer to --help."""
    line = stderr.strip().removeprefix("loopmodel: ").removeprefix("error: ")
    return line.removesuffix(" (see 'loopmodel --help')")


@pytest.mark.parametrize("argv", API_LINES, ids=[_key(a)[:80] for a in API_LINES])
def test_api_equals_cli(argv, recorded, tmp_path):
    """For the inputs of a corpus line the API gives the CLI's JSON document, or raises the CLI's
    error (its one line; the API may name the argument in front)."""
    if RECORD:
        pytest.skip("recording")
    import loopmodel
    from loopmodel.errors import LoopmodelError

    command, args, kwargs = api_call(argv)
    out = recorded[_key(argv)]
    if out["rc"]:
        with pytest.raises(LoopmodelError) as exc:
            getattr(loopmodel, command)(*args, **kwargs)
        assert str(exc.value).endswith(_cli_message(out["stderr"]))
        return
    if out["files"].get("out.json"):  # '--json FILE' wrote the document
        cli = json.loads(out["files"]["out.json"])
    elif any(a.startswith("--json") for a in argv):
        cli = json.loads(out["stdout"])
    else:  # a text report: the same line with --json gives the document
        proc = run_main_inprocess([*argv, "--json"], ROOT)
        assert proc.returncode == 0, proc.stderr
        cli = json.loads(proc.stdout)
    assert json.loads(json.dumps(getattr(loopmodel, command)(*args, **kwargs).to_dict())) == cli


#: the papers' file names in the developers' copy: a user has the papers by title, not these files
_PAPER_FILES = re.compile(r"[a-z-]+(?:paper|slides|models|thesis|model)\.txt|shared/papers")


def test_no_output_cites_a_paper_by_its_file_name(recorded):
    """What any command prints (notes, ``machine show`` of the bundled files) names a paper by
    title and author, never by the developers' file name."""
    cited = {key: _PAPER_FILES.findall(json.dumps(out)) for key, out in recorded.items()}
    assert recorded and not {key: names for key, names in cited.items() if names}
