"""Which compiled in-core analyzers can run for a machine model on this host, so that a message
suggests only an alternative that is there (``--incore llvm-mca`` where llvm-mca is found and the
machine model names its CPU; ``--incore osaca`` where OSACA is installed and models that CPU;
else ``--incore analytic``, which always runs)."""
from __future__ import annotations

from ..errors import ToolError
from . import llvm_mca, osaca_backend

#: the analyzers, in the order ``--incore auto`` tries them
ANALYZERS = ("llvm-mca", "osaca")


def usable(machine, analyzer: str) -> bool:
    """Whether ``analyzer`` (``"llvm-mca"`` or ``"osaca"``) can analyse code for ``machine`` on this
    host: llvm-mca found (:func:`.llvm_mca.find_llvm_mca`) and ``in_core.llvm_mca_cpu`` named;
    OSACA installed and an architecture of it known for the machine (:func:`.osaca_backend.arch_for`).
    That it will accept a given loop block is not known before it runs."""
    if analyzer == "llvm-mca":
        return bool(machine.in_core.llvm_mca_cpu) and llvm_mca.find_llvm_mca() is not None
    if analyzer == "osaca":
        if not osaca_backend.available():
            return False
        try:
            osaca_backend.arch_for(machine)
        except ToolError:
            return False
        return True
    return False


def instead(machine, refused=()) -> str:
    """The ``--incore`` value to suggest where the analyzers of ``refused`` cannot run or have just
    refused: the first other usable analyzer of :data:`ANALYZERS`, else ``analytic``."""
    return next((a for a in ANALYZERS if a not in refused and usable(machine, a)), "analytic")
