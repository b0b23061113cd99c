"""Size limits of C kernel text: statements the front end reads promptly and walks safely.

pycparser parses about 50000 tokens per second into an AST, and the front end and the models
walk expression trees recursively (Python allows 1000 nested calls): a sum of 1000 terms
exceeded the recursion limit, one of 40000 terms (320000 tokens) took 7 s in pycparser
before that, and 400000 terms ran for minutes. So:

* a statement may have at most :data:`MAX_STATEMENT_TOKENS` tokens (counted on the text,
  before pycparser: a huge statement is refused at once);
* an expression tree may be at most :data:`MAX_EXPRESSION_DEPTH` operations deep, counting
  operators, calls, array references and the assignment (``a[i] = b[i]*c0 + ... + b[i]*c97``,
  98 products, is 100 deep; checked on pycparser's tree, without recursion). The OpenMP
  front end copies and prints trees with pycparser's recursive helpers, about six calls per
  level: 100 levels stay well within Python's limit of 1000 nested calls.

:func:`define_value` bounds the size default of ``#define NAME <integer>``. All name the line (``file:line``) in a one-line :class:`~loopmodel.errors.KernelError`.
"""
from __future__ import annotations

import re

from ..errors import KernelError
from .defines import MAX_SIZE

#: the most tokens (names, numbers, operators, brackets) one statement may have
MAX_STATEMENT_TOKENS = 10_000
#: the deepest expression tree (nested operations, calls and array references)
MAX_EXPRESSION_DEPTH = 100

_TOKEN = re.compile(r"[;{}]|[A-Za-z_]\w*|[0-9][\w.]*|\S")


def check_statement_tokens(text: str, filename: str) -> None:
    """Refuse a statement (text between ``;``, ``{`` and ``}``) of more than
    :data:`MAX_STATEMENT_TOKENS` tokens; ``text`` without comments.

    Raises:
        KernelError: ``file:line`` of the token beyond the limit.
    """
    count = 0
    for m in _TOKEN.finditer(text):
        count = 0 if m.group() in ";{}" else count + 1
        if count > MAX_STATEMENT_TOKENS:
            raise KernelError(f"statement of more than {MAX_STATEMENT_TOKENS} tokens: too large to analyse "
                              "(split it into several statements)", file=filename,
                              line=text.count("\n", 0, m.start()) + 1)


def check_depth(node, filename: str | None, line_shift: int = 0) -> None:
    """Refuse an expression tree under pycparser ``node`` deeper than :data:`MAX_EXPRESSION_DEPTH`.

    Args:
        node: a pycparser AST node; filename: for the message (None: message only).
        line_shift: added to pycparser's line numbers (the wrapped source's first line).

    Raises:
        KernelError: ``file:line`` of the expression that is too deep.
    """
    stack = [(node, 0, None)]
    while stack:
        n, depth, line = stack.pop()
        coord = getattr(n, "coord", None)
        if coord is not None and coord.line:
            line = coord.line + line_shift
        if depth > MAX_EXPRESSION_DEPTH:
            raise KernelError(f"expression nested more than {MAX_EXPRESSION_DEPTH} operations deep: too large "
                              "to analyse (split it into several statements)", file=filename,
                              line=line if filename else None)
        deeper = depth + 1 if type(n).__name__ in _NESTING else depth
        stack.extend((child, deeper, line) for _, child in n.children())


#: pycparser nodes that nest an expression one level deeper
_NESTING = {"BinaryOp", "UnaryOp", "Cast", "FuncCall", "ArrayRef", "ExprList", "Assignment", "TernaryOp"}


def define_value(name: str, digits: str, filename: str, line: int, col: int) -> int:
    """The value of ``#define name digits``, at most :data:`~loopmodel.fileio.defines.MAX_SIZE`.

    Raises:
        KernelError: a larger value (``file:line:col``).
    """
    value = digits.lstrip("0")
    if len(value) > len(str(MAX_SIZE)) or int(value or 0) > MAX_SIZE:
        raise KernelError(f"#define {name}: {value[:24]}{'...' if len(value) > 24 else ''} is larger than "
                          f"2**62 = {MAX_SIZE}, the largest size", file=filename, line=line, col=col)
    return int(value or 0)
