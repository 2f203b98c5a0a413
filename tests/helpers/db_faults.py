"""Database faults at chosen statements, as a PostgreSQL restart causes them: the queue's fault tests share these.

``lost_answers``: a transaction that ran a chosen statement commits, and then its commit raises as a connection
cut right after the server committed makes it raise (the server has the write; the client never heard so).
``cut_connections``: right after a chosen statement ran, the server ends that connection's backend
(``pg_terminate_backend``), as a restart does: the open transaction is rolled back by the server and the
client's next statement or commit fails for real. ``end_idle_connections``: the connections resting in a pool
are ended, so the pool's next one is dead.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError
from sqlmodel import Session

#: What psycopg says when the server went away mid-answer: what ``kb.queue.retry`` waits out.
GONE = "server closed the connection unexpectedly"


def run_update(*columns: str, without: tuple[str, ...] = ()) -> Callable[[str], bool]:
    """Whether a statement is an UPDATE of the runs table that sets all ``columns`` and none of ``without``:
    the claim sets ``started_at``, a heartbeat ``heartbeat_at`` without it, a release ``job_id``, a finish
    ``finished_at`` (``kb.queue.store``)."""

    def matches(statement: str) -> bool:
        if not statement.lstrip().upper().startswith("UPDATE RUN SET"):
            return False
        assigned = {part.split("=", 1)[0].strip() for part in statement.split(" WHERE ", 1)[0][15:].split(",")}
        return set(columns) <= assigned and not assigned & set(without)

    return matches


def right_after(first: Callable[[str], bool]) -> Callable[[str], bool]:
    """Whether a statement is the one a thread runs right after a statement ``first`` matches (the read that
    follows a commit)."""
    last = threading.local()

    def matches(statement: str) -> bool:
        hit = getattr(last, "matched", False)
        last.matched = first(statement)
        return hit

    return matches


CLAIM, RELEASE, FINISH = run_update("started_at"), run_update("job_id"), run_update("finished_at")
HEARTBEAT = run_update("heartbeat_at", without=("started_at",))


@contextlib.contextmanager
def lost_answers(after: Callable[[str], bool], *, times: int = 1,
                 then: Callable[[], None] | None = None) -> Iterator[list[str]]:
    """Within the block, the commit of each of the next ``times`` transactions (any thread, any engine of this
    process) that ran a statement ``after`` matches goes through and then raises ``OperationalError``;
    ``then`` runs first (what happens meanwhile). Yields the statements whose answers were lost."""
    ran: dict[int, str] = {}  # per thread: the matching statement its open transaction ran
    lost: list[str] = []

    def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if len(lost) + len(ran) < times and after(statement):
            ran.setdefault(threading.get_ident(), statement)

    def answer_lost(session: Session) -> None:
        statement = ran.pop(threading.get_ident(), None)
        if statement is not None:
            lost.append(statement)
            if then is not None:
                then()
            raise OperationalError("COMMIT", {}, Exception(GONE))

    def rolled_back(session: Session) -> None:  # a transaction that ended without commit lost nothing
        ran.pop(threading.get_ident(), None)

    event.listen(Engine, "after_cursor_execute", seen)
    event.listen(Session, "after_commit", answer_lost)
    event.listen(Session, "after_rollback", rolled_back)
    try:
        yield lost
    finally:
        event.remove(Session, "after_rollback", rolled_back)
        event.remove(Session, "after_commit", answer_lost)
        event.remove(Engine, "after_cursor_execute", seen)


@contextlib.contextmanager
def cut_connections(engine: Engine, after: Callable[[str], bool], *, times: int = 1) -> Iterator[list[str]]:
    """Within the block, right after each of the next ``times`` statements of ``engine`` (PostgreSQL) that
    ``after`` matches, the server terminates that connection's backend, and this waits until it is gone: the
    transaction is rolled back and the client's next use of the connection fails. Yields the statements."""
    admin = create_engine(engine.url, isolation_level="AUTOCOMMIT")
    cut: list[str] = []

    def terminate(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if len(cut) >= times or not after(statement):
            return
        cut.append(statement)
        pid = conn.connection.dbapi_connection.info.backend_pid
        with admin.connect() as session:
            session.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            deadline = time.monotonic() + 10
            while session.execute(text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid"),
                                  {"pid": pid}).scalar() and time.monotonic() < deadline:
                time.sleep(0.01)

    event.listen(engine, "after_cursor_execute", terminate)
    try:
        yield cut
    finally:
        event.remove(engine, "after_cursor_execute", terminate)
        admin.dispose()


def end_idle_connections(engine: Engine) -> int:
    """End, on the server, every idle connection to ``engine``'s database (PostgreSQL) but the one asking: what a
    restart leaves in a process's pool. Returns how many were ended, once they are gone."""
    admin = create_engine(engine.url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as session:
            idle = "datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle'"
            ended = session.execute(text(f"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                         f"WHERE {idle}")).scalar() or 0
            deadline = time.monotonic() + 10
            while session.execute(text(f"SELECT count(*) FROM pg_stat_activity WHERE {idle}")).scalar() \
                    and time.monotonic() < deadline:
                time.sleep(0.01)
    finally:
        admin.dispose()
    return int(ended)
