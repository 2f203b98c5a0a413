"""The Streamlit app, page by page, with AppTest over a temporary copy of the bundled notes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from kb.core import KnowledgeBase
from kb.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app"
TIMEOUT = 30

NOOP_NOTE = """---
paper_id: "test:noop"
title: "Noop test note"
tags:
  - "testing"
claims:
  - id: value-above-two
    statement: "The value is above two."
    kind: quantitative
    analyzer:
      name: noop
      params:
        value: 3
    expect:
      metric: value
      op: ">"
      value: 2
---

Body of the noop note.
"""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    papers = tmp_path / "papers"
    shutil.copytree(ROOT / "papers", papers)
    home = tmp_path / "home"
    monkeypatch.setenv("KB_PAPERS", str(papers))
    monkeypatch.setenv("KB_HOME", str(home))
    monkeypatch.delenv("KB_DATABASE_URL", raising=False)
    st.cache_resource.clear()
    yield papers, home
    st.cache_resource.clear()


def page(name: str) -> AppTest:
    return AppTest.from_file(str(APP / "pages" / name), default_timeout=TIMEOUT)


def table_ids(at: AppTest) -> list[str]:
    return list(at.dataframe[0].value["id"])


def test_main_runs_library_by_default(env: tuple[Path, Path]) -> None:
    at = AppTest.from_file(str(APP / "main.py"), default_timeout=TIMEOUT).run()
    assert not at.exception
    assert at.title[0].value == "Library"
    assert len(table_ids(at)) == 3


def test_library_lists_notes_and_filters_by_tag(env: tuple[Path, Path]) -> None:
    at = page("library.py").run()
    assert not at.exception
    ids = table_ids(at)
    assert sorted(ids) == sorted(p.stem for p in (ROOT / "papers").glob("*.md"))
    frame = at.dataframe[0].value
    assert {"claims", "supported", "refuted", "inconclusive", "stale", "ungrounded"} <= set(frame.columns)
    assert frame["claims"].sum() > 0

    at.sidebar.selectbox(key="lib_tag").set_value("langevin").run()
    assert not at.exception
    assert table_ids(at) == ["sampling-intermediate-temperatures-langevin"]


def test_library_search_narrows(env: tuple[Path, Path]) -> None:
    at = page("library.py").run()
    at.text_input(key="lib_search").input("Langevin").run()
    assert not at.exception
    assert "sampling-intermediate-temperatures-langevin" in table_ids(at)
    assert len(table_ids(at)) < 3


def test_note_page_shows_claims_and_verdict_after_verify(env: tuple[Path, Path]) -> None:
    papers, _ = env
    (papers / "noop-note.md").write_text(NOOP_NOTE, encoding="utf-8")
    at = page("note.py")
    at.session_state["note_id"] = "noop-note"
    at.run()
    assert not at.exception
    assert at.title[0].value == "Noop test note"
    assert any(s.value == "value-above-two" for s in at.subheader)
    assert "No evidence yet." in [c.value for c in at.caption]

    at.button(key="reverify_noop-note#value-above-two").click().run()
    assert not at.exception
    badges = [m.value for m in at.markdown if "-badge[" in m.value]  # st.badge renders as markdown
    assert any(b.startswith(":green-badge[") and b.endswith("supported]") for b in badges), badges
    # The verdict came from kb.core, too.
    kb = KnowledgeBase(Settings())
    assert kb.evidence("noop-note#value-above-two")[0].verdict.kind.value == "supported"


def test_note_page_on_bundled_note(env: tuple[Path, Path]) -> None:
    at = page("note.py")
    at.session_state["note_id"] = "siji-2026-curse-of-depth-in-plms"
    at.run()
    assert not at.exception
    assert len(at.subheader) >= 1


def fill_valid(at: AppTest) -> AppTest:
    at.text_input(key="add_title").input("A brand new paper")
    at.text_input(key="add_paper_id").input("test:brand-new")
    at.text_input(key="add_tags").input("plm, testing")
    at.number_input(key="add_year").set_value(2025)
    at.text_area(key="add_body").input("# Summary\n\nSome text.")
    return at


def test_add_note_invalid_quality_writes_nothing(env: tuple[Path, Path]) -> None:
    papers, _ = env
    before = sorted(papers.glob("*.md"))
    at = fill_valid(page("add_note.py").run())
    at.number_input(key="add_quality").set_value(7).run()
    assert not at.exception
    assert any("less than or equal to 5" in e.value for e in at.error), [e.value for e in at.error]
    at.button(key="add_submit").click().run()
    assert sorted(papers.glob("*.md")) == before
    assert not at.success


def test_add_note_valid_creates_file(env: tuple[Path, Path]) -> None:
    papers, _ = env
    at = fill_valid(page("add_note.py").run())
    at.number_input(key="add_quality").set_value(4).run()
    assert not at.error
    at.button(key="add_submit").click().run()
    assert not at.exception
    assert at.success, [e.value for e in at.error]
    created = papers / "a-brand-new-paper.md"
    assert created.is_file()
    text = created.read_text(encoding="utf-8")
    assert "test:brand-new" in text and "quality_score: 4" in text


def test_add_note_duplicate_paper_id_shows_error(env: tuple[Path, Path]) -> None:
    papers, _ = env
    before = sorted(papers.glob("*.md"))
    at = fill_valid(page("add_note.py").run())
    at.text_input(key="add_paper_id").input("langevin-transformer-contacts")
    at.run()
    at.button(key="add_submit").click().run()
    assert any("already used" in e.value for e in at.error)
    assert sorted(papers.glob("*.md")) == before


def test_runs_page_lists_queued_run(env: tuple[Path, Path]) -> None:
    papers, _ = env
    (papers / "noop-note.md").write_text(NOOP_NOTE, encoding="utf-8")
    kb = KnowledgeBase(Settings())
    queued, _ = kb.verify(["noop-note#value-above-two"])
    at = page("runs.py").run()
    assert not at.exception
    frame = at.dataframe[0].value
    assert queued[0].id in list(frame["id"])
    assert list(frame["status"]) == ["queued"]

    at.text_input(key="runs_cancel_id").input(queued[0].id)
    at.run()
    at.button(key="runs_cancel").click().run()
    assert at.success
    assert kb.runs()[0].status.value == "cancelled"
