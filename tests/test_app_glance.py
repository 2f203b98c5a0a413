"""The app at a glance (issue 30), with AppTest over real SQLite and real runs of a test analyzer.

Compare offers only the axes a metric has; the Library's columns fit a 1400 px window, the note's title
whole; a claim's scale is said the same way on both sides of its card; plots span the card; caveats
that every verified claim of a note shares are shown once, above the claims. The same in a real browser
(widths, wrapping, runs arriving): ``test_browser_glance.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import streamlit as st
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

from analyzers import registry
from app.evidence import shared_caveats
from kb.display import claim_scale_text
from kb.evidence.curves import axes
from kb.notes.files import read_note
from schemas import EvidenceRecord
from tests.helpers.app_env import AppEnv, open_app
from tests.helpers.glance_notes import GLANCE_NOTE, OWN, SHARED


@pytest.fixture
def report_analyzer(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``test.report`` registered in this process for one test (the registry is restored after it)."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry.load_all()))
    from tests.helpers.report_analyzer import Report

    registry.register(Report)
    yield


@pytest.fixture
def glance(app_env: AppEnv, report_analyzer: None) -> AppEnv:
    """The bundled notes, the noop note and GLANCE_NOTE, its claims verified by real runs."""
    (app_env.papers / "glance.md").write_text(GLANCE_NOTE, encoding="utf-8")
    kb = app_env.kb
    kb.index()
    queued, skipped = kb.verify(["glance"])
    assert len(queued) == 4 and not skipped
    assert kb.work() == {"succeeded": 4}
    st.cache_data.clear()
    return app_env


def walk(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """Every element of an AppTest tree with the blocks above it."""
    children = getattr(node, "children", None)
    if children is None:
        yield node, path
        return
    for child in children.values():
        yield from walk(child, (*path, node))


def block_id(block: Any) -> str:
    return str(getattr(block.proto, "id", "")) if getattr(block, "proto", None) is not None else ""


def claim_card_texts(at: AppTest, claim: str) -> list[str]:
    """The markdown and captions inside one claim's card, in order."""
    return [node.value for node, path in walk(at._tree)
            if node.type in ("markdown", "caption") and any(block_id(b).endswith(f"-claim_{claim}") for b in path)]


# -- Compare: the axes a metric has ----------------------------------------------------------------

def test_curves_axes_follow_the_result_not_a_fixed_layer_axis() -> None:
    result = {"temperatures": [0.5, 1.0, 2.0], "test_error_by_temperature": [0.3, 0.2, 0.4],
              "mean_loss_by_temperature": {"transformer": [1.0, 0.5, 0.7]},
              "test_errors_by_model": {"transformer": [0.3, None, 0.4]},  # per temperature, in a per-model dict
              "layers": {"kl": [4.0, 2.0, 1.0, 0.5]}, "attention_entropy_by_layer": [1.0, 2.0],
              "depths": [2, 4], "val_perplexity_by_depth": [9.0, 8.0],
              "late_half_kl_drop_fraction_by_model": [0.1, 0.2, 0.3], "plain": [1.0, 2.0]}
    assert axes(result, "test_error_by_temperature") == {"temperature": [0.5, 1.0, 2.0]}
    assert axes(result, "mean_loss_by_temperature.transformer") == {"temperature": [0.5, 1.0, 2.0]}
    assert axes(result, "test_errors_by_model.transformer") == {"temperature": [0.5, 1.0, 2.0]}
    assert axes(result, "layers.kl") == {"relative depth": [0, 1 / 3, 2 / 3, 1], "layer": [0, 1, 2, 3]}
    assert list(axes(result, "attention_entropy_by_layer")) == ["relative depth", "layer"]
    assert axes(result, "val_perplexity_by_depth") == {"depth": [2.0, 4.0]}
    assert axes(result, "late_half_kl_drop_fraction_by_model") == {"model": [0.0, 1.0, 2.0]}  # no values: positions
    assert axes(result, "plain") == {"index": [0.0, 1.0]}
    assert axes(result, "no.such.path") == {}


def chart_frame(at: AppTest) -> Any:
    """The data the Compare chart draws (the first dataset of its Vega-Lite chart)."""
    chart = at.get("vega_lite_chart")[0]
    return convert_arrow_bytes_to_pandas_df(chart.proto.datasets[0].data.data)


def test_compare_offers_only_the_axes_the_chosen_metric_has(app_env: AppEnv, report_analyzer: None) -> None:
    kb = app_env.kb
    from kb.queue import store as queue_store

    for value, num_layers in ((1.0, 3), (2.0, 5)):
        queue_store.enqueue(kb.engine, "test.report", {"value": value, "num_layers": num_layers, "device": "cpu",
                                                       "seed": 0})
    assert kb.work() == {"succeeded": 2}
    at = open_app("compare")
    at.selectbox(key="cmp_analyzer").set_value("test.report").run()
    at.selectbox(key="cmp_label").set_value("num_layers").run()  # one curve per run
    at.multiselect(key="cmp_metrics").set_value(["error_by_temperature"]).run()
    assert not at.exception, at.exception
    x_axis = at.button_group(key="cmp_x")
    assert list(x_axis.options) == ["temperature"]  # never "layer" here
    assert '"title": "temperature"' in at.get("vega_lite_chart")[0].proto.spec
    drawn = chart_frame(at)
    assert sorted(set(drawn["x"])) == [0.5, 1.0, 1.5, 2.0, 2.5]  # the temperatures themselves, not 0..1

    at.multiselect(key="cmp_metrics").set_value(["layers.kl"]).run()
    assert list(at.button_group(key="cmp_x").options) == ["relative depth", "layer"]
    drawn = chart_frame(at)
    assert drawn.groupby("run")["x"].max().tolist() == [1.0, 1.0]  # relative depth: both models end at 1
    at.button_group(key="cmp_x").set_value("layer").run()
    assert sorted(chart_frame(at).groupby("run")["x"].max().tolist()) == [2.0, 4.0]

    at.multiselect(key="cmp_metrics").set_value(["layers.kl", "error_by_temperature"]).run()
    assert not at.get("vega_lite_chart")
    assert any("share no axis" in i.value for i in at.info)


# -- Library: what matters first, within 1400 px ------------------------------------------------------

#: The Library table's width in a 1400 px window with the sidebar open, and its row-selection column
#: (measured in Chromium: test_browser_glance.py checks the real page).
TABLE_AT_1400 = 930
SELECTION_COLUMN = 32


def test_library_columns_that_matter_first_fit_1400_px(app_env: AppEnv) -> None:
    at = open_app()
    table = at.dataframe(key="lib_table")
    proto = table.proto
    order = list(proto.column_order)
    assert order[:2] == ["note", "states"] and {"year", "decision", "tags"} <= set(order)
    config = json.loads(proto.columns)
    widths = [config[column]["width"] for column in order]
    assert all(isinstance(w, int) for w in widths), config
    assert SELECTION_COLUMN + sum(widths) <= TABLE_AT_1400, widths
    assert proto.row_height > 64  # Streamlit wraps a cell's text only in rows taller than 4 rem
    frame = table.value.set_index("id")
    # Titles whole, with the note's id: the two notes that share a title read apart.
    same = [i for i in frame.index if i.startswith("siji-2026")]
    assert len(same) == 2 and len({frame.loc[i, "title"] for i in same}) == 1
    for note_id in frame.index:
        assert frame.loc[note_id, "note"] == f"{frame.loc[note_id, 'title']} — {note_id}"
    assert frame.loc["noop-note", "states"] == "1 claim · 1 not run"
    assert frame.loc["siji-2026-analysis-note-arxiv-2502-00001", "states"] == \
        "6 claims · 5 not run · 1 no analyzer · 6 ungrounded"
    assert (frame.loc["noop-note", "unverified"], frame.loc["noop-note", "claims"]) == (1, 1)  # counts stay in data


def test_library_claims_cell_names_the_verdicts(glance: AppEnv) -> None:
    frame = open_app().dataframe(key="lib_table").value.set_index("id")
    assert frame.loc["glance", "states"] == "4 claims · 3 supported · 1 not runnable"


# -- A claim's card: its scale, its plots, its caveats ----------------------------------------------

def test_claim_scale_is_said_the_same_way_on_both_sides(glance: AppEnv) -> None:
    note = read_note(glance.papers / "glance.md")
    big = next(c for c in note.meta.claims if c.id == "big-model")
    assert claim_scale_text(big) == "650M parameters · UniRef50"
    assert claim_scale_text(next(c for c in note.meta.claims if c.id == "first")) == "not stated"
    at = open_app("note", id="glance")
    assert not at.exception, at.exception
    texts = claim_card_texts(at, "big-model")
    # one labelled field sets the claim's scale against the evidence's, said once on the card
    field = texts.index("Scale: claim · evidence")
    # a run that could not execute records none
    assert texts[field + 1] == "claim: 650M parameters · UniRef50 · evidence: not recorded"
    assert sum("650M parameters · UniRef50" in t for t in texts) == 1, texts
    assert not any("not stated" in t for t in texts), texts


def test_claim_plots_span_the_card(glance: AppEnv) -> None:
    at = open_app("note", id="glance")
    images = [(node, path) for node, path in walk(at._tree) if node.type == "image"]
    assert len(images) == 1  # the one claim that drew a plot
    node, path = images[0]
    assert node.captions == ["value by temperature"]
    assert block_id(path[-1]).endswith("-claim_first")  # in the card itself, not in one of its two columns
    assert not any(b.type == "column" for b in path)


def test_caveats_every_claim_shares_are_shown_once(glance: AppEnv) -> None:
    at = open_app("note", id="glance")
    assert not at.exception, at.exception
    shown = [c.value for c in at.caption]
    for caveat in SHARED:
        assert sum(caveat in text for text in shown) == 1, caveat  # once, at the note's level
    note_level = [node.value for node, path in walk(at._tree)
                  if node.type in ("markdown", "caption") and any(block_id(b).endswith("-note_caveats") for b in path)]
    assert SHARED[0] in note_level and "Caveats of all 3 claims with results" in " ".join(note_level)
    third = claim_card_texts(at, "third")
    assert any(OWN in t for t in third)  # its own caveat stays with it
    assert any("2 caveat(s) shared" in t for t in third)
    assert not any(OWN in t for t in note_level)


def test_shared_caveats_need_two_claims_and_keep_the_first_order() -> None:
    def record(notes: list[str]) -> EvidenceRecord:
        return EvidenceRecord.model_validate({"id": "1", "run_id": "r", "analyzer": "a", "metrics": {"notes": notes},
                                              "created_at": "2026-01-01T00:00:00Z"})

    assert shared_caveats([record(["a", "b"])]) == []  # one claim: nothing repeats
    assert shared_caveats([record(["b", "a", "c"]), record(["a", "b"]), record(["a", "b", "d"])]) == ["b", "a"]
    assert shared_caveats([record(["a"]), record([])]) == []
