"""What the app shows of claims across notes (``kb.evidence.tensions``): the Tensions table, one tension side
by side, a quantity's plot (every note's claimed value or range against kb's measurement with its error bar),
and, on the Note page, each claim's tensions and the other notes' claims on the same quantity with their
evidence.

Every rule (what is comparable, what is a tension, how it stands) is ``kb.evidence.tensions``'; this module
only renders.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from app.widgets import state_badge
from kb.core import KnowledgeBase
from kb.display import code_span, markdown_text
from kb.evidence import tensions as tensions_mod
from kb.evidence.claim_states import label
from kb.evidence.tensions import ClaimRef, Deciding, Tension

if TYPE_CHECKING:
    import altair as alt

#: Badge colour of each outcome.
OUTCOME_COLOURS = {"settled_a": "green", "settled_b": "green", "both_wrong": "red", "open": "orange"}


@dataclass
class Library:
    """The claims that name a quantity, the tensions among them and each claim's current evidence (one
    read)."""

    refs: list[ClaimRef]
    tensions: list[Tension]
    evidence: dict[str, Deciding]

    @property
    def by_claim(self) -> dict[str, list[Tension]]:
        """The tensions each claim key is in."""
        return tensions_mod.by_claim(self.tensions)


def read_library(kb: KnowledgeBase, note_id: str | None = None) -> Library:
    """Claims, tensions and evidence as the index holds them now; with ``note_id``, only the tensions of that
    note's claims (what its page shows: other notes' pairs are not examined)."""
    refs = tensions_mod.indexed_claims(kb.engine)
    involving = None if note_id is None else {ref.key for ref in refs if ref.note_id == note_id}
    found = tensions_mod.find(kb.engine, refs, max_pairs=kb.settings.max_tension_pairs, involving=involving)
    evidence = {key: pair[0] for key, pair in tensions_mod.current_evidence(kb.engine, refs).items()}
    return Library(refs, found, evidence)


def _interval(value: Any) -> str:
    if value is None or value.mean is None:
        return ""
    if value.low is not None and value.high is not None and value.low < value.high:
        return f"{value.mean:.4g} [{value.low:.4g}, {value.high:.4g}]"
    return f"{value.mean:.4g}"


def tensions_frame(tensions: list[Tension]) -> pd.DataFrame:
    """The Tensions table: quantity, both claims with the values they accept, kb's value on the deciding
    evidence with its interval, and the state."""
    rows = []
    for tension in tensions:
        metric = tension.a.claim.expect.metric if tension.a.claim.expect is not None else ""
        value = tensions_mod.measured(tension.state.deciding, metric) if metric else None
        rows.append({"id": tension.id, "quantity": tension.quantity, "A": tension.a.key,
                     "A accepts": tension.a.accepts.text() if tension.a.accepts else "",
                     "B": tension.b.key, "B accepts": tension.b.accepts.text() if tension.b.accepts else "",
                     "kb's value": _interval(value) or "not measured", "state": tension.state.text})
    columns = ["id", "quantity", "A", "A accepts", "B", "B accepts", "kb's value", "state"]
    return pd.DataFrame.from_records(rows, columns=columns)


def _side(tension: Tension, ref: ClaimRef, which: str) -> None:
    record = tensions_mod.side_record(tension, ref)
    st.markdown(f"**{which}** · {code_span(ref.key)}")
    st.page_link("views/note.py", label=f"Open note {markdown_text(ref.note_id)}",
                 icon=":material/description:",
                 query_params={"id": ref.note_id})
    st.markdown(markdown_text(ref.claim.statement))
    if record["quote"]:
        where = ", ".join(
            str(x) for x in (record["section"], f"p. {record['page']}" if record["page"] else None) if x
        )
        st.caption("Source quote" + (f" · {markdown_text(where)}" if where else ""))
        st.markdown("\n".join(f"> {markdown_text(line)}" if line.strip() else ">"
                              for line in str(record["quote"]).splitlines()))
    st.markdown(f"**Expects** {code_span(record['expects'] or 'no expectation')} · accepts "
                f"{code_span(record['accepts'])}")
    state_badge(record["state"])
    evidence = record["evidence"]
    if evidence is not None:
        where = f" at {code_span(evidence['scale'])}" if evidence["scale"] else ""
        st.caption(f"Latest evidence: run {code_span(str(evidence['run'])[:12])}{where} · "
                   f"{label(str(evidence['state'] or evidence['verdict']))} · "
                   f"{markdown_text(evidence['reason'])}")
    else:
        st.caption("No current evidence for this claim.")


def tension_detail(tension: Tension) -> None:
    """One tension: both claims side by side with quotes, pages and evidence, then the state and what decided
    it."""
    colour = OUTCOME_COLOURS.get(tension.state.outcome.value, "gray")
    st.badge(tension.state.text, color=colour, icon=":material/balance:")  # type: ignore[arg-type]
    st.caption(f"{code_span(tension.id)} · {tension.kind}: {markdown_text(tension.why)}")
    left, right = st.columns(2, gap="large")
    with left:
        _side(tension, tension.a, "A")
    with right:
        _side(tension, tension.b, "B")
    deciding = tension.state.deciding
    if deciding is not None and tension.state.verdicts:
        va, vb = tension.state.verdicts
        where = f" at {code_span(deciding.preset)}" if deciding.preset else ""
        st.markdown(f"**Deciding evidence**: run {code_span(deciding.run_id[:12])} of "
                    f"{code_span(deciding.claim_key)}{where} · A {label(va.kind.value)}: "
                    f"{markdown_text(va.reason)} · B {label(vb.kind.value)}: {markdown_text(vb.reason)}")


def _finite(values: list[float]) -> list[float]:
    return [v for v in values if math.isfinite(v)]


#: Claims a quantity's plot draws at most (one row each: thousands of claims on a quantity would be a plot
#: thousands of rows tall that no one reads), and each row's height in pixels.
MAX_PLOTTED = 30
ROW_PX = 26


def plotted(library: Library, quantity: str, first: Collection[str] = ()) -> tuple[list[ClaimRef], int]:
    """The claims of one quantity that state a numeric range which its plot draws: ``first`` (the chosen
    tension's) then the others by key, at most ``MAX_PLOTTED``; and how many there are in all."""
    refs = [r for r in library.refs if r.about.quantity == quantity and r.accepts is not None
            and r.accepts.value is None]
    ordered = sorted(refs, key=lambda r: (r.key not in first, r.key))
    return ordered[:MAX_PLOTTED], len(refs)


def quantity_frame(library: Library, refs: list[ClaimRef]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The claimed value or range of each of ``refs`` (open ends drawn to the plot's edge), and kb's
    measurements (each claim's current evidence: mean and interval across seeds)."""
    measured: list[dict[str, Any]] = []
    seen: set[str] = set()
    for ref in refs:
        deciding = library.evidence.get(ref.key)
        if deciding is None or deciding.run_id in seen or ref.claim.expect is None:
            continue
        seen.add(deciding.run_id)
        value = tensions_mod.measured(deciding, ref.claim.expect.metric)
        if value is not None and value.mean is not None:
            low = value.low if value.low is not None else value.mean
            high = value.high if value.high is not None else value.mean
            measured.append(
                {
                    "claim": f"kb: run {deciding.run_id[:8]} ({deciding.preset})",
                    "value": value.mean,
                    "low": low,
                    "high": high,
                }
            )
    ends = _finite([x for r in refs if r.accepts for x in (r.accepts.low, r.accepts.high)]
                   + [x for m in measured for x in (m["low"], m["high"])])
    span = (max(ends) - min(ends)) if ends else 1.0
    edge_low, edge_high = (
        (min(ends) - 0.25 * (span or 1.0), max(ends) + 0.25 * (span or 1.0)) if ends else (0, 1)
    )
    claimed = []
    for ref in refs:
        assert ref.accepts is not None
        low = ref.accepts.low if math.isfinite(ref.accepts.low) else edge_low
        high = ref.accepts.high if math.isfinite(ref.accepts.high) else edge_high
        claimed.append({"claim": ref.key, "low": low, "high": high, "accepts": ref.accepts.text(),
                        "note": ref.note_id})
    return pd.DataFrame(claimed, columns=["claim", "low", "high", "accepts", "note"]), pd.DataFrame(
        measured, columns=["claim", "value", "low", "high"])


def quantity_chart(library: Library, quantity: str,
                   first: Collection[str] = ()) -> tuple[alt.LayerChart | alt.FacetChart | None, int, int]:
    """Claimed ranges as bars, kb's measurements of them as points with error bars, on one axis (None: nothing
    numeric), for the claims ``plotted`` draws; with how many it draws and how many there are."""
    refs, total = plotted(library, quantity, first)
    claimed, measured = quantity_frame(library, refs)
    if claimed.empty:
        return None, 0, total
    # here, not at the top: a second or more to import, for a page that may show no chart
    import altair as alt
    axis = alt.X("low:Q", title=quantity, scale=alt.Scale(zero=False))
    bars = alt.Chart(claimed).mark_bar(height=10, opacity=0.6).encode(
        x=axis, x2="high:Q", y=alt.Y("claim:N", title=None, axis=alt.Axis(labelLimit=420)),
        color=alt.Color("note:N", legend=None),
        tooltip=["claim", "accepts", "note"])
    layers: list[alt.Chart] = [bars]
    if not measured.empty:
        layers.append(alt.Chart(measured).mark_rule(strokeWidth=2, color="black").encode(
            x="low:Q", x2="high:Q", y=alt.Y("claim:N"), tooltip=["claim", "value", "low", "high"]))
        layers.append(alt.Chart(measured).mark_point(filled=True, size=80, color="black").encode(
            x="value:Q", y=alt.Y("claim:N")))
    chart = alt.layer(*layers).properties(height=max(120, ROW_PX * (len(claimed) + len(measured))))
    return chart, len(refs), total


def others_panel(library: Library, claim_key: str) -> None:
    """On the Note page: the claim's tensions, and the other notes' claims on the same quantity with their
    evidence (comparable ones first; the others say why they are not)."""
    for tension in library.by_claim.get(claim_key, []):
        other = tension.b if tension.a.key == claim_key else tension.a
        colour = OUTCOME_COLOURS.get(tension.state.outcome.value, "gray")
        # Without the command that settles it: in a badge it is raw backticks cut off mid-id, and the link
        # under the badge opens the tension with its Settle button.
        state = tension.state.text.partition("; run `kb verify --tension")[0]
        shown = markdown_text(f"In tension with {other.key}: {state}", brackets=False)
        st.badge(shown, color=colour, icon=":material/balance:")  # type: ignore[arg-type]
        st.page_link("views/tensions.py", label=f"Tension {tension.id}", icon=":material/balance:",
                     query_params={"id": tension.id})
    others = tensions_mod.same_quantity(library.refs, claim_key)
    if not others:
        return
    with st.expander(f"Other notes on this quantity ({len(others)})", icon=":material/compare_arrows:"):
        rows = []
        for ref, why_not in others:
            deciding = library.evidence.get(ref.key)
            verdict = deciding.verdict if deciding is not None else None
            rows.append({"claim": ref.key, "expects": ref.expects or ref.claim.statement,
                         "comparable": "yes" if why_not is None else f"no: {why_not}",
                         "evidence": f"{label(verdict.kind.value)}: {verdict.reason}" if verdict else "none"})
        st.dataframe(pd.DataFrame(rows), hide_index=True, key=f"others_{claim_key}",
                     column_config={"evidence": st.column_config.TextColumn("evidence", width="large")})
