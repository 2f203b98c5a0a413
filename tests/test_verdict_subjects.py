"""Scale and subject are part of the claim, and tensions read only the deciding evidence (issue 35), through the real
builders (``probe_checks`` / ``result_record`` for a depth probe), ``kb.evidence.verdicts.evaluate`` and
``kb.evidence.tensions``: each rule with a case that must be held a proxy (or open) and one that must settle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from analyzers.base import result_record
from analyzers.depth.compute import probe_checks
from analyzers.depth.spec import DepthProbe, DepthProbeResult
from analyzers.depth.uncertainty import probe_estimates
from analyzers.langevin.structure import shipped_contact_map
from kb.evidence.claim_states import ClaimState, verdict_state
from kb.evidence.subjects import about, structures
from kb.evidence.tensions import ClaimRef, Deciding, Outcome, Tension, state_of, tension_id
from kb.evidence.verdicts import accepted, evaluate, proxy_reason
from kb.notes.files import read_note
from schemas import Claim, EvidenceScale, Verdict, VerdictKind
from tests.helpers.langevin_records import sweep_record

TOY = EvidenceScale(name="smoke", parameters=2.07e5, data="8 sequences from designed.fasta")


def toy_probe() -> dict[str, Any]:
    """A 207k-parameter toy model's probe whose stable rank retention is resolved well above 0.45."""
    values = torch.tensor([0.80, 0.82, 0.78, 0.81, 0.79, 0.80] * 5, dtype=torch.float64)
    rows = {"stable_rank_retention": (values, torch.ones_like(values)),
            "baseline_accuracy": (torch.full_like(values, 0.5), torch.ones_like(values))}
    estimates: dict[str, tuple[Any, Any]] = dict(probe_estimates(rows, 4))
    metrics: dict[str, Any] = {name: None for name in DepthProbe.metrics if not name.endswith("_by_model")}
    metrics |= {"stable_rank_retention": float(estimates["stable_rank_retention"][0]), "baseline_accuracy": 0.5}
    return result_record(DepthProbeResult(**metrics, model="builtin:tiny", num_layers=4, layers={}, scale=TOY,
                                          checks=probe_checks(0.5, 0.05, estimates, len(values))))


def claim(scale: dict[str, Any] | None = None, claim_id: str = "c", op: str = ">=", value: float = 0.45,
          binding: dict[str, Any] | None = None) -> Claim:
    return Claim.model_validate({"id": claim_id, "statement": "s", "scale": scale, "analyzer": binding,
                                 "expect": {"metric": "stable_rank_retention", "op": op, "value": value}})


def test_a_claim_without_a_scale_is_not_settled_by_a_toy_model_and_says_how_to_set_one() -> None:
    verdict = evaluate(claim(), [toy_probe()], TOY)
    assert verdict.kind is VerdictKind.inconclusive and verdict.proxy, verdict.reason
    assert "at 'smoke' only: the claim states no scale" in verdict.reason
    assert "kb set NOTE claims.c.scale.parameters=N" in verdict.reason
    assert verdict_state(verdict) is ClaimState.consistent_proxy  # shown as a proxy, leaning its way


def test_the_same_evidence_settles_a_claim_about_the_toy_models_own_size() -> None:
    verdict = evaluate(claim({"parameters": 2e5}), [toy_probe()], TOY)
    assert verdict.kind is VerdictKind.supported and not verdict.proxy, verdict.reason


def test_a_size_beyond_the_tension_factor_either_way_is_another_subject() -> None:
    larger = evaluate(claim({"parameters": 2e5}), [toy_probe()], EvidenceScale(name="paper", parameters=3e9))
    assert larger.kind is VerdictKind.inconclusive and larger.proxy and "different sizes" in larger.reason
    smaller = evaluate(claim({"parameters": 6.5e8}), [toy_probe()], TOY)
    assert smaller.kind is VerdictKind.inconclusive and "different sizes" in smaller.reason
    within = evaluate(claim({"parameters": 3e5}), [toy_probe()], TOY)  # 1.45x: the same size as tensions read it
    assert within.kind is VerdictKind.supported


def test_a_run_on_another_structure_is_a_proxy_of_a_claim_about_the_papers_structure() -> None:
    paper = {"parameters": 2e5, "data": "12,000 sequences designed on the 2ABD contact map"}
    shipped = TOY.model_copy(update={"data": "1200 designed sequences on 1ubi.cif model 1 chain A (76 residues)"})
    verdict = evaluate(claim(paper), [toy_probe()], shipped)
    assert verdict.kind is VerdictKind.inconclusive and verdict.proxy
    assert "different structures (2ABD / 1UBI)" in verdict.reason
    same = TOY.model_copy(update={"data": "1200 designed sequences on 2abd.cif model 1 chain A"})
    assert evaluate(claim(paper), [toy_probe()], same).kind is VerdictKind.supported


LANGEVIN = Path(__file__).resolve().parents[1] / "papers" / "sampling-intermediate-temperatures-langevin.md"


def test_a_run_on_the_shipped_1ubi_is_a_proxy_of_every_langevin_claim_about_2abd() -> None:
    """The shipped structure's name (the run's data description) names 1UBI and no other entry, so each Langevin
    claim, about sequences designed on 2ABD, reads a run on it as a proxy; a run on 2ABD settles (issue 37)."""
    source = shipped_contact_map().source
    assert structures(source) == {"1ubi"}
    claims = read_note(LANGEVIN).meta.claims
    assert len(claims) == 3
    on_1ubi, on_2abd = (f"1000 designed sequences on {where}" for where in (source, "2abd.cif model 1 chain A"))
    for found in claims:
        assert found.scale is not None and structures(found.scale.data) == {"2abd"}, found.id
        scale = EvidenceScale(name="small", parameters=found.scale.parameters, data=on_1ubi)
        assert proxy_reason(found, scale) == ("on another subject than the claim's: different structures "
                                              "(2ABD / 1UBI) (claim / evidence)"), found.id
        assert proxy_reason(found, scale.model_copy(update={"data": on_2abd})) is None, found.id
    generalization = next(c for c in claims if c.id == "generalization-min-intermediate-t")
    record = sweep_record([0.80, 0.70, 0.60, 0.72, 0.81])  # a resolved interior minimum: supported on 2ABD
    assert generalization.scale is not None
    size = generalization.scale.parameters
    proxy = evaluate(generalization, [record], EvidenceScale(name="small", parameters=size, data=on_1ubi))
    assert proxy.kind is VerdictKind.inconclusive and proxy.proxy, proxy.reason
    assert "different structures (2ABD / 1UBI)" in proxy.reason
    own = evaluate(generalization, [record], EvidenceScale(name="small", parameters=size, data=on_2abd))
    assert own.kind is VerdictKind.supported and not own.proxy, own.reason


def test_structures_are_pdb_entries_not_sizes() -> None:
    assert structures("ESM-2 650M on 2ABD, 100k steps, 4hhb.cif") == {"2abd", "4hhb"}
    assert structures("ESM-2 family (8M to 15B), 1200 sequences") == frozenset()


# -- tensions: only the evidence at the preset the settle plan names decides --------------------------------

def ref(claim_: Claim, note: str) -> ClaimRef:
    assert claim_.expect is not None
    return ClaimRef(f"{note}#{claim_.id}", note, claim_, about(claim_), accepted(claim_.expect))


def tension_with(evidence_preset: str) -> Tension:
    binding = {"name": "depth.probe", "scale": "paper"}
    a = ref(claim({"parameters": 2e5}, "a", ">=", 0.7, binding), "n1")
    b = ref(claim({"parameters": 2e5}, "b", "<", 0.5, binding), "n2")
    scale = TOY.model_copy(update={"name": evidence_preset})
    deciding = Deciding(a.key, "run", 1, [toy_probe()], scale, None)
    return Tension(tension_id(a.key, b.key), "expectations", a, b, evidence={a.key: deciding})


def test_a_tension_is_open_while_its_only_evidence_is_at_another_preset() -> None:
    state = state_of(tension_with("smoke"))
    assert state.outcome is Outcome.open and state.deciding is None
    assert state.text.startswith("open: no evidence at 'paper' (only at 'smoke'")


def test_a_tension_is_settled_by_evidence_at_the_planned_preset() -> None:
    state = state_of(tension_with("paper"))
    assert state.outcome is Outcome.settled_a, state.text


def test_a_tension_whose_deciding_run_cannot_start_here_says_so() -> None:
    # A run that could not start reports no scale of its own: it is the planned run saying why, not evidence
    # at another preset; a smoke run that did run (at 'smoke') still decides nothing.
    tension = tension_with("smoke")
    (key,) = tension.evidence
    blocked = Verdict(kind=VerdictKind.not_runnable, reason="needs a GPU")
    tension.evidence[key] = Deciding(key, "run-2", 2, [], EvidenceScale(name="unknown"), blocked)
    state = state_of(tension)
    assert state.outcome is Outcome.open and state.text == "open: the deciding run is not runnable here (needs a GPU)"
    assert state_of(tension_with("smoke")).text.startswith("open: no evidence at 'paper' (only at 'smoke'")
