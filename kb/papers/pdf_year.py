"""A learned fallback for an article's publication year, used only where the rules of ``pdf_publication``
left it empty: every year printed on the pages kb reads for the publication (page 1, or a cover page and the
page after it, with page 1's stamps) is a candidate, described by a few generic features of its place and its
neighbouring words; a logistic regression trained on the corpus' tuning half (benchmarks/train_year_model.py)
scores each, and the best one fills the year when its probability passes the threshold grouped
cross-validation chose (``year_model.json``, beside this module, holds the weights, the threshold, the
training set and the cross-validation numbers).

It is off by default (the setting ``learned_year``, ``KB_LEARNED_YEAR``), and the training script records why
(``year_model.json``'s ``default``): it may fill by default only where, cross-validated, its fills on the
articles the rules leave empty are right with a 95 % lower bound of 0.9, which the tuning half cannot show:
most articles the rules leave empty state no year at all (the numbers: ``year_model.json``'s
``cross_validation``, and the corpus README's rounds 8, 10 and 11).

Nothing here names a journal or an article: the features are words any publisher prints ('©', 'Proceedings',
'Vol.') and where on the page the year stands. Inference is a dot product in plain Python; the model file is
read on first use, never at import.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from kb.papers.pdf_page import MARGIN, PdfArticle, Segment, body_text_size
from kb.papers.pdf_publication import MONTH, REFERENCES_HEAD

YEAR_MODEL = Path(__file__).with_name("year_model.json")

# The features, in the order of the model's weights; each is 0/1 unless said otherwise, and, over the places
# a year is printed, 1 where any place has it ("from_top": its highest place). Why each one:
FEATURES: tuple[str, ...] = (
    "copyright",  # '© 2019', 'Copyright 2019', '(c) 2019': the publisher's year, on the article itself
    "published",  # 'published', 'appeared', 'to appear', 'accepted', 'reprinted', 'available online' before
    "received",  # 'received', 'revised', 'submitted': a journal's or a manuscript's dates
    "draft",  # 'draft', 'typeset', 'compiled', 'printed', 'updated': a document's own date, no publication's
    "meeting",  # 'Proceedings', 'Conference', 'Symposium', 'Workshop' around it: a meeting's year
    "journal_numbers",  # 'Vol.', 'No.', 'Issue', 'pp.', '12(3)', '123-145' around it: a citation line
    "month_before",  # 'March 2019': an issue's month, or a draft's
    "full_date",  # 'March 3, 2019', '3 March 2019': a day's date, of a posting or of a draft
    "parenthesised",  # '(2019)' after no author's name: a citation line's year ('Journal 3 (2019)')
    "citation",  # 'Smith (2003)', '(Smith et al., 2003', 'Smith 2003;': another work's year (negative)
    "prose_word",  # 'in 2003', 'since 1990', 'between ... and 2003': a year the prose talks about (negative)
    "arxiv",  # 'arXiv' before it: the stamp's date, the year when nothing else is printed
    "long_line",  # its line's words over 15, capped at 1: a body's line of prose, not a header or a note
    "margin",  # in the page's top or bottom tenth: running headers and footers print the publication
    "from_top",  # 0 at the top of the page, 1 at its foot (continuous)
    "size",  # its line's size over the body's, as a log ratio clamped to [-1, 1]: a banner or a footnote
    "latest",  # the latest year among the candidates: an article cites earlier years than its own
    "repeated",  # how often the year is printed, (count - 1) / 3 capped at 1: a journal's year repeats
    "cite_as",  # 'Cite this article as', 'please cite', 'Citation:' before it: the article's own citation
    "downloaded",  # 'Downloaded from/on/via', 'accessed' before it: a reader's date stamped on a copy, no
    # publication's (publishers' and archives' download stamps, printed on the first page's margin)
)
# How far around a year its words are read, in characters of the flattened text; a download stamp's cue
# further, past the URL and the reader's institution it names ('Downloaded from https://... by University
# user on 11 March 2023').
_BEFORE, _AFTER, _NEAR, _STAMP = 60, 40, 25, 120

_COPYRIGHT = re.compile(r"(?:©|\(c\)|\bcopyright\b)", re.IGNORECASE)
_PUBLISHED = re.compile(r"\b(?:published|appeared|appears?|accepted|reprinted|available online|posted|"
                        r"publication)\b", re.IGNORECASE)
_RECEIVED = re.compile(r"\b(?:received|revised|submitted|submission)\b", re.IGNORECASE)
_DRAFT = re.compile(r"\b(?:draft|compiled|typeset|printed|updated|today)\b", re.IGNORECASE)
_CITE_AS = re.compile(r"\b(?:cite (?:this|it|as)|please cite|to cite|for citations?\b|citation:)",
                      re.IGNORECASE)
_DOWNLOADED = re.compile(r"\b(?:downloaded|accessed|retrieved)\b", re.IGNORECASE)
_MEETING = re.compile(r"\b(?:proceedings|conference|symposium|workshop|meeting|congress|proc\.)",
                      re.IGNORECASE)
_JOURNAL_NUMBERS = re.compile(r"\b(?:vol(?:ume)?\.?|issue|no\.|pp?\.\s?\d)|\b\d{1,4}\s?\(\d{1,4}\)|"
                              r"\b\d{1,5}\s?[–-]\s?\d{1,5}\b", re.IGNORECASE)
_MONTH_BEFORE = re.compile(rf"(?i:\b{MONTH}),?\s?$")
_DAY_BEFORE = re.compile(rf"(?:(?i:\b{MONTH})\s?\d{{1,2}}(?:st|nd|rd|th)?,?|\b\d{{1,2}}\s(?i:{MONTH}),?)\s?$")
# A month's name, exactly (MONTH, the rules' pattern, also takes 'Marshall' and 'Mayer' for months).
_MONTH_NAME = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
               r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
# A citation's author before its year: 'Smith (', 'Smith, ', 'Smith et al., ', 'Smith and Jones '; or a
# citation list going on after it ('2003;'). The name is a word of its own and no month: a date's 'March 2019'
# and a header's '28 OCTOBER 2011' are no author's.
_CITED_BEFORE = re.compile(rf"(?<![\w'’-])(?!(?i:{_MONTH_NAME})\b)[A-Z][\w'’-]+"
                           r"(?: et al\.?| (?:and|&) [A-Z][\w'’-]+)?,?\s?\(?$")
_CITED_AFTER = re.compile(r"^\s?[;]")
_PROSE_BEFORE = re.compile(r"\b(?:in|since|by|until|from|of|to|between|and|before|after|during|than)\s$")
# A year as a word of its own: not inside a number ('1.2019', 'arXiv:2003.01234'), a range ('1990–2003'), a
# DOI, a URL or an e-mail address.
_YEAR_WORD = re.compile(r"(?<![\w./:@–-])(?:19|20)\d\d(?![\w/@]|[.:–-]\d)")
_LINK_WORD = re.compile(r"(?:doi|https?:|www\.|\.org|\.com|/|@)", re.IGNORECASE)


@dataclass(frozen=True)
class YearCandidate:
    """A year printed where the publication is read, with its features (in ``FEATURES`` order) over every
    place it is printed."""

    year: int
    features: tuple[float, ...]
    context: str  # the words around its first place, to say where it was read


@dataclass(frozen=True)
class _Line:
    """A line of text a year may stand on, with where it stands on its page."""

    text: str
    from_top: float  # 0 at the top of the page, 1 at its foot
    size: float  # over the page's body size
    margin: bool  # in the page's running header or footer band (or a stamp added to the page)


def _lines(layouts: list[tuple[list[Segment], float]], stamps: list[str]) -> list[_Line]:
    """The lines of the pages read (page 1, or a cover page and the page after it), stamps first, up to a
    reference list's heading: a year in the reference list is another work's."""
    lines = [_Line(stamp, 0.0, 1.0, True) for stamp in stamps]
    for segments, height in layouts:
        if not segments:
            continue
        body = body_text_size(segments) or 1.0
        for seg in segments:
            if REFERENCES_HEAD.match(seg.text):
                break
            from_top = min(max(1.0 - seg.y / height, 0.0), 1.0) if height else 0.5
            lines.append(_Line(seg.text, from_top, seg.size / body,
                               from_top < MARGIN or from_top > 1 - MARGIN))
    return lines


def year_candidates(layouts: list[tuple[list[Segment], float]], stamps: list[str],
                    this_year: int | None = None) -> list[YearCandidate]:
    """Every year from 1900 to next year printed as a word of its own on the lines kb reads for the
    publication (see ``_lines``), once, with its features over the places it is printed (``_together``)."""
    latest = (this_year or datetime.date.today().year) + 1
    lines = _lines(layouts, stamps)
    flat, starts = "", []
    for line in lines:  # the lines as one text, in the PDF's order, so that a year's words may run across
        starts.append(len(flat))
        flat += " ".join(line.text.split()) + " "
    found: list[tuple[int, int, _Line]] = []  # (year, offset in flat, line)
    for line, start in zip(lines, starts, strict=True):
        text = " ".join(line.text.split())
        for match in _YEAR_WORD.finditer(text):
            word = text[text.rfind(" ", 0, match.start()) + 1:(text + " ").find(" ", match.end())]
            if 1900 <= int(match.group()) <= latest and not _LINK_WORD.search(word):
                found.append((int(match.group()), start + match.start(), line))
    years = [year for year, _, _ in found]
    printed: dict[int, list[tuple[float, ...]]] = {}  # each year's occurrences' features, first printed first
    contexts: dict[int, str] = {}
    for year, at, line in found:
        printed.setdefault(year, []).append(_features(flat, at, line, year, years))
        contexts.setdefault(year, flat[max(0, at - 30):at + 10].strip())
    return [YearCandidate(year, _together(occurrences), contexts[year])
            for year, occurrences in printed.items()]


_HIGHEST = FEATURES.index("from_top")


def _together(occurrences: list[tuple[float, ...]]) -> tuple[float, ...]:
    """A year's features over all the places it is printed: each cue where any of them has it (a footer's
    '2022' and the body's 'compiled on January 11, 2022' are one year, a draft's), its highest place on the
    page. One candidate per year: its label (the truth's year or not) is then the year's, not a place's."""
    columns = list(zip(*occurrences, strict=True))
    return tuple(min(column) if i == _HIGHEST else max(column) for i, column in enumerate(columns))


def _features(flat: str, at: int, line: _Line, year: int, years: list[int]) -> tuple[float, ...]:
    """A candidate's features (see ``FEATURES``) from the text around it and its line."""
    before, after = flat[max(0, at - _BEFORE):at], flat[at + 4:at + 4 + _AFTER]
    near = flat[max(0, at - _NEAR):at] + " " + flat[at + 4:at + 4 + _NEAR]
    cited = bool(_CITED_BEFORE.search(before) or _CITED_AFTER.search(after))
    values = {
        "copyright": bool(_COPYRIGHT.search(before[-25:])),
        "published": bool(_PUBLISHED.search(before)),
        "received": bool(_RECEIVED.search(before)),
        "draft": bool(_DRAFT.search(before[-35:])),
        "meeting": bool(_MEETING.search(before) or _MEETING.search(after)),
        "journal_numbers": bool(_JOURNAL_NUMBERS.search(near)),
        "month_before": bool(_MONTH_BEFORE.search(before)),
        "full_date": bool(_DAY_BEFORE.search(before)),
        # 'Smith et al. (2013)' is a citation, not a citation line: the two cues stay apart
        "parenthesised": before.endswith("(") and after.startswith(")") and not cited,
        "citation": cited,
        "prose_word": bool(_PROSE_BEFORE.search(before)),
        "arxiv": "arxiv" in before.lower(),
        "long_line": min(1.0, len(line.text.split()) / 15),
        "margin": line.margin,
        "from_top": line.from_top,
        "size": max(-1.0, min(1.0, math.log(line.size))) if line.size > 0 else 0.0,
        "latest": year == max(years),
        "repeated": min(1.0, (years.count(year) - 1) / 3),
        "cite_as": bool(_CITE_AS.search(before)),
        "downloaded": bool(_DOWNLOADED.search(flat[max(0, at - _STAMP):at])),
    }
    return tuple(float(values[name]) for name in FEATURES)


@dataclass(frozen=True)
class YearModel:
    """The shipped model: a weight per feature, an intercept, and the probability a fill must pass."""

    weights: tuple[float, ...]
    intercept: float
    threshold: float

    def probability(self, candidate: YearCandidate) -> float:
        logit = self.intercept + sum(w * x for w, x in zip(self.weights, candidate.features, strict=True))
        return 1.0 / (1.0 + math.exp(-logit))


def model_from(data: dict[str, Any]) -> YearModel:
    """A model from its JSON; its features must be this module's, in this order."""
    if tuple(data["features"]) != FEATURES:
        raise ValueError(f"year model's features {data['features']} are not this module's {list(FEATURES)}")
    return YearModel(tuple(float(w) for w in data["weights"]), float(data["intercept"]),
                     float(data["threshold"]))


@cache
def shipped_model() -> YearModel:
    """The model in ``YEAR_MODEL``, read once."""
    return model_from(json.loads(YEAR_MODEL.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class YearGuess:
    """The best candidate and its probability."""

    year: int
    probability: float
    context: str


def best_year(candidates: list[YearCandidate], model: YearModel | None = None) -> YearGuess | None:
    """The candidate the model scores highest (the first of equals), or None without candidates."""
    model = model or shipped_model()
    scored = [(model.probability(c), -i, c) for i, c in enumerate(candidates)]
    if not scored:
        return None
    probability, _, candidate = max(scored)
    return YearGuess(candidate.year, probability, candidate.context)


LEARNED_YEAR = "layout (learned year ranker, p={p:.2f})"  # how a year it filled was read


def fill_year(article: PdfArticle, candidates: list[YearCandidate], model: YearModel | None = None) -> None:
    """Where the rules left the article's year empty (never over a year they read), the best candidate when
    its probability passes the model's threshold, with how it was read in ``read_by``; else the year stays
    empty."""
    if article.year is not None:
        return
    model = model or shipped_model()
    guess = best_year(candidates, model)
    if guess is not None and guess.probability >= model.threshold:
        article.year = guess.year
        article.read_by["year"] = LEARNED_YEAR.format(p=guess.probability)
