"""A scripted LangChain fake chat model for the agent tests: it binds the tools ``create_agent`` offers,
records what it was shown, and replies with real tool calls (fixed replies, or functions of the conversation
so that a reply can act on what a tool answered)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field


class ScriptedChatModel(GenericFakeChatModel):
    """A fake chat model that binds tools and replays scripted replies: AIMessages with real tool calls,
    or functions of the conversation (so a reply can react to what a tool answered)."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)
    bound: list[list[str]] = Field(default_factory=list)

    def bind_tools(  # type: ignore[override]
            self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> ScriptedChatModel:
        self.bound.append([convert_to_openai_tool(t)["function"]["name"] for t in tools])
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        reply: Any = next(self.messages)
        if callable(reply):
            reply = reply(messages)
        return ChatResult(generations=[ChatGeneration(message=reply)])


def scripted(*replies: AIMessage | Callable[[list[BaseMessage]], AIMessage]) -> ScriptedChatModel:
    """A model that gives these replies, in order."""
    iterator: Iterator[Any] = iter(replies)
    return ScriptedChatModel(messages=iterator)


def call(name: str, args: dict[str, Any], ident: str) -> AIMessage:
    """A reply that calls one tool."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": ident, "type": "tool_call"}])


def tool_results(messages: list[BaseMessage]) -> dict[str, str]:
    """What each tool call answered, by call id."""
    return {str(m.tool_call_id): str(m.content) for m in messages if isinstance(m, ToolMessage)}
