"""Draft claims from a paper's text: a LangChain agent when a chat model is given, else a deterministic
fallback.

Whoever drafts, every claim goes through ``review`` before a person sees it:

- its quote must occur in the text (tolerant matching as ``kb.notes.grounding.check_quote``): a claim whose
  quote does not is **rejected**, with the reason, never kept;
- a claim whose quote overlaps (one contains the other) a quote of a claim already in the note, or of
  another drafted claim, is rejected as a duplicate;
- its analyzer binding must name a registered analyzer whose ``Params`` accept the parameters (at the
  named scale preset), and its expectation must test a metric that analyzer declares (or a dotted path
  under one); what fails is **stripped** and the claim keeps a note saying what was removed and why;
- ids are made valid and unique within the note.

The agent (``create_agent`` with the tools ``list_analyzers``, ``describe_analyzer``, ``find_quote`` and
``search_notes``)
answers with the ``DraftedClaims`` schema as structured output. Its first answer is checked by the same
review: when something would be rejected or stripped, the problems go back to the model once, as a
structured-output error it can fix, before the final review decides.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, Literal

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from analyzers import registry
from kb.agents.config import ENV_VAR
from kb.agents.fallback import fallback_claims, slug
from kb.agents.scales import propose_scale
from kb.agents.tools import DRAFT_TOOLS, build_tools
from kb.core import KnowledgeBase
from kb.notes.bindings import binding_problems
from kb.notes.grounding import PAGE_BREAK, QuoteMatcher, check_quote, normalize_text
from schemas.claim import AnalyzerBinding, Claim, ClaimKind, ClaimScale, ClaimSource, Expectation


def _as_claim_id(value: Any) -> Any:
    """Model-written ids ('Optimal Depth') become valid claim ids ('optimal-depth')."""
    if isinstance(value, str) and not re.fullmatch(r"[a-z0-9][a-z0-9_.-]{0,63}", value):
        return slug(value, set())
    return value


def _as_binding(value: Any) -> Any:
    """A bare analyzer name is a binding with default parameters."""
    return {"name": value} if isinstance(value, str) else value


class ProposedClaim(BaseModel):
    """One claim drafted from a paper's text, for a person to review before it enters a note."""

    model_config = ConfigDict(extra="ignore")

    id: Annotated[str, BeforeValidator(_as_claim_id)] = Field(
        description="Short lower-case id with '-' (e.g. 'optimal-depth'), unique in the draft.")
    statement: str = Field(min_length=1, description="The claim, in one sentence, in your own words.")
    kind: ClaimKind = Field(default=ClaimKind.qualitative,
                            description="'quantitative' when the claim states a number, else 'qualitative'.")
    quote: str = Field(min_length=1, description="VERBATIM text copied from the paper that backs the claim.")
    section: str | None = Field(default=None, description="Section, table or figure of the quote, if known.")
    page: int | None = Field(
        default=None,
        ge=1,
        description="The PDF page the quote starts on (1-based); the review sets it from the text's pages.",
    )
    analyzer: Annotated[AnalyzerBinding | None, BeforeValidator(_as_binding)] = Field(
        default=None, description="An analyzer from list_analyzers that could re-verify the claim: its name, "
                                  "parameters (only those it lists) and a scale preset; null when none fits.")
    expect: Expectation | None = Field(
        default=None,
        description="What the analyzer's result must show: one of ITS metrics, an operator and a "
        "value, e.g. {metric: 'late_half_kl_drop_fraction', op: '>=', value: 0.5}.",
    )
    scale: ClaimScale | None = Field(default=None, description="Scale of the paper's setting, e.g. "
                                                               "{parameters: 650000000, data: 'UniRef50'}.")
    why: str | None = Field(
        default=None,
        description="Why this is the paper's own result: the test, estimate or "
        "measurement its number comes from (or the finding).",
    )


class DraftClaim(ProposedClaim):
    """A reviewed drafted claim, with notes on what the review changed and what is left to do."""

    notes: list[str] = Field(
        default_factory=list, description="What was stripped and why; hints for the reviewer."
    )
    proposed_scale: ClaimScale | None = Field(
        default=None,
        description="For a claim that states no scale: the one the paper's text names "
        "(``kb.agents.scales``), written into the note only when the user accepts it.",
    )

    def to_claim(self, with_proposed_scale: bool = False) -> Claim:
        """The note-ready claim (``schemas.claim.Claim``); its proposed scale only ``with_proposed_scale``."""
        scale = self.scale if self.scale is not None or not with_proposed_scale else self.proposed_scale
        return Claim(id=self.id, statement=self.statement, kind=self.kind,
                     source=ClaimSource(quote=self.quote, section=self.section, page=self.page),
                     analyzer=self.analyzer,
                     expect=self.expect, scale=scale)


class DraftedClaims(BaseModel):
    """The claims drafted from the text. Every quote must be copied verbatim from the text."""

    claims: list[ProposedClaim] = Field(default_factory=list, description="The drafted claims.")


class RejectedClaim(BaseModel):
    """A drafted claim that was not kept, and why."""

    claim: ProposedClaim
    reason: str


class DraftResult(BaseModel):
    """Kept and rejected drafted claims, which drafter produced them, and what the user should know."""

    claims: list[DraftClaim] = Field(default_factory=list, description="Claims to review, accept or edit.")
    rejected: list[RejectedClaim] = Field(
        default_factory=list, description="Claims not kept, with the reason."
    )
    method: Literal["agent", "fallback"] = Field(
        description="'agent' (chat model) or 'fallback' (deterministic)."
    )
    message: str | None = Field(
        default=None, description="What the user should know (e.g. no model configured)."
    )


class DraftError(RuntimeError):
    """The agent could not produce a draft (the model kept failing, or the provider failed)."""


FALLBACK_MESSAGE = (
    "no chat model: drafted by the deterministic fallback, which finds quantitative claims in "
    "explicit numbers and tables (and, in a PDF's full text, findings stated in words; no "
    "expectations). Set "
    f"{ENV_VAR} (e.g. '{ENV_VAR}=openai:gpt-4o-mini') for full drafts by the agent."
)

SYSTEM_PROMPT = """\
You draft checkable claims from a protein-language-model paper for a knowledge base of paper notes.
For each finding a careful reader would want re-checked, give:
- id: short, lower-case, words joined by '-';
- statement: the claim in one sentence, in your own words;
- quote: the passage that backs it, copied VERBATIM from the text (use find_quote to check; claims
  whose quote is not in the text are rejected);
- kind: 'quantitative' if it states a number, else 'qualitative';
- analyzer: only if an analyzer from list_analyzers can test it: its name, a scale preset it lists and
  only parameters describe_analyzer lists;
- expect: only with an analyzer, and only on a metric that analyzer lists;
- scale: the model size (parameters) and data the paper's claim is about, when stated.
- why: the test, estimate or measurement the claim's number comes from (or what the finding rests on).
Prefer the paper's own worked results: numbers it obtained, with their test or estimate. Skip set-up details
(hyperparameters, training budget, hardware, values chosen or defaulted), definitions, other works' results
unless the paper relies on them, and repeated statements. Answer with the DraftedClaims tool."""


# -- review ---------------------------------------------------------------------------------------

def _binding_problems(claim: ProposedClaim, analyzers: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Fields to strip from a claim's analyzer binding and expectation, and why."""
    strip: dict[str, Any] = {}
    why: list[str] = []
    if claim.analyzer is not None:
        found = binding_problems(claim, analyzers=analyzers)  # the rule a note's claims are held to
        detail = "; ".join(f"{field}: {message}" for field, message in found)
        if any(field.startswith("analyzer") for field, _ in found):
            strip.update(analyzer=None, expect=None)
            why.append(f"{detail}; binding and expectation removed")
        elif found:
            strip["expect"] = None
            why.append(f"{detail}; expectation removed")
    elif claim.expect is not None:
        strip["expect"] = None
        why.append(
            f"expectation on {claim.expect.metric!r} removed: an expectation needs an analyzer whose metric "
            "it tests"
        )
    return strip, why


def review(claims: Iterable[ProposedClaim], text: str, analyzers: Mapping[str, Any] | None = None,
           existing: Iterable[Claim] = ()) -> tuple[list[DraftClaim], list[RejectedClaim]]:
    """Ground, de-duplicate and check drafted claims (see the module docstring): (kept, rejected)."""
    analyzers = registry.load_all() if analyzers is None else analyzers
    existing = list(existing)
    taken = {c.id for c in existing}
    quoted = {normalize_text(c.source.quote): c.id for c in existing if c.source}
    kept: list[DraftClaim] = []
    rejected: list[RejectedClaim] = []
    for claim in claims:
        quote = normalize_text(claim.quote)
        if not quote or not check_quote(claim.quote, text):
            rejected.append(
                RejectedClaim(
                    claim=claim,
                    reason="the quote does not occur verbatim in the text (checked "
                    "up to case, whitespace, dashes and quote marks)",
                )
            )
            continue
        same = next((ident for q, ident in quoted.items() if q in quote or quote in q), None)
        if same is not None:
            rejected.append(RejectedClaim(claim=claim, reason=f"claim {same!r} already quotes this passage"))
            continue
        notes = list(getattr(claim, "notes", []))
        if claim.why and not any(note.startswith("drafted because") for note in notes):
            notes.insert(0, f"drafted because {claim.why}")  # the model's reason, shown as the rules' are
        reviewed = DraftClaim.model_validate({**claim.model_dump(), "notes": notes})
        strip, why = _binding_problems(claim, analyzers)
        if strip:
            reviewed = reviewed.model_copy(update={**strip, "notes": [*reviewed.notes, *why]})
        if reviewed.id in taken:
            new_id = slug(reviewed.id, taken)
            reviewed = reviewed.model_copy(update={
                "id": new_id, "notes": [*reviewed.notes, f"id {claim.id!r} was taken; renamed {new_id!r}"]})
        taken.add(reviewed.id)
        quoted[quote] = reviewed.id
        kept.append(reviewed)
    return with_pages(kept, text), rejected


def with_pages(claims: list[DraftClaim], text: str) -> list[DraftClaim]:
    """Each claim with the PDF page its quote starts on, in a text with pages (``PAGE_BREAK``, as `kb add`
    stores a PDF): a page the drafter gave stands when the quote is on it (or runs over from it to the next);
    another is corrected, saying so; a claim without one gets ``QuoteMatcher.start_page``."""
    if PAGE_BREAK not in text:
        return claims
    pages = text.split(PAGE_BREAK)
    normalized: dict[int, str] = {}  # the pages drafts name, normalized once (not the whole text: seconds)

    def page_text(number: int) -> str:
        if number not in normalized:
            normalized[number] = normalize_text(pages[number - 1]) if 1 <= number <= len(pages) else ""
        return normalized[number]

    matcher: QuoteMatcher | None = None
    out = []
    for claim in claims:
        quote, page = normalize_text(claim.quote), claim.page
        if page is not None and (quote in page_text(page) or (
                quote in f"{page_text(page)} {page_text(page + 1)}" and quote not in page_text(page + 1))):
            out.append(claim)  # on its page, or running over from it to the next
            continue
        matcher = matcher or QuoteMatcher(text)  # the text's pages normalized once for every other quote
        start = matcher.start_page(claim.quote)
        notes = claim.notes if page is None or start is None else \
            [*claim.notes, f"page {page} corrected to {start}: the quote is not on page {page}"]
        out.append(claim.model_copy(update={"page": start, "notes": notes}))
    return out


def problems(claims: Iterable[ProposedClaim], text: str, analyzers: Mapping[str, Any]) -> list[str]:
    """What ``review`` would reject or strip, one line per claim (the agent's chance to fix it)."""
    found = []
    for claim in claims:
        if not check_quote(claim.quote, text):
            found.append(
                f"claim {claim.id!r}: the quote is not in the text; call find_quote and copy the exact words"
            )
        found += [f"claim {claim.id!r}: {why}" for why in _binding_problems(claim, analyzers)[1]]
    return found


# -- the agent --------------------------------------------------------------------------------------

def _checked_schema(check: Callable[[DraftedClaims], None]) -> type[DraftedClaims]:
    """``DraftedClaims`` whose validation also runs ``check`` (so the agent sees review problems as
    errors)."""

    class Checked(DraftedClaims):
        model_config = ConfigDict(title="DraftedClaims")

        @model_validator(mode="after")
        def _review(self) -> Checked:
            check(self)
            return self

    Checked.__name__ = Checked.__qualname__ = "DraftedClaims"
    Checked.__doc__ = DraftedClaims.__doc__
    return Checked


def agent_draft(text: str, model: BaseChatModel, kb: KnowledgeBase | None = None,
                analyzers: Mapping[str, Any] | None = None, *, repairs: int = 1,
                recursion_limit: int = 40) -> list[ProposedClaim]:
    """Claims drafted by a LangChain agent with structured output ``DraftedClaims`` (not yet reviewed).

    The first ``repairs`` answers that ``review`` would change are sent back to the model with the
    problems; after that the answer stands and the final review rejects or strips what is wrong.
    """
    from langchain.agents import create_agent
    from langchain.agents.structured_output import ToolStrategy
    from langgraph.errors import GraphRecursionError

    analyzers = registry.load_all() if analyzers is None else analyzers
    attempts = {"left": repairs}

    def check(answer: DraftedClaims) -> None:
        found = problems(answer.claims, text, analyzers)
        if found and attempts["left"] > 0:
            attempts["left"] -= 1
            raise ValueError("fix these claims and answer again (or drop them): " + " | ".join(found))

    names = DRAFT_TOOLS if kb is not None else ()
    tools = list(build_tools(kb, names, text=text).tools.values()) if kb is not None else []
    agent = create_agent(model, tools, system_prompt=SYSTEM_PROMPT,
                         response_format=ToolStrategy(_checked_schema(check)))
    try:
        state: dict[str, Any] = agent.invoke(
            {"messages": [{"role": "user", "content": f"Paper text:\n\n{text}"}]},
            {"recursion_limit": recursion_limit},
        )
    except GraphRecursionError as exc:
        raise DraftError(f"the model gave no valid draft within {recursion_limit} steps") from exc
    response = state.get("structured_response")
    if response is None:
        raise DraftError("the model answered without drafting claims (no DraftedClaims call)")
    return list(response.claims)


# -- the entry point -------------------------------------------------------------------------------

def fallback_draft(text: str, analyzers: Mapping[str, Any] | None = None,
                   taken: set[str] | None = None) -> list[DraftClaim]:
    """Quantitative claims from the explicit numbers of a text (``kb.agents.fallback``), not yet reviewed."""
    analyzers = registry.load_all() if analyzers is None else analyzers
    return [DraftClaim.model_validate(fields) for fields in fallback_claims(text, analyzers, taken)]


def draft(text: str, kb: KnowledgeBase | None = None, model: BaseChatModel | None = None, *,
          existing: Iterable[Claim] = (), analyzers: Mapping[str, Any] | None = None) -> DraftResult:
    """Draft and review claims: the agent when ``model`` is given, else the deterministic fallback.

    ``existing`` are the claims already in the target note: their ids are not reused and their quotes
    are not drafted again. Raises ``DraftError`` when the agent fails.
    """
    analyzers = registry.load_all() if analyzers is None else analyzers
    existing = list(existing)
    if model is not None:
        drafted: list[ProposedClaim] = agent_draft(text, model, kb, analyzers)
        method: Literal["agent", "fallback"] = "agent"
        message = None
    else:
        drafted = list(fallback_draft(text, analyzers, {c.id for c in existing}))
        method, message = "fallback", FALLBACK_MESSAGE
    kept, rejected = review(drafted, text, analyzers, existing)
    return DraftResult(
        claims=with_proposed_scales(kept, text), rejected=rejected, method=method, message=message
    )


def with_proposed_scales(claims: list[DraftClaim], text: str) -> list[DraftClaim]:
    """Each claim that states no scale gets the one the paper's text names, shown as proposed: a claim without
    a scale can be settled by no run, and the user accepts the proposal or sets another (issue 35)."""
    proposal = propose_scale(text)
    if proposal is None:
        return claims
    out = []
    for claim in claims:
        if claim.scale is not None:
            out.append(claim)
            continue
        note = (
            f"proposed scale (the paper's text, not the quote): {proposal.text()} [{proposal.basis}]; a "
            "claim "
            "without a scale is settled by no run: accept it with --with-proposed-scale, or set one with "
            f"`kb set NOTE claims.{claim.id}.scale.parameters=N --new-field`"
        )
        out.append(claim.model_copy(update={"proposed_scale": proposal.scale, "notes": [*claim.notes, note]}))
    return out


def draft_claims(
    text: str, kb: KnowledgeBase | None = None, model: BaseChatModel | None = None
) -> list[DraftClaim]:
    """The kept drafted claims only (see ``draft`` for the rejected ones and the message)."""
    return draft(text, kb, model).claims
