"""Tests of kb.agents: the LangChain agent graphs run for real over a SQLite KnowledgeBase, driven by a
scripted fake chat model that emits real tool calls."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from typer.testing import CliRunner

from kb.agents.ask import ask
from kb.agents.config import NoChatModel, chat_model
from kb.agents.drafter import (
    DraftClaim,
    draft,
    draft_claims,
    expectation_for,
    fallback_draft,
    suggest_analyzer,
)
from kb.agents.eval_set import EVAL_SET, score
from kb.agents.tools import Citation, build_tools
from kb.cli import app
from kb.core import KnowledgeBase
from kb.db import Run
from kb.settings import Settings
from schemas.claim import Operator

ROOT = Path(__file__).resolve().parents[1]

NOOP_NOTE = textwrap.dedent("""\
    ---
    paper_id: "test:agents"
    title: "Echo note for agent tests"
    claims:
      - id: echo-big
        statement: "The echoed value is above 2."
        kind: quantitative
        analyzer: {name: noop, params: {value: 3}}
        expect: {metric: value, op: ">", value: 2}
    ---
    An echo note about the noop analyzer.
    """)

PAPER_TEXT = ("We probe six protein language models. The optimal depth is at least 24 layers for models "
              "with 650M parameters. Later layers mainly refine the output distribution.")


class ScriptedChatModel(GenericFakeChatModel):
    """A fake chat model that accepts tools and replays scripted AIMessages (with real tool_calls)."""

    seen: list[list[Any]] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def scripted(*messages: AIMessage) -> ScriptedChatModel:
    it: Iterator[AIMessage] = iter(messages)
    return ScriptedChatModel(messages=it, seen=[])


def call(name: str, args: dict[str, Any], ident: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": ident, "type": "tool_call"}


@pytest.fixture
def agent_kb(tmp_path: Path) -> KnowledgeBase:
    papers = tmp_path / "papers"
    shutil.copytree(ROOT / "papers", papers)
    (papers / "echo.md").write_text(NOOP_NOTE, encoding="utf-8")
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
    kb.index()
    return kb


# -- config ------------------------------------------------------------------------------------

def test_chat_model_missing_config_raises_clear_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KB_CHAT_MODEL", raising=False)
    with pytest.raises(NoChatModel, match="KB_CHAT_MODEL") as info:
        chat_model()
    assert "fallback" in str(info.value)


def test_cli_ask_without_model_exits_nonzero_with_message(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KB_CHAT_MODEL", raising=False)
    result = CliRunner().invoke(app, ["ask", "what is the optimal depth?", "--papers", str(ROOT / "papers"),
                                      "--home", str(tmp_path / "home")])
    assert result.exit_code != 0
    assert "KB_CHAT_MODEL" in result.output


def test_cli_draft_claims_without_model_uses_fallback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KB_CHAT_MODEL", raising=False)
    src = tmp_path / "paper.txt"
    src.write_text(PAPER_TEXT, encoding="utf-8")
    result = CliRunner().invoke(app, ["draft-claims", str(src), "--json", "--papers", str(ROOT / "papers"),
                                      "--home", str(tmp_path / "home")])
    assert result.exit_code == 0, result.output
    assert '"kind": "quantitative"' in result.output and "at least 24 layers" in result.output


# -- tools -------------------------------------------------------------------------------------

def test_tools_invalid_arguments_return_error_string(agent_kb: KnowledgeBase) -> None:
    box = build_tools(agent_kb)
    out = box.tools["read_evidence"].invoke({"claim_key": "no-hash-here"})
    assert out.startswith("error: invalid tool arguments") and "claim_key" in out
    assert box.tools["read_note"].invoke({"note_id": "missing"}).startswith("error:")


def test_queue_verification_creates_queued_run(agent_kb: KnowledgeBase) -> None:
    from sqlmodel import Session, select

    box = build_tools(agent_kb)
    out = box.tools["queue_verification"].invoke({"claim_key": "echo#echo-big"})
    assert '"queued"' in out
    with Session(agent_kb.engine) as session:
        runs = session.exec(select(Run)).all()
    assert [(r.claim_key, r.status) for r in runs] == [("echo#echo-big", "queued")]
    assert Citation(kind="claim", id="echo#echo-big") in box.citations


# -- ask ---------------------------------------------------------------------------------------

def test_ask_runs_agent_with_tools_and_cites_tool_calls(agent_kb: KnowledgeBase) -> None:
    model = scripted(
        AIMessage(content="", tool_calls=[call("search_notes", {"query": "echo"}, "c1")]),
        AIMessage(content="", tool_calls=[call("read_note", {"note_id": "echo"}, "c2"),
                                          call("queue_verification", {"claim_key": "echo#echo-big"}, "c3")]),
        AIMessage(content="The echo note claims the value is above 2 (echo#echo-big); a run is queued."),
    )
    answer = ask("What does the echo note claim?", agent_kb, model)
    assert "above 2" in answer.text
    kinds = {(c.kind, c.id) for c in answer.citations}
    assert ("note", "echo") in kinds and ("claim", "echo#echo-big") in kinds
    (run,) = agent_kb.runs(status="queued")
    assert ("run", run.id) in kinds
    tool_messages = [m for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert any("The echoed value is above 2." in str(m.content) for m in tool_messages)


def test_ask_invalid_tool_args_error_is_seen_by_agent(agent_kb: KnowledgeBase) -> None:
    model = scripted(
        AIMessage(content="", tool_calls=[call("search_notes", {"query": "", "limit": 99}, "c1")]),
        AIMessage(content="I could not search."),
    )
    answer = ask("anything?", agent_kb, model)
    assert answer.text == "I could not search." and answer.citations == []
    (tool_message,) = [m for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert "error: invalid tool arguments" in str(tool_message.content)
    assert "query" in str(tool_message.content) and "limit" in str(tool_message.content)


def test_ask_without_model_raises(agent_kb: KnowledgeBase) -> None:
    with pytest.raises(NoChatModel, match="KB_CHAT_MODEL"):
        ask("anything?", agent_kb, None)


# -- drafter -----------------------------------------------------------------------------------

def _structured(claims: list[dict[str, Any]], ident: str = "s1") -> AIMessage:
    return AIMessage(content="", tool_calls=[call("DraftedClaims", {"claims": claims}, ident)])


def test_draft_agent_keeps_grounded_and_rejects_hallucinated_quote(agent_kb: KnowledgeBase) -> None:
    model = scripted(
        AIMessage(content="", tool_calls=[call("list_analyzers", {}, "c1")]),
        _structured([
            {"id": "optimal-depth", "statement": "Optimal depth is at least 24 layers.", "kind": "quantitative",
             "quote": "The optimal depth is at least  24 layers for models with 650M parameters."},
            {"id": "invented", "statement": "Depth doubles accuracy.",
             "quote": "Doubling depth doubles contact accuracy."},
        ]),
    )
    result = draft(PAPER_TEXT, agent_kb, model)
    assert result.method == "agent"
    assert [c.id for c in result.claims] == ["optimal-depth"]
    (rejected,) = result.rejected
    assert rejected.claim.id == "invented" and "does not occur verbatim" in rejected.reason
    assert any("noop" in str(m.content) for m in model.seen[-1] if isinstance(m, ToolMessage))


def test_draft_claims_without_model_uses_fallback() -> None:
    claims = draft_claims(PAPER_TEXT)
    assert len(claims) == 1
    (claim,) = claims
    assert claim.kind.value == "quantitative" and claim.quote in PAPER_TEXT
    assert claim.expect is not None and claim.expect.op is Operator.ge and claim.expect.value == 24


def test_fallback_draft_table_rows_and_percentages() -> None:
    text = ("Contact precision exceeds 40% at intermediate temperature.\n\n"
            "| model | layers | accuracy |\n|---|---|---|\n| ESM-2 | 33 | 0.71 |\n| ProtT5 | 24 | 0.65 |\n")
    claims = fallback_draft(text, registered=[])
    assert [c.quote for c in claims] == ["Contact precision exceeds 40% at intermediate temperature.",
                                         "| ESM-2 | 33 | 0.71 |", "| ProtT5 | 24 | 0.65 |"]
    assert len({c.id for c in claims}) == 3


def test_expectation_for_explicit_comparisons() -> None:
    assert expectation_for("accuracy is below 0.5").op is Operator.lt  # type: ignore[union-attr]
    assert expectation_for("reaches 37% identity").op is Operator.approx  # type: ignore[union-attr]
    assert expectation_for("uses 33 layers") is None


def test_suggest_analyzer_only_registered() -> None:
    names = ["depth.probe", "langevin.sweep", "noop"]
    assert suggest_analyzer("the last 10 layers add little", names) == "depth.probe"
    assert suggest_analyzer("at intermediate temperature", names) == "langevin.sweep"
    assert suggest_analyzer("at intermediate temperature", ["noop"]) is None


def test_draft_claim_model_quote_required() -> None:
    with pytest.raises(ValueError):
        DraftClaim(id="x", statement="s", quote="")


def test_eval_set_fallback_scores_reasonably() -> None:
    precision, recall = score(EVAL_SET)
    assert precision >= 0.6 and recall >= 0.6
