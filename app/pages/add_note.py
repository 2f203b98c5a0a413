"""Add note: a validated form that writes a new note through kb.new_note."""

from __future__ import annotations

from typing import Any

import streamlit as st
from pydantic import ValidationError

from app.state import get_kb, init_session
from kb.notes import NoteError
from schemas import Decision, PaperNote, Status

init_session()
kb = get_kb()

NONE = "(none)"
# Where a validation error on a PaperNote location is shown: field name in this form.
FIELD_OF = {("publication", "year"): "year", ("publication", "venue"): "venue", ("quality_score",): "quality"}


def build_meta(values: dict[str, Any]) -> dict[str, Any]:
    """Frontmatter dict from the form values (empty fields left out)."""
    meta: dict[str, Any] = {"paper_id": values["paper_id"].strip(), "title": values["title"].strip()}
    publication = {k: v for k, v in (("venue", values["venue"].strip() or None), ("year", values["year"]))
                   if v is not None}
    if publication:
        meta["publication"] = publication
    tags = [t.strip() for t in values["tags"].split(",") if t.strip()]
    if tags:
        meta["tags"] = tags
    if values["quality"] is not None:
        meta["quality_score"] = int(values["quality"])
    if values["status"] != NONE:
        meta["status"] = values["status"]
    if values["decision"] != NONE:
        meta["decision"] = values["decision"]
    return meta


def field_errors(meta: dict[str, Any]) -> dict[str, list[str]]:
    """Validation errors of the frontmatter, by form field."""
    try:
        PaperNote.model_validate(meta)
    except ValidationError as exc:
        errors: dict[str, list[str]] = {}
        for err in exc.errors():
            loc = tuple(str(p) for p in err["loc"])
            field = FIELD_OF.get(loc) or (loc[0] if loc else "form")
            errors.setdefault(field, []).append(err["msg"])
        return errors
    return {}


def show_errors(errors: dict[str, list[str]], field: str) -> None:
    for msg in errors.get(field, []):
        st.error(msg, icon=":material/error:")


st.title("Add note")
st.caption("Fields are checked as you type against the PaperNote schema; nothing is written until it is valid.")

values: dict[str, Any] = {}
c1, c2 = st.columns(2)
with c1:
    values["title"] = st.text_input("Title", key="add_title")
    title_slot = st.container()
    values["paper_id"] = st.text_input("Paper id", key="add_paper_id", placeholder="arxiv:2602.21750")
    paper_id_slot = st.container()
    values["tags"] = st.text_input("Tags (comma-separated)", key="add_tags", placeholder="plm, scaling")
    tags_slot = st.container()
    values["venue"] = st.text_input("Venue", key="add_venue")
    venue_slot = st.container()
with c2:
    values["year"] = st.number_input("Year", value=None, step=1, key="add_year")
    year_slot = st.container()
    values["decision"] = st.selectbox("Decision", [NONE, *(d.value for d in Decision)], key="add_decision")
    values["status"] = st.selectbox("Status", [NONE, *(s.value for s in Status)], key="add_status")
    values["quality"] = st.number_input("Quality (1-5)", value=None, step=1, key="add_quality")
    quality_slot = st.container()

write_tab, preview_tab = st.tabs(["Body", "Preview"])
with write_tab:
    body = st.text_area("Body (Markdown)", key="add_body", height=300)
with preview_tab:
    st.markdown(body or "*Nothing to preview yet.*")

meta = build_meta(values)
touched = any(values[k] for k in ("title", "paper_id", "tags", "venue")) or any(
    values[k] is not None for k in ("year", "quality"))
errors = field_errors(meta)
shown = errors if touched else {}
for field, slot in (("title", title_slot), ("paper_id", paper_id_slot), ("tags", tags_slot),
                    ("venue", venue_slot), ("year", year_slot), ("quality", quality_slot)):
    with slot:
        show_errors(shown, field)
for field in set(shown) - {"title", "paper_id", "tags", "venue", "year", "quality"}:
    show_errors(shown, field)

if st.button("Create note", key="add_submit", type="primary"):
    if errors:
        st.error("Fix the fields marked above; nothing was written.")
    else:
        try:
            note = kb.new_note(meta, body)
        except NoteError as exc:
            st.error(str(exc))
        else:
            st.success(f"Created {note.path.name} (id `{note.id}`).")
            st.session_state["note_id"] = note.id
