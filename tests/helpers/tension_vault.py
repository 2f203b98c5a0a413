"""A generated vault of claims that tensions are found among, and every tension computed the slow, plain way.

``write_vault`` writes notes whose claims sit on several quantities (noop's ``value`` bound to the analyzer, two
named quantities without a binding), with every operator, bands, stated and unstated scales (a stated one makes
smoke evidence a proxy), subject families that match across spelling or not, and a preset that parts claims.
``brute_force`` is the full computation ``kb.evidence.tensions.find`` must agree with: every pair of claims of
different notes, each judged by ``evaluate`` on each deciding record in full (no grouping by expectation, no
remembered verdicts, no pair counting); with ``max_pairs``, for a vault whose expectations all overlap (lower
bounds only), the pairs the cap lets through in the documented order.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kb.core import KnowledgeBase
from kb.evidence.tensions import (
    ClaimRef,
    Deciding,
    Tension,
    current_evidence,
    incomparable_reason,
    indexed_claims,
    state_of,
    tension_id,
)
from kb.evidence.verdicts import evaluate
from schemas import VerdictKind

#: A value noop echoes, for the runs that make evidence: on both sides of the thresholds below.
RUN_VALUES = (0.5, 1.5, 2.5, 3.5)
SPLIT = {VerdictKind.supported, VerdictKind.refuted}


def _expect(rng: random.Random, lower_bounds_only: bool) -> dict[str, Any]:
    threshold = rng.choice([1, 2, 2.5, 3])
    if lower_bounds_only:
        return {"metric": "value", "op": rng.choice([">", ">="]), "value": threshold,
                "inconclusive_band": rng.choice([0, 0, 0.2])}
    op = rng.choice([">", ">=", "<", "<=", "between", "approx"])
    if op == "between":
        return {"metric": "value", "op": op, "value": sorted(rng.sample([0.5, 1, 2, 2.5, 3, 4], 2))}
    if op == "approx":
        return {"metric": "value", "op": op, "value": threshold, "tolerance": rng.choice([0.3, 1])}
    return {"metric": "value", "op": op, "value": threshold, "inconclusive_band": rng.choice([0, 0, 0.2])}


def _claim(rng: random.Random, index: int, lower_bounds_only: bool) -> dict[str, Any]:
    claim: dict[str, Any] = {"id": f"c{index}", "statement": f"Claim {index}.", "kind": "quantitative"}
    shape = rng.random()
    if shape < 0.65 or lower_bounds_only:  # bound to noop: runs make evidence
        # A preset each (another one parts claims); some claims leave it to the binding's default.
        claim["analyzer"] = {"name": "noop", "params": {"value": 1}}
        preset = rng.choice(["smoke", "smoke", None, "slow"])
        if preset is not None:
            claim["analyzer"]["scale"] = preset
        claim["expect"] = _expect(rng, lower_bounds_only)
    elif shape < 0.85:  # a named quantity, unbound: only expectations part it from others
        claim["quantity"] = "depth-optimum"
        low = rng.choice([4, 12, 20, 30])
        claim["expect"] = {"metric": "depth", "op": "between", "value": [low, low + rng.choice([4, 10])]}
    else:  # true/false on a named quantity
        claim["quantity"] = "beats-baseline"
        claim["expect"] = {"metric": "better", "op": "==", "value": rng.random() < 0.5}
    if rng.random() < 0.3:  # a stated size: smoke evidence (no size) is then only a proxy of it
        claim["scale"] = {"parameters": rng.choice([8e6, 1.2e7, 6.5e8])}
    if rng.random() < 0.4:
        claim["subject"] = {"family": rng.choice(["ESM-2", "esm-2 ", "ProGen2"])}
    return claim


def write_vault(papers: Path, *, notes: int, seed: int, lower_bounds_only: bool = False) -> None:
    """``notes`` notes of one to four claims each (JSON is YAML: the frontmatter is written as JSON)."""
    rng = random.Random(seed)
    papers.mkdir(parents=True, exist_ok=True)
    for n in range(notes):
        claims = [_claim(rng, i, lower_bounds_only) for i in range(rng.randint(1, 4))]
        front = {"paper_id": f"gen:{n}", "title": f"Generated note {n}", "claims": claims}
        (papers / f"gen-{n:03d}.md").write_text(f"---\n{json.dumps(front, indent=1)}\n---\nbody\n", encoding="utf-8")


def run_some(kb: KnowledgeBase) -> tuple[list[ClaimRef], dict[str, Deciding]]:
    """Index the vault and run one bound claim (at the default preset) at each of ``RUN_VALUES`` through the real
    queue; the indexed claims and each one's current evidence."""
    kb.index()
    refs = indexed_claims(kb.engine)
    bound = [r.key for r in refs if r.claim.analyzer is not None and r.claim.analyzer.scale != "slow"]
    for i, value in enumerate(RUN_VALUES):
        queued, skipped = kb.verify([bound[7 * i]], operator_params={"value": value})
        assert queued and not skipped
    assert kb.work() == {"succeeded": len(RUN_VALUES)}
    return refs, {key: pair[0] for key, pair in current_evidence(kb.engine, refs).items()}


@dataclass(frozen=True)
class Found:
    """A tension as both computations must give it: what it is, who split it, how it stands."""

    id: str
    kind: str
    a: str
    b: str
    split_by: str | None
    state: str


def found(tension: Tension) -> Found:
    return Found(tension.id, tension.kind, tension.a.key, tension.b.key, tension.split_by, tension.state.text)


def _splits(x: ClaimRef, y: ClaimRef, record: Deciding) -> bool:
    if not record.results:
        return False
    kinds = {evaluate(x.claim, record.results, record.scale).kind, evaluate(y.claim, record.results, record.scale).kind}
    return kinds == SPLIT


def _tension(x: ClaimRef, y: ClaimRef, evidence: dict[str, Deciding]) -> Tension | None:
    """The tension between two claims of different notes on one quantity, or None: the module's definition."""
    if incomparable_reason(x.about, y.about) is not None:
        return None
    a, b = (x, y) if x.key < y.key else (y, x)
    ident = tension_id(a.key, b.key)
    if a.accepts is not None and b.accepts is not None and not a.accepts.intersects(b.accepts):
        return Tension(ident, "expectations", a, b)
    for owner in (a, b):  # the first claim, in key order, whose own record splits them names the run
        record = evidence.get(owner.key)
        if record is not None and _splits(a, b, record):
            return Tension(ident, "evidence", a, b, split_by=f"{record.run_id[:12]} ({owner.key})")
    return None


def _judged(tension: Tension, evidence: dict[str, Deciding]) -> Found:
    tension.evidence = {ref.key: evidence[ref.key] for ref in (tension.a, tension.b) if ref.key in evidence}
    tension.state = state_of(tension)  # evaluate per tension, nothing remembered
    return found(tension)


def brute_force(refs: list[ClaimRef], evidence: dict[str, Deciding]) -> list[Found]:
    """Every tension among ``refs``, each pair judged in full, in ``find``'s order (quantity, id)."""
    tensions = []
    for i, x in enumerate(refs):
        for y in refs[i + 1:]:
            if x.note_id == y.note_id or (x.about.quantity or "").casefold() != (y.about.quantity or "").casefold():
                continue
            if (tension := _tension(x, y, evidence)) is not None:
                tensions.append(tension)
    tensions.sort(key=lambda t: (t.quantity, t.id))
    return [_judged(t, evidence) for t in tensions]


def within_cap(refs: list[ClaimRef], evidence: dict[str, Deciding], max_pairs: int) -> tuple[list[Found], int]:
    """For claims whose expectations all overlap (no pair is examined for them): the tensions among the first
    ``max_pairs`` pairs examined (each claim with a record that decides it, in key order, against every claim
    of another note that states an expectation, in key order), and how many pairs all of them are."""
    pairs: list[tuple[ClaimRef, ClaimRef]] = []
    for x in refs:
        record = evidence.get(x.key)
        if record is None or not record.results:
            continue
        if evaluate(x.claim, record.results, record.scale).kind in SPLIT:
            pairs += [(x, y) for y in refs if y.note_id != x.note_id and y.claim.expect is not None]
    tensions: dict[str, Tension] = {}
    for x, y in pairs[:max_pairs]:
        record = evidence[x.key]
        a, b = (x, y) if x.key < y.key else (y, x)
        ident = tension_id(a.key, b.key)
        if ident not in tensions and incomparable_reason(x.about, y.about) is None and _splits(x, y, record):
            tensions[ident] = Tension(ident, "evidence", a, b, split_by=f"{record.run_id[:12]} ({x.key})")
    ordered = sorted(tensions.values(), key=lambda t: (t.quantity, t.id))
    return [_judged(t, evidence) for t in ordered], len(pairs)
