"""Add / edit note: frontmatter form validated live by ``schemas.PaperNote``, Markdown editor with preview,
claims editor over the analyzer registry, and a drafter that proposes claims for review.

Nothing is written until every field is valid. A new note is written atomically and indexed
(``kb.new_note``); editing writes only the fields that changed (``kb.set_fields``), so every other
line of the file stays byte-identical.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st
from pydantic import ValidationError

from app import data
from app.claims_editor import (
    add_claim,
    claim_editor,
    claim_uids,
    from_draft,
    load_claims,
    params_errors,
    proposed_scale_text,
)
from app.forms import NONE, ErrorSlots, errors_of, field_error, init_value, jsonable, overlay, reset_values
from app.state import chat_model, flash, generation, index_keeper, setup, show_flash
from kb.display import markdown_text
from kb.notes.edits import frontmatter_data
from kb.notes.files import Note, NoteChanged, NoteError
from schemas import Claim, Decision, PaperNote, Status

kb = setup()
analyzers = kb.analyzers()
BODY_PLACEHOLDER = "## Summary\n\n## Methods\n\n## Results\n\n## My take\n"


def _add_blank_claim() -> None:
    """The "Add a claim" button's callback: an empty claim (a callback's return value is ignored)."""
    add_claim()


def _reload() -> None:
    """The "Reload the note" button's callback: the next run fills the form from the file as it is now."""
    st.session_state["edit_target"] = None


def load(note: Note | None) -> None:
    """Put a note (or an empty form) into the widgets."""
    reset_values("fm_")
    st.session_state.pop("draft_text", None)
    # As written in the file (key order, ints, nulls), so untouched values come back byte-identical.
    meta: dict[str, Any] = frontmatter_data(note) if note else {}
    pub, urls = meta.get("publication") or {}, meta.get("urls") or {}
    st.session_state["fm__orig"] = meta
    for key, value in {
        "title": meta.get("title", ""), "paper_id": meta.get("paper_id", ""), "venue": pub.get("venue") or "",
        "year": pub.get("year"), "arxiv_id": pub.get("arxiv_id") or "", "doi": pub.get("doi") or "",
        "paper_url": urls.get("paper_url") or "", "pdf_url": urls.get("pdf_url") or "",
        "code_url": urls.get("code_url") or "", "tags": list(meta.get("tags") or []),
        "status": str(meta.get("status") or NONE), "decision": str(meta.get("decision") or NONE),
        "quality_score": meta.get("quality_score"), "journal_tier": meta.get("journal_tier"),
        "analyst": meta.get("analyst") or "", "direction": meta.get("direction") or "",
        "topic": meta.get("topic") or "", "source_file": meta.get("source_file") or "",
        "institutions": "\n".join(meta.get("institutions") or []),
        "body": note.body if note else "",
        "analysis_date": note.meta.analysis_date if note else None,
        "decision_date": note.meta.decision_date if note else None,
    }.items():
        st.session_state[f"fm_{key}"] = value
    st.session_state["fm_authors_base"] = pd.DataFrame(
        [
            {"name": a.get("name", ""), "affiliation": a.get("affiliation") or ""}
            for a in meta.get("authors") or []
        ],
        columns=["name", "affiliation"],
    )
    load_claims(list(meta.get("claims") or []))
    st.session_state["drafts"] = None
    st.session_state["fm_attempted"] = False


def text(key: str) -> str:
    return str(st.session_state.get(key) or "").strip()


def authors(original: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Authors from the table, each rebuilt on top of what the note had at that row."""
    edited = st.session_state.get("fm_authors_value")
    if edited is None:
        return original
    out = []
    for i, row in enumerate(edited.to_dict("records")):
        name = str(row.get("name") or "").strip()
        if not name:
            continue
        base = original[i] if i < len(original) else {}
        out.append(overlay(base, {"name": name, "affiliation": str(row.get("affiliation") or "").strip()},
                           ["name", "affiliation"]))
    return out


def build_meta(original: dict[str, Any]) -> dict[str, Any]:
    """The frontmatter the form describes, on top of the note's own (unknown fields kept)."""
    pub = overlay(original.get("publication"), {
        "venue": text("fm_venue"), "year": st.session_state.get("fm_year"), "arxiv_id": text("fm_arxiv_id"),
        "doi": text("fm_doi")}, ["venue", "year", "arxiv_id", "doi"])
    urls = overlay(original.get("urls"), {k: text(f"fm_{k}") for k in ("paper_url", "pdf_url", "code_url")},
                   ["paper_url", "pdf_url", "code_url"])
    status, decision = st.session_state.get("fm_status"), st.session_state.get("fm_decision")
    values = {
        "paper_id": text("fm_paper_id"),
        "title": text("fm_title"),
        "authors": authors(original.get("authors") or []),
        "institutions": [line.strip() for line in text("fm_institutions").splitlines() if line.strip()],
        "publication": pub or None,
        "urls": urls or None,
        "direction": text("fm_direction"),
        "topic": text("fm_topic"),
        "tags": [t.strip() for t in st.session_state.get("fm_tags") or [] if t.strip()],
        "journal_tier": st.session_state.get("fm_journal_tier"),
        "quality_score": st.session_state.get("fm_quality_score"),
        "status": None if status == NONE else status,
        "decision": None if decision == NONE else decision,
        "analyst": text("fm_analyst"),
        "source_file": text("fm_source_file"),
    }
    for date_field in ("decision_date", "analysis_date"):
        value = st.session_state.get(f"fm_{date_field}")
        values[date_field] = jsonable(value) if value else None
    meta = overlay(original, values, list(values))
    if isinstance(meta.get("year"), float):
        meta["year"] = int(meta["year"])
    return meta


def changed_fields(note: Note, meta: dict[str, Any]) -> tuple[dict[str, Any], list[Claim]]:
    """Top-level fields whose value differs from the note's (compared as validated models), and the
    claims to append when the only change to the claims is new ones at the end (kept byte-exact)."""
    new = PaperNote.model_validate(meta)
    old = note.meta
    changes = {
        name: meta.get(name) for name in PaperNote.model_fields if getattr(new, name) != getattr(old, name)
    }
    for name in set(new.extra_fields) | set(old.extra_fields):
        if new.extra_fields.get(name) != old.extra_fields.get(name):
            changes[name] = meta.get(name)
    appended: list[Claim] = []
    if (
        "claims" in changes
        and len(new.claims) > len(old.claims)
        and new.claims[: len(old.claims)] == old.claims
    ):
        appended = new.claims[len(old.claims):]
        del changes["claims"]
    return changes, appended


def fill_from(records: list[Any]) -> None:
    """Put what an upload or lookup found (``kb.papers.add.PaperRecord``) into the form; saving stores its
    text, the new note's body gets the abstract (as ``kb add`` writes it) and ``field_sources`` says where
    each field came from, for the fields still as filled when the note is created (``kept_sources``)."""
    from kb.papers.add import body_for

    record = records[0]
    meta = record.frontmatter()
    load(None)
    pub, urls = meta["publication"], meta["urls"]
    for key, value in {"title": record.title, "paper_id": record.paper_id, "venue": pub["venue"] or "",
                       "year": pub["year"], "arxiv_id": pub["arxiv_id"] or "", "doi": pub["doi"] or "",
                       "paper_url": urls["paper_url"] or "", "pdf_url": urls["pdf_url"] or "",
                       "status": meta["status"], "decision": meta["decision"],
                       "institutions": "\n".join(meta["institutions"]), "body": body_for(record)}.items():
        st.session_state[f"fm_{key}"] = value
    st.session_state["fm_authors_base"] = pd.DataFrame(meta["authors"], columns=["name", "affiliation"])
    st.session_state["draft_text"] = record.text.strip()
    st.session_state["fm__filled"] = {"sources": meta["field_sources"], "values": source_values(meta),
                                      "abstract": record.abstract}
    for notice in record.notices:  # a lookup not made and why, a template DOI left out, ...
        flash("warning", notice)
    more = (
        f" ({len(records) - 1} more entries in the file: add them with `kb add`)" if len(records) > 1 else ""
    )
    flash(
        "success", f"Filled in from the source{more}; its text is stored beside the note when you create it."
    )


def source_values(meta: dict[str, Any]) -> dict[str, Any]:
    """The values ``field_sources`` speaks for, as a frontmatter holds them (to tell which were edited)."""
    pub = meta.get("publication") or {}
    authors = meta.get("authors") or []
    return {"title": meta.get("title"), "authors": [a.get("name") for a in authors],
            "affiliations": [a.get("affiliation") for a in authors], "year": pub.get("year"),
            "venue": pub.get("venue"), "doi": pub.get("doi"), "arxiv_id": pub.get("arxiv_id")}


def kept_sources(meta: dict[str, Any], body: str) -> dict[str, str]:
    """The filled fields' sources that still hold: a field edited after the upload is the user's, not the
    record's, so its source is dropped (and the abstract's when the body no longer holds it)."""
    filled = st.session_state.get("fm__filled") or {}
    now, then = source_values(meta), filled.get("values") or {}
    abstract = filled.get("abstract")
    return {
        name: source
        for name, source in (filled.get("sources") or {}).items()
        if (name == "abstract" and abstract and abstract in body) or (name in now and now[name] == then[name])
    }


def import_upload() -> None:
    """File-uploader callback: read a PDF, BibTeX or CSL-JSON upload into the form, as ``kb add FILE`` reads
    it (a PDF's DOI or arXiv id looked up online: ``kb.papers.lookups.read_paper_file``)."""
    import tempfile
    from pathlib import Path

    from kb.papers.add import AddError
    from kb.papers.lookups import read_paper_file

    upload = st.session_state.get("add_upload")
    if upload is None:
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / Path(upload.name).name
        path.write_bytes(upload.getvalue())
        try:
            with st.spinner("Reading the file and looking up the identifiers it prints…"):
                fill_from(read_paper_file(path, kb.settings))
        except AddError as exc:
            flash("error", str(exc).replace(str(path), upload.name))


def look_up() -> None:
    """Button callback: look an arxiv:ID or doi:DOI up online and fill the form (as ``kb add arxiv:ID``)."""
    from kb.papers.add import AddError
    from kb.papers.lookups import look_up_identifier

    ident = str(st.session_state.get("add_lookup") or "").strip()
    try:
        record = look_up_identifier(ident, kb.settings)
    except AddError as exc:
        flash("error", str(exc))
        return
    if record is None:
        flash("error", f"{ident!r}: give arxiv:ID (e.g. arxiv:2602.21750) or doi:DOI")
    else:
        fill_from([record])


def accept_drafts(rows: list[dict[str, Any]]) -> None:
    """Button callback: add the drafted claims the user kept to the claims editor."""
    taken = {st.session_state.get(f"c_{uid}_id") for uid in claim_uids()}
    added = 0
    for row in rows:
        if not row.get("add"):
            continue
        claim = dict(row["claim"])
        claim["id"], claim["statement"] = row["id"], row["statement"]
        claim["source"] = {**claim.get("source", {}), "quote": row["quote"]}
        if row.get("analyzer") and row["analyzer"] != NONE:
            drafted = claim.get("analyzer") or {}
            # The drafted binding (parameters, scale) stands while the reviewer keeps its analyzer.
            claim["analyzer"] = (
                drafted if drafted.get("name") == row["analyzer"] else {"name": row["analyzer"], "params": {}}
            )
        else:
            claim.pop("analyzer", None)
            claim.pop("expect", None)  # an expectation names the metric of the analyzer just dropped
        n = 2
        while claim["id"] in taken:
            claim["id"], n = f"{row['id']}-{n}", n + 1
        taken.add(claim["id"])
        add_claim(claim)
        added += 1
    st.session_state["drafts"] = None
    flash("success", f"Added {added} drafted claim(s) below: review them, then save the note.")


# -- which note ---------------------------------------------------------------------------------
show_flash()
edit_id = st.query_params.get("id")
note: Note | None = None
if edit_id:
    try:
        note = kb.read(edit_id)
    except NoteError as exc:
        st.error(markdown_text(f"Cannot edit {edit_id!r}: {exc}"), icon=":material/error:")
        st.stop()
target = f"edit:{edit_id}" if note else "new"
if st.session_state.get("edit_target") != target or "fm_title" not in st.session_state:
    load(note)
    st.session_state["edit_target"] = target
    # The file as the form was filled from it: saving refuses if it changed on disk since (another edit
    # landed), rather than silently overwriting that edit or dropping what was typed here.
    st.session_state["edit_hash"] = note.content_hash if note else None
original: dict[str, Any] = st.session_state.get("fm__orig") or {}

if note:
    st.title(f"Edit · {note.meta.title}")
    with st.container(horizontal=True, gap="small"):
        st.page_link("views/note.py", label="Back to the note", icon=":material/arrow_back:",
                     query_params={"id": note.id})
        st.page_link("views/edit_note.py", label="Start a new note instead", icon=":material/note_add:")
    st.caption(
        f"`{note.path}` · saving rewrites only the fields you change; everything else stays byte for byte"
    )
else:
    st.title("Add a note")
    st.caption(
        "Every field is checked against the note schema as you type; nothing is written until it is valid."
    )
    with st.container(border=True):
        st.markdown("#### :material/upload_file: Start from the paper")
        f1, f2 = st.columns([3, 2])
        f1.file_uploader(
            "PDF, BibTeX or Zotero CSL-JSON",
            type=["pdf", "bib", "json"],
            key="add_upload",
            on_change=import_upload,
            help="Fills the fields below; the paper's text (a PDF's full "
            "text with its pages) is stored beside the note when you create it",
        )
        f2.text_input("or look up", key="add_lookup", placeholder="arxiv:2602.21750 or doi:10.…")
        f2.button("Look up", key="add_lookup_go", on_click=look_up, icon=":material/search:")
        filled_sources = (st.session_state.get("fm__filled") or {}).get("sources") or {}
        if filled_sources:  # as `kb show` and the note page say it: a record online, the PDF's layout, ...
            st.caption("Where the fields came from: " + " · ".join(
                f"{name} `{source}`" for name, source in filled_sources.items()))

slots = ErrorSlots()
# -- frontmatter --------------------------------------------------------------------------------
with st.container(border=True):
    st.markdown("#### :material/article: Paper")
    c1, c2 = st.columns([3, 2])
    with c1:
        st.text_input("Title", key="fm_title", persist_state="session")
        slots.slot("title")
    with c2:
        st.text_input("Paper id", key="fm_paper_id", persist_state="session", placeholder="arxiv:2602.21750",
                      help="Stable identifier, unique in the library")
        slots.slot("paper_id")
    st.caption("Authors · click a cell to type, the last row adds an author")
    st.session_state["fm_authors_value"] = st.data_editor(
        st.session_state.get("fm_authors_base", pd.DataFrame(columns=["name", "affiliation"])),
        key="fm_authors", num_rows="dynamic", hide_index=True, width="stretch",
        column_config={"name": st.column_config.TextColumn("Author", width="medium"),
                       "affiliation": st.column_config.TextColumn("Affiliation", width="large")})
    slots.slot("authors")
    p1, p2, p3, p4 = st.columns([3, 1, 2, 2])
    with p1:
        st.text_input("Venue", key="fm_venue", persist_state="session", placeholder="arXiv, NeurIPS, Nature…")
        slots.slot("publication", "venue")
    with p2:
        st.number_input("Year", key="fm_year", step=1, persist_state="session")
        slots.slot("publication", "year")
    with p3:
        st.text_input("arXiv id", key="fm_arxiv_id", persist_state="session", placeholder="2602.21750")
        slots.slot("publication", "arxiv_id")
    with p4:
        st.text_input("DOI", key="fm_doi", persist_state="session")
        slots.slot("publication", "doi")
    slots.slot("publication")
    u1, u2, u3 = st.columns(3)
    for column, name, label in ((u1, "paper_url", "Paper URL"), (u2, "pdf_url", "PDF URL"),
                                (u3, "code_url", "Code URL")):
        with column:
            st.text_input(label, key=f"fm_{name}", persist_state="session")
            slots.slot("urls", name)

with st.container(border=True):
    st.markdown("#### :material/bookmark: Reading")
    known_tags = data.facets(f"{kb.settings.papers.resolve()}|{kb.settings.home.resolve()}|"
                             f"{kb.settings.database_url or ''}", generation())["tags"]
    tag_options = list(dict.fromkeys([*st.session_state.get("fm_tags", []), *known_tags]))
    r1, r2, r3, r4, r5 = st.columns([3, 2, 2, 1.2, 1.2])
    with r1:
        st.multiselect("Tags", tag_options, key="fm_tags", accept_new_options=True, persist_state="session",
                       placeholder="pick or type new tags")
        slots.slot("tags")
    with r2:
        st.selectbox("Status", [NONE, *(s.value for s in Status)], key="fm_status", persist_state="session")
        slots.slot("status")
    with r3:
        st.selectbox(
            "Decision", [NONE, *(d.value for d in Decision)], key="fm_decision", persist_state="session"
        )
        slots.slot("decision")
    with r4:
        st.number_input("Quality", key="fm_quality_score", step=1, persist_state="session", help="1 to 5")
        slots.slot("quality_score")
    with r5:
        st.number_input("Tier", key="fm_journal_tier", step=1, persist_state="session",
                        help="Venue tier, 1 (top) to 5")
        slots.slot("journal_tier")
    d1, d2, d3, d4 = st.columns(4)
    with d1:
        st.text_input("Analyst", key="fm_analyst", persist_state="session")
    with d2:
        st.date_input("Analysed on", key="fm_analysis_date", persist_state="session")
        slots.slot("analysis_date")
    with d3:
        st.date_input("Decided on", key="fm_decision_date", persist_state="session")
        slots.slot("decision_date")
    with d4:
        st.text_input("Source text file", key="fm_source_file", persist_state="session",
                      placeholder="sources/my-paper.txt", help="Abstract or full text, relative to the note; "
                      "claims' quotes are checked against it")
        slots.slot("source_file")
    with st.expander("Direction, topic, institutions", icon=":material/more_horiz:"):
        e1, e2 = st.columns(2)
        e1.text_input("Direction", key="fm_direction", persist_state="session", placeholder="biomed")
        e2.text_input("Topic", key="fm_topic", persist_state="session", placeholder="protein-language-models")
        st.text_area("Institutions (one per line)", key="fm_institutions", persist_state="session", height=80)
    unknown = {k: v for k, v in original.items() if k not in PaperNote.model_fields}
    if unknown:
        with st.expander(
            f"{len(unknown)} field(s) kb does not know (kept as written)", icon=":material/lock:"
        ):
            st.json(unknown)

# -- body ---------------------------------------------------------------------------------------
with st.container(border=True):
    st.markdown("#### :material/edit_note: Note")
    write, preview = st.tabs(["Write", "Preview"], key="fm_body_tabs")
    with write:
        body = st.text_area("Body (Markdown)", key="fm_body", persist_state="session", height=320,
                            placeholder=BODY_PLACEHOLDER, label_visibility="collapsed")
    with preview:
        if body.strip():
            st.markdown(body)  # raw HTML is escaped: never unsafe_allow_html with note text
        else:
            st.caption("Nothing to preview yet.")

# -- claims -------------------------------------------------------------------------------------
with st.container(border=True):
    st.markdown("#### :material/checklist: Claims")
    st.caption(
        "Checkable statements. Bind an analyzer from the registry and an expectation, and kb re-verifies "
        "the claim; quotes are checked against the source text."
    )
    slots.slot("claims")
    # Keyed and tracked: its open state survives reruns that shift the page above it (a flash message
    # appearing or going), or the drafted claims would be hidden in a collapsed expander.
    with st.expander(
        "Draft claims from the paper's text",
        icon=":material/auto_awesome:",
        key="draft_expander",
        on_change="rerun",
    ):
        model, why_not = chat_model()
        st.caption(
            "With a chat model (KB_CHAT_MODEL) an agent drafts the claims; without one, a deterministic "
            "drafter turns explicit numbers into quantitative claims. Quotes not found verbatim in the "
            "text are rejected. Nothing is added until you accept it."
        )
        source_text = ""
        if note is not None:  # only inside the notes folder, size-capped, regular files only
            source_text = kb.read_source(note).text or ""
        init_value("draft_text", source_text)
        st.text_area(
            "Paper text", key="draft_text", height=160, placeholder="Paste the abstract or full text"
        )
        if st.button("Draft claims", key="draft_go", icon=":material/auto_awesome:",
                     disabled=not st.session_state.get("draft_text", "").strip()):
            with st.status("Drafting claims…", expanded=False) as status:
                try:
                    # The note's own claims: their quotes are not proposed again and their ids not reused.
                    existing = list(note.meta.claims) if note is not None else []
                    # LangChain takes seconds to import: paid when drafting
                    from kb.agents.drafter import draft

                    st.session_state["drafts"] = draft(
                        st.session_state["draft_text"], kb, model, existing=existing
                    )
                    status.update(label="Drafted", state="complete")
                except Exception as exc:  # noqa: BLE001 - a provider error must not break the page
                    status.update(label=f"Drafting failed: {exc}", state="error")
        result = st.session_state.get("drafts")
        if result is not None:
            method = (
                "chat-model agent" if result.method == "agent" else "deterministic fallback (no chat model)"
            )
            st.caption(
                f"{len(result.claims)} claim(s) drafted by the {method}; {len(result.rejected)} rejected."
            )
            if result.claims:
                rows = [{"add": True, "id": c.id, "statement": c.statement, "quote": c.quote, "page": c.page,
                         "analyzer": c.analyzer.name if c.analyzer else NONE,
                         "proposed scale": proposed_scale_text(c), "use scale": False,
                         "claim": from_draft(c), "claim with scale": from_draft(c, with_proposed_scale=True)}
                        for c in result.claims]
                edited = st.data_editor(
                    pd.DataFrame(rows).drop(columns=["claim", "claim with scale"]),
                    key="draft_table",
                    hide_index=True,
                    column_config={
                        "add": st.column_config.CheckboxColumn("Add", width=50),
                        "id": st.column_config.TextColumn("Id", width="small"),
                        "statement": st.column_config.TextColumn("Statement", width="large"),
                        "quote": st.column_config.TextColumn(
                            "Quote (verbatim)", width="large", disabled=True
                        ),
                        "page": st.column_config.NumberColumn(
                            "Page",
                            help="The PDF page the quote starts on",
                            width="small",
                            format="%d",
                            disabled=True,
                        ),
                        "analyzer": st.column_config.SelectboxColumn("Analyzer", options=[NONE, *analyzers]),
                        # a claim with no scale is settled by no run: the paper's text proposes one, the user
                        # accepts it by ticking 'use scale'
                        "proposed scale": st.column_config.TextColumn(
                            "Proposed scale (from the text)", disabled=True
                        ),
                        "use scale": st.column_config.CheckboxColumn("Use it", width=50),
                    },
                )
                kept = [{**row, "claim": rows[i]["claim with scale" if row.get("use scale") else "claim"]}
                        for i, row in enumerate(edited.to_dict("records"))]
                st.button(
                    f"Add {sum(bool(r['add']) for r in kept)} claim(s) to the note",
                    key="draft_accept",
                    type="primary",
                    on_click=accept_drafts,
                    args=(kept,),
                    icon=":material/playlist_add:",
                )
            for rejected in result.rejected:
                st.caption(f":violet[:material/link_off:] rejected `{rejected.claim.id}`: {rejected.reason}")
        if why_not:
            st.caption(f":gray[{why_not}]")
    claims = [claim_editor(uid, i, analyzers, slots) for i, uid in enumerate(claim_uids())]
    st.button("Add a claim", key="add_claim", icon=":material/add:", on_click=_add_blank_claim)

# -- validate, show errors, save ----------------------------------------------------------------
meta = build_meta(original)
meta["claims"] = claims
if not claims and "claims" not in original:
    meta.pop("claims")
if note is None and (sources := kept_sources(meta, body)):
    meta["field_sources"] = sources
try:
    PaperNote.model_validate(meta)
    errors: dict[tuple[str, ...], list[str]] = {}
except ValidationError as exc:
    errors = errors_of(exc)
for i, claim in enumerate(claims):
    for loc, messages in params_errors(claim, analyzers).items():
        errors.setdefault(("claims", str(i), *loc), []).extend(messages)
touched = bool(note) or st.session_state.get("fm_attempted") or any(
    text(f"fm_{k}") for k in ("title", "paper_id", "venue", "body")) or bool(claims)
unplaced = slots.show(errors) if touched else []

save_label = "Save changes" if note else "Create note"
clicked = st.button(save_label, key="edit_save", type="primary", icon=":material/save:")
for message in unplaced:
    st.error(markdown_text(message), icon=":material/error:")
if clicked:
    st.session_state["fm_attempted"] = True
    if errors:
        if not touched:
            slots.show(errors)
        st.error(
            f"Nothing was written: fix the {len(errors)} field(s) marked above.", icon=":material/block:"
        )
        st.stop()
    pasted = str(st.session_state.get("draft_text") or "")
    has_source = bool(meta.get("source_file")) or (note is not None and bool(note.meta.source_file))
    stored = None
    if pasted.strip() and not has_source:  # the text pasted into the drafter becomes the note's source text
        from kb.papers.add import store_source_text

        stored = meta["source_file"] = store_source_text(kb.papers_dir, str(meta.get("title") or ""), pasted)
    try:
        with index_keeper().lock:
            if note is None:
                saved = kb.new_note(meta, body)
            else:
                changes, appended = changed_fields(note, meta)
                body_changed = body.replace("\r\n", "\n") != note.body.replace("\r\n", "\n")
                if not changes and not appended and not body_changed:
                    st.info("Nothing changed: nothing was written.", icon=":material/info:")
                    st.stop()
                saved = kb.set_fields(
                    note.id,
                    changes,
                    body=body if body_changed else None,
                    new_claims=appended,
                    expected_hash=st.session_state.get("edit_hash"),
                )
                st.session_state["edit_hash"] = saved.content_hash
    except NoteError as exc:
        if stored is not None:
            (kb.papers_dir / stored).unlink(missing_ok=True)
        if exc.field and (exc.field,) in slots.slots:
            slots.slots[(exc.field,)].caption(field_error(exc.message))
        st.error(
            markdown_text(f"Nothing was written: {exc.message if exc.field else exc}"),
            icon=":material/block:",
        )
        if isinstance(exc, NoteChanged):
            st.button("Reload the note (drops the changes made here)", key="edit_reload",
                      icon=":material/refresh:", on_click=_reload)
        st.stop()
    data.clear_caches()
    if note is None:
        load(None)
        flash("success", f"Created `{saved.path.name}`.")
    else:
        edited = ([f"`{k}`" for k in changes] + ([f"{len(appended)} new claim(s)"] if appended else [])
                  + (["the body"] if body_changed else []))
        flash("success", f"Saved {', '.join(edited)}; every other line of the file is unchanged.")
    st.session_state["note_id"] = saved.id
    st.switch_page("views/note.py", query_params={"id": saved.id})
