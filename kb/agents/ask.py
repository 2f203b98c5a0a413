"""Answer a question about the knowledge base with a LangChain agent over the kb tools.

The agent (``create_agent``) may search and read notes, list claims by state, outcome and scale, list the
tensions between notes' claims (``kb.evidence.tensions``), find and read evidence, list analyzers, and queue
verification runs through the same queue as ``kb verify``; it never runs an analyzer. The answer is built
from tool outputs only (the system prompt says so), and its citations are the notes, claims and runs of the
tool calls the agent actually made (see ``kb.agents.tools``), never ids the model typed into its prose
without looking them up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from pydantic import BaseModel, Field

from kb.agents.config import NO_MODEL_MESSAGE, NoChatModel
from kb.agents.tools import ASK_TOOLS, Citation, build_tools
from kb.core import KnowledgeBase

SYSTEM_PROMPT = """\
You answer questions about a knowledge base of protein-language-model paper notes, their claims and the
evidence that re-verifies those claims. Use the tools; answer ONLY from what they return, and say so
when they do not contain the answer. Cite the note ids, claim keys ('<note id>#<claim id>') and run ids
you rely on.
- Papers and what they say: search_notes, then read_note.
- Claims by topic, state or scale ("which claims about depth are refuted at small scale?"): list_claims.
  Evidence made at a smaller scale than the claim is a proxy: its verdict stays inconclusive, and
  outcome_at_evidence_scale tells what it showed at its own scale. Say which one you report.
- Claims that disagree ("which claims contradict each other?", "is this claim disputed?"): list_tensions.
- Numbers from runs ("what does the evidence say about layer 20 of ESM-2 650M?"): find_evidence, then
  read_evidence with run_id and layer or metric.
- queue_verification only queues a run for a worker; use it only when the user asks to verify."""

MAX_STEPS = 40


class ToolCall(BaseModel):
    """One tool call the agent made, for showing its work."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    error: bool = Field(default=False, description="True when the tool answered with an error.")


class Answer(BaseModel):
    """An answer, the knowledge-base objects the agent's tool calls touched, and the calls themselves."""

    text: str = Field(description="The answer.")
    citations: list[Citation] = Field(default_factory=list, description="Notes, claims and runs consulted.")
    tool_calls: list[ToolCall] = Field(default_factory=list, description="The tool calls made, in order.")


class AskError(RuntimeError):
    """The agent could not answer (the model kept calling tools, or the provider failed)."""


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content).strip()
    return str(content).strip()


def _final_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, AIMessage) and not message.tool_calls:
            return _text(message.content)
    return ""


def _tool_calls(messages: list[Any]) -> list[ToolCall]:
    results = {m.tool_call_id: _text(m.content) for m in messages if isinstance(m, ToolMessage)}
    calls = []
    for message in messages:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                result = results.get(call.get("id") or "", "")
                calls.append(ToolCall(name=call["name"], args=call.get("args", {}),
                                      error=result.startswith(("error", "Error"))))
    return calls


def ask(question: str, kb: KnowledgeBase, model: BaseChatModel | None, *,
        history: Sequence[tuple[str, str]] = (), allow_queue: bool = True,
        on_call: Callable[[str, dict[str, Any]], None] | None = None) -> Answer:
    """Answer ``question`` from the knowledge base; raises ``NoChatModel`` when ``model`` is None.

    ``history`` holds earlier (role, text) turns of a chat ('user' / 'assistant'); ``allow_queue=False``
    keeps the agent from queueing runs; ``on_call(name, args)`` is told of every tool call as it happens.
    """
    if model is None:
        raise NoChatModel(NO_MODEL_MESSAGE)
    from langchain.agents import create_agent
    from langgraph.errors import GraphRecursionError

    box = build_tools(kb, ASK_TOOLS, allow_queue=allow_queue, on_call=on_call)
    agent = create_agent(model, list(box.tools.values()), system_prompt=SYSTEM_PROMPT)
    messages = [{"role": role, "content": text} for role, text in history]
    messages.append({"role": "user", "content": question})
    try:
        state: dict[str, Any] = agent.invoke({"messages": messages}, {"recursion_limit": MAX_STEPS})  # type: ignore[call-overload]
    except GraphRecursionError as exc:
        raise AskError(
            f"the model did not finish answering within {MAX_STEPS} steps; ask a narrower question"
        ) from exc
    text = _final_text(state["messages"])
    return Answer(text=text, citations=box.cited(text), tool_calls=_tool_calls(state["messages"]))
