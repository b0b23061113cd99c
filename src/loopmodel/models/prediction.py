"""The prediction of one analysis point: the figures every report and command reads.

One object per point owns what the commands used to compute each for itself:

* the data location (:func:`~loopmodel.models.location.data_location`, write-through and victim
  caches included), read from the ECM result that carries it;
* the single-core T_ECM selected for it (:attr:`~loopmodel.models.ecm.ECMResult.selected`, with the
  overlap rule of the links that carry traffic, cross-architecture-machine-models.txt eq. 4);
* the n-core figure of one multicore model (:data:`DEFAULT_MULTICORE_MODEL`, the other by option
  and named in every output), :func:`~loopmodel.models.scaling.core_point` at the data location
  with the traffic of n active cores;
* the saturation point of the memory interface (:mod:`loopmodel.models.saturation`), only where
  the data come from memory;
* the Roofline of the point (:mod:`loopmodel.models.roofline`).

``analyze`` (text, JSON, the Python API), ``scaling`` (row n is the prediction of ``analyze --cores
n``), ``energy``, ``app``, ``validate`` and the validation corpus read it; none recomputes it.
"""
from __future__ import annotations

from dataclasses import dataclass

from .saturation import SaturationPoint
from .scaling import ScalingPoint, core_point

#: the multicore models (cross-architecture-machine-models.txt §3.4.4 eq. 5; ecm-model-slides.txt
#: "ECM model – saturation"), the default first
MULTICORE_MODELS = ("contention", "saturation")

#: the n-core model every command uses unless told otherwise: the contention model of the
#: cross-architecture paper (eq. 5), which bends toward the saturated bandwidth as the slides' rule
#: min(n P1, P_sat) does not; its parameter p0 is the machine model's
DEFAULT_MULTICORE_MODEL = MULTICORE_MODELS[0]


@dataclass(frozen=True)
class Prediction:
    """The answers of one analysis point (kernel, machine, sizes, active cores).

    Attributes:
        location: the data location, a level name (``L1`` ... ``MEM``).
        cores: active cores.
        single_core_cy_per_cl: T_ECM for ``location`` of one of the ``cores`` cores (traffic with
            that many active cores), cy/CL; None where T_OL is unknown.
        multicore_model: the n-core model of :attr:`point` (a name of :data:`MULTICORE_MODELS`).
        point: :class:`~loopmodel.models.scaling.ScalingPoint` of ``cores`` cores at ``location``
            (rate in CL/cy of all cores together, it/s, what limits it); None where T_ECM is unknown.
        saturation: :class:`~loopmodel.models.saturation.SaturationPoint` of one ccNUMA domain for
            data from memory (``cores`` None with the data in a cache or T_ECM unknown).
        cores_per_domain: cores of one ccNUMA domain (to say whether n_s is reached in one).
        roofline: the point's :class:`~loopmodel.models.roofline.RooflineResult`, or None.
    """

    location: str
    cores: int
    single_core_cy_per_cl: float | None
    multicore_model: str
    point: ScalingPoint | None
    saturation: SaturationPoint
    cores_per_domain: int
    roofline: object = None

    @property
    def cy_per_cl(self) -> float | None:
        """Aggregate time per CL of work of all active cores, 1 / rate (cy/CL); None where unknown."""
        return None if self.point is None else 1.0 / self.point.rate_cl_per_cy

    @property
    def saturates_in_domain(self) -> bool:
        """Whether n_s is within one ccNUMA domain's cores (False: nothing to saturate, or n_s beyond)."""
        return self.saturation.cores is not None and self.saturation.cores <= self.cores_per_domain


def predict(ecm, machine, cores: int, it_per_cl: float, model: str = DEFAULT_MULTICORE_MODEL,
            p0: float | None = None, roofline=None) -> Prediction:
    """The prediction of one point from its ECM result.

    Args:
        ecm: :class:`~loopmodel.models.ecm.ECMResult` of the analysis with ``cores`` active cores
            (its ``location``, T_ECM per level, memory busy time T_Mem, shared links).
        machine: :class:`~loopmodel.machine.model.MachineModel` (clock, ccNUMA layout, p0).
        cores: active cores (>= 1); it_per_cl: iterations per CL of work.
        model: a name of :data:`MULTICORE_MODELS`; p0: contention parameter (None: the machine's).
        roofline: the point's Roofline result, kept as it is.

    Returns:
        :class:`Prediction` (n-core point by :func:`~loopmodel.models.scaling.core_point`, first-touch
        placement: every ccNUMA domain in use serves its own cores).
    """
    t = ecm.selected
    point = None if t is None else core_point(cores, ecm, machine, it_per_cl, model, p0, False, ecm.location)
    sat = ecm.saturation if ecm.location == machine.memory_hierarchy[-1].level else SaturationPoint(None, 0.0)
    return Prediction(ecm.location, cores, t, model, point, sat, machine.cores_per_numa_domain, roofline)
