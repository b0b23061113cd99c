"""Function-length scan of the loopmodel sources.

Lists every function or method longer than a limit (default 80 lines, the
developers' guide's split point) with its file, first line and length, and a
summary line: functions scanned, how many exceed the limit, the longest.

Usage: python benchmarks/function_lengths.py [--limit N] [--root DIR]
"""
from __future__ import annotations

import argparse
import ast
import pathlib


def lengths(root: pathlib.Path):
    """Yield (path, name, first line, length in lines) for every function."""
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno]
                            + [d.lineno for d in node.decorator_list])
                yield path, node.name, first, node.end_lineno - first + 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=80)
    parser.add_argument("--root", default=str(
        pathlib.Path(__file__).resolve().parents[1] / "src" / "loopmodel"))
    args = parser.parse_args()
    root = pathlib.Path(args.root)
    rows = list(lengths(root))
    long = sorted((r for r in rows if r[3] > args.limit), key=lambda r: -r[3])
    for path, name, first, size in long:
        print(f"{size:4d} lines  {path.relative_to(root)}:{first}  {name}")
    longest = max(rows, key=lambda r: r[3])
    print(f"{len(rows)} functions, {len(long)} over {args.limit} lines, "
          f"longest {longest[3]} ({longest[1]}), "
          f"mean {sum(r[3] for r in rows) / len(rows):.1f} lines")


if __name__ == "__main__":
    main()
