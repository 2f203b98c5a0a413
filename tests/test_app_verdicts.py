"""Verdicts at a glance in the app, page by page (Streamlit AppTest over real SQLite and real runs).

Library: a header counting every claim state; Note: proxies with their own badges; Runs: a verdict
column and "not runnable" for a run that could not execute; Compare: curves named by model and scale,
and what was left out, with why; evidence plots: the claim's own metric first, full width on demand.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import streamlit as st
from PIL import Image
from sqlmodel import Session, select

from app.widgets import STATE_STYLE, plot_order
from kb import __version__
from kb.core import KnowledgeBase
from kb.evidence.claim_states import ALL_STATES, label
from kb.index.database import Evidence
from kb.queue import store as queue_store
from schemas import EvidenceScale, Provenance, RunStatus, Verdict, VerdictKind
from tests.helpers.app_env import PROXY_NOTE, AppEnv, badges, open_app


@pytest.fixture
def verified(app_env: AppEnv) -> AppEnv:
    """The same, with a note whose claims are verified into every interesting state."""
    (app_env.papers / "proxies.md").write_text(PROXY_NOTE, encoding="utf-8")
    kb = app_env.kb
    kb.index()
    queued, skipped = kb.verify(["proxies"])
    assert len(queued) == 4 and not skipped
    assert kb.work() == {"succeeded": 4}
    st.cache_data.clear()
    return app_env


def metric_values(at: object) -> dict[str, str]:
    """The Library header: each metric's label (its state's words) -> the count shown."""
    return {m.label: m.value for m in at.metric}  # type: ignore[attr-defined]


def test_library_header_counts_every_state_proxies_apart(verified: AppEnv) -> None:
    kb = verified.kb
    at = open_app()
    assert not at.exception and at.title[0].value == "Library"
    shown = metric_values(at)
    # Independently of the state rule: what the notes say (bound or not) and what the runs left.
    claims = [c for p in kb.list_papers() for c in kb.claims(p.id)]
    unbound = sum(c.analyzer is None for c in claims)
    never_run = sum(c.analyzer is not None and not kb.evidence(c.key) for c in claims)
    expected = Counter({"supported": 1, "consistent_proxy": 1, "at_odds_proxy": 1, "not_runnable": 1,
                        "unbound": unbound, "unverified": never_run})
    for state in (*ALL_STATES, "ungrounded"):
        colour, icon, name = STATE_STYLE[state]
        metric_label = f":{colour}[{icon} {name.capitalize()}]"
        assert metric_label in shown, (state, list(shown))  # every state, zero or not
        if state != "ungrounded":
            assert shown[metric_label] == str(expected[state]), (state, shown[metric_label])
    assert shown["Claims"] == str(len(claims)) == str(sum(expected.values()))
    assert unbound > 1 and never_run > 1  # the bundled notes have both: the test counts something
    # The two proxies read apart in colour and icon, and apart from supported / refuted / inconclusive.
    styles = {STATE_STYLE[s][:2] for s in ("consistent_proxy", "at_odds_proxy", "supported", "refuted",
                                           "inconclusive")}
    assert len(styles) == 5
    table = at.dataframe(key="lib_table").value.set_index("id").loc["proxies"]
    assert (table["consistent_proxy"], table["at_odds_proxy"], table["unbound"]) == (1, 1, 1)


def test_library_is_its_own_address(verified: AppEnv) -> None:
    at = open_app("library")  # /library: a page of its own, not only the app's root
    assert not at.exception and at.title[0].value == "Library"


def test_note_page_gives_each_proxy_its_own_badge(verified: AppEnv) -> None:
    at = open_app("note", id="proxies")
    assert not at.exception
    shown = badges(at)
    for state in ("consistent_proxy", "at_odds_proxy", "not_runnable", "supported", "unbound"):
        colour, icon, name = STATE_STYLE[state]
        assert any(b.startswith(f":{colour}-badge[{icon} {name}") for b in shown), (state, shown)
    assert not any("small-scale proxy]" in b for b in shown)  # the leaning proxies say it in their own badge


def test_runs_page_shows_verdicts_and_not_runnable_never_succeeded(verified: AppEnv) -> None:
    kb = verified.kb
    not_runnable = next(r for r in kb.runs() if r.claim_key == "proxies#needs-gpu")
    at = open_app("runs", run=not_runnable.id)
    assert not at.exception
    table = at.dataframe(key="runs_table_0").value.set_index("claim")
    assert table.loc["proxies#leans-for", "verdict"] == label("consistent_proxy")
    assert table.loc["proxies#leans-against", "verdict"] == label("at_odds_proxy")
    assert table.loc["proxies#exact", "status"] == "succeeded"
    row = table.loc["proxies#needs-gpu"]
    assert row["status"] == "not runnable" and row["verdict"] == "not runnable"
    assert row["progress"] != row["progress"] or row["progress"] is None  # no progress bar: never "100%"
    assert "needs a GPU" in row["message"]
    assert any(b.startswith(":gray-badge[:material/block: not runnable") for b in badges(at))
    assert not any(":green-badge[:material/check: succeeded" in b for b in badges(at))  # the selected run
    assert any("Not runnable here: needs a GPU" in w.value for w in at.warning)


def stored_run(kb: KnowledgeBase, analyzer: str, params: dict[str, object], metrics: dict[str, object],
               scale: EvidenceScale) -> str:
    """A finished run and the evidence it left, as a worker records them (for analyzers too slow to run here)."""
    run = queue_store.enqueue(kb.engine, analyzer, params)
    provenance = Provenance(kb_version=__version__, analyzer=analyzer, python="3", device="cpu",
                            analyzer_version=kb.analyzers()[analyzer].version,
                            params_hash=queue_store.params_hash(params), model_id=str(params.get("model")))
    verdict = Verdict(kind=VerdictKind.inconclusive, reason="no claim", evidence_scale=scale)
    with Session(kb.engine) as session:
        session.add(Evidence(run_id=run.id, analyzer=analyzer,
                             metrics_json=json.dumps({**metrics, "scale": scale.model_dump()}),
                             provenance_json=provenance.model_dump_json(), verdict_json=verdict.model_dump_json(),
                             verdict_kind=verdict.kind.value, analyzer_version=provenance.analyzer_version,
                             kb_version=__version__))
        stored = session.get(type(run), run.id)
        assert stored is not None
        stored.status = RunStatus.succeeded.value
        session.add(stored)
        session.commit()
    return run.id


def test_compare_names_curves_by_model_and_scale_and_says_what_it_left_out(app_env: AppEnv) -> None:
    kb = app_env.kb
    small = EvidenceScale(name="smoke", parameters=8e6)
    older = stored_run(kb, "depth.probe", {"model": "esm2_t6_8M_UR50D", "seed": 1},
                       {"layers": {"kl": [3.0, 2.0, 1.0]}}, small)
    stored_run(kb, "depth.probe", {"model": "esm2_t6_8M_UR50D", "seed": 0}, {"layers": {"kl": [2.0, 1.0, 0.5]}},
               small)
    stored_run(kb, "depth.probe", {"model": "esm2_t12_35M_UR50D", "seed": 0},
               {"layers": {"kl": [4.0, 3.0, 2.0, 1.0, 0.0]}}, EvidenceScale(name="small", parameters=3.5e7))
    lacking = stored_run(kb, "depth.probe", {"model": "esm2_t30_150M_UR50D", "seed": 0},
                         {"layers": {"entropy": [1.0, 2.0]}}, EvidenceScale(name="small", parameters=1.5e8))
    at = open_app("compare")
    assert not at.exception
    at.selectbox(key="cmp_analyzer").set_value("depth.probe").run()
    at.multiselect(key="cmp_metrics").set_value(["layers.kl"]).run()
    assert at.selectbox(key="cmp_label").value == "model and scale"
    frames = [d.value for d in at.dataframe]
    summary = next(f for f in frames if "curve" in f.columns and "first" in f.columns)
    assert sorted(summary["curve"]) == ["esm2_t12_35M_UR50D · small (35M parameters)",
                                        "esm2_t6_8M_UR50D · smoke (8M parameters)"]
    left_out = next(f for f in frames if "why" in f.columns)
    why = dict(zip(left_out["run"], left_out["why"], strict=True))
    assert why[lacking[:8]] == "this run's result has no such metric"
    assert why[older[:8]].startswith("an older run of the same model and scale")


def test_plot_order_puts_the_claims_metric_first() -> None:
    stems = ["angular_distance", "attention_entropy", "logit_lens", "ranks", "skip_heatmap"]
    assert plot_order(stems, "late_half_kl_drop_fraction",
                      "share of the logit-lens KL(p_l || p_L) decrease made by layers L//2..L-1")[0] == "logit_lens"
    assert plot_order(stems, "stable_rank_ratio", "stable rank(h_L) / stable rank(h_0)")[0] == "ranks"
    assert plot_order(stems, "best_depth", "depth with the lowest validation perplexity") == stems  # no match


def test_note_page_opens_the_claims_metric_plot_and_shows_it_full_width(app_env: AppEnv, tmp_path: Path) -> None:
    kb = app_env.kb
    queued, _ = kb.verify(["noop-note"])
    assert kb.work() == {"succeeded": 1}
    plots = tmp_path / "plots"
    plots.mkdir()
    for stem, colour in (("alpha_curve", (200, 0, 0)), ("value_by_layer", (0, 200, 0)), ("zeta_map", (0, 0, 200))):
        Image.new("RGB", (120, 40), colour).save(plots / f"{stem}.png")
    extra = kb.store.put_tree(plots, move=False)
    with Session(kb.engine) as session:
        (row,) = session.exec(select(Evidence).where(Evidence.run_id == queued[0].id)).all()
        row.artifacts_json = json.dumps([*json.loads(row.artifacts_json), *extra])
        session.add(row)
        session.commit()
    at = open_app("note", id="noop-note")
    assert not at.exception
    labels = [t.label for t in at.tabs if t.label in ("alpha curve", "value by layer", "zeta map")]
    assert labels[0] == "value by layer" and sorted(labels[1:]) == ["alpha curve", "zeta map"]  # metric 'value'
    images_before = len(at.get("image"))
    assert images_before >= 3
    at.button(key="art_noop-note_value-above-two_plot_0_wide").click().run()
    assert not at.exception
    assert len(at.get("image")) == images_before + 1  # the plot again, in a dialog as wide as the window
