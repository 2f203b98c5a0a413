"""``kb.evidence.tensions.find`` at scale gives exactly the tensions of the full computation
(``tests/helpers/tension_vault.py``: every pair judged in full) on generated vaults with real noop runs: several
quantities, agreeing and disagreeing claims, stated and unstated scales, other presets; under the pair cap the
same pairs are examined, in the same order; and ``verdict_inputs`` holds all that a verdict's kind depends on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.core import KnowledgeBase
from kb.evidence import tensions as tensions_mod
from kb.evidence.verdicts import evaluate, verdict_inputs
from kb.settings import Settings
from schemas import Claim, EvidenceScale
from tests.helpers.tension_vault import brute_force, found, run_some, within_cap, write_vault

Vault = tuple[KnowledgeBase, list[tensions_mod.ClaimRef], dict[str, tensions_mod.Deciding]]


def _vault(folder: Path, *, notes: int, seed: int, lower_bounds_only: bool = False) -> Vault:
    """A generated vault, indexed, with a run of one bound claim at each of ``RUN_VALUES``."""
    write_vault(folder / "papers", notes=notes, seed=seed, lower_bounds_only=lower_bounds_only)
    kb = KnowledgeBase(Settings(papers=folder / "papers", home=folder / "home"))
    return kb, *run_some(kb)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Vault:
    return _vault(tmp_path_factory.mktemp("mixed"), notes=40, seed=3)


@pytest.fixture(scope="module")
def lower_bounds(tmp_path_factory: pytest.TempPathFactory) -> Vault:
    return _vault(tmp_path_factory.mktemp("lower"), notes=30, seed=5, lower_bounds_only=True)


def test_find_gives_exactly_the_full_computations_tensions(mixed: Vault) -> None:
    kb, refs, evidence = mixed
    expected = brute_force(refs, evidence)
    listed = tensions_mod.find(kb.engine, max_pairs=10**9)
    assert not listed.capped and [found(t) for t in listed] == expected
    # The case has power: both kinds, several quantities, settled and open states, proxies and other presets.
    assert {f.kind for f in expected} == {"expectations", "evidence"}
    assert {t.quantity for t in listed} >= {"noop:value", "depth-optimum", "beats-baseline"}
    states = {f.state.split(":")[0] for f in expected}
    assert {"settled for A", "settled for B", "open"} <= states, states
    assert any("proxy" in f.state for f in expected)
    why_not = {tensions_mod.incomparable_reason(x.about, y.about) or "" for x in refs for y in refs}
    assert any("scale presets" in w for w in why_not) and any("families" in w for w in why_not)


def test_settle_plans_and_ids_are_those_a_sort_gives(mixed: Vault) -> None:
    """``settle_plan`` ranks a tension's claims as a stable sort by width does (the bolder first, A on a tie),
    and an id is the SHA-256 of the two keys in sorted order: both are written without a sort per tension, which
    the brute force shares, so they are checked here against the sorts themselves."""
    import hashlib
    import math

    kb, _, _ = mixed
    listed = tensions_mod.find(kb.engine, max_pairs=10**9)
    ranks = set()
    for tension in listed:
        def width(ref: tensions_mod.ClaimRef) -> float:
            return ref.accepts.width() if ref.accepts is not None else math.inf

        ranked = sorted((tension.a, tension.b), key=width)
        bound = [r for r in ranked if r.claim.analyzer is not None]
        preset = ranked[0].about.preset or ranked[1].about.preset
        plan = tensions_mod.settle_plan(tension)
        assert (plan.claim_key, plan.preset) == ((bound[0].key, preset) if bound else (None, None)), tension.id
        ranks.add((width(tension.a) > width(tension.b), width(tension.a) == width(tension.b)))
        keys = "|".join(sorted((tension.a.key, tension.b.key)))
        assert tension.id == "t-" + hashlib.sha256(keys.encode()).hexdigest()
        assert tensions_mod.tension_id(tension.b.key, tension.a.key) == tension.id
    assert ranks == {(True, False), (False, True), (False, False)}  # B bolder, a tie, A bolder: all three


def test_a_notes_tensions_are_the_full_listings_of_its_claims(mixed: Vault) -> None:
    kb, refs, _ = mixed
    everything = [found(t) for t in tensions_mod.find(kb.engine, max_pairs=10**9)]
    for note in sorted({r.note_id for r in refs})[::6]:
        keys = {r.key for r in refs if r.note_id == note}
        mine = tensions_mod.find(kb.engine, max_pairs=10**9, involving=keys)
        assert [found(t) for t in mine] == [f for f in everything if {f.a, f.b} & keys], note


def test_the_cap_stops_at_the_same_pair_as_examining_them_one_by_one(lower_bounds: Vault) -> None:
    kb, refs, evidence = lower_bounds
    everything, pairs = within_cap(refs, evidence, 10**9)
    assert len(everything) > 20 and pairs > 200  # every tension here is one a record splits
    assert [found(t) for t in tensions_mod.find(kb.engine, max_pairs=10**9)] == everything
    for cap in (0, 1, pairs // 7, pairs // 3, pairs // 2 + 1, pairs - 1, pairs):
        listed = tensions_mod.find(kb.engine, max_pairs=cap)
        assert [found(t) for t in listed] == within_cap(refs, evidence, cap)[0], cap
        assert listed.capped == (["noop:value"] if cap < pairs else []), cap


# -- what a verdict's kind depends on -------------------------------------------------------------------------

EXPECTS = st.one_of(
    st.builds(lambda op, v, band: {"metric": "value", "op": op, "value": v, "inconclusive_band": band},
              st.sampled_from([">", ">=", "<", "<=", "=="]), st.sampled_from([1, 2, 2.0, 2.5]),
              st.sampled_from([0, 0.5])),
    st.builds(lambda low, width: {"metric": "value", "op": "between", "value": [low, low + width]},
              st.sampled_from([1, 2]), st.sampled_from([0, 0.5, 1])),
    st.builds(lambda v, tol: {"metric": "value", "op": "approx", "value": v, "tolerance": tol},
              st.sampled_from([1.5, 2]), st.sampled_from([0.2, 1])),
)
# Sizes and data naming PDB entries: subjects the evidence's can differ from (kb.evidence.subjects).
SCALES = st.sampled_from([None, {"parameters": 6.5e8}, {"parameters": 6.5e8, "data": "1UBI chain A"},
                          {"parameters": 8e6, "description": "a note"}])
SUBJECTS = st.sampled_from([None, {"data": "2ABD"}, {"data": "1ubi"}, {"family": "ESM-2"}])
PAPER = EvidenceScale(name="paper", parameters=6.5e8, data="1UBI")
EVIDENCE_SCALES = st.sampled_from([None, EvidenceScale(name="smoke"), PAPER, PAPER])


def _with(claim: dict[str, Any], **other: Any) -> Claim:
    return Claim.model_validate({**claim, **other})


@settings(max_examples=150, deadline=None)
@given(expect=EXPECTS, scale=SCALES, subject=SUBJECTS, value=st.sampled_from([0.5, 1.5, 2.0, 2.5, 3.5]),
       evidence_scale=EVIDENCE_SCALES, ident=st.sampled_from(["c", "other-id"]),
       preset=st.sampled_from([None, "smoke", "paper"]))
def test_claims_with_equal_verdict_inputs_get_one_kind(expect: dict[str, Any], scale: dict[str, Any] | None,
                                                       subject: dict[str, Any] | None, value: float,
                                                       evidence_scale: EvidenceScale | None, ident: str,
                                                       preset: str | None) -> None:
    """Every field of a claim outside ``verdict_inputs`` (id, statement, binding, quantity, condition, source,
    a scale's description) changed, the kind on the same evidence stays; the inputs themselves stay equal."""
    base = {"id": "c", "statement": "s", "analyzer": {"name": "noop"}, "expect": expect, "scale": scale,
            "subject": subject}
    claim = _with(base)
    other = _with(base, id=ident, statement="another statement", kind="quantitative",
                  analyzer={"name": "noop", "params": {"value": 9}, "scale": preset or "smoke"},
                  quantity={"name": "renamed", "unit": "layers"}, source={"quote": "q", "page": 3},
                  condition={"scale": preset} if preset else None,
                  scale={**scale, "description": "said differently"} if scale else None)
    assert verdict_inputs(other) == verdict_inputs(claim)
    results = [{"value": value, "checks": {"value": {"exact": True}}}]
    assert evaluate(other, results, evidence_scale).kind == evaluate(claim, results, evidence_scale).kind


@settings(max_examples=300, deadline=None)
@given(expect=EXPECTS, other=st.one_of(st.sampled_from(["same", 0, 0.5]), EXPECTS), scales=st.tuples(SCALES, SCALES),
       subjects=st.tuples(SUBJECTS, SUBJECTS), value=st.sampled_from([0.5, 1.5, 2.0, 2.5]),
       evidence_scale=EVIDENCE_SCALES)
def test_claims_judged_differently_have_different_verdict_inputs(
        expect: dict[str, Any], other: str | float | dict[str, Any], scales: tuple[Any, Any], subjects: tuple[Any, Any],
        value: float, evidence_scale: EvidenceScale | None) -> None:
    """The other way: no two claims that one record judges differently share their inputs (a key that left out
    what ``evaluate`` reads would merge them). The second claim's expectation is the first's, the first's with a
    band of 0 or 0.5, or another one."""
    second_expect = expect if other == "same" else {**expect, "inconclusive_band": other} if isinstance(
        other, float | int) else other
    first = _with({"id": "c", "statement": "s", "expect": expect, "scale": scales[0], "subject": subjects[0]})
    second = _with({"id": "d", "statement": "s", "expect": second_expect, "scale": scales[1],
                    "subject": subjects[1]})
    results = [{"value": value, "checks": {"value": {"exact": True}}}]
    if evaluate(first, results, evidence_scale).kind != evaluate(second, results, evidence_scale).kind:
        assert verdict_inputs(first) != verdict_inputs(second)
