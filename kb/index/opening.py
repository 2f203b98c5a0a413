"""Opening the index: its tables brought to the head revision and its search backend created, in one place.

The tables (``database``), their migrations (``migrate``) and the search backends (``search``,
``search_postgres``) know nothing of each other; this module is the one that puts them together, so none of
them needs to import another to open the index.
"""

from __future__ import annotations

from sqlalchemy import Engine

from kb.index.database import writer_lock
from kb.index.migrate import at_head, upgrade
from kb.index.search import LikeSearch, SearchBackend, SqliteFtsSearch
from kb.index.search_postgres import PostgresSearch


def search_backend_for(engine: Engine) -> SearchBackend:
    """FTS5 on SQLite; on PostgreSQL, LIKE over the notes and a word index over their source pages
    (``kb.index.search_postgres``); LIKE over the notes elsewhere."""
    if engine.dialect.name == "sqlite":
        return SqliteFtsSearch(engine)
    if engine.dialect.name == "postgresql":
        return PostgresSearch(engine)
    return LikeSearch(engine)


def init_db(engine: Engine) -> None:
    """Create all tables and the search index (idempotent; safe when several processes start at once)."""
    # Tables come from the Alembic migrations, so a team database created by an older kb is upgraded
    # in place instead of drifting from the models. Two processes starting on a new database would both
    # create the tables: the migration lock makes the second one wait, then find them there. An index already
    # at the newest revision (every open but the first) is not handed to Alembic: one query says so.
    with writer_lock(engine, "migrate"):
        if not at_head(engine):
            upgrade(engine)
        search_backend_for(engine).create(engine)
