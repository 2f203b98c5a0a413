"""Entry point: ``streamlit run app/main.py`` (or ``kb app``). Pages live in app/pages/."""

from __future__ import annotations

import streamlit as st

from app.state import init_session

st.set_page_config(layout="wide", page_title="kb")
init_session()

PAGES = [
    st.Page("pages/library.py", title="Library", icon=":material/library_books:", default=True),
    st.Page("pages/note.py", title="Note", icon=":material/description:"),
    st.Page("pages/add_note.py", title="Add note", icon=":material/note_add:"),
    st.Page("pages/runs.py", title="Runs", icon=":material/play_circle:"),
]
st.navigation(PAGES).run()
