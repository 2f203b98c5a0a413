"""Remembering the last draft of each source text, so that accepting takes the claims the user saw.

A draft made by a chat model differs from run to run, so the CLI remembers the last draft of each
source text under ``<KB home>/drafts/``: ``kb draft-claims NOTE --accept ID`` accepts the ids it
printed, not those of a new draft. Writing accepted claims into a note is ``kb.note_edits.append_claims``
(through ``KnowledgeBase.add_claims``).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from kb import notes as notes_mod
from kb.agents.drafter import DraftResult

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
