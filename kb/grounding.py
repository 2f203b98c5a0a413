"""Is a claim grounded in its source? Checks each claim's quote against the note's source text, and
lists where the note disagrees with its paper.

A note names its source text (abstract or full text) with ``source_file:``, relative to the note.
Matching is tolerant of what copying from a PDF or web page changes: Unicode forms (NFKC), dashes
and quotes, ligatures, whitespace and line breaks, and words hyphenated across a line break.

Beyond quotes, ``disagreements`` compares what the note asserts with what the source says: the
title, the arXiv id and year when the source states them, and every number a claim states (a claim
of "24-36 layers" over a source that never mentions 24 or 36 is not backed by it).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal

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


@dataclass(frozen=True)
class Disagreement:
    """One place where the note says something its source text does not."""

    where: str  # 'title', 'paper_id', 'year' or '<claim id>'
    note_says: str
    reason: str
    # A missing title is a warning: notes of talks, blogs or comment threads carry a descriptive title.
    severity: Literal["warning", "error"] = "error"


_NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?")
_ARXIV = re.compile(r"\b\d{4}\.\d{4,5}\b")
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
          "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]


def numbers_in(text: str) -> set[str]:
    """The numbers a text states, normalized ('1,000' -> '1000', '0.50' -> '0.5', 'six' -> '6')."""
    text = normalize_text(text)
    found = {n.replace(",", "") for n in _NUMBER.findall(text)}
    found = {n.rstrip("0").rstrip(".") if "." in n else n for n in found}
    words = set(re.findall(r"[a-z]+", text))
    return found | {str(i) for i, word in enumerate(_WORDS) if word in words}


def disagreements(note: Note, source_text: str | None = None) -> list[Disagreement]:
    """Where the note's metadata and claims state things its source text does not (empty without a source)."""
    if source_text is None:
        path = source_path(note)
        if path is None or not path.is_file():
            return []
        source_text = path.read_text(encoding="utf-8", errors="replace")
    meta, source = note.meta, normalize_text(source_text)
    found: list[Disagreement] = []
    if normalize_text(meta.title) not in source:
        found.append(Disagreement("title", meta.title, "the source text does not contain the note's title", "warning"))
    ids_in_source = set(_ARXIV.findall(source_text))
    note_ids = set(_ARXIV.findall(" ".join(filter(None, [meta.paper_id, meta.publication.arxiv_id
                                                          if meta.publication else None]))))
    if ids_in_source and note_ids and not note_ids & ids_in_source:
        found.append(Disagreement("paper_id", ", ".join(sorted(note_ids)),
                                  f"the source names arXiv {', '.join(sorted(ids_in_source))} instead"))
    years_in_source = {int(y) for y in _YEAR.findall(source_text)}
    if meta.year is not None and years_in_source and meta.year not in years_in_source:
        found.append(Disagreement("year", str(meta.year),
                                  f"the source dates itself {', '.join(map(str, sorted(years_in_source)))}"))
    source_numbers = numbers_in(source_text)
    for claim in meta.claims:
        stated = numbers_in(claim.statement) | (numbers_in(claim.source.quote) if claim.source else set())
        missing = sorted(stated - source_numbers, key=lambda n: float(n))
        if missing:
            found.append(Disagreement(claim.id, claim.statement,
                                      f"the source never states {', '.join(missing)}, which the claim does"))
    return found
