"""A knowledge base of one note whose claim runs the ``noop`` analyzer: the queue's tests (local, Ray) run it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kb.core import KnowledgeBase
from kb.settings import Settings

NOTE = textwrap.dedent("""\
    ---
    paper_id: "test:queue"
    title: "Queue test"
    claims:
      - id: echo-big
        statement: "The echoed value is above 2."
        kind: quantitative
        analyzer: {{name: noop, params: {{value: {value}}}}}
        expect: {{metric: value, op: ">", value: 2}}
    ---
    body
    """)


def queue_kb(tmp_path: Path, value: float = 3.0) -> KnowledgeBase:
    """A knowledge base of one note (``q.md``) whose claim ``q#echo-big`` echoes ``value`` through ``noop``."""
    papers = tmp_path / "papers"
    papers.mkdir(exist_ok=True)
    (papers / "q.md").write_text(NOTE.format(value=value), encoding="utf-8")
    return KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
