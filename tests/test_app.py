"""The Streamlit app, page by page, with AppTest over a temporary knowledge base (real SQLite, real notes).

Runs in these tests use the ``noop`` analyzer (milliseconds); runs through the background worker
process are in ``test_app_worker.py``, the real browser in ``test_browser_app.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from kb.notes import locks as note_lock
from tests.helpers.app_env import AppEnv, badges, noop_note, open_app


def verify_now(env: AppEnv, target: str) -> None:
    """Queue and run a verification in this process (for tests about showing evidence)."""
    kb = env.kb
    queued, skipped = kb.verify([target])
    assert queued and not skipped
    assert kb.work() == {"succeeded": len(queued)}


# -- Library ------------------------------------------------------------------------------------

def test_library_lists_every_note_with_claim_states(app_env: AppEnv) -> None:
    at = open_app()
    assert at.title[0].value == "Library"
    frame = at.dataframe(key="lib_table").value
    assert sorted(frame["id"]) == sorted(p.stem for p in app_env.papers.glob("*.md"))
    noop = frame.set_index("id").loc["noop-note"]
    assert (noop["claims"], noop["unverified"], noop["supported"]) == (1, 1, 0)

    verify_now(app_env, "noop-note")
    st.cache_data.clear()
    at.run()
    noop = at.dataframe(key="lib_table").value.set_index("id").loc["noop-note"]
    assert (noop["unverified"], noop["supported"]) == (0, 1)
    supported = next(m for m in at.metric if "Supported" in m.label)
    assert supported.value == "1"


def test_library_filters_by_tag_decision_quality_year_and_state(app_env: AppEnv) -> None:
    at = open_app()

    def ids() -> list[str]:
        return sorted(at.dataframe(key="lib_table").value["id"])

    at.sidebar.selectbox(key="lib_tag").set_value("langevin").run()
    assert ids() == ["sampling-intermediate-temperatures-langevin"]
    at.sidebar.selectbox(key="lib_tag").set_value("(any)")
    at.sidebar.selectbox(key="lib_decision").set_value("MAYBE").run()
    assert "noop-note" in ids() and "siji-2026-curse-of-depth-in-plms" not in ids()
    at.sidebar.selectbox(key="lib_decision").set_value("(any)")
    at.sidebar.slider(key="lib_min_quality").set_value(4).run()
    assert "noop-note" not in ids() and "siji-2026-curse-of-depth-in-plms" in ids()
    at.sidebar.slider(key="lib_min_quality").set_value(0)
    at.sidebar.selectbox(key="lib_year").set_value(2024).run()
    assert ids() == ["noop-note"]
    at.sidebar.selectbox(key="lib_year").set_value("(any)")
    at.sidebar.multiselect(key="lib_states").set_value(["unverified"]).run()
    unverified = ids()
    assert "noop-note" in unverified and "plm-architecture-discussion" not in unverified

    verify_now(app_env, "noop-note")  # no longer unverified: leaves this filter, enters 'supported'
    st.cache_data.clear()
    at.run()
    assert "noop-note" not in ids()
    at.sidebar.multiselect(key="lib_states").set_value(["supported"]).run()
    assert ids() == ["noop-note"]


def test_library_search_narrows_and_says_when_nothing_matches(app_env: AppEnv) -> None:
    at = open_app()
    at.text_input(key="lib_search").input("Langevin").run()
    assert "sampling-intermediate-temperatures-langevin" in at.dataframe(key="lib_table").value["id"].tolist()
    assert len(at.dataframe(key="lib_table").value) < 4
    at.text_input(key="lib_search").input("zzzqqq-nothing-like-this").run()
    assert not at.dataframe
    assert any("No note matches" in i.value for i in at.info)


def test_library_search_refuses_a_query_kb_cannot_run_in_one_line(app_env: AppEnv) -> None:
    at = open_app()
    at.text_input(key="lib_search").input(" ".join(f"word{i}" for i in range(1000))).run()
    assert not at.exception
    assert len(at.error) == 1 and "words" in at.error[0].value
    assert not at.dataframe


def test_library_paginates_but_filters_reach_every_note(app_env: AppEnv) -> None:
    for i in range(130):
        (app_env.papers / f"bulk-{i:03d}.md").write_text(
            f'---\npaper_id: "bulk:{i}"\ntitle: "Bulk note {i:03d}"\ntags: ["bulk"]\n---\nText {i}.\n',
            encoding="utf-8")
    app_env.kb.index()
    at = open_app()
    assert len(at.dataframe(key="lib_table").value) == 100
    at.pagination(key="lib_page").select(2).run()
    second = at.dataframe(key="lib_table").value["id"].tolist()
    assert len(second) == len(list(app_env.papers.glob("*.md"))) - 100
    assert "siji-2026-curse-of-depth-in-plms" in second
    at.text_input(key="lib_search").input("Curse of Depth").run()  # on page 2 unfiltered, found by search
    found = at.dataframe(key="lib_table").value["id"].tolist()
    assert "siji-2026-curse-of-depth-in-plms" in found[:2]


def test_library_row_selection_opens_the_note(app_env: AppEnv) -> None:
    at = open_app()
    ids = at.dataframe(key="lib_table").value["id"].tolist()
    row = ids.index("siji-2026-curse-of-depth-in-plms")
    at.session_state["lib_table"] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    assert at.title[0].value == "From Words to Amino Acids: Does the Curse of Depth Persist?"
    assert at.query_params["id"] == "siji-2026-curse-of-depth-in-plms"


def test_library_background_reindex_picks_up_new_and_broken_notes(app_env: AppEnv) -> None:
    from app.state import index_keeper

    at = open_app()  # the first render starts a background re-index when it is done
    keeper = index_keeper()
    assert keeper.thread is not None
    keeper.thread.join(timeout=30)
    (app_env.papers / "later.md").write_text('---\npaper_id: "test:later"\ntitle: "Added later"\n---\nText.\n',
                                             encoding="utf-8")
    (app_env.papers / "broken.md").write_text("---\ntitle: [unclosed\n---\n", encoding="utf-8")
    keeper.refresh(force=True)
    keeper.thread.join(timeout=30)
    at.run()
    assert "later" in at.dataframe(key="lib_table").value["id"].tolist()
    (problems,) = [e for e in at.expander if "could not be indexed" in e.label]
    assert any("broken.md" in t.value for t in problems.text)


def test_library_empty_knowledge_base_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "papers").mkdir()
    monkeypatch.setenv("KB_PAPERS", str(tmp_path / "papers"))
    monkeypatch.setenv("KB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KB_APP_WORKER", "false")
    st.cache_resource.clear()
    st.cache_data.clear()
    at = open_app()
    assert any("library is empty" in i.value for i in at.info)


# -- Note ---------------------------------------------------------------------------------------

def test_note_page_shows_header_claims_and_grounding(app_env: AppEnv) -> None:
    at = open_app("note", id="siji-2026-curse-of-depth-in-plms")
    assert at.title[0].value == "From Words to Amino Acids: Does the Curse of Depth Persist?"
    shown = badges(at)
    assert any("ACCEPT" in b for b in shown) and any("curse-of-depth" in b for b in shown)
    assert any("quote found in source" in b for b in shown)
    assert any(m.value.startswith("##### `late-layers-refine`") for m in at.markdown)
    assert any("Not verified yet" in i.value for i in at.info)


def test_note_page_shows_latest_evidence_and_history(app_env: AppEnv) -> None:
    verify_now(app_env, "noop-note")
    note = app_env.papers / "noop-note.md"
    note.write_text(noop_note(value=1.5), encoding="utf-8")  # the claim's binding changes: refuted now
    app_env.kb.index()
    verify_now(app_env, "noop-note")
    at = open_app("note", id="noop-note")
    shown = badges(at)
    assert any(b.startswith(":red-badge[") and "refuted" in b for b in shown), shown
    texts = [m.value for m in at.markdown]
    assert "**1.5** · expects `value > 2.0`" in texts  # regenerated against claimed, in the Verdict field
    frames = [d.value for d in at.dataframe]  # read-only tables carry no key in AppTest
    provenance = next(f for f in frames if "field" in f.columns and "device" in set(f["field"]))
    assert {"device", "analyzer", "kb", "python", "wall time"} <= set(provenance["field"])
    history = next(f for f in frames if "verdict" in f.columns)
    assert history["verdict"].tolist() == ["supported"] and "superseded" in history["stale"].iloc[0]


def test_note_page_never_renders_note_html(app_env: AppEnv) -> None:
    (app_env.papers / "noop-note.md").write_text(
        noop_note(body="<script>alert('x')</script>\n<b>bold</b> and **markdown**\n"), encoding="utf-8")
    app_env.kb.index()
    at = open_app("note", id="noop-note")
    body = [m for m in at.markdown if "<script>" in m.value]
    assert body, "the body is shown"
    assert all(not m.proto.allow_html for m in at.markdown)


def test_note_page_reverify_queues_without_running_in_the_script(app_env: AppEnv) -> None:
    at = open_app("note", id="noop-note")
    at.button(key="reverify_noop-note#value-above-two").click().run()
    assert not at.exception
    (run,) = app_env.kb.runs()
    assert run.status.value == "queued"  # queued for a worker; KB_APP_WORKER=false starts none here
    assert any("Verifying" in m.value for m in at.markdown)
    assert any("No worker is running" in w.value for w in at.warning)


def test_note_page_unknown_note_is_an_error_not_a_crash(app_env: AppEnv) -> None:
    at = open_app("note", id="no-such-note")
    assert any("Cannot open note" in e.value for e in at.error)


# -- Add / edit ---------------------------------------------------------------------------------

def fill_new_note(at: AppTest) -> AppTest:
    at.text_input(key="fm_title").input("A brand new paper")
    at.text_input(key="fm_paper_id").input("test:brand-new")
    at.multiselect(key="fm_tags").set_value(["plm", "testing"])
    at.number_input(key="fm_year").set_value(2025)
    at.text_area(key="fm_body").input("## Summary\n\nSome text.\n")
    return at


def field_errors(at: AppTest) -> list[str]:
    """Validation messages shown under form fields (small red text)."""
    return [c.value for c in at.caption if c.value.startswith(":red[:material/error:")]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file in ``folder`` but kb's note locks (``kb.notes.locks``: taken even by a write that is refused)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and note_lock.LOCK_DIR not in p.relative_to(folder).parts}


def test_add_note_valid_creates_and_indexes(app_env: AppEnv) -> None:
    at = fill_new_note(open_app("edit_note"))
    at.number_input(key="fm_quality_score").set_value(4).run()
    assert not at.error and not field_errors(at), field_errors(at)
    at.button(key="edit_save").click().run()
    assert not at.exception
    created = app_env.papers / "a-brand-new-paper.md"
    text = created.read_text(encoding="utf-8")
    assert 'paper_id: "test:brand-new"' in text and "quality_score: 4" in text and "Some text." in text
    assert app_env.kb.get("a-brand-new-paper") is not None  # indexed
    assert at.title[0].value == "A brand new paper"  # landed on the new note


def test_add_note_invalid_input_shows_errors_by_field_and_writes_nothing(app_env: AppEnv) -> None:
    before = snapshot(app_env.papers)
    at = fill_new_note(open_app("edit_note"))
    at.number_input(key="fm_quality_score").set_value(7)
    at.number_input(key="fm_year").set_value(1200).run()
    errors = field_errors(at)
    assert any("less than or equal to 5" in e for e in errors), errors
    assert any("greater than or equal to 1900" in e for e in errors), errors
    at.button(key="edit_save").click().run()
    assert any("Nothing was written" in e.value for e in at.error)
    assert snapshot(app_env.papers) == before


def test_add_note_duplicate_paper_id_is_refused(app_env: AppEnv) -> None:
    before = snapshot(app_env.papers)
    at = fill_new_note(open_app("edit_note"))
    at.text_input(key="fm_paper_id").input("test:noop").run()
    at.button(key="edit_save").click().run()
    assert any("already used" in e for e in field_errors(at))
    assert snapshot(app_env.papers) == before


def test_edit_note_changes_only_the_edited_lines(app_env: AppEnv) -> None:
    path = app_env.papers / "siji-2026-curse-of-depth-in-plms.md"
    before = path.read_bytes()
    at = open_app("edit_note", id="siji-2026-curse-of-depth-in-plms")
    assert at.text_input(key="fm_title").value.startswith("From Words to Amino Acids")
    at.number_input(key="fm_quality_score").set_value(5).run()
    at.button(key="edit_save").click().run()
    assert not at.exception
    after = path.read_bytes()
    old_lines, new_lines = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old_lines) == len(new_lines)
    changed = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
    assert changed == [(b"quality_score: 4\n", b"quality_score: 5\n")]


def test_edit_note_body_keeps_frontmatter_bytes(app_env: AppEnv) -> None:
    path = app_env.papers / "siji-2026-curse-of-depth-in-plms.md"
    before = path.read_bytes()
    fence = before.index(b"\n---\n", 4) + 5
    at = open_app("edit_note", id="siji-2026-curse-of-depth-in-plms")
    at.text_area(key="fm_body").input(at.text_area(key="fm_body").value + "\nAn added closing remark.\n").run()
    at.button(key="edit_save").click().run()
    after = path.read_bytes()
    assert after[:fence] == before[:fence]
    assert after.endswith(b"An added closing remark.\n")


def test_edit_note_claim_edit_rewrites_only_the_claims_block(app_env: AppEnv) -> None:
    path = app_env.papers / "siji-2026-curse-of-depth-in-plms.md"
    before = path.read_text(encoding="utf-8")
    at = open_app("edit_note", id="siji-2026-curse-of-depth-in-plms")
    second = at.session_state["edit_claims"][1]
    at.text_area(key=f"c_{second}_statement").input("Deeper models waste more of their depth.").run()
    at.button(key="edit_save").click().run()
    after = path.read_text(encoding="utf-8")
    start = before.index("\nclaims:\n")
    end, end_after = before.index("\n---\n", start), after.index("\n---\n", start)
    assert after[:start] == before[:start] and after[end_after:] == before[end:]  # other fields, body
    claims = app_env.kb.read("siji-2026-curse-of-depth-in-plms").meta.claims
    assert [c.statement for c in claims][1] == "Deeper models waste more of their depth."
    assert "parameters: 650000000\n" in after  # values keep their written form (no 650000000.0)


def test_edit_note_new_claim_is_appended_keeping_existing_bytes(app_env: AppEnv) -> None:
    path = app_env.papers / "noop-note.md"
    before = path.read_text(encoding="utf-8")
    at = open_app("edit_note", id="noop-note")
    at.button(key="add_claim").click().run()
    uid = at.session_state["edit_claims"][-1]
    at.text_input(key=f"c_{uid}_id").input("second-claim")
    at.text_area(key=f"c_{uid}_statement").input("A second statement.").run()
    at.button(key="edit_save").click().run()
    assert not at.exception
    after = path.read_text(encoding="utf-8")
    fence = before.index("\n---\n", 4)
    assert after.startswith(before[:fence])  # every existing frontmatter byte kept, claim appended after
    assert after.endswith(before[fence:]) and "second-claim" in after[fence - 200:]
    assert [c.id for c in app_env.kb.read("noop-note").meta.claims] == ["value-above-two", "second-claim"]


def test_edit_note_unchanged_writes_nothing(app_env: AppEnv) -> None:
    path = app_env.papers / "siji-2026-curse-of-depth-in-plms.md"
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    at = open_app("edit_note", id="siji-2026-curse-of-depth-in-plms")
    at.button(key="edit_save").click().run()
    assert any("Nothing changed" in i.value for i in at.info)
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime


def test_claims_editor_params_form_is_typed_and_validated(app_env: AppEnv) -> None:
    at = fill_new_note(open_app("edit_note"))
    at.button(key="add_claim").click().run()
    (uid,) = at.session_state["edit_claims"]
    at.text_input(key=f"c_{uid}_id").input("echo-five")
    at.text_area(key=f"c_{uid}_statement").input("The echo is five.")
    at.selectbox(key=f"c_{uid}_analyzer").set_value("noop").run()
    prefix = f"c_{uid}_p_noop_smoke_"
    # Widgets follow the Params field types: float -> number, bool -> toggle, optional str -> text.
    assert at.number_input(key=prefix + "value").value == 1.0
    assert at.toggle(key=prefix + "fail").value is False
    assert at.text_input(key=prefix + "not_runnable").value == ""
    at.number_input(key=prefix + "steps").set_value(0).run()  # Params says steps >= 1
    assert any("greater than or equal to 1" in e for e in field_errors(at))
    before = snapshot(app_env.papers)
    at.button(key="edit_save").click().run()
    assert snapshot(app_env.papers) == before

    at.number_input(key=prefix + "steps").set_value(2)
    at.number_input(key=prefix + "value").set_value(5.0)
    at.toggle(key=f"c_{uid}_has_expect").set_value(True).run()
    assert at.selectbox(key=f"c_{uid}_metric_noop").value == "value"  # the analyzer's declared metric
    at.selectbox(key=f"c_{uid}_op").set_value(">=")
    at.text_input(key=f"c_{uid}_value").input("4").run()
    assert not at.error and not field_errors(at), field_errors(at)
    at.button(key="edit_save").click().run()
    note = app_env.kb.read("a-brand-new-paper")
    (claim,) = note.meta.claims
    assert claim.analyzer is not None and claim.analyzer.name == "noop" and claim.analyzer.scale == "smoke"
    assert claim.analyzer.params == {"value": 5.0, "steps": 2}  # only what differs from the preset
    assert claim.expect is not None and (claim.expect.metric, claim.expect.op.value, claim.expect.value) == (
        "value", ">=", 4.0)


def test_draft_claims_fallback_then_accept_into_the_note(app_env: AppEnv) -> None:
    at = fill_new_note(open_app("edit_note"))
    text = ("We train models with 650M parameters on 12 layers. The optimal depth is at least 24 layers. "
            "Later layers refine the output.")
    at.text_area(key="draft_text").input(text).run()
    at.button(key="draft_go").click().run()
    assert not at.exception
    drafted = at.data_editor(key="draft_table").value
    assert len(drafted) >= 1 and all(q in text for q in drafted["quote"])
    at.button(key="draft_accept").click().run()
    assert len(at.session_state["edit_claims"]) == len(drafted)
    at.button(key="edit_save").click().run()
    assert not at.exception
    claims = app_env.kb.read("a-brand-new-paper").meta.claims
    assert [c.id for c in claims] == drafted["id"].tolist()
    assert all(c.source is not None and c.source.quote in text for c in claims)


def test_draft_claims_never_reproposes_the_notes_own_claims(app_env: AppEnv) -> None:
    at = fill_new_note(open_app("edit_note"))
    text = "We train models with 650M parameters on 12 layers. The optimal depth is at least 24 layers."
    at.text_area(key="draft_text").input(text).run()
    at.button(key="draft_go").click().run()
    first = at.data_editor(key="draft_table").value
    at.button(key="draft_accept").click().run()
    at.button(key="edit_save").click().run()
    saved = [c.id for c in app_env.kb.read("a-brand-new-paper").meta.claims]
    assert saved == first["id"].tolist()

    again = open_app("edit_note", id="a-brand-new-paper")
    again.text_area(key="draft_text").input(text).run()
    again.button(key="draft_go").click().run()
    assert not again.exception
    captions = [c.value for c in again.caption]
    assert any(c.startswith("0 claim(s) drafted") for c in captions), captions  # nothing proposed twice
    assert [c.id for c in app_env.kb.read("a-brand-new-paper").meta.claims] == saved


# -- Runs ---------------------------------------------------------------------------------------

def test_runs_page_lists_details_cancels_and_retries(app_env: AppEnv) -> None:
    kb = app_env.kb
    (queued,), _ = kb.verify(["noop-note#value-above-two"])
    at = open_app("runs", run=queued.id)
    table = at.dataframe(key="runs_table_0").value
    assert table["id"].tolist() == [queued.id] and table["status"].tolist() == ["queued"]
    assert at.json[0].value and '"value": 3' in at.json[0].value  # the run's parameters
    at.button(key="run_cancel").click().run()
    assert kb.get_run(queued.id).status.value == "cancelled"
    at.button(key="run_retry").click().run()
    runs = kb.runs()
    assert len(runs) == 2 and runs[0].status.value == "queued" and runs[0].id != queued.id
    assert (runs[0].params, runs[0].claim_key) == (queued.params, queued.claim_key)
    assert at.session_state["run_id"] == runs[0].id


def test_runs_page_shows_error_of_failed_run_and_log_of_finished_run(app_env: AppEnv) -> None:
    kb = app_env.kb
    kb.verify(["noop-note"])
    kb.work()
    (done,) = kb.runs()
    at = open_app("runs", run=done.id)
    logs = [c.value for c in at.code]
    assert any("step 1/1" in log for log in logs), logs  # log.txt of the finished run
    assert kb.retry(done.id).status.value == "queued"


def test_runs_page_empty_says_what_to_do(app_env: AppEnv) -> None:
    at = open_app("runs")
    assert any("No runs yet" in i.value for i in at.info)


# -- Ask ------------------------------------------------------------------------------------------

def test_ask_page_without_model_says_so_and_app_still_works(app_env: AppEnv) -> None:
    from kb.agents.config import ENV_VAR

    at = open_app("ask")
    assert any(ENV_VAR in w.value and "no chat model configured" in w.value for w in at.warning)
    assert at.chat_input(key="ask_input").proto.disabled
    at.switch_page("views/library.py").run()
    assert not at.exception and at.dataframe(key="lib_table").value.shape[0] == len(list(app_env.papers.glob("*.md")))


def test_add_note_saves_the_text_pasted_into_the_drafter_as_its_source(app_env: AppEnv) -> None:
    at = fill_new_note(open_app("edit_note"))
    text = "A brand new paper\nWe train models with 650M parameters on 12 layers.\n"
    at.text_area(key="draft_text").input(text).run()
    at.button(key="edit_save").click().run()
    assert not at.exception
    note = app_env.kb.read("a-brand-new-paper")
    assert note.meta.source_file == "sources/a-brand-new-paper.txt"
    assert (app_env.papers / "sources" / "a-brand-new-paper.txt").read_text(encoding="utf-8") == text


def test_add_page_lookup_fills_the_form_from_arxiv(app_env: AppEnv, lookups: str) -> None:
    # The recorded arXiv answer, served on loopback (tests/helpers/lookups.py).
    at = open_app("edit_note")
    at.text_input(key="add_lookup").input("arxiv:2602.21750")
    at.button(key="add_lookup_go").click().run()
    assert not at.exception
    assert at.text_input(key="fm_title").value.startswith("From Words to Amino Acids")
    assert at.text_input(key="fm_paper_id").value == "arxiv:2602.21750"
    assert "mainly refine the final output distribution" in at.session_state["draft_text"]
    assert at.session_state["fm_authors_base"].iloc[0].tolist() == ["Aleena Siji", "Technical University of Munich"]
    # The bundled library already has this paper: refused, and the abstract is not left behind.
    before = snapshot(app_env.papers)
    at.button(key="edit_save").click().run()
    assert not at.exception and any("already used" in e.value for e in at.error)
    assert snapshot(app_env.papers) == before


def test_note_page_says_where_each_field_came_from(app_env: AppEnv) -> None:
    app_env.kb.new_note({"paper_id": "doi:10.1101/2020.12.15.422761", "title": "A sourced paper",
                         "field_sources": {"title": "crossref", "affiliations": "layout"}}, "Body.\n")
    at = open_app("note", id="a-sourced-paper")
    assert not at.exception
    assert [c.value for c in at.caption if c.value.startswith("Fields from")] == [
        "Fields from: title crossref, affiliations layout"]


def test_claims_editor_offers_only_what_a_note_may_set(app_env: AppEnv) -> None:
    from analyzers import registry

    at = fill_new_note(open_app("edit_note"))
    at.button(key="add_claim").click().run()
    (uid,) = at.session_state["edit_claims"]
    at.selectbox(key=f"c_{uid}_analyzer").set_value("depth.probe").run()
    assert not at.exception
    params = registry.load_all()["depth.probe"].Params
    offered = {str(w.key).rsplit("_smoke_", 1)[-1] for kind in ("text_input", "number_input", "toggle", "selectbox")
               for w in at.get(kind) if str(w.key).startswith(f"c_{uid}_p_depth.probe_")}
    assert offered and "max_sequences" in offered  # the form is there, or this tests nothing
    assert not offered & (params.operator_only_fields() | {"device"}), offered  # fasta, trust_remote_code, ...
