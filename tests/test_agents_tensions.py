"""The ask agent's ``list_tensions`` tool: "which claims disagree?" answered from ``kb.evidence.tensions`` through the
real LangChain agent graph, a scripted fake chat model standing in for the LLM, on real notes with a real
noop run deciding one tension (SQLite, the real queue and worker)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from kb.agents.ask import ask
from kb.agents.tools import build_tools
from kb.core import KnowledgeBase
from kb.evidence.tensions import tension_id
from kb.settings import Settings
from tests.helpers.chat import call, scripted, tool_results

ROOT = Path(__file__).resolve().parents[1]
# The bundled library's own tension: optimal depth in [24, 36] against "worse past 12 layers".
BUNDLED = ("reading-group-depth-shallow-plms#deeper-worse-past-12",
           "siji-2026-analysis-note-arxiv-2502-00001#optimal-depth-24-36")


def _note(paper_id: str, claim_id: str, op: str, value: float) -> str:
    return (f'---\npaper_id: "{paper_id}"\ntitle: "{paper_id}"\nclaims:\n  - id: {claim_id}\n'
            f'    statement: "The value is {op} {value}."\n    kind: quantitative\n'
            f'    analyzer: {{name: noop, params: {{value: 3}}}}\n'
            f'    expect: {{metric: value, op: "{op}", value: {value}}}\n---\nbody\n')


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    """The bundled notes, plus two notes whose noop claims cannot both hold, decided by a real run (3)."""
    root = tmp_path_factory.mktemp("agent-tensions")
    papers = root / "papers"
    shutil.copytree(ROOT / "papers", papers)
    (papers / "high.md").write_text(_note("t:high", "above", ">", 2), encoding="utf-8")
    (papers / "low.md").write_text(_note("t:low", "at-most", "<=", 1), encoding="utf-8")
    knowledge = KnowledgeBase(Settings(papers=papers, home=root / "home"))
    knowledge.verify(["high#above"])
    assert knowledge.work() == {"succeeded": 1}
    return knowledge


def test_ask_which_claims_disagree_lists_the_tensions_and_cites_both_claims(kb: KnowledgeBase) -> None:
    model = scripted(call("list_tensions", {}, "t1"), AIMessage(content="Two pairs of claims disagree."))
    answer = ask("Which claims disagree?", kb, model)
    assert "list_tensions" in model.bound[0]
    assert [(c.name, c.error) for c in answer.tool_calls] == [("list_tensions", False)]
    listed = {t["id"]: t for t in json.loads(tool_results(model.seen[-1])["t1"])}
    noop_id = tension_id("high#above", "low#at-most")
    assert set(listed) == {tension_id(*BUNDLED), noop_id}
    bundled = listed[tension_id(*BUNDLED)]
    assert {bundled["a"]["key"], bundled["b"]["key"]} == set(BUNDLED) and bundled["state"] == "open"
    assert bundled["a"]["quote"] and bundled["b"]["quote"]  # each side's words from its paper
    # The noop pair: the run echoed 3, which is > 2 and not <= 1; the claims sort 'high#above' first (A).
    decided = listed[noop_id]
    assert decided["state"] == "settled_a" and decided["deciding_evidence"]["value"] == 3.0
    (run,) = kb.runs(claim_key="high#above")
    cited = {(c.kind, c.id) for c in answer.citations}
    assert {("claim", key) for key in (*BUNDLED, "high#above", "low#at-most")} | {("run", run.id)} <= cited


def test_list_tensions_filters_by_note_claim_and_outcome(kb: KnowledgeBase) -> None:
    tools = build_tools(kb).tools["list_tensions"]
    ids = lambda args: [t["id"] for t in json.loads(tools.invoke(args))]  # noqa: E731
    noop_pair = [tension_id("high#above", "low#at-most")]
    assert ids({"note_id": "low"}) == ids({"claim_key": "high#above"}) == noop_pair
    assert ids({"outcome": "open"}) == [tension_id(*BUNDLED)]
    assert tools.invoke({"note_id": "plm-architecture-discussion", "outcome": "both_wrong"}).startswith(
        "no tension matches")
    assert tools.invoke({"outcome": "maybe"}).startswith("error: invalid tool arguments")
