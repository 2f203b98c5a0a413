"""Compare: the same probe across models on one plot (e.g. logit-lens KL per layer of several ESM-2 sizes).

Generic over analyzers: pick an analyzer, one or more list metrics found in its evidence (dotted paths such as
``layers.logit_lens_kl``), and the run parameter that names each curve (e.g. ``model``). The x axis is one the
chosen metrics have (``kb.evidence.curves``): a per-layer list has the relative depth (layer / (layers - 1)),
so models of different depth line up, and the layer; a per-temperature list has the temperature, and so on.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import streamlit as st

from app.state import generation, setup
from app.widgets import empty_state
from kb.display import format_count
from kb.evidence import curves as curves_mod
from kb.evidence.curves import list_metric_paths
from kb.evidence.verdicts import resolve_metric
from schemas import EvidenceRecord, RunRecord

kb = setup()


@st.cache_data(show_spinner=False, max_entries=64)
def evidence_of(kb_home: str, index_generation: int | str,
                analyzer: str) -> list[tuple[EvidenceRecord, RunRecord | None]]:
    """Evidence of one analyzer, newest first (``kb_home`` and the index's generation key the cache: a run
    any process finishes shows at the next render)."""
    return kb.analyzer_evidence(analyzer, limit=300)


MODEL_AND_SCALE = "model and scale"


def model_and_scale(params: dict[str, Any], record: EvidenceRecord) -> str:
    """'builtin:esm-designed-4x64 · smoke (207K parameters)': what a reader tells curves apart by."""
    model = params.get("model") or (record.provenance.model_id if record.provenance else None)
    scale = record.verdict.evidence_scale if record.verdict and record.verdict.evidence_scale else None
    name = scale.name if scale else (record.metrics.get("scale") or {}).get("name")
    size = scale.parameters if scale else (record.metrics.get("scale") or {}).get("parameters")
    scale_text = " ".join(x for x in (name or "", f"({format_count(size)} parameters)" if size else "") if x)
    return " · ".join(str(x) for x in (model or record.analyzer, scale_text) if x)


def label_of(params: dict[str, Any], key: str, record: EvidenceRecord) -> str:
    if key == MODEL_AND_SCALE:
        return model_and_scale(params, record)
    if key == "run":
        return record.run_id[:8]
    if key == "claim":
        return record.claim_key or "—"
    value = params.get(key)
    return json.dumps(value) if isinstance(value, list | dict) else str(value)


def varying_params(pairs: list[tuple[EvidenceRecord, RunRecord | None]]) -> list[str]:
    """Run parameters whose value differs between runs (the natural curve labels), most varied first."""
    values: dict[str, set[str]] = {}
    for _, run in pairs:
        for key, value in (run.params if run else {}).items():
            values.setdefault(key, set()).add(json.dumps(value, sort_keys=True, default=str))
    varying = [k for k, v in values.items() if len(v) > 1 and k not in ("device",)]
    return sorted(varying, key=lambda k: (k != "model", -len(values[k]), k))


def curves(pairs: list[tuple[EvidenceRecord, RunRecord | None]], paths: list[str], label_key: str,
           axis: str) -> tuple[pd.DataFrame, list[dict[str, str]]]:
    """Long table: one row per (run, metric path, point) with its x on ``axis``; and each (run, metric) left
    out, with why."""
    rows = []
    left_out: list[dict[str, str]] = []
    for record, run in pairs:
        params = run.params if run else {}
        base = label_of(params, label_key, record)
        scale = record.verdict.evidence_scale.name if record.verdict and record.verdict.evidence_scale else (
            record.metrics.get("scale") or {}).get("name")
        for path in paths:
            try:
                values = resolve_metric(record.metrics, path)
            except Exception:  # noqa: BLE001 - this run lacks the metric: no curve for it, and the reader is told
                left_out.append({"curve": base, "run": record.run_id[:8], "metric": path,
                                 "why": "this run's result has no such metric"})
                continue
            if not isinstance(values, list) or not values or all(v is None for v in values):
                left_out.append({"curve": base, "run": record.run_id[:8], "metric": path,
                                 "why": "not a list of numbers in this run" if not isinstance(values, list)
                                 else "no values in this run"})
                continue
            xs = curves_mod.axes(record.metrics, path).get(axis)
            if xs is None:
                left_out.append({"curve": base, "run": record.run_id[:8], "metric": path,
                                 "why": f"this run's {path} has no {axis} axis"})
                continue
            label = base if len(paths) == 1 else f"{base} · {path}"
            for position, (x, value) in enumerate(zip(xs, values, strict=True)):
                if value is None:
                    continue
                rows.append(
                    {
                        "curve": label,
                        "position": position,
                        "x": x,
                        "value": float(value),
                        "metric": path,
                        "run": record.run_id[:8],
                        "points": len(values),
                        "scale": scale or "",
                        "when": record.created_at.strftime("%Y-%m-%d %H:%M"),
                    }
                )
    return pd.DataFrame(rows), left_out


st.title("Compare")
st.caption("The same probe across models on one plot: one curve per run, a list metric against an axis it "
           "has (the layer or the relative depth, the temperature, ...).")


def list_paths(pairs: list[tuple[EvidenceRecord, RunRecord | None]]) -> dict[str, int]:
    """List metrics of these runs (numbers along an axis), with how many runs report each."""
    counts: dict[str, int] = {}
    for record, _ in pairs:
        for path in list_metric_paths(record.metrics):
            counts[path] = counts.get(path, 0) + 1
    return counts


def runs_label(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


home = str(kb.settings.home)
now = generation()
comparable = {name: evidence_of(home, now, name) for name in kb.analyzers()}
comparable = {name: pairs for name, pairs in comparable.items() if list_paths(pairs)}
if not comparable:
    empty_state("No per-layer evidence yet. Verify claims bound to an analyzer that reports per-layer lists "
                "(e.g. `depth.probe` on several models) and their curves can be overlaid here.",
                icon=":material/stacked_line_chart:")
    st.stop()

c1, c2 = st.columns([1, 2])
analyzer = c1.selectbox("Analyzer", list(comparable), key="cmp_analyzer",
                        format_func=lambda n: f"{n} ({runs_label(len(comparable[n]))})")
pairs = comparable[analyzer]
path_runs = list_paths(pairs)
ordered_paths = sorted(path_runs, key=lambda p: (-path_runs[p], p))
default_path = next((p for p in ordered_paths if "kl" in p.lower()), ordered_paths[0])
paths = c2.multiselect("List metric(s)", ordered_paths, default=[default_path], key="cmp_metrics",
                       format_func=lambda p: f"{p} ({runs_label(path_runs[p])})")
# The x axes on offer: those every chosen metric has, as its newest run reports it (kb.evidence.curves).
axes_of = {
    path: list(
        curves_mod.axes(next(r.metrics for r, _ in pairs if path in list_metric_paths(r.metrics)), path)
    )
    for path in paths
}
axis_options = [a for a in (axes_of[paths[0]] if paths else []) if all(a in axes_of[p] for p in paths)]

varying = varying_params(pairs)
label_options = [MODEL_AND_SCALE, *varying, "claim", "run"]
c3, c4, c5 = st.columns([2, 2, 1], vertical_alignment="bottom")
label_key = c3.selectbox("One curve per", label_options, key="cmp_label",
                         help="The run parameter that tells the curves apart (e.g. the model)")
if st.session_state.get("cmp_x") not in axis_options:  # metrics along another axis: start from their first
    st.session_state.pop("cmp_x", None)
x_axis = c4.segmented_control(
    "x axis",
    axis_options,
    default=axis_options[0] if axis_options else None,
    key="cmp_x",
    help="The axes the chosen metrics have: a per-layer metric the relative depth "
    "and the layer, a per-temperature one the temperature",
)
log_y = c5.toggle("log y", key="cmp_log")

labelled: dict[str, tuple[EvidenceRecord, RunRecord | None]] = {}
superseded: list[dict[str, str]] = []
for record, run in pairs:  # newest first: the first run per label is its latest
    name = label_of(run.params if run else {}, label_key, record)
    if name in labelled:
        superseded.append({"curve": name, "run": record.run_id[:8], "metric": "(all)",
                           "why": f"an older run of the same {label_key}: the newest "
                                  f"({labelled[name][0].run_id[:8]}) is plotted"})
    else:
        labelled[name] = (record, run)
# Keyed by the labelling: another "One curve per" names other curves, so the choice starts afresh (a kept
# choice of names that no longer exist would empty the plot).
chosen = st.multiselect(
    "Runs",
    list(labelled),
    default=list(labelled)[:8],
    key=f"cmp_runs_{label_key}",
    help="The latest run per label; older runs of the same label are left out (listed below)",
)
if not paths or not chosen:
    empty_state("Pick at least one metric and one run.", icon=":material/touch_app:")
    st.stop()
if not axis_options:
    empty_state(
        "These metrics share no axis ("
        + "; ".join(f"{p}: {', '.join(a)}" for p, a in axes_of.items())
        + "): pick metrics along one axis.",
        icon=":material/info:",
    )
    st.stop()
axis = x_axis or axis_options[0]
frame, missing = curves([labelled[c] for c in chosen], paths, label_key, axis)
not_chosen = [{"curve": name, "run": pair[0].run_id[:8], "metric": "(all)", "why": "not selected under Runs"}
              for name, pair in labelled.items() if name not in chosen]


def report_left_out(rows: list[dict[str, str]]) -> None:
    """Never drop a run silently: what is not on the plot, and why."""
    if rows:
        with st.expander(
            f"Left out of the plot: {len(rows)} run/metric pair(s), and why",
            icon=":material/info:",
            expanded=bool(missing),
        ):
            st.dataframe(pd.DataFrame(rows), key="cmp_left_out", hide_index=True,
                         column_config={"why": st.column_config.TextColumn("why", width="large")})


if frame.empty:
    empty_state("The chosen runs have no values for these metrics.", icon=":material/info:")
    report_left_out(missing + superseded + not_chosen)
    st.stop()
x_title = "relative depth (layer / (layers − 1))" if axis == curves_mod.RELATIVE_DEPTH else axis
per_layer = axis in curves_mod.LAYER_AXES
import altair as alt  # noqa: E402 - here: a second or more to import, paid only when there is a plot

y_scale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
chart = (
    alt.Chart(frame)
    .mark_line(point=alt.OverlayMarkDef(size=30), strokeWidth=2)
    .encode(
        x=alt.X("x:Q", title=x_title),
        y=alt.Y("value:Q", title=paths[0] if len(paths) == 1 else "value", scale=y_scale),
        color=alt.Color(
            "curve:N", title=label_key, legend=alt.Legend(orient="bottom", columns=2, labelLimit=500)
        ),
        tooltip=[
            "curve",
            "metric",
            alt.Tooltip("x:Q", title=axis, format=".4g"),
            alt.Tooltip("value:Q", format=".4g"),
            "points", "scale", "run", "when",
        ],
    )
    .properties(height=420)
    .interactive()
)
st.altair_chart(chart, key="cmp_chart", width="stretch")

# Points per curve: a per-layer curve's are its layers.
points = "layers" if per_layer else "points"
summary = frame.groupby("curve").agg(**{points: ("points", "first")}, scale=("scale", "first"),
                                     run=("run", "first"), when=("when", "first"), first=("value", "first"),
                                     last=("value", "last"))
first_last = "layer" if per_layer else "point"
st.dataframe(summary.reset_index(), key="cmp_table", hide_index=True,
             column_config={"first": st.column_config.NumberColumn(f"first {first_last}", format="%.4g"),
                            "last": st.column_config.NumberColumn(f"last {first_last}", format="%.4g")})
st.download_button(
    "Download the curves (CSV)",
    frame.to_csv(index=False),
    file_name=f"{analyzer}-compare.csv",
    key="cmp_download",
    icon=":material/download:",
    mime="text/csv",
)
st.caption(f"Parameters in these runs: {', '.join(varying) or 'all identical'} · "
           f"{len(frame)} points")
report_left_out(missing + superseded + not_chosen)

