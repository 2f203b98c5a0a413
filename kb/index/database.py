"""Database tables of the kb index and the engine factory.

The index is a cache of the notes on disk (papers, tags, claims, a full-text index) plus the durable
state kb owns itself (runs and evidence). No engine is created at import time: call
:func:`make_engine` with a URL, then ``kb.index.opening.init_db``.

Note: no ``from __future__ import annotations`` here; SQLModel needs real annotations.
"""

import contextlib
import datetime as dt
import fcntl
import hashlib
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import BigInteger, Engine, Index, event, text
from sqlalchemy.engine import make_url
from sqlmodel import Field, SQLModel, create_engine


def utcnow() -> dt.datetime:
    """Timezone-aware current UTC time."""
    return dt.datetime.now(dt.UTC)


class Paper(SQLModel, table=True):
    """One indexed note (id = the note's file stem)."""

    id: str = Field(primary_key=True)
    path: str
    paper_id: str = Field(unique=True, index=True)
    title: str
    year: int | None = Field(default=None, index=True)
    status: str | None = Field(default=None, index=True)
    decision: str | None = Field(default=None, index=True)
    quality_score: int | None = Field(default=None, index=True)
    journal_tier: int | None = None
    tags_text: str = ""
    body: str = ""
    meta_json: str = "{}"
    content_hash: str
    mtime_ns: int = Field(sa_type=BigInteger)  # nanoseconds overflow a 32-bit INTEGER on PostgreSQL
    size: int
    # The source text and its mtime when the claims were checked against it: a changed source re-checks them.
    source_path: str | None = None
    source_mtime_ns: int | None = Field(default=None, sa_type=BigInteger)
    indexed_at: dt.datetime = Field(default_factory=utcnow)


class Tag(SQLModel, table=True):
    """One tag of one paper."""

    __table_args__ = (Index("ix_tag_tag", "tag"),)

    paper_id: str = Field(foreign_key="paper.id", primary_key=True, ondelete="CASCADE")
    tag: str = Field(primary_key=True)


class ClaimRow(SQLModel, table=True):
    """One claim of one paper; key is '<note id>#<claim id>'."""

    __tablename__ = "claim"

    key: str = Field(primary_key=True)
    paper_id: str = Field(foreign_key="paper.id", index=True, ondelete="CASCADE")
    claim_id: str
    statement: str
    kind: str
    analyzer: str | None = None
    claim_json: str = "{}"
    grounding: str | None = None  # kb.notes.grounding.Grounding of the source quote, checked at index time
    binding_hash: str | None = None  # hash of the analyzer binding: evidence made under another is stale


class Run(SQLModel, table=True):
    """One execution of an analyzer (the durable queue)."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex, primary_key=True)
    claim_key: str | None = Field(default=None, index=True)
    analyzer: str
    params_json: str = "{}"
    group_id: str | None = Field(default=None, index=True)  # runs of one claim over several seeds
    binding_hash: str | None = None
    device: str | None = None
    executor: str | None = None
    job_id: str | None = None  # the scheduler's job id (Slurm) while the run is executed as a job
    attempts: int = 0  # times a worker or job claimed the run; bounded, so a run that kills its worker ends
    priority: int = 0  # 0: a person waits on it; 2: bulk work (kb.queue.store.INTERACTIVE, BULK)
    # its estimate when queued (kb.evidence.estimates): short runs go first
    expected_seconds: float | None = None
    actual_seconds: float | None = None  # seconds its last attempt worked, first-use stages included
    stages_json: str | None = None  # {stage: seconds} of that attempt (kb.evidence.estimates.StagedClock)
    status: str = Field(default="queued", index=True)
    progress: float = 0.0
    message: str | None = None
    error: str | None = None
    worker_id: str | None = None
    heartbeat_at: dt.datetime | None = None
    lease_expires_at: dt.datetime | None = None  # the claim's lease, renewed by heartbeats (kb.queue.store)
    created_at: dt.datetime = Field(default_factory=utcnow)
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None


class Evidence(SQLModel, table=True):
    """What a successful run left: metrics, artifacts, provenance and a verdict."""

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(foreign_key="run.id", index=True, unique=True)
    claim_key: str | None = Field(default=None, index=True)
    analyzer: str
    metrics_json: str = "{}"
    artifacts_json: str = "[]"
    provenance_json: str = "{}"
    verdict_json: str | None = None
    verdict_kind: str | None = None
    group_id: str | None = Field(default=None, index=True)
    binding_hash: str | None = None
    analyzer_version: str | None = None
    kb_version: str | None = None
    stale: bool = False
    stale_reason: str | None = None
    created_at: dt.datetime = Field(default_factory=utcnow)


class Generation(SQLModel, table=True):
    """One row (id 1) whose ``value`` database triggers bump on every write to ``paper``, ``claim`` and
    ``evidence`` (migration 0010g): what cached results are keyed on (``kb.index.generation``)."""

    id: int = Field(primary_key=True)
    value: int = Field(sa_type=BigInteger)


def make_engine(url: str, *, busy_timeout: float = 30.0) -> Engine:
    """Create an engine; for SQLite: parent folder, WAL, foreign keys, a busy timeout (seconds)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True)
    database = parsed.database
    if database and database != ":memory:" and not database.startswith("file:"):
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": busy_timeout})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        assert isinstance(dbapi_connection, sqlite3.Connection)
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
            cursor.execute("PRAGMA synchronous=NORMAL")
        finally:
            cursor.close()

    return engine


@contextlib.contextmanager
def writer_lock(engine: Engine, name: str = "index") -> Iterator[None]:
    """Hold the database's ``name`` lock: one process at a time migrates, or rewrites the note index.

    Readers never wait for it. SQLite: an exclusive ``flock`` on a file beside the database (every process
    on the machine that opens this file agrees on it); PostgreSQL: a session advisory lock (every process on
    any machine that uses this database). Other databases: no lock.
    """
    if engine.dialect.name == "sqlite":
        database = engine.url.database
        if not database or database == ":memory:" or database.startswith("file:"):
            yield
            return
        lock_path = Path(database).expanduser().with_name(f"{Path(database).name}.{name}.lock")
        try:
            handle = lock_path.open("a")
        except OSError:  # a read-only home: no writer can run here anyway
            yield
            return
        with handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
    elif engine.dialect.name == "postgresql":
        key = int.from_bytes(hashlib.sha256(f"kb:{name}".encode()).digest()[:8], "big", signed=True)
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": key})
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
                conn.commit()
    else:
        yield
