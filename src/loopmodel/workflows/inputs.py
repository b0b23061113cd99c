"""Reading the inputs the commands share: the kernel file with ``--function``, ``-I`` and ``-D``,
the machine of ``-m`` with its ``--clock``, byte quantities, core lists, ``--p0`` and measured points. Every error is one line
(:class:`~loopmodel.errors.DefineError`)."""
from __future__ import annotations

import dataclasses
import json
import os
import re

from ..errors import DefineError
from ..fileio.defines import count_list, is_name, parse_define_lazy
from ..fileio.machine_files import load_machine
from ..fileio.reader import read_text
from ..ir.kernel_source import KernelSource
from ..machine.fields import CLOCK
from ..machine.model import P0_MAX
from ..units import UnitError, parse_quantity


def machine_model(machine, clock: str | None = None):
    """The machine model of ``-m`` (a name or path, a :class:`loopmodel.Machine` or a
    ``MachineModel``), with the ``--clock`` override (text such as ``'2.2 GHz'``) applied.

    Raises:
        MachineError: unknown name or invalid file. DefineError: a bad ``clock``.
    """
    if isinstance(machine, (str, os.PathLike)):
        model = load_machine(machine)
    else:  # the Python API's loopmodel.Machine, or a MachineModel
        model = getattr(machine, "model", machine)
    if clock:
        try:
            model = dataclasses.replace(model, clock=CLOCK.check(parse_quantity(clock, "frequency")))
        except ValueError as exc:
            raise DefineError(f"--clock: {exc}") from None
    return model


def kernel_reference(kernel, options):
    """The :class:`~loopmodel.ir.kernel_source.KernelSource` of a kernel file and a command's options
    (``--function``, ``-I``, the ``-D`` sizes and macros); ``kernel`` itself where it is not a file
    (a :class:`loopmodel.Kernel`).

    Raises:
        DefineError: a malformed ``-D`` (one line).
    """
    if hasattr(kernel, "parts"):
        return kernel
    sizes, macros = [], []
    for text in options.define:
        if "=" not in text and is_name(text):
            macros.append(text)
            continue
        name, values = parse_define_lazy(text)
        sizes.append((name, values[0] if len(values) == 1 else None))
    return KernelSource(str(kernel), getattr(options, "function", None), tuple(getattr(options, "include", ())),
                        tuple(sizes), tuple(macros))


def size_defines(options) -> list:
    """The ``-D`` texts of a command's options that give sizes (a bare ``-D NAME`` is a macro for the
    preprocessor only)."""
    return [text for text in options.define if "=" in text or not is_name(text)]


def machine_name(spec) -> str:
    """What ``-m`` names: the text given, or for a :class:`loopmodel.Machine` the name or path it
    was loaded from (a bare ``MachineModel``: its ``name``)."""
    if isinstance(spec, (str, os.PathLike)):
        return str(spec)
    return getattr(spec, "spec", None) or spec.name


def check_p0(p0: float | None) -> None:
    """``--p0`` within the range :func:`loopmodel.models.scaling.scaling` accepts (one-line error)."""
    if p0 is not None and not 0 < p0 <= P0_MAX:
        raise DefineError(f"--p0 {p0:g}: must be in (0, {P0_MAX}]")


def core_list(text: str | None, most: int) -> list:
    """``'1:8'`` (inclusive), ``'1:8:2'``, ``'1,2,4'`` or ``'8'`` -> sorted core counts, each in
    1..``most`` (None: all); one-line error otherwise."""
    if text is None:
        return list(range(1, most + 1))
    vals = count_list(text, "--cores")
    if min(vals) < 1:
        raise DefineError(f"--cores {text}: core counts must be at least 1")
    if max(vals) > most:
        raise DefineError(f"--cores {text}: the machine model has {most} cores")
    return sorted(set(vals))


def read_measured(path: str) -> dict:
    """Measured points -> {cores: it/s} from ``loopmodel bench`` / ``measure --json`` output
    (``points`` with ``threads``/``cores`` and ``it_s``)."""
    text = read_text(path, "--measured file", DefineError)
    try:
        doc = json.loads(text)
        pts = doc["points"] if isinstance(doc, dict) else doc
        # it_per_s: files written before schema version 1
        return {int(p.get("threads", p.get("cores"))): float(p["it_s"] if "it_s" in p else p["it_per_s"])
                for p in pts}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise DefineError(f"--measured {path}: expected JSON with 'points' of 'threads' and 'it_s'") from None


def alignment_bytes(text: str | None) -> int | None:
    """``--assume-aligned``: None, or a power of two of bytes; one-line error otherwise."""
    if text is None:
        return None
    value = byte_count("--assume-aligned", text, minimum=1)
    if value & (value - 1):
        raise DefineError(f"--assume-aligned: '{text}' must be a power of two of bytes (e.g. 32)")
    return value


def byte_count(name: str, text: str, minimum: int) -> int:
    """``'4096'``, ``'4096 B'`` or ``'4 KiB'`` -> int bytes; one-line error (naming option
    ``name``) otherwise."""
    t = text.strip()
    try:
        if re.fullmatch(r"-?\d+(\s*B)?", t):  # plain bytes, zero allowed (units.parse_quantity rejects 0)
            value = int(t.rstrip("B").strip())
        else:
            value = parse_quantity(t, "size")
    except UnitError as exc:
        raise DefineError(f"{name}: {exc}") from None
    if value != int(value) or value < minimum:
        raise DefineError(f"{name}: '{text}' must be a whole number of bytes >= {minimum}")
    return int(value)
