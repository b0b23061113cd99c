"""Where a kernel's data come from: the one rule every report, figure and command reads.

The data location is the level beyond the farthest link that carries *data*: loads toward the
core, or write-backs out of a write-back level. A write-through level sends every store on to
the next level wherever the data are (cross-architecture-machine-models.txt §3.3, Power9's L1), so
its store traffic says nothing about where the data are and is left out; a victim cache fed from
memory (§5.2.1) is where the data are when its link carries loads toward the core and memory does
not. With no traffic on any link the data are in the first level.
"""
from __future__ import annotations


def data_location(traffic, hierarchy) -> str:
    """The memory level the data of one analysis point come from.

    Args:
        traffic: :class:`~loopmodel.predictors.traffic.TrafficPrediction` (cache lines per CL of work on
            each link, core side first).
        hierarchy: the machine's memory levels, closest to the core first, one more than the links
            (:attr:`~loopmodel.machine.model.MachineModel.memory_hierarchy`).

    Returns:
        a level name of ``hierarchy`` (``L1`` ... ``MEM``).
    """
    busy = [k for k, lt in enumerate(traffic.levels)
            if lt.loads_cl > 0 or (lt.stores_cl > 0 and hierarchy[k].write_back)]
    return hierarchy[busy[-1] + 1].level if busy else hierarchy[0].level
