"""Read-only questions the agents ask of the index: claims with their states, evidence by model, metric
slices.

``claim_states`` is the per-claim counterpart of ``kb.evidence.library`` (which counts states per note): each
claim with its state (``kb.evidence.claim_states.claim_state``, the rule every surface shares), the latest
verdict and why, the scale the evidence was made at, and the *outcome at the evidence's own scale*:
a small-scale proxy never settles a claim (its verdict is ``inconclusive``), but whether it agreed
with the claim at its own scale is what "refuted at small scale" asks about. ``find_evidence``
looks evidence up by analyzer and model name; ``metric_slice`` cuts a piece out of a result.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from sqlmodel import Session, col, select

from kb.core import KnowledgeBase
from kb.evidence import claim_states as evidence_mod
from kb.evidence import verdicts
from kb.index.database import ClaimRow, Evidence
from schemas import Claim, Verdict, VerdictKind

UNBOUND = evidence_mod.ClaimState.unbound.value


@dataclass
class ClaimState:
    """One claim as the agents see it: statement, state, latest verdict, scales."""

    claim_key: str
    note_id: str
    statement: str
    kind: str
    analyzer: str | None
    # a kb.evidence.claim_states.ClaimState value: supported, refuted, consistent_proxy, at_odds_proxy, ...
    state: str
    verdict: str | None = None
    reason: str | None = None
    outcome_at_evidence_scale: str | None = None  # supported/refuted/inconclusive before the proxy rule
    proxy: bool = False
    evidence_scale: str | None = None  # preset the evidence ran at: smoke, small, paper, custom
    evidence_parameters: float | None = None
    claim_parameters: float | None = None
    run_id: str | None = None
    stale_reason: str | None = None
    grounding: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, without empty fields."""
        return {k: v for k, v in asdict(self).items() if v is not None and v is not False}


def outcome_at_own_scale(claim: Claim, verdict: Verdict) -> str | None:
    """What the verdict would be if the evidence's scale were the claim's (None without an observed value):
    the way a proxy leaned (``kb.evidence.verdicts.proxy_outcome``, read off the interval the rule judged),
    else its kind."""
    if claim.expect is None or verdict.observed is None or isinstance(verdict.observed, list):
        return verdict.kind.value if not verdict.proxy else None
    if not verdict.proxy:
        return verdict.kind.value
    leaning = verdicts.proxy_outcome(verdict)
    return {"consistent": "supported", "at_odds": "refuted"}.get(
        leaning or "", VerdictKind.inconclusive.value
    )


def _words_match(words: list[str], haystack: str) -> int:
    return sum(word in haystack for word in words)


def claim_states(
    kb: KnowledgeBase,
    *,
    query: str | None = None,
    note_id: str | None = None,
    states: list[str] | None = None,
    outcome: str | None = None,
    evidence_scale: str | None = None,
    analyzer: str | None = None,
    limit: int = 50,
) -> list[ClaimState]:
    """Claims with their states, filtered; with a query, best matches first (see ``ClaimState``).

    ``query`` keeps claims sharing at least one word with their statement, quote, note title, analyzer
    or metric; ``states`` keeps those states; ``outcome`` the outcome at the evidence's own scale;
    ``evidence_scale`` the scale preset the latest evidence ran at.
    """
    kb.index()
    with Session(kb.engine) as session:
        rows = session.exec(select(ClaimRow)).all()
        latest = evidence_mod.latest_evidence(session, with_verdict=True)
        titles = {p.id: p.title for p in kb.list_papers()}
    words = [w for w in re.findall(r"\w+", (query or "").lower()) if len(w) > 2]
    found: list[tuple[int, ClaimState]] = []
    for row in rows:
        if note_id is not None and row.paper_id != note_id:
            continue
        if analyzer is not None and row.analyzer != analyzer:
            continue
        claim = Claim.model_validate_json(row.claim_json)
        score = 0
        if words:
            haystack = " ".join([row.statement, claim.source.quote if claim.source else "",
                                 titles.get(row.paper_id, ""), row.analyzer or "",
                                 claim.expect.metric if claim.expect else ""]).lower()
            score = _words_match(words, haystack)
            if score == 0:
                continue
        state = _state(row, claim, latest.get(row.key))
        if states and state.state not in states:
            continue
        if outcome and state.outcome_at_evidence_scale != outcome:
            continue
        if evidence_scale and state.evidence_scale != evidence_scale:
            continue
        found.append((score, state))
    found.sort(key=lambda pair: (-pair[0], pair[1].claim_key))
    return [state for _, state in found[:limit]]


def _state(row: ClaimRow, claim: Claim, evidence: evidence_mod.LatestEvidence | None) -> ClaimState:
    status = evidence_mod.claim_state(evidence, bound=row.analyzer is not None, binding_hash=row.binding_hash)
    state = ClaimState(
        claim_key=row.key,
        note_id=row.paper_id,
        statement=row.statement,
        kind=row.kind,
        analyzer=row.analyzer,
        state=status.state.value,
        stale_reason=status.stale_reason,
        claim_parameters=claim.scale.parameters if claim.scale else None,
        grounding=row.grounding,
    )
    if evidence is None:
        return state
    state.run_id = evidence.run_id
    verdict = Verdict.model_validate_json(evidence.verdict_json) if evidence.verdict_json else None
    if verdict is not None:
        state.verdict, state.reason, state.proxy = verdict.kind.value, verdict.reason, verdict.proxy
        if verdict.evidence_scale is not None:
            state.evidence_scale = verdict.evidence_scale.name
            state.evidence_parameters = verdict.evidence_scale.parameters
        state.outcome_at_evidence_scale = outcome_at_own_scale(claim, verdict)
    return state


@dataclass
class EvidenceHit:
    """One piece of evidence found by analyzer or model name."""

    run_id: str
    claim_key: str | None
    analyzer: str
    model: str | None
    scale: str | None
    parameters: float | None
    verdict: str | None
    stale: bool
    created_at: str
    metrics: list[str]  # top-level metric names, for read_evidence(metric=...)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, without empty fields."""
        return {k: v for k, v in asdict(self).items() if v is not None}


def _name_tokens(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def model_matches(query: str, model_id: str) -> bool:
    """Whether every word of ``query`` ('ESM-2 650M') occurs in a model id
    ('facebook/esm2_t33_650M_UR50D')."""
    words = [_name_tokens(w) for w in re.split(r"[\s/_\-]+", query) if _name_tokens(w)]
    target = _name_tokens(model_id)
    return bool(words) and all(w in target for w in words)


def _model_of(evidence: Evidence) -> str | None:
    provenance = json.loads(evidence.provenance_json or "{}")
    metrics = json.loads(evidence.metrics_json or "{}")
    found = (
        provenance.get("model_id") or metrics.get("model") or metrics.get("provenance", {}).get("model_id")
    )
    return str(found) if found else None


def find_evidence(kb: KnowledgeBase, *, model: str | None = None, analyzer: str | None = None,
                  claim_key: str | None = None, limit: int = 20) -> list[EvidenceHit]:
    """Evidence, newest first, by model name (words, e.g. 'ESM-2 650M'), analyzer and/or claim."""
    query = select(Evidence).order_by(col(Evidence.id).desc())
    if analyzer:
        query = query.where(Evidence.analyzer == analyzer)
    if claim_key:
        query = query.where(Evidence.claim_key == claim_key)
    hits: list[EvidenceHit] = []
    with Session(kb.engine) as session:
        for evidence in session.exec(query):
            model_id = _model_of(evidence)
            if model and not (model_id and model_matches(model, model_id)):
                continue
            metrics = json.loads(evidence.metrics_json or "{}")
            verdict = Verdict.model_validate_json(evidence.verdict_json) if evidence.verdict_json else None
            scale = metrics.get("scale") if isinstance(metrics.get("scale"), dict) else {}
            hits.append(
                EvidenceHit(
                    run_id=evidence.run_id,
                    claim_key=evidence.claim_key,
                    analyzer=evidence.analyzer,
                    model=model_id,
                    scale=scale.get("name"),
                    parameters=scale.get("parameters"),
                    verdict=verdict.kind.value if verdict else None,
                    stale=evidence.stale,
                    created_at=evidence.created_at.isoformat(timespec="seconds"),
                    metrics=sorted(
                        k for k in metrics if k not in ("scale", "artifacts", "provenance", "notes")
                    ),
                )
            )
            if len(hits) >= limit:
                break
    return hits


def evidence_by_run(kb: KnowledgeBase, run_id: str) -> Evidence | None:
    """The evidence a run left, if any."""
    return evidence_mod.evidence_by_run(kb.engine, run_id)


def layer_slice(metrics: Any, layer: int, path: str = "", depth: int = 0) -> dict[str, Any]:
    """Element ``layer`` of every per-layer list in a result, by dotted path, with each list's length.

    A list counts as per-layer when it is longer than ``layer``; the length tells whether index 0 is the
    embedding output (length = layers + 1) or the first block (length = layers).
    """
    found: dict[str, Any] = {}
    if isinstance(metrics, dict) and depth < 4:
        for key, value in metrics.items():
            if key in ("provenance", "artifacts", "notes", "scale"):
                continue
            found.update(layer_slice(value, layer, f"{path}.{key}" if path else str(key), depth + 1))
    elif isinstance(metrics, list) and len(metrics) > layer and path:
        found[path] = {"value": metrics[layer], "length": len(metrics)}
    return found


def summarize_metrics(metrics: dict[str, Any], max_list: int = 8) -> dict[str, Any]:
    """Scalars as they are; long lists and nested objects shortened to their shape (to keep answers small)."""
    summary: dict[str, Any] = {}
    for key, value in metrics.items():
        if key in ("provenance", "artifacts"):
            continue
        if isinstance(value, list) and len(value) > max_list:
            summary[key] = f"list of {len(value)} (read with metric='{key}' or layer=N)"
        elif isinstance(value, dict) and len(json.dumps(value, default=str)) > 400:
            shapes = {
                k: (f"list of {len(v)}" if isinstance(v, list) else type(v).__name__)
                for k, v in value.items()
            }
            summary[key] = {"(nested)": shapes}
        else:
            summary[key] = value
    return summary
