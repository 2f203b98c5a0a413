"""Schema migrations with Alembic: ``upgrade`` brings any database (SQLite, PostgreSQL) to the head.

An index stamped by a newer kb (a revision these migrations do not know) is refused with ``IndexTooNew``,
one line saying what to do, instead of Alembic's traceback.

Alembic loads only when there is something to do (~0.3 s of imports, and an upgrade reads every script):
``at_head`` tells with one query whether the database is at the newest revision, which ``head_revision``
reads from the scripts' ``revision``/``down_revision`` lines without Alembic.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # types only: Alembic is imported where it is used
    from alembic.config import Config
    from sqlalchemy import Connection
    from sqlalchemy.engine import Engine

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# A script's own revision and the one it follows, as Alembic writes them (`revision = '0009t'`).
_REVISION_LINE = re.compile(
    r"""^(revision|down_revision)\s*=\s*(?:['"]([^'"]+)['"]|None)\s*$""", re.MULTILINE
)


class IndexTooNew(Exception):
    """The database was written by a newer kb: its schema revision is not one this kb knows."""

    def __init__(self, url: str, revision: str) -> None:
        super().__init__(
            f"the index {url} was written by a newer kb (schema revision {revision!r}, unknown to "
            "this one): upgrade kb, or use another index (--home or --db); `kb index --rebuild` "
            "moves this one aside and rebuilds it from the notes"
        )


def head_revision() -> str | None:
    """The newest revision of kb's migrations, read from the scripts' ``revision = '...'`` and
    ``down_revision = '...'`` lines (no Alembic); None when they do not form one line of revisions (a merge,
    branches, a script written otherwise): then only Alembic can say (``tests/test_migrate.py`` checks that
    this is Alembic's head)."""
    revisions: dict[str, str | None] = {}
    for script in sorted((MIGRATIONS / "versions").glob("*.py")):
        found = dict((key, value or None) for key, value in _REVISION_LINE.findall(script.read_text("utf-8")))
        if "revision" not in found or "down_revision" not in found or found["revision"] is None:
            return None
        revisions[found["revision"]] = found["down_revision"]
    heads = set(revisions) - set(revisions.values())
    return heads.pop() if len(heads) == 1 else None


def at_head(engine: Engine) -> bool:
    """Whether the database holds exactly this kb's newest revision: one query, no Alembic. False on a new
    database, an older one, a newer kb's, or any error reading it (then ``upgrade`` says what is wrong)."""
    # imported here: `head_revision` alone (kb.index.listing) needs no SQLAlchemy
    from sqlalchemy.exc import DBAPIError

    head = head_revision()
    if head is None:
        return False
    try:
        with engine.connect() as connection:
            stored = connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalars().all()
    except DBAPIError:  # no such table yet (a new database), or one that cannot be read: upgrade decides
        return False
    return stored == [head]


def alembic_config(connection: object | None = None) -> Config:
    """An Alembic config pointing at kb's migrations, optionally bound to an open connection."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def _refuse_unknown(connection: Connection, config: Config) -> None:
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from alembic.script.revision import RevisionError
    from alembic.util import CommandError

    script = ScriptDirectory.from_config(config)
    for current in MigrationContext.configure(connection).get_current_heads():
        try:
            known = script.get_revision(current) is not None
        except (CommandError, RevisionError):  # a revision id none of our scripts has
            known = False
        if not known:
            raise IndexTooNew(connection.engine.url.render_as_string(hide_password=True), current)


def unknown_revision(connection: Connection) -> str | None:
    """The database's schema revision when these migrations do not know it (a newer kb wrote it), else
    None."""
    try:
        _refuse_unknown(connection, alembic_config(connection))
    except IndexTooNew as exc:
        return str(exc)
    return None


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply migrations up to ``revision``; ``IndexTooNew`` when the database is ahead of this kb."""
    from alembic import command

    with engine.begin() as connection:
        config = alembic_config(connection)
        _refuse_unknown(connection, config)
        command.upgrade(config, revision)


def revision(engine: Engine, message: str) -> None:
    """Autogenerate a migration from the difference between the models and the database (developers)."""
    from alembic import command

    with engine.begin() as connection:
        command.revision(alembic_config(connection), message=message, autogenerate=True)
