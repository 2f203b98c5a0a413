"""Alembic migrations build exactly the schema the models describe, on a real SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect
from sqlmodel import SQLModel

from kb.index.database import make_engine
from kb.index.opening import init_db


def _head() -> str:
    """The newest revision in kb/migrations (a single head: migrations form one line)."""
    from alembic.script import ScriptDirectory

    from kb.index.migrate import alembic_config

    (head,) = ScriptDirectory.from_config(alembic_config()).get_heads()
    return str(head)


def test_init_db_migrates_to_models_and_is_idempotent(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'kb.sqlite'}")
    init_db(engine)
    init_db(engine)  # a second start must not fail or change anything
    with engine.connect() as conn:
        context = MigrationContext.configure(conn)
        assert context.get_current_revision() == _head()
        diffs = [d for d in compare_metadata(context, SQLModel.metadata)
                 if not (d[0] == "remove_table" and d[1].name.startswith("paper_fts"))]
        assert diffs == []
    assert {"paper", "tag", "claim", "run", "evidence"} <= set(inspect(engine).get_table_names())


def test_upgrade_from_0001_keeps_rows_and_adds_columns(tmp_path: Path) -> None:
    from sqlalchemy import text

    from kb.index.migrate import upgrade

    engine = make_engine(f"sqlite:///{tmp_path / 'old.sqlite'}")
    upgrade(engine, "0001")
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO run (id, analyzer, params_json, status, progress, created_at) "
                          "VALUES ('r1', 'noop', '{}', 'succeeded', 1.0, '2026-01-01 00:00:00')"))
    init_db(engine)
    with engine.connect() as conn:
        row = conn.execute(text("SELECT id, analyzer, group_id, binding_hash FROM run")).one()
        assert tuple(row) == ("r1", "noop", None, None)
        assert MigrationContext.configure(conn).get_current_revision() == _head()


def test_a_run_has_at_most_one_evidence_row(tmp_path: Path) -> None:
    """The unique index on evidence.run_id refuses a second result for one run, whoever writes it."""
    import pytest
    from sqlalchemy.exc import IntegrityError
    from sqlmodel import Session

    from kb.index.database import Evidence, Run

    engine = make_engine(f"sqlite:///{tmp_path / 'kb.sqlite'}")
    init_db(engine)
    with Session(engine) as session:
        session.add(Run(id="r1", analyzer="noop", params_json="{}"))
        session.commit()
        session.add(Evidence(run_id="r1", analyzer="noop"))
        session.commit()
        session.add(Evidence(run_id="r1", analyzer="noop"))
        with pytest.raises(IntegrityError):
            session.commit()


def test_at_head_reads_the_revision_with_one_query_and_alembic_decides_the_rest(tmp_path: Path) -> None:
    """An index at the newest revision is opened without Alembic (``at_head``); any other is handed to it."""
    from sqlalchemy import text

    from kb.index.migrate import IndexTooNew, at_head, head_revision, upgrade

    assert head_revision() == _head()  # read from the scripts' lines, as Alembic reads them
    engine = make_engine(f"sqlite:///{tmp_path / 'kb.sqlite'}")
    assert not at_head(engine)  # a new database: no revision table yet
    upgrade(engine, "0001")
    assert not at_head(engine)  # an older index: init_db upgrades it
    init_db(engine)
    assert at_head(engine)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0999_from_the_future'"))
    assert not at_head(engine)
    with pytest.raises(IndexTooNew):  # still refused, by Alembic's check
        init_db(engine)


def test_head_revision_is_none_unless_the_scripts_form_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kb.index import migrate

    versions = tmp_path / "versions"
    versions.mkdir()
    (versions / "a.py").write_text("revision = 'a'\ndown_revision = None\n", encoding="utf-8")
    (versions / "b.py").write_text('revision = "b"\ndown_revision = "a"\n', encoding="utf-8")
    monkeypatch.setattr(migrate, "MIGRATIONS", tmp_path)
    assert migrate.head_revision() == "b"
    (versions / "c.py").write_text("revision = 'c'\ndown_revision = 'a'\n", encoding="utf-8")  # two heads
    assert migrate.head_revision() is None
    (versions / "c.py").write_text("revision = 'c'\ndown_revision = ('a', 'b')\n", encoding="utf-8")  # a merge
    assert migrate.head_revision() is None
