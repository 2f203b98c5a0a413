"""The Note page's claim cards (issue 26): where a claim would be settled and what that costs, the paper's own values
beside kb's, and the verdict's reason in one line (Streamlit AppTest over a real knowledge base)."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from kb.core import KnowledgeBase
from kb.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
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


def test_note_page_says_where_a_proxy_claim_is_settled_and_the_papers_value(kb_env: KnowledgeBase) -> None:
    texts = [m.value for m in note_page("siji-2026-analysis-note-arxiv-2502-00001").markdown]
    settled = next(t for t in texts if "settled only at 'esm2_3b'" in t)
    assert "'smoke' runs a proxy here" in settled and "GPU-hours" in settled
    assert any("paper 0.45" in t and "kb: not run yet" in t for t in texts)
    assert not any("settled only at" in t for t in texts if "structure-supervision" in t)


def test_note_page_puts_kbs_value_beside_the_papers_once_verified(kb_env: KnowledgeBase) -> None:
    queued, _ = kb_env.verify(["paper-values"])
    assert kb_env.work() == {"succeeded": len(queued)}
    texts = [m.value for m in note_page("paper-values").markdown]
    assert any("value: paper 3.2 (Table 1) · kb 3" in t for t in texts), texts
    reason = next(t for t in texts if t.startswith("value = 3"))
    assert "\n" not in reason and "meets '> 2.0'" in reason  # the path is not repeated inside the threshold
