"""A hand-labelled evaluation set for claim drafting, and the precision and recall of a drafter on it.

The set (``eval_data/labels.yaml``) holds real passages from the project's seed documents (a full paper
text as extracted from a PDF, an abstract page, an analysis note with Markdown tables, reader comments)
and passages written in the style of PLM papers. Each passage lists the claims a careful reader would
draft, labelled before any drafter was run on it (see the file's header for what counts as a claim).

Matching rule: a drafted claim matches a labelled claim when its quote points at the same place and
states the same number:

1. Same place. Quotes are compared after ``kb.notes.grounding.normalize_text`` (case, Unicode, dashes,
   whitespace). For a labelled table row, the drafted quote's cells (split on ``|``) must be a
   contiguous run of the row's cells, so a longer row that merely starts the same way does not match.
   For a labelled sentence, the drafted quote must lie inside it, or contain it while being at most
   twice as long (two sentences glued together still match, a paragraph does not). A label may list
   other passages stating the same claim (``also``); matching any of them is enough.
2. Same number. When the label lists numbers, the drafted quote must contain at least one of them
   (digits with optional thousands separators, or the number words one to twenty).
3. One to one. Drafted and labelled claims are paired by a maximum bipartite matching, so one
   drafted claim never counts for two labels, nor two drafted claims for one label.

Precision is matched drafted claims over drafted claims; recall is matched labels over labels, also
reported over the quantitative labels only (a number-driven drafter cannot be expected to find the
qualitative ones, but it should find those).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import yaml

from kb.agents.drafter import DraftClaim, draft
from kb.notes.grounding import normalize_text

DATA_DIR = Path(__file__).resolve().parent / "eval_data"
LABELS = DATA_DIR / "labels.yaml"
L = TypeVar("L")

_NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?")
_WORDS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
]
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_WORDS) + r")\b")


@dataclass(frozen=True)
class LabelledClaim:
    """A claim a careful reader would draft: where it is stated and the numbers it states."""

    kind: str
    quote: str
    also: tuple[str, ...] = ()
    numbers: tuple[float, ...] = ()

    @property
    def quotes(self) -> tuple[str, ...]:
        """Every passage stating this claim."""
        return (self.quote, *self.also)


@dataclass(frozen=True)
class Passage:
    """A text to draft claims from, where it comes from, and its labelled claims."""

    name: str
    source: str
    text: str
    claims: tuple[LabelledClaim, ...]
    held_out: bool = False  # labelled after the drafter was last tuned, and not tuned on since


@dataclass
class Score:
    """Counts behind precision and recall on one passage (or summed over several)."""

    drafted: int = 0
    labels: int = 0
    quantitative_labels: int = 0
    matched: int = 0
    matched_quantitative: int = 0
    unmatched_drafted: list[str] = field(default_factory=list)
    missed_labels: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        """Matched drafted claims over drafted claims (1.0 when nothing was drafted)."""
        return self.matched / self.drafted if self.drafted else 1.0

    @property
    def recall(self) -> float:
        """Matched labels over labels (1.0 when there is nothing to find)."""
        return self.matched / self.labels if self.labels else 1.0

    @property
    def recall_quantitative(self) -> float:
        """Matched quantitative labels over quantitative labels."""
        return self.matched_quantitative / self.quantitative_labels if self.quantitative_labels else 1.0

    def __iadd__(self, other: Score) -> Score:
        self.drafted += other.drafted
        self.labels += other.labels
        self.quantitative_labels += other.quantitative_labels
        self.matched += other.matched
        self.matched_quantitative += other.matched_quantitative
        self.unmatched_drafted += other.unmatched_drafted
        self.missed_labels += other.missed_labels
        return self


def load_eval_set(path: Path = LABELS) -> list[Passage]:
    """The labelled passages (texts from ``file:`` are read relative to the labels file)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    passages = []
    for entry in data["passages"]:
        text = entry.get("text")
        if text is None:
            text = (path.parent / entry["file"]).read_text(encoding="utf-8")
        claims = tuple(LabelledClaim(kind=c["kind"], quote=c["quote"], also=tuple(c.get("also", ())),
                                     numbers=tuple(float(n) for n in c.get("numbers", ())))
                       for c in entry["claims"])
        passages.append(Passage(name=entry["name"], source=entry["source"], text=text, claims=claims,
                                held_out=bool(entry.get("held_out", False))))
    return passages


def numbers_in(text: str) -> set[float]:
    """The numbers a text states: digits (thousands separators allowed) and the words zero to twenty."""
    found = {float(m.group().replace(",", "")) for m in _NUMBER.finditer(text)}
    return found | {float(_WORDS.index(m.group(1))) for m in _NUMBER_WORD.finditer(text.lower())}


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|") if cell.strip()]


def _same_place(drafted: str, label: str) -> bool:
    drafted, label = normalize_text(drafted), normalize_text(label)
    if not drafted:
        return False
    if label.startswith("|"):
        row, part = _cells(label), _cells(drafted)
        return bool(part) and any(row[i:i + len(part)] == part for i in range(len(row) - len(part) + 1))
    return drafted in label or (label in drafted and len(drafted) <= 2 * len(label))


def quote_matches(drafted_quote: str, label: LabelledClaim) -> bool:
    """Whether a drafted quote matches a labelled claim (rules 1 and 2 of the module docstring)."""
    if label.numbers and not numbers_in(drafted_quote) & set(label.numbers):
        return False
    return any(_same_place(drafted_quote, quote) for quote in label.quotes)


def match(drafted: list[str], labels: tuple[LabelledClaim, ...]) -> dict[int, int]:
    """Maximum one-to-one pairing of drafted quotes with labels: {label index: drafted index}."""
    return pair(drafted, labels, quote_matches)


def pair(drafted: list[str], labels: Sequence[L], matches: Callable[[str, L], bool]) -> dict[int, int]:
    """Maximum one-to-one pairing of drafted quotes with labels under ``matches(quote, label)`` (rule 3 of the
    module docstring, for any rule of what may stand for a label): {label index: drafted index}."""
    edges = [[d for d, quote in enumerate(drafted) if matches(quote, label)] for label in labels]
    owner: dict[int, int] = {}  # drafted index -> label index

    def augment(label: int, seen: set[int]) -> bool:
        for d in edges[label]:
            if d not in seen:
                seen.add(d)
                if d not in owner or augment(owner[d], seen):
                    owner[d] = label
                    return True
        return False

    for label in range(len(labels)):
        augment(label, set())
    return {label: d for d, label in owner.items()}


def score_passage(passage: Passage, drafter: Callable[[str], list[DraftClaim]]) -> Score:
    """Precision/recall counts of one drafter on one passage."""
    quotes = [claim.quote for claim in drafter(passage.text)]
    pairs = match(quotes, passage.claims)
    matched_drafted = set(pairs.values())
    return Score(
        drafted=len(quotes), labels=len(passage.claims),
        quantitative_labels=sum(c.kind == "quantitative" for c in passage.claims),
        matched=len(pairs), matched_quantitative=sum(passage.claims[i].kind == "quantitative" for i in pairs),
        unmatched_drafted=[q for d, q in enumerate(quotes) if d not in matched_drafted],
        missed_labels=[c.quote for i, c in enumerate(passage.claims) if i not in pairs],
    )


def total(scores: Iterable[Score]) -> Score:
    """Counts summed over passages (micro average)."""
    summed = Score()
    for score in scores:
        summed += score
    return summed


def evaluate(passages: list[Passage] | None = None,
             drafter: Callable[[str], list[DraftClaim]] | None = None) -> dict[str, Score]:
    """Scores per passage; default drafter: ``draft`` without a model (the fallback), no analyzers."""
    passages = passages if passages is not None else load_eval_set()
    drafter = drafter or (lambda text: draft(text, analyzers={}).claims)
    return {p.name: score_passage(p, drafter) for p in passages}
