"""Runs: the queue with live progress, chosen metric columns, sorting and filtering by a metric (as MLflow's
run table does); a run's parameters, log, estimate against its actual time, and the curves it recorded;
cancel, retry.

The table and the selected run's details live in a fragment that reruns every two seconds, so
progress moves without reloading the page. Runs are executed by a worker (the app's background one, or a
``kb demo`` / ``kb worker`` in a terminal), never here.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from analyzers.progress import duration_text, is_first_use
from app.state import setup, show_flash, worker
from app.widgets import RUN_STYLE, STATE_CSS, STATE_HELP, empty_state, run_badge, state_badge
from kb.display import NOT_RUNNABLE, code_span, markdown_text, run_status
from kb.evidence import curves
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


def seconds_taken(run: RunRecord) -> float | None:
    """Seconds the run worked (its stored actual time), or has been running; None before it started."""
    if run.actual_seconds is not None:
        return run.actual_seconds
    if run.started_at is None:
        return None
    end = run.finished_at or dt.datetime.now(dt.UTC)
    start = run.started_at if run.started_at.tzinfo else run.started_at.replace(tzinfo=dt.UTC)
    end = end if end.tzinfo else end.replace(tzinfo=dt.UTC)
    return (end - start).total_seconds()


def duration(run: RunRecord) -> str:
    """How long the run took (or has been running)."""
    seconds = seconds_taken(run)
    if seconds is None:
        return ""
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def timing_text(run: RunRecord) -> str:
    """'estimated 12 s · took 20 s (first use: training builtin:... 14 s; run 6 s)': the estimate against the
    actual time, stage by stage, as the run stored them."""
    parts = [f"estimated {duration_text(run.expected_seconds)}" if run.expected_seconds is not None
             else "no estimate"]
    if run.actual_seconds is not None:
        took = f"took {duration_text(run.actual_seconds)}"
        if len(run.stages) > 1 or any(is_first_use(name) for name in run.stages):
            took += " (" + "; ".join(f"{name} {duration_text(sec)}" for name, sec in run.stages.items()) + ")"
        parts.append(took)
    return " · ".join(parts)


def metric_options(runs: list[RunRecord], metrics: dict[str, dict[str, Any]]) -> list[str]:
    """The declared metrics (``Analyzer.metrics``) of the runs' analyzers that some run holds a number for."""
    declared = kb.analyzers()
    found: dict[str, None] = {}
    for run in runs:
        analyzer = declared.get(run.analyzer)
        recorded = metrics.get(run.id)
        if analyzer is None or not recorded:
            continue
        for name in analyzer.metrics:
            if curves.scalar(recorded, name) is not None:
                found.setdefault(name)
    return sorted(found)


def curves_panel(run: RunRecord, metrics: dict[str, Any]) -> None:
    """Every series the run recorded (per step, layer, temperature, depth), one chosen at a time, with its
    axis in plain numbers."""
    found = curves.series(metrics)
    if not found:
        return
    by_path = {one.path: one for one in found}
    chosen = st.selectbox(
        "Curve",
        list(by_path),
        key=f"run_curve_{run.id}",
        help="Every list of numbers the run recorded, against its axis (kb.evidence.curves)",
    )
    one = by_path[chosen or found[0].path]
    import altair as alt  # here, not at the top: a second or more to import, for the few runs with curves

    frame = pd.DataFrame({"x": one.x, "value": one.y})
    chart = (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("x:Q", title=one.axis, axis=alt.Axis(format="~g")),
            y=alt.Y("value:Q", title=one.path, scale=alt.Scale(zero=False), axis=alt.Axis(format="~g")),
            tooltip=[
                alt.Tooltip("x:Q", title=one.axis, format=".4~g"),
                alt.Tooltip("value:Q", title=one.path, format=".4~g"),
            ],
        )
        .properties(height=260)
    )
    st.altair_chart(chart, key=f"run_curve_chart_{run.id}")


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
            _badges(run, verdict)
        with actions, st.container(horizontal=True, gap="small", horizontal_alignment="right"):
            _actions(run)
        if run.claim_key:
            st.caption(f"Claim {code_span(run.claim_key)}")
        _timing_and_state(run, verdict)
        recorded = kb.run_metrics([run.id]).get(run.id)
        if recorded:
            curves_panel(run, recorded)
        params_col, log_col = st.columns([2, 3])
        with params_col:
            st.caption("Parameters")
            st.json(run.params, expanded=True)
        with log_col:
            _error_and_log(run)


def _badges(run: RunRecord, verdict: Verdict | None) -> None:
    """The run's state (or not runnable here), verdict, analyzer, device, Slurm job and attempt."""
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
            st.badge(
                f"Slurm job {run.job_id}: {job_state.lower()}", color="blue", icon=":material/dns:"
            )
        if run.attempts > 1:
            st.badge(f"attempt {run.attempts}", color="orange", icon=":material/restart_alt:")


def _actions(run: RunRecord) -> None:
    """Cancel (while queued or running), Retry (once ended) and a link to the claim's note."""
    active = run.status in (RunStatus.queued, RunStatus.running)
    st.button("Cancel", key="run_cancel", icon=":material/cancel:", disabled=not active,
              on_click=cancel, args=(run.id,))
    st.button("Retry", key="run_retry", icon=":material/replay:", disabled=active, on_click=retry,
              args=(run.id,), help="Queue the same analyzer, parameters and claim again")
    if run.claim_key:
        st.page_link("views/note.py", label="Claim", icon=":material/description:",
                     query_params={"id": run.claim_key.split("#", 1)[0]})


def _timing_and_state(run: RunRecord, verdict: Verdict | None) -> None:
    """When it was queued, started and ended, how long it took, its verdict's reason and its progress."""
    times = [f"queued {run.created_at:%Y-%m-%d %H:%M:%S}"]
    if run.started_at:
        times.append(f"started {run.started_at:%H:%M:%S}")
    if run.finished_at:
        times.append(f"ended {run.finished_at:%H:%M:%S}")
    times.append(timing_text(run))
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


def _error_and_log(run: RunRecord) -> None:
    """The run's error, then its log once it succeeded, or its latest message while it is under way."""
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


@dataclass(frozen=True)
class View:
    """What the person chose above the table: filters, metric columns, the sort."""

    statuses: list[str]
    analyzer: str | None
    claim_filter: str
    metrics: list[str]
    sort: str
    descending: bool
    condition: tuple[str, str, float] | None


NEWEST = "queued"
TOOK = "took (s)"


def table(runs: list[RunRecord], verdicts: dict[str, Verdict | None], statuses_shown: dict[str, str],
          metrics: dict[str, dict[str, Any]], view: View) -> pd.DataFrame:
    """One row per run: status, verdict, claim, analyzer, progress, message, time, the chosen metrics;
    sorted."""
    jobs = scheduler_states(tuple(r.job_id for r in runs if r.job_id))

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
        "message": message(r), TOOK: seconds_taken(r),
        **{name: curves.scalar(metrics.get(r.id, {}), name) for name in view.metrics},
        "queued": r.created_at.strftime("%m-%d %H:%M"), "device": r.device,
        "job": f"{r.job_id} {jobs.get(r.job_id, 'gone').lower()}" if r.job_id else "", "id": r.id,
    } for r in runs])
    if view.sort != NEWEST and view.sort in frame.columns:
        frame = frame.sort_values(view.sort, ascending=not view.descending, na_position="last", kind="stable")
    elif not view.descending:
        frame = frame.iloc[::-1]
    return frame.reset_index(drop=True)


def column_config(frame: pd.DataFrame, metrics: list[str]) -> dict[str, Any]:
    """Widths that keep the table within a 1400 px window beside the sidebar with two metric columns (the
    browser test measures it); each metric past two takes its room from the claim and the message."""
    squeeze = 45 * max(0, len(metrics) - 2)
    config: dict[str, Any] = {
        "status": st.column_config.TextColumn("Status", width=95),
        "verdict": st.column_config.TextColumn(
            "Verdict", width=105, help="What the run's evidence says of its claim"
        ),
        "claim": st.column_config.TextColumn("Claim", width=max(110, 180 - squeeze // 2)),
        "analyzer": st.column_config.TextColumn("Analyzer", width=105),
        "progress": st.column_config.ProgressColumn(
            "Progress", min_value=0.0, max_value=1.0, format="percent", width=80
        ),
        "message": st.column_config.TextColumn("Message", width=max(90, 165 - squeeze // 2)),
        TOOK: st.column_config.NumberColumn(
            "Took (s)", format="%.1f", width=70, help="Seconds the run worked (first-use stages included)"
        ),
        "queued": st.column_config.TextColumn("Queued", width=90),
        "device": st.column_config.TextColumn("Device", width=55),
        "job": st.column_config.TextColumn("Slurm job", width=110, help="Job id and the scheduler's state"),
    }
    for name in metrics:
        config[name] = st.column_config.NumberColumn(name, format="%.4g", width=95, help=f"Metric {name}")
    return config


@st.fragment(run_every=POLL_SECONDS)
def queue(view: View) -> None:
    """The run table and the selected run, refreshed every POLL_SECONDS."""
    runs = kb.runs(limit=500)
    verdicts = kb.run_verdicts([r.id for r in runs if r.status is RunStatus.succeeded])
    statuses_shown = {r.id: shown_status(r, verdicts.get(r.id)) for r in runs}
    counts = {
        s: sum(v == s for v in statuses_shown.values()) for s in [*(s.value for s in RunStatus), NOT_RUNNABLE]
    }
    with st.container(horizontal=True, gap="small"):
        for status, count in counts.items():
            if status == NOT_RUNNABLE:
                if count:
                    st.badge(f"{count} {status}", color="gray", icon=":material/block:")
                continue
            colour, icon = RUN_STYLE[status]
            st.badge(f"{count} {status}", color=colour, icon=icon)  # type: ignore[arg-type]
    metrics = kb.run_metrics([r.id for r in runs if r.id in verdicts])
    condition = view.condition
    shown = [r for r in runs if (not view.statuses or r.status.value in view.statuses)
             and (view.analyzer is None or r.analyzer == view.analyzer)
             and (not view.claim_filter or view.claim_filter.lower() in (r.claim_key or "").lower())
             and (condition is None or curves.holds(metrics.get(r.id, {}), condition))]
    if not runs:
        empty_state("No runs yet. Open a note and click **Re-verify**, or run `kb verify NOTE` in a shell.",
                    icon=":material/play_circle:")
        return
    if not shown:
        empty_state("No run matches these filters.", icon=":material/filter_alt_off:")
        return
    frame = table(shown, verdicts, statuses_shown, metrics, view)
    order = ["status", "verdict", "claim", "analyzer", "progress", "message", TOOK, *view.metrics]
    if frame["job"].any():
        order.append("job")
    nonce = st.session_state.get("runs_table_nonce", 0)
    verdict_css = {label(state): css for state, css in STATE_CSS.items()}
    styled = frame.style.map(
        lambda v: f"color: {STATUS_CSS.get(v, '#000')}; font-weight: 600", subset=["status"]
    ).map(lambda v: f"color: {verdict_css.get(v, '#000')}; font-weight: 600", subset=["verdict"])
    selection = st.dataframe(
        styled,
        key=f"runs_table_{nonce}",
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        height=min(38 + 35 * len(frame), 420),
        column_order=order,
        column_config=column_config(frame, view.metrics),
    )
    rows = selection.selection.rows if selection else []
    if rows:
        st.session_state["run_id"] = frame.iloc[rows[0]]["id"]
    wanted = st.query_params.get("run") if not rows else None
    run_id = wanted or st.session_state.get("run_id")
    chosen = next((r for r in runs if r.id == run_id), None) or (kb.get_run(run_id) if run_id else None)
    if chosen is None:
        st.caption("Select a run to see its parameters, log, curves, and to cancel or retry it.")
        return
    details(
        chosen,
        verdicts.get(chosen.id) if chosen.id in verdicts else kb.run_verdicts([chosen.id]).get(chosen.id),
    )


show_flash()
st.title("Runs")
info = worker().status()
with st.container(horizontal=True, gap="small", vertical_alignment="center"):
    if info is not None:
        kind = "Worker running in a terminal" if info.foreground else "Background worker running"
        st.badge(f"{kind} · pid {info.pid}", color="green", icon=":material/play_circle:")
        st.caption(f"since {info.started_at.replace('T', ' ').split('+')[0]} UTC · {info.words()}")
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
every_run = kb.runs(limit=500)
options = metric_options(
    every_run, kb.run_metrics([r.id for r in every_run if r.status is RunStatus.succeeded])
)
m1, m2, m3, m4 = st.columns([3, 2, 1.3, 2], vertical_alignment="bottom")
chosen_metrics = m1.multiselect("Metric columns", options, default=options[:2], key="runs_metrics",
                                placeholder="no metric yet" if not options else "choose metrics")
sort = m2.selectbox("Sort by", [NEWEST, *chosen_metrics, TOOK], key="runs_sort")
descending = m3.toggle("Descending", value=True, key="runs_descending")
condition_text = m4.text_input("Metric filter", key="runs_condition", placeholder="e.g. value > 2",
                               help="METRIC OP NUMBER: runs whose evidence holds that metric and meets it")
condition = None
if condition_text.strip():
    try:
        condition = curves.parse_condition(condition_text)
    except curves.BadCondition as exc:
        st.warning(str(exc), icon=":material/filter_alt_off:")
queue(
    View(
        statuses,
        None if analyzer_choice == "(any)" else analyzer_choice,
        claim_filter.strip(),
        chosen_metrics,
        sort or NEWEST,
        descending,
        condition,
    )
)
