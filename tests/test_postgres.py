"""The same core against a real PostgreSQL server started on loopback for this test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.core import KnowledgeBase
from kb.queue import store as queue_store
from kb.settings import Settings

pytestmark = pytest.mark.postgres
@pytest.fixture
def pg_kb(pg_url: str, kb_dirs: tuple[Path, Path]) -> KnowledgeBase:
    from sqlalchemy import create_engine, text

    with create_engine(pg_url).begin() as conn:  # every test starts from an empty, un-migrated database
        conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    return KnowledgeBase(Settings(papers=kb_dirs[0], home=kb_dirs[1], database_url=pg_url))


def test_postgres_index_list_search(pg_kb: KnowledgeBase) -> None:
    report = pg_kb.index()
    assert sorted(report.added) == sorted(p.stem for p in pg_kb.papers_dir.glob("*.md")) and not report.errors
    assert [p.id for p in pg_kb.list_papers(tag="langevin")] == ["sampling-intermediate-temperatures-langevin"]
    assert {hit.paper_id for hit in pg_kb.search("curse")[:2]} == {"siji-2026-curse-of-depth-in-plms",
                                                                     "siji-2026-analysis-note-arxiv-2502-00001"}
    assert pg_kb.index().unchanged and not pg_kb.index().updated


def test_postgres_queue_and_evidence(pg_kb: KnowledgeBase, tmp_path: Path) -> None:
    pg_kb.index()
    (pg_kb.papers_dir / "q.md").write_text(
        '---\npaper_id: "t:pg"\ntitle: "PG"\nclaims:\n  - id: echo\n    statement: "s"\n'
        '    analyzer: {name: noop, params: {value: 3}}\n    expect: {metric: value, op: ">", value: 2}\n---\n',
        encoding="utf-8")
    queued, _ = pg_kb.verify(["q"])
    assert len(queued) == 1
    assert queue_store.claim_next(pg_kb.engine, "other", run_id="nonexistent") is None
    assert pg_kb.work() == {"succeeded": 1}
    (ev,) = pg_kb.evidence("q#echo")
    assert ev.verdict is not None and ev.verdict.kind.value == "supported"
    row = next(r for r in pg_kb.library() if r.id == "q")
    assert row.states["supported"] == 1 and row.claims == 1


def test_postgres_seed_groups_and_library_states(pg_kb: KnowledgeBase) -> None:
    (pg_kb.papers_dir / "s.md").write_text(
        '---\npaper_id: "t:pg-seeds"\ntitle: "PG seeds"\nclaims:\n  - id: mean\n    statement: "s"\n'
        '    analyzer: {name: noop, seeds: [0, 1, 2], params: {value: 1, value_per_seed: 0.1}}\n'
        '    expect: {metric: value, op: ">", value: 5}\n---\n', encoding="utf-8")
    pg_kb.verify(["s"])
    assert pg_kb.work() == {"succeeded": 3}  # three seeds: two leave the mean's interval unresolved (t(1))
    latest = pg_kb.evidence("s#mean")[0].verdict
    assert latest is not None and latest.kind.value == "refuted" and latest.observed == pytest.approx(1.1)
    assert next(r for r in pg_kb.library(flags={"refuted"})).id == "s"


def test_postgres_migrations_match_models(pg_kb: KnowledgeBase) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext
    from sqlmodel import SQLModel

    def search_backends(diff: tuple[object, ...]) -> bool:  # kb.index.search_postgres keeps its own table
        table = getattr(diff[1], "table", diff[1])
        name = str(getattr(table, "name", ""))
        return diff[0] in ("remove_table", "remove_index") and name.startswith("paper_fts")

    with pg_kb.engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), SQLModel.metadata)
        assert [d for d in diffs if not search_backends(d)] == []
