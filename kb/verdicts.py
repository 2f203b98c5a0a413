"""Turn an analyzer result into a verdict on a claim: supported, refuted or inconclusive, and why.

The claim's expectation names a metric by dotted path (``layers.3.kl``) into the result JSON and an
operator. Repeated seeds give several results: the verdict is taken on their mean, and it is
inconclusive when the seed spread straddles the threshold. Evidence made at a smaller scale than the
claim's is a proxy: it is reported (consistent or at odds) but never settles the claim either way.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from schemas import Claim, EvidenceScale, Expectation, Operator, Verdict, VerdictKind


class MetricMissing(KeyError):
    """The expectation names a metric the result does not have."""


def resolve_metric(result: dict[str, Any], path: str) -> Any:
    """Value at a dotted path in a result (``a.b.0.c``); list indices are integers."""
    node: Any = result
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
            node = node[int(part)]
        else:
            keys = ", ".join(sorted(node)) if isinstance(node, dict) else type(node).__name__
            raise MetricMissing(f"metric path {path!r}: no {part!r} here (available: {keys})")
    return node


def describe(expect: Expectation) -> str:
    """The expectation written out, e.g. 'best_depth in [24, 36]'."""
    if expect.op is Operator.between:
        return f"{expect.metric} in {expect.value}"
    if expect.op is Operator.approx:
        tol = f"±{expect.tolerance}" if expect.tolerance is not None else f"±{expect.rel_tolerance:.0%}"
        return f"{expect.metric} ≈ {expect.value} {tol}"
    return f"{expect.metric} {expect.op.value} {expect.value}"


def _bounds(expect: Expectation) -> tuple[float, float]:
    """The expectation's threshold(s) as numbers: (low, high) for 'between', else (value, value)."""
    if isinstance(expect.value, list):
        return float(expect.value[0]), float(expect.value[1])
    if isinstance(expect.value, str):
        raise ValueError(f"threshold {expect.value!r} of {expect.metric!r} is not a number")
    return float(expect.value), float(expect.value)


def _margin(expect: Expectation, x: float) -> float:
    """Signed distance from the decision boundary: > 0 inside (supported), < 0 outside."""
    low, high = _bounds(expect)
    if expect.op is Operator.between:
        return min(x - low, high - x)
    if expect.op is Operator.approx:
        tol = expect.tolerance if expect.tolerance is not None else (expect.rel_tolerance or 0.0) * abs(low)
        return tol - abs(x - low)
    if expect.op in (Operator.lt, Operator.le):
        return low - x
    if expect.op in (Operator.gt, Operator.ge):
        return x - low
    return -abs(x - low)


def _holds(expect: Expectation, x: float) -> bool:
    low, _ = _bounds(expect)
    if expect.op is Operator.lt:
        return x < low
    if expect.op is Operator.gt:
        return x > low
    if expect.op is Operator.eq:
        return x == low
    return _margin(expect, x) >= 0


def evaluate(
    claim: Claim,
    results: list[dict[str, Any]],
    evidence_scale: EvidenceScale | None = None,
) -> Verdict:
    """Verdict of one claim given one result per seed (at least one)."""
    claim_scale = claim.scale.model_dump(exclude_none=True) if claim.scale else None
    common: dict[str, Any] = {"evidence_scale": evidence_scale, "claim_scale": claim_scale}
    expect = claim.expect
    if expect is None:
        return Verdict(kind=VerdictKind.inconclusive, reason="the claim states no expectation to test", **common)
    common["expected"] = describe(expect)
    try:
        values = [resolve_metric(r, expect.metric) for r in results]
    except MetricMissing as exc:
        return Verdict(kind=VerdictKind.error, reason=str(exc.args[0]), **common)
    proxy = _is_proxy(claim, evidence_scale)
    common["proxy"] = proxy
    # A number the analyzer itself could not vouch for (precision below chance, a sampler not at its
    # temperature, a model not trained to convergence) decides nothing, whichever side of the threshold.
    for result in results:
        for metric, why in (result.get("untestable") or {}).items():
            if expect.metric == metric or expect.metric.startswith(f"{metric}."):
                return Verdict(kind=VerdictKind.inconclusive, reason=f"{expect.metric}: {why}", **common)

    if all(isinstance(v, bool | str) for v in values):
        agree = [v == expect.value for v in values]
        observed = values[0] if len(set(map(str, values))) == 1 else values
        if all(agree):
            kind, reason = VerdictKind.supported, f"{expect.metric} = {observed!r} as expected"
        elif not any(agree):
            kind, reason = VerdictKind.refuted, f"{expect.metric} = {observed!r}, expected {expect.value!r}"
        else:
            kind, reason = VerdictKind.inconclusive, f"seeds disagree: {values!r}"
        return _scaled(Verdict(kind=kind, reason=reason, observed=observed, **common))

    try:
        numbers = [float(v) for v in values]
    except (TypeError, ValueError):
        return Verdict(kind=VerdictKind.error, reason=f"{expect.metric} is not a number: {values[0]!r}", **common)
    if any(math.isnan(x) for x in numbers):
        return Verdict(kind=VerdictKind.inconclusive, reason=f"{expect.metric} is NaN", **common)
    mean = statistics.fmean(numbers)
    spread = statistics.stdev(numbers) if len(numbers) > 1 else 0.0
    margin = _margin(expect, mean)
    band = max(expect.inconclusive_band, spread)
    seeds = f" (mean of {len(numbers)} seeds, sd {spread:.3g})" if len(numbers) > 1 else ""
    if abs(margin) <= band and band > 0:
        kind = VerdictKind.inconclusive
        reason = f"{expect.metric} = {mean:.4g}{seeds} is within {band:.3g} of the boundary of '{describe(expect)}'"
    elif _holds(expect, mean):
        kind, reason = VerdictKind.supported, f"{expect.metric} = {mean:.4g}{seeds} meets '{describe(expect)}'"
    else:
        kind, reason = VerdictKind.refuted, f"{expect.metric} = {mean:.4g}{seeds} fails '{describe(expect)}'"
    return _scaled(Verdict(kind=kind, reason=reason, observed=mean, spread=spread or None, **common))


def _is_proxy(claim: Claim, evidence_scale: EvidenceScale | None) -> bool:
    """True when the claim is about larger models than the evidence used (or the evidence size is unknown)."""
    wanted = claim.scale.parameters if claim.scale else None
    if wanted is None:
        return False
    have = evidence_scale.parameters if evidence_scale else None
    return have is None or have < 0.5 * wanted


def _scaled(verdict: Verdict) -> Verdict:
    """A proxy decides nothing about the claim's own setting: supported/refuted become inconclusive, with why."""
    if verdict.proxy and verdict.kind in (VerdictKind.supported, VerdictKind.refuted):
        have = verdict.evidence_scale.parameters if verdict.evidence_scale else None
        wanted = (verdict.claim_scale or {}).get("parameters")
        size = f"{have:.3g} parameters" if have else "an unknown size"
        consistent = verdict.kind is VerdictKind.supported
        outcome = "consistent with" if consistent else "at odds with"
        return verdict.model_copy(update={
            "kind": VerdictKind.inconclusive, "proxy_outcome": "consistent" if consistent else "at_odds",
            "reason": f"{verdict.reason}; {outcome} the claim, but at {size} versus {wanted:.3g} in the claim: "
                      "a small-scale proxy, not a replication",
        })
    return verdict


def proxy_outcome(verdict: Verdict) -> str | None:
    """'consistent' or 'at_odds' for a proxy that would have supported or refuted its claim, else None.

    Verdicts stored before ``proxy_outcome`` existed say it only in their reason, which ``_scaled``
    above wrote: read it there, so old evidence reads the same as new.
    """
    if not verdict.proxy or verdict.kind is not VerdictKind.inconclusive:
        return None
    if verdict.proxy_outcome is not None:
        return verdict.proxy_outcome
    for outcome, words in (("consistent", "; consistent with the claim, but at "),
                           ("at_odds", "; at odds with the claim, but at ")):
        if words in verdict.reason:
            return outcome
    return None
