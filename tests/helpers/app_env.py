"""The Streamlit app's tests share these: a temporary knowledge base the app is pointed at (``make_env``,
``AppEnv``), the notes they add (``noop_note``, ``PROXY_NOTE``), and how a page is opened and read with AppTest."""

from __future__ import annotations

import atexit
import shutil
import sqlite3
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from kb.core import KnowledgeBase
from kb.settings import Settings

ROOT = Path(__file__).resolve().parents[2]  # the checkout
APP_MAIN = ROOT / "app" / "main.py"
TIMEOUT = 60

SOURCE_TEXT = "We find that the echoed value is above two in every setting we tried.\n"


def noop_note(paper_id: str = "test:noop", title: str = "Noop test note", value: float = 3,
              extra: str = "", body: str = "Body of the noop note.\n") -> str:
    """A note with one claim bound to the noop analyzer (grounded in ``sources/noop.txt``)."""
    return textwrap.dedent(f"""\
        ---
        paper_id: "{paper_id}"
        title: "{title}"
        tags:
          - "testing"
        publication:
          venue: "arXiv"
          year: 2024
        quality_score: 3
        decision: "MAYBE"
        source_file: "sources/noop.txt"
        claims:
          - id: value-above-two
            statement: "The value is above two."
            kind: quantitative
            source:
              quote: "the echoed value is above two"
            analyzer:
              name: noop
              params:
                value: {value}
            expect:
              metric: value
              op: ">"
              value: 2
        {extra}---

        """) + body


@dataclass
class AppEnv:
    """A knowledge base the app under test is pointed at."""

    papers: Path
    home: Path

    @property
    def kb(self) -> KnowledgeBase:
        return KnowledgeBase(Settings(papers=self.papers, home=self.home))


def _write_library(papers: Path) -> None:
    """The bundled notes plus the noop note and its source."""
    shutil.copytree(ROOT / "papers", papers)
    (papers / "sources" / "noop.txt").write_text(SOURCE_TEXT, encoding="utf-8")
    (papers / "noop-note.md").write_text(noop_note(), encoding="utf-8")


#: One indexed library per test process, which ``make_env`` copies: indexing it (YAML parsing, migrations)
#: cost each app test ~0.25 s of CPU, a copy ~0.02 s.
_template: AppEnv | None = None


def _indexed_template() -> AppEnv:
    global _template
    if _template is None:
        root = Path(tempfile.mkdtemp(prefix="kb-app-template-"))
        atexit.register(shutil.rmtree, root, True)
        template = AppEnv(root / "papers", root / "home")
        _write_library(template.papers)
        template.kb.index()
        _template = template
    return _template


def _copy_indexed(template: AppEnv, papers: Path, home: Path) -> None:
    """``template``'s notes (their mtimes kept) and index, its note and source paths moved to ``papers``
    (the only columns that name a file). ``make_env`` then indexes the copy and checks that this re-read
    nothing: the copy is what indexing ``papers`` would have written."""
    shutil.copytree(template.papers, papers)  # copy2: mtimes kept, as the index's rows record them
    home.mkdir(parents=True)
    source = sqlite3.connect(template.home / "index.sqlite")
    target = sqlite3.connect(home / "index.sqlite")
    try:
        source.backup(target)  # a consistent copy of a WAL database, unlike copying its file
        old, new = str(template.papers), str(papers)
        with target:
            target.execute("UPDATE paper SET path = replace(path, ?, ?), "
                           "source_path = replace(source_path, ?, ?)", (old, new, old, new))
    finally:
        source.close()
        target.close()


def make_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, worker: bool = False) -> AppEnv:
    papers, home = tmp_path / "papers", tmp_path / "home"
    monkeypatch.setenv("KB_PAPERS", str(papers))
    monkeypatch.setenv("KB_HOME", str(home))
    monkeypatch.setenv("KB_APP_WORKER", "true" if worker else "false")
    monkeypatch.delenv("KB_DATABASE_URL", raising=False)
    monkeypatch.delenv("KB_CHAT_MODEL", raising=False)
    _copy_indexed(_indexed_template(), papers, home)
    env = AppEnv(papers, home)
    report = env.kb.index()  # pages then render at once instead of waiting for the first index
    assert not report.changed, f"the copied index was not current: {report}"
    st.cache_resource.clear()
    st.cache_data.clear()
    return env


def open_app(page: str | None = None, **query: str) -> AppTest:
    """Run the app (``main.py``, so navigation and links work as for a user), then switch to ``page``."""
    at = AppTest.from_file(str(APP_MAIN), default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    if page is not None:
        at.query_params.update(query)
        at.switch_page(f"views/{page}.py").run()
        assert not at.exception, at.exception
    return at


def badges(at: AppTest) -> list[str]:
    """Every st.badge on the page, as its markdown (':green-badge[...]')."""
    return [m.value for m in at.markdown if "-badge[" in m.value]


# Claims about large models bound to runs on small ones (proxies), and one only a GPU can check.
PROXY_NOTE = textwrap.dedent("""\
    ---
    paper_id: "test:proxies"
    title: "Claims about big models, checked on small ones"
    claims:
      - id: leans-for
        statement: "At 650M parameters the echoed value is above 2."
        analyzer: {name: noop, params: {value: 3}}
        expect: {metric: value, op: ">", value: 2}
        scale: {parameters: 650000000}
      - id: leans-against
        statement: "At 650M parameters the echoed value is above 4."
        analyzer: {name: noop, params: {value: 3}}
        expect: {metric: value, op: ">", value: 4}
        scale: {parameters: 650000000}
      - id: needs-gpu
        statement: "Only a GPU can show it."
        analyzer: {name: noop, params: {not_runnable: "needs a GPU: re-verify with --device cuda"}}
        expect: {metric: value, op: ">", value: 2}
      - id: exact
        statement: "The echoed value is above 2."
        analyzer: {name: noop, params: {value: 3}}
        expect: {metric: value, op: ">", value: 2}
      - id: unbound
        statement: "Nothing can check this one."
    ---
    body
    """)


def record_deferred_downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What each deferred ``st.download_button`` (``data=`` a callable) registers, by its ``deferred_file_id``.

    AppTest's runtime is gone after a run, and with it the file a click would make: this keeps each entry
    (callable, file name, media type) as Streamlit's media file manager registers it, so a test can make the
    file as a click would, with the real callable.
    """
    from streamlit.runtime.media_file_manager import MediaFileManager

    registered: dict[str, Any] = {}
    original = MediaFileManager.add_deferred

    def add_deferred(self: MediaFileManager, data_callable: Any, mimetype: str | None, coordinates: str,
                     file_name: str | None = None, **kwargs: Any) -> str:
        file_id = original(self, data_callable, mimetype, coordinates, file_name, **kwargs)
        registered[file_id] = {"callable": data_callable, "mimetype": mimetype, "filename": file_name}
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    return registered
