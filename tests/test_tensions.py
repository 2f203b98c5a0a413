"""Tensions between notes (``kb.evidence.tensions``): the comparable rule, each kind of tension, a tension's state after
evidence for each outcome (real noop runs through the queue and the one verdict rule), the CLI (``kb tensions``,
``kb verify --tension``, ``kb show``), the bundled library's real tension, and the agents' proposals between
qualitative claims (a scripted fake chat model) against the offline fallback that proposes none."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from kb.agents.tension_finder import PROPOSED_LABEL, propose_tensions
from kb.core import KnowledgeBase
from kb.evidence import tensions as tensions_mod
from kb.evidence.tensions import Deciding, Outcome, about, comparable, incomparable_reason, judge, tension_id
from kb.evidence.verdicts import accepted
from kb.notes.files import NoteError, read_note
from kb.settings import Settings
from schemas import Claim, EvidenceScale, Expectation
from tests.helpers.chat import call, scripted
from tests.helpers.cli import run_kb

ROOT = Path(__file__).resolve().parents[1]
BUNDLED_A = "reading-group-depth-shallow-plms#deeper-worse-past-12"
BUNDLED_B = "siji-2026-analysis-note-arxiv-2502-00001#optimal-depth-24-36"


def claim(**fields: Any) -> Claim:
    """A claim bound to noop's ``value`` unless the fields say otherwise."""
    base: dict[str, Any] = {"id": "c", "statement": "s", "analyzer": {"name": "noop"},
                            "expect": {"metric": "value", "op": ">", "value": 0}}
    return Claim.model_validate({**base, **fields})


def expect(op: str, value: Any, **more: Any) -> Expectation:
    return Expectation.model_validate({"metric": "value", "op": op, "value": value, **more})


# -- what a claim is about, and the comparable rule -------------------------------------------------------------

def test_about_defaults_come_from_the_binding_and_the_claims_scale() -> None:
    found = about(claim(analyzer={"name": "depth.probe", "scale": "smoke", "settled_by": "paper"},
                        expect={"metric": "stable_rank_retention", "op": ">", "value": 0},
                        scale={"parameters": 6.5e8, "data": "UniRef50"}))
    assert (found.quantity, found.preset, found.parameters, found.data) == (
        "depth.probe:stable_rank_retention", "paper", 6.5e8, "UniRef50")
    # A note's own fields win over the defaults; a named quantity needs no analyzer.
    own = about(claim(analyzer=None, expect=None, quantity={"name": "downstream-gain", "unit": "%"},
                      subject={"family": "ESM-2", "objective": "masked", "parameters": 3e9},
                      condition={"scale": "paper", "budget": [1e20, 2e20]}, scale={"parameters": 6.5e8}))
    assert (own.quantity, own.unit, own.family, own.objective, own.parameters, own.budget) == (
        "downstream-gain", "%", "ESM-2", "masked", 3e9, (1e20, 2e20))
    assert about(claim(quantity="named-only")).quantity == "named-only"  # a bare name is a quantity too


@pytest.mark.parametrize(("a", "b", "why"), [
    ({}, {}, None),
    ({"subject": {"family": "ESM-2"}}, {"subject": {"family": "esm-2 "}}, None),  # case and spaces do not count
    ({"subject": {"family": "ESM-2"}}, {"subject": {"family": "ProGen2"}}, "different families"),
    ({"subject": {"family": "ESM-2"}}, {}, None),  # a field one claim leaves open constrains nothing
    ({"subject": {"objective": "masked"}}, {"subject": {"objective": "autoregressive"}}, "different objectives"),
    ({"scale": {"parameters": 6.5e8}}, {"scale": {"parameters": 7e8}}, None),
    ({"scale": {"parameters": 6.5e8}}, {"scale": {"parameters": 3e9}}, "different sizes"),
    ({"scale": {"data": "UniRef50"}}, {"scale": {"data": "UniRef90"}}, "different data"),
    ({"quantity": {"name": "noop:value", "unit": "layers"}}, {"quantity": {"name": "noop:value", "unit": "%"}},
     "different units"),
    ({"analyzer": {"name": "noop", "scale": "smoke"}}, {"analyzer": {"name": "noop", "scale": "slow"}},
     "different scale presets"),
    ({"condition": {"budget": [1, 5]}}, {"condition": {"budget": 4}}, None),
    ({"condition": {"budget": [1, 5]}}, {"condition": {"budget": [6, 9]}}, "budgets that do not overlap"),
    ({"expect": {"metric": "other", "op": ">", "value": 0}}, {}, "different quantities"),
])
def test_comparable_rule(a: dict[str, Any], b: dict[str, Any], why: str | None) -> None:
    first, second = claim(**a), claim(**b)
    reason = incomparable_reason(about(first), about(second))
    assert (reason is None) == (why is None) and comparable(first, second) == (why is None)
    if why is not None:
        assert reason is not None and reason.startswith(why), reason


def test_a_claim_without_quantity_compares_with_nothing() -> None:
    unbound = claim(analyzer=None, expect=None)
    assert about(unbound).quantity is None and not comparable(unbound, unbound)


@pytest.mark.parametrize(("a", "b", "disjoint"), [
    (("between", [24, 36]), ("<=", 12), True),  # the bundled tension
    (("between", [24, 36]), (">", 30), False),  # 'between' against '>' overlapping
    (("between", [24, 36]), (">", 36), True),  # touching at an open end
    (("between", [24, 36]), (">=", 36), False),  # touching at two closed ends: 36 satisfies both
    ((">", 0), ("<", 0), True),  # opposite directions
    ((">=", 0), ("<=", 0), False),
    ((">", 0), ("<=", 0), True),
    (("==", 24), ("==", 36), True),  # '==' on different values
    (("==", 24), ("between", [24, 36]), False),
    (("approx", 0.45, {"tolerance": 0.1}), (">", 0.6), True),
    (("approx", 0.45, {"rel_tolerance": 0.5}), (">", 0.6), False),
    (("==", True), ("==", False), True),
    (("==", "masked"), ("==", "masked"), False),
    (("==", True), ("==", "true"), False),  # text against true/false cannot be told apart: no tension
])
def test_accepted_values_intersect_or_not(a: tuple[Any, ...], b: tuple[Any, ...], disjoint: bool) -> None:
    first = accepted(expect(a[0], a[1], **(a[2] if len(a) > 2 else {})))
    second = accepted(expect(b[0], b[1], **(b[2] if len(b) > 2 else {})))
    assert first.intersects(second) is not disjoint and second.intersects(first) is not disjoint


def test_tension_ids_are_stable_and_ignore_order() -> None:
    assert tension_id("a#x", "b#y") == tension_id("b#y", "a#x") == "t-" + __import__("hashlib").sha256(
        b"a#x|b#y").hexdigest()
    assert tension_id("a#x", "b#z") != tension_id("a#x", "b#y")


# -- the state rule on constructed evidence ---------------------------------------------------------------------

WIDE = claim(id="a", expect={"metric": "value", "op": "between", "value": [24, 36]})
SHALLOW = claim(id="b", expect={"metric": "value", "op": "<=", "value": 12})


def deciding(value: float, stderr: float | None = None, *, parameters: float | None = None) -> Deciding:
    check = {"stderr": stderr, "units": 40} if stderr is not None else {"exact": True}  # 40 sequences: t(39)
    result = {"value": value, "checks": {"value": check}}
    return Deciding("n#a", "run", 1, [result], EvidenceScale(name="smoke", parameters=parameters), None)


@pytest.mark.parametrize(("value", "outcome", "text"), [
    (30.0, Outcome.settled_a, "settled for A"),
    (10.0, Outcome.settled_b, "settled for B"),
    (20.0, Outcome.both_wrong, "both wrong"),
])
def test_judge_each_outcome_through_the_verdict_rule(value: float, outcome: Outcome, text: str) -> None:
    state = judge(WIDE, SHALLOW, deciding(value))
    assert state.outcome is outcome and state.text == text
    assert state.verdicts is not None and all(v.observed == value for v in state.verdicts)


def test_judge_is_open_with_why_when_the_interval_straddles_or_the_evidence_is_a_proxy() -> None:
    straddles = judge(WIDE, SHALLOW, deciding(12.5, stderr=1.0))  # 12.5 +- 1.96: B's threshold inside
    assert straddles.outcome is Outcome.open and straddles.text.startswith("open: B reads inconclusive")
    assert "straddles" in straddles.text
    big = claim(id="a", expect={"metric": "value", "op": "between", "value": [24, 36]},
                scale={"parameters": 6.5e8})
    proxy = judge(big, SHALLOW, deciding(30.0, parameters=1e4))  # A would be supported, but by a tiny proxy
    assert proxy.outcome is Outcome.open and proxy.text.startswith("open: A reads consistent (proxy)")


# -- tensions in a knowledge base ------------------------------------------------------------------------------

def note(paper_id: str, *claims: str) -> str:
    body = "".join(textwrap.indent(textwrap.dedent(c), "  ") for c in claims)
    return f'---\npaper_id: "{paper_id}"\ntitle: "{paper_id}"\nclaims:\n{body}---\nbody\n'


def noop_claim(ident: str, op: str, value: Any, extra: str = "subject: {family: ESM-2}\n",
               params: str = "{value: 1}") -> str:
    return textwrap.dedent(f"""\
        - id: {ident}
          statement: "The value is {op} {value}."
          kind: quantitative
          source: {{quote: "the value is {op} {value}"}}
          analyzer: {{name: noop, params: {params}}}
          expect: {{metric: value, op: "{op}", value: {json.dumps(value)}}}
        """) + textwrap.indent(textwrap.dedent(extra), "  ")


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    papers = tmp_path / "papers"
    papers.mkdir()
    notes = {
        "wide": note("t:wide", noop_claim("range", "between", [24, 36])),
        # 'own-range' cannot hold with its own note's 'at-most': not a tension (they are one note's claims)
        "shallow": note("t:shallow", noop_claim("at-most", "<=", 12), noop_claim("own-range", "between", [24, 36])),
        "upper": note("t:upper", noop_claim("above", ">", 30)),  # overlaps 'range': evidence may split them
        "restates": note("t:restates", noop_claim("also-range", "between", [20, 40])),
        "other-family": note("t:family", noop_claim("at-most", "<=", 12, "subject: {family: ProGen2}\n")),
    }
    for name, text in notes.items():
        (papers / f"{name}.md").write_text(text, encoding="utf-8")
    knowledge = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
    knowledge.index()
    return knowledge


def pairs(found: list[tensions_mod.Tension]) -> dict[tuple[str, str], str]:
    return {(t.a.key, t.b.key): t.kind for t in found}


def test_find_expectation_tensions_only_across_comparable_notes(kb: KnowledgeBase) -> None:
    found = kb.tensions()
    assert pairs(found) == {("shallow#at-most", "wide#range"): "expectations",
                            ("restates#also-range", "shallow#at-most"): "expectations",
                            ("shallow#at-most", "upper#above"): "expectations"}
    # Not: 'at-most' against its own note's range, the ProGen2 claim (another family), the ranges that overlap.
    (first,) = [t for t in found if t.b.key == "wide#range"]
    assert first.id == tension_id("wide#range", "shallow#at-most") and "no value satisfies both" in first.why
    assert first.state.outcome is Outcome.open and "no current evidence yet" in first.state.text
    assert tensions_mod.record(first)["a"]["quote"] == "the value is <= 12"


def test_one_evidence_record_that_splits_overlapping_claims_is_a_tension(kb: KnowledgeBase) -> None:
    queued, _ = kb.verify(["wide#range"], operator_params={"value": 26})
    assert len(queued) == 1 and kb.work() == {"succeeded": 1}
    found = {(t.a.key, t.b.key): t for t in kb.tensions()}
    split = found[("upper#above", "wide#range")]  # 26 is inside [24, 36] and not above 30
    assert split.kind == "evidence" and split.state.outcome is Outcome.settled_b
    assert split.state.deciding is not None and split.state.deciding.run_id == queued[0].id
    assert ("restates#also-range", "wide#range") not in found  # 26 satisfies both: they merely agree


def test_verify_tension_settles_each_way_through_real_runs(kb: KnowledgeBase) -> None:
    ident = tension_id("wide#range", "shallow#at-most")
    plan = tensions_mod.settle_plan(tensions_mod.get(kb.engine, ident))  # type: ignore[arg-type]
    assert plan.claim_key == "wide#range"  # the bolder claim: [24, 36] accepts fewer values than <= 12
    for value, outcome, text in ((30, Outcome.settled_b, "settled for B"), (10, Outcome.settled_a, "settled for A"),
                                 (20, Outcome.both_wrong, "both wrong")):
        queued, skipped = kb.verify_tension(ident, operator_params={"value": value})
        assert len(queued) == 1 and not skipped and queued[0].claim_key == "wide#range"
        assert kb.work() == {"succeeded": 1}
        tension = tensions_mod.get(kb.engine, ident)
        assert tension is not None and tension.state.outcome is outcome and tension.state.text == text
        assert tension.state.deciding is not None and tension.state.deciding.run_id == queued[0].id


def test_verify_tension_refuses_an_unknown_id(kb: KnowledgeBase) -> None:
    with pytest.raises(NoteError, match="kb tensions"):
        kb.verify_tension("t-0000000000")


# -- the CLI on the bundled library ---------------------------------------------------------------------------

def invoke(papers: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_kb(papers, home, *args)


def test_cli_tensions_json_shows_the_bundled_depth_tension(kb_dirs: tuple[Path, Path]) -> None:
    papers, home = kb_dirs
    result = invoke(papers, home, "tensions", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = json.loads(result.stdout)
    (row,) = [r for r in rows if {r["a"]["key"], r["b"]["key"]} == {BUNDLED_A, BUNDLED_B}]
    assert row["id"] == tension_id(BUNDLED_A, BUNDLED_B) and row["kind"] == "expectations"
    assert row["quantity"] == "depth.sweep:best_depth" and row["state"] == "open"
    assert row["a"]["quote"] == "deeper is worse past 12 layers" and row["a"]["section"] == "Position argued"
    assert row["b"]["quote"] == "PLM (ESM-style) | 24-36 | ~36 层" and row["b"]["accepts"] == "[24, 36]"
    assert row["settle"] == {"claim": BUNDLED_B, "scale": "paper", "why_not": None}
    # The two notes' perplexity claims say the same thing: no tension between them.
    assert not [r for r in rows if r["quantity"] == "depth.sweep:perplexity_fall_and_rise"]
    plain = invoke(papers, home, "tensions")
    assert plain.returncode == 0 and row["id"] in plain.stdout and "deeper is worse past 12 layers" in plain.stdout


def test_cli_verify_tension_queue_only_and_show_marks_the_claim(kb_dirs: tuple[Path, Path]) -> None:
    papers, home = kb_dirs
    ident = tension_id(BUNDLED_A, BUNDLED_B)
    result = invoke(papers, home, "verify", "--tension", ident, "--queue-only", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    (row,) = [json.loads(line) for line in result.stdout.splitlines()]  # JSON Lines: one run queued
    assert row["id"] == BUNDLED_B and row["status"] == "queued" and row["analyzer"] == "depth.sweep"
    kb = KnowledgeBase(Settings(papers=papers, home=home))
    (run,) = kb.runs()
    assert run.claim_key == BUNDLED_B and run.params["depths"] == [6, 12, 24, 36, 48]  # the paper preset
    unknown = invoke(papers, home, "verify", "--tension", "t-nope", "--queue-only")
    assert unknown.returncode == 1 and "kb tensions" in unknown.stderr
    shown = invoke(papers, home, "show", "reading-group-depth-shallow-plms", "--json")
    claims = {c["id"]: c for c in json.loads(shown.stdout)[0]["claims"]}
    assert claims["deeper-worse-past-12"]["tensions"] == [ident] and claims["perplexity-rises-at-deepest"][
        "tensions"] == []
    text = invoke(papers, home, "show", "reading-group-depth-shallow-plms")
    assert text.returncode == 0 and f"tension {ident}" in text.stdout


def test_bundled_notes_stay_valid_and_grounded(kb_dirs: tuple[Path, Path]) -> None:
    papers, home = kb_dirs
    result = invoke(papers, home, "validate", str(papers))
    assert result.returncode == 0, result.stdout + result.stderr
    kb = KnowledgeBase(Settings(papers=papers, home=home))
    for note_id in ("reading-group-depth-shallow-plms", "plm-bert-vs-gpt-comments"):
        from kb.notes.grounding import Grounding, check_note

        results = check_note(kb.read(note_id), kb.read_source(kb.read(note_id)))
        assert results and all(r.status is Grounding.grounded for r in results), results
    seed_comments = ROOT.parent / "shared" / "seeds" / "003_128bb47fd302418a.txt"
    if seed_comments.exists():  # the blog notes quote the seed's own text, copied unchanged
        assert (papers / "sources" / "plm-architecture-discussion.txt").read_bytes() == seed_comments.read_bytes()
    assert read_note(papers / "plm-bert-vs-gpt-comments.md").meta.claims[2].quantity is not None


# -- the agents' proposals between qualitative claims ---------------------------------------------------------

SCALING = "plm-architecture-discussion#structure-tokens-help-scaling"
LITTLE_GAIN = "plm-bert-vs-gpt-comments#little-gain-from-massive-scaling"


def test_agent_proposes_cited_tensions_apart_from_kbs_own(kb_dirs: tuple[Path, Path]) -> None:
    papers, home = kb_dirs
    kb = KnowledgeBase(Settings(papers=papers, home=home))
    kb.index()
    model = scripted(call("CandidateTensions", {"tensions": [
        {"a": LITTLE_GAIN, "b": SCALING, "why": "one says scaling pays with structure tokens, the other that it "
                                                "brings little"},
        {"a": SCALING, "b": LITTLE_GAIN, "why": "the same pair again"},
        {"a": "plm-bert-vs-gpt-comments#bert-more-flexible-than-gpt", "b": LITTLE_GAIN, "why": "same note"},
        {"a": "nowhere#made-up", "b": SCALING, "why": "a claim the model invented"},
    ]}, "c1"))
    proposals = propose_tensions(kb, model)
    assert proposals.method == "agent" and len(proposals.proposals) == 1 and len(proposals.rejected) == 2
    (proposal,) = proposals.proposals
    assert (proposal.a, proposal.b) == (SCALING, LITTLE_GAIN)  # in key order
    assert proposal.b_quote == "there is relatively little to be gained from massively scaling protein language models"
    assert proposal.a_quote.startswith("SaProt has proposed") and proposal.proposed_by == "model"
    assert proposal.label == PROPOSED_LABEL
    assert any("same note" in why for why in proposals.rejected) and any("nowhere" in why for why in proposals.rejected)
    shown = model.seen[0][-1].content  # the model saw the qualitative claims with their quotes, not the bound ones
    assert LITTLE_GAIN in shown and SCALING in shown and BUNDLED_B not in shown
    # Never mixed with kb's own: the deterministic list is the same with or without the model.
    assert {t.id for t in kb.tensions()} == {t.id for t in tensions_mod.find(kb.engine)}
    assert proposal.id not in {t.id for t in kb.tensions()}


def test_fallback_proposes_none(kb_dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    papers, home = kb_dirs
    kb = KnowledgeBase(Settings(papers=papers, home=home))
    kb.index()
    proposals = propose_tensions(kb, None)
    assert proposals.method == "none" and proposals.proposals == [] and "KB_CHAT_MODEL" in (proposals.message or "")
    monkeypatch.delenv("KB_CHAT_MODEL", raising=False)
    result = invoke(papers, home, "tensions", "--propose", "--json")
    assert result.returncode == 0, result.stderr
    assert all(not str(row["id"]).startswith("p-") for row in json.loads(result.stdout))


def test_find_involving_some_claims_gives_exactly_their_tensions(kb: KnowledgeBase) -> None:
    """A note's page asks only for its claims' tensions: the same tensions, with the same states, as the whole
    listing holds for those claims (an evidence split among them too), and none between two other claims."""
    queued, _ = kb.verify(["wide#range"], operator_params={"value": 26})
    assert len(queued) == 1 and kb.work() == {"succeeded": 1}
    everything = tensions_mod.find(kb.engine)
    assert "evidence" in pairs(everything).values()
    for keys in ({"shallow#at-most"}, {"wide#range"}, {"upper#above"}, {"restates#also-range", "upper#above"},
                 {"shallow#own-range"}, set()):
        mine = tensions_mod.find(kb.engine, involving=keys)
        expected = [t for t in everything if {t.a.key, t.b.key} & keys]
        assert pairs(mine) == pairs(expected), keys
        assert [(t.id, t.state.text) for t in mine] == [(t.id, t.state.text) for t in expected]


def test_cli_tensions_counts_every_state_and_lists_the_first_limit(tmp_path: Path) -> None:
    """Tens of thousands of tensions are counted by state, and only ``--limit`` of them drawn in full."""
    papers = tmp_path / "papers"
    papers.mkdir()
    for name, values in (("a", (1, 2, 3)), ("b", (10, 20))):
        claims = "".join(f"  - id: c{v}\n    statement: s\n    kind: qualitative\n    quantity: q\n"
                         f"    expect: {{metric: value, op: '==', value: {v}}}\n" for v in values)
        (papers / f"{name}.md").write_text(f"---\npaper_id: {name}\ntitle: {name}\nclaims:\n{claims}---\n",
                                           encoding="utf-8")
    every = json.loads(run_kb(papers, tmp_path / "home", "tensions", "--json").stdout)
    assert len(every) == 6  # each of a's three values against each of b's two
    shown = run_kb(papers, tmp_path / "home", "tensions", "--limit", "2")
    assert shown.returncode == 0, shown.stderr
    assert "6 tension(s) between notes: 6 open" in shown.stdout
    assert [row["id"] in shown.stdout for row in every] == [True, True, False, False, False, False]
    assert "the first 2 shown; --limit 0: all of them" in " ".join(shown.stdout.split())
    whole = run_kb(papers, tmp_path / "home", "tensions", "--limit", "0")
    assert all(row["id"] in whole.stdout for row in every) and "the first" not in whole.stdout
