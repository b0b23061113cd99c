"""The command line's words before parsing: Kerncraft's spellings of ``--json FILE`` (and, in
:func:`loopmodel.fileio.defines.normalize_argv`, of ``-D N 1000``) turned into loopmodel's."""
from __future__ import annotations

import os

#: suffixes of kernel files: after ``--json`` such a name is the kernel, not the JSON output file
KERNEL_SUFFIXES = (".c", ".yml", ".yaml")


def json_file_argv(argv: list) -> list:
    """``analyze ... --json FILE`` / ``--json=FILE`` (Kerncraft's spelling) -> ``--json --json-file FILE``;
    ``--json compact`` / ``--json=compact`` -> ``--json --json-compact`` (a file named so: ``./compact``).

    The word after ``--json`` is the output file unless it starts with ``-``, ends in a kernel
    suffix (:data:`KERNEL_SUFFIXES`) or names an existing file other than ``*.json`` (then it is
    the kernel, and ``--json`` prints JSON on stdout as before). Other commands are unchanged.
    """
    if not argv or argv[0] != "analyze":
        return argv
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a == "--json=compact" or (a == "--json" and argv[i + 1:i + 2] == ["compact"]):
            out += ["--json", "--json-compact"]
            i += a == "--json"
        elif a.startswith("--json="):
            out += ["--json", "--json-file", a.split("=", 1)[1]]
        elif a == "--json" and i + 1 < len(argv) and _is_json_file(argv[i + 1]):
            out += ["--json", "--json-file", argv[i + 1]]
            i += 1
        else:
            out.append(a)
        i += 1
    return out


def _is_json_file(word: str) -> bool:
    if word.startswith("-") or word.lower().endswith(KERNEL_SUFFIXES):
        return False
    return word.lower().endswith(".json") or not os.path.exists(word)
