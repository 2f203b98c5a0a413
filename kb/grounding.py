"""Is a claim grounded in its source? Checks each claim's quote against the note's source text.

A note names its source text (abstract or full text) with ``source_file:``, relative to the note.
Matching is tolerant of what copying from a PDF or web page changes: Unicode forms (NFKC), dashes
and quotes, ligatures, whitespace and line breaks, and words hyphenated across a line break.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from kb.notes import Note

_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-")
_QUOTES = {ord(c): "'" for c in "\u2018\u2019\u201b\u2032"} | {ord(c): '"' for c in "\u201c\u201d\u201f\u2033"}


class Grounding(StrEnum):
    """Whether a claim's quote is found in the note's source text."""

    grounded = "grounded"
    not_found = "not_found"
    no_quote = "no_quote"
    no_source = "no_source"


@dataclass(frozen=True)
class GroundingResult:
    """The grounding status of one claim, with a reason a reader can act on."""

    claim_id: str
    status: Grounding
    reason: str


def normalize_text(text: str) -> str:
    """Fold a text into the form quotes are compared in (case, Unicode, dashes, whitespace, hyphenation)."""
    text = unicodedata.normalize("NFKC", text).translate(_DASHES).translate(_QUOTES)
    text = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)  # 'pro-\ntein' -> 'protein'
    text = re.sub(r"\s*-\s*", "-", text)  # 'first – order' and 'first-order' compare equal
    return re.sub(r"\s+", " ", text).strip().casefold()


def source_path(note: Note) -> Path | None:
    """The note's source text file, when the note names one."""
    if not note.meta.source_file:
        return None
    return (note.path.parent / note.meta.source_file).resolve()


def check_quote(quote: str, source_text: str) -> bool:
    """True when the quote occurs in the source text, up to normalization."""
    return normalize_text(quote) in normalize_text(source_text)


def check_note(note: Note, source_text: str | None = None) -> list[GroundingResult]:
    """Grounding of every claim of a note, against ``source_text`` or the note's ``source_file``."""
    if source_text is None:
        path = source_path(note)
        if path is not None and path.is_file():
            source_text = path.read_text(encoding="utf-8", errors="replace")
    results = []
    for claim in note.meta.claims:
        if claim.source is None:
            results.append(GroundingResult(claim.id, Grounding.no_quote, "the claim has no source quote"))
        elif source_text is None:
            reason = (f"source file {note.meta.source_file!r} does not exist" if note.meta.source_file
                      else "the note has no source_file to check the quote against")
            results.append(GroundingResult(claim.id, Grounding.no_source, reason))
        elif check_quote(claim.source.quote, source_text):
            results.append(GroundingResult(claim.id, Grounding.grounded, "quote found in the source text"))
        else:
            results.append(GroundingResult(claim.id, Grounding.not_found,
                                           "the quote does not occur in the source text: the source may not back it"))
    return results
