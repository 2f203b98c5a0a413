"""Runs: the queue with live progress, a run's parameters and log, cancel and retry.

The table and the selected run's details live in a fragment that reruns every two seconds, so
progress moves without reloading the page. Runs are executed by the background worker, never here.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
import streamlit as st

from app.state import setup, show_flash, worker
from app.widgets import RUN_STYLE, STATE_CSS, STATE_HELP, empty_state, run_badge, state_badge
from kb.display import NOT_RUNNABLE, code_span, markdown_text, run_status
from kb.evidence.claim_states import label, verdict_state
from kb.queue import daemon, slurm
from schemas import RunRecord, RunStatus, Verdict, VerdictKind

kb = setup()


def _start_worker() -> None:
    """The "Start worker" button's callback."""
    worker().ensure()
POLL_SECONDS = 2.0
STATUS_CSS = {"queued": "#6e7781", "running": "#0969da", "succeeded": "#1a7f37", "failed": "#cf222e",
              "cancelled": "#6e7781", "not runnable": "#6e7781"}


def not_runnable(verdict: Verdict | None) -> bool:
    """The run ended without executing: its analyzer said this machine cannot run it (and why)."""
    return verdict is not None and verdict.kind is VerdictKind.not_runnable


def shown_status(run: RunRecord, verdict: Verdict | None) -> str:
    """The run's status as a reader needs it (``kb.display.run_status``: never 'succeeded' for a run that
    could not execute)."""
    return run_status(run.status.value, verdict)


def verdict_text(verdict: Verdict | None) -> str:
    """The verdict column: the state the run's evidence gives its claim (proxies told apart), or empty."""
    state = verdict_state(verdict)
    return label(state.value) if state is not None else ""


def duration(run: RunRecord) -> str:
    """How long the run took (or has been running)."""
    if run.started_at is None:
        return ""
    end = run.finished_at or dt.datetime.now(dt.UTC)
    start = run.started_at if run.started_at.tzinfo else run.started_at.replace(tzinfo=dt.UTC)
    end = end if end.tzinfo else end.replace(tzinfo=dt.UTC)
    seconds = (end - start).total_seconds()
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


@st.cache_data(ttl=5, show_spinner=False)
def scheduler_states(job_ids: tuple[str, ...]) -> dict[str, str]:
    """Slurm's state of each job (``squeue``), cached for a few seconds: the table refreshes every second."""
    return slurm.job_states(list(job_ids))


def cancel(run_id: str) -> None:
    if kb.cancel(run_id):
        st.toast(f"Cancelled run {run_id[:8]}.", icon=":material/cancel:")
    else:
        st.toast(f"Run {run_id[:8]} had already ended.", icon=":material/info:")


def retry(run_id: str) -> None:
    try:
        new = kb.retry(run_id)
    except (KeyError, ValueError) as exc:
        st.toast(str(exc), icon=":material/error:")
        return
    worker().ensure()
    st.session_state["run_id"] = new.id
    st.session_state["runs_table_nonce"] = st.session_state.get("runs_table_nonce", 0) + 1
    st.toast(f"Queued run {new.id[:8]} (retry of {run_id[:8]}).", icon=":material/replay:")


def run_log(run: RunRecord) -> str | None:
    """The run's log: its log.txt artifact when it left evidence, else None."""
    if run.claim_key is None:
        return None
    for record in kb.evidence(run.claim_key):
        if record.run_id == run.id:
            for artifact in record.artifacts:
                if artifact.endswith("log.txt") and (path := kb.store.local_path(artifact)) is not None:
                    return path.read_text(encoding="utf-8", errors="replace")
    return None


def details(run: RunRecord, verdict: Verdict | None) -> None:
    """One run: state, verdict, progress, parameters, log or error, and what can be done with it."""
    with st.container(border=True, key="run_details"):
        head, actions = st.columns([3, 2], vertical_alignment="center")
        with head:
            st.markdown(f"#### Run `{run.id[:12]}`")
            with st.container(horizontal=True, gap="small"):
                if not_runnable(verdict):
                    st.badge(NOT_RUNNABLE, color="gray", icon=":material/block:",
                             help="The analyzer did not execute: this machine cannot run it")
                else:
                    run_badge(run.status.value)
                    state = verdict_state(verdict)
                    if state is not None:
                        state_badge(state.value, help=f"Verdict: {STATE_HELP.get(state.value, '')}")
                st.badge(run.analyzer, color="violet", icon=":material/science:")
                st.badge(run.device, color="gray", icon=":material/memory:")
                if run.job_id:
                    job_state = scheduler_states((run.job_id,)).get(run.job_id, "gone from the queue")
                    st.badge(f"Slurm job {run.job_id}: {job_state.lower()}", color="blue", icon=":material/dns:")
                if run.attempts > 1:
                    st.badge(f"attempt {run.attempts}", color="orange", icon=":material/restart_alt:")
        with actions, st.container(horizontal=True, gap="small", horizontal_alignment="right"):
            active = run.status in (RunStatus.queued, RunStatus.running)
            st.button("Cancel", key="run_cancel", icon=":material/cancel:", disabled=not active,
                      on_click=cancel, args=(run.id,))
            st.button("Retry", key="run_retry", icon=":material/replay:", disabled=active, on_click=retry,
                      args=(run.id,), help="Queue the same analyzer, parameters and claim again")
            if run.claim_key:
                st.page_link("views/note.py", label="Claim", icon=":material/description:",
                             query_params={"id": run.claim_key.split("#", 1)[0]})
        if run.claim_key:
            st.caption(f"Claim {code_span(run.claim_key)}")
        times = [f"queued {run.created_at:%Y-%m-%d %H:%M:%S}"]
        if run.started_at:
            times.append(f"started {run.started_at:%H:%M:%S}")
        if run.finished_at:
            times.append(f"ended {run.finished_at:%H:%M:%S}")
        if run.started_at:
            times.append(duration(run))
        st.caption(" · ".join(times))
        if not_runnable(verdict) and verdict is not None:
            st.warning(f"Not runnable here: {markdown_text(verdict.reason)}", icon=":material/block:")
        elif verdict is not None:
            st.markdown(f"**Verdict** · {markdown_text(verdict.reason)}")
        waiting = kb.waiting().get(run.id) if run.status in (RunStatus.queued, RunStatus.running) else None
        if run.status is RunStatus.running:
            st.progress(run.progress, text=markdown_text(waiting or run.message or "running"))
        elif run.status is RunStatus.queued:
            st.progress(0.0, text=markdown_text(f"queued: {waiting}" if waiting else "waiting for a worker"))
        params_col, log_col = st.columns([2, 3])
        with params_col:
            st.caption("Parameters")
            st.json(run.params, expanded=True)
        with log_col:
            if run.error:
                st.caption("Error")
                st.code(run.error, language=None, height=300 if run.error.count("\n") > 15 else "content")
            log = run_log(run) if run.status is RunStatus.succeeded else None
            if log is not None:
                st.caption("Log (log.txt)")
                st.code(log, language=None, height=300 if log.count("\n") > 15 else "content")
            elif run.status in (RunStatus.running, RunStatus.queued):
                st.caption("Latest message")
                st.code(run.message or "(none yet)", language=None)


@st.fragment(run_every=POLL_SECONDS)
def queue(statuses: list[str], analyzer: str | None, claim_filter: str) -> None:
    """The run table and the selected run, refreshed every POLL_SECONDS."""
    runs = kb.runs(limit=500)
    verdicts = kb.run_verdicts([r.id for r in runs if r.status is RunStatus.succeeded])
    statuses_shown = {r.id: shown_status(r, verdicts.get(r.id)) for r in runs}
    counts = {s: sum(v == s for v in statuses_shown.values()) for s in [*(s.value for s in RunStatus), NOT_RUNNABLE]}
    with st.container(horizontal=True, gap="small"):
        for status, count in counts.items():
            if status == NOT_RUNNABLE:
                if count:
                    st.badge(f"{count} {status}", color="gray", icon=":material/block:")
                continue
            colour, icon = RUN_STYLE[status]
            st.badge(f"{count} {status}", color=colour, icon=icon)  # type: ignore[arg-type]
    shown = [r for r in runs if (not statuses or r.status.value in statuses)
             and (analyzer is None or r.analyzer == analyzer)
             and (not claim_filter or claim_filter.lower() in (r.claim_key or "").lower())]
    if not runs:
        empty_state("No runs yet. Open a note and click **Re-verify**, or run `kb verify NOTE` in a shell.",
                    icon=":material/play_circle:")
        return
    if not shown:
        empty_state("No run matches these filters.", icon=":material/filter_alt_off:")
        return
    jobs = scheduler_states(tuple(r.job_id for r in shown if r.job_id))
    def message(run: RunRecord) -> str:
        verdict = verdicts.get(run.id)
        if not_runnable(verdict) and verdict is not None:
            return verdict.reason  # why it could not run, not the last progress message
        return (run.error.splitlines()[0] if run.error else run.message) or ""

    frame = pd.DataFrame([{
        "status": statuses_shown[r.id], "verdict": verdict_text(verdicts.get(r.id)),
        "claim": r.claim_key or "—", "analyzer": r.analyzer,
        # A run that never executed has no progress to show (never "succeeded 100%").
        "progress": None if statuses_shown[r.id] == NOT_RUNNABLE else r.progress,
        "message": message(r),
        "device": r.device, "queued": r.created_at.strftime("%m-%d %H:%M:%S"), "took": duration(r),
        "job": f"{r.job_id} {jobs.get(r.job_id, 'gone').lower()}" if r.job_id else "", "id": r.id,
    } for r in shown])
    nonce = st.session_state.get("runs_table_nonce", 0)
    verdict_css = {label(state): css for state, css in STATE_CSS.items()}
    styled = (frame.style.map(lambda v: f"color: {STATUS_CSS.get(v, '#000')}; font-weight: 600", subset=["status"])
              .map(lambda v: f"color: {verdict_css.get(v, '#000')}; font-weight: 600", subset=["verdict"]))
    selection = st.dataframe(
        styled, key=f"runs_table_{nonce}", hide_index=True, on_select="rerun", selection_mode="single-row",
        height=min(38 + 35 * len(frame), 420),
        column_config={
            "status": st.column_config.TextColumn("Status", width=100),
            "verdict": st.column_config.TextColumn("Verdict", width=130,
                                                   help="What the run's evidence says of its claim"),
            "claim": st.column_config.TextColumn("Claim", width=260),
            "analyzer": st.column_config.TextColumn("Analyzer", width=120),
            "progress": st.column_config.ProgressColumn("Progress", min_value=0.0, max_value=1.0, format="percent",
                                                        width="small"),
            "message": st.column_config.TextColumn("Message", width="medium"),
            "device": st.column_config.TextColumn("Device", width=60),
            "queued": st.column_config.TextColumn("Queued", width=110),
            "took": st.column_config.TextColumn("Took", width=70),
            "job": st.column_config.TextColumn("Slurm job", width=110, help="Job id and the scheduler's state"),
            "id": st.column_config.TextColumn("Run id", width="small"),
        })
    rows = selection.selection.rows if selection else []
    if rows:
        st.session_state["run_id"] = frame.iloc[rows[0]]["id"]
    wanted = st.query_params.get("run") if not rows else None
    run_id = wanted or st.session_state.get("run_id")
    chosen = next((r for r in runs if r.id == run_id), None) or (kb.get_run(run_id) if run_id else None)
    if chosen is None:
        st.caption("Select a run to see its parameters, log, and to cancel or retry it.")
        return
    details(chosen, verdicts.get(chosen.id) if chosen.id in verdicts else kb.run_verdicts([chosen.id]).get(chosen.id))


show_flash()
st.title("Runs")
info = worker().status()
with st.container(horizontal=True, gap="small", vertical_alignment="center"):
    if info is not None:
        st.badge(f"Background worker running · pid {info.pid}", color="green", icon=":material/play_circle:")
        st.caption(f"since {info.started_at.replace('T', ' ').split('+')[0]} UTC · runs survive closing the tab "
                   "and restarting the app")
    else:
        st.badge("No background worker is running", color="gray", icon=":material/pause_circle:")
        if worker().settings.app_worker:
            st.button("Start worker", key="runs_start_worker", icon=":material/play_arrow:",
                      on_click=_start_worker)
with st.expander("Worker log", icon=":material/terminal:"):
    tail = daemon.log_tail(kb.settings.home)
    st.code(tail or "(empty)", language=None, height=260 if tail.count("\n") > 12 else "content")
    st.caption(f"`{daemon.log_path(kb.settings.home)}`")

f1, f2, f3 = st.columns([3, 2, 3])
statuses = f1.multiselect("Status", [s.value for s in RunStatus], key="runs_status", persist_state="session",
                          placeholder="every status")
analyzer_choice = f2.selectbox("Analyzer", ["(any)", *kb.analyzers()], key="runs_analyzer",
                               persist_state="session")
claim_filter = f3.text_input("Claim contains", key="runs_claim", persist_state="session",
                             placeholder="note id or claim id")
queue(statuses, None if analyzer_choice == "(any)" else analyzer_choice, claim_filter.strip())
