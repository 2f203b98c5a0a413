"""Turn an analyzer result into a verdict on a claim: supported, refuted or inconclusive, and why.

The one rule, for every metric of every analyzer: a claim is decided only when

(a) every precondition its metric rests on passed: those the result's ``checks`` state for the metric's path,
    for every prefix of it (``peak_temperature`` for ``peak_temperature.transformer``), and for every metric
    it was ``derived_from``, transitively (learned beyond the baseline, equilibrated, converged, beats chance,
    a value at all); and
(b) the value's interval lies entirely on one side of the claim's own threshold (for ``between`` and
    ``approx``: entirely inside or entirely outside). From a standard error the interval is value +- q SE with
    q the t quantile (``analyzers.base.interval_quantile``, 95 %) for the units the error rests on (the
    check's ``units`` of its ``source``: sequences, snapshots, pairs; ``dof`` where not units - 1); an error
    over fewer than ``MIN_UNITS`` units, or that states no count, resolves nothing. An analyzer may state the
    interval itself; a value with no uncertainty has none only where it is ``exact`` by construction, else it
    decides nothing. The claim's ``inconclusive_band`` widens the interval.

Otherwise the verdict is inconclusive, and its reason says which precondition failed and by how much, or that
the interval [lo, hi] straddles the threshold. Repeated seeds give several results (``combine_seeds``): the
verdict is taken on their mean, with the interval mean +- t(n - 1) SE, SE the larger of the between-seed
standard error of the mean (sd / sqrt(n)) and the pooled within-seed one (sqrt(sum SE_i^2) / n), so neither
the seeds' spread nor each seed's own noise is left out; fewer than ``MIN_UNITS`` seeds resolve nothing. A
true/false metric over seeds is decided only when every seed resolved it and all agree. Evidence stored before
``checks`` existed is read as the rule then read it: each value as a point, its ``untestable`` entries as
failed preconditions. Evidence made at a smaller scale than the claim's is a proxy: it is reported (consistent
or at odds) but never settles the claim either way.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from analyzers.base import CONFIDENCE, MIN_UNITS, interval_quantile, stderr_interval, too_few_units
from kb.evidence.subjects import About, about, subject_difference
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


@dataclass
class MetricStatus:
    """One result's value at a metric path, its interval, and why it cannot be used (empty: it can)."""

    value: Any
    low: float = math.nan
    high: float = math.nan
    failed: list[str] = field(default_factory=list)
    note: str = ""
    exact: bool = False
    units: int | None = None  # how many units of ``source`` the interval rests on (None: not stated)
    source: str = ""
    quantile: float = math.nan  # standard errors per half-width (t quantile; normal for a stated interval)
    dof: int | None = None  # the t quantile's degrees of freedom (None: a stated interval)

    def standard_errors(self, number: float) -> tuple[float, float]:
        """``(below, above)``: the interval's half-widths in standard errors of this value (0 for a point)."""
        if self.low == self.high:
            return 0.0, 0.0
        return (number - self.low) / self.quantile, (self.high - number) / self.quantile

    def units_text(self) -> str:
        """'over 40 sequences' (empty where the count is not stated)."""
        return f"over {self.units} {self.source or 'units'}" if self.units is not None else ""


@cache
def stated_quantile() -> float:
    """Standard errors per half-width of an interval an analyzer states itself (a normal 95 % interval)."""
    from scipy import stats

    return float(stats.norm.ppf(0.5 + CONFIDENCE / 2))


def _prefixes(path: str) -> list[str]:
    parts = path.split(".")
    return [".".join(parts[: k + 1]) for k in range(len(parts))]


def _failed_preconditions(checks: dict[str, Any], path: str, seen: set[str]) -> list[str]:
    """Reasons of every failed or unresolved precondition of ``path``: its prefixes' and, transitively, those
    of the metrics it derives from."""
    reasons: list[str] = []
    for prefix in _prefixes(path):
        check = checks.get(prefix)
        if not isinstance(check, dict) or prefix in seen:
            continue
        seen.add(prefix)
        for condition in check.get("preconditions") or []:
            if condition.get("passed") is not True:
                state = "unresolved" if condition.get("passed") is None else "failed"
                detail = condition.get("detail") or ""
                reasons.append(
                    f"{condition.get('name', 'precondition')} {state}" + (f": {detail}" if detail else "")
                )
        for parent in check.get("derived_from") or []:
            reasons += [f"{why} (from {parent})" for why in _failed_preconditions(checks, parent, seen)]
    return reasons


def _number(value: Any) -> float | None:
    """A finite number, or None (text, None, NaN, infinity: no number to compare); true/false count as 1/0."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def metric_status(result: dict[str, Any], path: str) -> MetricStatus:
    """What one result says about the value at ``path``: the value, its interval and what fails (see module
    doc)."""
    value = resolve_metric(result, path)
    failed: list[str] = []
    # evidence from before ``checks``, and any analyzer
    for metric, why in (result.get("untestable") or {}).items():
        if path == metric or path.startswith(f"{metric}."):
            failed.append(why)
    number = _number(value)
    checks = result.get("checks")
    # a failed precondition says why a value is missing (too few depths, a member that failed), so it leads
    failed += [] if checks is None else _failed_preconditions(checks, path, set())
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        failed.append(f"no value ({value!r}): not computable in this run")
    if checks is None:  # made before the contract: each value a point, as the rule then read it
        point = number if number is not None else math.nan
        return MetricStatus(value, point, point, failed, exact=True)
    exact = any(
        isinstance(checks.get(prefix), dict) and checks[prefix].get("exact") for prefix in _prefixes(path)
    )
    check = checks.get(path) if isinstance(checks.get(path), dict) else {}
    note = check.get("note") or ""
    if exact:
        point = number if number is not None else math.nan
        return MetricStatus(value, point, point, failed, note, exact=True)
    units, source = check.get("units"), check.get("source") or ""
    if check.get("interval") is not None:
        low, high = (float(x) for x in check["interval"])
        return MetricStatus(
            value, low, high, failed, note, units=units, source=source, quantile=stated_quantile()
        )
    if check.get("stderr") is not None and number is not None:
        interval = stderr_interval(number, float(check["stderr"]), units, check.get("dof"))
        quantile = interval_quantile(units, check.get("dof"))
        if interval is None or quantile is None:
            return MetricStatus(value, math.nan, math.nan, [*failed, too_few_units(units, source)], note,
                                units=units, source=source)
        freedom = check.get("dof") if check.get("dof") is not None else (units or 0) - 1
        return MetricStatus(value, *interval, failed, note, units=units, source=source, quantile=quantile,
                            dof=freedom)
    if not failed:
        failed.append(f"no uncertainty stated for {path} (no standard error or interval, and not exact by "
                      "construction): a bare number settles nothing")
    return MetricStatus(value, math.nan, math.nan, failed, note)


def _bounds(expect: Expectation) -> tuple[float, float]:
    """The values the claim accepts, as [low, high] (infinite on the open side), for numbers."""
    if isinstance(expect.value, list):
        return float(expect.value[0]), float(expect.value[1])
    if isinstance(expect.value, str):
        raise ValueError(f"threshold {expect.value!r} of {expect.metric!r} is not a number")
    value = float(expect.value)
    if expect.op is Operator.approx:
        tol = expect.tolerance if expect.tolerance is not None else (expect.rel_tolerance or 0.0) * abs(value)
        return value - tol, value + tol
    return value, value


@dataclass(frozen=True)
class Accepted:
    """The values an expectation accepts: an interval of numbers whose ends are open or closed (infinite on an
    open side), or one exact value (text or true/false with '=='). ``kb.evidence.tensions`` tests two claims'
    intersection with it, so what a claim accepts is read from the same bounds ``decide`` uses."""

    low: float = -math.inf
    high: float = math.inf
    low_closed: bool = True
    high_closed: bool = True
    value: str | bool | None = None

    def contains(self, number: float) -> bool:
        """Whether a number is accepted (a value that is not a number is not)."""
        above = self.low < number or (self.low == number and self.low_closed)
        below = number < self.high or (number == self.high and self.high_closed)
        return self.value is None and above and below

    def intersects(self, other: Accepted) -> bool:
        """Whether some value satisfies both; an exact value against an interval, or text against true/false,
        cannot be told apart and counts as intersecting (no tension is claimed on a guess)."""
        if self.value is not None or other.value is not None:
            if self.value is None or other.value is None or isinstance(self.value, bool) != isinstance(
                    other.value, bool):
                return True
            return self.value == other.value
        low, high = max(self.low, other.low), min(self.high, other.high)
        if low != high:
            return low < high
        return self.contains(low) and other.contains(low)

    def width(self) -> float:
        """How many values it accepts (infinite for an open side; 0 for one value): the narrower claim is
        bolder."""
        return 0.0 if self.value is not None else self.high - self.low

    def text(self) -> str:
        """As a reader writes it: '[24, 36]', '≤ 12', '> 0', '= 24', '== true'."""
        if self.value is not None:
            return f"== {json.dumps(self.value)}"
        if self.low == self.high:
            return f"= {self.low:g}"
        if math.isinf(self.low):
            return f"{'≤' if self.high_closed else '<'} {self.high:g}"
        if math.isinf(self.high):
            return f"{'≥' if self.low_closed else '>'} {self.low:g}"
        return (
            f"{'[' if self.low_closed else '('}{self.low:g}, {self.high:g}{']' if self.high_closed else ')'}"
        )


def accepted(expect: Expectation) -> Accepted:
    """The values ``expect`` accepts (the bounds ``decide`` applies, with the same open and closed ends)."""
    if isinstance(expect.value, str | bool):
        return Accepted(value=expect.value)
    low, high = _bounds(expect)
    op = expect.op
    if op is Operator.lt:
        return Accepted(high=low, high_closed=False)
    if op is Operator.le:
        return Accepted(high=low)
    if op is Operator.gt:
        return Accepted(low=low, low_closed=False)
    if op is Operator.ge:
        return Accepted(low=low)
    return Accepted(low=low, high=high)


def decide(expect: Expectation, low: float, high: float) -> bool | None:
    """True (supported) / False (refuted) when the whole interval [low, high] is on one side, else None."""
    t_low, t_high = _bounds(expect)
    op = expect.op
    if op is Operator.lt:
        return True if high < t_low else False if low >= t_low else None
    if op is Operator.le:
        return True if high <= t_low else False if low > t_low else None
    if op is Operator.gt:
        return True if low > t_low else False if high <= t_low else None
    if op is Operator.ge:
        return True if low >= t_low else False if high < t_low else None
    if op is Operator.eq:
        return True if low == high == t_low else False if t_low < low or t_low > high else None
    # between / approx: inside or outside the accepted range
    return True if t_low <= low and high <= t_high else False if high < t_low or low > t_high else None


def _threshold_type_matches(expect: Expectation, value: Any) -> bool:
    """A true/false threshold takes a true/false value, text takes text, a number a number (not
    true/false)."""
    if isinstance(expect.value, bool):
        return isinstance(value, bool)
    if isinstance(expect.value, str):
        return isinstance(value, str)
    return isinstance(value, int | float) and not isinstance(value, bool)


def _undecided_reason(expect: Expectation, statuses: list[MetricStatus]) -> str | None:
    """Why the seeds' values cannot decide ``expect`` at all (a failed precondition, a value of the wrong
    type), or None when they can."""
    path = expect.metric
    for status in statuses:
        # a number whose preconditions fail decides nothing, whichever side of the threshold
        if status.failed:
            return f"{path}: {status.failed[0]}"
    for value in (s.value for s in statuses):
        if not _threshold_type_matches(expect, value):
            return (f"{path} = {value!r} is not comparable with "
                    f"'{describe(expect)}' (a {type(value).__name__}): wrong type, nothing decided")
    return None


def evaluate(
    claim: Claim,
    results: list[dict[str, Any]],
    evidence_scale: EvidenceScale | None = None,
) -> Verdict:
    """Verdict of one claim given one result per seed (at least one); see the module docstring for the
    rule."""
    claim_scale = claim.scale.model_dump(exclude_none=True) if claim.scale else None
    common: dict[str, Any] = {"evidence_scale": evidence_scale, "claim_scale": claim_scale}
    expect = claim.expect
    if expect is None:
        return Verdict(
            kind=VerdictKind.inconclusive, reason="the claim states no expectation to test", **common
        )
    common["expected"] = describe(expect)
    path = expect.metric
    try:
        statuses = [metric_status(r, path) for r in results]
    except MetricMissing as exc:
        return Verdict(kind=VerdictKind.error, reason=str(exc.args[0]), **common)
    common["proxy"] = proxy_reason(claim, evidence_scale) is not None
    values = [s.value for s in statuses]
    undecided = _undecided_reason(expect, statuses)
    if undecided is not None:
        return Verdict(kind=VerdictKind.inconclusive, reason=undecided, **common)
    if isinstance(expect.value, str):
        return _text_verdict(expect, statuses, common, claim)
    combined = combine_seeds([float(v) for v in values], statuses, boolean=isinstance(expect.value, bool))
    if combined.failed:
        return Verdict(
            kind=VerdictKind.inconclusive,
            reason=f"{path}: {combined.failed}",
            observed=combined.mean,
            spread=combined.sd or None,
            **common,
        )
    band = expect.inconclusive_band
    low, high = combined.low - band, combined.high + band
    shown = _shown(expect, combined.mean)
    interval = f" [{low:.4g}, {high:.4g}]" if low < high else ""
    basis = f" ({combined.basis})" if combined.basis and low < high else ""
    note = f"; {statuses[0].note}" if statuses[0].note and low < high else ""
    outcome = decide(expect, low, high)
    if outcome is None:
        kind = VerdictKind.inconclusive
        reason = f"{path} = {shown}: its interval{interval}{basis} straddles the threshold of " \
                 f"'{describe(expect)}'{note}"
    elif outcome:
        kind, reason = (
            VerdictKind.supported,
            f"{path} = {shown}{interval}{basis} meets '{describe(expect)}'{note}",
        )
    else:
        kind, reason = (
            VerdictKind.refuted,
            f"{path} = {shown}{interval}{basis} fails '{describe(expect)}'{note}",
        )
    observed: Any = combined.mean
    if isinstance(expect.value, bool):
        observed = values[0] if len({bool(v) for v in values}) == 1 else values
    return _scaled(Verdict(kind=kind, reason=reason, observed=observed, spread=combined.sd or None, **common),
                   claim)


def verdict_inputs(claim: Claim) -> tuple[str, float | None, str | None]:
    """Everything of ``claim`` that ``evaluate`` decides its verdict's kind on: the whole expectation (written
    with ``repr``, so 2 and 2.0 or true and 1 stay apart) and the subject's size and data (``proxy_reason``).
    Two claims with equal inputs get the same kind on the same evidence (only the reason's wording can
    differ), so a caller judging thousands of claims on one record (``kb.evidence.tensions``) evaluates each
    distinct input once. A new field ``evaluate`` reads must be added here (tests/test_verdict_inputs.py
    checks it)."""
    subject = about(claim)
    expect = repr(claim.expect.model_dump()) if claim.expect is not None else ""
    return expect, subject.parameters, subject.data


@dataclass(frozen=True)
class SeedMean:
    """One metric over a claim's seeds: their mean, sd, the interval the rule reads (module docstring) and
    what it rests on in words, or why it is unresolved (``failed``)."""

    mean: float
    sd: float
    low: float
    high: float
    basis: str = ""  # '95 % t interval over 40 sequences', 'mean of 3 seeds, t(2) × SE 0.17 (between seeds)'
    failed: str | None = None


def combine_seeds(numbers: list[float], statuses: list[MetricStatus], *, boolean: bool = False) -> SeedMean:
    """The seeds' mean and its interval: mean +- t(n - 1) SE, SE the larger of the between-seed standard error
    of the mean and the pooled within-seed one (each side); one seed keeps its own interval; fewer than
    ``MIN_UNITS`` seeds are unresolved. ``boolean``: a true/false metric, decided only when every seed
    resolved it and all agree."""
    count = len(numbers)
    mean = statistics.fmean(numbers)
    sd = statistics.stdev(numbers) if count > 1 else 0.0
    if count == 1:
        only = statuses[0]
        basis = (f"{CONFIDENCE:.0%} t({only.dof}) interval {only.units_text()}" if only.dof is not None else
                 only.units_text())
        return SeedMean(mean, 0.0, only.low, only.high, basis)
    if boolean:
        unresolved = [i for i, s in enumerate(statuses) if s.low != s.high]
        if unresolved:
            return SeedMean(
                mean, sd, math.nan, math.nan,
                failed=f"seed {unresolved[0] + 1} of {count} did not "
                "resolve it: a true/false metric is decided only when every seed resolves it",
            )
        if len({bool(x) for x in numbers}) > 1:
            return SeedMean(
                mean, sd, math.nan, math.nan, failed=f"seeds disagree: {[bool(x) for x in numbers]!r}"
            )
        return SeedMean(mean, 0.0, numbers[0], numbers[0], f"{count} seeds, unanimous")
    quantile = interval_quantile(count)
    if quantile is None:
        return SeedMean(
            mean, sd, math.nan, math.nan,
            failed=f"only {count} seeds, fewer than {MIN_UNITS}: the "
            "spread between seeds is unknown, so their mean is unresolved; add seeds",
        )
    between = sd / math.sqrt(count)
    errors = [s.standard_errors(x) for x, s in zip(numbers, statuses, strict=True)]
    below = math.sqrt(sum(b * b for b, _ in errors)) / count
    above = math.sqrt(sum(a * a for _, a in errors)) / count
    low, high = mean - quantile * max(between, below), mean + quantile * max(between, above)
    wider = "between seeds" if between >= max(below, above) else "within seeds"
    error = max(between, below, above)
    basis = f"mean of {count} seeds, sd {sd:.3g}; t({count - 1}) = {quantile:.3g} × SE {error:.3g} ({wider})"
    return SeedMean(mean, sd, low, high, basis)


@dataclass
class SeedValue:
    """kb's value of one metric path across a claim's seeds: mean, interval, and why it settles nothing (if
    so)."""

    mean: float | None
    low: float | None
    high: float | None
    seeds: int
    failed: str | None = None
    basis: str = ""  # what the interval rests on (``SeedMean.basis``)


def value_across_seeds(results: list[dict[str, Any]], path: str) -> SeedValue:
    """kb's value at ``path`` over one result per seed, with the interval the verdict rule would use (no
    band)."""
    try:
        statuses = [metric_status(r, path) for r in results]
    except MetricMissing as exc:
        return SeedValue(None, None, None, len(results), str(exc.args[0]))
    numbers = [_number(s.value) for s in statuses]
    failed = next((s.failed[0] for s in statuses if s.failed), None)
    if any(x is None for x in numbers) or not numbers:
        return SeedValue(None, None, None, len(results), failed or "no number")
    combined = combine_seeds([float(x) for x in numbers if x is not None], statuses,
                             boolean=all(isinstance(s.value, bool) for s in statuses))
    low, high = combined.low, combined.high
    finite = math.isfinite(low) and math.isfinite(high)
    return SeedValue(combined.mean, low if finite else None, high if finite else None, len(results),
                     failed or combined.failed, combined.basis)


def _shown(expect: Expectation, mean: float) -> str:
    if isinstance(expect.value, bool):
        return repr(mean >= 0.5) if mean in (0.0, 1.0) else f"{mean:.3g} (share true)"
    return f"{mean:.4g}"


def _text_verdict(expect: Expectation, statuses: list[MetricStatus], common: dict[str, Any],
                  claim: Claim) -> Verdict:
    """Text compared with '==': settled only where each value is exact (no interval can bound text)."""
    values = [s.value for s in statuses]
    if not all(s.exact for s in statuses):
        return Verdict(
            kind=VerdictKind.inconclusive,
            reason=f"{expect.metric} = {values[0]!r} is text that is not "
            "exact by construction: nothing decided",
            **common,
        )
    agree = [v == expect.value for v in values]
    observed = values[0] if len(set(map(str, values))) == 1 else values
    if all(agree):
        kind, reason = VerdictKind.supported, f"{expect.metric} = {observed!r} as expected"
    elif not any(agree):
        kind, reason = VerdictKind.refuted, f"{expect.metric} = {observed!r}, expected {expect.value!r}"
    else:
        kind, reason = VerdictKind.inconclusive, f"seeds disagree: {values!r}"
    return _scaled(Verdict(kind=kind, reason=reason, observed=observed, **common), claim)


def unresolved_reason(result: dict[str, Any], path: str) -> str | None:
    """Why the value at ``path`` of one result cannot settle a claim (a failed precondition, no uncertainty),
    or None when it can: what ``kb run`` prints beside a metric."""
    try:
        status = metric_status(result, path)
    except MetricMissing as exc:
        return str(exc.args[0])
    return status.failed[0] if status.failed else None


def proxy_reason(claim: Claim, evidence_scale: EvidenceScale | None) -> str | None:
    """Why evidence at ``evidence_scale`` is only a proxy of the claim's setting, or None when it is the
    claim's own:

    - the evidence ran a model of a stated size and the claim states none ("at 'small' only: the claim states
      no scale"): no run can settle a claim that does not say which models it is about;
    - the claim states a size and the evidence none, or the sizes differ beyond the factor tensions allow, or
      the data name different structures (``kb.evidence.subjects.subject_difference``, the rule tensions
      compare claims by).
    Evidence with no scale at all (stored before scales existed) is read as before: no proxy."""

    if evidence_scale is None:
        return None
    mine = about(claim)
    theirs = About(quantity=None, parameters=evidence_scale.parameters, data=evidence_scale.data)
    if mine.parameters is None and theirs.parameters is not None:
        where = f"claims.{claim.id}.scale.parameters=N"
        return (
            f"at '{evidence_scale.name}' only: the claim states no scale (set one with `kb set NOTE {where} "
            "--new-field`)"
        )
    if mine.parameters is not None and theirs.parameters is None:
        return f"at an unknown size versus {mine.parameters:.3g} parameters in the claim"
    different = subject_difference(mine, theirs)
    if different is not None:
        return f"on another subject than the claim's: {different} (claim / evidence)"
    return None


def _scaled(verdict: Verdict, claim: Claim) -> Verdict:
    """A proxy decides nothing about the claim's own setting: supported/refuted become inconclusive, with
    why."""
    if verdict.proxy and verdict.kind in (VerdictKind.supported, VerdictKind.refuted):
        why = proxy_reason(claim, verdict.evidence_scale) or "at another scale"
        consistent = verdict.kind is VerdictKind.supported
        outcome = "consistent with" if consistent else "at odds with"
        return verdict.model_copy(update={
            "kind": VerdictKind.inconclusive, "proxy_outcome": "consistent" if consistent else "at_odds",
            "reason": f"{verdict.reason}; {outcome} the claim, but {why}: a proxy, not a replication",
        })
    found = proxy_reason(claim, verdict.evidence_scale) if verdict.proxy else None
    return verdict.model_copy(update={"reason": f"{verdict.reason}; a proxy: {found}"}) if found else verdict


def proxy_outcome(verdict: Verdict) -> str | None:
    """'consistent' or 'at_odds' for a proxy that would have supported or refuted its claim, else None.

    Verdicts stored before ``proxy_outcome`` existed say it only in their reason, which ``_scaled``
    above wrote: read it there, so old evidence reads the same as new.
    """
    if not verdict.proxy or verdict.kind is not VerdictKind.inconclusive:
        return None
    if verdict.proxy_outcome is not None:
        return verdict.proxy_outcome
    for outcome, words in (("consistent", "; consistent with the claim, but "),
                           ("at_odds", "; at odds with the claim, but ")):
        if words in verdict.reason:
            return outcome
    return None
