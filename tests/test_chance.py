"""Verdicts that can fail: a precision must beat chance, and a number the analyzer cannot vouch for
decides nothing."""

from __future__ import annotations

import itertools

import numpy as np

from analyzers.langevin.analysis import chance_p_value, contact_chance, tolerance_precision
from kb.verdicts import evaluate
from schemas import Claim, EvidenceScale, VerdictKind


def test_chance_p_value_is_the_exact_hypergeometric_tail() -> None:
    pairs, positives, top = 9, 3, 4
    for hits in range(0, 4):
        draws = list(itertools.combinations(range(pairs), top))  # positives are items 0, 1, 2
        expected = sum(sum(i < positives for i in draw) >= hits for draw in draws) / len(draws)
        assert abs(chance_p_value(hits, top, positives, pairs) - expected) < 1e-12


def _contact_map(length: int, rng: np.random.Generator) -> np.ndarray:
    contacts = np.zeros((length, length), dtype=bool)
    for _ in range(length):
        i, j = sorted(rng.choice(length, 2, replace=False))
        if j - i > 6:
            contacts[i, j] = contacts[j, i] = True
    return contacts


def test_the_chance_test_rejects_random_attention_and_accepts_a_planted_one() -> None:
    rng = np.random.default_rng(0)
    length = 60
    contacts = _contact_map(length, rng)
    near, eligible = contact_chance(contacts, 6, 1)

    def p_value(attention: np.ndarray) -> float:
        precision = tolerance_precision(attention, contacts, 6, 1)
        return chance_p_value(round(precision * length), length, near, eligible)

    random_p = [p_value(rng.random((length, length))) for _ in range(20)]
    assert sum(p < 0.05 for p in random_p) <= 3  # about 5 % false alarms, as a test at 0.05 should give
    planted = contacts.astype(float) + 0.1 * rng.random((length, length))
    assert p_value(planted) < 1e-6


def test_an_untestable_metric_makes_the_verdict_inconclusive_with_the_reason() -> None:
    claim = Claim.model_validate({"id": "c", "statement": "s", "analyzer": {"name": "noop"},
                                  "expect": {"metric": "ratio", "op": ">=", "value": 1.0}})
    result = {"ratio": 3.0, "untestable": {"ratio": "precision does not beat chance (p = 0.4)"}}
    verdict = evaluate(claim, [result], EvidenceScale(name="smoke"))
    assert verdict.kind is VerdictKind.inconclusive and "does not beat chance" in verdict.reason
    assert evaluate(claim, [{"ratio": 3.0}], EvidenceScale(name="smoke")).kind is VerdictKind.supported
    nested = Claim.model_validate({"id": "c", "statement": "s", "analyzer": {"name": "noop"},
                                   "expect": {"metric": "layers.3.kl", "op": "<", "value": 1.0}})
    assert evaluate(nested, [{"layers": {"3": {"kl": 0.1}}, "untestable": {"layers": "not converged"}}],
                    EvidenceScale(name="smoke")).kind is VerdictKind.inconclusive
