"""Answer a question about the knowledge base with a LangChain agent over the kb tools.

The answer is built only from tool outputs (the system prompt says so), and its citations are the
note ids, claim keys and run ids of the tool calls the agent actually made, never ids the model typed
into its prose.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from pydantic import BaseModel, Field

from kb.agents.config import NO_MODEL_MESSAGE, NoChatModel
from kb.agents.tools import Citation, build_tools
from kb.core import KnowledgeBase

SYSTEM_PROMPT = (
    "You answer questions about a knowledge base of protein-language-model paper notes. Use the tools: "
    "search_notes first, then read_note for the relevant notes, read_evidence for claims' verification "
    "results. Answer ONLY from what the tools returned; if they do not contain the answer, say so. Name the "
    "note ids and claim keys you rely on. queue_verification only queues a run; use it only when asked to."
)


class Answer(BaseModel):
    """An answer and the knowledge-base objects the agent's tool calls touched."""

    text: str = Field(description="The answer.")
    citations: list[Citation] = Field(default_factory=list, description="Notes, claims and runs consulted.")


def _final_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, AIMessage) and not message.tool_calls:
            content = message.content
            if isinstance(content, list):
                content = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
            return str(content).strip()
    return ""


def ask(question: str, kb: KnowledgeBase, model: BaseChatModel | None) -> Answer:
    """Answer ``question`` from the knowledge base; raises ``NoChatModel`` when ``model`` is None."""
    if model is None:
        raise NoChatModel(NO_MODEL_MESSAGE)
    from langchain.agents import create_agent

    box = build_tools(kb)
    agent = create_agent(model, list(box.tools.values()), system_prompt=SYSTEM_PROMPT)
    state = agent.invoke({"messages": [{"role": "user", "content": question}]})
    return Answer(text=_final_text(state["messages"]), citations=list(box.citations))
