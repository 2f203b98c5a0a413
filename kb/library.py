"""The library view: one row per note with its claims' verdicts, staleness and grounding, at a glance.

Built from four column-only queries (papers, claims, latest evidence per claim, search hits) and
joined in Python, so the Library page of a 10,000-note knowledge base renders without reading note
files or per-claim queries. A claim's *state* is what the reader needs first: ``unverified`` (bound
to an analyzer, no evidence), ``stale`` (its latest evidence no longer matches the code or the note),
or the latest verdict (``supported``, ``refuted``, ``inconclusive``, ``not_runnable``, ``error``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import case, func
from sqlalchemy import select as sa_select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from kb import worker
from kb.db import ClaimRow, Evidence, Paper
from kb.index import SortKey, filter_papers

STATES = ("supported", "refuted", "inconclusive", "not_runnable", "error", "stale", "unverified")
Flag = Literal["refuted", "stale", "ungrounded", "unverified"]


@dataclass
class LibraryRow:
    """One note as the Library lists it."""

    id: str
    title: str
    year: int | None
    status: str | None
    decision: str | None
    quality: int | None
    tags: list[str]
    claims: int = 0
    states: Counter[str] = field(default_factory=Counter)  # claim state -> count (see STATES)
    ungrounded: int = 0  # claims whose quote is not in the note's source text
    no_source: int = 0  # claims with a quote but no source text to check it against

    def flags(self) -> set[str]:
        """The problems a reader should see at a glance."""
        found = {name for name in ("refuted", "stale", "unverified") if self.states[name]}
        return found | ({"ungrounded"} if self.ungrounded else set())

    def as_dict(self) -> dict[str, Any]:
        """Flat, table-ready form: one column per state."""
        return {
            "id": self.id, "title": self.title, "year": self.year, "status": self.status, "decision": self.decision,
            "quality": self.quality, "tags": ", ".join(self.tags), "claims": self.claims,
            **{state: self.states[state] for state in STATES}, "ungrounded": self.ungrounded,
        }


def library_rows(
    engine: Engine,
    *,
    tag: str | None = None,
    decision: str | None = None,
    status: str | None = None,
    min_quality: int | None = None,
    year: int | None = None,
    ids: list[str] | None = None,
    flags: set[Flag] | None = None,
    sort: SortKey = "id",
    descending: bool = False,
) -> list[LibraryRow]:
    """Notes matching every filter, with claim-state and grounding counts.

    ``ids`` restricts (and orders) the rows, e.g. to search hits best first; ``flags`` keeps notes
    showing at least one of those problems.
    """
    rows = _paper_rows(engine, tag=tag, decision=decision, status=status, min_quality=min_quality, year=year,
                       sort=sort, descending=descending)
    if ids is not None:
        by_id = {row.id: row for row in rows}
        rows = [by_id[i] for i in ids if i in by_id]
    wanted = {row.id: row for row in rows}
    with Session(engine) as session:
        claims = session.execute(sa_select(col(ClaimRow.key), col(ClaimRow.paper_id), col(ClaimRow.analyzer),
                                           col(ClaimRow.grounding), col(ClaimRow.binding_hash))).all()
        latest = _latest_evidence(session)
    for key, paper_id, analyzer, grounding, binding in claims:
        row = wanted.get(paper_id)
        if row is None:
            continue
        row.claims += 1
        row.ungrounded += grounding == "not_found"
        row.no_source += grounding == "no_source"
        evidence = latest.get(key)
        if evidence is not None:
            stale = worker.stale_reason(evidence, binding) is not None
            row.states["stale" if stale else (evidence.verdict_kind or "inconclusive")] += 1
        elif analyzer is not None:
            row.states["unverified"] += 1
    if flags:
        rows = [row for row in rows if row.flags() & set(flags)]
    return rows


def _paper_rows(engine: Engine, **filters: Any) -> list[LibraryRow]:
    stmt = filter_papers(sa_select(col(Paper.id), col(Paper.title), col(Paper.year), col(Paper.status),
                                   col(Paper.decision), col(Paper.quality_score), col(Paper.tags_text)), **filters)
    with Session(engine) as session:
        return [LibraryRow(id=i, title=t, year=y, status=s, decision=d, quality=q, tags=(tags or "").split())
                for i, t, y, s, d, q, tags in session.execute(stmt).all()]


@dataclass
class _Latest:
    """The columns of a claim's newest evidence that its state depends on (a ``worker.EvidenceFacts``)."""

    verdict_kind: str | None
    stale: bool
    stale_reason: str | None
    analyzer: str
    analyzer_version: str | None
    kb_version: str | None
    binding_hash: str | None
    provenance_json: str  # read only for evidence older than the version columns


def _latest_evidence(session: Session) -> dict[str, _Latest]:
    """The newest evidence of every claim, as light records (ORM rows cost more than the query at 10k)."""
    newest = (sa_select(col(Evidence.claim_key), func.max(Evidence.id).label("newest"))
              .where(col(Evidence.claim_key).is_not(None)).group_by(col(Evidence.claim_key)).subquery())
    legacy = case((col(Evidence.analyzer_version).is_(None), col(Evidence.provenance_json)), else_="{}")
    stmt = sa_select(col(Evidence.claim_key), col(Evidence.verdict_kind), col(Evidence.stale),
                     col(Evidence.stale_reason), col(Evidence.analyzer), col(Evidence.analyzer_version),
                     col(Evidence.kb_version), col(Evidence.binding_hash), legacy,
                     ).join(newest, col(Evidence.id) == newest.c.newest)
    return {row[0]: _Latest(*row[1:]) for row in session.execute(stmt)}
