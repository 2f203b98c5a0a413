"""The run queue survives its own failures: a failure after the analyzer, a killed worker, a locked database.

Every failure ends as a failed run with its reason, a run is never executed twice, and the worker goes on.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

from pydantic import Field
from sqlmodel import Session, select

from analyzers.base import Analyzer, AnalyzerParams, AnalyzerResult, RunContext
from analyzers.registry import register
from kb.core import KnowledgeBase
from kb.index.database import Evidence, Run, make_engine
from kb.index.opening import init_db
from kb.queue import execution
from kb.queue import store as queue_store
from kb.settings import Settings
from schemas import EvidenceScale, RunStatus
from tests.helpers.cli import kb_command


class BadProvenanceParams(AnalyzerParams):
    """Nothing to choose."""


class BadProvenanceResult(AnalyzerResult):
    """A value."""

    value: float = Field(description="Always 1.")


@register
class BadProvenance(Analyzer[BadProvenanceParams, BadProvenanceResult]):
    """Returns a result whose provenance cannot be recorded (a seed that is not a number)."""

    name = "test.bad-provenance"
    summary = "Fails after it returns."
    Params = BadProvenanceParams
    Result = BadProvenanceResult
    metrics = {"value": "1"}

    def run(self, params: BadProvenanceParams, ctx: RunContext) -> BadProvenanceResult:
        return BadProvenanceResult(value=1.0, scale=EvidenceScale(name="smoke"), provenance={"seed": "not a number"})


def _kb(tmp_path: Path) -> KnowledgeBase:
    (tmp_path / "papers").mkdir(exist_ok=True)
    kb = KnowledgeBase(Settings(papers=tmp_path / "papers", home=tmp_path / "home"))
    init_db(kb.engine)
    return kb


def _evidence_rows(kb: KnowledgeBase, run_id: str) -> int:
    with Session(kb.engine) as session:
        return len(session.exec(select(Evidence).where(Evidence.run_id == run_id)).all())


def test_a_failure_after_the_analyzer_fails_the_run_and_the_worker_goes_on(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    bad = queue_store.enqueue(kb.engine, "test.bad-provenance", {})
    good = queue_store.enqueue(kb.engine, "noop", {"value": 2.0})
    assert kb.work() == {"failed": 1, "succeeded": 1}
    failed = kb.get_run(bad.id)
    assert failed is not None and failed.status is RunStatus.failed
    assert failed.error is not None and failed.error.startswith("after the analyzer returned: ValidationError")
    assert kb.get_run(good.id).status is RunStatus.succeeded  # type: ignore[union-attr]
    assert not list((kb.settings.home / "staging").iterdir()), "no staging folder is left behind"


def test_a_killed_worker_is_noticed_at_once_and_its_run_runs_once(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    run = queue_store.enqueue(kb.engine, "noop", {"value": 4.0, "steps": 100, "step_seconds": 0.1})
    proc = subprocess.Popen(kb_command(kb.settings.papers, kb.settings.home, "worker"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while (record := kb.get_run(run.id)) is not None and record.progress < 0.05:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    (tmp_path / "home" / "staging").mkdir(exist_ok=True)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert kb.get_run(run.id).status is RunStatus.running  # type: ignore[union-attr]
    assert kb.recover() == [run.id], "a dead worker on this host is seen at once, not after 60 s"
    assert kb.work() == {"succeeded": 1}
    assert _evidence_rows(kb, run.id) == 1
    assert not [p for p in (kb.settings.home / "staging").iterdir()], "the killed run's staging folder is swept"


def test_a_run_that_keeps_killing_its_worker_fails_after_the_attempt_limit(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    run = queue_store.enqueue(kb.engine, "noop", {"value": 1.0})
    for attempt in range(1, queue_store.MAX_ATTEMPTS + 1):
        claimed = queue_store.claim_next(kb.engine, f"elsewhere:{attempt}")
        assert claimed is not None and claimed.attempts == attempt
        queue_store.recover_stale(kb.engine, watched=frozenset(), stale_after=dt.timedelta(seconds=-1))
    record = kb.get_run(run.id)
    assert record is not None and record.status is RunStatus.failed
    assert record.error is not None and f"gave up after {queue_store.MAX_ATTEMPTS} attempts" in record.error


def test_a_re_queued_run_is_never_recorded_by_the_worker_that_lost_it(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    run = queue_store.enqueue(kb.engine, "noop", {"value": 1.0, "steps": 30, "step_seconds": 0.05})
    mine = queue_store.claim_next(kb.engine, "host-a:1")
    assert mine is not None
    outcome: list[RunStatus] = []
    thread = threading.Thread(target=lambda: outcome.append(
        execution.execute(kb.engine, kb.job_config, mine, heartbeat_interval=0.1)))
    thread.start()
    time.sleep(0.4)
    queue_store.release(kb.engine, run.id, mine.attempts or 0, "looked dead")  # another node decided host-a was gone
    theirs = queue_store.claim_next(kb.engine, "host-b:2")
    assert theirs is not None
    thread.join(timeout=30)
    assert outcome == [RunStatus.cancelled], "the first worker stopped when it lost the run"
    assert execution.execute(kb.engine, kb.job_config, theirs) is RunStatus.succeeded
    assert _evidence_rows(kb, run.id) == 1


def test_the_heartbeat_survives_a_locked_database(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    engine = make_engine(kb.settings.resolved_database_url, busy_timeout=0.2)
    run = queue_store.enqueue(engine, "noop", {"value": 1.0, "steps": 20, "step_seconds": 0.15})
    claimed = queue_store.claim_next(engine, execution.worker_id())
    assert claimed is not None
    beat = execution._Heartbeat(engine, run.id, interval=0.1, attempt=claimed.attempts)
    beat.start()
    holder = sqlite3.connect(kb.settings.home / "index.sqlite", timeout=5)
    holder.execute("BEGIN EXCLUSIVE")
    time.sleep(1.5)  # several beats fail with 'database is locked'
    assert beat.is_alive(), "a lock error must not kill the heartbeat thread"
    holder.rollback()
    holder.close()
    def last_beat() -> object:
        with Session(kb.engine) as session:
            row = session.get(Run, run.id)
            return row.heartbeat_at if row else None

    before = last_beat()
    time.sleep(0.5)
    assert last_beat() != before, "beats resume after the lock is gone"
    beat.stopped.set()
    beat.join()
