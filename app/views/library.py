"""Library: every note with its claims' states at a glance; filter, search, open a note."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import data
from app.state import index_first, index_keeper, settings_key, setup, show_flash
from app.widgets import STATE_CSS, STATE_HELP, STATE_STYLE, empty_state
from kb.evidence import ALL_STATES
from kb.search import QueryError, SearchIndexDamaged
from schemas import Decision, Status

kb = setup()
keeper = index_keeper()
key = settings_key(kb.settings)
ANY = "(any)"
PAGE_SIZES = [50, 100, 250, 500]
COUNT_COLUMNS = ["supported", "refuted", "consistent_proxy", "at_odds_proxy", "inconclusive", "stale", "unverified",
                 "ungrounded", "error", "not_runnable", "unbound"]
#: Count columns the table always shows; the others only when the library has such claims.
ALWAYS_SHOWN = {"supported", "refuted", "inconclusive", "stale", "unverified", "ungrounded"}
#: The header: every claim state with its count, verdicts first, then what needs doing, then grounding.
HEADER_ROWS = [["supported", "refuted", "consistent_proxy", "at_odds_proxy"],
               ["inconclusive", "not_runnable", "error", "stale", "unverified", "unbound", "ungrounded"]]


def style_counts(frame: pd.DataFrame) -> pd.io.formats.style.Styler:
    """Colour non-zero state counts in their state's colour; zeros fade out."""
    def colour(column: pd.Series) -> list[str]:
        css = STATE_CSS[str(column.name)]
        return [f"color: {css}; font-weight: 700" if v else "color: #d0d7de" for v in column]

    return frame.style.apply(colour, subset=[c for c in COUNT_COLUMNS if c in frame.columns])


show_flash()
facets = data.facets(key, keeper.generation)
if facets["notes"] == 0 and index_first():
    st.rerun()

with st.sidebar:
    st.subheader("Filters")
    tag = st.selectbox("Tag", [ANY, *facets["tags"]], key="lib_tag", persist_state="session",
                       format_func=lambda t: t if t == ANY else f"{t} ({facets['tag_counts'][t]})")
    decision = st.selectbox("Decision", [ANY, *(d.value for d in Decision)], key="lib_decision",
                            persist_state="session")
    status = st.selectbox("Status", [ANY, *(s.value for s in Status)], key="lib_status", persist_state="session")
    min_quality = st.slider("Minimum quality", 0, 5, 0, key="lib_min_quality", persist_state="session",
                            help="0 shows every note")
    year = st.selectbox("Year", [ANY, *facets["years"]], key="lib_year", persist_state="session")
    states = st.multiselect(
        "Has claims that are", data.PROBLEM_OPTIONS, key="lib_states", persist_state="session", placeholder="any state",
        format_func=lambda s: STATE_STYLE[s][2],
        help="Keep notes with at least one claim in any of these states. 'ungrounded': the claim's quote "
             "is not in the note's source text. 'not run': bound to an analyzer, never run. 'no analyzer': "
             "nothing can re-verify the claim.")

st.title("Library")
report = keeper.last_report
if report is not None and report.errors:
    with st.expander(f"{len(report.errors)} note file(s) could not be indexed: fix them to see them here",
                     icon=":material/warning:"):
        for error in report.errors[:50]:
            st.text(str(error))
totals = facets["totals"]
# Every state with its count, zeros included: "0 supported" next to "8 inconclusive" is the news. Each
# metric is as wide as its label (a column grid cut "Consistent (proxy)" short), the rows wrap on narrow screens.
for row_number, states_in_row in enumerate(HEADER_ROWS):
    with st.container(horizontal=True, gap="medium", key=f"lib_header_{row_number}"):
        if row_number == 0:
            st.metric("Notes", f"{facets['notes']:,}", width="content")
            st.metric("Claims", f"{facets['claims']:,}", width="content", help="Every claim, in exactly one state")
        for state in states_in_row:
            colour, icon, label = STATE_STYLE[state]
            st.metric(f":{colour}[{icon} {label.capitalize()}]", f"{totals[state]:,}", help=STATE_HELP[state],
                      width="content")

search_col, sort_col, order_col = st.columns([6, 2, 1], vertical_alignment="bottom")
query = search_col.text_input("Search", key="lib_search", persist_state="session", icon=":material/search:",
                              placeholder="Full text: titles, tags, bodies, claims")
sort = sort_col.selectbox("Sort by", ["id", "title", "year", "quality"], key="lib_sort", persist_state="session",
                          disabled=bool(query.strip()), help="Search results are ordered by relevance")
descending = order_col.toggle("Desc.", key="lib_desc", persist_state="session")

try:
    frame = data.library_frame(
        key, keeper.generation, query.strip(), None if tag == ANY else tag, None if decision == ANY else decision,
        None if status == ANY else status, min_quality or None, None if year == ANY else year,
        tuple(sorted(states)), sort, descending,
    )
except (QueryError, SearchIndexDamaged) as exc:  # a query kb cannot run, or a damaged index: say so, keep the page
    st.error(str(exc), icon=":material/search_off:")
    st.stop()
if frame.empty:
    if facets["notes"] == 0:
        empty_state("The library is empty. Add a note on **Add / edit note**, or put Markdown notes in "
                    f"`{kb.papers_dir}` and they will be indexed.", icon=":material/note_add:")
    else:
        empty_state("No note matches these filters. Clear the search or loosen the filters in the sidebar.",
                    icon=":material/filter_alt_off:")
    st.stop()

size_col, info_col, pager_col = st.columns([1, 3, 3], vertical_alignment="center")
page_size = size_col.selectbox("Rows per page", PAGE_SIZES, index=1, key="lib_page_size",
                               label_visibility="collapsed", format_func=lambda n: f"{n} / page")
num_pages = max(1, -(-len(frame) // page_size))
with pager_col:
    page = st.pagination(num_pages, key="lib_page", max_visible_pages=7) if num_pages > 1 else 1
start = (page - 1) * page_size
shown = frame.iloc[start:start + page_size]
info_col.caption(f"**{len(frame):,}** note(s) · showing {start + 1:,}–{start + len(shown):,} · "
                 "select a row to open the note")

# Always the problems and the verdicts; the rarer states' columns only when the library has any.
count_columns = [c for c in COUNT_COLUMNS if c in ALWAYS_SHOWN or totals[c]]
column_config = {
    "id": st.column_config.TextColumn("Note", width=190),
    "title": st.column_config.TextColumn("Title", width=250),
    "claims": st.column_config.NumberColumn("Claims", width=58),
    "year": st.column_config.NumberColumn("Year", format="%d", width=52),
    "quality": st.column_config.NumberColumn("Q", format="%d", width=34, help="Quality score, 1 to 5"),
    "decision": st.column_config.TextColumn("Decision", width=78),
    "status": st.column_config.TextColumn("Status", width=78),
    "tags": st.column_config.TextColumn("Tags", width="medium"),
}
SHORT = {"supported": "Supp.", "refuted": "Refuted", "consistent_proxy": "Proxy ✓", "at_odds_proxy": "Proxy ✗",
         "inconclusive": "Incon.", "stale": "Stale", "unverified": "Not run", "ungrounded": "Ungr.", "error": "Error",
         "not_runnable": "N/R", "unbound": "No anl."}
for state in count_columns:
    colour, _, label = STATE_STYLE[state]
    column_config[state] = st.column_config.NumberColumn(SHORT[state], width=58,
                                                         help=f"Claims: {label} ({STATE_HELP[state]})")
selection = st.dataframe(
    style_counts(shown), key="lib_table", hide_index=True, on_select="rerun", selection_mode="single-row",
    column_order=["id", "title", "claims", *count_columns, "year", "quality", "decision", "status", "tags"],
    column_config=column_config, height=min(38 + 35 * len(shown), 640), placeholder="—",
)
rows = selection.selection.rows if selection else []
if rows:
    note_id = str(shown.iloc[rows[0]]["id"])
    st.session_state["note_id"] = note_id
    st.switch_page("views/note.py", query_params={"id": note_id})

with st.expander("What the columns mean", icon=":material/help:"):
    for state in (*ALL_STATES, "ungrounded"):
        colour, icon, label = STATE_STYLE[state]
        st.markdown(f":{colour}[{icon} **{label}**] — {STATE_HELP[state]}")
