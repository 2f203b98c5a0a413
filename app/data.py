"""Cached queries the pages render from (``st.cache_data``), keyed by knowledge base and index generation.

Every result here is computed from the notes' rows and the evidence in the index, and the index's generation
(``app.state.generation``: database triggers bump it with every write to them, by any process) changes with
them: a page passes the generation it read, so a run finished by a ``kb worker`` or a ``kb verify`` in a
terminal shows at the next render, never after a time-to-live. Entries of past generations are never asked
for again; ``max_entries`` drops them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from app.state import get_kb
from kb.evidence.claim_states import ALL_STATES
from kb.evidence.library import LibraryRow
from kb.evidence.where import parse_all

if TYPE_CHECKING:
    from app.tension_panels import Library

#: Claim-state filters kb.evidence.library applies itself; other states are filtered here.
CORE_FLAGS = {"refuted", "stale", "ungrounded", "unverified"}
PROBLEM_OPTIONS = ["refuted", "at_odds_proxy", "stale", "ungrounded", "unverified", "error", "inconclusive",
                   "not_runnable", "consistent_proxy", "supported", "unbound"]


def _matches(row: LibraryRow, wanted: set[str]) -> bool:
    return any(row.ungrounded if state == "ungrounded" else row.states[state] for state in wanted)


@st.cache_data(show_spinner=False, max_entries=64)
def library_frame(kb_key: str, generation: int | str, query: str, tag: str | None, decision: str | None,
                  status: str | None, min_quality: int | None, year: int | None, states: tuple[str, ...],
                  sort: str, descending: bool, where: tuple[str, ...] = ()) -> pd.DataFrame:
    """The Library table for these filters: one row per note, claim-state counts as columns.

    ``kb_key`` and ``generation`` only key the cache (another knowledge base, a changed index). ``where``:
    conditions of ``kb.evidence.where`` (``WhereError`` for one kb cannot read, as ``kb list --where``).
    """
    kb = get_kb()
    wanted = set(states)
    flags = wanted if wanted and wanted <= CORE_FLAGS else None
    rows = kb.library(query=query or None, tag=tag, decision=decision, status=status, min_quality=min_quality,
                      year=year, flags=flags, sort=sort, descending=descending,  # type: ignore[arg-type]
                      where=parse_all(where))
    if wanted and flags is None:
        rows = [row for row in rows if _matches(row, wanted)]
    columns = [
        "id", "title", "year", "decision", "status", "quality", "tags", "claims",
        *ALL_STATES,
        "ungrounded",
    ]
    frame = pd.DataFrame.from_records([row.as_dict() for row in rows], columns=columns)
    for column in ("claims", *ALL_STATES, "ungrounded"):
        frame[column] = frame[column].astype("int32")
    for column in ("year", "quality"):
        frame[column] = frame[column].astype("Int32")
    return frame


def unfiltered(kb_key: str, generation: int | str) -> pd.DataFrame:
    """The whole library, as the Library page shows it with no filter (shares its cache entry)."""
    return library_frame(kb_key, generation, "", None, None, None, None, None, (), "id", False)


@st.cache_data(show_spinner=False, max_entries=16)
def facets(kb_key: str, generation: int | str) -> dict[str, Any]:
    """Filter choices over the whole library: tags (most used first), years, totals per claim state."""
    frame = unfiltered(kb_key, generation)
    tags = frame["tags"].str.split(", ").explode()
    tag_counts = tags[tags.astype(bool)].value_counts()
    years = sorted((int(y) for y in frame["year"].dropna().unique()), reverse=True)
    totals = {state: int(frame[state].sum()) for state in (*ALL_STATES, "ungrounded")}
    ordered = sorted(tag_counts.index, key=lambda t: (-int(tag_counts[t]), t))
    return {"tags": ordered, "tag_counts": {t: int(tag_counts[t]) for t in ordered}, "years": years,
            "totals": totals, "notes": len(frame), "claims": int(frame["claims"].sum())}


@st.cache_resource(show_spinner=False, max_entries=32)
def claims_across(kb_key: str, generation: int | str, note_id: str | None = None) -> Library:
    """Every claim that names a quantity, the tensions among them (``note_id``: only that note's) and their
    current evidence (``app.tension_panels.read_library``), read once per index generation: finding tensions
    examines pairs of claims on a quantity, up to hundreds of thousands in a large library, which every render
    of the Tensions page and of every note's page did. Shared, not copied (thousands of claims): callers only
    read it."""
    from app.tension_panels import read_library

    return read_library(get_kb(), note_id)


def clear_caches() -> None:
    """Forget every cached query result (the generation key makes this unneeded for freshness; it frees
    memory and makes a test's next render compute again)."""
    library_frame.clear()
    facets.clear()
    claims_across.clear()
