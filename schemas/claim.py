"""A claim: one checkable statement a note makes, where it comes from, and how to test it.

Claims live in a note's frontmatter under ``claims:``. A claim may bind an analyzer (by registry name,
with parameters) and an expectation: a predicate over the analyzer's result, addressed by a dotted
metric path such as ``best_depth`` or ``layers.20.kl_to_final``.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

_CLAIM_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


def _check_claim_id(value: str) -> str:
    if not _CLAIM_ID.match(value):
        raise ValueError(
            f"claim id {value!r} must be 1-64 lower-case letters, digits, '-', '_' or '.', "
            "starting with a letter or digit (e.g. 'optimal-depth')"
        )
    return value


ClaimId = Annotated[str, AfterValidator(_check_claim_id)]


class ClaimKind(StrEnum):
    """Whether a claim states a number (testable by an expectation) or a trend/opinion."""

    quantitative = "quantitative"
    qualitative = "qualitative"


class Operator(StrEnum):
    """Comparison an expectation applies to a metric."""

    lt = "<"
    le = "<="
    gt = ">"
    ge = ">="
    eq = "=="
    between = "between"
    approx = "approx"


class ClaimSource(BaseModel):
    """The passage of the paper that backs a claim."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    quote: str = Field(min_length=1, description="Verbatim text from the paper that backs the claim.")
    section: str | None = Field(default=None, description="Section, table or figure the quote is from.")
    page: int | None = Field(default=None, ge=1, description="Page number in the PDF, when known.")


class AnalyzerBinding(BaseModel):
    """Which registered analyzer reproduces the claim, and with which parameters."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    name: str = Field(description="Registry name of the analyzer, e.g. 'depth.probe' or 'langevin.sweep'.")
    params: dict[str, Any] = Field(
        default_factory=dict, description="Parameters, validated against the analyzer's Params model."
    )
    scale: str | None = Field(
        default=None, description="Named scale preset of the analyzer (e.g. 'smoke', 'small', 'paper')."
    )
    seeds: list[int] | None = Field(
        default=None,
        min_length=1,
        description="Run once per seed; the verdict is taken on the mean and is inconclusive when the seed "
        "spread straddles the threshold. Default: one run with the analyzer's own seed.",
    )
    settled_by: str | None = Field(
        default=None,
        description="The analyzer's preset whose evidence would settle the claim, where `scale` runs only a "
        "smaller proxy of it (a tiny model for a claim about a 650M one). kb says what it needs and costs.",
    )


class Expectation(BaseModel):
    """A predicate over an analyzer result: ``metric <op> value``.

    ``between`` takes ``[low, high]``; ``approx`` passes when ``|metric - value| <= tolerance``
    (absolute) or ``<= rel_tolerance * |value|``. ``inconclusive_band`` widens the boundary into a
    zone where the verdict is inconclusive instead of a hard pass/fail.
    """

    model_config = ConfigDict(defer_build=True, extra="forbid", populate_by_name=True)

    metric: str = Field(description="Dotted path into the analyzer's result, e.g. 'layers.20.kl_to_final'.")
    op: Operator = Field(description="Comparison operator.")
    value: float | list[float] | bool | str = Field(description="Threshold, [low, high] for 'between'.")
    tolerance: float | None = Field(default=None, ge=0, description="Absolute tolerance for 'approx'.")
    rel_tolerance: float | None = Field(default=None, ge=0, description="Relative tolerance for 'approx'.")
    inconclusive_band: float = Field(
        default=0.0, ge=0, description="Absolute margin around the threshold that yields 'inconclusive'."
    )

    @model_validator(mode="after")
    def _shape_matches_operator(self) -> Expectation:
        values = self.value if isinstance(self.value, list) else [self.value]
        if any(isinstance(v, float) and not math.isfinite(v) for v in values):
            # NaN compares false with everything: every verdict would read 'refuted'.
            raise ValueError("the threshold must be a finite number, not NaN or infinity")
        if self.op not in (Operator.eq,) and any(isinstance(v, str | bool) for v in values):
            raise ValueError(f"operator {self.op.value!r} compares numbers: give a number, not {values[0]!r} "
                             "(only '==' takes text or true/false)")
        if self.op is Operator.between:
            if not (isinstance(self.value, list) and len(self.value) == 2 and self.value[0] <= self.value[1]):
                raise ValueError("'between' needs value: [low, high] with low <= high")
        elif isinstance(self.value, list):
            raise ValueError(f"operator {self.op.value!r} needs a single value, not a list")
        if self.op is Operator.approx and self.tolerance is None and self.rel_tolerance is None:
            raise ValueError("'approx' needs 'tolerance' (absolute) or 'rel_tolerance' (relative)")
        return self


class ClaimScale(BaseModel):
    """The scale a claim was made at, so that small-scale evidence is never mistaken for a replication."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    parameters: float | None = Field(default=None, ge=0, description="Model size in parameters, e.g. 6.5e8.")
    data: str | None = Field(default=None, description="Training/evaluation data, e.g. 'UniRef50'.")
    description: str | None = Field(default=None, description="Free-text description of the setting.")


class PaperValue(BaseModel):
    """A number the paper (or the note) reports for a claim, shown beside kb's own value of the same metric."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    value: float | list[float] | bool = Field(description="The reported value, or [low, high] for a range.")
    where: str = Field(min_length=1, description="Where the paper or note states it (section, table, figure).")
    metric: str | None = Field(
        default=None, description="kb's metric path it corresponds to; default: the claim's `expect.metric`."
    )
    note: str | None = Field(default=None, description="How it maps onto kb's metric (units, which model).")


class ClaimQuantity(BaseModel):
    """What a claim measures, where its binding does not say it (an unbound claim) or says it in other words."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    name: str = Field(min_length=1, description="The quantity, e.g. 'downstream-gain-from-scale'. Default: "
                      "'<analyzer>:<expect.metric>' from the binding, e.g. 'depth.sweep:best_depth'.")
    unit: str | None = Field(default=None, description="Unit of the values the expectation states ('layers', "
                             "'%'); claims stating different units are not compared.")


def _quantity_from_name(value: Any) -> Any:
    """``quantity: downstream-gain`` is short for ``quantity: {name: downstream-gain}``."""
    return {"name": value} if isinstance(value, str) else value


class ClaimSubject(BaseModel):
    """Which models a claim is about; a field left out matches any value when claims are compared."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    family: str | None = Field(default=None, description="Model family, e.g. 'ESM-2', 'ProGen2', 'GPT-like PLM'.")
    objective: str | None = Field(default=None, description="Training objective: 'masked', 'autoregressive', "
                                  "'diffusion', ...")
    parameters: float | None = Field(default=None, ge=0, description="Model size in parameters. Default: "
                                     "`scale.parameters`; two sizes within a factor of 2 are the same subject.")
    data: str | None = Field(default=None, description="Training or evaluation data. Default: `scale.data`.")


class ClaimCondition(BaseModel):
    """Under which conditions a claim holds; a field left out overlaps every value when claims are compared."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    scale: str | None = Field(default=None, description="The analyzer's scale preset the claim is about. Default: "
                              "the binding's `settled_by`, else its `scale`; claims naming different presets are "
                              "not compared.")
    budget: float | list[float] | None = Field(
        default=None, description="The budget it holds at (parameters, tokens or FLOPs, as the claim counts them): "
        "a number or [low, high]; claims whose budgets do not overlap are not compared.")

    @model_validator(mode="after")
    def _budget_is_a_range(self) -> ClaimCondition:
        values = self.budget if isinstance(self.budget, list) else [] if self.budget is None else [self.budget]
        if not all(math.isfinite(v) for v in values):
            raise ValueError("budget must be finite numbers")
        if isinstance(self.budget, list) and not (len(self.budget) == 2 and self.budget[0] <= self.budget[1]):
            raise ValueError("budget takes a number or [low, high] with low <= high")
        return self

    def budget_range(self) -> tuple[float, float] | None:
        """The budget as [low, high] (a number is a range of one value), or None."""
        if self.budget is None:
            return None
        low, high = self.budget if isinstance(self.budget, list) else (self.budget, self.budget)
        return float(low), float(high)


#: How claims of different notes are compared (``kb.evidence.tensions``, the one home of the rule).
COMPARABLE_RULE = (
    "Two claims are comparable when their quantity matches (and the unit, where both state one), every subject "
    "field both state agrees (text ignoring case and spaces; sizes within a factor of 2) and their conditions "
    "overlap (the same preset where both name one; budgets that intersect). Comparable claims of different notes "
    "whose expectations accept no common value, or that one evidence record splits, are a tension (`kb tensions`)."
)


class Claim(BaseModel):
    """One statement of a note, with its source and (optionally) how to re-verify it."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    id: ClaimId = Field(description="Identifier, unique within the note.")
    statement: str = Field(min_length=1, description="The claim, in one sentence.")
    kind: ClaimKind = Field(default=ClaimKind.qualitative, description="Quantitative or qualitative.")
    source: ClaimSource | None = Field(default=None, description="Quote from the paper backing the claim.")
    analyzer: AnalyzerBinding | None = Field(default=None, description="Analyzer that reproduces the claim.")
    expect: Expectation | None = Field(default=None, description="Predicate the analyzer result must meet.")
    scale: ClaimScale | None = Field(default=None, description="Scale the claim was made at.")
    paper_values: list[PaperValue] | None = Field(
        default=None, description="What the paper itself reports for this claim, shown beside kb's values."
    )
    quantity: Annotated[ClaimQuantity | None, BeforeValidator(_quantity_from_name)] = Field(
        default=None, description="What the claim measures (default '<analyzer>:<expect.metric>'; a named quantity "
        f"for an unbound claim). {COMPARABLE_RULE}")
    subject: ClaimSubject | None = Field(
        default=None, description="The models the claim is about (family, objective, size, data); size and data "
        "default to `scale`'s.")
    condition: ClaimCondition | None = Field(
        default=None, description="The conditions it holds under (scale preset, budget); the preset defaults to "
        "the binding's `settled_by`, else its `scale`.")
