"""Library: every note with its claims' states at a glance; filter, search, open a note.

The table fits a 1400 px window with the sidebar open (no sideways scroll): the note (its title, wrapped
whole, then its id) and its claims' states come first, as words, then year, decision, status, quality and
tags. The per-state counts stay in the table's data; the header above sums them and the sidebar
filters by them.
"""

from __future__ import annotations

import functools

import pandas as pd
import streamlit as st

from app import data
from app.state import generation, index_first, index_keeper, settings_key, setup, show_flash
from app.widgets import STATE_CSS, STATE_HELP, STATE_STYLE, empty_state
from kb.display import markdown_text
from kb.evidence.claim_states import ALL_STATES
from kb.evidence.where import WhereError
from kb.evidence.where import split as split_where
from kb.index.search import QueryError, SearchIndexDamaged
from kb.papers import cite
from schemas import Decision, Status

kb = setup()
keeper = index_keeper()
key = settings_key(kb.settings)
ANY = "(any)"
PAGE_SIZES = [50, 100, 250, 500]
#: The states a row's "Claims" cell names, in the order it names them (every claim in one, as
#: kb.evidence.claim_states decides).
NAMED_STATES = list(ALL_STATES)
#: Which state colours a row's "Claims" cell: the first it has, from what needs a reader most to what least.
NOTABLE = ["refuted", "error", "at_odds_proxy", "stale", "supported", "consistent_proxy", "inconclusive",
           "not_runnable", "unverified", "unbound"]
#: Column widths (px): they add up to the table's width in a 1400 px window with the sidebar open (930 px,
#: of which the row-selection column takes 32), so nothing scrolls sideways; wider windows share out the rest.
WIDTHS = {"note": 290, "states": 190, "year": 48, "decision": 74, "status": 74, "quality": 34, "tags": 140}
#: Rows tall enough for four wrapped lines: a long title and its id (Streamlit wraps text only in rows over 4
#: rem).
ROW_HEIGHT = 84
#: The header: every claim state with its count, verdicts first, then what needs doing, then grounding.
HEADER_ROWS = [["supported", "refuted", "consistent_proxy", "at_odds_proxy"],
               ["inconclusive", "not_runnable", "error", "stale", "unverified", "unbound", "ungrounded"]]
#: The citation downloads: format, button label, file suffix, media type.
EXPORTS: list[tuple[cite.Format, str, str, str]] = [("bibtex", "BibTeX", ".bib", "application/x-bibtex"),
                                                     ("csl-json", "CSL-JSON", ".json", "application/json")]


def citations(note_ids: tuple[str, ...], fmt: cite.Format) -> bytes:
    """The file the Library's download buttons give: what ``kb export`` writes for these notes."""
    return cite.export(kb, note_ids, fmt).encode("utf-8")


def claim_states_text(row: pd.Series) -> str:
    """A note's claims in words, every state it has with its count: '6 claims · 5 not run · 1 no analyzer ·
    6 ungrounded' (ungrounded counts quotes, beside the states)."""
    parts = [f"{row[state]} {STATE_STYLE[state][2]}" for state in NAMED_STATES if row[state]]
    if row["ungrounded"]:
        parts.append(f"{row['ungrounded']} ungrounded")
    total = int(row["claims"])
    return " · ".join([f"{total} claim" + ("" if total == 1 else "s"), *parts]) if total else "no claims"


def shown_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The columns the table shows, beside the data: the note (title — id) and its claims in words."""
    frame = frame.copy()
    # A dash, not a new line: the table's wrapping reads a new line as a space.
    frame["note"] = frame["title"].fillna("").astype(str) + " — " + frame["id"].astype(str)
    frame["states"] = [claim_states_text(row) for _, row in frame.iterrows()] if len(frame) else []
    return frame


def style_states(frame: pd.DataFrame) -> pd.io.formats.style.Styler:
    """Colour each row's claims cell in the colour of its most notable state (a refuted claim first)."""
    def colour(row: pd.Series) -> list[str]:
        state = next((s for s in NOTABLE if row[s]), None)
        css = f"color: {STATE_CSS[state]}; font-weight: 600" if state else ""
        return [css if column == "states" else "" for column in row.index]

    return frame.style.apply(colour, axis=1)


show_flash()
facets = data.facets(key, generation())
if facets["notes"] == 0 and index_first():
    st.rerun()

with st.sidebar:
    st.subheader("Filters")
    tag = st.selectbox("Tag", [ANY, *facets["tags"]], key="lib_tag", persist_state="session",
                       format_func=lambda t: t if t == ANY else f"{t} ({facets['tag_counts'][t]})")
    decision = st.selectbox("Decision", [ANY, *(d.value for d in Decision)], key="lib_decision",
                            persist_state="session")
    status = st.selectbox(
        "Status", [ANY, *(s.value for s in Status)], key="lib_status", persist_state="session"
    )
    min_quality = st.slider("Minimum quality", 0, 5, 0, key="lib_min_quality", persist_state="session",
                            help="0 shows every note")
    year = st.selectbox("Year", [ANY, *facets["years"]], key="lib_year", persist_state="session")
    states = st.multiselect(
        "Has claims that are",
        data.PROBLEM_OPTIONS,
        key="lib_states",
        persist_state="session",
        placeholder="any state",
        format_func=lambda s: STATE_STYLE[s][2],
        help="Keep notes with at least one claim in any of these states. 'ungrounded': the claim's quote "
        "is not in the note's source text. 'not run': bound to an analyzer, never run. 'no analyzer': "
        "nothing can re-verify the claim.",
    )

st.title("Library")
report = keeper.last_report
if report is not None and report.errors:
    with st.expander(f"{len(report.errors)} note file(s) could not be indexed: fix them to see them here",
                     icon=":material/warning:"):
        for error in report.errors[:50]:
            st.text(str(error))
totals = facets["totals"]
# Every state with its count, zeros included: "0 supported" next to "8 inconclusive" is the news. Each metric
# is as wide as its label (a column grid cut "Consistent (proxy)" short), the rows wrap on narrow screens.
for row_number, states_in_row in enumerate(HEADER_ROWS):
    with st.container(horizontal=True, gap="medium", key=f"lib_header_{row_number}"):
        if row_number == 0:
            st.metric("Notes", f"{facets['notes']:,}", width="content")
            st.metric(
                "Claims", f"{facets['claims']:,}", width="content", help="Every claim, in exactly one state"
            )
        for state in states_in_row:
            colour, icon, label = STATE_STYLE[state]
            st.metric(f":{colour}[{icon} {label.capitalize()}]", f"{totals[state]:,}", help=STATE_HELP[state],
                      width="content")

search_col, sort_col, order_col = st.columns([6, 2, 1], vertical_alignment="bottom")
query = search_col.text_input("Search", key="lib_search", persist_state="session", icon=":material/search:",
                              placeholder="Full text: titles, tags, bodies, claims")
sort = sort_col.selectbox(
    "Sort by",
    ["id", "title", "year", "quality"],
    key="lib_sort",
    persist_state="session",
    disabled=bool(query.strip()),
    help="Search results are ordered by relevance",
)
descending = order_col.toggle("Desc.", key="lib_desc", persist_state="session")

# The saved query: kept in the URL (?where=...), so a view can be bookmarked and shared; one grammar with `kb
# list --where` (kb.evidence.where), conditions separated by ';'. An address whose query differs from the one
# this page last wrote (a bookmark, a link) sets the box; an address without one (back from a note) keeps the
# box and gets the query back.
url_where = st.query_params.get("where", "")
if "lib_where" not in st.session_state or (url_where and url_where != st.session_state.get("lib_where_url")):
    st.session_state["lib_where"] = url_where
where = st.text_input(
    "Where",
    key="lib_where",
    icon=":material/filter_alt:",
    placeholder="quality_score>=4; decision=ACCEPT; state=refuted",
    help="Conditions FIELD OP VALUE separated by ';', all must hold: any frontmatter field (dotted "
    "for nested ones: publication.year), tags, state (a claim's) or a claim state's count "
    "(refuted>=1); OP one of = != > >= < <= ~ (contains). The same as `kb list --where`; "
    "the address bar keeps it.",
)
st.session_state["lib_where_url"] = where.strip()
if where.strip():
    st.query_params["where"] = where.strip()
elif "where" in st.query_params:
    del st.query_params["where"]

try:
    frame = data.library_frame(
        key,
        generation(),
        query.strip(),
        None if tag == ANY else tag,
        None if decision == ANY else decision,
        None if status == ANY else status,
        min_quality or None,
        None if year == ANY else year,
        tuple(sorted(states)),
        sort,
        descending,
        tuple(split_where(where)),
    )
except WhereError as exc:  # a condition kb cannot read, or a field no note has: one line, the page stays
    st.error(markdown_text(f"Where {exc}"), icon=":material/filter_alt_off:")
    st.stop()
# a query kb cannot run, or a damaged index: say so, keep the page
except (QueryError, SearchIndexDamaged) as exc:
    st.error(markdown_text(exc), icon=":material/search_off:")
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

# Citations of every note the filters show (all pages), in the reference manager's formats. The file is made
# when the button is pressed (a deferred download): only then are missing citation keys written into notes.
try:
    cite.citekeys_in_use(kb)
except cite.CiteError as exc:
    st.warning(markdown_text(exc), icon=":material/key_off:")
else:
    chosen = tuple(str(i) for i in frame["id"])
    with st.container(horizontal=True, gap="small", key="lib_export", vertical_alignment="center"):
        st.caption(f"Cite these {len(chosen):,} note(s):", width="content")
        for fmt, label, suffix, mime in EXPORTS:
            st.download_button(
                label,
                data=functools.partial(citations, chosen, fmt),
                file_name=f"kb-citations{suffix}",
                mime=mime,
                key=f"lib_export_{fmt}",
                on_click="ignore",
                icon=":material/download:",
                help=f"{label} with each note's citation key (kb export --{fmt}); a note without "
                "one gets it written into its 'citekey' field",
            )

column_config = {
    "note": st.column_config.TextColumn(
        "Note", width=WIDTHS["note"], help="The title, whole, then the note's id"
    ),
    "states": st.column_config.TextColumn(
        "Claims",
        width=WIDTHS["states"],
        help="How many claims, and how many are in each state (the most notable "
        "state's colour); 'What the claim states mean' below",
    ),
    "year": st.column_config.NumberColumn("Year", format="%d", width=WIDTHS["year"]),
    "quality": st.column_config.NumberColumn(
        "Q", format="%d", width=WIDTHS["quality"], help="Quality score, 1 to 5"
    ),
    "decision": st.column_config.TextColumn("Decision", width=WIDTHS["decision"]),
    "status": st.column_config.TextColumn("Status", width=WIDTHS["status"]),
    "tags": st.column_config.TextColumn("Tags", width=WIDTHS["tags"]),
}
selection = st.dataframe(
    style_states(shown_columns(shown)), key="lib_table", hide_index=True, on_select="rerun",
    selection_mode="single-row", column_order=list(WIDTHS), column_config=column_config,
    row_height=ROW_HEIGHT, height=min(38 + ROW_HEIGHT * len(shown), 38 + ROW_HEIGHT * 9), placeholder="—",
)
rows = selection.selection.rows if selection else []
if rows:
    note_id = str(shown.iloc[rows[0]]["id"])
    st.session_state["note_id"] = note_id
    st.switch_page("views/note.py", query_params={"id": note_id})

with st.expander("What the claim states mean", icon=":material/help:"):
    for state in (*ALL_STATES, "ungrounded"):
        colour, icon, label = STATE_STYLE[state]
        st.markdown(f":{colour}[{icon} **{label}**] — {STATE_HELP[state]}")
