"""Note: frontmatter, body, and each claim beside its latest evidence."""

from __future__ import annotations

import json

import streamlit as st

from app.state import get_kb, init_session
from kb.core import KnowledgeBase
from kb.grounding import Grounding, check_note
from kb.notes import NoteError
from schemas import EvidenceRecord

init_session()
kb = get_kb()

BADGE = {
    "supported": ("green", ":material/check_circle:"),
    "refuted": ("red", ":material/cancel:"),
    "inconclusive": ("orange", ":material/help:"),
    "not_runnable": ("gray", ":material/block:"),
    "error": ("red", ":material/error:"),
}
GROUNDING = {
    Grounding.grounded: ("green", "grounded"),
    Grounding.not_found: ("red", "quote not found"),
    Grounding.no_quote: ("gray", "no quote"),
    Grounding.no_source: ("gray", "no source"),
}


def run_queue(kb: KnowledgeBase, targets: list[str], key: str) -> None:
    """Queue runs for the targets and execute them here, showing progress.

    The app runs the queue in-process (``kb.work(once=True)``); a separate ``kb worker`` process can
    take the queued runs instead, in which case this page just shows them as queued/running.
    """
    with st.status("Verifying…", expanded=True) as status:
        try:
            queued, skipped = kb.verify(targets)
        except NoteError as exc:
            status.update(label="Nothing to verify", state="error")
            st.error(str(exc))
            return
        for claim_key, reason in skipped:
            st.warning(f"skipped {claim_key}: {reason}")
        st.write(f"Queued {len(queued)} run(s); running them…")
        counts = kb.work(once=True)
        st.write(", ".join(f"{k}: {v}" for k, v in counts.items()) or "done")
        status.update(label=f"Verified {len(queued)} claim(s)", state="complete", expanded=False)


def verdict_badge(record: EvidenceRecord) -> None:
    if record.verdict is None:
        st.badge("no verdict", color="gray")
        return
    color, icon = BADGE.get(record.verdict.kind.value, ("gray", None))
    label = record.verdict.kind.value + (" (proxy)" if record.verdict.proxy else "")
    st.badge(label, color=color, icon=icon)
    if record.stale:
        st.badge(f"stale: {record.stale_reason}", color="orange", icon=":material/schedule:")
    st.caption(record.verdict.reason)


def show_evidence(kb: KnowledgeBase, claim_key: str) -> None:
    evidence = kb.evidence(claim_key)
    if not evidence:
        st.caption("No evidence yet.")
        return
    latest, earlier = evidence[0], evidence[1:]
    verdict_badge(latest)
    verdict = latest.verdict
    if verdict is not None:
        c1, c2 = st.columns(2)
        c1.markdown("**Expected**")
        c1.code(verdict.expected or "—", language=None)
        c2.markdown("**Observed**")
        observed = "—" if verdict.observed is None else str(verdict.observed)
        if verdict.spread is not None:
            observed += f" ± {verdict.spread:g}"
        c2.code(observed, language=None)
        c1.markdown("**Evidence scale**")
        c1.json(verdict.evidence_scale.model_dump(exclude_none=True) if verdict.evidence_scale else {})
        c2.markdown("**Claim scale**")
        c2.json(verdict.claim_scale or {})
    for artifact in latest.artifacts:
        path = kb.settings.home / artifact
        if path.suffix.lower() == ".png" and path.is_file():
            st.image(str(path), caption=artifact)
    with st.expander("Provenance", expanded=False):
        st.json(latest.provenance.model_dump(mode="json", exclude_none=True) if latest.provenance else {})
        st.json(latest.metrics)
    if earlier:
        with st.expander(f"History ({len(earlier)} earlier run(s))", expanded=False):
            st.dataframe(
                [{
                    "when": r.created_at.isoformat(timespec="seconds"),
                    "verdict": r.verdict.kind.value if r.verdict else None,
                    "observed": json.dumps(r.verdict.observed) if r.verdict else None,
                    "stale": "stale" if r.stale else "",
                    "run": r.run_id,
                } for r in earlier],
                key=f"hist_{claim_key}", hide_index=True,
            )


kb.index()
ids = [p.id for p in kb.list_papers()]
if not ids:
    st.info("The knowledge base has no notes yet.")
    st.stop()
current = st.session_state.get("note_id")
note_id = st.selectbox("Note", ids, index=ids.index(current) if current in ids else 0, key="note_pick")
st.session_state["note_id"] = note_id

try:
    note = kb.read(note_id)
except NoteError as exc:
    st.error(str(exc))
    st.stop()
meta = note.meta

st.title(meta.title)
authors = ", ".join(a.name for a in meta.authors) or "unknown authors"
venue = " ".join(str(x) for x in (meta.publication.venue, meta.publication.year) if x) if meta.publication else ""
st.markdown(f"{authors}  \n*{venue or 'venue unknown'}*  ·  `{meta.paper_id}`")
h1, h2, h3, h4 = st.columns(4)
h1.metric("Decision", meta.decision.value if meta.decision else "—")
h2.metric("Quality", f"{meta.quality_score}/5" if meta.quality_score else "—")
h3.metric("Status", meta.status.value if meta.status else "—")
h4.metric("Claims", len(meta.claims))
if meta.tags:
    st.pills("Tags", meta.tags, key="note_tags", disabled=True)

tab_claims, tab_body = st.tabs(["Claims", "Note"])
with tab_body:
    st.markdown(note.body)  # Streamlit escapes raw HTML in markdown by default

with tab_claims:
    bound = [c for c in meta.claims if c.analyzer is not None]
    if st.button("Re-verify note", key="reverify_note", disabled=not bound,
                 help="Queue and run every claim of this note that is bound to an analyzer"):
        run_queue(kb, [note_id], key="note")
    grounding = {r.claim_id: r for r in check_note(note)}
    if not meta.claims:
        st.info("This note makes no claims.")
    for claim in meta.claims:
        claim_key = f"{note_id}#{claim.id}"
        st.divider()
        left, right = st.columns(2)
        with left:
            st.subheader(claim.id)
            st.write(claim.statement)
            if claim.source is not None:
                st.caption("Source quote" + (f" ({claim.source.section})" if claim.source.section else ""))
                st.text(claim.source.quote)
            g = grounding.get(claim.id)
            if g is not None:
                color, label = GROUNDING[g.status]
                st.badge(label, color=color)
                st.caption(g.reason)
            if claim.analyzer is not None:
                st.caption(f"Analyzer `{claim.analyzer.name}`"
                           + (f" at scale `{claim.analyzer.scale}`" if claim.analyzer.scale else ""))
                if st.button("Re-verify claim", key=f"reverify_{claim_key}"):
                    run_queue(kb, [claim_key], key=claim_key)
        with right:
            if claim.analyzer is None:
                st.caption("Not bound to an analyzer: nothing to re-verify.")
            show_evidence(kb, claim_key)
