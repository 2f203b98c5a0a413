"""Library: filter, search and open notes."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app.state import get_kb, init_session
from app.summary import note_row
from schemas import Decision, Status

init_session()
kb = get_kb()
kb.index()

ANY = "(any)"
with st.sidebar:
    st.header("Filters")
    all_papers = kb.list_papers()
    tags = sorted({t for p in all_papers for t in (p.tags_text or "").split() if t})
    years = sorted({p.year for p in all_papers if p.year is not None}, reverse=True)
    tag = st.selectbox("Tag", [ANY, *tags], key="lib_tag")
    decision = st.selectbox("Decision", [ANY, *(d.value for d in Decision)], key="lib_decision")
    status = st.selectbox("Status", [ANY, *(s.value for s in Status)], key="lib_status")
    min_quality = st.slider("Min quality", 0, 5, 0, key="lib_min_quality", help="0 = no filter")
    year = st.selectbox("Year", [ANY, *years], key="lib_year")

st.title("Library")
query = st.text_input("Search", key="lib_search", placeholder="full-text search over titles, tags, bodies, claims")

papers = kb.list_papers(
    tag=None if tag == ANY else tag,
    decision=None if decision == ANY else decision,
    status=None if status == ANY else status,
    min_quality=min_quality or None,
    year=None if year == ANY else year,
)
if query.strip():
    hits = {h.paper_id: h for h in kb.search(query.strip(), limit=200)}
    papers = sorted((p for p in papers if p.id in hits), key=lambda p: -hits[p.id].score)

rows = [note_row(kb, p) for p in papers]
st.caption(f"{len(rows)} note(s)")
if not rows:
    st.info("No notes match these filters.")
    st.stop()

st.dataframe(pd.DataFrame(rows), key="lib_table", hide_index=True, use_container_width=True)
ids = [r["id"] for r in rows]
col_pick, col_open = st.columns([4, 1], vertical_alignment="bottom")
choice = col_pick.selectbox("Open note", ids, index=None, key="lib_open", placeholder="pick a note to open")
if col_open.button("Open", key="lib_open_btn", type="primary", disabled=choice is None):
    st.session_state["note_id"] = choice
    st.switch_page("pages/note.py")
