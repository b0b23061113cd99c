"""The building blocks of every document type (:mod:`loopmodel.report.doctypes`): the strict
object base, the envelope and the number types."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field
from typing_extensions import TypedDict

from ..schema import SCHEMA_VERSION

#: a number in the unit its key names; null where the input cannot support the figure
Num = float | None
#: a number that may be infinite: ``"inf"`` (:func:`loopmodel.report.schema.finite`; JSON has no
#: infinity), or null where unknown
NumOrInf = float | Literal["inf"] | None
#: a whole number (cores, threads, iterations, sizes in elements)
Count = int


class Strict(TypedDict):
    """Base of every document object: keys not declared are errors."""

    __pydantic_config__ = ConfigDict(extra="forbid")


class Envelope(Strict):
    """The two keys every document starts with."""

    schema_version: Annotated[Literal[SCHEMA_VERSION], Field(description="version of this schema: raised when a key is "
                                                              "renamed or removed")]
    loopmodel_version: Annotated[str, Field(description="the loopmodel release that wrote the document")]


class ErrorStats(Strict):
    """|relative error| (predicted / measured min - 1) over a group of validation cases
    (:meth:`loopmodel.models.accuracy.ErrorStats.to_mapping`; fractions: 0.05 is 5 %)."""

    count: Annotated[Count, Field(description="cases in the group")]
    median_abs_error: Annotated[Num, Field(description="median |predicted / measured min - 1|, fraction")]
    p90_abs_error: Annotated[Num, Field(description="90th percentile (nearest rank) of |error|, fraction")]
    max_abs_error: Annotated[Num, Field(description="largest |error|, fraction")]
