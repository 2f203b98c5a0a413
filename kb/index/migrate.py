"""Schema migrations with Alembic: ``upgrade`` brings any database (SQLite, PostgreSQL) to the head.

An index stamped by a newer kb (a revision these migrations do not know) is refused with ``IndexTooNew``,
one line saying what to do, instead of Alembic's traceback.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.script.revision import RevisionError
from alembic.util import CommandError
from sqlalchemy import Connection
from sqlalchemy.engine import Engine

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


class IndexTooNew(Exception):
    """The database was written by a newer kb: its schema revision is not one this kb knows."""

    def __init__(self, url: str, revision: str) -> None:
        super().__init__(f"the index {url} was written by a newer kb (schema revision {revision!r}, unknown to "
                         "this one): upgrade kb, or use another index (--home or --db); `kb index --rebuild` "
                         "moves this one aside and rebuilds it from the notes")


def alembic_config(connection: object | None = None) -> Config:
    """An Alembic config pointing at kb's migrations, optionally bound to an open connection."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def _refuse_unknown(connection: Connection, config: Config) -> None:
    script = ScriptDirectory.from_config(config)
    for current in MigrationContext.configure(connection).get_current_heads():
        try:
            known = script.get_revision(current) is not None
        except (CommandError, RevisionError):  # a revision id none of our scripts has
            known = False
        if not known:
            raise IndexTooNew(connection.engine.url.render_as_string(hide_password=True), current)


def unknown_revision(connection: Connection) -> str | None:
    """The database's schema revision when these migrations do not know it (a newer kb wrote it), else None."""
    try:
        _refuse_unknown(connection, alembic_config(connection))
    except IndexTooNew as exc:
        return str(exc)
    return None


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply migrations up to ``revision``; ``IndexTooNew`` when the database is ahead of this kb."""
    with engine.begin() as connection:
        config = alembic_config(connection)
        _refuse_unknown(connection, config)
        command.upgrade(config, revision)


def revision(engine: Engine, message: str) -> None:
    """Autogenerate a migration from the difference between the models and the database (developers)."""
    with engine.begin() as connection:
        command.revision(alembic_config(connection), message=message, autogenerate=True)
