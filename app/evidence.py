"""The two halves of a claim on the Note page: the claim with its source, and its latest evidence.

Left: statement, the claim's state (``kb.evidence.claim_states``'s rule, as every surface shows it), source
quote and whether the source text backs it, the analyzer binding and the expectation. Right, at a glance as
labelled fields (``glance_fields``): the verdict with the observed value against the expected, the claim's
scale against the evidence's, what would settle the claim and its one cost; then why (the verdict's reason,
once), caveats, files, provenance and the history of earlier runs. Below both, across the card: the plots,
large enough to read. Caveats that every verified claim of a note shares are shown once, above the claims
(``shared_caveats``), not on each claim.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

import streamlit as st

from app.widgets import (
    GROUNDING_STYLE,
    provenance_rows,
    run_badge,
    show_files,
    show_plots,
    state_badge,
    verdict_badges,
)
from kb.core import KnowledgeBase
from kb.display import claim_scale_text, code_span, evidence_origin, markdown_text, observed_text
from kb.display import scale_text as display_scale_text
from kb.evidence.artifact_store import ArtifactStore
from kb.evidence.claim_states import (
    ClaimStatus,
    label,
    paper_comparisons,
    paper_values_left_out,
    verdict_state,
)
from kb.evidence.verdicts import describe
from kb.notes.bindings import reason_line, settling
from kb.notes.grounding import GroundingResult
from schemas import Claim, EvidenceRecord, RunRecord, VerdictKind


def claim_panel(claim: Claim, status: ClaimStatus, grounding: GroundingResult | None,
                known_analyzers: set[str]) -> None:
    """The claim as the note states it, its state, its source quote and how it is bound to an analyzer."""
    st.markdown(f"##### {code_span(claim.id)}")
    with st.container(horizontal=True, gap="small"):
        st.badge(claim.kind.value, color="blue" if claim.kind.value == "quantitative" else "gray")
        why = status.stale_reason or "The claim's state, from its latest evidence"
        state_badge(status.state.value, help=markdown_text(why))
    st.markdown(markdown_text(claim.statement))
    if claim.source is not None:
        where = ", ".join(
            x for x in (claim.source.section, f"p. {claim.source.page}" if claim.source.page else None) if x
        )
        st.caption("Source quote" + (f" · {markdown_text(where)}" if where else ""))
        st.markdown("\n".join(f"> {markdown_text(line)}" if line.strip() else ">"
                              for line in claim.source.quote.splitlines()))
    if grounding is not None:
        colour, icon, label = GROUNDING_STYLE[grounding.status.value]
        st.badge(label, color=colour, icon=icon,  # type: ignore[arg-type]
                 help=markdown_text(grounding.reason))
    if claim.analyzer is not None:
        binding = claim.analyzer
        known = binding.name in known_analyzers
        st.markdown(f"**Analyzer** {code_span(binding.name)}"
                    + (f" at scale {code_span(binding.scale)}" if binding.scale else "")
                    + ("" if known else "  :red[not registered]"))
        if binding.params:
            shown = ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in binding.params.items())
            st.markdown(f"**Parameters** {code_span(shown)}")
        if binding.seeds:
            st.markdown(f"**Seeds** `{', '.join(map(str, binding.seeds))}` (verdict on the mean and spread)")
    if claim.expect is not None:
        st.markdown(f"**Expects** {code_span(describe(claim.expect))}"
                    + (f" (inconclusive within ±{claim.expect.inconclusive_band:g})"
                       if claim.expect.inconclusive_band else ""))


def _field(label_text: str) -> None:
    st.caption(label_text)


def glance_fields(claim: Claim, latest: EvidenceRecord | None, known_analyzers: Collection[str]) -> None:
    """The card at a glance, as labelled fields: the verdict (observed against expected), the claim's scale
    against the evidence's, what would settle the claim (and whether it runs here), and its one cost. Each
    said once: the reason below says why, the claim's side says what it states."""
    verdict = latest.verdict if latest is not None else None
    verdict_col, scale_col = st.columns(2)
    with verdict_col:
        _field("Verdict")
        if latest is None:
            st.badge("not verified yet", color="gray", icon=":material/hourglass_empty:")
        else:
            with st.container(horizontal=True, gap="small"):
                verdict_badges(latest)
        if verdict is not None and verdict.kind is not VerdictKind.not_runnable:
            expected = f" · expects {code_span(verdict.expected)}" if verdict.expected else ""
            st.markdown(f"**{markdown_text(observed_text(verdict))}**{expected}")
    with scale_col:
        _field("Scale: claim · evidence")
        scale = verdict.evidence_scale if verdict is not None else None
        evidence_scale = (display_scale_text(scale.model_dump(exclude_none=True)) if scale
                          else "not recorded" if latest is not None else "no evidence yet")
        st.markdown(
            f"claim: {markdown_text(claim_scale_text(claim))} · evidence: {markdown_text(evidence_scale)}"
        )
        if verdict is not None and verdict.proxy:
            st.badge("evidence smaller than the claim", color="gray", icon=":material/compress:")
    if claim.analyzer is None or claim.analyzer.name not in known_analyzers:
        return
    found = settling(claim)
    settle_col, cost_col = st.columns(2)
    with settle_col:
        _field("Settled by")
        what = f" ({found.what})" if found.what else ""
        preset = (
            f"{code_span(found.preset)}{markdown_text(what)}" if found.preset else "its default parameters"
        )
        st.markdown(f"{code_span(found.analyzer or claim.analyzer.name)} at {preset}")
        with st.container(horizontal=True, gap="small"):
            if found.runnable_here:
                st.badge("runs here", color="green", icon=":material/check:")
            else:
                st.badge("not runnable here", color="gray", icon=":material/block:",
                         help=markdown_text(found.why_not or ""))
            if found.proxy:
                st.badge(f"{found.bound} runs a proxy", color="orange", icon=":material/compress:")
    with cost_col:
        _field("Cost")
        cost = found.cost_text()
        st.markdown(markdown_text(cost) if cost else "a CPU run here" if found.runnable_here else "not known")


def active_runs_panel(runs: list[RunRecord]) -> None:
    """Queued and running runs of one claim, with progress."""
    for run in runs:
        run_badge(run.status.value)
        st.progress(run.progress, text=markdown_text((run.message or run.status.value)[:120]))


def caveats_of(record: EvidenceRecord) -> list[str]:
    """What a piece of evidence warns about (its result's ``notes``), in the analyzer's order."""
    return [str(note) for note in record.metrics.get("notes") or []]


def with_results(latest: list[EvidenceRecord]) -> list[EvidenceRecord]:
    """The evidence among ``latest`` that a run which executed left (one that could not run has no result, so
    no caveats: it neither shares nor breaks the caveats of the others)."""
    return [r for r in latest if r.verdict is None or r.verdict.kind is not VerdictKind.not_runnable]


def shared_caveats(latest: list[EvidenceRecord]) -> list[str]:
    """The caveats every one of these (the latest evidence of each claim of a note, ``with_results``) reports,
    in the first's order; none for fewer than two, where nothing repeats."""
    if len(latest) < 2:
        return []
    others = [set(caveats_of(record)) for record in latest[1:]]
    return [c for c in dict.fromkeys(caveats_of(latest[0])) if all(c in seen for seen in others)]


def shared_caveats_panel(caveats: list[str], claims: int) -> None:
    """The caveats the results of all ``claims`` verified claims of a note share, once, above the claims."""
    with st.container(border=True, key="note_caveats"):
        st.markdown(f":orange[:material/warning:] **Caveats of all {claims} claims with results** "
                    f"({len(caveats)}, shown here once)")
        for caveat in caveats:
            st.caption(markdown_text(caveat))


def evidence_panel(store: ArtifactStore, claim: Claim, evidence: list[EvidenceRecord], key: str,
                   results: list[dict[str, Any]] | None = None, shared: Collection[str] = ()) -> None:
    """The latest evidence of a claim beside its history; ``results``: one per seed of the latest evidence
    (for the paper's values beside kb's; default the latest evidence's own); ``shared``: caveats the note
    shows once for all its claims (only the others are listed here). Plots: ``evidence_plots``."""
    _paper_vs_kb(claim, results if results is not None else [evidence[0].metrics] if evidence else None)
    glance_fields(claim, evidence[0] if evidence else None, KnowledgeBase.analyzers())
    if not evidence:
        _not_verified(claim)
        return
    latest, earlier = evidence[0], evidence[1:]
    verdict = latest.verdict
    if verdict is not None:  # why, once: where it would be settled and its cost are fields above
        state = verdict_state(verdict)
        _field("Why")
        st.markdown(markdown_text(reason_line(claim, verdict.reason, state.value if state else None,
                                              with_settling=False)))
    _caveats(caveats_of(latest), shared)
    show_files(store, latest.artifacts, key=f"art_{key}")
    # imported: say where and on what it was made
    if (origin := evidence_origin(latest.provenance)) is not None:
        st.caption(f":material/flight_land: Made elsewhere: {markdown_text(origin)}; re-run it here with "
                   f"{code_span(f'kb verify --rerun {latest.run_id}')}")
    with st.expander("Provenance", icon=":material/fingerprint:"):
        if latest.provenance is not None:
            st.dataframe(provenance_rows(latest.provenance), hide_index=True, key=f"prov_{key}",
                         column_config={"field": st.column_config.TextColumn("", width=120),
                                        "value": st.column_config.TextColumn("", width="large")})
        st.caption(f"Run {code_span(latest.run_id)} · evidence #{latest.id}")
    if earlier:
        _history(earlier, key)
    if not any(a.endswith("metrics.json") for a in latest.artifacts):
        with st.expander("All metrics", icon=":material/data_object:"):
            st.json(
                {k: v for k, v in latest.metrics.items() if k not in ("artifacts", "provenance", "notes")},
                expanded=1,
            )


def _paper_vs_kb(claim: Claim, results: list[dict[str, Any]] | None) -> None:
    """The paper's values beside kb's (``results``: one per seed), and which of the paper's values were left
    out; nothing when there is no comparison."""
    comparisons = paper_comparisons(claim, results)
    if comparisons:
        st.caption("Paper vs kb")
        for comparison in comparisons:
            st.markdown(f"- {markdown_text(comparison.text())}")
        if (left_out := paper_values_left_out(claim)) is not None:
            st.caption(left_out)


def _not_verified(claim: Claim) -> None:
    """What a claim without evidence waits for: nothing (no analyzer bound), or its first run."""
    if claim.analyzer is None:
        st.caption("No analyzer is bound to this claim, so there is nothing to re-verify. Bind one on "
                   "**Add / edit note**.")
    else:
        st.info("Not verified yet: **Re-verify** queues a run; the verdict appears here when it lands.",
                icon=":material/hourglass_empty:")


def _caveats(caveats: list[str], shared: Collection[str]) -> None:
    """The evidence's caveats, those the note shows once for all its claims (``shared``) counted, not
    repeated."""
    for caveat in caveats:
        if caveat not in shared:
            st.caption(f":orange[:material/warning:] {markdown_text(caveat)}")
    if repeated := sum(c in shared for c in dict.fromkeys(caveats)):
        st.caption(
            f":orange[:material/warning:] and the {repeated} caveat(s) shared by all the note's claims with "
            "results, shown once above the claims"
        )


def _history(earlier: list[EvidenceRecord], key: str) -> None:
    """The claim's earlier evidence, newest first, one row per run, in an expander."""
    with st.expander(f"History · {len(earlier)} earlier run(s)", icon=":material/history:"):
        st.dataframe(
            [
                {
                    "when": r.created_at.strftime("%Y-%m-%d %H:%M"),
                    "verdict": label(state.value) if (state := verdict_state(r.verdict)) else "—",
                    "observed": observed_text(r.verdict) if r.verdict else "—",
                    "seed": r.provenance.seed if r.provenance else None,
                    "device": r.provenance.device if r.provenance else None,
                    "scale": r.verdict.evidence_scale.name
                    if r.verdict and r.verdict.evidence_scale
                    else None,
                    "stale": r.stale_reason or "",
                    "run": r.run_id,
                }
                for r in earlier
            ],
            key=f"hist_{key}",
            hide_index=True,
            column_config={
                "run": st.column_config.TextColumn(width="small"),
                "stale": st.column_config.TextColumn(width="medium"),
            },
        )


def evidence_plots(store: ArtifactStore, claim: Claim, evidence: list[EvidenceRecord], key: str) -> None:
    """The plots of a claim's latest evidence, across the whole card (a plot at half a card's width could not
    be read): the plot of the claim's own metric first, each at its own size up to the card's width."""
    if not evidence:
        return
    latest = evidence[0]
    metric = claim.expect.metric if claim.expect else None
    analyzer_cls = KnowledgeBase.analyzers().get(latest.analyzer)
    described = (
        analyzer_cls.metrics.get(metric.split(".")[0]) if analyzer_cls is not None and metric else None
    )
    show_plots(store, latest.artifacts, key=f"art_{key}", metric=metric, metric_description=described)
