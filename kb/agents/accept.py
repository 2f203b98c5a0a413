"""Drafting claims for a note and accepting some of them: where the text comes from, the remembered
draft, and writing the accepted claims into the note.

A draft made by a chat model differs from run to run, so the last draft of each source text is kept
under ``<KB home>/drafts/``: ``kb draft-claims NOTE --accept ID`` accepts the ids it printed, not those
of a new draft. Writing accepted claims into a note is ``kb.notes.edits.append_claims`` (through
``KnowledgeBase.add_claims``): only the note's ``claims:`` block changes.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from analyzers.files import atomic_write_bytes
from kb.agents.drafter import DraftResult, draft, review
from kb.core import KnowledgeBase
from kb.notes.files import NoteError
from kb.notes.sources import SourceError, SourceStatus, read_text_file
from schemas.claim import Claim

# -- the last draft of each source text --------------------------------------------------------------

def text_hash(text: str) -> str:
    """SHA-256 of a source text, to tell whether a remembered draft is about the same text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def draft_path(home: Path, source: str) -> Path:
    """Where the last draft of a note (or file) is remembered."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", source).strip("._") or "draft"
    return home / "drafts" / f"{name[:100]}.json"


def save_draft(home: Path, source: str, text: str, result: DraftResult) -> Path:
    """Remember a draft (atomically) with the hash of the text it was drafted from."""
    path = draft_path(home, source)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"source": source, "text_sha256": text_hash(text), "draft": result.model_dump(mode="json")}
    atomic_write_bytes(path, (json.dumps(payload, ensure_ascii=False, indent=2) + "\n").encode())
    return path


def load_draft(home: Path, source: str, text: str) -> DraftResult | None:
    """The remembered draft of this source, if it was drafted from exactly this text."""
    path = draft_path(home, source)
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
        if payload.get("text_sha256") != text_hash(text):
            return None
        return DraftResult.model_validate(payload["draft"])
    except (OSError, ValueError, KeyError):
        return None


# -- what to draft from, and accepting ---------------------------------------------------------------

@dataclass(frozen=True)
class DraftSource:
    """The text claims are drafted from, the key its draft is remembered under, and the note to write into."""

    text: str
    key: str
    note_id: str | None  # None for a text file: accepted claims then need a target note
    notices: tuple[str, ...] = ()


def draft_source(kb: KnowledgeBase, note_or_file: str) -> DraftSource:
    """A text file, or a note's ``source_file`` (its body when it has none); ``NoteError`` when neither
    exists."""
    path = Path(note_or_file)
    if path.is_file():
        try:
            text = read_text_file(path, max_bytes=kb.settings.max_source_bytes)
        except SourceError as exc:
            raise NoteError(path, exc.reason) from None
        return DraftSource(text, f"file-{path.resolve()}", None)
    try:
        note = kb.read(note_or_file)
    except NoteError:
        if path.suffix or "/" in note_or_file:
            raise NoteError(path, "no such file, and no note with this id; pass a text file or a note id "
                                  "('kb list')") from None
        raise
    source = kb.read_source(note)  # only inside the notes folder, size-capped, regular files only
    if source.status is SourceStatus.refused:
        raise source.error(note)
    if source.text is not None:
        return DraftSource(source.text, f"note-{note.id}", note.id)
    why = f"its {source.problem}" if source.problem else "it names no source_file"
    return DraftSource(
        note.body, f"note-{note.id}", note.id, (f"drafting from the body of note {note.id!r}: {why}",)
    )


def draft_or_recall(
    kb: KnowledgeBase,
    source: DraftSource,
    model: BaseChatModel | None,
    existing: list[Claim],
    *,
    recall: bool,
) -> tuple[DraftResult, bool]:
    """The remembered draft of this text when ``recall`` (re-reviewed against ``existing``), else a new one.

    Returns the draft and whether it was recalled. A new draft is remembered for a later accept.
    """
    remembered = load_draft(kb.settings.home, source.key, source.text) if recall else None
    if remembered is not None:
        still, now_rejected = review(remembered.claims, source.text, existing=existing)  # e.g. accepted since
        return remembered.model_copy(
            update={"claims": still, "rejected": [*remembered.rejected, *now_rejected]}
        ), True
    result = draft(source.text, kb, model, existing=existing)
    save_draft(kb.settings.home, source.key, source.text, result)
    return result, False


class NotAccepted(ValueError):
    """Some ids asked for were not drafted, or were rejected; nothing was written."""

    def __init__(self, reasons: dict[str, str]) -> None:
        self.reasons = reasons
        super().__init__("; ".join(f"claim {ident!r} {why}" for ident, why in reasons.items()))


def accept(kb: KnowledgeBase, note_id: str, result: DraftResult, ids: list[str] | None,
           with_proposed_scale: bool = False) -> dict[str, str]:
    """Write the drafted claims ``ids`` (all kept ones when None) into the note; drafted id -> id written. A
    claim that states no scale is written with the scale proposed from the paper's text only
    ``with_proposed_scale``.

    ``NotAccepted`` (naming each bad id and why) before anything is written when an id was not drafted
    or was rejected.
    """
    kept = {c.id: c for c in result.claims}
    wanted = list(kept) if ids is None else list(dict.fromkeys(ids))
    rejected = {r.claim.id: r.reason for r in result.rejected}
    reasons = {ident: (f"was rejected: {rejected[ident]}" if ident in rejected
                       else f"was not drafted; drafted: {', '.join(kept) or 'none'}")
               for ident in wanted if ident not in kept}
    if reasons:
        raise NotAccepted(reasons)
    written = kb.add_claims(note_id, [kept[ident].to_claim(with_proposed_scale) for ident in wanted])
    return {ident: claim.id for ident, claim in zip(wanted, written, strict=True)}
