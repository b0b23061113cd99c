"""The error hierarchy in docs/api.md lists every LoopmodelError subclass of the package, under
its real parent and with the module it is defined in: a new class cannot be left out."""
from __future__ import annotations

import importlib
import pkgutil
import re

from helpers import ROOT

import loopmodel
from loopmodel.errors import LoopmodelError

#: a line of the tree: its indentation, the class name, the module in brackets if not loopmodel.errors
_LINE = re.compile(r"^(?P<indent>(?:│   |    )*)(?:├── |└── )(?P<name>\w+)[^\[]*(?:\[(?P<module>[\w.]+)\])?\s*$")


def _documented() -> dict:
    """Class name -> (parent name, module) from the tree under '## Errors' in docs/api.md."""
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    block = text.split("\n## Errors\n", 1)[1].split("```\n", 2)[1]
    lines = block.splitlines()
    assert lines[0].strip() == "LoopmodelError", lines[0]
    parents, out = ["LoopmodelError"], {"LoopmodelError": (None, "loopmodel.errors")}
    for line in lines[1:]:
        m = _LINE.match(line)
        assert m, f"not a line of the tree: {line!r}"
        depth = len(m["indent"]) // 4
        del parents[depth + 1:]
        out[m["name"]] = (parents[depth], m["module"] or "loopmodel.errors")
        parents.append(m["name"])
    return out


def _defined() -> dict:
    """Class name -> (parent name, module) of LoopmodelError and all its subclasses, with every
    module of the package imported."""
    for info in pkgutil.walk_packages(loopmodel.__path__, "loopmodel."):
        if not info.name.endswith(("__main__", "._build")):  # _build: the extension's build script
            importlib.import_module(info.name)
    out, todo = {"LoopmodelError": (None, "loopmodel.errors")}, [LoopmodelError]
    while todo:
        for cls in todo.pop().__subclasses__():
            parent = next(b for b in cls.__bases__ if issubclass(b, LoopmodelError))
            assert cls.__name__ not in out, f"two error classes named {cls.__name__}"
            out[cls.__name__] = (parent.__name__, cls.__module__)
            todo.append(cls)
    return out


def test_every_error_class_is_documented_under_its_parent():
    documented, defined = _documented(), _defined()
    assert sorted(set(defined) - set(documented)) == [], "error classes missing from docs/api.md"
    assert sorted(set(documented) - set(defined)) == [], "docs/api.md lists classes that do not exist"
    for name, (parent, module) in defined.items():
        assert documented[name] == (parent, module), name


def test_the_tree_reader_sees_every_line():
    documented = _documented()
    assert documented["StudyError"] == ("LoopmodelError", "loopmodel.workflows.study")
    assert documented["OptionError"] == ("ToolError", "loopmodel.errors")
    assert documented["ApiValueError"] == ("UsageError", "loopmodel.errors")
    assert len(documented) >= 13
