"""Which index a worker works on: a SQLite file replaced or deleted under a live worker is noticed.

A worker keeps its connections open, and a SQLite connection keeps reading and writing the file it opened
even after that file was deleted or another took its name (a rebuilt index, a restored backup): it would
go on working in a file nobody sees. So the worker records the index file's identity (device and inode)
and the schema revision when it starts, and compares them at every heartbeat and poll (``changed``): a
replaced file makes it reconnect (the next connection opens the new file), a deleted one or a schema
revision changed by another kb makes it stop, each said in one line.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Engine

log = logging.getLogger("kb.worker")


def _file_of(engine: Engine) -> Path | None:
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return None
    return Path(database)


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return (found.st_dev, found.st_ino)


def _revision(engine: Engine) -> str | None:
    try:
        with engine.connect() as connection:
            return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except Exception:  # noqa: BLE001 - an outage or an index without migrations says nothing about identity
        return None


@dataclass
class IndexIdentity:
    """The index file (SQLite: device and inode) and schema revision a worker started on."""

    engine: Engine
    path: Path | None
    inode: tuple[int, int] | None
    revision: str | None

    @classmethod
    def of(cls, engine: Engine) -> IndexIdentity:
        """The identity of ``engine``'s index now."""
        path = _file_of(engine)
        return cls(engine, path, _inode(path) if path else None, _revision(engine))

    def changed(self) -> str | None:
        """What happened to the index since the last look: None (nothing), 'replaced' (the engine was disposed
        of, so the next connection opens the new file), 'deleted' or 'migrated' (the worker must stop); each
        logged in one line, once."""
        if self.path is not None:
            now = _inode(self.path)
            if now is None:
                log.warning(
                    "the index %s was deleted under this worker; it stops (start it again once the index "
                    "is back: `kb index`)",
                    self.path,
                )
                return "deleted"
            if self.inode is not None and now != self.inode:
                log.warning("the index %s was replaced under this worker (another file now has its name); "
                            "reconnecting to the new index", self.path)
                self.engine.dispose()
                self.inode, self.revision = now, _revision(self.engine)
                return "replaced"
        if self.revision is not None:
            revision = _revision(self.engine)
            if revision is not None and revision != self.revision:
                log.warning("the index's schema changed under this worker (revision %s, now %s: another kb "
                            "migrated it); it stops: start it again with that kb", self.revision, revision)
                self.revision = revision
                return "migrated"
        return None
