"""Text reports written to a file or a pipe without rich: its output, byte for byte, for what
:mod:`loopmodel.report.text` prints.

rich takes longer to import than a whole warm ``loopmodel analyze`` takes otherwise
(benchmarks/speed_check.py), and where the output is no terminal it writes no colours: only
text, wrapped to the console's width, and tables drawn with box characters. :class:`PlainConsole`
writes that text itself for what the analysis report prints -- strings with rich's markup and
:class:`Table` -- as rich 13-15 lays it out:

* a string: markup tags removed (``[bold]``; ``\\[`` an escaped bracket, :func:`escape`), each
  line word-wrapped to the width (rich's ``divide_line``: a word that does not fit starts a new
  line, a word longer than the width is folded, whitespace beyond the width dropped);
* a table (rich's defaults: ``HEAVY_HEAD`` box, one space of padding each side of a cell, no
  expansion): each column as wide as its widest cell, cells justified left or right (right:
  trailing spaces stripped first), the title wrapped and left-justified to the table's width.

Anything else goes to a rich ``Console`` made on first use with the same width: other
renderables, keyword arguments other than ``markup`` and ``highlight``, text outside printable
ASCII (wide characters, tabs, control codes), a possible emoji code (``:name:``), markup whose
closing tags are not the innermost open one, a table wider than the console or with a cell of
several lines. :func:`text_console` gives a :class:`PlainConsole` only where rich would write no
escape codes (not a terminal, no ``FORCE_COLOR``/``TTY_COMPATIBLE``, UTF-8 output, not
Windows, not IPython); otherwise rich's own console, which renders :class:`Table` through
its ``__rich__``. tests/test_plain_console.py compares the two on random strings and tables.
"""
from __future__ import annotations

import importlib
import os
import re
import sys

#: rich's markup tags (rich.markup.RE_TAGS): ``[name]``, ``[/name]``, ``[/]``, escapes ``\\[``
_TAGS = re.compile(r"((\\*)\[([a-z#/@][^[]*?)])")
#: what rich.markup.escape escapes
_ESCAPE = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")
#: rich's words for wrapping (rich._wrap.re_word): a word and the whitespace around it
_WORD = re.compile(r"\s*\S+\s*")
#: a possible emoji code (rich._emoji_replace): such text goes to rich
_EMOJI = re.compile(r":\S*?:")
#: the characters written without rich: printable ASCII, one cell each
_PLAIN_CHARS = frozenset(chr(c) for c in range(32, 127))
#: rich's box.HEAVY_HEAD: (left, fill, junction, right) of the top, header rule and bottom
_TOP, _HEAD_RULE, _BOTTOM = ("┏", "━", "┳", "┓"), ("┡", "━", "╇", "┩"), ("└", "─", "┴", "┘")
_HEAD_BAR, _ROW_BAR = "┃", "│"


def escape(markup: str) -> str:
    """``markup`` with its square brackets escaped so that rich reads no tag in it: rich's
    ``rich.markup.escape``, here so that reports escape text without importing rich."""
    def escape_backslashes(match) -> str:
        backslashes, text = match.groups()
        return f"{backslashes}{backslashes}\\{text}"

    markup = _ESCAPE.sub(escape_backslashes, markup)
    if markup.endswith("\\") and not markup.endswith("\\\\"):
        return markup + "\\"
    return markup


def markup_text(markup: str) -> str | None:
    """The text rich shows for ``markup`` (tags removed, escapes resolved: ``rich.markup.render``),
    or None where only rich can tell (see the module text), e.g. a closing tag that is not the
    innermost open one, which rich may refuse."""
    pieces, stack, position = [], [], 0
    for match in _TAGS.finditer(markup):
        full, escapes, tag = match.groups()
        start, end = match.span()
        if start > position:
            pieces.append(markup[position:start])
        position = end
        if escapes:
            backslashes, escaped = divmod(len(escapes), 2)
            pieces.append("\\" * backslashes)
            if escaped:
                pieces.append(full[len(escapes):])
                continue
        name = tag.partition("=")[0]
        if name.startswith("@") or name.startswith("/@"):
            return None
        if not name.startswith("/"):
            stack.append(name)
        elif not stack or name[1:].strip() not in ("", stack[-1]):
            return None
        else:
            stack.pop()
    pieces.append(markup[position:])
    return "".join(p.replace("\\[", "[") for p in pieces)  # rich resolves escapes piece by piece


def _plain(text: str | None) -> bool:
    """Whether rich would show ``text`` as it is: printable ASCII without a possible emoji code."""
    return text is not None and _PLAIN_CHARS.issuperset(text) and not (":" in text and _EMOJI.search(text))


def wrap(line: str, width: int) -> list:
    """One line of plain text as rich wraps it to ``width`` (``Text.wrap``, justify "default",
    overflow "fold"): the lines, none longer than ``width``."""
    offsets, offset = [], 0
    for match in _WORD.finditer(line):
        start, word = match.start(), match.group(0)
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:  # folded across lines of the full width
            chunks = [word[i:i + width] for i in range(0, len(word), width)]
            for k, chunk in enumerate(chunks):
                if start:
                    offsets.append(start)
                if k == len(chunks) - 1:
                    offset = len(chunk)
                else:
                    start += len(chunk)
        elif offset and start:
            offsets.append(start)
            offset = len(word)
    bounds = [0, *offsets, len(line)]
    out = []
    for a, b in zip(bounds, bounds[1:]):
        piece = line[a:b]
        if len(piece) > width:  # whitespace beyond the width is dropped, then the rest cropped
            trailing = len(piece) - len(piece.rstrip())
            piece = piece[:len(piece) - min(trailing, len(piece) - width)][:width]
        out.append(piece)
    return out


class Table:
    """A table for :class:`PlainConsole`, or for rich (:meth:`__rich__`): rich's ``Table`` with a
    title and columns justified left or right, nothing else.

    Args:
        title: the title (rich markup), written above the table; title_justify: ``"left"``
            (rich's other values go to rich).
    """

    def __init__(self, title: str | None = None, title_justify: str = "center"):
        self.title, self.title_justify = title, title_justify
        self.columns, self.rows = [], []

    def add_column(self, header: str, justify: str = "left") -> None:
        """A column with its header (rich markup), its cells justified ``"left"`` or ``"right"``."""
        self.columns.append((header, justify))

    def add_row(self, *cells: str) -> None:
        """A row of strings (rich markup), one per column."""
        self.rows.append(cells)

    def __rich__(self):
        """The same table as rich's ``rich.table.Table``."""
        table = rich_module("table").Table(title=self.title, title_justify=self.title_justify)
        for header, justify in self.columns:
            table.add_column(header, justify=justify)
        for row in self.rows:
            table.add_row(*row)
        return table

    def lines(self, width: int) -> list | None:
        """The table as rich draws it on a console ``width`` columns wide (without colours), or
        None where only rich can tell (see the module text)."""
        if not self.columns or self.title_justify != "left" or any(len(r) != len(self.columns) for r in self.rows) \
                or any(justify not in ("left", "right") for _, justify in self.columns):
            return None
        if not all(isinstance(c, str) for c in [self.title or "", *(h for h, _ in self.columns), *sum(self.rows, ())]):
            return None
        grid = [[markup_text(h) for h, _ in self.columns]] + [[markup_text(c) for c in r] for r in self.rows]
        if not all(_plain(c) for row in grid for c in row):
            return None
        widths = [max(len(row[i]) for row in grid) + 2 for i in range(len(self.columns))]
        total = sum(widths) + len(widths) + 1
        title = markup_text(self.title) if self.title else ""
        if total > width or (self.title and not _plain(title)):
            return None
        out = [piece.ljust(total) for piece in wrap(title, total)] if self.title else []
        out.append(_rule(_TOP, widths))
        for k, row in enumerate(grid):
            bar = _HEAD_BAR if k == 0 else _ROW_BAR
            cells = [(c.ljust(w - 2) if justify == "left" else c.rstrip().rjust(w - 2))
                     for c, w, (_, justify) in zip(row, widths, self.columns)]
            out.append(bar + bar.join(f" {c} " for c in cells) + bar)
            if k == 0:
                out.append(_rule(_HEAD_RULE, widths))
        out.append(_rule(_BOTTOM, widths))
        return out


def _rule(parts: tuple, widths: list) -> str:
    left, fill, junction, right = parts
    return left + junction.join(fill * w for w in widths) + right


class PlainConsole:
    """A stand-in for rich's ``Console(highlight=False, width=width)`` on output that is no
    terminal: :meth:`print` writes strings and :class:`Table` to ``sys.stdout`` itself and
    hands everything else to rich (see the module text).

    Args:
        width: the console's width in columns.
    """

    def __init__(self, width: int):
        self.width = width
        self._rich = None

    def print(self, *objects, markup: bool | None = None, highlight: bool | None = None, **more) -> None:
        """Print as rich's ``Console.print`` does (``highlight`` changes nothing: the console
        highlights nothing)."""
        lines = self._lines(objects[0], markup) if len(objects) == 1 and not more else None
        if lines is None:
            if self._rich is None:
                self._rich = rich_module("console").Console(highlight=False, width=self.width)
            self._rich.print(*objects, markup=markup, highlight=highlight, **more)
            return
        sys.stdout.write("".join(line + "\n" for line in lines))

    def _lines(self, obj, markup: bool | None) -> list | None:
        if isinstance(obj, Table) and markup is None:
            return obj.lines(self.width)
        if not isinstance(obj, str):
            return None
        text = obj if markup is False else markup_text(obj)
        if not _plain(text.replace("\n", " ") if text is not None else None):
            return None
        return [piece for line in text.split("\n") for piece in wrap(line, self.width)]


def text_console(width: int):
    """The console of text reports: a :class:`PlainConsole` of ``width`` columns where the
    output is no terminal and rich would write plain text (see the module text), else rich's
    console (the terminal's width on a terminal)."""
    out = sys.stdout
    plain = (not out.isatty() and "FORCE_COLOR" not in os.environ and os.environ.get("TTY_COMPATIBLE") != "1"
             and (getattr(out, "encoding", None) or "utf-8").lower().startswith("utf") and os.name != "nt"
             and "IPython" not in sys.modules)
    if plain:
        return PlainConsole(width)
    return rich_module("console").Console(highlight=False, width=None if out.isatty() else width)


def rich_module(name: str):
    """The module ``rich.<name>``, loaded when something is rendered by rich (a terminal, or what
    :class:`PlainConsole` leaves to rich): plain reports do not import rich
    (benchmarks/speed_check.py)."""
    return importlib.import_module(f"rich.{name}")
