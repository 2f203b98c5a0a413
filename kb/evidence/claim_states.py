"""A claim's evidence and what it makes of the claim: the one home of the claim-state rule.

Every surface (the Library, ``kb show`` / ``kb evidence`` / ``kb demo``, the Note page, the agents) asks this
module, so a claim reads the same everywhere. The rule (``claim_state``), on the claim's *latest*
evidence (the newest row; older rows are history):

- no evidence: ``unverified`` when the claim is bound to an analyzer, else ``unbound``;
- the evidence no longer matches the code or the note (``stale_reason``: superseded, analyzer gone or
  of another version, another kb version, the note's binding changed): ``stale``;
- the evidence carries no verdict (its run was made before the claim was indexed, so nothing judged
  it): ``inconclusive``, since evidence that was never tested against the claim settles nothing;
- a small-scale proxy (evidence at a smaller scale than the claim's, ``kb.evidence.verdicts``) never settles
  the claim, but says which way it leans: ``consistent_proxy`` (it would have supported the claim) or
  ``at_odds_proxy`` (it would have refuted it);
- otherwise the verdict's kind: ``supported``, ``refuted``, ``inconclusive``, ``not_runnable``
  or ``error``.

``LABELS`` names each state the way every surface writes it ("consistent (proxy)", "not run",
"no analyzer"); ``verdict_state`` applies the same rule to one piece of evidence (the Runs page's
verdict column).

Runs that are queued, running or failed leave the state alone: a failed run adds no evidence, and the
claim keeps the state its earlier evidence gives it. Re-judging (``rejudge``) keeps a stored verdict
in step with the note's current expectation without a new run. ``paper_comparisons`` puts the values a claim's
paper reports (``paper_values``) beside kb's value and interval across the latest evidence's seeds, and says
whether that interval contains the paper's value (``PaperComparison.reproduces``), apart from the verdict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any, Protocol

from sqlalchemy import case, func, null
from sqlalchemy import select as sa_select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from analyzers import registry
from kb import __version__
from kb.display import format_value
from kb.evidence.verdicts import SeedValue, describe, evaluate, proxy_outcome, value_across_seeds
from kb.index.database import ClaimRow, Evidence, Run
from kb.index.indexing import claim_for_key
from schemas import Claim, EvidenceRecord, PaperValue, Provenance, Verdict, VerdictKind


class ClaimState(StrEnum):
    """What a reader needs to know first about a claim (see the module docstring for the rule)."""

    supported = "supported"
    refuted = "refuted"
    consistent_proxy = "consistent_proxy"
    at_odds_proxy = "at_odds_proxy"
    inconclusive = "inconclusive"
    not_runnable = "not_runnable"
    error = "error"
    stale = "stale"
    unverified = "unverified"
    unbound = "unbound"


#: The states a claim bound to an analyzer (or with evidence) can be in.
STATES: tuple[str, ...] = tuple(s.value for s in ClaimState if s is not ClaimState.unbound)
#: Every state, ``unbound`` (no analyzer, no evidence) last: what the Library header counts.
ALL_STATES: tuple[str, ...] = (*STATES, ClaimState.unbound.value)

#: How every surface (app, CLI, agents) names a state to a reader.
LABELS: dict[str, str] = {
    "supported": "supported", "refuted": "refuted", "consistent_proxy": "consistent (proxy)",
    "at_odds_proxy": "at odds (proxy)", "inconclusive": "inconclusive", "not_runnable": "not runnable",
    "error": "error", "stale": "stale", "unverified": "not run", "unbound": "no analyzer",
}


def label(state: str) -> str:
    """The reader's name of a state (its value when it is not a claim state, e.g. a run status)."""
    return LABELS.get(state, state.replace("_", " "))


class EvidenceFacts(Protocol):
    """What staleness is judged on: an ``Evidence`` row, or a light record of its columns."""

    stale: bool
    stale_reason: str | None
    analyzer: str
    analyzer_version: str | None
    kb_version: str | None
    binding_hash: str | None
    provenance_json: str


class LatestFacts(EvidenceFacts, Protocol):
    """What a claim's state is judged on: the staleness facts, the stored verdict's kind and, for an
    inconclusive verdict, the verdict itself (whether it is a proxy, and which way it leans)."""

    verdict_kind: str | None
    verdict_json: str | None


@dataclass(frozen=True)
class ClaimStatus:
    """A claim's state, with why it is stale and the latest verdict (kept even when stale)."""

    state: ClaimState
    stale_reason: str | None = None
    verdict: str | None = None


def stale_reason(evidence: EvidenceFacts, claim_binding_hash: str | None = None) -> str | None:
    """Why evidence no longer matches the current code or the claim's binding, or None when it is current."""
    if evidence.stale:
        return evidence.stale_reason or "superseded"
    if evidence.analyzer_version is not None and evidence.kb_version is not None:
        made_with = (evidence.analyzer_version, evidence.kb_version)
    else:  # evidence recorded before these columns existed
        prov = Provenance.model_validate_json(evidence.provenance_json)
        made_with = (prov.analyzer_version, prov.kb_version)
    analyzer_cls = registry.load_all().get(evidence.analyzer)
    if analyzer_cls is None:
        return f"analyzer {evidence.analyzer!r} is no longer registered"
    if made_with[0] != analyzer_cls.version:
        return f"analyzer version changed ({made_with[0]} -> {analyzer_cls.version})"
    if made_with[1] != __version__:
        return f"kb version changed ({made_with[1]} -> {__version__})"
    if claim_binding_hash and evidence.binding_hash and claim_binding_hash != evidence.binding_hash:
        return "the claim's analyzer parameters changed"
    return None


def claim_state(latest: LatestFacts | None, *, bound: bool, binding_hash: str | None) -> ClaimStatus:
    """The state of a claim from its latest evidence (None: it has none) and its current binding.

    ``bound``: the note binds the claim to an analyzer; ``binding_hash``: the claim's current
    ``kb.hashing.binding_hash``, which the evidence must have been made under to be current.
    """
    if latest is None:
        return _UNVERIFIED if bound else _UNBOUND
    reason = stale_reason(latest, binding_hash)
    if reason is not None:
        return ClaimStatus(ClaimState.stale, stale_reason=reason, verdict=latest.verdict_kind)
    if latest.verdict_kind is None:  # never judged against the claim: it settles nothing
        return _NO_VERDICT
    if latest.verdict_kind == VerdictKind.inconclusive.value and latest.verdict_json:
        leaning = _proxy_leaning(latest.verdict_json)
        if leaning is not None:
            return _PROXY[leaning]
    return _CURRENT[latest.verdict_kind]


def verdict_state(verdict: Verdict | None) -> ClaimState | None:
    """The state one verdict gives its claim when current (None: no verdict), proxies told apart."""
    if verdict is None:
        return None
    leaning = proxy_outcome(verdict)
    return _PROXY[leaning].state if leaning is not None else ClaimState(verdict.kind.value)


@lru_cache(maxsize=4096)
def _proxy_leaning(verdict_json: str) -> str | None:
    """'consistent' / 'at_odds' for a stored proxy verdict, else None (the Library asks per claim per
    render)."""
    if '"proxy":true' not in verdict_json:  # the compact JSON pydantic writes: skip parsing non-proxies
        return None
    return proxy_outcome(Verdict.model_validate_json(verdict_json))


# Shared instances (statuses are immutable): the Library asks for 10,000 of them per render.
_UNVERIFIED, _UNBOUND = ClaimStatus(ClaimState.unverified), ClaimStatus(ClaimState.unbound)
_NO_VERDICT = ClaimStatus(ClaimState.inconclusive)
_CURRENT = {kind.value: ClaimStatus(ClaimState(kind.value), verdict=kind.value) for kind in VerdictKind}
_PROXY = {"consistent": ClaimStatus(ClaimState.consistent_proxy, verdict=VerdictKind.inconclusive.value),
          "at_odds": ClaimStatus(ClaimState.at_odds_proxy, verdict=VerdictKind.inconclusive.value)}


@dataclass
class LatestEvidence:
    """The columns of a claim's newest evidence that its state depends on (a ``LatestFacts``)."""

    claim_key: str
    run_id: str
    verdict_kind: str | None
    stale: bool
    stale_reason: str | None
    analyzer: str
    analyzer_version: str | None
    kb_version: str | None
    binding_hash: str | None
    provenance_json: str  # read only for evidence older than the version columns
    # read for inconclusive verdicts (a proxy?), for every verdict with ``with_verdict``
    verdict_json: str | None


def latest_evidence(session: Session, claim_keys: list[str] | None = None, *,
                    with_verdict: bool = False) -> dict[str, LatestEvidence]:
    """The newest evidence of every claim (or of ``claim_keys``), as light records, in one query.

    Column reads, not ORM rows: at 10,000 claims the rows would cost more than the query. The verdict
    JSON is read only where the state needs it (an inconclusive verdict may be a proxy leaning one way).
    """
    newest = sa_select(col(Evidence.claim_key), func.max(Evidence.id).label("newest"))
    newest = newest.where(col(Evidence.claim_key).is_not(None) if claim_keys is None
                          else col(Evidence.claim_key).in_(claim_keys))
    joined = newest.group_by(col(Evidence.claim_key)).subquery()
    legacy = case((col(Evidence.analyzer_version).is_(None), col(Evidence.provenance_json)), else_="{}")
    verdict = (
        col(Evidence.verdict_json)
        if with_verdict
        else case(
            (col(Evidence.verdict_kind) == VerdictKind.inconclusive.value, col(Evidence.verdict_json)),
            else_=null(),
        )
    )
    stmt = sa_select(
        col(Evidence.claim_key),
        col(Evidence.run_id),
        col(Evidence.verdict_kind),
        col(Evidence.stale),
        col(Evidence.stale_reason),
        col(Evidence.analyzer),
        col(Evidence.analyzer_version),
        col(Evidence.kb_version),
        col(Evidence.binding_hash),
        legacy,
        verdict,
    ).join(joined, col(Evidence.id) == joined.c.newest)
    return {row[0]: LatestEvidence(*row) for row in session.execute(stmt)}


def claim_states(engine: Engine, note_id: str | None = None) -> dict[str, ClaimStatus]:
    """The state of every indexed claim (or of one note's claims), by claim key."""
    with Session(engine) as session:
        query = sa_select(col(ClaimRow.key), col(ClaimRow.analyzer), col(ClaimRow.binding_hash))
        if note_id is not None:
            query = query.where(col(ClaimRow.paper_id) == note_id)
        claims = session.execute(query).all()
        latest = latest_evidence(session, None if note_id is None else [key for key, _, _ in claims])
    return {key: claim_state(latest.get(key), bound=analyzer is not None, binding_hash=binding)
            for key, analyzer, binding in claims}


def evidence_for(engine: Engine, claim_key: str, limit: int | None = None) -> list[Evidence]:
    """Evidence of a claim, newest first (``limit=1``: only the latest, without reading the history)."""
    with Session(engine) as session:
        query = select(Evidence).where(Evidence.claim_key == claim_key).order_by(col(Evidence.id).desc())
        return list(session.exec(query if limit is None else query.limit(limit)).all())


def evidence_record(row: Evidence, stale_reason: str | None) -> EvidenceRecord:
    """The public model of an evidence row, with its staleness as worked out by the caller."""
    return EvidenceRecord(
        id=str(row.id), run_id=row.run_id, claim_key=row.claim_key, analyzer=row.analyzer,
        metrics=json.loads(row.metrics_json), artifacts=json.loads(row.artifacts_json),
        provenance=Provenance.model_validate_json(row.provenance_json),
        verdict=Verdict.model_validate_json(row.verdict_json) if row.verdict_json else None,
        stale=stale_reason is not None, stale_reason=stale_reason, created_at=row.created_at,
    )


def _claim_binding_hash(engine: Engine, claim_key: str) -> str | None:
    with Session(engine) as session:
        row = session.get(ClaimRow, claim_key)
    return row.binding_hash if row is not None else None


def claim_evidence(engine: Engine, claim_key: str) -> list[EvidenceRecord]:
    """Evidence of a claim, newest first, with staleness worked out against the current code and note."""
    claim_hash = _claim_binding_hash(engine, claim_key)
    return [evidence_record(row, stale_reason(row, claim_hash)) for row in evidence_for(engine, claim_key)]


def staleness(engine: Engine, claim_key: str) -> str | None:
    """Why a claim needs re-verifying (no evidence, stale evidence, changed binding), or None."""
    evidence = evidence_for(engine, claim_key, limit=1)
    if not evidence:
        return "no evidence yet"
    return stale_reason(evidence[0], _claim_binding_hash(engine, claim_key))


def evidence_of_analyzer(
    engine: Engine, analyzer: str, limit: int = 200
) -> list[tuple[Evidence, Run | None]]:
    """Evidence an analyzer produced (for any claim, or none), newest first, each with its run."""
    with Session(engine) as session:
        rows = session.exec(select(Evidence).where(Evidence.analyzer == analyzer)
                            .order_by(col(Evidence.id).desc()).limit(limit)).all()
        by_id = {r.id: r for r in session.exec(select(Run).where(col(Run.id).in_([e.run_id for e in rows])))}
    return [(row, by_id.get(row.run_id)) for row in rows]


def evidence_by_run(engine: Engine, run_id: str) -> Evidence | None:
    """The evidence a run left, if any."""
    with Session(engine) as session:
        return session.exec(select(Evidence).where(Evidence.run_id == run_id)).first()


def set_verdict(engine: Engine, evidence_id: int | None, verdict: Verdict) -> None:
    """Replace the verdict stored with one piece of evidence (its metrics stay as they were)."""
    with Session(engine) as session:
        row = session.get(Evidence, evidence_id)
        if row is not None:
            row.verdict_json, row.verdict_kind = verdict.model_dump_json(), verdict.kind.value
            session.add(row)
            session.commit()


def rejudge(engine: Engine, claim_key: str) -> bool:
    """Re-judge the claim's current evidence when the note's expectation changed; True when it did.

    Editing ``expect:`` needs no new run (the metrics are stored), but the stored verdict must follow
    the note, or the app would show a verdict on an expectation the note no longer makes.
    """
    claim = claim_for_key(engine, claim_key)
    if claim is None or claim.expect is None:
        return False
    evidence = evidence_for(engine, claim_key, limit=1)  # every claim of every changed note comes here
    if not evidence or evidence[0].verdict_json is None:
        return False
    latest = evidence[0]
    old = Verdict.model_validate_json(latest.verdict_json or "{}")
    if old.kind is VerdictKind.not_runnable or old.expected == describe(claim.expect):
        return False
    results = (group_results(engine, latest.group_id)[0] if latest.group_id
               else [json.loads(latest.metrics_json)])
    verdict = evaluate(claim, [m for m in results if m], old.evidence_scale)
    set_verdict(engine, latest.id, verdict.model_copy(
        update={"reason": f"{verdict.reason} (re-judged against the note's current expectation)"}))
    return True


def verdicts_of_runs(engine: Engine, run_ids: list[str]) -> dict[str, Verdict | None]:
    """The verdict each run's evidence carries, by run id (runs that left no evidence are absent)."""
    if not run_ids:
        return {}
    with Session(engine) as session:
        rows = session.execute(sa_select(col(Evidence.run_id), col(Evidence.verdict_json))
                               .where(col(Evidence.run_id).in_(run_ids))).all()
    return {run_id: Verdict.model_validate_json(text) if text else None for run_id, text in rows}


def metrics_of_runs(engine: Engine, run_ids: list[str]) -> dict[str, dict[str, Any]]:
    """The metrics each run's evidence holds, by run id (runs that left no evidence are absent)."""
    if not run_ids:
        return {}
    with Session(engine) as session:
        rows = session.execute(sa_select(col(Evidence.run_id), col(Evidence.metrics_json))
                               .where(col(Evidence.run_id).in_(run_ids))).all()
    return {run_id: json.loads(text) if text else {} for run_id, text in rows}


@dataclass(frozen=True)
class PaperComparison:
    """One value the paper reports for a claim beside kb's value of the same metric (mean and interval over
    the latest evidence's seeds, or why it settles nothing)."""

    metric: str
    paper: PaperValue
    kb: SeedValue | None  # None: no evidence yet

    @property
    def reproduces(self) -> bool | None:
        """Whether kb's interval contains the paper's value (overlaps a reported range; for true/false: kb
        resolved the same value), or None where kb's value settles nothing (no interval, a failed
        precondition). Separate from the verdict on the claim's threshold: a claim can hold while kb misses
        the paper's number."""
        kb = self.kb
        if kb is None or kb.mean is None or kb.failed or kb.low is None or kb.high is None:
            return None
        reported = self.paper.value
        if isinstance(reported, bool):
            return kb.low == kb.high == float(reported)
        if isinstance(reported, list):
            return kb.low <= float(reported[1]) and float(reported[0]) <= kb.high
        return kb.low <= float(reported) <= kb.high

    def comparison(self) -> str:
        """'reproduces the paper's 0.5', 'does not: kb 0.05 [0.03, 0.07] excludes the paper's 0.5', or why kb
        cannot tell."""
        found, paper = self.reproduces, format_value(self.paper.value)
        if found is None:
            return f"cannot tell whether kb reproduces the paper's {paper}"
        if found:
            return f"reproduces the paper's {paper}"
        assert self.kb is not None and self.kb.mean is not None
        return (
            f"does not: kb {self.kb.mean:.4g} [{self.kb.low:.4g}, {self.kb.high:.4g}] excludes the "
            f"paper's {paper}"
        )

    def record(self) -> dict[str, Any]:
        """As ``--json`` prints it: the paper's value, kb's mean and interval, and whether kb reproduces
        it."""
        kb = self.kb
        return {
            "metric": self.metric,
            "paper": self.paper.value,
            "where": self.paper.where,
            "kb": None
            if kb is None
            else {
                "mean": kb.mean,
                "low": kb.low,
                "high": kb.high,
                "seeds": kb.seeds,
                "basis": kb.basis,
                "settles_nothing": kb.failed,
            },
            "reproduces": self.reproduces,
            "text": self.comparison(),
        }

    def text(self) -> str:
        """One line: 'paper 0.45 (where) · kb 0.41 [0.35, 0.47] over 3 seeds · reproduces the paper's
        0.45'."""
        return f"{self._values()} · {self.comparison()}" if self.kb is not None else self._values()

    def _values(self) -> str:
        paper = f"paper {format_value(self.paper.value)} ({self.paper.where})"
        if self.kb is None:
            return f"{self.metric}: {paper} · kb: not run yet"
        if self.kb.mean is None:
            return f"{self.metric}: {paper} · kb: no value ({self.kb.failed})"
        interval = (
            f" [{self.kb.low:.4g}, {self.kb.high:.4g}]"
            if self.kb.low is not None and self.kb.high is not None and self.kb.low < self.kb.high
            else ""
        )
        seeds = f" over {self.kb.seeds} seeds" if self.kb.seeds > 1 else ""
        caveat = f" (settles nothing: {self.kb.failed})" if self.kb.failed else ""
        return f"{self.metric}: {paper} · kb {self.kb.mean:.4g}{interval}{seeds}{caveat}"


#: Paper values a claim's listing shows (CLI and app); a note may hold thousands, which no reader reads.
SHOWN_PAPER_VALUES = 20


def paper_values_left_out(claim: Claim) -> str | None:
    """The line saying how many of the claim's paper values a listing leaves out, or None when all are
    shown."""
    left = len(claim.paper_values or []) - SHOWN_PAPER_VALUES
    return f"… and {left:,} more paper value(s), not listed (all are in the note)" if left > 0 else None


def paper_comparisons(claim: Claim, results: list[dict[str, Any]] | None) -> list[PaperComparison]:
    """The paper's reported values of a claim beside kb's, from one result per seed of its latest evidence:
    the first ``SHOWN_PAPER_VALUES`` of them (``paper_values_left_out`` says how many more there are)."""
    default = claim.expect.metric if claim.expect is not None else None
    found = []
    for reported in (claim.paper_values or [])[:SHOWN_PAPER_VALUES]:
        metric = reported.metric or default
        if metric is None:
            continue
        found.append(
            PaperComparison(metric, reported, value_across_seeds(results, metric) if results else None)
        )
    return found


def latest_results(engine: Engine, claim_key: str) -> list[dict[str, Any]]:
    """One result per seed of the claim's latest evidence (its group's), or none."""
    evidence = evidence_for(engine, claim_key, limit=1)
    if not evidence:
        return []
    latest = evidence[0]
    results = group_results(engine, latest.group_id)[0] if latest.group_id else [
        json.loads(latest.metrics_json)]
    return [r for r in results if r]


def group_results(engine: Engine, group_id: str) -> tuple[list[dict[str, Any]], int]:
    """Metrics of the group's evidence so far, and how many runs the group has in all."""
    with Session(engine) as session:
        rows = session.exec(select(Evidence.metrics_json).where(Evidence.group_id == group_id)).all()
        total = len(session.exec(select(Run.id).where(Run.group_id == group_id)).all())
    return [json.loads(r) for r in rows], total
