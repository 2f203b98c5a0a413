"""Accepting drafted claims: appending them to a note's ``claims:`` block, and remembering the last draft.

``append_claims`` returns the note with the claims appended as new items at the end of its ``claims:``
block: the existing items keep their bytes (quoting, comments, flow maps), nothing outside the block
changes, and the result is validated. When the block cannot be extended in place (no claims yet, a
flow-style list), the block is rewritten through ``kb.notes.set_fields``, which still touches only
that block. ``KnowledgeBase.add_claims`` writes the result atomically and re-indexes.

A draft made by a chat model differs from run to run, so the CLI remembers the last draft of each
source text under ``<KB home>/drafts/``: ``kb draft-claims NOTE --accept ID`` accepts the ids it
printed, not those of a new draft.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kb import notes as notes_mod
from kb.agents.drafter import DraftResult
from kb.notes import Note, NoteError
from schemas.claim import Claim

DUMPED_INDENT = 2  # kb.notes dumps sequence items as '  - ' (offset 2)


def claim_fields(claim: Claim) -> dict[str, Any]:
    """A claim as the plain mapping written into a note (no empty or default-valued fields)."""
    data = claim.model_dump(mode="json", exclude_none=True)
    if data.get("expect", {}).get("inconclusive_band") == 0:
        del data["expect"]["inconclusive_band"]
    if data.get("analyzer", {}).get("params") == {} and data["analyzer"].get("scale"):
        del data["analyzer"]["params"]
    parameters = data.get("scale", {}).get("parameters")
    if isinstance(parameters, float) and parameters.is_integer():
        data["scale"]["parameters"] = int(parameters)  # '650000000', as notes write it
    return data


def unique_ids(claims: Iterable[Claim], taken: Iterable[str]) -> list[Claim]:
    """The claims with ids made unique among ``taken`` and each other ('id', 'id-2', ...)."""
    seen = set(taken)
    unique = []
    for claim in claims:
        ident, n = claim.id, 2
        while ident in seen:
            ident, n = f"{claim.id}-{n}"[:64], n + 1
        seen.add(ident)
        unique.append(claim if ident == claim.id else claim.model_copy(update={"id": ident}))
    return unique


def _reindent(block: str, indent: int) -> str:
    shift = indent - DUMPED_INDENT
    lines = block.splitlines(keepends=True)
    if shift >= 0:
        return "".join(" " * shift + line if line.strip() else line for line in lines)
    return "".join(line[-shift:] if line[:-shift].strip() == "" else line for line in lines)


def _appended_in_place(note: Note, items: list[dict[str, Any]]) -> Note | None:
    """The note with ``items`` appended to its block-style ``claims:`` list, or None when that is not possible."""
    parts = notes_mod._split(note.raw, note.path)
    lines = parts.frontmatter.splitlines(keepends=True)
    span = notes_mod._top_spans(lines).get("claims")
    if span is None or not note.meta.claims:
        return None
    start, end = span
    if lines[start].split(":", 1)[1].split("#", 1)[0].strip():
        return None  # 'claims: [...]' written inline
    first_item = next((line for line in lines[start + 1:end] if line.lstrip().startswith("- ")), None)
    if first_item is None:
        return None
    indent = len(first_item) - len(first_item.lstrip())
    block = "".join(lines[start:end])
    quote = bool(notes_mod._DQ_SCALAR.search(block.split(":", 1)[1]))
    dumped = notes_mod._dump_yaml({"claims": items}, quote=quote).split("\n", 1)[1]
    new_items = _reindent(dumped, indent)
    if parts.newline != "\n":
        new_items = new_items.replace("\n", parts.newline)
    head = lines[:end]
    if head and not head[-1].endswith(("\n", "\r")):
        head[-1] += parts.newline
    frontmatter = "".join(head) + new_items + "".join(lines[end:])
    try:
        updated = notes_mod.parse_note(parts.join(frontmatter), note.path)
    except NoteError:
        return None
    expected = [c.model_dump() for c in note.meta.claims] + [Claim.model_validate(i).model_dump() for i in items]
    return updated if [c.model_dump() for c in updated.meta.claims] == expected else None


def append_claims(note: Note, claims: list[Claim]) -> Note:
    """The note with ``claims`` appended to its ``claims:`` block (ids must already be unique); not written."""
    items = [claim_fields(c) for c in claims]
    in_place = _appended_in_place(note, items)
    if in_place is not None:
        return in_place
    current = notes_mod._plain(notes_mod._load_yaml(notes_mod._split(note.raw, note.path).frontmatter, note.path))
    existing = list(current.get("claims") or []) if isinstance(current, dict) else []
    return notes_mod.set_fields(note, {"claims": existing + items})


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
    notes_mod.atomic_write_bytes(path, (json.dumps(payload, ensure_ascii=False, indent=2) + "\n").encode())
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
