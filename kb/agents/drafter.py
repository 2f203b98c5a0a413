"""Draft claims from a paper's text: an LLM agent when a chat model is given, else a deterministic fallback.

Every drafted claim carries a source quote, and a claim is kept only when its quote is found verbatim
(up to ``kb.grounding.normalize_text``) in the text; the others come back as rejected, with the reason.
The fallback drafter (``fallback_draft``) needs no model: it turns explicit numbers (with units or
percentages, and Markdown table rows) into quantitative claims whose quote is the sentence itself.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field, ValidationError

from analyzers import registry
from kb.agents.tools import build_tools
from kb.core import KnowledgeBase
from kb.grounding import check_quote
from schemas.claim import ClaimKind, Expectation, Operator


class DraftClaim(BaseModel):
    """One claim drafted from a paper's text, for a person to review before it enters a note."""

    id: str = Field(description="Short lower-case id with '-' (e.g. 'optimal-depth'), unique in the draft.")
    statement: str = Field(min_length=1, description="The claim, in one sentence, in your own words.")
    kind: ClaimKind = Field(default=ClaimKind.qualitative,
                            description="'quantitative' when the claim states a number, else 'qualitative'.")
    quote: str = Field(min_length=1, description="VERBATIM text copied from the paper that backs the claim.")
    section: str | None = Field(default=None, description="Section, table or figure of the quote, if known.")
    analyzer: str | None = Field(default=None,
                                 description="Registry name of an analyzer that could re-verify it (from "
                                             "list_analyzers), or null.")
    expect: Expectation | None = Field(default=None,
                                       description="Predicate over the analyzer's metric, when explicit.")


class DraftedClaims(BaseModel):
    """The claims drafted from the text. Every quote must be copied verbatim from the text."""

    claims: list[DraftClaim] = Field(default_factory=list, description="The drafted claims.")


class RejectedClaim(BaseModel):
    """A drafted claim that was not kept, and why."""

    claim: DraftClaim
    reason: str


class DraftResult(BaseModel):
    """Kept and rejected drafted claims, and which drafter produced them."""

    claims: list[DraftClaim] = Field(default_factory=list)
    rejected: list[RejectedClaim] = Field(default_factory=list)
    method: str = Field(description="'agent' (chat model) or 'fallback' (deterministic).")


SYSTEM_PROMPT = (
    "You draft checkable claims from a protein-language-model paper for a knowledge base. "
    "For each claim give a one-sentence statement and a quote copied VERBATIM from the text (never "
    "paraphrase the quote: claims whose quote is not found in the text are rejected). Mark claims with "
    "explicit numbers as quantitative. Call list_analyzers to see which analyzers exist; suggest one only "
    "if it clearly fits, and add an expectation only when the text states an explicit comparison."
)


# -- grounding ---------------------------------------------------------------------------------

def ground(claims: list[DraftClaim], text: str) -> tuple[list[DraftClaim], list[RejectedClaim]]:
    """Split claims into those whose quote occurs in the text and those rejected (with the reason)."""
    kept: list[DraftClaim] = []
    rejected: list[RejectedClaim] = []
    seen: set[str] = set()
    for claim in claims:
        if not check_quote(claim.quote, text):
            rejected.append(RejectedClaim(claim=claim, reason="the quote does not occur verbatim in the text"))
        elif claim.id in seen:
            rejected.append(RejectedClaim(claim=claim, reason=f"duplicate claim id {claim.id!r}"))
        else:
            seen.add(claim.id)
            kept.append(claim)
    return kept, rejected


# -- the deterministic fallback ----------------------------------------------------------------

_NUMBER = r"\d+(?:[.,]\d+)*"
_UNIT = (r"(?:%|percent\b|[KMB]\b|×|Å|nm\b|layers?\b|parameters?\b|params\b|residues?\b|sequences?\b|"
         r"tokens?\b|epochs?\b|steps?\b|GB\b|hours?\b|days?\b|points?\b|fold\b|times\b|proteins?\b|"
         r"families\b|structures?\b|heads?\b|dimensions?\b)")
_QUANTITY = re.compile(rf"(?<![\w.]){_NUMBER}\s*(?:-\s*)?(?:[a-z]+\s+)?{_UNIT}")
_METRIC_VALUE = re.compile(r"\b(?:accuracy|auc|auroc|precision|recall|perplexity|correlation|spearman|"
                           r"pearson|error|loss|f1|rmsd|tm-score|lddt|kl)\b[^.]*?(?<![\w.])\d*\.\d+",
                           re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])|\n\s*\n")
_COMPARISONS: list[tuple[re.Pattern[str], Operator]] = [
    (re.compile(rf"\b(?:at least|no less than|not less than)\s+({_NUMBER})", re.I), Operator.ge),
    (re.compile(rf"\b(?:at most|no more than|up to)\s+({_NUMBER})", re.I), Operator.le),
    (re.compile(rf"\b(?:below|less than|under|lower than|fewer than)\s+({_NUMBER})", re.I), Operator.lt),
    (re.compile(rf"\b(?:above|more than|over|exceeds?|exceeding|greater than|higher than)\s+({_NUMBER})",
                re.I), Operator.gt),
]
_PERCENT = re.compile(rf"(?<![\w.])({_NUMBER})\s*(?:%|percent\b)")
_ANALYZER_KEYWORDS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bcontacts?\b", re.I), "langevin.contacts"),
    (re.compile(r"\b(?:depth|layers?)\b", re.I), "depth."),
    (re.compile(r"\b(?:temperatures?|langevin|attention)\b", re.I), "langevin."),
]


def _number(raw: str) -> float:
    return float(raw.replace(",", ""))


def expectation_for(sentence: str, metric: str = "value") -> Expectation | None:
    """An expectation when the sentence states a simple comparison ('at least X', 'below X', 'X%')."""
    for pattern, op in _COMPARISONS:
        match = pattern.search(sentence)
        if match:
            return Expectation(metric=metric, op=op, value=_number(match.group(1)))
    match = _PERCENT.search(sentence)
    if match:
        return Expectation(metric=metric, op=Operator.approx, value=_number(match.group(1)), tolerance=0.5)
    return None


def suggest_analyzer(sentence: str, registered: list[str] | None = None) -> str | None:
    """A registered analyzer whose topic the sentence names (depth/layers, temperature/Langevin/contacts)."""
    names = sorted(registered if registered is not None else registry.load_all())
    for pattern, prefix in _ANALYZER_KEYWORDS:
        if not pattern.search(sentence):
            continue
        if prefix in names:
            return prefix
        family = prefix if prefix.endswith(".") else prefix.split(".")[0] + "."
        match = next((n for n in names if n.startswith(family)), None)
        if match:
            return match
    return None


def _sentences(text: str) -> list[str]:
    """Prose sentences (Markdown table rows and headings are handled separately)."""
    prose = "\n".join(line for line in text.splitlines()
                      if not line.lstrip().startswith(("|", "#")))
    return [s.strip() for s in _SENTENCE.split(prose) if s.strip()]


def _table_rows(text: str) -> list[str]:
    """Markdown table body rows (not the header or separator) that contain a number."""
    rows, previous = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        is_row = stripped.startswith("|") and stripped.count("|") >= 2
        separator = is_row and set(stripped) <= set("|-: ")
        if is_row and not separator and previous.startswith("|") and re.search(r"\d", stripped):
            header_above = set(previous) <= set("|-: ")
            if header_above or previous.startswith("|"):
                rows.append(stripped)
        previous = stripped if is_row else ""
    return rows


def _slug(text: str, taken: set[str]) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())
    stop = {"the", "a", "an", "of", "and", "in", "on", "to", "with", "is", "are", "was", "were", "we", "for"}
    base = "-".join([w for w in words if w not in stop][:5])[:48].strip("-") or "claim"
    ident, n = base, 2
    while ident in taken:
        ident, n = f"{base}-{n}", n + 1
    taken.add(ident)
    return ident


def _is_quantitative(sentence: str) -> bool:
    return bool(_QUANTITY.search(sentence) or _METRIC_VALUE.search(sentence))


def _first_metric(analyzer: str | None) -> str:
    """The analyzer's first declared metric (the expectation's target), or 'value' as a placeholder."""
    if analyzer is None:
        return "value"
    metrics = getattr(registry.load_all().get(analyzer), "metrics", None) or {"value": ""}
    return next(iter(metrics))


def fallback_draft(text: str, registered: list[str] | None = None) -> list[DraftClaim]:
    """Quantitative claims from the explicit numbers in a text, each quoting its sentence (or table row)."""
    names = sorted(registered if registered is not None else registry.load_all())
    taken: set[str] = set()
    claims = []
    candidates: list[tuple[str, str | None]] = [(s, None) for s in _sentences(text) if _is_quantitative(s)]
    candidates += [(row, "table") for row in _table_rows(text)]
    for quote, section in candidates:
        analyzer = suggest_analyzer(quote, names)
        statement = " ".join(c.strip() for c in quote.strip("|").split("|")) if section else quote
        claims.append(DraftClaim(
            id=_slug(statement, taken), statement=statement, kind=ClaimKind.quantitative, quote=quote,
            section=section, analyzer=analyzer,
            expect=expectation_for(quote, _first_metric(analyzer)),
        ))
    return claims


# -- the agent ---------------------------------------------------------------------------------

def agent_draft(text: str, model: BaseChatModel, kb: KnowledgeBase | None = None) -> list[DraftClaim]:
    """Claims drafted by a LangChain agent (structured output ``DraftedClaims``), not yet grounded."""
    from langchain.agents import create_agent
    from langchain.agents.structured_output import ToolStrategy

    tools = list(build_tools(kb, ["list_analyzers", "search_notes"]).tools.values()) if kb is not None else []
    agent = create_agent(model, tools, system_prompt=SYSTEM_PROMPT, response_format=ToolStrategy(DraftedClaims))
    state: dict[str, Any] = agent.invoke({"messages": [{"role": "user", "content": f"Paper text:\n\n{text}"}]})
    response = state.get("structured_response")
    if isinstance(response, DraftedClaims):
        return response.claims
    try:
        return DraftedClaims.model_validate(response or {}).claims
    except ValidationError:
        return []


def draft(text: str, kb: KnowledgeBase | None = None, model: BaseChatModel | None = None) -> DraftResult:
    """Draft and ground claims: the agent when ``model`` is given, else the deterministic fallback."""
    if model is not None:
        drafted, method = agent_draft(text, model, kb), "agent"
    else:
        drafted, method = fallback_draft(text), "fallback"
    kept, rejected = ground(drafted, text)
    return DraftResult(claims=kept, rejected=rejected, method=method)


def draft_claims(text: str, kb: KnowledgeBase | None = None, model: BaseChatModel | None = None) -> list[DraftClaim]:
    """The grounded drafted claims only (see ``draft`` for the rejected ones too)."""
    return draft(text, kb, model).claims
