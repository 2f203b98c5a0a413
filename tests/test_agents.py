"""Tests of kb.agents: the LangChain agent graphs run for real over a SQLite knowledge base with real evidence.

A scripted fake chat model stands in for the LLM: it accepts the tools ``create_agent`` binds, records
what it was shown, and replies with real tool calls (fixed replies, or functions of the conversation
so it can act on a tool's error). Evidence comes from the noop analyzer through ``kb.verify`` and
``kb.work``, the same queue and worker as everyone's runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from kb.agents.ask import ask
from kb.agents.config import NoChatModel, chat_model
from kb.agents.drafter import ProposedClaim, draft, review
from kb.agents.queries import claim_states, layer_slice, model_matches, outcome_at_own_scale
from kb.agents.tools import ASK_TOOLS, DRAFT_TOOLS, build_tools
from kb.core import KnowledgeBase
from kb.evidence.verdicts import evaluate
from kb.settings import Settings
from schemas import Claim, EvidenceScale
from tests.helpers.chat import call, scripted, tool_results
from tests.helpers.cli import run_kb
from tests.noop_analyzer import Noop

ROOT = Path(__file__).resolve().parents[1]

ECHO_NOTE = textwrap.dedent("""\
    ---
    paper_id: "test:agents"
    title: "Echo note for agent tests"
    claims:
      - id: echo-big
        statement: "The echoed value is above 2."
        kind: quantitative
        analyzer: {name: noop, params: {value: 3}}
        expect: {metric: value, op: ">", value: 2}
      - id: deep-refuted
        statement: "Deeper models echo a value above 2 at 650M parameters."
        kind: quantitative
        analyzer: {name: noop, params: {value: 1}}
        expect: {metric: value, op: ">", value: 2}
        scale: {parameters: 650000000}
      - id: depth-unverified
        statement: "Depth never lowers the echoed value."
        analyzer: {name: noop, params: {value: 5}}
        expect: {metric: value, op: ">", value: 2}
    ---
    An echo note about the noop analyzer.
    """)

PAPER_TEXT = ("We probe six protein language models. The optimal depth is at least 24 layers for models "
              "with 650M parameters. Later layers mainly refine the output distribution.")


def _make_kb(root: Path) -> KnowledgeBase:
    papers = root / "papers"
    shutil.copytree(ROOT / "papers", papers)
    (papers / "echo.md").write_text(ECHO_NOTE, encoding="utf-8")
    kb = KnowledgeBase(Settings(papers=papers, home=root / "home"))
    kb.verify(["echo#echo-big", "echo#deep-refuted"])
    kb.work()
    return kb


@pytest.fixture(scope="module")
def shared_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    """Bundled notes + the echo note, two claims verified by real noop runs (read-only tests)."""
    return _make_kb(tmp_path_factory.mktemp("agents"))


@pytest.fixture
def fresh_kb(tmp_path: Path) -> KnowledgeBase:
    """The same knowledge base, for tests that write (queue runs, accept claims)."""
    return _make_kb(tmp_path)


# -- configuration -------------------------------------------------------------------------------

def test_chat_model_without_configuration_says_how_to_set_one() -> None:
    with pytest.raises(NoChatModel, match="KB_CHAT_MODEL") as info:
        chat_model(None)
    assert "openai:gpt-4o-mini" in str(info.value) and "fallback" in str(info.value)


def test_chat_model_unknown_provider_is_a_configuration_error() -> None:
    with pytest.raises(NoChatModel, match="nosuchprovider:some-model"):
        chat_model("nosuchprovider:some-model")


def test_cli_ask_without_model_exits_2_with_message(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KB_CHAT_MODEL", raising=False)
    result = run_kb(ROOT / "papers", tmp_path / "home", "ask", "what is the optimal depth?")
    assert result.returncode == 2
    assert "KB_CHAT_MODEL" in result.stderr and result.stdout == ""


def test_cli_ask_with_unusable_model_exits_2(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KB_CHAT_MODEL", "nosuchprovider:some-model")
    result = run_kb(None, tmp_path / "home", "ask", "anything?")
    assert result.returncode == 2 and "nosuchprovider:some-model" in result.stderr


# -- tools ---------------------------------------------------------------------------------------

def test_tools_invalid_arguments_come_back_as_an_error_to_act_on(shared_kb: KnowledgeBase) -> None:
    box = build_tools(shared_kb)
    out = box.tools["read_evidence"].invoke({"claim_key": "no-hash-here"})
    assert out.startswith("error: invalid tool arguments") and "claim_key" in out and "call the tool again" in out
    out = box.tools["list_claims"].invoke({"state": ["bogus"], "limit": 0})
    assert "state" in out and "limit" in out and out.startswith("error: invalid tool arguments")
    assert box.tools["read_note"].invoke({"note_id": "missing"}).startswith("error: ")
    assert box.tools["read_evidence"].invoke({}).startswith("error: give exactly one")
    assert box.citations == []


def test_list_claims_finds_claims_refuted_at_small_scale(shared_kb: KnowledgeBase) -> None:
    out = json.loads(build_tools(shared_kb).tools["list_claims"].invoke(
        {"query": "deeper depth", "outcome": "refuted", "evidence_scale": "smoke"}))
    assert [row["claim_key"] for row in out] == ["echo#deep-refuted"]
    (row,) = out
    (evidence,) = shared_kb.evidence("echo#deep-refuted")
    assert evidence.verdict is not None and evidence.verdict.proxy
    assert row["verdict"] == evidence.verdict.kind.value == "inconclusive"
    assert row["state"] == "at_odds_proxy"  # a proxy that would refute: it leans, without settling the claim
    assert row["run_id"] == evidence.run_id and row["claim_parameters"] == 6.5e8
    states = {s.claim_key: s.state for s in claim_states(shared_kb, note_id="echo")}
    assert states == {"echo#echo-big": "supported", "echo#deep-refuted": "at_odds_proxy",
                      "echo#depth-unverified": "unverified"}
    bundled_unbound = claim_states(shared_kb, states=["unbound"])
    assert bundled_unbound and all(s.analyzer is None for s in bundled_unbound)


def test_outcome_at_own_scale_is_the_verdict_without_the_claims_scale(shared_kb: KnowledgeBase) -> None:
    (evidence,) = shared_kb.evidence("echo#deep-refuted")
    claim = Claim.model_validate(json.loads(json.dumps(
        {"id": "deep-refuted", "statement": "s", "expect": {"metric": "value", "op": ">", "value": 2},
         "scale": {"parameters": 6.5e8}})))
    assert evidence.verdict is not None
    unscaled = evaluate(claim.model_copy(update={"scale": None}), [evidence.metrics], EvidenceScale(name="smoke"))
    assert outcome_at_own_scale(claim, evidence.verdict) == unscaled.kind.value == "refuted"


def test_read_and_find_evidence_by_run_metric_and_analyzer(shared_kb: KnowledgeBase) -> None:
    box = build_tools(shared_kb)
    found = json.loads(box.tools["find_evidence"].invoke({"analyzer": "noop"}))
    assert {hit["claim_key"] for hit in found} == {"echo#echo-big", "echo#deep-refuted"}
    assert all("value" in hit["metrics"] for hit in found)
    assert box.tools["find_evidence"].invoke({"model": "ESM-2 650M"}).startswith("no evidence matches")
    run = next(hit["run_id"] for hit in found if hit["claim_key"] == "echo#echo-big")
    (record,) = json.loads(box.tools["read_evidence"].invoke({"run_id": run, "metric": "value"}))
    assert record["metric"] == {"value": 3.0} and record["verdict"] == "supported"
    (record,) = json.loads(box.tools["read_evidence"].invoke({"claim_key": "echo#echo-big", "metric": "nope"}))
    assert "value" in record["metric_error"]
    assert {("run", run), ("claim", "echo#echo-big")} <= {(c.kind, c.id) for c in box.citations}


def test_model_matches_words_of_a_model_name() -> None:
    esm = "facebook/esm2_t33_650M_UR50D"
    assert model_matches("ESM-2 650M", esm) and model_matches("esm2_t33", esm)
    assert not model_matches("ESM-2 3B", esm) and not model_matches("", esm)


def test_layer_slice_takes_one_layer_of_every_per_layer_list() -> None:
    num_layers = 33
    kl = [float(33 - i) for i in range(num_layers + 1)]  # includes the embedding output
    heatmap = [[float(i * j) for j in range(num_layers)] for i in range(num_layers)]
    metrics = {"num_layers": num_layers, "late_half_kl_drop_fraction": 0.7,
               "layers": {"logit_lens_kl": kl, "skip_heatmap": heatmap, "objective": "mlm", "short": [1.0, 2.0]},
               "provenance": {"sizes": list(range(50))}}
    sliced = layer_slice(metrics, 20)
    assert sliced == {"layers.logit_lens_kl": {"value": kl[20], "length": 34},
                      "layers.skip_heatmap": {"value": heatmap[20], "length": 33}}


def test_queue_verification_only_queues_through_the_shared_queue(fresh_kb: KnowledgeBase) -> None:
    evidence_before = len(fresh_kb.evidence("echo#depth-unverified"))
    out = json.loads(build_tools(fresh_kb).tools["queue_verification"].invoke({"claim_key": "echo#depth-unverified"}))
    (queued,) = out["queued"]
    assert [(r.id, r.status.value) for r in fresh_kb.runs(claim_key="echo#depth-unverified")] == [
        (queued["run_id"], "queued")]
    assert len(fresh_kb.evidence("echo#depth-unverified")) == evidence_before == 0
    blocked = build_tools(fresh_kb, allow_queue=False).tools["queue_verification"].invoke(
        {"claim_key": "echo#depth-unverified"})
    assert blocked.startswith("error: queueing runs is switched off")
    assert len(fresh_kb.runs(claim_key="echo#depth-unverified")) == 1


# -- ask -----------------------------------------------------------------------------------------

def test_ask_answers_from_tool_calls_and_cites_only_what_they_touched(shared_kb: KnowledgeBase) -> None:
    model = scripted(
        call("list_claims", {"query": "depth deeper", "outcome": "refuted", "evidence_scale": "smoke"}, "c1"),
        call("search_notes", {"query": "curse of depth"}, "c2"),
        lambda messages: call("read_evidence", {"claim_key": json.loads(tool_results(messages)["c1"])[0]["claim_key"]},
                              "c3"),
        AIMessage(content="At smoke scale echo#deep-refuted came out refuted (a proxy, so inconclusive); "
                          "echo#echo-big is unrelated."),
    )
    answer = ask("Which claims about depth are refuted at small scale?", shared_kb, model)
    assert answer.text.startswith("At smoke scale echo#deep-refuted")
    assert model.bound and set(model.bound[0]) == set(ASK_TOOLS)
    (evidence,) = shared_kb.evidence("echo#deep-refuted")
    cited = {(c.kind, c.id) for c in answer.citations}
    assert ("claim", "echo#deep-refuted") in cited and ("run", evidence.run_id) in cited
    assert ("claim", "echo#echo-big") not in cited  # named in the prose, never looked up
    assert not any(c.kind == "note" for c in answer.citations)  # search hits the answer does not name
    assert [c.name for c in answer.tool_calls] == ["list_claims", "search_notes", "read_evidence"]
    seen = tool_results(model.seen[-1])
    assert "outcome_at_evidence_scale" in seen["c1"] and evidence.run_id in seen["c3"]


def test_ask_model_acts_on_an_invalid_tool_argument_error(shared_kb: KnowledgeBase) -> None:
    def retry(messages: list[BaseMessage]) -> AIMessage:
        error = tool_results(messages)["c1"]
        assert error.startswith("error: invalid tool arguments") and "limit" in error
        return call("search_notes", {"query": "echo", "limit": 5}, "c2")

    model = scripted(call("search_notes", {"query": "echo", "limit": 99}, "c1"), retry,
                     call("read_note", {"note_id": "echo"}, "c3"), AIMessage(content="The echo note has 3 claims."))
    answer = ask("What does the echo note claim?", shared_kb, model)
    assert [(c.name, c.error) for c in answer.tool_calls] == [
        ("search_notes", True), ("search_notes", False), ("read_note", False)]
    note = json.loads(tool_results(model.seen[-1])["c3"])
    assert [c["state"] for c in note["claims"]] == ["supported", "at_odds_proxy", "unverified"]
    assert ("note", "echo") in {(c.kind, c.id) for c in answer.citations}


def test_ask_can_queue_a_verification_but_not_run_it(fresh_kb: KnowledgeBase) -> None:
    model = scripted(call("queue_verification", {"claim_key": "echo#depth-unverified"}, "c1"),
                     AIMessage(content="Queued; a worker will run it."))
    calls: list[str] = []
    answer = ask("Please verify echo#depth-unverified", fresh_kb, model, on_call=lambda name, args: calls.append(name))
    (run,) = fresh_kb.runs(claim_key="echo#depth-unverified")
    assert run.status.value == "queued" and ("run", run.id) in {(c.kind, c.id) for c in answer.citations}
    assert calls == ["queue_verification"] and fresh_kb.evidence("echo#depth-unverified") == []


def test_ask_passes_the_chat_history_to_the_model(shared_kb: KnowledgeBase) -> None:
    model = scripted(AIMessage(content="Yes."))
    ask("And is it verified?", shared_kb, model, history=[("user", "Tell me about echo#echo-big"),
                                                          ("assistant", "It claims the value is above 2.")])
    contents = [str(m.content) for m in model.seen[0]]
    assert contents[-3:] == ["Tell me about echo#echo-big", "It claims the value is above 2.", "And is it verified?"]


def test_ask_without_model_raises_no_chat_model(shared_kb: KnowledgeBase) -> None:
    with pytest.raises(NoChatModel, match="KB_CHAT_MODEL"):
        ask("anything?", shared_kb, None)


# -- drafting with the agent ---------------------------------------------------------------------

def _drafted(claims: list[dict[str, Any]], ident: str) -> AIMessage:
    return call("DraftedClaims", {"claims": claims}, ident)


GOOD = {"id": "optimal-depth", "statement": "Optimal depth is at least 24 layers at 650M parameters.",
        "kind": "quantitative", "quote": "The optimal depth is at least  24 layers for models with 650M parameters.",
        "analyzer": {"name": "noop", "params": {"value": 30}}, "expect": {"metric": "value", "op": ">=", "value": 24},
        "scale": {"parameters": 650000000}}
INVENTED = {"id": "invented", "statement": "Depth doubles accuracy.",
            "quote": "Doubling depth doubles contact accuracy."}


def test_draft_agent_rejects_a_hallucinated_quote_after_one_repair(shared_kb: KnowledgeBase) -> None:
    model = scripted(
        call("list_analyzers", {}, "c1"),
        call("find_quote", {"quote": "Doubling depth doubles contact accuracy."}, "c2"),
        _drafted([GOOD, INVENTED], "s1"),
        _drafted([GOOD, INVENTED], "s2"),  # ignores the feedback
    )
    result = draft(PAPER_TEXT, shared_kb, model)
    assert result.method == "agent" and model.bound and set(model.bound[0]) == {*DRAFT_TOOLS, "DraftedClaims"}
    (kept,) = result.claims
    assert kept.id == "optimal-depth" and kept.analyzer is not None and kept.expect is not None and not kept.notes
    (rejected,) = result.rejected
    assert rejected.claim.id == "invented" and "does not occur verbatim" in rejected.reason
    seen = tool_results(model.seen[-1])
    assert '"name": "noop"' in seen["c1"] and seen["c2"].startswith("not found")
    assert "The optimal depth is at least 24 layers" in seen["c2"]  # the closest sentence, to copy
    assert "'invented': the quote is not in the text" in seen["s1"]


def test_find_quote_says_the_page_a_quote_starts_on_and_the_pages_of_the_closest(
        shared_kb: KnowledgeBase) -> None:
    from kb.agents.tools import ToolBox

    pages = ["Title page. We probe six protein language models.",
             "Methods. The optimal depth is at least 24 layers for models with 650M parameters. It ends",
             "here on the third page. Later layers mainly refine the output distribution."]
    box = ToolBox(shared_kb, text="\f".join(pages))
    assert box.find_quote("The optimal depth is at least 24 layers").startswith("found on page 2: ")
    assert box.find_quote("It ends here on the third page").startswith("found on page 2: ")  # runs over
    assert box.find_quote("mainly refine the output").startswith("found on page 3: ")
    missed = box.find_quote("Later layers refine the output logits.")
    assert missed.startswith("not found")
    closest = json.loads(missed.split(": ", 1)[1])
    assert closest[0] == {"page": 3, "text": "Later layers mainly refine the output distribution."}
    # a text without pages (a note's body, a pasted abstract): found, with no page to give
    assert ToolBox(shared_kb, text=" ".join(pages)).find_quote("mainly refine the output") \
        .startswith("found: ")


def test_draft_agent_fixes_a_quote_when_told(shared_kb: KnowledgeBase) -> None:
    def fix(messages: list[BaseMessage]) -> AIMessage:
        assert "'invented'" in tool_results(messages)["s1"]
        return _drafted([GOOD, {**INVENTED, "quote": "Later layers mainly refine the output distribution."}], "s2")

    result = draft(PAPER_TEXT, shared_kb, scripted(_drafted([GOOD, INVENTED], "s1"), fix))
    assert [c.id for c in result.claims] == ["optimal-depth", "invented"] and result.rejected == []


def test_draft_agent_strips_unknown_analyzers_bad_parameters_and_undeclared_metrics(shared_kb: KnowledgeBase) -> None:
    quote = "Later layers mainly refine the output distribution."
    claims = [
        {**GOOD, "id": "unknown", "quote": quote, "analyzer": "depth.nonexistent"},
        {**GOOD, "id": "bad-params", "quote": "We probe six protein language models.",
         "analyzer": {"name": "noop", "params": {"value": "high", "colour": "red"}}},
        {**GOOD, "id": "bad-metric", "expect": {"metric": "accuracy", "op": ">", "value": 0.5}},
    ]
    result = draft(PAPER_TEXT, shared_kb, scripted(_drafted(claims, "s1"), _drafted(claims, "s2")))
    by_id = {c.id: c for c in result.claims}
    assert set(by_id) == {"unknown", "bad-params", "bad-metric"} and result.rejected == []
    assert by_id["unknown"].analyzer is None and by_id["unknown"].expect is None
    assert "unknown analyzer 'depth.nonexistent'" in by_id["unknown"].notes[0]
    assert by_id["bad-params"].analyzer is None and "value" in by_id["bad-params"].notes[0]
    assert "colour" in by_id["bad-params"].notes[0]
    assert by_id["bad-metric"].analyzer is not None and by_id["bad-metric"].expect is None
    assert "does not produce 'accuracy'" in by_id["bad-metric"].notes[0]


def test_review_rejects_duplicates_and_renames_ids_taken_in_the_note() -> None:
    existing = [Claim(id="optimal-depth", statement="s", source={"quote": "mainly refine the output distribution"})]
    drafted = [GOOD, {**GOOD, "id": "copy", "quote": "The optimal depth is at least 24 layers"},
               {**INVENTED, "id": "old", "quote": "Later layers mainly refine the output distribution."}]
    kept, rejected = review([ProposedClaim.model_validate(d) for d in drafted], PAPER_TEXT, existing=existing)
    assert [c.id for c in kept] == ["optimal-depth-2"] and "renamed 'optimal-depth-2'" in kept[0].notes[-1]
    assert [(r.claim.id, r.reason) for r in rejected] == [
        ("copy", "claim 'optimal-depth-2' already quotes this passage"),
        ("old", "claim 'optimal-depth' already quotes this passage")]


def test_draft_without_model_uses_the_fallback_and_says_so() -> None:
    result = draft(PAPER_TEXT)
    assert result.method == "fallback" and "KB_CHAT_MODEL" in (result.message or "")
    (claim,) = result.claims
    assert claim.quote == "The optimal depth is at least 24 layers for models with 650M parameters."
    assert claim.kind.value == "quantitative" and claim.scale is not None and claim.scale.parameters == 6.5e8
    assert claim.expect is None


# -- the CLI: draft, review, accept --------------------------------------------------------------

NOTE_WITH_SOURCE = """\
---
paper_id: "test:draft"
title: "Depth note"
source_file: "depth.txt"
claims:
  # kept exactly as written
  - id: optimal-depth
    statement: 'Optimal depth is 24 layers.'
    source: {quote: "The optimal depth is at least 24 layers"}
    analyzer: {name: noop, params: {value: 30}}
tags: [plm]
---
Body text stays.
"""


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return run_kb(home.parent / "papers", home, *args, env={"KB_CHAT_MODEL": ""})


def test_cli_draft_claims_prints_then_accept_writes_only_the_claims_block(tmp_path: Path) -> None:
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    note = papers / "depth.md"
    note.write_text(NOTE_WITH_SOURCE, encoding="utf-8")
    (papers / "depth.txt").write_text(
        PAPER_TEXT + "\n\n| model | P@L |\n|---|---|\n| ESM-2 650M | 0.43 |\n", encoding="utf-8")
    before = note.read_bytes()
    shown = _cli("draft-claims", "depth", "--json", home=home)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    rows = json.loads(shown.stdout)
    assert "KB_CHAT_MODEL" in shown.stderr and note.read_bytes() == before
    assert [r["status"] for r in rows] == ["drafted", "rejected"]  # the note already quotes the sentence
    row, duplicate = rows
    assert duplicate["reason"] == "claim 'optimal-depth' already quotes this passage"
    assert row["quote"] == "| ESM-2 650M | 0.43 |" and row["statement"] == "model: ESM-2 650M; P@L: 0.43"

    accepted = _cli("draft-claims", "depth", "--accept", row["id"], home=home)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    after = note.read_bytes()
    head, block_end = before.split(b"tags: [plm]")[0], before.index(b"tags: [plm]")
    assert after.startswith(head) and after.endswith(before[block_end:])  # only the claims block grew
    added = after[len(head):len(after) - len(before[block_end:])].decode()
    assert added.startswith(f'  - id: "{row["id"]}"') or added.startswith(f"  - id: {row['id']}")
    kb = KnowledgeBase(Settings(papers=papers, home=home))
    assert [c.claim_id for c in kb.claims("depth")] == sorted(["optimal-depth", row["id"]])
    again = _cli("draft-claims", "depth", "--accept", row["id"], home=home)
    assert again.returncode == 1 and note.read_bytes() == after
    assert f"claim '{row['id']}' was rejected: claim '{row['id']}' already quotes this passage" in again.stderr


def test_cli_draft_claims_rejects_bad_accept_requests(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(ROOT / "papers", tmp_path / "papers")
    text = tmp_path / "paper.txt"
    text.write_text(PAPER_TEXT, encoding="utf-8")
    assert _cli("draft-claims", str(text), "--accept-all", home=home).returncode == 2
    assert _cli("draft-claims", str(text), "--accept", "x", "--accept-all", home=home).returncode == 2
    missing = _cli("draft-claims", str(tmp_path / "nope.txt"), home=home)
    assert missing.returncode == 1 and "no such file" in missing.stderr
    broken = run_kb(None, home, "draft-claims", str(text), env={"KB_CHAT_MODEL": "nosuchprovider:x"})
    assert broken.returncode == 2 and "nosuchprovider:x" in broken.stderr
    into = _cli("draft-claims", str(text), "--into", "plm-architecture-discussion", "--accept-all", home=home)
    assert into.returncode == 0, into.stdout + into.stderr
    kb = KnowledgeBase(Settings(papers=tmp_path / "papers", home=home))
    assert any(c.statement.startswith("The optimal depth") for c in kb.claims("plm-architecture-discussion"))


def test_every_tool_is_documented_for_the_model_and_tested() -> None:
    from kb.agents.tools import TOOL_ARGS, ToolBox

    # this module and the agents' other test modules (tests/test_agents_*.py)
    modules = Path(__file__).parent.glob("test_agents*.py")
    source = "".join(path.read_text(encoding="utf-8") for path in modules)
    assert set(ASK_TOOLS) | set(DRAFT_TOOLS) == set(TOOL_ARGS)
    for name, args in TOOL_ARGS.items():
        doc = getattr(ToolBox, name).__doc__ or ""
        assert len(doc.strip().splitlines()) >= 3, f"{name}: the docstring must tell the model when to use it"
        assert all(field.description for field in args.model_fields.values()), f"{name}: undescribed argument"
        assert f'"{name}"' in source, f"{name} has no test"


def test_describe_analyzer_lists_parameters_the_binding_may_set(shared_kb: KnowledgeBase) -> None:
    box = build_tools(shared_kb)
    described = json.loads(box.tools["describe_analyzer"].invoke({"name": "noop"}))
    assert described["metrics"] == {"value": "the 'value' parameter, echoed"}
    assert described["params"]["value"] == {"type": "float", "default": 1.0,
                                            "description": "The value to return as the metric 'value'."}
    assert "device" not in described["params"] and described["scales"]["smoke"] == {}
    assert described["scales"].keys() == Noop.scales.keys()  # every preset, with its values
    assert box.tools["describe_analyzer"].invoke({"name": "nope"}).startswith("error: no analyzer 'nope'")
