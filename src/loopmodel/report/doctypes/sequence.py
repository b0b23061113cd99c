"""Document type of ``analyze`` on a kernel function of several loop nests (see
:mod:`loopmodel.report.doctypes`; :mod:`loopmodel.workflows.sequence`)."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .analyze import AnalyzeDocument, Machine
from .base import Count, Envelope, Num, Strict


class NestDoc(Strict):
    """One loop nest of the function, in execution order."""

    line: Annotated[int, Field(description="line of the nest's first statement in the kernel file")]
    loops: Annotated[list[str], Field(description="the nest's loop indices, outermost first")]
    repeat_loops: Annotated[list[str], Field(description="enclosing loops the nest does not use (a time loop): it "
                                                         "runs once per iteration of them")]
    runs: Annotated[Count, Field(description="runs per call of the function (the product of the repeat loops' trip "
                                             "counts)")]
    iterations: Annotated[Count, Field(description="innermost iterations of one run")]
    data_location: Annotated[str | None, Field(description="the nest's data location (null: it does not run)")]
    T_ECM_cy_per_cl: Annotated[Num, Field(description="single-core ECM time at the data location, cy/CL")]
    cy_per_it: Annotated[Num, Field(description="the same per iteration, cy/it")]
    time_per_call_cy: Annotated[Num, Field(description="core cycles of all its runs in one call, cy")]
    share: Annotated[Num, Field(description="its fraction of the call's time")]
    bottleneck: Annotated[str | None, Field(description="the largest ECM term at the data location (T_OL, T_nOL, "
                                                        "T_L1L2, ...)")]
    does_not_run: Annotated[str | None, Field(description="why the nest does nothing at these sizes (null: it runs)")]
    analysis: Annotated[AnalyzeDocument | None, Field(description="the nest's full analysis (null: it does not "
                                                                  "run)")]


class AnalyzeFunctionDocument(Envelope):
    """``loopmodel analyze --json`` of a kernel function of several loop nests: each nest analysed
    as a kernel and the times summed."""

    kernel_file: Annotated[str, Field(description="the kernel file")]
    machine: Annotated[Machine, Field(description="the machine model")]
    defines: Annotated[dict[str, int], Field(description="size constant -> value")]
    nests: Annotated[list[NestDoc], Field(description="the loop nests in execution order")]
    total_time_per_call_cy: Annotated[Num, Field(description="core cycles of one call, single core (null: a nest's "
                                                            "time is unknown)")]
    total_time_per_call_s: Annotated[Num, Field(description="seconds of one call at the machine's clock, single core")]
    outer_loop: Annotated[str | None, Field(description="the loop around every nest that none uses (a time loop), "
                                                        "null where there is none")]
    time_per_outer_iteration_cy: Annotated[Num, Field(description="core cycles of one iteration of that loop, cy")]
    notes: Annotated[list[str], Field(description="remarks on the whole function (each nest's are in its analysis)")]
