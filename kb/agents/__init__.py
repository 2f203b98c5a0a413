"""LLM agents over the knowledge base: a claim drafter and a question answerer.

Both are built with LangChain's ``create_agent`` over typed tools (``kb.agents.tools``) that call into
``kb.core.KnowledgeBase``. The chat model comes from configuration (``kb.agents.config``); without one,
``draft_claims`` falls back to a deterministic, number-driven drafter and ``ask`` raises ``NoChatModel``.
"""
