"""Which chat model the agents use: read from the ``KB_CHAT_MODEL`` environment variable.

The value is a LangChain ``provider:model`` string, e.g. ``openai:gpt-4o-mini``,
``anthropic:claude-3-5-haiku-latest`` or ``ollama:llama3``, handed to ``init_chat_model``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # seconds to import: paid only where a model is made
    from langchain_core.language_models import BaseChatModel

ENV_VAR = "KB_CHAT_MODEL"


class NoChatModel(RuntimeError):
    """No chat model is configured (or the configured one cannot be created)."""


NO_MODEL_MESSAGE = (
    f"no chat model configured: set {ENV_VAR} to a LangChain 'provider:model' string, e.g. "
    f"'{ENV_VAR}=openai:gpt-4o-mini' (needs OPENAI_API_KEY and langchain-openai), "
    f"'{ENV_VAR}=anthropic:claude-3-5-haiku-latest' or '{ENV_VAR}=ollama:llama3'. "
    "Without a model, 'kb draft-claims' still works with its deterministic fallback drafter "
    "(explicit numbers and tables), but 'kb ask' needs a model."
)


# Offline or behind a dead proxy a call must fail in seconds, not after minutes of retries; answers
# themselves may take a while. Only providers whose clients take these arguments are listed.
CLIENT_SETTINGS: dict[str, dict[str, Any]] = {
    "openai": {"max_retries": 1, "timeout": 120},
    "azure_openai": {"max_retries": 1, "timeout": 120},
    "anthropic": {"max_retries": 1, "timeout": 120},
}


def chat_model(spec: str | None) -> BaseChatModel:
    """The chat model ``spec`` names (``Settings.chat_model``, i.e. KB_CHAT_MODEL); raises ``NoChatModel``
    with setup instructions when there is none."""
    spec = (spec or "").strip()
    if not spec:
        raise NoChatModel(NO_MODEL_MESSAGE)
    from langchain.chat_models import init_chat_model

    provider = spec.split(":", 1)[0] if ":" in spec else ""
    try:
        return init_chat_model(spec, **CLIENT_SETTINGS.get(provider, {}))
    except Exception as exc:  # a missing provider package, an unknown provider, a missing API key, ...
        raise NoChatModel(
            f"cannot create the chat model {spec!r} named by {ENV_VAR}: {type(exc).__name__}: {exc}. "
            "Install the provider's package (e.g. pip install 'plm-kb[openai]') and set its API key, "
            f"or unset {ENV_VAR}."
        ) from exc
