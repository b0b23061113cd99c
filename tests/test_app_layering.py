"""Layering of the application description: ``fileio`` (an edge) reads application files into
pure data (``ir``) without importing ``models``; ``ir`` imports no other layer."""
from __future__ import annotations

import ast

from pathlib import Path

import pytest

import loopmodel

PKG = Path(loopmodel.__file__).resolve().parent  # the package under test


def _imported(path) -> set:
    """Absolute ``loopmodel.*`` module names imported by the file at ``path`` (relative imports resolved,
    imports inside functions included)."""
    parts = ["loopmodel", *path.relative_to(PKG).with_suffix("").parts]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("loopmodel")}
        elif isinstance(node, ast.ImportFrom):
            base = parts[:len(parts) - node.level] if node.level else []
            name = ".".join(base + ([node.module] if node.module else []))
            if name.startswith("loopmodel"):
                out.add(name)
    return out


def test_app_file_reader_does_not_import_models():
    mods = _imported(PKG / "fileio" / "app_file.py")
    assert "loopmodel.ir.application" in mods
    assert not {m for m in mods if m.startswith("loopmodel.models")}, mods


@pytest.mark.parametrize("path", sorted((PKG / "ir").glob("*.py")), ids=lambda p: p.name)
def test_ir_is_pure_data(path):
    """ir/ may import ir/, the error types and ``record`` (how a frozen dataclass is declared) only."""
    bad = {m for m in _imported(path) if not m.startswith(("loopmodel.ir", "loopmodel.errors"))}
    assert not bad, bad


def test_application_types_are_one_definition():
    from loopmodel.fileio.app_file import AppSpec as read_type
    from loopmodel.ir.application import AppKernel, AppSpec
    from loopmodel.models import application

    assert read_type is AppSpec and application.AppSpec is AppSpec and application.AppKernel is AppKernel
