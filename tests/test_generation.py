"""The index's generation (``kb.index.generation``, migration 0010g), on real SQLite and PostgreSQL: every
committed write to the notes' rows or to the evidence moves it, whichever connection made it; runs moving
through the queue, an unchanged re-index and uncommitted writes do not; a new index starts somewhere else."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from kb.core import KnowledgeBase
from kb.evidence.claim_states import set_verdict
from kb.index.database import make_engine
from kb.index.generation import read_generation
from kb.index.migrate import upgrade
from kb.index.opening import init_db
from kb.queue import store
from kb.settings import Settings
from tests.helpers.app_env import noop_note


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new index on each database kb supports (PostgreSQL: a fresh database on the session's server)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'home' / 'index.sqlite'}"
    return str(request.getfixturevalue("pg_database"))


def test_generation_moves_with_each_committed_write_of_notes_or_evidence(tmp_path: Path,
                                                                         database_url: str) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "noop-note.md").write_text(noop_note(), encoding="utf-8")
    (papers / "other.md").write_text(noop_note("test:other", "Other"), encoding="utf-8")
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home", database_url=database_url))
    kb.engine  # noqa: B018 - opens (creates) the index
    reader = make_engine(database_url)  # another engine: none of the writer's connections
    seen = [read_generation(reader)]

    def moved() -> bool:
        seen.append(read_generation(reader))
        return seen[-1] != seen[-2]

    assert isinstance(seen[0], int)
    kb.index()
    assert moved()  # notes and claims inserted
    kb.index()
    assert not moved()  # nothing changed: the app's keeper re-indexes every few seconds
    queued, _ = kb.verify(["noop-note#value-above-two"])
    run = store.claim_next(kb.engine, "test-worker")
    assert run is not None and run.id == queued[0].id
    store.heartbeat(kb.engine, run.id, 0.5, "half", attempt=run.attempts)
    assert store.release(kb.engine, run.id, run.attempts, "test", voluntary=True) is not None
    assert not moved()  # queued, running, re-queued: no cached result reads runs
    assert kb.work() == {"succeeded": 1}
    assert moved()  # the run's evidence
    (record,) = kb.evidence("noop-note#value-above-two")
    assert record.verdict is not None
    set_verdict(kb.engine, record.id, record.verdict.model_copy(update={"reason": "re-judged"}))
    assert moved()  # a stored verdict rewritten (a note's expectation edited)
    (papers / "other.md").unlink()
    kb.index()
    assert moved()  # a note and its claim gone

    with kb.engine.connect() as writing:
        writing.execute(text("UPDATE claim SET statement = 'changed' WHERE key = 'noop-note#value-above-two'"))
        assert not moved()  # not committed: a reader must not key fresh results on what it cannot see yet
        writing.commit()
    assert moved()
    reader.dispose()


def test_a_new_index_starts_at_its_own_generation(tmp_path: Path) -> None:
    """A rebuilt index (a new database) never reads as the generation of the one it replaced: the counter
    starts at a random value (equal by chance once in 2**40)."""
    starts = []
    for name in ("a", "b"):
        engine = make_engine(f"sqlite:///{tmp_path / name / 'index.sqlite'}")
        init_db(engine)
        starts.append(read_generation(engine))
        engine.dispose()
    assert None not in starts and starts[0] != starts[1]


def test_an_index_from_before_generations_has_none(tmp_path: Path) -> None:
    """An index at revision 0009t (an older kb's, opened read-only so never upgraded) reads None, not an
    error: the app then keys its cache on time."""
    engine = make_engine(f"sqlite:///{tmp_path / 'old.sqlite'}")
    upgrade(engine, "0009t")
    assert read_generation(engine) is None
    init_db(engine)
    assert isinstance(read_generation(engine), int)
    engine.dispose()


def test_a_long_transaction_on_postgresql_holds_no_other_writer_back(tmp_path: Path, pg_database: str) -> None:
    """PostgreSQL bumps the counter when a transaction commits, not when it writes: a re-index whose transaction
    is still open (here, an uncommitted claim update) does not make a worker's commit of new evidence wait for
    it, and each commit moves the generation once, whatever it wrote."""
    papers = tmp_path / "papers"
    papers.mkdir()
    for name in ("a", "b"):
        (papers / f"{name}.md").write_text(noop_note(f"test:{name}", name), encoding="utf-8")
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home", database_url=pg_database))
    kb.index()
    before = read_generation(kb.engine)
    with kb.engine.connect() as long, kb.engine.connect() as short:
        long.execute(text("UPDATE claim SET statement = 'long' WHERE key = 'a#value-above-two'"))
        short.execute(text("SET lock_timeout = '3s'"))  # a wait on the long transaction fails, never hangs
        short.execute(text("UPDATE claim SET statement = 'x' WHERE key = 'b#value-above-two'"))
        short.execute(text("UPDATE paper SET title = 'x' WHERE id = 'b'"))
        short.commit()
        after_short = read_generation(kb.engine)
        long.commit()
    assert before is not None and after_short == before + 1 and read_generation(kb.engine) == before + 2
