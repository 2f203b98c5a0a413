"""A learned labeller of page 1's lines: each segment's role (title, author, affiliation, abstract or other),
as GROBID's and CERMINE's header models label lines, from generic features of its type, place and words.
A multinomial logistic regression trained on the corpus' tuning half (``benchmarks/train_role_model.py``)
scores each line; ``role_model.json``, beside this module, holds the weights, the training set and the
cross-validated numbers.

The rules (``pdf_layout``) read the fields; the labeller is a second reader of the same page, and it reads one
field: the abstract (``mend_abstract``), where it gives the line the rules' abstract opens on almost no chance
of being an abstract's (a byline, an address, a citation box), or, surely and opening a sentence, where the
rules read none. It is off by default (the setting ``learned_abstract``, ``KB_LEARNED_ABSTRACT=true``), and
the training script records why (``role_model.json``'s ``default``): on articles it did not see, read alone,
it is about as right as the rules at their first read (the corpus README, "Round 12"), and where the two
differ the rules are right about as often, so as an arbiter it mends about as much as it breaks.

Nothing here names a journal or an article. Inference is dot products in plain Python; the model file is read
on first use, never at import.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from kb.notes.text_fold import normalize_text
from kb.papers.pdf_abstract import abstract_opening_with
from kb.papers.pdf_names import INSTITUTION, is_name_list, is_prose
from kb.papers.pdf_page import PdfArticle, Segment, body_text_size

ROLE_MODEL = Path(__file__).with_name("role_model.json")
ROLES: tuple[str, ...] = ("other", "title", "author", "affiliation", "abstract")

# The features of a line, in the order of the model's weights; each is 0/1 unless said otherwise. "prev" and
# "next" are the lines above and below it in the page's order (pdfium's: top to bottom, a column at a time).
_OWN: tuple[str, ...] = (
    "size",  # its size over the body's, as a log ratio clamped to [-1, 1.5]: a title is set large
    "largest",  # in the page's largest size (within half a point)
    "size_rank",  # the rank of its size among the page's sizes, largest first, capped at 3, over 3
    "rare_size",  # few lines of the page share its size (1 / their count): a title's or a heading's
    "from_top",  # 0 at the top of the page's text, 1 at its foot (continuous)
    "off_centre",  # its centre's distance from the text's centre, over the text's width: a centred title
    "width",  # its width over the text's: a byline is narrow, a paragraph's line full
    "bold",
    "italic",
    "capitals",  # the share of its letters in capitals
    "capitalised",  # the share of its words that open with a capital: names, a title in title case
    "words",  # log(1 + its words) / 3
    "digits",  # the share of its characters that are digits: dates, pages, postcodes
    "full_stop",  # it ends with a full stop: prose, not a title or a name
    "email",  # an e-mail address
    "url",  # a web address
    "institution",  # an institution's word ('University', 'Institut', 'Laboratory', ...)
    "abstract_head",  # it opens with 'Abstract' or 'Summary'
    "keywords_head",  # it opens with 'Keywords' or 'Index Terms'
    "publication",  # 'doi', 'Vol.', 'ISSN', 'Journal', 'Proceedings', '©', 'Received', 'arXiv', ...
    "marked",  # a superscript (an affiliation's or a footnote's mark) on it
    "commas",  # its commas over its words, capped at 1: name lists and addresses are comma-rich
    "function_words",  # the share of its words that are English function words: prose and titles
    "names",  # a list of personal names (``pdf_names.is_name_list``)
    "prose",  # a line of running text (``pdf_names.is_prose``)
    "gap_above",  # the gap to the line above over its size, capped at 4, over 4
    "gap_below",  # the gap to the line below, likewise
    "above_largest",  # above the page's highest line in the largest size: headers, a journal's banner
)
# The neighbours' features the model also sees, by name.
_AROUND: tuple[str, ...] = ("size", "largest", "names", "institution", "abstract_head", "prose", "email",
                            "marked", "bold")
FEATURES: tuple[str, ...] = (*_OWN, *(f"prev_{f}" for f in _AROUND), *(f"next_{f}" for f in _AROUND),
                             "prev_same_size", "next_same_size")

_EMAIL = re.compile(r"\S@\S")
_URL = re.compile(r"https?://|www\.", re.IGNORECASE)
_ABSTRACT_HEAD = re.compile(r"^\W*(?:abstract|summary|a b s t r a c t)\b", re.IGNORECASE)
_KEYWORDS_HEAD = re.compile(r"^\W*(?:key\s?words?|index terms)\b", re.IGNORECASE)
_PUBLICATION = re.compile(r"\bdoi\b|\bvol(?:ume)?\b\.?|\bissn\b|\bjournal\b|\bproceedings\b|\bconference\b|"
                          r"©|\bcopyright\b|\breceived\b|\baccepted\b|\bpublished\b|\barxiv\b|\bpp\.",
                          re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_FUNCTION_WORDS = frozenset((
    "a", "an", "the", "of", "and", "or", "in", "on", "for", "to", "with", "by", "from", "at", "as",
    "is", "are", "was", "were", "be", "we", "our", "this", "that", "these", "which", "it", "its", "into",
    "than", "not",
))


@dataclass(frozen=True)
class _Page:
    """What a line's features are measured against: the page's text box, sizes and body size."""

    top: float
    bottom: float
    left: float
    right: float
    body: float
    largest: float
    sizes: tuple[float, ...]  # the page's distinct sizes, largest first
    size_counts: dict[float, int]
    largest_top: float  # the baseline of the highest line in the largest size


def _page(segments: list[Segment]) -> _Page:
    sizes = sorted({round(s.size, 1) for s in segments}, reverse=True)
    counts: dict[float, int] = {}
    for s in segments:
        counts[round(s.size, 1)] = counts.get(round(s.size, 1), 0) + 1
    largest = max(s.size for s in segments)
    return _Page(top=max(s.y + s.size for s in segments), bottom=min(s.y for s in segments),
                 left=min(s.x0 for s in segments), right=max(s.x1 for s in segments),
                 body=body_text_size(segments) or 10.0, largest=largest, sizes=tuple(sizes),
                 size_counts=counts, largest_top=max(s.y for s in segments if s.size > largest - 0.5))


def _own(seg: Segment, page: _Page, above: Segment | None, below: Segment | None) -> dict[str, float]:
    text = seg.text.strip()
    words = _WORD.findall(text)
    letters = [c for c in text if c.isalpha()]
    height, width = max(page.top - page.bottom, 1.0), max(page.right - page.left, 1.0)
    rank = next((i for i, size in enumerate(page.sizes) if abs(size - seg.size) < 0.05), len(page.sizes))

    def gap(other: Segment | None) -> float:
        return 1.0 if other is None else min(abs(other.y - seg.y) / max(seg.size, 1.0), 4.0) / 4

    return {
        "size": max(-1.0, min(1.5, math.log(max(seg.size, 0.1) / page.body))),
        "largest": float(seg.size > page.largest - 0.5),
        "size_rank": min(rank, 3) / 3,
        "rare_size": 1.0 / page.size_counts.get(round(seg.size, 1), 1),
        "from_top": min(max((page.top - seg.y) / height, 0.0), 1.0),
        "off_centre": min(abs(seg.center - (page.left + page.right) / 2) / width, 1.0),
        "width": min((seg.x1 - seg.x0) / width, 1.0),
        "bold": float(seg.style == "bold"),
        "italic": float(seg.style == "italic"),
        "capitals": sum(c.isupper() for c in letters) / len(letters) if letters else 0.0,
        "capitalised": sum(w[0].isupper() for w in words) / len(words) if words else 0.0,
        "words": math.log1p(len(words)) / 3,
        "digits": sum(c.isdigit() for c in text) / len(text) if text else 0.0,
        "full_stop": float(text.endswith(".")),
        "email": float(bool(_EMAIL.search(text))),
        "url": float(bool(_URL.search(text))),
        "institution": float(bool(INSTITUTION.search(text))),
        "abstract_head": float(bool(_ABSTRACT_HEAD.search(text))),
        "keywords_head": float(bool(_KEYWORDS_HEAD.search(text))),
        "publication": float(bool(_PUBLICATION.search(text))),
        "marked": float(seg.marked != "" and seg.marked != seg.text),
        "commas": min(text.count(",") / max(len(words), 1), 1.0),
        "function_words": sum(w.lower() in _FUNCTION_WORDS for w in words) / len(words) if words else 0.0,
        "names": float(bool(words) and is_name_list(text)),
        "prose": float(is_prose(text)),
        "gap_above": gap(above),
        "gap_below": gap(below),
        "above_largest": float(seg.y > page.largest_top + 0.5),
    }


def line_features(segments: list[Segment]) -> list[tuple[float, ...]]:
    """Each segment's features (``FEATURES`` order), in the segments' order."""
    if not segments:
        return []
    page = _page(segments)
    own = [_own(seg, page, segments[i - 1] if i else None, segments[i + 1] if i + 1 < len(segments) else None)
           for i, seg in enumerate(segments)]
    rows = []
    for i, seg in enumerate(segments):
        prev = own[i - 1] if i else None
        nxt = own[i + 1] if i + 1 < len(own) else None
        values = dict(own[i])
        for name in _AROUND:
            values[f"prev_{name}"] = prev[name] if prev else 0.0
            values[f"next_{name}"] = nxt[name] if nxt else 0.0
        values["prev_same_size"] = float(i > 0 and abs(segments[i - 1].size - seg.size) < 0.5)
        values["next_same_size"] = float(i + 1 < len(segments) and abs(segments[i + 1].size - seg.size) < 0.5)
        rows.append(tuple(values[name] for name in FEATURES))
    return rows


@dataclass(frozen=True)
class RoleModel:
    """The shipped model: per role a weight per feature and an intercept, and the probability a line's role
    must pass for a field to be read from it."""

    weights: tuple[tuple[float, ...], ...]  # one row per role, ``ROLES`` order
    intercepts: tuple[float, ...]
    threshold: float

    def probabilities(self, features: tuple[float, ...]) -> dict[str, float]:
        logits = [b + sum(w * x for w, x in zip(row, features, strict=True))
                  for row, b in zip(self.weights, self.intercepts, strict=True)]
        top = max(logits)
        exps = [math.exp(v - top) for v in logits]
        total = sum(exps)
        return {role: e / total for role, e in zip(ROLES, exps, strict=True)}


def model_from(data: dict[str, Any]) -> RoleModel:
    """A model from its JSON; its features and roles must be this module's, in this order."""
    if tuple(data["features"]) != FEATURES or tuple(data["roles"]) != ROLES:
        raise ValueError("the role model's features or roles are not this module's: retrain it "
                         "(benchmarks/train_role_model.py)")
    return RoleModel(tuple(tuple(float(w) for w in row) for row in data["weights"]),
                     tuple(float(b) for b in data["intercepts"]), float(data["threshold"]))


@cache
def shipped_model() -> RoleModel:
    """The model in ``ROLE_MODEL``, read once."""
    return model_from(json.loads(ROLE_MODEL.read_text(encoding="utf-8")))


def line_roles(segments: list[Segment], model: RoleModel | None = None) -> list[dict[str, float]]:
    """Each segment's probability of each role, in the segments' order."""
    model = model or shipped_model()
    return [model.probabilities(row) for row in line_features(segments)]


def _without_head(text: str) -> str:
    """A line's text without the abstract's heading it opens with ('Abstract.', 'Summary:'), if any."""
    return _ABSTRACT_HEAD.sub("", text).lstrip(" .:—–-")


@dataclass(frozen=True)
class Opening:
    """Where the labeller reads an abstract opening: the words of its first line, and the chance of the
    line that passed the threshold."""

    words: str
    chance: float


def abstract_opening(segments: list[Segment], roles: list[dict[str, float]],
                     threshold: float) -> Opening | None:
    """The words the abstract opens with by the labeller: those of the first line in the page's order that
    passes ``threshold``, or of the lines just before it at half the threshold, its heading ('Abstract',
    'Summary') aside; None where no line passes it."""
    passed = next((i for i, role in enumerate(roles) if role["abstract"] >= threshold), None)
    if passed is None:
        return None
    # The lines before it that may be the abstract's too are its opening: an abstract's first line is often
    # set apart (after a heading, a rule, a box's top) and less sure.
    first = passed
    while first > 0 and roles[first - 1]["abstract"] >= threshold / 2:
        first -= 1
    for seg in segments[first:]:
        words = _without_head(seg.text)
        if len(_WORD.findall(words)) >= 3:
            return Opening(words, roles[passed]["abstract"])
    return None


def opening_chance(segments: list[Segment], roles: list[dict[str, float]], abstract: str) -> float | None:
    """The labeller's chance that the line an abstract opens on is an abstract's: the first line, in the
    page's order, whose text (its heading aside) the abstract's opening holds, or that holds the abstract's
    first words; None where no line does (the abstract is read from another page)."""
    head = normalize_text(abstract)[:300]
    for seg, role in zip(segments, roles, strict=True):
        text = normalize_text(_without_head(seg.text))
        if len(text) >= 12 and (text in head or head[:40] in text):
            return role["abstract"]
    return None


# Under this chance that the line the rules' abstract opens on is an abstract's, the labeller's reading
# replaces it: chosen on round 11's first reads (0.05 and 0.1 read the same there, 0.2 one abstract fewer),
# before any unseen article was read with it.
DOUBTED = 0.1
# Where the rules read no abstract, the labeller reads one only this surely: most such documents have none (a
# package's vignette, a manual), and their introduction's lines look like an abstract's.
SURE = 0.8
LEARNED_ABSTRACT = "layout (learned line labeller, p={p:.2f})"  # how an abstract it read was read


def _same_text(found: str, read: str | None) -> bool:
    """The labeller's abstract is the rules' with or without a run-in label ('Purpose:', 'Summary:'): the same
    reading, which the rules' keeps."""
    if not read:
        return False
    return normalize_text(found)[:60] in normalize_text(read)[:200]


def mend_abstract(article: PdfArticle, segments: list[Segment], page: str,
                  model: RoleModel | None = None) -> None:
    """The labeller's abstract (``abstract_opening``, read to its end on ``page`` as the rules read one) where
    the line the rules' opens on is ``DOUBTED``, or where the rules read none and it opens a sentence read
    ``SURE``ly; with how it was read in ``read_by``. Elsewhere, and where the two read the same text (a run-in
    label aside), the rules' abstract stays."""
    model = model or shipped_model()
    roles = line_roles(segments, model)
    opening = abstract_opening(segments, roles, model.threshold)
    found = abstract_opening_with(page, opening.words) if opening else None
    if not found or opening is None or _same_text(found, article.abstract):
        return
    if article.abstract:
        chance = opening_chance(segments, roles, article.abstract)
        if chance is None or chance >= DOUBTED:
            return
    elif not (found[0].isupper() or found[0].isdigit()) or opening.chance < SURE:
        return  # where the rules read none, only an abstract that opens a sentence, read surely
    article.abstract = found
    article.reasons.pop("abstract", None)
    article.read_by["abstract"] = LEARNED_ABSTRACT.format(p=opening.chance)
