"""The probed machine model of this host in the per-user cache: what ``-m host`` loads.

``loopmodel machine probe`` stores the model it writes here as well, keyed by host name and
CPU model (a model measured on one machine must not be taken for another that shares the
home directory), so that every command can use it as ``-m host`` without a path. The file
is the one the probe wrote, kept until the next probe of the same host replaces it.
"""
from __future__ import annotations

import os
import re
import socket
from typing import TYPE_CHECKING

from .. import cache
from ..errors import MachineError
from .output import replace_atomically

if TYPE_CHECKING:
    from pathlib import Path

#: the ``-m`` name of this host's probed model
HOST_NAME = "host"
#: how long ``machine probe`` takes, as its ``--help`` and the hint of a missing ``-m host`` model
#: say: wall-clock time on a 2-vCPU guest shared with other work (benchmarks/results/probe-times.txt),
#: the probe's self-check repeats unsteady measurements, so a busier machine takes longer
PROBE_TIME = "about 2 minutes on 2 cores; --quick about 1"


def host_cpu_model(root: str = "/") -> str:
    """The CPU model of this host: the ``model name`` (x86) or ``CPU part`` lines of
    ``/proc/cpuinfo`` under ``root``; '' where unreadable."""
    try:
        with open(os.path.join(root, "proc/cpuinfo"), errors="replace") as fh:
            text = fh.read()
    except OSError:
        return ""
    m = re.search(r"^(model name|CPU part|cpu)\s*:\s*(.+)$", text, re.MULTILINE)
    return m.group(2).strip() if m else ""


def host_model_path(hostname: str | None = None, cpu_model: str | None = None) -> Path:
    """Where the probed model of this host (or of ``hostname`` with ``cpu_model``) is kept:
    ``<cache dir>/hosts/<host name>-<8 hex digits of the CPU model's SHA-256>.yml``."""
    hostname = hostname if hostname is not None else _hostname()
    cpu_model = cpu_model if cpu_model is not None else host_cpu_model()
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", hostname) or "unknown"
    digest = cache.sha256(cpu_model.encode()).hexdigest()[:8]
    return cache.cache_dir() / "hosts" / f"{safe}-{digest}.yml"


def store_host_model(text: str) -> Path:
    """Keep ``text`` (a machine file) as this host's probed model, replacing an earlier probe.

    Written to a temporary file and renamed, so a reader never sees half a file, in the cache's
    ``hosts`` folder made and checked by :func:`loopmodel.cache.folder`.

    Raises:
        MachineError: the cache folder cannot be written, or is not private to this user (one
            line naming it).
    """
    path = host_model_path()
    try:
        if cache.folder(path.parent.name) is None:  # an unsafe cache folder: nothing written
            raise MachineError(f"cannot keep the probed model for -m host: {cache.problem()}")
        replace_atomically(path, text)
    except OSError as exc:
        raise MachineError(f"cannot keep the probed model for -m host: {exc.strerror or exc}",
                           file=str(path)) from None
    return path


def resolve_host() -> Path:
    """The file ``-m host`` stands for.

    Raises:
        MachineError: this host has not been probed yet: no file there, or a folder in its
            place (one line with the hint).
    """
    path = host_model_path()
    if not path.is_file():
        raise MachineError(f"no probe of this host yet: run 'loopmodel machine probe' ({PROBE_TIME}) to measure "
                           "the model '-m host' uses")
    return path


def host_note(machine) -> str:
    """The note that goes with results for ``-m host``: which probe they rest on."""
    probe = machine.probe
    when = (probe.date if probe else None) or "an unknown date"
    return (f"machine model: the probe of this host '{(probe.hostname if probe else None) or _hostname()}' "
            f"from {when} ({host_model_path()})")


def machine_notes(name, machine) -> tuple:
    """The notes every command adds for ``-m NAME``: which probe ``-m host`` rests on (:func:`host_note`);
    none for a built-in model or a file."""
    return (host_note(machine),) if str(name) == HOST_NAME else ()


def _hostname() -> str:
    """This host's name (``socket.gethostname``)."""
    return socket.gethostname()