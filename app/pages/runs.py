"""Runs: the queue, refreshed every 2 seconds, with cancellation."""

from __future__ import annotations

import streamlit as st

from app.state import get_kb, init_session
from schemas import RunStatus

init_session()
kb = get_kb()

ANY = "(any)"
st.title("Runs")
status = st.selectbox("Status", [ANY, *(s.value for s in RunStatus)], key="runs_status")


@st.fragment(run_every=2)
def runs_table() -> None:
    runs = kb.runs(status=None if status == ANY else status, limit=200)
    if not runs:
        st.info("No runs.")
        return
    st.dataframe(
        [{
            "id": r.id,
            "claim": r.claim_key,
            "analyzer": r.analyzer,
            "status": r.status.value,
            "progress": r.progress,
            "message": r.message,
            "error": r.error,
            "created": r.created_at.isoformat(timespec="seconds"),
            "finished": r.finished_at.isoformat(timespec="seconds") if r.finished_at else None,
        } for r in runs],
        key="runs_table", hide_index=True, use_container_width=True,
        column_config={"progress": st.column_config.ProgressColumn("progress", min_value=0.0, max_value=1.0)},
    )


runs_table()

st.subheader("Cancel a run")
col_id, col_btn = st.columns([4, 1], vertical_alignment="bottom")
run_id = col_id.text_input("Run id", key="runs_cancel_id")
if col_btn.button("Cancel run", key="runs_cancel", disabled=not run_id.strip()):
    if kb.cancel(run_id.strip()):
        st.success(f"Cancelled {run_id.strip()}.")
    else:
        st.warning(f"Run {run_id.strip()} is not queued or running (or does not exist).")
