"""LLM agents over the knowledge base: a claim drafter and a question answerer, and their deterministic parts.

- ``config``: the chat model from ``KB_CHAT_MODEL`` (``init_chat_model``), or ``NoChatModel`` saying how to
  set one;
- ``tools``: the typed tool registry over ``KnowledgeBase`` (docstrings written for the model) and citations;
- ``queries``: claims with their states and outcomes at the evidence's scale, evidence by model, metric
  slices;
- ``drafter``: ``draft(text, kb, model)`` with ``create_agent`` and structured output, reviewed against the
  text and the analyzer registry; without a model the deterministic ``fallback`` drafter of numbers and
  tables;
- ``accept``: appending accepted claims to a note's ``claims:`` block, and the remembered last draft;
- ``ask``: ``ask(question, kb, model)``, answers from tool outputs with citations from the tool calls made;
- ``eval_set``: the labelled passages and the precision/recall of a drafter on them;
- ``tension_finder``: candidate tensions between qualitative claims, proposed by the model and checked against
  the notes (both quotes cited, marked "proposed by the model"); without a model none.
"""
