"""Is a claim grounded in its source? Checks each claim's quote against the note's source text, and
lists where the note disagrees with its paper.

A note names its source text (abstract or full text) with ``source_file:``, relative to the note.
Matching is tolerant of what copying from a PDF or web page changes: Unicode forms (NFKC), dashes
and quotes, ligatures, whitespace and line breaks, and words hyphenated across a line break.

Beyond quotes, ``disagreements`` compares what the note asserts with what the source says: the
title, the arXiv id and year when the source states them, and every number a claim states. A number
counts as backed only where the source states it about the same thing: near one of the words the claim
puts next to it, in the same clause (a claim of "perplexity <= 12" is not backed by "12 layers").

A source text with pages (a PDF's text as ``kb add`` stores it: pages separated by a form feed) tells
on which page a quote is: a claim citing another page is not grounded, and one citing none is told
which page to cite.
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


PAGE_BREAK = "\f"  # between pages of a source text taken from a PDF


def quote_pages(quote: str, source_text: str) -> list[int]:
    """The 1-based pages a quote occurs on (empty when the source has no pages or the quote spans two)."""
    pages = source_text.split(PAGE_BREAK)
    if len(pages) < 2:
        return []
    return [i for i, page in enumerate(pages, start=1) if check_quote(quote, page)]


def _grounded(claim_page: int | None, quote: str, source_text: str) -> tuple[Grounding, str]:
    """Status and reason of a quote found in the source, judged by the page the claim cites."""
    pages = quote_pages(quote, source_text)
    if not pages:
        return Grounding.grounded, "quote found in the source text"
    where = ", ".join(map(str, pages))
    if claim_page is None:
        return Grounding.grounded, f"quote found on page {where} (cite it: source.page: {pages[0]})"
    if claim_page in pages:
        return Grounding.grounded, f"quote found on page {claim_page}"
    return Grounding.not_found, f"the quote is on page {where}, not on page {claim_page} the claim cites"


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
            status, reason = _grounded(claim.source.page, claim.source.quote, source_text)
            results.append(GroundingResult(claim.id, status, reason))
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


_TOKEN = re.compile(r"(?P<num>(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?)|(?P<word>[^\W\d_]+)|(?P<other>\w+)"
                    r"|(?P<stop>[.;:!?()\[\]])")  # 'stop': a clause ends; numbers' neighbours stay inside it
_STOPWORDS = frozenset("""a an the of in on at to for with by from and or as is are was were be been being than
that this these those it its we our they their which who whom into onto over under per about up down
has have had do does did not no nor but so such each all any both more most less least very can may
between within across after before during above below while whereas only also just""".split())  # noqa: SIM905 (a word list reads best as words)
_WINDOW = 4  # tokens either side of a number that say what it is about


def _stem(word: str) -> str:
    return word[:5]


def _number_contexts(text: str) -> dict[str, list[set[str]]]:
    """For each number a text states, the stems of the words near each occurrence (same clause, ±_WINDOW)."""
    tokens: list[tuple[str, str]] = []  # (kind, value) with number words as numbers
    for match in _TOKEN.finditer(normalize_text(text)):
        kind, value = match.lastgroup or "other", match.group()
        if kind == "word" and value in _WORDS:
            kind, value = "num", str(_WORDS.index(value))
        elif kind == "num":
            value = value.replace(",", "")
            value = value.rstrip("0").rstrip(".") if "." in value else value
        tokens.append((kind, value))
    contexts: dict[str, list[set[str]]] = {}
    for i, (kind, value) in enumerate(tokens):
        if kind != "num":
            continue
        near: set[str] = set()
        for step in (-1, 1):
            j = i + step
            while 0 <= j < len(tokens) and abs(j - i) <= _WINDOW and tokens[j][0] != "stop":
                if tokens[j][0] == "word" and tokens[j][1] not in _STOPWORDS and len(tokens[j][1]) > 1:
                    near.add(_stem(tokens[j][1]))
                j += step
        contexts.setdefault(value, []).append(near)
    return contexts


def unbacked_numbers(claim_text: str, source_text: str) -> tuple[list[str], dict[str, set[str]]]:
    """Numbers of the claim the source never states, and those it states only about other things.

    The second maps a number to the words the claim puts next to it, none of which the source puts
    next to that number. A number the claim states bare (no words near it) is backed by any mention.
    """
    claimed, stated = _number_contexts(claim_text), _number_contexts(source_text)
    missing = sorted((n for n in claimed if n not in stated), key=float)
    elsewhere: dict[str, set[str]] = {}
    for number, claim_contexts in claimed.items():
        if number not in stated:
            continue
        words = set().union(*claim_contexts)
        if words and not any(words & near for near in stated[number]):
            elsewhere[number] = words
    return missing, elsewhere


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
    for claim in meta.claims:
        # '. ' keeps the statement's words from counting as the quote's numbers' neighbours.
        text = claim.statement + (". " + claim.source.quote if claim.source else "")
        missing, elsewhere = unbacked_numbers(text, source_text)
        reasons = []
        if missing:
            reasons.append(f"the source never states {', '.join(missing)}, which the claim does")
        for number, words in sorted(elsewhere.items(), key=lambda item: float(item[0])):
            reasons.append(f"the source states {number} only about other things, not next to "
                           f"{', '.join(sorted(words))} as the claim does")
        if reasons:
            found.append(Disagreement(claim.id, claim.statement, "; ".join(reasons)))
    return found
