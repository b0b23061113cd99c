"""The documentation shows what the code does.

* Every ```` ```console ```` block of README.md and docs/ is a transcript: ``$ loopmodel ...``
  (continued over lines ending in ``\\``), then what the command prints on stdout. Each is run
  from a scratch folder that sees the repository's ``examples/`` and compared line by line
  (trailing spaces aside); a line ``...`` stands for any number of lines the sample leaves
  out. Output measured on one particular host goes in ```` ```text ```` blocks, which are not run.
* Every ```` ```pycon ```` block (Python sessions, the Python API guide) runs as a doctest from
  the repository's root, the blocks of one file in one namespace.
* Every ``loopmodel ...`` line of a ```` ```bash ```` block parses with the real parser (an
  option renamed or removed fails here).
* The machine-file reference describes every key, each in its own words, in Markdown.
* The site's navigation (mkdocs.yml) lists every command's and every schema's reference page.
"""
from __future__ import annotations

import re
import shlex

import pytest

from helpers import ROOT, run_cli_batch

DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def _blocks(kind: str):
    for path in DOCS:
        for m in FENCE.finditer(path.read_text(encoding="utf-8")):
            if m.group(1) == kind:
                yield path, m.group(2)


def _transcripts() -> list:
    """``(file, command words, expected lines)`` of every console block's commands."""
    out = []
    for path, body in _blocks("console"):
        lines = body.splitlines()
        i = 0
        while i < len(lines):
            assert lines[i].startswith("$ loopmodel "), f"{path.name}: a console block starts with '$ loopmodel'"
            command = lines[i][2:]
            while command.endswith("\\"):
                i += 1
                command = command[:-1] + lines[i].strip()
            i += 1
            expected = []
            while i < len(lines) and not lines[i].startswith("$ "):
                expected.append(lines[i].rstrip())
                i += 1
            out.append((path.relative_to(ROOT).as_posix(), shlex.split(command)[1:], expected))
    return out


TRANSCRIPTS = _transcripts()


def matches(expected: list, actual: list) -> bool:
    """Whether ``actual`` is ``expected`` with each ``...`` line standing for any lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and actual[0] == expected[0] and matches(expected[1:], actual[1:])


def test_the_matcher_skips_only_where_a_sample_says_so():
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"]) and matches(["a", "...", "b"], ["a", "b"])
    assert not matches(["a", "d"], ["a", "b", "d"]) and not matches(["a", "...", "d"], ["a", "b", "c"])
    assert not matches(["{ 52.0 || 54.0 }"], ["{ 57.0 || 54.0 }"])


def test_the_readme_and_getting_started_have_transcripts():
    files = {f for f, _, _ in TRANSCRIPTS}
    assert {"README.md", "docs/getting-started.md"} <= files
    first = next(t for t in TRANSCRIPTS if t[0] == "README.md")
    assert first[1][0] == "analyze" and any(line.startswith("{ ") for line in first[2])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("docs")
    (cwd / "examples").symlink_to(ROOT / "examples")
    return run_cli_batch({i: (args, cwd) for i, (_, args, _) in enumerate(TRANSCRIPTS)})


@pytest.mark.parametrize("index", range(len(TRANSCRIPTS)),
                         ids=[f"{f}:{' '.join(a)[:60]}" for f, a, _ in TRANSCRIPTS])
def test_a_sample_output_is_what_the_command_prints(runs, index):
    path, args, expected = TRANSCRIPTS[index]
    p = runs[index]
    actual = [line.rstrip() for line in p.stdout.splitlines()]
    assert "Traceback" not in p.stderr
    assert matches(expected, actual), (
        f"{path}: the sample output of 'loopmodel {' '.join(args)}' is not what it prints "
        f"(exit {p.returncode}):\n" + p.stdout + p.stderr)


PYCON = sorted({path for path, _ in _blocks("pycon")})


@pytest.mark.parametrize("path", PYCON, ids=[p.relative_to(ROOT).as_posix() for p in PYCON])
def test_python_sessions_print_what_they_show(path, monkeypatch):
    import doctest

    monkeypatch.chdir(ROOT)
    text = "\n".join(body for p, body in _blocks("pycon") if p == path)
    test = doctest.DocTestParser().get_doctest(text, {}, path.name, str(path), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert test.examples and runner.failures == 0, f"{path.name}: {runner.failures} example(s) differ (see above)"


def test_every_command_shown_in_a_bash_block_parses():
    from loopmodel.cli import build_parser
    from loopmodel.cli.argv import json_file_argv
    from loopmodel.fileio.defines import normalize_argv

    shown = [(path, line.strip()) for path, body in _blocks("bash")
             for line in body.replace("\\\n", " ").splitlines() if line.strip().startswith("loopmodel ")]
    assert len(shown) >= 15
    for path, line in shown:
        argv = json_file_argv(normalize_argv(shlex.split(re.split(r" (?:#|\||>|2>|&&) ", line)[0])[1:]))
        try:
            build_parser((argv[0],)).parse_args(argv)
        except SystemExit as exc:
            pytest.fail(f"{path.name}: '{line}' does not parse (exit {exc.code})")


def test_the_machine_file_reference_describes_every_key_in_markdown():
    from loopmodel.fileio.machine_reference import reference

    text = reference()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) > 80
    for row in rows:
        description = row.rstrip(" |").rsplit(" | ", 1)[-1]
        assert description and not description.startswith("|"), row
    assert not re.search(r":(class|mod|func|meth|data):`|``|\.txt\b", text)
    top = {r.split("`")[1]: r.rsplit(" | ", 1)[-1] for r in rows[:30]}
    assert top["clock"] != top["cacheline_size"]
    assert len(set(top.values())) == len(top)


def test_the_site_lists_every_command_and_schema():
    from loopmodel.cli.commands import COMMANDS

    nav = (ROOT / "mkdocs.yml").read_text()
    for name in COMMANDS:
        assert f"reference/cli/{name}.md" in nav, name
    for schema in (ROOT / "docs" / "schema").glob("*.schema.json"):
        assert f"reference/json/{schema.name.removesuffix('.schema.json')}.md" in nav, schema.name
