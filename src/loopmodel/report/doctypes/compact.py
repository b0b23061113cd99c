"""The document of ``analyze --json compact`` (:mod:`loopmodel.report.sweep_compact`)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import NotRequired

from .analyze import AnalyzeDocument
from .base import Envelope, Strict


class SweepPiece(Strict):
    """Points of a sweep with the same figures: the analysis of the first of them."""

    first_point: Annotated[int, Field(description="index (0-based, in sweep order) of the piece's first point")]
    points: Annotated[int, Field(description="points in the piece")]
    result: Annotated[AnalyzeDocument, Field(
        description="loopmodel analyze --json at the first point: every figure holds for every point of the piece, "
                    "except defines, requirement_B, data_set_B and the sizes named in notes (the first point's)")]


class AnalyzeCompactDocument(Envelope):
    """``loopmodel analyze --json compact``: a sweep of sizes, the points as columns and each
    piece's analysis once."""

    format: Annotated[Literal["compact sweep"], Field(description="this document's layout")]
    points: Annotated[int, Field(description="points of the sweep analysed (the skipped ones left out)")]
    piecewise: Annotated[bool, Field(description="false: analysed point by point (each point a piece)")]
    piecewise_note: NotRequired[Annotated[str, Field(description="why the sweep was analysed point by point")]]
    skipped_points: NotRequired[Annotated[int, Field(
        description="points of the sweep left out: the kernel does nothing there (an empty loop, an array without "
                    "elements)")]]
    skipped_note: NotRequired[Annotated[str, Field(description="how many points were left out and why (the first)")]]
    constants: Annotated[dict[str, int], Field(description="size constants with the same value at every point")]
    varying: Annotated[list[str], Field(description="the swept size constants, in -D order")]
    columns: Annotated[dict[str, list[int]], Field(
        description="each varying size and 'piece' (index into pieces): one value per point, in sweep order (the "
                    "last varying size fastest)")]
    pieces: Annotated[list[SweepPiece], Field(description="the pieces, in the order of their first points")]
