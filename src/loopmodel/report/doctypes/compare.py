"""Document type of ``compare`` (see :mod:`loopmodel.report.doctypes`)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .base import Count, Envelope, Num, NumOrInf, Strict

#: the figures a footnote belongs to (:class:`loopmodel.workflows.compare.Footnote`)
FootnoteColumn = Literal["analysis", "ECM", "Roofline", "socket", "energy"]


class CompareLocation(Strict):
    """The single-core ECM prediction with the data in one level (``T_ECM`` of ``analyze``)."""

    cy_per_cl: Annotated[Num, Field(description="T_ECM, cy/CL (null: T_OL unknown)")]
    cy_per_it: Annotated[Num, Field(description="T_ECM, cy/it (null: T_OL unknown)")]


class CompareRates(Strict):
    """A performance in the units of :mod:`loopmodel.report.output_units`."""

    it_s: Annotated[NumOrInf, Field(description="iterations per second")]
    flop_s: Annotated[NumOrInf, Field(description="FLOP/s (it/s times FLOP per iteration)")]
    lup_s: Annotated[NumOrInf, Field(description="lattice-site updates per second (one per iteration)")]


class CompareSocket(CompareRates):
    """All cores of one socket (``analyze --cores N``, row N of ``scaling``)."""

    cores: Annotated[Count, Field(description="active cores: the cores of one socket")]
    data_in: Annotated[str, Field(description="the memory level the data of the n cores are in")]
    limit: Annotated[str, Field(description="what bounds the performance: 'core', 'memory' or 'shared <link>'")]


class CompareEnergy(Strict):
    """The energy-optimal operating point of ``energy`` (one chip, the power section's clocks)."""

    cores: Annotated[Count, Field(description="active cores n")]
    clock_Hz: Annotated[Num, Field(description="core clock f, Hz")]
    power_W: Annotated[Num, Field(description="chip power W(n, f), W")]
    it_s: Annotated[Num, Field(description="performance P_ECM(n, f), it/s")]
    energy_J_per_it: Annotated[Num, Field(description="energy to solution E = W / P, J per iteration (J/LUP)")]


class CompareFootnote(Strict):
    """Why a figure of the row is null: the one-line reason of the model that could not give it."""

    column: Annotated[FootnoteColumn, Field(description="the figure: 'analysis' (the whole row), 'ECM', "
                                                        "'Roofline', 'socket' or 'energy'")]
    text: Annotated[str, Field(description="the reason, one line")]


class CompareMachine(Strict):
    """One machine model's figures (:func:`loopmodel.report.compare_json.row_dict`); null where the
    model could not give a figure (its footnote says why)."""

    machine: Annotated[str, Field(description="name of the machine model")]
    clock_Hz: Annotated[Num, Field(description="core clock of the prediction, Hz")]
    cores_per_socket: Annotated[Count | None, Field(description="cores per socket of the machine model")]
    iterations_per_cl: Annotated[Num, Field(description="iterations per unit of work (one cache line of the "
                                                        "written array; cache lines differ between models), it/CL")]
    ecm_per_location: Annotated[dict[str, CompareLocation], Field(
        description="level -> the single-core ECM prediction with the data in that level ('L1' ... 'MEM'; the "
                    "models differ in depth)")]
    data_in: Annotated[str | None, Field(description="the data location at the sizes")]
    T_ECM_cy_per_cl: Annotated[Num, Field(description="single-core T_ECM for data_in, cy/CL")]
    T_ECM_cy_per_it: Annotated[Num, Field(description="single-core T_ECM for data_in, cy/it")]
    saturation_cores: Annotated[Count | None, Field(description="n_s, cores per ccNUMA domain that saturate the "
                                                                "memory interface; null: nothing saturates or "
                                                                "unknown")]
    roofline_bottleneck: Annotated[str | None, Field(description="the Roofline bottleneck of one core: 'CPU' or a "
                                                                 "level name; null: no Roofline (footnote)")]
    core: Annotated[CompareRates, Field(description="performance of one core at data_in (from T_ECM)")]
    socket: Annotated[CompareSocket | None, Field(description="performance of one socket; null: unknown")]
    energy: Annotated[CompareEnergy | None, Field(description="energy-optimal operating point; null: no power "
                                                              "model (footnote)")]
    footnotes: Annotated[list[CompareFootnote], Field(description="why figures of this row are null")]
    notes: Annotated[list[str], Field(description="the notes of the single-core analysis (as analyze prints them)")]


class CompareDocument(Envelope):
    """``loopmodel compare --json``: one kernel at one set of sizes on several machine models."""

    kernel: Annotated[str, Field(description="the kernel file")]
    defines: Annotated[dict[str, Count], Field(description="size constant -> value (elements or iterations)")]
    flops_per_it: Annotated[Num, Field(description="floating-point operations per iteration, FLOP/it")]
    multicore_model: Annotated[Literal["contention", "saturation"], Field(
        description="multicore model of the socket figures")]
    machines: Annotated[list[CompareMachine], Field(description="one object per machine model, in the order named")]
