"""Tensions: claims of different notes that cannot both hold (``kb.evidence.tensions``).

A table first (quantity, the two claims and the values they accept, kb's value with its interval, the state),
then the chosen tension side by side with a button that queues the runs deciding it, a quantity's plot (every
note's claimed range against kb's measurement with its error bar), and, apart and labelled, the candidate
tensions a chat model proposes between qualitative claims.
"""

from __future__ import annotations

import streamlit as st

from app import data
from app.state import (
    chat_model,
    flash,
    generation,
    index_first,
    index_keeper,
    settings_key,
    setup,
    show_flash,
    worker,
)
from app.tension_panels import quantity_chart, tension_detail, tensions_frame
from app.widgets import empty_state
from kb.agents.tension_finder import PROPOSED_LABEL, Proposals, propose_tensions
from kb.core import KnowledgeBase
from kb.display import code_span, markdown_text
from kb.evidence import tensions as tensions_mod
from kb.notes.bindings import settling
from kb.notes.files import NoteError

kb = setup()
PROPOSALS_KEY = "tension_proposals"  # this page's own: the model's last proposals (kb.agents.tension_finder)
PAGE_SIZE = 100  # tensions per page of the table


def settle(kb: KnowledgeBase, tension_id: str) -> None:
    """Queue the runs that decide a tension and make sure a worker takes them (button callback)."""
    try:
        with index_keeper().lock:
            queued, skipped = kb.verify_tension(tension_id)
    except NoteError as exc:
        flash("error", str(exc))
        return
    for claim_key, reason in skipped:
        flash("warning", f"Skipped `{claim_key}`: {reason}")
    if queued:
        info = worker().ensure()
        where = (f"{info.runner()} runs them" if info is not None
                 else "no worker is running here: start one with `kb worker --forever`")
        flash("success", f"Queued {len(queued)} run(s) to settle {tension_id}; {where}.")


def propose(kb: KnowledgeBase) -> None:
    """Ask the chat model for candidate tensions between qualitative claims (button callback)."""
    model, _ = chat_model()
    st.session_state[PROPOSALS_KEY] = propose_tensions(kb, model)


show_flash()
st.title("Tensions")
st.caption(
    "Claims of different notes about the same quantity, subject and conditions whose expectations cannot "
    "both hold, or that one piece of evidence splits. Settle one by running what decides it."
)
index_first()  # a first visit before the background index ran would read an empty index
library = data.claims_across(settings_key(kb.settings), generation())
tensions = library.tensions
if isinstance(tensions, tensions_mod.Tensions) and (capped := tensions.message()) is not None:
    st.warning(markdown_text(capped), icon=":material/warning:")
chosen: tensions_mod.Tension | None = None
if not tensions:
    empty_state(
        "No tensions: no two notes make comparable claims that cannot both hold.", icon=":material/balance:"
    )
else:
    # One page of rows at a time: a large library has tens of thousands of tensions, and each row's value is
    # read from its deciding evidence; the rest are a page away (the chosen one is found among all of them).
    num_pages = -(-len(tensions) // PAGE_SIZE)
    info_col, pager_col = st.columns([3, 2], vertical_alignment="center")
    with pager_col:
        page = st.pagination(num_pages, key="tensions_page", max_visible_pages=7) if num_pages > 1 else 1
    start = (page - 1) * PAGE_SIZE
    shown = tensions[start:start + PAGE_SIZE]
    where = f" · showing {start + 1:,}–{start + len(shown):,}" if num_pages > 1 else ""
    info_col.caption(f"**{len(tensions):,}** tension(s){where} · select a row to see it side by side")
    frame = tensions_frame(shown)
    # The id (a 64-digit hash) last and the claim keys (note and claim ids, often 60 characters) narrow, full
    # in the side-by-side view below: at full width they pushed the values and the state out of view.
    narrow = {name: st.column_config.TextColumn(name, width="medium") for name in ("A", "B")}
    event = st.dataframe(frame, key="tensions_table", hide_index=True, on_select="rerun",
                         selection_mode="single-row", column_order=[*frame.columns[1:], "id"],
                         column_config={"state": st.column_config.TextColumn("state", width="large"),
                                        "id": st.column_config.TextColumn("id", width="small"), **narrow})
    picked = list(event.selection.rows) if event is not None else []  # type: ignore[union-attr]
    wanted = str(frame.iloc[picked[0]]["id"]) if picked else st.query_params.get("id")
    chosen = next((t for t in tensions if t.id == wanted), shown[0])  # none chosen: the page's first
    with st.container(border=True, key="tension_detail"):
        tension_detail(chosen)
        plan = tensions_mod.settle_plan(chosen)
        found = kb.claim(plan.claim_key) if plan.claim_key else None
        settles = settling(found[0], plan.preset) if found is not None else None
        # The primary action only when it can end here: a run this machine cannot execute is still worth
        # queueing (a GPU worker on the shared index takes it), but it is not what a person should do first.
        here = settles is None or settles.runnable_here
        cannot = "" if here or settles is None else (
            f" It cannot run on this machine ({settles.why_not}): a GPU worker on the shared index takes it."
        )
        st.button(
            "Settle: queue the runs that decide it",
            key="settle_tension",
            type="primary" if here else "secondary",
            icon=":material/gavel:",
            on_click=settle,
            args=(kb, chosen.id),
            disabled=plan.why_not is not None,
            help=markdown_text(plan.why_not)
            if plan.why_not
            else f"Runs {code_span(plan.claim_key)}'s "
            f"analyzer at {code_span(plan.preset)}, then both claims are judged on the same evidence."
            + markdown_text(cannot),
        )

st.subheader("A quantity across notes")
quantities = sorted({r.about.quantity for r in library.refs
                     if r.about.quantity and r.accepts is not None and r.accepts.value is None})
if not quantities:
    empty_state("No claim states a numeric expectation yet.")
else:
    default = chosen.quantity if chosen is not None and chosen.quantity in quantities else quantities[0]
    quantity = st.selectbox("Quantity", quantities, index=quantities.index(default), key="tension_quantity")
    first = [chosen.a.key, chosen.b.key] if chosen is not None and chosen.quantity == quantity else []
    chart, drawn, total = quantity_chart(library, quantity, first=first)
    if chart is not None:
        st.altair_chart(chart, key="tension_quantity_chart", width="stretch")
        some = (f" {drawn:,} of the {total:,} claims on this quantity are drawn ("
                f"{'the chosen tension’s first, then ' if first else ''}by key)." if drawn < total else "")
        st.caption("Bars: the values each note's claim accepts (an open end runs to the edge). Black: kb's "
                   f"measurement, with its interval across seeds.{some}")

st.subheader(f"Between qualitative claims: {PROPOSED_LABEL}")
st.caption(
    "Claims without an expectation cannot be compared by kb's rule. A chat model may propose candidate "
    "pairs, cited with both quotes; they are not kb's findings and are never listed above."
)
st.button(
    "Propose candidate tensions",
    key="propose_tensions",
    icon=":material/psychology:",
    on_click=propose,
    args=(kb,),
)
proposals: Proposals | None = st.session_state.get(PROPOSALS_KEY)
if proposals is not None:
    if proposals.message:
        st.info(markdown_text(proposals.message), icon=":material/info:")
    for proposal in proposals.proposals:
        with st.container(border=True, key=f"proposal_{proposal.id}"):
            st.badge(PROPOSED_LABEL, color="violet", icon=":material/psychology:")
            st.markdown(f"{code_span(proposal.a)} ↔ {code_span(proposal.b)}: {markdown_text(proposal.why)}")
            for side, quote, section in (("A", proposal.a_quote, proposal.a_section),
                                         ("B", proposal.b_quote, proposal.b_section)):
                where = f" ({markdown_text(section)})" if section else ""
                st.markdown(f"> {side}: {markdown_text(quote)}{where}")
