"""Note: the note as a tidy header and rendered Markdown, and each claim beside its latest evidence.

Re-verifying queues runs (``kb.verify``); the background worker executes them and a fragment polls
their progress until the verdicts land, then the page reruns to show them.
"""

from __future__ import annotations

import time
from collections import Counter
from urllib.parse import quote

import streamlit as st

from app import data
from app.evidence import (
    active_runs_panel,
    claim_panel,
    evidence_panel,
    evidence_plots,
    shared_caveats,
    shared_caveats_panel,
    with_results,
)
from app.sidebar import active_runs
from app.state import flash, generation, index_keeper, settings_key, setup, show_flash, worker
from app.tension_panels import others_panel
from app.widgets import STATE_STYLE, empty_state, state_badge
from kb.core import KnowledgeBase
from kb.display import body_within, code_span, markdown_body, markdown_text
from kb.evidence.claim_states import ClaimState, ClaimStatus, latest_results
from kb.notes.files import Note, NoteError
from kb.notes.grounding import check_note
from kb.notes.links import Link, code_ranges, find_links
from kb.notes.sources import SourceStatus
from kb.queue import executors
from schemas import PaperNote, RunRecord

kb = setup()
LIVE_SECONDS = 1.0


# "Run on": every registered executor, by the label it gives itself (kb.queue.executors).
EXECUTORS = {cls.label: name for name, cls in executors.load_all().items()}


def queue_runs(kb: KnowledgeBase, targets: list[str], what: str) -> None:
    """Queue verification runs and make sure a worker (or the chosen executor) will take them (button
    callback)."""
    executor = EXECUTORS.get(st.session_state.get("reverify_executor") or "", "local")
    device = st.session_state.get("reverify_device") or "cpu"
    try:
        with index_keeper().lock:
            queued, skipped = kb.verify(targets, executor=executor, device=device)
    except NoteError as exc:
        flash("error", str(exc))
        return
    for claim_key, reason in skipped:
        flash("warning", f"Skipped `{claim_key}`: {reason}")
    if not queued:
        return
    chosen = kb.executor(executor)
    if not chosen.needs_worker:
        try:
            jobs = chosen.submit(kb.engine, [r.id for r in queued])
        except (RuntimeError, ValueError, OSError) as exc:
            for record in queued:
                kb.cancel(record.id)
            flash("error", f"Could not submit to {chosen.label}: {exc}")
            return
        flash("success", f"Submitted {len(queued)} run(s) for {what} to {chosen.label}"
              + (f": job(s) {', '.join(jobs.values())}." if jobs else "."))
        return
    info = worker().ensure()
    where = (f"{info.runner()} runs them" if info is not None
             else "no worker is running here: start one with `kb worker --forever`")
    said = kb.queued_message(queued, what)
    flash("success", f"{said[:1].upper()}{said[1:]}; {where}.")


def note_runs(note_id: str) -> list[RunRecord]:
    """Queued and running runs of this note's claims."""
    return [r for r in active_runs() if r.claim_key and r.claim_key.split("#", 1)[0] == note_id]


def reconcile_now(every: float = 10.0) -> None:
    """Resubmit runs whose job vanished (Slurm), at most every ``every`` seconds per session."""
    now = time.monotonic()
    if now - st.session_state.get("slurm_reconciled_at", -every) >= every:
        st.session_state["slurm_reconciled_at"] = now
        kb.reconcile(executors.reconciling())


@st.fragment(run_every=LIVE_SECONDS)
def live_progress(note_id: str, shown: frozenset[str]) -> None:
    """Progress of this note's runs; reruns the page as soon as one of those it ``shown`` ends, so each
    verdict lands when its run does, not when the last one does."""
    runs = note_runs(note_id)
    if not runs or shown - {r.id for r in runs}:
        data.clear_caches()
        st.rerun()
    if any(r.executor in executors.reconciling() for r in runs):
        reconcile_now()
    with st.container(border=True):
        st.markdown(f":material/sync: **Verifying** · {len(runs)} run(s) in flight")
        for run in runs:
            claim = run.claim_key.split("#", 1)[1] if run.claim_key else run.analyzer
            st.progress(run.progress, text=f"{code_span(claim)} · {run.status.value} · "
                                           f"{markdown_text((run.message or '')[:80])}")
        if worker().status() is None:
            st.warning("No worker is running, so these runs wait. Start one with `kb worker --forever`.",
                       icon=":material/warning:")


def note_url(note_id: str, claim_id: str | None = None) -> str:
    """This page's address for a note (and a claim card on it), relative: it works under any base path."""
    return f"note?id={quote(note_id, safe='')}" + (f"&claim={quote(claim_id, safe='')}" if claim_id else "")


def _code_as_markdown(code: str, fenced: bool, unindented: bool) -> str:
    """Code of the body as Markdown that shows it as written. A code span is rewritten on one line with a
    fence its content cannot close (``code_span``); an unindented fenced block is kept as written (it is a
    top-level block to any Markdown reader); an indented one (in a list item) is escaped like text, since
    there the reader may end the block with its container and read what follows as Markdown."""
    if fenced:
        return code if unindented else markdown_body(code)
    run = len(code) - len(code.lstrip("`"))
    inner = code[run:len(code) - run]
    if inner.startswith(" ") and inner.endswith(" ") and inner.strip():
        inner = inner[1:-1]  # the one space each side CommonMark strips
    return code_span(inner)


def body_with_links(body: str, targets: dict[str, str | None]) -> str:
    """The body as safe Markdown with each link to a note or claim as a link to its page (its label, the
    note's title or the claim's statement; an unknown target stays as written, marked unknown). Text goes
    through ``markdown_body``; code (spans, fenced blocks) shows as written, where an escape would show a
    backslash."""
    pieces: list[tuple[int, int, Link | bool]] = [(link.start, link.end, link) for link in find_links(body)]
    pieces = sorted(pieces + [(start, end, fenced) for start, end, fenced in code_ranges(body)],
                    key=lambda piece: piece[0])
    out, done = [], 0
    for start, end, what in pieces:
        out.append(markdown_body(body[done:start]))
        if not isinstance(what, Link):
            out.append(_code_as_markdown(body[start:end], what, body[start] in "`~"))
        elif (resolved := targets.get(what.target)) is None:
            out.append(
                f"{markdown_body(body[start:end])} :gray[(unknown {'claim' if what.claim_id else 'note'})]"
            )
        else:
            icon = ":material/fact_check:" if what.claim_id else ":material/description:"
            out.append(
                f"[{icon} {markdown_text(what.label or resolved)}]({note_url(what.note_id, what.claim_id)})"
            )
        done = end
    return "".join([*out, markdown_body(body[done:])])


def backlinks_row(note_id: str) -> None:
    """The notes that link to this one (or to its claims), each a link to its page."""
    backlinks = kb.backlinks(note_id)
    if not backlinks:
        return
    with st.container(horizontal=True, gap="small", vertical_alignment="center", key="note_backlinks"):
        st.caption(
            f":material/link: Linked from {len({b.note_id for b in backlinks})} note(s):", width="content"
        )
        for source_id in dict.fromkeys(b.note_id for b in backlinks):
            back = [b for b in backlinks if b.note_id == source_id]
            claims = sorted({b.claim_id for b in back if b.claim_id})
            label = back[0].title + (f" (on {', '.join(claims)})" if claims else "")
            st.page_link("views/note.py", label=markdown_text(label), icon=":material/description:",
                         query_params={"id": source_id})


def _reading_badges(meta: PaperNote) -> None:
    """The reading state as one row of badges: decision, status, quality, venue tier, tags."""
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        if meta.decision:
            colour = {"ACCEPT": "green", "REJECT": "red", "MAYBE": "orange"}.get(meta.decision.value, "gray")
            st.badge(meta.decision.value, color=colour, icon=":material/gavel:")  # type: ignore[arg-type]
        if meta.status:
            st.badge(meta.status.value.replace("_", " "), color="blue", icon=":material/flag:")
        if meta.quality_score:
            st.badge("★" * meta.quality_score + "☆" * (5 - meta.quality_score), color="yellow",
                     help="Quality score")
        if meta.journal_tier:
            st.badge(f"tier {meta.journal_tier}", color="gray", help="Venue tier, 1 (top) to 5")
        for tag in meta.tags:
            st.badge(markdown_text(tag, brackets=False), color="violet", icon=":material/sell:")


def header(note: Note) -> None:
    """Title, authors, venue, identifiers, links, tags and the reading state as a compact header."""
    meta = note.meta
    st.title(markdown_text(meta.title))
    authors = ", ".join(a.name for a in meta.authors[:8]) + (" et al." if len(meta.authors) > 8 else "")
    pub = meta.publication
    venue = " ".join(str(x) for x in (pub.venue, pub.year) if x) if pub else ""
    st.markdown(" · ".join(x for x in (markdown_text(authors) or "authors not given",
                                       f"*{markdown_text(venue)}*" if venue else "") if x))
    if meta.field_sources:  # where 'kb add' took each field from: a record looked up online, the PDF's layout
        st.caption("Fields from: " + ", ".join(f"{markdown_text(k)} {markdown_text(v.value)}"
                                               for k, v in meta.field_sources.items()))
    _reading_badges(meta)
    ids = [code_span(meta.paper_id)]
    # kb's own links to arXiv and doi.org, with the note's identifier as escaped text and a quoted URL path
    if pub and pub.arxiv_id:
        ids.append(f"[arXiv\\:{markdown_text(pub.arxiv_id)}](https://arxiv.org/abs/{quote(pub.arxiv_id)})")
    if pub and pub.doi:
        ids.append(f"[doi\\:{markdown_text(pub.doi)}](https://doi.org/{quote(pub.doi)})")
    links = [
        (label, url)
        for label, url in (
            ("Paper", meta.urls.paper_url if meta.urls else None),
            ("PDF", meta.urls.pdf_url if meta.urls else None),
            ("Code", meta.urls.code_url if meta.urls else None),
        )
        if url
    ]
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        st.markdown(" · ".join(ids))
        for label, url in links:
            st.link_button(label, url, icon=":material/open_in_new:", type="tertiary")
    more = {
        "Institutions": ", ".join(meta.institutions), "Direction": meta.direction, "Topic": meta.topic,
        "Analyst": meta.analyst, "Analysed": meta.analysis_date, "Decided": meta.decision_date,
        "Source text": meta.source_file, "Citation key": meta.citekey, "File": str(note.path),
    }
    with st.expander("More about this note", icon=":material/info:"):
        st.dataframe([{"field": k, "value": str(v)} for k, v in more.items() if v], hide_index=True,
                     key="note_more", column_config={"field": st.column_config.TextColumn("", width=110),
                                                     "value": st.column_config.TextColumn("", width="large")})
        if meta.extra_fields:
            st.caption("Fields kb does not know (kept as written)")
            st.json(meta.extra_fields, expanded=True)


show_flash()
note_id = st.query_params.get("id") or st.session_state.get("note_id")
if not note_id:
    st.title("Note")
    empty_state("No note chosen. Open one from the **Library** (select a row), or pick it here.",
                icon=":material/description:")
    ids = data.unfiltered(settings_key(kb.settings), generation())["id"].tolist()
    choice = st.selectbox("Note", ids, index=None, key="note_pick", placeholder="Type to find a note id")
    if choice:
        st.session_state["note_id"] = choice
        st.query_params["id"] = choice
        st.rerun()
    st.stop()

try:
    note = kb.read(note_id)
except NoteError as exc:
    st.title("Note")
    st.error(markdown_text(f"Cannot open note {note_id!r}: {exc}"), icon=":material/error:")
    st.page_link("views/library.py", label="Back to the Library", icon=":material/arrow_back:")
    st.stop()
st.session_state["note_id"] = note_id
if st.query_params.get("id") != note_id:
    st.query_params["id"] = note_id

header(note)
backlinks_row(note_id)
claims = note.meta.claims
linked_claim = st.query_params.get("claim")  # a link [[note-id#claim-id]] led here
source = kb.read_source(note)  # only inside the notes folder, size-capped, regular files only
bound = [c for c in claims if c.analyzer is not None]
known = set(kb.analyzers())
evidence = {c.id: kb.evidence(f"{note_id}#{c.id}") for c in claims}
in_flight = note_runs(note_id)
running_claims = {r.claim_key for r in in_flight}

with st.container(horizontal=True, gap="small", vertical_alignment="center"):
    st.button(
        f"Re-verify all {len(bound)} claims" if len(bound) > 1 else "Re-verify",
        key="reverify_note",
        type="primary",
        icon=":material/replay:",
        disabled=not bound or bool(in_flight),
        on_click=queue_runs,
        args=(kb, [note_id], f"note {note_id}"),
        help="Queue a run for every claim bound to an analyzer; a background worker runs them",
    )
    st.segmented_control(
        "Run on",
        list(EXECUTORS),
        key="reverify_executor",
        default="This machine",
        label_visibility="collapsed",
        help="Where re-verification runs: "
        + "; ".join(f"{label}: {executors.get(name).description}" for label, name in EXECUTORS.items()),
    )
    st.segmented_control(
        "Device",
        ["cpu", "cuda"],
        key="reverify_device",
        default="cpu",
        label_visibility="collapsed",
        help="Device the runs ask for (a Slurm job on cuda gets a GPU)",
    )
    st.page_link(
        "views/edit_note.py", label="Edit note", icon=":material/edit:", query_params={"id": note_id}
    )
    st.page_link("views/runs.py", label="Runs", icon=":material/play_circle:")

indexed = kb.claim_states(note_id)  # the one claim-state rule, as the Library, CLI and agents apply it
# a claim the index has not caught up with has no evidence yet
status = {c.id: indexed.get(f"{note_id}#{c.id}")
          or ClaimStatus(ClaimState.unverified if c.analyzer else ClaimState.unbound) for c in claims}
states = Counter(s.state.value for s in status.values())  # every claim counted, those without an analyzer too

if in_flight:
    live_progress(note_id, frozenset(r.id for r in in_flight))

tab_claims, tab_note, tab_source = st.tabs([f"Claims & evidence ({len(claims)})", "Note", "Source text"],
                                           key="note_tab")
with tab_claims:
    if not claims:
        empty_state("This note makes no claims yet. Add some on **Add / edit note** (or let the drafter "
                    "propose them from the source text).", icon=":material/checklist:")
    else:
        if linked_claim and linked_claim not in {c.id for c in claims}:
            st.warning(
                markdown_text(f"This note has no claim {linked_claim!r} (the link that led here names it)."),
                icon=":material/link_off:",
            )
        with st.container(horizontal=True, gap="small"):
            for state in STATE_STYLE:
                if states.get(state):
                    state_badge(state, states[state])
        grounding = {r.claim_id: r for r in check_note(note, source)}
        # Other notes' claims on the same quantities, and the tensions (kb.evidence.tensions): once per index
        # generation
        across = data.claims_across(settings_key(kb.settings), generation(), note_id)
        # Caveats every verified claim repeats (one run's, or one analyzer's) are said once, here.
        ran = with_results([evidence[c.id][0] for c in claims if evidence[c.id]])
        shared = shared_caveats(ran)
        if shared:
            shared_caveats_panel(shared, len(ran))
        for claim in claims:
            claim_key = f"{note_id}#{claim.id}"
            with st.container(border=True, key=f"claim_{claim.id}"):
                left, right = st.columns([5, 6], gap="large")
                with left:
                    if claim.id == linked_claim:
                        st.badge("the claim the link named", color="blue", icon=":material/link:")
                    claim_panel(claim, status[claim.id], grounding.get(claim.id), known)
                    if claim.analyzer is not None:
                        st.button("Re-verify", key=f"reverify_{claim_key}", icon=":material/replay:",
                                  disabled=claim_key in running_claims or claim.analyzer.name not in known,
                                  on_click=queue_runs, args=(kb, [claim_key], f"claim {claim.id}"))
                with right:
                    active_runs_panel([r for r in in_flight if r.claim_key == claim_key])
                    evidence_panel(
                        kb.store,
                        claim,
                        evidence[claim.id],
                        key=claim_key,
                        results=latest_results(kb.engine, claim_key) if claim.paper_values else None,
                        shared=shared,
                    )
                # across the card, readable
                evidence_plots(kb.store, claim, evidence[claim.id], key=claim_key)
                others_panel(across, claim_key)  # its tensions; other notes' claims on the same quantity

with tab_note:
    if note.body.strip():
        shown, left_out = body_within(note.body, kb.settings.max_rendered_body, note.path)
        # No image, link or HTML of the note's: never fetched nor followed; kb's own links to notes and claims
        # ([[note-id#claim-id]]) lead to this page.
        st.markdown(body_with_links(shown, kb.link_targets(find_links(shown))))
        if left_out is not None:
            st.caption(left_out)
    else:
        empty_state("The note has no body yet.")

with tab_source:
    if source.status is SourceStatus.none:
        empty_state("The note names no `source_file`: add the paper's abstract or full text beside the note "
                    "and set `source_file` so claims' quotes can be checked against it.")
    elif source.text is None:  # missing, or refused (outside the notes folder, not a regular file, too large)
        show = st.warning if source.status is SourceStatus.missing else st.error
        show(markdown_text(source.problem or ""), icon=":material/block:")
    else:
        if source.problem is not None:
            st.warning(markdown_text(source.problem))
        st.caption(f"{code_span(note.meta.source_file)} · quotes of the claims are checked against this "
                   "text")
        with st.container(height=520, border=True):
            st.text(source.text)
