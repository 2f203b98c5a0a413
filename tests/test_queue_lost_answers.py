"""The queue's writes across a PostgreSQL restart, one fault at a time, on a real server.

A restart can cut a connection after the server committed a write and before the worker heard so (the answer
is lost), or in the middle of a transaction (the server rolls it back). Each worker write must then be applied
exactly once: idempotent, or checked on its retry. Each test makes one such fault happen at one statement
(``tests.helpers.db_faults``) and counts executions from the analyzer's own side (its ``log_file``).
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import functools
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlmodel import Session, select

from kb.core import KnowledgeBase
from kb.index.database import Evidence, Run
from kb.queue import execution, retry
from kb.queue import store as queue_store
from kb.settings import Settings
from schemas import RunStatus
from tests.helpers.db_faults import (
    CLAIM,
    FINISH,
    HEARTBEAT,
    RELEASE,
    cut_connections,
    end_idle_connections,
    lost_answers,
    right_after,
    run_update,
)

pytestmark = pytest.mark.postgres


def _kb(tmp_path: Path, url: str) -> KnowledgeBase:
    (tmp_path / "papers").mkdir(exist_ok=True)
    return KnowledgeBase(Settings(papers=tmp_path / "papers", home=tmp_path / "home", database_url=url))


def _started(log: Path) -> collections.Counter[float]:
    """How often the analyzer started, per run value, as it logged it itself."""
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return collections.Counter(float(line.split()[1]) for line in lines if line.startswith("start "))


def _row(kb: KnowledgeBase, run_id: str) -> tuple[str, str | None, int]:
    with Session(kb.engine) as session:
        row = session.get(Run, run_id)
        assert row is not None
        return row.status, row.worker_id, row.attempts


def test_a_claim_whose_connection_is_cut_after_its_run_was_read_is_run_once_by_its_worker(
        tmp_path: Path, pg_database: str) -> None:
    # The claim committed and its run was read back; the restart then cut the connection before the session
    # closed, and the close (a rollback of the read) raised. The claim is known to have gone through only once
    # the session closed: the retry must take the run, not leave it 'running' under this live worker.
    kb = _kb(tmp_path, pg_database)
    log = tmp_path / "executions.log"
    ids = [queue_store.enqueue(kb.engine, "noop", {"value": float(i), "log_file": str(log)}).id for i in range(3)]
    with cut_connections(kb.engine, right_after(CLAIM)) as cut:
        assert kb.work() == {"succeeded": 3}
    assert len(cut) == 1 and cut[0].lstrip().upper().startswith("SELECT"), cut
    assert {run.id: run.status for run in kb.runs(limit=10)} == dict.fromkeys(ids, RunStatus.succeeded)
    assert _started(log) == {0.0: 1, 1.0: 1, 2.0: 1}


def test_a_claim_the_other_lane_of_the_same_worker_won_is_not_taken_again_on_the_retry(
        tmp_path: Path, pg_database: str) -> None:
    # A worker's two lanes claim under one worker id. The short lane read the queue, the main lane then took
    # the run, and the short lane's claim matched no row; if its commit raises, that claim wrote nothing: its
    # retry must not find "its" run (same worker, same attempt) and run it a second time beside the main lane.
    kb = _kb(tmp_path, pg_database)
    run = queue_store.enqueue(kb.engine, "noop", {"value": 1.0}, expected_seconds=5.0)
    me, short_lane = "host:1", threading.get_ident()
    main_lane: list[Run | None] = []

    def main_lane_claims_first(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if CLAIM(statement) and threading.get_ident() == short_lane and not main_lane:
            other = threading.Thread(target=lambda: main_lane.append(queue_store.claim_next(kb.engine, me)))
            other.start()
            other.join()

    event.listen(Engine, "before_cursor_execute", main_lane_claims_first)
    try:
        with lost_answers(lambda s: CLAIM(s) and threading.get_ident() == short_lane):
            with contextlib.suppress(OperationalError):
                queue_store.claim_next(kb.engine, me, short_only=True)
            again = queue_store.claim_next(kb.engine, me, short_only=True)
    finally:
        event.remove(Engine, "before_cursor_execute", main_lane_claims_first)
    assert main_lane and main_lane[0] is not None and main_lane[0].id == run.id, "the main lane took the run"
    assert again is None, "the short lane took the main lane's run as its own"
    assert _row(kb, run.id) == (RunStatus.running.value, me, 1)


def test_a_hand_back_of_a_claim_in_doubt_that_the_outage_cut_is_done_on_the_next_claim(
        tmp_path: Path, pg_database: str) -> None:
    # A Slurm job or Ray task claims its run by id; a claim in doubt for another run goes back to the queue.
    # When that hand-back is itself cut (rolled back), the claim is still in doubt: the next try hands it back.
    kb = _kb(tmp_path, pg_database)
    first, second = (queue_store.enqueue(kb.engine, "noop", {"value": v}).id for v in (1.0, 2.0))
    with lost_answers(CLAIM) as lost, pytest.raises(OperationalError):
        queue_store.claim_next(kb.engine, "w:1", first)
    assert lost and _row(kb, first) == (RunStatus.running.value, "w:1", 1), "the lost claim went through"
    with cut_connections(kb.engine, RELEASE) as cut, pytest.raises(DBAPIError) as raised:
        queue_store.claim_next(kb.engine, "w:1", second)
    assert cut and retry.is_transient(raised.value), raised.value
    assert _row(kb, first) == (RunStatus.running.value, "w:1", 1), "the server rolled the hand-back back"
    taken = queue_store.claim_next(kb.engine, "w:1", second)
    assert taken is not None and taken.id == second and taken.attempts == 1
    assert _row(kb, first) == (RunStatus.queued.value, None, 1)


def test_a_short_lane_that_ends_with_a_claim_in_doubt_hands_its_run_back(tmp_path: Path, pg_database: str) -> None:
    # The long run beside the lane ends while the lane's claim has lost its answer: no later claim of the lane
    # takes the run, and nobody reclaims a live worker's run, so the lane must give it back before it ends.
    kb = _kb(tmp_path, pg_database)
    log = tmp_path / "executions.log"
    run = queue_store.enqueue(kb.engine, "noop", {"value": 1.0, "log_file": str(log)}, expected_seconds=5.0)
    config = kb.job_config
    store = config.store()
    lane = execution.ShortLane(
        kb.engine, config, store, execution.worker_id(), device=None, poll=0.05, counts={}, stop=None,
        heartbeat_interval=0.5, reclaimer=execution.Reclaimer(kb.engine, store, config.lease, frozenset()),
    )
    with lost_answers(CLAIM, then=lane.done.set) as lost:  # the long run ends while the answer is lost
        lane.start()
        lane.join(timeout=30)
    assert lost and not lane.is_alive()
    assert _row(kb, run.id) == (RunStatus.queued.value, None, 1), "handed back, not left to a live worker"
    assert kb.work() == {"succeeded": 1}
    assert _started(log) == {1.0: 1}


def test_a_job_whose_claim_lost_its_answer_runs_its_run_once(tmp_path: Path, pg_database: str) -> None:
    # What every executor's job does (execute_by_id): a lost answer is waited out, and the claim that went
    # through is taken, not left 'running' under a Ray worker process that lives on.
    kb = _kb(tmp_path, pg_database)
    log = tmp_path / "executions.log"
    run = queue_store.enqueue(kb.engine, "noop", {"value": 1.0, "log_file": str(log)}, executor="ray")
    with lost_answers(CLAIM) as lost:
        assert execution.execute_by_id(kb.engine, kb.job_config, run.id, "ray") == "succeeded"
    assert lost, "the fault was injected"
    assert _row(kb, run.id)[::2] == (RunStatus.succeeded.value, 1)
    assert _started(log) == {1.0: 1}


def test_a_run_that_fails_before_its_analyzer_starts_is_recorded_through_a_cut_connection(
        tmp_path: Path, pg_database: str) -> None:
    # A failure outside the attempt (here: no staging folder can be made) is recorded by the worker loop; a
    # connection cut there must be retried, or the run stays 'running' under a live worker nobody reclaims.
    kb = _kb(tmp_path, pg_database)
    run = queue_store.enqueue(kb.engine, "noop", {"value": 1.0})
    kb.settings.home.mkdir(parents=True, exist_ok=True)
    (kb.settings.home / "staging").write_text("not a folder", encoding="utf-8")
    with cut_connections(kb.engine, FINISH) as cut:
        assert kb.work() == {"failed": 1}
    assert cut, "the fault was injected"
    record = queue_store.get_run(kb.engine, run.id)
    assert record is not None and record.status is RunStatus.failed, record
    assert record.error is not None and record.error.startswith("FileExistsError"), record.error


@pytest.mark.parametrize("fault", ["lost answer", "cut connection", "dead pooled connection"])
def test_a_heartbeat_a_finish_and_a_release_are_applied_once_across_each_fault(
        tmp_path: Path, pg_database: str, fault: str) -> None:
    # The writes that were right already, kept so: after a lost answer or a cut connection each raises a
    # transient error and its retry (what kb.queue.retry does) answers as if nothing had happened, with one
    # evidence row and one outcome; from a pool whose connections the server ended, each succeeds at once.
    kb = _kb(tmp_path, pg_database)
    run = queue_store.enqueue(kb.engine, "noop", {"value": 1.0})
    claimed = queue_store.claim_next(kb.engine, "w:1")
    assert claimed is not None

    def once_through(statement: Any, write: Any, *, reads_its_row: bool = False) -> Any:
        if fault == "dead pooled connection":
            assert end_idle_connections(kb.engine) >= 1, "the pool held a connection"
            return write()
        if fault == "lost answer" and reads_its_row:  # it learns from its row that it went through
            with lost_answers(statement) as hit:
                answer = write()
            assert hit
            return answer
        faulty = lost_answers(statement) if fault == "lost answer" else cut_connections(kb.engine, statement)
        with faulty as hit, pytest.raises(DBAPIError) as raised:
            write()
        assert hit and retry.is_transient(raised.value), raised.value
        return write()

    beat = once_through(HEARTBEAT, lambda: queue_store.heartbeat(kb.engine, run.id, 0.5, "half", attempt=1))
    assert beat == RunStatus.running.value
    assert once_through(RELEASE, lambda: queue_store.release(kb.engine, run.id, 1, "stopped", voluntary=True),
                        reads_its_row=True) is RunStatus.queued
    again = once_through(CLAIM, lambda: queue_store.claim_next(kb.engine, "w:1"))
    assert again is not None and again.id == run.id and again.attempts == 2
    evidence = Evidence(run_id=run.id, analyzer="noop", metrics_json="{}", artifacts_json="[]",
                        provenance_json="{}")
    assert once_through(FINISH, lambda: queue_store.finish(
        kb.engine, run.id, RunStatus.succeeded, attempt=2,
        evidence=Evidence(**evidence.model_dump(exclude={"id"}))))
    assert _row(kb, run.id) == (RunStatus.succeeded.value, "w:1", 2)
    with Session(kb.engine) as session:
        assert len(session.exec(select(Evidence).where(Evidence.run_id == run.id)).all()) == 1


@pytest.mark.slow  # ~90 s: 15 real restarts under four claiming threads
def test_claims_under_fifteen_real_restarts_lose_and_double_no_run(
        tmp_path: Path, pg_database: str, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Not one fault at one statement but real restarts (fast shutdown: every backend terminated wherever it
    # is) while four threads claim and finish runs as fast as they can. A claim the restart left behind shows
    # as a run 'running' that no thread was handed. Before a claim stayed in doubt until its session closed,
    # each of five such runs lost 1 to 4 (in one, 4 claims raised at that close and 4 runs were left).
    from tests.servers import restart_postgres

    monkeypatch.setattr(retry, "FIRST_DELAY", 0.05)  # back at once: as many claims in flight as can be
    kb = _kb(tmp_path, pg_database)
    for i in range(1000):
        queue_store.enqueue(kb.engine, "noop", {"value": float(i)})
    handed: collections.Counter[str] = collections.Counter()
    stop = threading.Event()

    def lane(n: int) -> None:
        me = f"lane:{n}"
        while not stop.is_set():
            run = retry.retrying(kb.engine, "claiming", lambda: queue_store.claim_next(kb.engine, me),
                                 write=False, max_delay=0.5)
            if run is None:
                return
            handed[run.id] += 1
            retry.retrying(kb.engine, "finishing", functools.partial(
                queue_store.finish, kb.engine, run.id, RunStatus.succeeded, attempt=run.attempts), max_delay=0.5)

    lanes = [threading.Thread(target=lane, args=(n,)) for n in range(4)]
    for thread in lanes:
        thread.start()
    try:
        for _ in range(15):
            time.sleep(1.5)
            restart_postgres(pg_url, down_seconds=0.5)
    finally:
        stop.set()
        for thread in lanes:
            thread.join(timeout=60)
    running = [r.id for r in queue_store.list_runs(kb.engine, status=RunStatus.running.value, limit=2000)]
    assert sum(handed.values()) > 100, "claims were in flight at the restarts"
    assert running == [], f"{len(running)} run(s) claimed but never handed to a thread"
    assert [run_id for run_id, times in handed.items() if times > 1] == []


def _inserts_a_run(statement: str) -> bool:
    return statement.lstrip().upper().startswith("INSERT INTO RUN ")


def test_a_queued_run_whose_commit_answer_was_lost_is_reported_queued_once(tmp_path: Path,
                                                                          pg_database: str) -> None:
    kb = _kb(tmp_path, pg_database)
    with lost_answers(_inserts_a_run) as lost:
        run = queue_store.enqueue(kb.engine, "noop", {"value": 1.0}, claim_key="n#c")
    assert lost  # the server has the run; the client never heard so
    with Session(kb.engine) as session:
        rows = session.exec(select(Run)).all()
    assert [(row.id, row.status) for row in rows] == [(run.id, RunStatus.queued.value)]


def test_a_run_whose_insert_the_outage_rolled_back_is_reported_not_queued(tmp_path: Path, pg_database: str) -> None:
    kb = _kb(tmp_path, pg_database)
    kb.engine.dispose()
    with cut_connections(kb.engine, _inserts_a_run) as cut, pytest.raises(DBAPIError):
        queue_store.enqueue(kb.engine, "noop", {"value": 1.0}, claim_key="n#c")
    assert cut
    with Session(kb.engine) as session:
        assert session.exec(select(Run)).all() == []


def test_a_run_failed_at_the_attempt_limit_by_a_release_whose_answer_was_lost_is_reported_failed(
        tmp_path: Path, pg_database: str) -> None:
    # The release commits the failure and its answer is lost: reclaiming must still report the run failed (its
    # caller then keeps the outcome in the store), not find it no longer running on its retry and say nothing.
    kb = _kb(tmp_path, pg_database)
    run = queue_store.enqueue(kb.engine, "noop", {"value": 1.0})
    assert queue_store.claim_next(kb.engine, "w:elsewhere:1") is not None
    with Session(kb.engine) as session:
        row = session.get(Run, run.id)
        assert row is not None
        row.attempts = queue_store.MAX_ATTEMPTS  # its last attempt
        session.add(row)
        session.commit()
    with lost_answers(run_update("error")) as lost:
        released = retry.retrying(kb.engine, "reclaiming", lambda: queue_store.reclaim(
            kb.engine, watched=frozenset(), stale_after=dt.timedelta(0)), write=False)
    assert lost and released == {run.id: RunStatus.failed}
    assert _row(kb, run.id) == (RunStatus.failed.value, "w:elsewhere:1", queue_store.MAX_ATTEMPTS)
