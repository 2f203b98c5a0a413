"""The library view: one row per note with its claims' verdicts, staleness and grounding, at a glance.

Built from four column-only queries (papers, claims, latest evidence per claim, search hits) and
joined in Python, so the Library page of a 10,000-note knowledge base renders without reading note
files or per-claim queries. A claim's *state* (``kb.evidence.claim_states.claim_state``, the one rule every
surface shares) is what the reader needs first; claims bound to no analyzer are counted as ``unbound``
("no analyzer"), so every claim is in exactly one count.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import select as sa_select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from kb.evidence import where as where_mod
from kb.evidence.claim_states import ALL_STATES, claim_state, latest_evidence
from kb.index.database import ClaimRow, Paper
from kb.index.indexing import filter_papers
from kb.index.listing import SortKey, decode_tags

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
    states: Counter[str] = field(default_factory=Counter)  # claim state -> count (see ALL_STATES)
    ungrounded: int = 0  # claims whose quote is not in the note's source text
    no_source: int = 0  # claims with a quote but no source text to check it against

    def flags(self) -> set[str]:
        """The problems a reader should see at a glance."""
        found = {name for name in ("refuted", "stale", "unverified") if self.states[name]}
        return found | ({"ungrounded"} if self.ungrounded else set())

    def as_dict(self) -> dict[str, Any]:
        """Flat, table-ready form: one column per state."""
        return {
            "id": self.id,
            "title": self.title,
            "year": self.year,
            "status": self.status,
            "decision": self.decision,
            "quality": self.quality,
            "tags": ", ".join(self.tags),
            "claims": self.claims,
            **{state: self.states[state] for state in ALL_STATES},
            "ungrounded": self.ungrounded,
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
    where: list[where_mod.Condition] | None = None,
    sort: SortKey = "id",
    descending: bool = False,
) -> list[LibraryRow]:
    """Notes matching every filter, with claim-state and grounding counts.

    ``ids`` restricts (and orders) the rows, e.g. to search hits best first; ``flags`` keeps notes
    showing at least one of those problems; ``where``: conditions (``kb.evidence.where``) each note meets,
    ``WhereError`` for a field no note has.
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
        latest = latest_evidence(session)
    for key, paper_id, analyzer, grounding, binding in claims:
        row = wanted.get(paper_id)
        if row is None:
            continue
        row.claims += 1
        row.ungrounded += grounding == "not_found"
        row.no_source += grounding == "no_source"
        row.states[
            claim_state(latest.get(key), bound=analyzer is not None, binding_hash=binding).state.value
        ] += 1
    if flags:
        rows = [row for row in rows if row.flags() & set(flags)]
    if where:
        rows = _where(engine, rows, where)
    return rows


def _where(engine: Engine, rows: list[LibraryRow], conditions: list[where_mod.Condition]) -> list[LibraryRow]:
    """The rows whose note meets every condition (its frontmatter from the index, as the note was indexed)."""
    with Session(engine) as session:
        metas = {paper_id: json.loads(text) for paper_id, text in
                 session.execute(sa_select(col(Paper.id), col(Paper.meta_json))).all()}
    where_mod.check_fields(conditions, metas.values())  # against every note: a filter may leave none
    return [row for row in rows if all(where_mod.matches(c, metas.get(row.id, {}), row.tags, row.states)
                                       for c in conditions)]


def _paper_rows(engine: Engine, **filters: Any) -> list[LibraryRow]:
    stmt = filter_papers(
        sa_select(
            col(Paper.id),
            col(Paper.title),
            col(Paper.year),
            col(Paper.status),
            col(Paper.decision),
            col(Paper.quality_score),
            col(Paper.tags_text),
        ),
        **filters,
    )
    with Session(engine) as session:
        return [LibraryRow(id=i, title=t, year=y, status=s, decision=d, quality=q, tags=decode_tags(tags))
                for i, t, y, s, d, q, tags in session.execute(stmt).all()]
