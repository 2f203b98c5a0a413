"""The index's generation: one number that changes whenever anything a cached result is computed from changes.

Database triggers (migration ``0010g``) bump it in the transaction of every write to the notes' rows
(``paper``, ``claim``) and to the evidence, made by any process: the app, a ``kb worker``, a ``kb verify`` or
``kb index`` in a terminal, a Slurm job on another machine. A surface that caches what it computed from the
index (the app's pages: claim states, tensions) keys the cache on ``read_generation`` and so sees another
process's finished run at its next render, without a time-to-live. Reading it is one primary-key lookup.

Being transactional, it never runs ahead of the rows: a reader that sees a new generation sees the writes that
made it, so a result cached under it is at least that fresh.
"""

from __future__ import annotations

from sqlalchemy import Engine, select
from sqlalchemy.exc import DBAPIError
from sqlmodel import col

from kb.index.database import Generation


def read_generation(engine: Engine) -> int | None:
    """The index's generation now (any write to notes or evidence since the last read changes it); None for an
    index without one (written before revision 0010g and opened read-only, so never upgraded)."""
    try:
        with engine.connect() as connection:
            value = connection.execute(
                select(col(Generation.value)).where(col(Generation.id) == 1)
            ).scalar_one_or_none()
    except DBAPIError:  # no such table: an older index this kb may only read
        return None
    return None if value is None else int(value)
