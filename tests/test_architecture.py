"""The shape of the package (docs/architecture.md): the import-linter contract (layers, no
cycles), imports at module level but for the documented lazy places, argparse only in the
command line, no private name used outside its module, the package root holding only the API
and the shared utilities, and public functions that show their own docstring in ``help()``."""
from __future__ import annotations

import ast
import inspect
import pydoc
import shutil
import subprocess
import sys

import pytest

import loopmodel
from helpers import ROOT

PACKAGE = ROOT / "src" / "loopmodel"
#: optional heavy dependencies: each imported inside one documented function (not at import time)
LAZY_MODULES = {"matplotlib", "pandas", "pyarrow", "dask", "distributed", "osaca", "pcpp"}
#: modules at the package root: the API, the entry points and the shared utilities
ROOT_MODULES = {"__init__", "__main__", "api", "errors", "units", "version", "gate", "cache", "toolchain",
                "atomic"}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, ast.parse(path.read_text(), str(path))


def _function_imports(tree) -> list:
    """``(line, top-level module name)`` of every import inside a function (nested ones once)."""
    seen, out = set(), []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)) and id(sub) not in seen:
                    seen.add(id(sub))
                    if isinstance(sub, ast.Import):
                        out += [(sub.lineno, a.name.split(".")[0]) for a in sub.names]
                    else:
                        out.append((sub.lineno, "." if sub.level else (sub.module or "").split(".")[0]))
    return out


def test_import_contract_holds():
    """``lint-imports`` (pyproject.toml [tool.importlinter]): the layers and no cycles."""
    exe = shutil.which("lint-imports")
    assert exe, "lint-imports is installed with the test extra (pip install '.[test]')"
    proc = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


def test_imports_at_module_level_but_the_lazy_heavy_ones():
    bad = [f"{path.relative_to(PACKAGE)}:{line} imports {name}"
           for path, tree in _modules() for line, name in _function_imports(tree)
           if name not in LAZY_MODULES]
    assert not bad, "\n".join(bad)


def test_each_heavy_dependency_has_one_lazy_place():
    places = {}
    for path, tree in _modules():
        for _, name in _function_imports(tree):
            places.setdefault(name, set()).add(str(path.relative_to(PACKAGE)))
    assert {n: p for n, p in places.items() if len(p) > 1} == {}


def test_only_the_command_line_uses_argparse():
    users = {str(path.relative_to(PACKAGE)) for path, tree in _modules() for node in ast.walk(tree)
             if isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names)
             or isinstance(node, ast.ImportFrom) and node.module == "argparse"}
    assert users and all(u.startswith("cli/") for u in users), sorted(users)


def test_no_private_name_crosses_a_module():
    bad = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("loopmodel")):
                bad += [f"{path.relative_to(PACKAGE)}:{node.lineno} {a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
    assert not bad, "\n".join(bad)


def test_package_root_holds_the_api_and_the_shared_utilities():
    assert {p.stem for p in PACKAGE.glob("*.py")} == ROOT_MODULES


@pytest.mark.parametrize("name", [n for n in loopmodel.__all__ if n[0].islower() and n != "__version__"])
def test_public_functions_show_their_own_docstring(name):
    value = getattr(loopmodel, name)
    assert inspect.isfunction(value), f"loopmodel.{name} is a {type(value).__name__}"
    assert value.__module__ == "loopmodel.api" and value.__doc__
    assert value.__doc__.strip().splitlines()[0] in pydoc.render_doc(value)


def test_no_dead_code():
    """vulture at confidence 60, as .ci/run runs it (the whitelist names what frameworks use)."""
    exe = shutil.which("vulture")
    assert exe, "vulture is installed with the test extra (pip install '.[test]')"
    proc = subprocess.run([exe, "src/loopmodel", ".ci/vulture_whitelist.py", "--min-confidence", "60",
                           "--exclude", "src/loopmodel/report/doctypes"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and not proc.stdout, proc.stdout[-3000:]


def _subparser(parser, *path):
    for name in path:
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        parser = sub.choices[name]
    return parser


def _command_options():
    """(command path, Options class) of every command whose workflow declares Options."""
    from loopmodel.workflows import (analyze, app, bench, codegen, compare, energy, measure, omp, probe, roofline,
                                     scaling, sweep, validate)

    return [(("analyze",), analyze.AnalyzeOptions), (("scaling",), scaling.ScalingOptions),
            (("compare",), compare.CompareOptions),
            (("energy",), energy.EnergyOptions), (("app",), app.AppOptions), (("codegen",), codegen.CodegenOptions),
            (("bench",), bench.BenchOptions), (("validate",), validate.ValidateOptions),
            (("roofline",), roofline.RooflineOptions), (("measure",), measure.MeasureOptions),
            (("omp",), omp.OmpOptions), (("sweep",), sweep.SweepOptions), (("machine", "probe"), probe.ProbeOptions)]


@pytest.mark.parametrize("path, cls", _command_options(), ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_command_line_options_are_the_options_dataclass(path, cls):
    """Every field of a command's Options is an argument of its parser, with the field's flags,
    default and help: the CLI and the API (which builds the same dataclass) cannot drift."""
    import dataclasses

    from loopmodel.cli import build_parser
    from loopmodel.workflows.options import fields

    parser = _subparser(build_parser(), *path)
    actions = {}
    for a in parser._actions:
        actions.setdefault(a.dest, []).append(a)
    for f in fields(cls):
        acts = actions.get(f.name)
        assert acts, f"{' '.join(path)}: option {f.name} has no argument"
        assert acts[0].option_strings == list(f.metadata["flags"]), f.name
        default = acts[0].default
        assert (tuple(default) if isinstance(default, list) else default) == f.default, f.name
        assert acts[0].help == f.metadata["help"] or f.metadata["hidden"], f.name
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen


def test_the_architecture_document_lists_every_module():
    """docs/architecture.md's tree names every module of the package, and no other."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    tree = text[text.index("src/loopmodel/\n"):]
    listed, package = set(), ""
    for line in tree.splitlines()[1:]:
        if line.startswith("```"):
            break
        name = line.replace("│", " ").replace("├──", " ").split()[0]
        if line.startswith("├── "):
            package = name if name.endswith("/") else ""
            if not package:
                listed.add(name)
        else:
            listed.add(package + name)
    actual = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")}
    assert listed == actual


def test_a_command_loads_its_own_workflow_only():
    """``loopmodel analyze`` does not import the measuring, sweeping or OpenMP code, nor does
    ``--version`` import any workflow (cli.command_module loads the command's module on demand)."""
    code = ("import sys, contextlib, io; from loopmodel.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try: main(sys.argv[1:])\n"
            "    except SystemExit: pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('loopmodel.workflows', 'loopmodel.measure'))))")
    def loaded(*argv):
        out = subprocess.run([sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True,
                             check=True, timeout=120).stdout
        return ast.literal_eval(out.strip().splitlines()[-1])

    assert loaded("--version") == []
    analyze = loaded("analyze", "examples/kernels/triad.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=1000",
                     "--incore", "analytic", "--json")
    assert "loopmodel.workflows.analyze" in analyze
    assert not any(m.startswith(("loopmodel.measure", "loopmodel.workflows.sweep", "loopmodel.workflows.omp"))
                   for m in analyze), analyze
