"""Is a claim grounded in its source? Checks each claim's quote against the note's source text, and
lists where the note disagrees with its paper.

A note names its source text (abstract or full text) with ``source_file:``, relative to the note; it is read
through ``kb.notes.sources`` (inside the notes folder, size-capped, regular files only).
Matching is tolerant of what copying from a PDF or web page changes: Unicode forms (NFKC), dashes
and quotes, ligatures, whitespace and line breaks, and words hyphenated across a line break (a hyphen
between two letters is optional: 'non-parametric' and 'nonparametric' compare equal).

Beyond quotes, ``disagreements`` compares what the note asserts with what the source says: the
title, the arXiv id and year when the source states them, and every number a claim states. A number
counts as backed only where the source states it about the same thing: near one of the words the claim
puts next to it, in the same clause (a claim of "perplexity <= 12" is not backed by "12 layers").

A source text with pages (a PDF's text as ``kb add`` stores it: pages separated by a form feed) tells
on which page a quote is: a claim citing another page is not grounded, and one citing none is told
which page to cite.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from kb.notes.files import Note
from kb.notes.page_break import PAGE_BREAK  # between pages of a source text taken from a PDF
from kb.notes.sources import SourceText, read_source
from kb.notes.text_fold import normalize_text


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


@functools.lru_cache(maxsize=2)
def _normalized_source(source_text: str) -> str:
    # Callers (the drafter, the agents' tools) check many quotes against one text: normalize it once.
    return normalize_text(source_text)


def check_quote(quote: str, source_text: str) -> bool:
    """True when the quote occurs in the source text, up to normalization."""
    return normalize_text(quote) in _normalized_source(source_text)


_INDEX_AFTER = 32  # lookups answered by scanning before a text's word index is built (it costs ~500 scans)
_STEP_COST = 512  # one candidate checked in Python costs about as much as scanning this many characters
WORK_BUDGET = 1 << 30  # characters (or their cost) one note's quotes may scan in all, about a second


class _Finder:
    """Where a quote occurs in one normalized text: by scanning it, or, once many quotes have asked, through
    an index of where each word starts. A quote's inner words are whole words of the text wherever it occurs,
    so only the places of its rarest inner word are candidates."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.work = 0  # characters scanned, candidates counted at _STEP_COST
        self._lookups = 0
        self._starts: dict[str, array[int]] | None = None

    def find(
        self, needle: str, allowance: int, resume: Callable[[int], int] | None = None
    ) -> list[int] | None:
        """Start offsets of ``needle`` (the first only without ``resume``, which gives where to look on after
        a hit), or None when finding them would cost more than ``allowance``."""
        words = needle.split(" ")
        self._lookups += 1
        if self._starts is None and self._lookups > _INDEX_AFTER and len(words) >= 3:
            self._starts = {}
            for match in re.finditer(r"[^ \f]+", self.text):
                places = self._starts.get(match.group())
                if places is None:  # 8 bytes a place, not a Python int's 36: a source may be 20 MB
                    places = self._starts[match.group()] = array("q")
                places.append(match.start())
        if self._starts is not None and len(words) >= 3:
            count, i = min(
                (len(self._starts.get(word, ())), i) for i, word in enumerate(words[1:-1], start=1)
            )
            if count * _STEP_COST <= min(len(self.text), allowance):
                self.work += count * _STEP_COST
                offset = len(" ".join(words[:i])) + 1
                found = [s - offset for s in self._starts.get(words[i], ())
                         if s >= offset and self.text.startswith(needle, s - offset)]
                return found[:1] if resume is None else self._resumed(found, resume)
        if len(self.text) > allowance:
            return None
        self.work += len(self.text)  # one pass: resuming skips ahead and never rescans
        found, at = [], self.text.find(needle)
        while at >= 0:
            found.append(at)
            at = -1 if resume is None else self.text.find(needle, resume(at))
        return found

    @staticmethod
    def _resumed(found: list[int], resume: Callable[[int], int]) -> list[int]:
        kept: list[int] = []
        for at in found:
            if not kept or at >= resume(kept[-1]):
                kept.append(at)
        return kept


class QuoteMatcher:
    """A source text prepared once for all of a note's quotes: normalized whole (and page by page when it has
    pages); the first quotes are found by scanning it, the rest through its word index in about their own
    length (2,000 quotes against a 4 MB source: seconds, where normalizing it per quote took twenty minutes).
    Scans the index cannot spare (quotes of one or two words) are capped by ``WORK_BUDGET``: quotes past it
    are reported unchecked, saying why."""

    def __init__(self, source_text: str) -> None:
        self._whole = _Finder(normalize_text(source_text))
        pages = source_text.split(PAGE_BREAK)
        normalized = [normalize_text(page) for page in pages] if len(pages) > 1 else []
        # A normalized quote holds no form feed, so it cannot match across the join.
        self._pages = _Finder(PAGE_BREAK.join(normalized))
        self._page_starts = list(itertools.accumulate((len(p) + 1 for p in normalized[:-1]), initial=0))

    def _allowance(self) -> int:
        return WORK_BUDGET - self._whole.work - self._pages.work

    def contains(self, quote: str) -> bool | None:
        """Whether the quote occurs in the source (None: not checked, the note's budget is spent)."""
        needle = normalize_text(quote)
        found = self._whole.find(needle, self._allowance()) if needle else [0]
        return None if found is None else bool(found)

    def pages(self, quote: str) -> list[int] | None:
        """The 1-based pages the quote occurs on (empty without pages or when it spans two; None: not
        checked)."""
        needle = normalize_text(quote)
        if len(self._page_starts) < 2 or not needle:
            return []

        def next_page(at: int) -> int:
            following = bisect.bisect_right(self._page_starts, at)
            return (
                self._page_starts[following] if following < len(self._page_starts) else len(self._pages.text)
            )

        found = self._pages.find(needle, self._allowance(), resume=next_page)
        return None if found is None else [bisect.bisect_right(self._page_starts, at) for at in found]

    def start_page(self, quote: str) -> int | None:
        """The 1-based page a quote starts on: the first page it occurs on whole or, for a quote running over
        a page break, the page of its longest opening found on one page; None without pages, when the quote is
        not in the text, or when the budget is spent."""
        found = self.pages(quote)
        if found or found is None or len(self._page_starts) < 2 or not self.contains(quote):
            return found[0] if found else None
        words = normalize_text(quote).split(" ")
        low, high, page = 1, len(words) - 1, None
        while low <= high:  # an opening found on one page has every shorter opening found there too
            middle = (low + high) // 2
            at = self.pages(" ".join(words[:middle]))
            if at:
                page, low = at[0], middle + 1
            else:
                high = middle - 1
        return page

    def ground(self, quote: str, claim_page: int | None) -> tuple[Grounding, str]:
        """Status and reason of a claim's quote, judged by the page the claim cites."""
        found = self.contains(quote)
        pages = self.pages(quote) if found else []
        if found is None or pages is None:
            return Grounding.not_found, (
                "not checked: this note's quotes used up the matching budget against its "
                "large source; quote at least three words, or split the note"
            )
        if not found:
            return (
                Grounding.not_found,
                "the quote does not occur in the source text: the source may not back it",
            )
        if not pages:
            return Grounding.grounded, "quote found in the source text"
        where = ", ".join(map(str, pages))
        if claim_page is None:
            return Grounding.grounded, f"quote found on page {where} (cite it: source.page: {pages[0]})"
        if claim_page in pages:
            return Grounding.grounded, f"quote found on page {claim_page}"
        return Grounding.not_found, f"the quote is on page {where}, not on page {claim_page} the claim cites"


def _text_of(note: Note, source: str | SourceText | None) -> tuple[str | None, str]:
    """The text to check against and, without one, why not."""
    if isinstance(source, str):
        return source, ""
    read = source if source is not None else read_source(note)  # the note's folder is the vault by default
    why = read.problem or "the note has no source_file to check the quote against"
    return read.text, why


def check_note(note: Note, source: str | SourceText | None = None) -> list[GroundingResult]:
    """Grounding of every claim of a note, against a text, a source read with ``kb.notes.sources.read_source``
    (``KnowledgeBase.read_source``: the notes folder is the vault) or, by default, the note's ``source_file``
    read inside the note's own folder."""
    source_text, why = _text_of(note, source)
    matcher: QuoteMatcher | None = None
    results = []
    for claim in note.meta.claims:
        if claim.source is None:
            results.append(GroundingResult(claim.id, Grounding.no_quote, "the claim has no source quote"))
        elif source_text is None:
            results.append(GroundingResult(claim.id, Grounding.no_source, why))
        else:
            matcher = matcher or QuoteMatcher(source_text)  # the source is prepared once, for every quote
            results.append(GroundingResult(claim.id, *matcher.ground(claim.source.quote, claim.source.page)))
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
_WORDS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
]


def numbers_in(text: str) -> set[str]:
    """The numbers a text states, normalized ('1,000' -> '1000', '0.50' -> '0.5', 'six' -> '6')."""
    text = normalize_text(text)
    found = {n.replace(",", "") for n in _NUMBER.findall(text)}
    found = {n.rstrip("0").rstrip(".") if "." in n else n for n in found}
    words = set(re.findall(r"[a-z]+", text))
    return found | {str(i) for i, word in enumerate(_WORDS) if word in words}


_TOKEN = re.compile(r"(?P<num>(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?)|(?P<word>[^\W\d_]+)|(?P<other>\w+)"
                    r"|(?P<stop>[.;:!?()\[\]])")  # 'stop': a clause ends; numbers' neighbours stay inside it
# a word list reads best as words
_STOPWORDS = frozenset("""a an the of in on at to for with by from and or as is are was were be been being
than that this these those it its we our they their which who whom into onto over under per about up down
has have had do does did not no nor but so such each all any both more most less least very can may
between within across after before during above below while whereas only also just""".split())  # noqa: SIM905
_WINDOW = 4  # tokens either side of a number that say what it is about


def _stem(word: str) -> str:
    return word[:5]


def _number_contexts(text: str) -> dict[str, set[str]]:
    """For each number a text states, the stems of the words near any of its occurrences (same clause,
    ±_WINDOW); one set per number, so checking a claim against a long source costs the claim's length."""
    tokens: list[tuple[str, str]] = []  # (kind, value) with number words as numbers
    for match in _TOKEN.finditer(normalize_text(text)):
        kind, value = match.lastgroup or "other", match.group()
        if kind == "word" and value in _WORDS:
            kind, value = "num", str(_WORDS.index(value))
        elif kind == "num":
            value = value.replace(",", "")
            value = value.rstrip("0").rstrip(".") if "." in value else value
        tokens.append((kind, value))
    contexts: dict[str, set[str]] = {}
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
        contexts.setdefault(value, set()).update(near)
    return contexts


def _unbacked(
    claimed: dict[str, set[str]], stated: dict[str, set[str]]
) -> tuple[list[str], dict[str, set[str]]]:
    missing = sorted((n for n in claimed if n not in stated), key=float)
    elsewhere = {number: words for number, words in claimed.items()
                 if number in stated and words and not words & stated[number]}
    return missing, elsewhere


def disagreements(note: Note, source: str | SourceText | None = None) -> list[Disagreement]:
    """Where the note's metadata and claims state things its source text does not (empty without a source);
    ``source`` as for :func:`check_note`."""
    source_text, _ = _text_of(note, source)
    if source_text is None:
        return []
    meta, source = note.meta, normalize_text(source_text)
    found: list[Disagreement] = []
    if normalize_text(meta.title) not in source:
        found.append(
            Disagreement("title", meta.title, "the source text does not contain the note's title", "warning")
        )
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
    stated = _number_contexts(source_text)  # once for all claims: the source may be megabytes
    for claim in meta.claims:
        # '. ' keeps the statement's words from counting as the quote's numbers' neighbours.
        text = claim.statement + (". " + claim.source.quote if claim.source else "")
        missing, elsewhere = _unbacked(_number_contexts(text), stated)
        reasons = []
        if missing:
            reasons.append(f"the source never states {', '.join(missing)}, which the claim does")
        for number, words in sorted(elsewhere.items(), key=lambda item: float(item[0])):
            reasons.append(f"the source states {number} only about other things, not next to "
                           f"{', '.join(sorted(words))} as the claim does")
        if reasons:
            found.append(Disagreement(claim.id, claim.statement, "; ".join(reasons)))
    return found
