"""Per-note summaries for the Library table, built only from kb.core calls."""

from __future__ import annotations

from collections import Counter
from typing import Any

from kb.core import KnowledgeBase
from kb.grounding import Grounding, check_note
from kb.notes import NoteError

VERDICT_COLUMNS = ("supported", "refuted", "inconclusive", "stale")


def latest_state(kb: KnowledgeBase, claim_key: str) -> str | None:
    """'stale', the latest verdict kind, or None when the claim has no evidence."""
    evidence = kb.evidence(claim_key)
    if not evidence:
        return None
    latest = evidence[0]
    if latest.stale:
        return "stale"
    return latest.verdict.kind.value if latest.verdict else None


def note_row(kb: KnowledgeBase, paper: Any) -> dict[str, Any]:
    """One Library table row: metadata plus claim, verdict and grounding counts."""
    counts: Counter[str] = Counter()
    n_claims = 0
    ungrounded = 0
    try:
        note = kb.read(paper.id)
        n_claims = len(note.meta.claims)
        ungrounded = sum(r.status is not Grounding.grounded for r in check_note(note))
        for claim in note.meta.claims:
            state = latest_state(kb, f"{paper.id}#{claim.id}")
            if state:
                counts[state] += 1
    except NoteError:
        pass
    return {
        "id": paper.id,
        "title": paper.title,
        "year": paper.year,
        "status": paper.status,
        "decision": paper.decision,
        "quality": paper.quality_score,
        "tags": ", ".join(t for t in (paper.tags_text or "").split() if t),
        "claims": n_claims,
        **{name: counts[name] for name in VERDICT_COLUMNS},
        "ungrounded": ungrounded,
    }
