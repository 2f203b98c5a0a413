"""Entry point: ``kb app`` (or ``streamlit run app/main.py``). Thin pages live in app/views/ (not pages/,
which Streamlit would also list on its own)."""

from __future__ import annotations

import streamlit as st

from app.sidebar import status_panel
from app.state import index_keeper, setup

st.set_page_config(layout="wide", page_title="kb · PLM claims", page_icon=":material/biotech:")
setup()

LIBRARY = st.Page("views/library.py", title="Library", icon=":material/library_books:", url_path="library")


def home() -> None:
    """The app's root address opens the Library at its own address, so ``/library`` is a real, linkable page
    (a default page answers only at ``/``: Streamlit would call ``/library`` 'page not found')."""
    st.switch_page(LIBRARY)


PAGES = {
    "Library": [
        st.Page(home, title="Home", url_path="home", default=True, visibility="hidden"),
        LIBRARY,
        st.Page("views/note.py", title="Note", icon=":material/description:", url_path="note"),
        st.Page("views/edit_note.py", title="Add / edit note", icon=":material/edit_note:", url_path="edit"),
    ],
    "Verification": [
        st.Page("views/runs.py", title="Runs", icon=":material/play_circle:", url_path="runs"),
        st.Page(
            "views/compare.py", title="Compare", icon=":material/stacked_line_chart:", url_path="compare"
        ),
        st.Page("views/tensions.py", title="Tensions", icon=":material/balance:", url_path="tensions"),
    ],
    "Assistant": [
        st.Page("views/ask.py", title="Ask", icon=":material/forum:", url_path="ask"),
    ],
}
page = st.navigation(PAGES)
# Pages that show verdicts rerun when runs end (the Library's counts, a note's claims), wherever they were
# queued.
status_panel(rerun_on_change=page.url_path in ("", "home", "library", "note"))
try:
    page.run()
finally:
    # After the page has rendered (also when it switched page or stopped): catch up with the notes folder.
    index_keeper().refresh()
