"""The library view: claim states, grounding counts and problem filters, on a real SQLite index."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kb.core import KnowledgeBase
from kb.settings import Settings

NOTE = textwrap.dedent("""\
    ---
    paper_id: "test:{name}"
    title: "{title}"
    tags: ["{tag}"]
    source_file: "{name}.txt"
    claims:
      - id: echo
        statement: "The echoed value is above 2."
        source: {{quote: "{quote}"}}
        analyzer: {{name: noop, params: {{value: {value}}}}}
        expect: {{metric: value, op: ">", value: 2}}
      - id: unbound
        statement: "A claim with no analyzer."
    ---
    body of {name}
    """)


def _write(papers: Path, name: str, value: float, quote: str = "the value is large", tag: str = "plm") -> None:
    (papers / f"{name}.md").write_text(NOTE.format(name=name, title=name.title(), tag=tag, quote=quote, value=value),
                                       encoding="utf-8")
    (papers / f"{name}.txt").write_text("In this paper the value is large.\n", encoding="utf-8")


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    papers = tmp_path / "papers"
    papers.mkdir()
    _write(papers, "good", 3)
    _write(papers, "bad", 1, tag="scaling")
    _write(papers, "fresh", 5)
    _write(papers, "unsourced", 3, quote="a sentence the paper never wrote")
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
    kb.verify(["good", "bad", "unsourced"])
    kb.work()
    return kb


def test_library_rows_count_claim_states_and_grounding(kb: KnowledgeBase) -> None:
    rows = {row.id: row for row in kb.library()}
    assert set(rows) == {"good", "bad", "fresh", "unsourced"}
    assert rows["good"].claims == 2 and rows["good"].states["supported"] == 1 and not rows["good"].flags()
    assert rows["bad"].states["refuted"] == 1 and rows["bad"].flags() == {"refuted"}
    assert rows["fresh"].states["unverified"] == 1 and rows["fresh"].flags() == {"unverified"}
    assert rows["unsourced"].ungrounded == 1 and rows["unsourced"].flags() == {"ungrounded"}
    table = rows["good"].as_dict()
    assert table["supported"] == 1 and table["refuted"] == 0 and table["tags"] == "plm"


def test_library_rows_show_stale_after_the_note_changes_its_binding(kb: KnowledgeBase) -> None:
    _write(kb.papers_dir, "good", 4)  # new parameters: the evidence no longer matches the note
    kb.index()
    rows = {row.id: row for row in kb.library()}
    assert rows["good"].states["stale"] == 1 and rows["good"].flags() == {"stale"}
    assert [row.id for row in kb.library(flags={"stale"})] == ["good"]


def test_library_rows_filters_search_and_flags(kb: KnowledgeBase) -> None:
    assert [row.id for row in kb.library(tag="scaling")] == ["bad"]
    assert [row.id for row in kb.library(flags={"refuted", "ungrounded"})] == ["bad", "unsourced"]
    assert [row.id for row in kb.library(query="unsourced")] == ["unsourced"]
    assert [row.id for row in kb.library(sort="title", descending=True)] == ["unsourced", "good", "fresh", "bad"]


def test_library_grounding_follows_the_source_text(kb: KnowledgeBase) -> None:
    source = kb.papers_dir / "unsourced.txt"
    source.write_text("Now the paper says: a sentence the paper never wrote.\n", encoding="utf-8")
    kb.index()
    rows = {row.id: row for row in kb.library()}
    assert rows["unsourced"].ungrounded == 0
    source.unlink()
    kb.index()
    rows = {row.id: row for row in kb.library()}
    assert rows["unsourced"].no_source == 1 and rows["unsourced"].ungrounded == 0
