"""The depth notes' claims as bound (issue 26): every bundled binding names a metric that exists and a preset (or
says which would settle it and what it costs); constructed evidence for each depth claim, through the real check
builders (``probe_checks``, ``family_result``, ``sweep_checks``), the real result record and the real verdict rule;
the paper's own values beside kb's."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest

from analyzers import registry
from analyzers.base import result_record
from analyzers.depth.compute import family_result, probe_checks
from analyzers.depth.spec import DepthProbe, DepthProbeResult
from analyzers.depth.sweep import sweep_checks
from analyzers.depth.training import TokenScores
from kb.evidence.claim_states import paper_comparisons
from kb.evidence.verdicts import evaluate
from kb.notes.bindings import binding_problems, reason_line, settling
from kb.notes.files import read_note
from schemas import Claim, EvidenceScale, VerdictKind
from tests.helpers.cli import run_kb

PAPERS = Path(__file__).resolve().parents[1] / "papers"
ANALYSIS = "siji-2026-analysis-note-arxiv-2502-00001.md"
CURSE = "siji-2026-curse-of-depth-in-plms.md"
PAPER_SCALE = EvidenceScale(name="paper", parameters=3e9)


def own_scale(claim: Claim) -> EvidenceScale:
    """Evidence at the claim's own size: no proxy (sizes beyond a factor 2 apart are another subject, issue 35)."""
    return EvidenceScale(name="paper", parameters=claim.scale.parameters if claim.scale else None)


def bundled() -> list[tuple[str, Claim]]:
    return [(path.name, claim) for path in sorted(PAPERS.glob("*.md")) for claim in read_note(path).meta.claims]


def claim_of(note: str, claim_id: str) -> Claim:
    return next(c for name, c in bundled() if name == note and c.id == claim_id)


@pytest.mark.parametrize(("note", "claim"), bundled(), ids=lambda x: x if isinstance(x, str) else x.id)
def test_every_bundled_binding_names_a_real_metric_and_preset_or_says_what_would_settle_it(note: str,
                                                                                          claim: Claim) -> None:
    found = settling(claim)
    if claim.analyzer is None:
        assert found.preset is None and "no analyzer" in found.text()
        return
    assert binding_problems(claim) == []
    analyzer = registry.load_all()[claim.analyzer.name]()
    assert claim.analyzer.scale in analyzer.scales
    assert claim.expect is not None
    head = claim.expect.metric.split(".")[0]
    assert head in analyzer.metrics, f"{claim.id}: {claim.expect.metric} is not a declared metric"
    assert found.preset in analyzer.scales
    if not found.runnable_here:  # settled elsewhere: the text says where, why not here and roughly what it costs
        assert found.gpu_hours is not None and f"'{found.preset}'" in found.text() and "GPU-hours" in found.text()
    if claim.scale is not None and (claim.scale.parameters or 0) > 1e8:  # a claim about a large PLM
        proxies = ("smoke", "small", "family_smoke", "plms_smoke")
        assert found.preset not in proxies, f"{claim.id}: a proxy cannot settle it"


def test_a_settled_by_preset_the_analyzer_lacks_is_a_binding_problem() -> None:
    claim = claim_of(ANALYSIS, "stable-rank-retained-45pct").model_copy(deep=True)
    assert claim.analyzer is not None
    claim.analyzer.settled_by = "esm2_99b"
    assert [field for field, _ in binding_problems(claim)] == ["analyzer.settled_by"]



def test_a_claim_bound_without_a_scale_is_settled_by_its_analyzer_not_by_none() -> None:
    # The app's card once said "no analyzer measures this claim" of a claim bound to an analyzer at its defaults.
    claim = claim_of(ANALYSIS, "stable-rank-retained-45pct").model_copy(deep=True)
    assert claim.analyzer is not None
    claim.analyzer.scale = claim.analyzer.settled_by = None
    claim.analyzer.name = "noop"
    found = settling(claim)
    assert found.runnable_here and found.preset is None and not found.proxy
    assert found.text() == "settled by 'noop' at its default parameters, which runs here"
    claim.analyzer = None
    assert settling(claim).text().startswith("no analyzer measures this claim")

def probe_record(values: dict[str, Any], errors: dict[str, float], accuracy: float = 0.5,
                 unigram: float = 0.2) -> dict[str, Any]:
    """A depth.probe evidence dict: the given metrics with their standard errors, the rest unset, through the real
    checks builder and result record."""
    metrics = {name: None for name in DepthProbe.metrics if not name.endswith("_by_model")} | values
    estimates = {name: (value, errors.get(name, math.nan)) for name, value in values.items()}
    estimates["baseline_accuracy"] = (accuracy, 0.01)
    result = DepthProbeResult(**metrics, model="m", num_layers=33, layers={}, scale=PAPER_SCALE,
                              checks=probe_checks(accuracy, unigram, estimates, 40))  # 40 probed sequences
    return result_record(result)


@pytest.mark.parametrize(("claim_id", "value", "error", "accuracy", "kind", "words"), [
    ("stable-rank-retained-45pct", 0.46, 0.01, 0.5, "supported", "meets"),
    ("stable-rank-retained-45pct", 0.90, 0.02, 0.5, "refuted", "fails"),
    ("stable-rank-retained-45pct", 0.53, 0.02, 0.5, "inconclusive", "straddles"),  # [0.49, 0.57] crosses 0.55
    ("attention-entropy-rises-with-depth", 0.05, 0.01, 0.5, "supported", "meets"),
    ("attention-entropy-rises-with-depth", -0.05, 0.01, 0.5, "refuted", "fails"),
    ("attention-entropy-rises-with-depth", 0.01, 0.01, 0.5, "inconclusive", "straddles"),
    ("rank-collapses-with-depth", -0.3, 0.05, 0.5, "supported", "meets"),
    ("rank-collapses-with-depth", 0.1, 0.02, 0.5, "refuted", "fails"),
    ("rank-collapses-with-depth", -0.3, 0.05, 0.2, "inconclusive", "did not learn"),
])
def test_matrix_depth_probe_claims(claim_id: str, value: float, error: float, accuracy: float, kind: str,
                                   words: str) -> None:
    claim = claim_of(ANALYSIS, claim_id)
    assert claim.expect is not None
    record = probe_record({claim.expect.metric: value}, {claim.expect.metric: error}, accuracy)
    verdict = evaluate(claim, [record], own_scale(claim))
    assert verdict.kind.value == kind and words in verdict.reason, verdict.reason


def six_plms(values: list[dict[str, float]], errors: float = 0.02, learned: list[bool] | None = None,
             scale: EvidenceScale = PAPER_SCALE) -> dict[str, Any]:
    """A family record over one checkpoint per member (``values``: its metrics, each with ``errors``), through
    the real ``probe_checks`` and ``family_result``."""
    members = []
    for index, own in enumerate(values):
        own = {"late_to_early_skip_effect_ratio": 0.5, **own}
        ok = learned is None or learned[index]
        record = probe_record(own, {k: (math.nan if math.isnan(v) else errors) for k, v in own.items()},
                              0.5 if ok else 0.2)
        members.append(DepthProbeResult.model_validate({**record, "model": f"plm{index}", "scale": scale}))
    return result_record(family_result(members))


SHARES = [0.80, 0.75, 0.85, 0.70, 0.78, 0.82]
DEPENDENCE = [0.6, 0.7, 0.5, 0.65, 0.55, 0.6]


@pytest.mark.parametrize(("claim_id", "metric", "values", "error", "learned", "kind", "words"), [
    ("late-layers-refine", "late_half_kl_drop_fraction", SHARES, 0.02, None, "supported", "meets"),
    # one model of six whose late half makes only a fifth of the KL drop: "in PLMs" does not hold
    ("late-layers-refine", "late_half_kl_drop_fraction", [*SHARES[:5], 0.20], 0.02, None, "refuted", "fails"),
    ("late-layers-refine", "late_half_kl_drop_fraction", [0.62] * 6, 0.05, None, "inconclusive", "straddles"),
    ("late-layers-refine", "late_half_kl_drop_fraction", SHARES, 0.02, [True] * 5 + [False], "inconclusive",
     "did not learn"),
    # a member with no standard error is named, never left out of the bound
    ("late-layers-refine", "late_half_kl_drop_fraction", SHARES, math.nan, None, "inconclusive",
     "member left out"),
    ("late-layers-depend-less", "late_to_early_dependence_ratio", DEPENDENCE, 0.03, None, "supported", "meets"),
    ("late-layers-depend-less", "late_to_early_dependence_ratio", [*DEPENDENCE[:5], 1.6], 0.03, None, "refuted",
     "fails"),
    ("late-layers-depend-less", "late_to_early_dependence_ratio", [*DEPENDENCE[:5], 0.97], 0.03, None,
     "inconclusive", "straddles"),
])
def test_matrix_late_layer_claims_hold_in_every_plm(claim_id: str, metric: str, values: list[float], error: float,
                                                    learned: list[bool] | None, kind: str, words: str) -> None:
    claim = claim_of(CURSE, claim_id)
    record = six_plms([{metric: v} for v in values], error, learned)
    verdict = evaluate(claim, [record], own_scale(claim))
    assert verdict.kind.value == kind and words in verdict.reason, verdict.reason


def test_a_family_member_without_the_metric_fails_the_bound_naming_it() -> None:
    claim = claim_of(CURSE, "late-layers-depend-less")
    values = [{"late_to_early_dependence_ratio": v} for v in DEPENDENCE[:5]] + [{}]
    verdict = evaluate(claim, [six_plms(values, 0.03)], own_scale(claim))
    assert verdict.kind is VerdictKind.inconclusive and "plm5: no late_to_early_dependence_ratio" in verdict.reason


def test_matrix_a_depth_probe_claim_at_its_smoke_proxy_never_settles() -> None:
    claim = claim_of(CURSE, "late-layers-refine")
    smoke = EvidenceScale(name="plms_smoke", parameters=2e5)
    verdict = evaluate(claim, [six_plms([{"late_half_kl_drop_fraction": v} for v in SHARES[:3]], 0.01, scale=smoke)],
                       smoke)
    assert verdict.proxy and verdict.kind is VerdictKind.inconclusive
    line = reason_line(claim, verdict.reason, "consistent_proxy")
    assert "settled only at 'six_plms'" in line and "GPU-hours" in line and "\n" not in line


def family(ratios: list[float], learned: list[bool], error: float = 0.01) -> dict[str, Any]:
    results = []
    for index, (ratio, ok) in enumerate(zip(ratios, learned, strict=True)):
        values = {"late_to_early_skip_effect_ratio": ratio, "late_half_kl_drop_fraction": 0.6}
        record = probe_record(values, dict.fromkeys(values, error), 0.5 if ok else 0.2)
        results.append(DepthProbeResult.model_validate({**record, "num_layers": [6, 12, 30, 33, 36][index],
                                                        "model": f"m{index}"}))
    return result_record(family_result(results))


@pytest.mark.parametrize(("ratios", "learned", "error", "kind", "words"), [
    ([0.6, 0.45, 0.3, 0.28, 0.25], [True] * 5, 0.01, "supported", "meets"),  # later layers matter less and less
    ([0.25, 0.3, 0.4, 0.42, 0.45], [True] * 5, 0.01, "refuted", "fails"),
    ([0.4, 0.45, 0.35, 0.42, 0.38], [True] * 5, 0.05, "inconclusive", "straddles"),  # no trend beyond noise
    ([0.6, 0.45, 0.3, 0.28, 0.25], [True, True, False, True, True], 0.01, "inconclusive", "did not learn"),
])
def test_matrix_effect_grows_with_depth_over_a_family(ratios: list[float], learned: list[bool], error: float,
                                                       kind: str, words: str) -> None:
    claim = claim_of(CURSE, "effect-grows-with-depth")
    verdict = evaluate(claim, [family(ratios, learned, error)], own_scale(claim))
    assert verdict.kind.value == kind and words in verdict.reason, verdict.reason


def sweep_record(perplexities: list[float], converged: list[bool], spread: float = 0.02) -> dict[str, Any]:
    """A depth-sweep evidence dict at 6..48 layers over 40 validation sequences, with the real ``sweep_checks``."""
    depths = [6, 12, 24, 36, 48][: len(perplexities)]
    def wobble(depth: int) -> list[float]:  # per-sequence noise, different for each depth
        return [((i * 7 + depth * 3) % 5 - 2) * spread for i in range(40)]

    scores = [TokenScores([10 * (math.log(p) + w) for w in wobble(k)], [6] * 40, [10] * 40)
              for k, p in enumerate(perplexities)]
    rows = [{"depth": d, "converged": ok, "convergence": "flat" if ok else "validation loss still falling",
             "val_perplexity": math.exp(s.loss)} for d, ok, s in zip(depths, converged, scores, strict=True)]
    found = sweep_checks(depths, rows, scores, 0.1, [None] * len(depths))
    from analyzers.depth.sweep import deepest_rise, fall_and_rise
    parts = fall_and_rise(scores)
    return {"depths": depths, "val_perplexity_by_depth": [r["val_perplexity"] for r in rows],
            "deepest_perplexity_rise": deepest_rise(scores)[0],
            "perplexity_fall_and_rise": None if parts is None else min(parts[0], parts[2]),
            "checks": {k: v.model_dump() for k, v in found.items()}}


@pytest.mark.parametrize(("perplexities", "converged", "kind", "words"), [
    ([12.3, 9.8, 8.5, 8.2, 8.7], [True] * 5, "supported", "meets"),  # the note's own table
    # an interior best depth (24) whose deepest model does not rise again: the old binding read supported
    ([12.3, 9.8, 8.2, 8.6, 8.3], [True] * 5, "refuted", "fails"),
    ([12.3, 9.8, 8.5, 8.2, 8.7], [True, True, True, True, False], "inconclusive", "not trained to convergence"),
    ([12.3, 9.8, 8.5, 8.2, 8.21], [True] * 5, "inconclusive", "straddles"),  # a rise within noise
    # perplexity rising at every depth: the last step rises, but nothing fell (the sign of the last step alone
    # read supported)
    ([8.0, 8.2, 8.4, 8.6, 8.7], [True] * 5, "refuted", "fails"),
    ([8.3, 9.8, 8.5, 8.2, 8.7], [True] * 5, "inconclusive", "straddles"),  # a fall within noise
    ([12.3, 8.2], [True] * 2, "inconclusive", "three depths"),  # no next deepest between the two
])
def test_matrix_perplexity_rises_at_48(perplexities: list[float], converged: list[bool], kind: str,
                                       words: str) -> None:
    claim = claim_of(ANALYSIS, "perplexity-rises-at-48")
    verdict = evaluate(claim, [sweep_record(perplexities, converged)], EvidenceScale(name="paper", parameters=6.5e8))
    assert verdict.kind.value == kind and words in verdict.reason, verdict.reason


def test_paper_values_sit_beside_kbs_value_and_interval_across_seeds() -> None:
    claim = claim_of(ANALYSIS, "perplexity-rises-at-48")
    seeds = [sweep_record([12.3, 9.8, 8.5, 8.2, 8.7 + shift], [True] * 5) for shift in (0.0, 0.1, -0.1)]
    first, rise, table = paper_comparisons(claim, seeds)
    assert first.metric == "perplexity_fall_and_rise" and first.paper.value == 0.5
    assert first.kb is not None and first.kb.seeds == 3
    assert first.kb.mean == pytest.approx(sum(s["perplexity_fall_and_rise"] for s in seeds) / 3)
    assert rise.metric == "deepest_perplexity_rise" and rise.kb is not None
    assert rise.kb.mean == pytest.approx(first.kb.mean)  # the rise (0.5) is the smaller part here
    assert first.kb.low is not None and first.kb.high is not None and first.kb.low < first.kb.mean < first.kb.high
    assert "paper 0.5" in first.text() and "over 3 seeds" in first.text() and "[" in first.text()
    assert table.metric == "val_perplexity_by_depth" and table.paper.value == [12.3, 9.8, 8.5, 8.2, 8.7]
    assert "no value" in table.text()  # a whole list has no single interval: said, not invented
    assert "not run yet" in paper_comparisons(claim, None)[0].text()
    langevin = claim_of("sampling-intermediate-temperatures-langevin.md", "generalization-min-intermediate-t")
    assert [c.metric for c in paper_comparisons(langevin, None)] == ["best_test_error_minus_es"]


def test_kb_evidence_says_where_a_claim_is_settled_and_the_papers_values(kb_dirs: tuple[Path, Path]) -> None:
    done = run_kb(*kb_dirs, "evidence", "siji-2026-analysis-note-arxiv-2502-00001#perplexity-rises-at-48")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "settled: settled only at 'paper'" in text
    # one figure for the cost, the estimate's (not a rounder 500 beside it)
    assert "about 475 GPU-hours" in text and "500 GPU-hours" not in text
    assert "paper vs kb: perplexity_fall_and_rise: paper 0.5" in text and "kb: not run yet" in text


def _thresholds(value: Any) -> list[float]:
    """The numbers a binding's ``expect.value`` compares with (a range gives two; a boolean none)."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    return [x for part in value for x in _thresholds(part)] if isinstance(value, list) else []


#: Words that state a number without digits: "mainly" and "most" say more than half.
_QUANTIFIERS = {0.5: ("mainly", "mostly", "most ", "majority", "more than half")}


def _said(number: float, statement: str) -> bool:
    """Whether the sentence states ``number``: as written (12, 0.45), as a percentage (45%) or as a quantifier."""
    written = {f"{number:g}", f"{number * 100:g}%", f"{number * 100:g} %"}
    if any(word in statement.lower() for word in _QUANTIFIERS.get(number, ())):
        return True
    return any(re.search(rf"(?<![\d.]){re.escape(form)}(?![\d])", statement) for form in written)


@pytest.mark.parametrize(("note", "claim"), [(n, c) for n, c in bundled() if c.expect is not None],
                         ids=lambda x: x if isinstance(x, str) else x.id)
def test_every_bundled_threshold_is_one_its_sentence_states(note: str, claim: Claim) -> None:
    # A binding tests its sentence: a threshold the statement never states (24 where it says 12) would settle a
    # claim nobody made. 0 and 1 are the neutral points of a difference and a ratio ("rises", "higher than").
    assert claim.expect is not None
    unsaid = [x for x in _thresholds(claim.expect.value) if x not in (0.0, 1.0) and not _said(x, claim.statement)]
    assert unsaid == [], f"{note} {claim.id}: thresholds {unsaid} are not in {claim.statement!r}"
