"""User-facing errors: one line naming the file, the place and what is wrong.

The CLI prints ``str(error)`` and exits with :attr:`LoopmodelError.exit_code`;
no traceback is shown for a user mistake (DEVELOPERS.md "Bad input").
"""
from __future__ import annotations


class LoopmodelError(Exception):
    """Base class of all errors caused by user input.

    Args:
        message: what is wrong, one line.
        file: the file the problem is in (kernel, machine file), if any.
        line, col: 1-based position in ``file``, if known.
        where: a key path inside a structured file (``memory_hierarchy[1].size``).
    """

    exit_code = 2

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 col: int | None = None, where: str | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        self.where = where

    def __str__(self) -> str:
        loc = ""
        if self.file:
            loc = str(self.file)
            if self.line:
                loc += f":{self.line}"
                if self.col:
                    loc += f":{self.col}"
            loc += ": "
        if self.where:
            loc += f"{self.where}: "
        return (loc + self.message).replace("\n", " ")


class KernelError(LoopmodelError):
    """Malformed or unsupported kernel code."""


class MachineError(LoopmodelError):
    """Malformed machine model file."""


class DefineError(LoopmodelError):
    """Bad ``-D`` value."""


class ModelError(LoopmodelError):
    """A model cannot be applied to this kernel/machine combination."""


class EmptyPointError(ModelError):
    """Sizes at which the kernel does nothing: an array without elements or a loop that runs no
    iteration (:func:`loopmodel.ir.point.check_point`). A sweep skips such points with one note;
    a single point is refused."""


class ToolError(LoopmodelError):
    """An external tool (compiler, analyzer) is missing or failed."""


class OptionError(ToolError):
    """What an explicit option (``--compiler``, ``--compiler-flags``, ``--asm-block``,
    ``--pointer-increment``, ``--scalar`` with a named analyzer) asked for cannot be done.
    Unlike other tool errors it is never turned into a fallback under ``--incore auto``: the
    user asked for it by name."""


class UsageError(LoopmodelError):
    """A bad argument of the Python API or an option value the command line would refuse
    (an unknown option name, a value outside its choices): the one line argparse prints."""


class ApiTypeError(UsageError, TypeError):
    """A Python API argument of the wrong type (None, a number or a list where a path is
    expected, an unknown keyword option); also catchable as :class:`TypeError`."""


class ApiValueError(UsageError, ValueError):
    """A Python API argument of the right type with a value the API refuses (an empty path,
    an option value outside its choices); also catchable as :class:`ValueError`."""


class Stopped(KeyboardInterrupt):
    """A command asked to end by a signal other than SIGINT (SIGTERM, SIGHUP): the command
    line raises it in its main thread, so it stops the work as a Ctrl-C does (``finally``
    blocks and ``with`` exits run, clusters close, temporary files go) and ``except
    KeyboardInterrupt`` catches it too.

    Args:
        signum: the signal's number.
        name: its name (``SIGTERM``).
    """

    def __init__(self, signum: int, name: str):
        super().__init__(name)
        self.signum = signum
        self.name = name


def stop_reason(exc: KeyboardInterrupt) -> tuple:
    """``(what stopped it, exit status)`` of an interrupted command: ``("interrupted", 130)`` for
    SIGINT (a Ctrl-C), ``("stopped by SIGTERM", 143)`` for a :class:`Stopped` (128 + the signal
    number, the shells' convention)."""
    if isinstance(exc, Stopped):
        return f"stopped by {exc.name}", 128 + exc.signum
    return "interrupted", 130
