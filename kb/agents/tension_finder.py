"""Candidate tensions between qualitative claims, proposed by a chat model and never mixed with kb's own.

``kb.evidence.tensions`` finds tensions deterministically, from the values claims' expectations accept. A
claim with no expectation (a qualitative sentence: "there is relatively little to be gained from massively
scaling protein language models") accepts no values, so that rule cannot compare it. Here a LangChain agent
(``create_agent`` with structured output ``CandidateTensions``) reads those claims, each with its key, note,
statement and quote, and names pairs that may disagree, saying why. Every proposal is checked before anyone
sees it:

- both keys must name listed claims, of two different notes, and a pair is proposed once;
- the quotes shown are the claims' own, copied from the notes (never the model's words), with their sections,
  so each side is cited;
- each carries ``proposed_by = "model"``: surfaces show it apart from, and labelled unlike, kb's tensions.

Without a chat model none is proposed (``method = "none"``): a keyword heuristic would guess, and a guess
shown beside the deterministic tensions would read as one of them.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from kb.agents.config import ENV_VAR
from kb.core import KnowledgeBase
from schemas import Claim

if TYPE_CHECKING:  # seconds to import: the Tensions page shows this module's label before any model runs
    from langchain_core.language_models import BaseChatModel

#: Claims shown to the model at most (the oldest keys first): a prompt, not a library dump.
MAX_CLAIMS = 200
PROPOSED_LABEL = "proposed by the model"
NO_MODEL = (
    f"no chat model: no tensions between qualitative claims are proposed (kb does not guess them). Set "
    f"{ENV_VAR} (e.g. '{ENV_VAR}=openai:gpt-4o-mini') to have the agent propose candidates."
)

SYSTEM_PROMPT = """\
You read qualitative claims from notes on protein-language-model papers and blog posts. Each claim is given as
KEY | statement | quote. Name pairs of claims FROM DIFFERENT NOTES (the note id is the part of KEY before '#')
that cannot both be true as stated, or that pull in opposite directions on the same question (for example one
says scaling helps, the other that scaling brings little). Do not pair claims that merely restate or refine
each other. For each pair give both KEYs exactly as listed and one sentence saying why they disagree. Answer
with CandidateTensions; an empty list when no pair disagrees.
"""


class CandidateTension(BaseModel):
    """One pair of listed claims that may disagree."""

    a: str = Field(description="KEY of the first claim, exactly as listed ('<note id>#<claim id>').")
    b: str = Field(description="KEY of the second claim, from a different note.")
    why: str = Field(min_length=1, description="One sentence: why both cannot hold as stated.")


class CandidateTensions(BaseModel):
    """Pairs of listed claims from different notes that may disagree (empty when none does)."""

    tensions: list[CandidateTension] = Field(default_factory=list, description="The candidate pairs.")


class ProposedTension(BaseModel):
    """A candidate tension the model proposed, checked against the notes and cited with both claims'
    quotes."""

    id: str = Field(description="'p-' and 10 hex digits of the two claim keys: stable for the same pair.")
    a: str = Field(description="Claim key of side A.")
    b: str = Field(description="Claim key of side B.")
    a_quote: str = Field(description="Side A's quote, as its note gives it.")
    b_quote: str = Field(description="Side B's quote, as its note gives it.")
    a_section: str | None = Field(default=None, description="Where side A's quote is from.")
    b_section: str | None = Field(default=None, description="Where side B's quote is from.")
    why: str = Field(description="Why the model thinks they disagree (its words).")
    proposed_by: Literal["model"] = Field(
        default="model", description="Always 'model': not found by kb's rule."
    )
    label: str = Field(default=PROPOSED_LABEL, description="How every surface marks it.")


class Proposals(BaseModel):
    """What the tension finder proposes, which proposals it dropped and why, and what the user should know."""

    method: Literal["agent", "none"] = Field(description="'agent' (a chat model read the claims) or 'none'.")
    proposals: list[ProposedTension] = Field(default_factory=list, description="Checked candidate tensions.")
    rejected: list[str] = Field(default_factory=list, description="Dropped proposals, each with why.")
    message: str | None = Field(default=None, description="What the user should know (no model configured).")


def qualitative_claims(kb: KnowledgeBase) -> dict[str, Claim]:
    """The indexed claims kb's rule cannot compare (no expectation) that quote their source, by key."""
    found: dict[str, Claim] = {}
    for paper in kb.list_papers():
        for row in kb.claims(paper.id):
            claim = Claim.model_validate_json(row.claim_json)
            if claim.expect is None and claim.source is not None:
                found[row.key] = claim
    return dict(sorted(found.items())[:MAX_CLAIMS])


def _prompt(claims: dict[str, Claim]) -> str:
    lines = [f"{key} | {claim.statement} | {claim.source.quote if claim.source else ''}"
             for key, claim in claims.items()]
    return "Claims (KEY | statement | quote):\n" + "\n".join(lines)


def check(
    candidates: list[CandidateTension], claims: dict[str, Claim]
) -> tuple[list[ProposedTension], list[str]]:
    """Keep the candidates that name two listed claims of different notes (once per pair), cited with the
    claims' own quotes; the others are dropped, each with why."""
    kept: dict[str, ProposedTension] = {}
    rejected = []
    for candidate in candidates:
        a, b = sorted((candidate.a.strip(), candidate.b.strip()))
        unknown = [key for key in (a, b) if key not in claims]
        if unknown:
            rejected.append(
                f"{candidate.a} / {candidate.b}: {unknown[0]!r} is not a listed qualitative claim"
            )
            continue
        if a.split("#", 1)[0] == b.split("#", 1)[0]:
            rejected.append(f"{a} / {b}: both claims are from the same note")
            continue
        ident = "p-" + hashlib.sha256(f"{a}|{b}".encode()).hexdigest()[:10]
        if ident in kept:
            continue
        source_a, source_b = claims[a].source, claims[b].source
        assert source_a is not None and source_b is not None  # listed claims quote their source
        kept[ident] = ProposedTension(
            id=ident,
            a=a,
            b=b,
            a_quote=source_a.quote,
            b_quote=source_b.quote,
            a_section=source_a.section,
            b_section=source_b.section,
            why=candidate.why,
        )
    return list(kept.values()), rejected


def propose_tensions(
    kb: KnowledgeBase, model: BaseChatModel | None, *, recursion_limit: int = 10
) -> Proposals:
    """Candidate tensions between the qualitative claims of the library: the agent's when ``model`` is given,
    else none (with a message saying how to set a model)."""
    if model is None:
        return Proposals(method="none", message=NO_MODEL)
    from langchain.agents import create_agent
    from langchain.agents.structured_output import ToolStrategy

    claims = qualitative_claims(kb)
    if len({key.split("#", 1)[0] for key in claims}) < 2:
        return Proposals(
            method="agent", message="fewer than two notes have qualitative claims: nothing to pair"
        )
    agent = create_agent(
        model, [], system_prompt=SYSTEM_PROMPT, response_format=ToolStrategy(CandidateTensions)
    )
    state: dict[str, Any] = agent.invoke({"messages": [{"role": "user", "content": _prompt(claims)}]},
                                         {"recursion_limit": recursion_limit})
    response = state.get("structured_response")
    candidates = list(response.tensions) if isinstance(response, CandidateTensions) else []
    kept, rejected = check(candidates, claims)
    return Proposals(method="agent", proposals=kept, rejected=rejected)
