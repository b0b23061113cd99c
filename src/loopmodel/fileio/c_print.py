"""The kernel's loop nest printed as C from its checked syntax tree: the only kernel text a
compiler sees.

The front-end (:mod:`loopmodel.fileio.c_kernel`) checks every node of the nest; this module
prints those nodes again with pycparser's C generator, so a comment, a line ending, a line
splice, a directive or a byte that the parser did not turn into a node cannot reach a
compiler (kerncraft-tool-paper.txt §2.5 compiles the kernel; docs/reference/trust.md states
the rule). Pragmas are printed from their typed model (:mod:`loopmodel.fileio.c_pragma`),
never as written.
"""
from __future__ import annotations

from pycparser import c_generator

from .c_pragma import parse_pragma, pragma_string


class CodePrinter(c_generator.CGenerator):
    """pycparser's generator (parentheses only where precedence needs them) with pragmas printed
    from their typed model (:class:`~.c_pragma.KernelPragma`); the printer of every C text a
    compiled program takes from a kernel or an OpenMP program.

    Raises (from ``visit``):
        KernelError: a pragma the typed model refuses (naming ``filename`` and the line).
    """

    def __init__(self, filename: str):
        super().__init__(reduce_parentheses=True)  # only where precedence and associativity need them
        self.filename = filename

    def visit_Pragma(self, n):  # noqa: N802 (pycparser's visitor naming)
        line = n.coord.line - 1 if n.coord is not None and n.coord.line else None
        return "#pragma " + parse_pragma(pragma_string(n, self.filename), self.filename, line).text()


def nest_code(pragmas: list, loop, filename: str = "<kernel>") -> str:
    """C text of a loop nest: the ``Pragma`` nodes before it (typed model), then the ``For``
    node ``loop`` with everything inside it, as pycparser's generator prints them (4-space
    indentation, one statement a line, sub-expressions parenthesised).

    Raises:
        KernelError: a pragma the typed model refuses (:func:`~.c_pragma.parse_pragma`).
    """
    printer = CodePrinter(filename)
    lines = [printer.visit(p) for p in pragmas]
    lines.append(printer.visit(loop).rstrip())
    return "\n".join(lines).replace("\n\n", "\n") + "\n"
