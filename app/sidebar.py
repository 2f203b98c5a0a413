"""The sidebar every page shares: the background worker, the run queue and the index, kept live.

A fragment polls the run table and the index's generation every few seconds (only the fragment reruns);
when runs finish or the generation moves (evidence or notes written by any process: this app's re-index, a
``kb worker``, a ``kb verify`` in a terminal), pages that list verdicts are rerun, so the user sees the new
state without reloading (cached queries are keyed on the generation: ``app.data``).
"""

from __future__ import annotations

import streamlit as st

from app.state import generation, get_kb, index_keeper, worker
from schemas import RunRecord, RunStatus

POLL_SECONDS = 3


def active_runs() -> list[RunRecord]:
    """Queued and running runs, running first."""
    kb = get_kb()
    return kb.runs(status=RunStatus.running.value, limit=500) + kb.runs(
        status=RunStatus.queued.value, limit=500
    )


def keep_worker_alive(active: list[RunRecord]) -> None:
    """Start the background worker when runs wait and none is alive (e.g. after an app restart)."""
    handle = worker()
    if active and handle.settings.app_worker and handle.status() is None:
        info = handle.ensure()
        if info is not None:
            st.toast(f"Started a background worker (pid {info.pid}) for {len(active)} waiting run(s).",
                     icon=":material/play_circle:")


def status_panel(rerun_on_change: bool) -> None:
    """Render the live status fragment in the sidebar."""
    st.session_state["_status_seen"] = {
        "active": {r.id for r in active_runs()}, "generation": generation(),
    }
    with st.sidebar:
        _status(rerun_on_change)


@st.fragment(run_every=POLL_SECONDS)
def _status(rerun_on_change: bool) -> None:
    active = active_runs()
    keep_worker_alive(active)
    keeper = index_keeper()
    now = generation()
    seen = st.session_state["_status_seen"] or {"active": set(), "generation": now}
    active_ids = {r.id for r in active}
    finished = seen["active"] - active_ids
    if finished or now != seen["generation"]:
        st.session_state["_status_seen"] = {"active": active_ids, "generation": now}
        if rerun_on_change:
            st.rerun()
    # queued since the page rendered (by `kb demo`, the CLI): watch them end too
    elif active_ids - seen["active"]:
        st.session_state["_status_seen"] = {
            "active": seen["active"] | active_ids,
            "generation": seen["generation"],
        }

    info = worker().status()
    running = sum(r.status is RunStatus.running for r in active)
    queued = len(active) - running
    with st.container(border=True):
        if info is not None:
            st.badge(f"Worker running · pid {info.pid}", color="green", icon=":material/play_circle:",
                     help=f"kb worker --forever, started {info.started_at}; log: {info.log_path}")
        else:
            st.badge("No worker running", color="gray", icon=":material/pause_circle:",
                     help="Started when runs are queued from the app (unless KB_APP_WORKER=false)")
        if active:
            st.caption(f"{running} running · {queued} queued")
            for run in [r for r in active if r.status is RunStatus.running][:3]:
                st.progress(run.progress, text=f"{run.claim_key or run.analyzer}: {run.message or ''}"[:80])
        else:
            st.caption("Queue empty")
        if keeper.running:
            done, total = keeper.progress
            st.progress(done / total if total else 0.0, text=f"Re-indexing notes… {done}/{total}")
        elif keeper.error:
            st.caption(f":red[Index error: {keeper.error}]")
        if info is None and not worker().settings.app_worker:
            st.caption("The app does not start workers (KB_APP_WORKER=false): run `kb worker --forever`.")
