"""Verdicts that can fail: a number the analyzer cannot vouch for decides nothing (the Langevin chance test
itself is tested in ``test_langevin_analysis.py``)."""

from __future__ import annotations

from kb.evidence.verdicts import evaluate
from schemas import Claim, EvidenceScale, VerdictKind


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
