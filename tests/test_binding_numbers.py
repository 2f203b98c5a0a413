"""Every number a bundled claim's sentence states (layers, sizes, values, percentages) is carried by what tests it
(issue 35, bindings that test their sentences): its expectation, its ``paper_values``, its scale or the parameters of
the preset that settles it. A number about another subject (the NLP models a PLM claim is compared with) is named
here with why, so that a new sentence number no binding carries fails this test."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from analyzers import registry
from kb.notes.files import read_note
from schemas import Claim

PAPERS = Path(__file__).resolve().parents[1] / "papers"
_NUMBER = re.compile(r"(?<![\w.])(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>%|[MB]\b|层|-?layers?\b|-block\b)?")

#: Numbers a sentence states about something other than the claim's subject, which no PLM run measures.
OTHER_SUBJECT = {
    ("optimal-depth-24-36", 12.0): "GPT-style NLP models' optimal depth (12-24), the comparison, not the PLM's",
    ("optimal-depth-24-36", 24.0): "also the PLM's lower bound, carried by expect [24, 36]",
    ("stable-rank-retained-45pct", 0.15): "an NLP transformer's retention, the comparison, not the PLM's",
}


#: A preset's fields that say what it runs (not how: a head size of 64 is no claim's number).
SUBJECT_FIELDS = {"depths", "parameter_budget", "model", "models", "structure", "pdb_id"}


def bundled_bound() -> list[Claim]:
    return [claim for path in sorted(PAPERS.glob("*.md")) for claim in read_note(path).meta.claims
            if claim.analyzer is not None]


def stated(statement: str) -> list[float]:
    """The numbers a sentence states, in the units a binding uses: 45 % as 0.45, 650M as 6.5e8."""
    numbers = []
    for match in _NUMBER.finditer(statement):
        value, unit = float(match.group("num")), match.group("unit") or ""
        numbers.append(value / 100 if unit == "%" else value * 1e6 if unit == "M" else
                       value * 1e9 if unit == "B" else value)
    return numbers


def carried(claim: Claim) -> set[float]:
    """Every number the claim's binding carries: expectation, paper values, scale, the settling preset's and the
    binding's own parameters (numbers inside text fields too: '36-layer PLM')."""
    assert claim.analyzer is not None
    analyzer = registry.load_all()[claim.analyzer.name]
    preset = analyzer.scales.get(claim.analyzer.settled_by or claim.analyzer.scale or "", {})
    preset = {key: value for key, value in preset.items() if key in SUBJECT_FIELDS}
    parts: list[Any] = [claim.expect.model_dump(mode="json") if claim.expect else None,
                        [p.model_dump(mode="json") for p in claim.paper_values or []],
                        claim.scale.model_dump(mode="json") if claim.scale else None,
                        claim.analyzer.params, preset]
    text = json.dumps(parts, default=str)
    return {float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?", text)}


@pytest.mark.parametrize("claim", bundled_bound(), ids=lambda c: c.id)
def test_every_number_of_a_bundled_claims_sentence_is_carried_by_its_binding(claim: Claim) -> None:
    have = carried(claim)
    missing = [x for x in stated(claim.statement)
               if (claim.id, x) not in OTHER_SUBJECT and not any(abs(x - y) <= 1e-9 * max(1.0, abs(x)) for y in have)]
    assert missing == [], f"{claim.id}: {missing} stated in {claim.statement!r} but carried by no binding field"


def test_a_sentence_number_no_binding_carries_is_caught() -> None:
    claim = next(c for c in bundled_bound() if c.id == "perplexity-rises-at-48")
    assert 8.7 in stated(claim.statement) and 8.7 in carried(claim)
    changed = claim.model_copy(update={"statement": claim.statement.replace("8.7 at 48", "9.1 at 64")})
    assert {9.1, 64.0} <= set(stated(changed.statement)) and not {9.1, 64.0} & carried(changed)
    assert 64.0 in stated("at 64 layers") and 0.45 in stated("45 %") and 6.5e8 in stated("650M")
