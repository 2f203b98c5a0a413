"""A knowledge base with the bundled notes and one note whose claim carries ``paper_values``, and its Note page
in Streamlit's AppTest: what the paper-values tests of the app and of the verdicts share."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from kb.core import KnowledgeBase
from kb.settings import Settings

ROOT = Path(__file__).resolve().parents[2]  # the checkout
NOTE = textwrap.dedent("""\
    ---
    paper_id: "test:paper-values"
    title: "Paper values"
    source_file: "sources/echo.txt"
    claims:
      - id: echoed
        statement: "The value is above two."
        source:
          quote: "the echoed value is above two"
        analyzer:
          name: "noop"
          scale: "smoke"
          params:
            value: 3
        expect:
          metric: "value"
          op: ">"
          value: 2
        paper_values:
          - value: 3.2
            where: "Table 1"
    ---
    Body.
    """)


@pytest.fixture
def kb_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> KnowledgeBase:
    papers, home = tmp_path / "papers", tmp_path / "home"
    shutil.copytree(ROOT / "papers", papers)
    (papers / "sources" / "echo.txt").write_text("We find the echoed value is above two.\n", encoding="utf-8")
    (papers / "paper-values.md").write_text(NOTE, encoding="utf-8")
    for name, value in (("KB_PAPERS", str(papers)), ("KB_HOME", str(home)), ("KB_APP_WORKER", "false")):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("KB_DATABASE_URL", raising=False)
    kb = KnowledgeBase(Settings(papers=papers, home=home))
    kb.index()
    st.cache_resource.clear()
    st.cache_data.clear()
    return kb


def note_page(note_id: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60).run()
    at.query_params.update({"id": note_id})
    at.switch_page("views/note.py").run()
    assert not at.exception, at.exception
    return at
