"""The app's Tensions page and the Note page's view across notes (AppTest over the bundled notes, real SQLite):
the table first, the chosen tension side by side, settling it from the page, a quantity's plot with kb's
measurement, the model's proposals apart (none without a model), and a claim's tensions on its note's page."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
import streamlit as st

from kb.evidence.tensions import tension_id
from tests.helpers.app_env import AppEnv, badges, open_app

BUNDLED_A = "reading-group-depth-shallow-plms#deeper-worse-past-12"
BUNDLED_B = "siji-2026-analysis-note-arxiv-2502-00001#optimal-depth-24-36"

# Two notes on noop's value that cannot both hold: one run of the bolder settles it.
RANGE_NOTE = textwrap.dedent("""\
    ---
    paper_id: "test:range"
    title: "Range note"
    claims:
      - id: range
        statement: "The value lies in [24, 36]."
        kind: quantitative
        analyzer: {name: noop, params: {value: 30}}
        expect: {metric: value, op: between, value: [24, 36]}
    ---
    body
    """)
LOW_NOTE = RANGE_NOTE.replace("test:range", "test:low").replace("Range note", "Low note").replace(
    "id: range", "id: low").replace("lies in [24, 36]", "is at most 12").replace(
    "{metric: value, op: between, value: [24, 36]}", '{metric: value, op: "<=", value: 12}')


def test_tensions_page_lists_the_bundled_tension_and_queues_its_deciding_run(app_env: AppEnv) -> None:
    at = open_app("tensions")
    assert at.title[0].value == "Tensions"
    table = at.dataframe(key="tensions_table").value
    ident = tension_id(BUNDLED_A, BUNDLED_B)
    row = table.set_index("id").loc[ident]
    assert (row["quantity"], row["A"], row["B"], row["B accepts"]) == ("depth.sweep:best_depth", BUNDLED_A, BUNDLED_B,
                                                                       "[24, 36]")
    assert row["A accepts"] == "≤ 12" and row["state"].startswith("open: no current evidence")
    text = " ".join(m.value for m in at.markdown)
    assert "deeper is worse past 12 layers" in text and "PLM (ESM-style) | 24-36" in text  # both quotes
    assert at.selectbox(key="tension_quantity").value == "depth.sweep:best_depth"
    assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")  # the quantity's plot is drawn
    # the deciding run (the sweep at 'paper') cannot run here: offered, but not as the primary action
    settle = at.button(key="settle_tension")
    assert settle.proto.type == "secondary" and "cannot run on this machine" in settle.help
    settle.click().run()
    assert not at.exception
    (run,) = app_env.kb.runs()
    assert run.claim_key == BUNDLED_B and run.status.value == "queued"  # the bolder claim at the paper preset
    assert any("to settle" in s.value for s in at.success)


def test_tensions_page_shows_a_settled_tension_and_kbs_value(app_env: AppEnv) -> None:
    (app_env.papers / "range.md").write_text(RANGE_NOTE, encoding="utf-8")
    (app_env.papers / "low.md").write_text(LOW_NOTE, encoding="utf-8")
    kb = app_env.kb
    queued, skipped = kb.verify_tension(tension_id("range#range", "low#low"))
    assert len(queued) == 1 and not skipped and kb.work() == {"succeeded": 1}
    st.cache_data.clear()
    at = open_app("tensions", id=tension_id("range#range", "low#low"))
    row = at.dataframe(key="tensions_table").value.set_index("id").loc[tension_id("low#low", "range#range")]
    assert row["state"] == "settled for B" and row["kb's value"] == "30"  # exact by construction: no interval
    assert any("settled for B" in b for b in badges(at))
    assert at.button(key="settle_tension").proto.type == "primary"  # noop runs here
    assert at.selectbox(key="tension_quantity").value == "noop:value"


def test_proposals_are_apart_and_none_without_a_model(app_env: AppEnv) -> None:
    at = open_app("tensions")
    at.button(key="propose_tensions").click().run()
    assert not at.exception
    assert any("no chat model" in i.value for i in at.info)
    assert not [b for b in badges(at) if "proposed by the model" in b]


def test_note_page_shows_the_claims_tension_and_the_other_notes_on_its_quantity(app_env: AppEnv) -> None:
    at = open_app("note", id="reading-group-depth-shallow-plms")
    assert not at.exception
    assert any(f"In tension with {BUNDLED_B}" in b for b in badges(at))
    # One table per claim that has other notes on its quantity (AppTest gives a plain dataframe no key).
    frames = [d.value for d in at.dataframe if "comparable" in d.value.columns]
    assert [list(f["claim"]) for f in frames] == [
        [BUNDLED_B], ["siji-2026-analysis-note-arxiv-2502-00001#perplexity-rises-at-48"]]
    assert list(frames[0]["comparable"]) == ["yes"] and list(frames[1]["comparable"]) == ["yes"]
    assert sum("In tension with" in b for b in badges(at)) == 1  # the agreeing perplexity claims are in none
    # The badge gives the state without the command (raw backticks, cut off): the link under it settles it.
    (badge,) = [b for b in badges(at) if "In tension with" in b]
    assert "no current evidence yet at 'paper'" in badge and "kb verify" not in badge


def test_note_page_sets_unbound_claims_on_a_named_quantity_side_by_side(app_env: AppEnv) -> None:
    at = open_app("note", id="plm-bert-vs-gpt-comments")
    assert not at.exception
    frames = [d.value for d in at.dataframe if "comparable" in d.value.columns]
    # 'downstream-gain-from-scale' is named by both blog notes' scaling claims, neither bound to an analyzer.
    assert [list(f["claim"]) for f in frames] == [["plm-architecture-discussion#diminishing-returns-300m"]]
    assert list(frames[0]["evidence"]) == ["none"]


def test_tensions_are_found_once_per_index_generation(app_env: AppEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Tensions page and a note's page find tensions once per index generation, not on every render (a
    large library spends its 200,000-pair budget each time); a note's page only its own claims'; dropped with the
    other cached queries (as when runs end)."""
    from app import data
    from kb.evidence import tensions as tensions_mod

    asked: list[set[str] | None] = []
    real = tensions_mod.find

    def counted(*args: Any, **kwargs: Any) -> tensions_mod.Tensions:
        asked.append(kwargs.get("involving"))
        return real(*args, **kwargs)

    monkeypatch.setattr(tensions_mod, "find", counted)
    at = open_app("tensions")
    at.run()
    assert asked == [None] and at.dataframe(key="tensions_table").value["id"].tolist()
    at.query_params["id"] = "reading-group-depth-shallow-plms"
    at.switch_page("views/note.py").run()
    at.run()
    assert not at.exception and any(f"In tension with {BUNDLED_B}" in b for b in badges(at))
    assert asked[1:] == [{"reading-group-depth-shallow-plms#deeper-worse-past-12",
                          "reading-group-depth-shallow-plms#perplexity-rises-at-deepest"}], asked
    data.clear_caches()
    at.run()
    assert len(asked) == 3


def test_tensions_page_pages_through_a_generated_librarys_tensions(app_env: AppEnv) -> None:
    """Beside the bundled notes, a generated vault with real runs: the table shows find's tensions a page at a time,
    in its order and with its states; the chosen tension's quantity is plotted with a bounded number of claims,
    its own two first."""
    from app.tension_panels import MAX_PLOTTED
    from app.views.tensions import PAGE_SIZE
    from kb.evidence import tensions as tensions_mod
    from tests.helpers.tension_vault import run_some, write_vault

    write_vault(app_env.papers, notes=30, seed=11)
    kb = app_env.kb
    refs, _ = run_some(kb)
    found = tensions_mod.find(kb.engine)
    listed = [(t.id, t.state.text) for t in found]
    assert len(listed) > PAGE_SIZE  # more than a page: the rest are a page away
    chosen = next(t for t in found if t.quantity == "noop:value")
    st.cache_resource.clear()
    at = open_app("tensions", id=chosen.id)
    table = at.dataframe(key="tensions_table").value
    assert list(zip(table["id"], table["state"], strict=True)) == listed[:PAGE_SIZE]
    assert any(f"**{len(listed):,}** tension(s) · showing 1–{PAGE_SIZE}" in c.value for c in at.caption)
    plotted = sum(1 for r in refs if r.about.quantity == "noop:value" and r.accepts is not None)
    assert plotted > MAX_PLOTTED and at.selectbox(key="tension_quantity").value == "noop:value"
    assert any(f"{MAX_PLOTTED} of the {plotted} claims on this quantity are drawn (the chosen tension’s first"
               in c.value for c in at.caption)
    del at.query_params["id"]
    at.get("pagination")[0].set_value(2).run()  # type: ignore[attr-defined]
    assert not at.exception
    table = at.dataframe(key="tensions_table").value
    assert list(zip(table["id"], table["state"], strict=True)) == listed[PAGE_SIZE:2 * PAGE_SIZE]
    assert any(c.value.startswith(f"`{listed[PAGE_SIZE][0]}`") for c in at.caption)  # its first, side by side


@pytest.mark.parametrize("database", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_pages_show_a_run_finished_elsewhere_at_the_next_rerun(app_env: AppEnv, database: str,
                                                              request: pytest.FixtureRequest,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A run finished through the real store by another KnowledgeBase (its own engine and connections, as a
    ``kb verify`` in a terminal has) shows at the app's next rerun on the Tensions and Library pages: their
    cached results are keyed on the index's generation, which the finished run's evidence moved (before, they
    stayed as cached for up to 30 s, and a new browser session read the stale entry)."""
    if database == "postgresql":  # the app and the test's KnowledgeBase read KB_DATABASE_URL
        monkeypatch.setenv("KB_DATABASE_URL", request.getfixturevalue("pg_database"))
    (app_env.papers / "range.md").write_text(RANGE_NOTE, encoding="utf-8")
    (app_env.papers / "low.md").write_text(LOW_NOTE, encoding="utf-8")
    app_env.kb.index()
    ident = tension_id("range#range", "low#low")
    at = open_app("tensions", id=ident)
    assert at.dataframe(key="tensions_table").value.set_index("id").loc[ident]["state"].startswith(
        "open: no current evidence yet")
    at.switch_page("views/library.py").run()
    before = at.dataframe(key="lib_table").value.set_index("id")
    assert before.loc["range", "supported"] == 0 and before.loc["low", "refuted"] == 0

    elsewhere = app_env.kb  # another engine: nothing of it is shared with the app's
    queued, _ = elsewhere.verify_tension(ident)
    assert len(queued) == 1 and elsewhere.work() == {"succeeded": 1}

    at.run()
    after = at.dataframe(key="lib_table").value.set_index("id")
    assert after.loc["range", "supported"] == 1 and after.loc["low", "refuted"] == 0  # only the bolder ran
    at.switch_page("views/tensions.py").run()
    assert not at.exception
    assert at.dataframe(key="tensions_table").value.set_index("id").loc[ident]["state"] == "settled for B"
