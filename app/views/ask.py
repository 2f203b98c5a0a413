"""Ask: questions answered from the library and its evidence by a LangChain agent, with citations.

The answer is built only from what the agent's tools returned (``kb.agents.ask``); every note, claim
and run it used is shown as a link to the Note or Runs page. Without a chat model (``KB_CHAT_MODEL``)
the page says how to configure one, and the rest of the app works as before.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from app.state import chat_model, setup, worker
from app.widgets import empty_state
from kb.display import markdown_body, markdown_text

kb = setup()
EXAMPLES = [
    "Which claims about depth are refuted or inconclusive at small scale?",
    "What does the evidence say about the later layers of ESM-2?",
    "Which notes have claims whose quotes are not in their source text?",
]


def citation_links(citations: list[dict[str, Any]], key: str) -> None:
    """Each cited note, claim and run as a link to where it lives in the app."""
    if not citations:
        st.caption("No notes, claims or runs were consulted.")
        return
    st.caption("Sources")
    with st.container(horizontal=True, gap="small", key=f"cite_{key}"):
        for citation in citations:
            kind, ident = citation["kind"], citation["id"]
            if kind == "run":
                st.page_link(
                    "views/runs.py",
                    label=f"run {markdown_text(ident[:8])}",
                    icon=":material/play_circle:",
                    query_params={"run": ident},
                )
            elif kind == "claim":
                st.page_link("views/note.py", label=markdown_text(ident), icon=":material/checklist:",
                             query_params={"id": ident.split("#", 1)[0]})
            else:
                st.page_link("views/note.py", label=markdown_text(ident), icon=":material/description:",
                             query_params={"id": ident})


st.title("Ask")
model, why_not = chat_model()
if model is None:
    st.warning(why_not or "No chat model is configured.", icon=":material/key_off:")
    st.caption(
        "Everything else in kb works without a model: the Library, notes and evidence, re-verification, "
        "and the deterministic claim drafter on **Add / edit note**."
    )
    st.chat_input("Configure KB_CHAT_MODEL to ask questions", key="ask_input", disabled=True)
    st.stop()

history: list[dict[str, Any]] = st.session_state["chat"]
model_name = getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__
with st.container(horizontal=True, gap="small", vertical_alignment="center"):
    st.caption(
        f"Model: `{model_name}` · answers come only from the library and its evidence, with their sources"
    )
    if history:
        st.button("Clear", key="ask_clear", icon=":material/delete_sweep:", type="tertiary",
                  on_click=lambda: st.session_state.update(chat=[]))
if not history:
    empty_state("Ask about the notes, their claims and the evidence, e.g.\n\n" +
                "\n".join(f"- *{q}*" for q in EXAMPLES), icon=":material/forum:")
for i, message in enumerate(history):
    with st.chat_message(message["role"]):
        st.markdown(markdown_body(message["content"]))
        if message["role"] == "assistant":
            citation_links(message.get("citations", []), key=str(i))

question = st.chat_input("Ask about the library and its evidence", key="ask_input")
if question:
    history.append({"role": "user", "content": question})
    with st.chat_message("user"):
        st.markdown(markdown_body(question))
    with st.chat_message("assistant"):
        with st.status("Reading the library…", expanded=False) as status:
            try:
                # LangChain takes seconds to import: paid when a question is asked
                from kb.agents.ask import ask

                answer = ask(question, kb, model)
                text, citations = answer.text, [c.model_dump() for c in answer.citations]
                status.update(label=f"Consulted {len(citations)} source(s)", state="complete")
            except Exception as exc:  # noqa: BLE001 - a provider failure is shown, the page stays usable
                text, citations = f"The agent failed: {type(exc).__name__}: {exc}", []
                status.update(label="Failed", state="error")
        # The answer repeats what notes say (and a note may be written to steer the model): shown as text
        # where it would make the browser fetch or follow anything, like a note's body.
        st.markdown(markdown_body(text) if text else "_(no answer)_")
        citation_links(citations, key=str(len(history)))
    history.append({"role": "assistant", "content": text, "citations": citations})
    if any(c["kind"] == "run" for c in citations) and kb.runs(status="queued", limit=1):
        worker().ensure()  # the agent may have queued verifications: make sure someone runs them
