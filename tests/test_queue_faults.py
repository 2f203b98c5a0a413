"""The run queue under ordinary faults, with real servers and real ``kb worker --forever`` processes.

Each test counts executions from the analyzer's own side (the noop analyzer's ``log_file``: a 'start'
and an 'end' line per execution), not only from kb's tables: a PostgreSQL restart under two workers, an
exclusive SQLite lock mid-run, kill -9 of a worker beside a live peer, a lease that expires on another
host, a worker that lost its lease, the artifact store unreachable when a run starts, and a rebuild of a
lost index from the store (SQLite and an empty PostgreSQL database with an S3 store), and a claim whose
commit went through while the answer was lost.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError
from sqlmodel import Session, col, select

from kb.core import KnowledgeBase
from kb.index.database import Evidence, Run
from kb.queue import execution
from kb.queue import store as queue_store
from kb.settings import Settings
from schemas import RunStatus
from tests.helpers.cli import run_kb
from tests.helpers.db_faults import CLAIM, lost_answers
from tests.servers import free_port, restart_postgres

ROOT = Path(__file__).resolve().parents[1]


def _kb(tmp_path: Path, **settings: object) -> KnowledgeBase:
    (tmp_path / "papers").mkdir(exist_ok=True)
    return KnowledgeBase(Settings(papers=tmp_path / "papers", home=tmp_path / "home", **settings))  # type: ignore[arg-type]


def _executions(log: Path) -> dict[str, collections.Counter[float]]:
    """How often the analyzer started and ended per run value, as it logged it itself."""
    counts: dict[str, collections.Counter[float]] = {"start": collections.Counter(), "end": collections.Counter()}
    if log.exists():
        for line in log.read_text(encoding="utf-8").splitlines():
            event, value = line.split()
            counts[event][float(value)] += 1
    return counts


def _wait(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except OperationalError:  # the test's own reads during an outage
            pass
        time.sleep(0.1)
    raise AssertionError(f"not within {seconds:.0f} s: {what}")


def _statuses(kb: KnowledgeBase) -> collections.Counter[str]:
    return collections.Counter(r.status.value for r in kb.runs(limit=1000))


def _worker_log(tmp_path: Path, n: int) -> str:
    return (tmp_path / f"worker-{n}.log").read_text(errors="replace")


def _held_by(kb: KnowledgeBase, run_id: str) -> tuple[str | None, int]:
    with Session(kb.engine) as session:
        row = session.get(Run, run_id)
        assert row is not None
        return row.worker_id, row.attempts


def test_a_claim_whose_answer_the_connection_lost_is_run_once_by_the_worker_that_made_it(
        tmp_path: Path) -> None:
    # A restart can cut the connection after the database committed a claim and before the worker heard so
    # (seen in a parallel suite: one run stayed 'running', held by a live worker that never ran it). The
    # worker's retry must find the run it holds and run it, once, not leave it behind for another.
    kb = _kb(tmp_path)
    log = tmp_path / "executions.log"
    ids = [queue_store.enqueue(kb.engine, "noop", {"value": float(i), "log_file": str(log)}).id for i in range(3)]
    with lost_answers(CLAIM) as lost:  # the first claim only, once it is committed
        assert kb.work(once=True) == {"succeeded": 3}
    assert len(lost) == 1, "the fault was injected after a committed claim"
    assert {run.id: run.status for run in kb.runs(limit=10)} == dict.fromkeys(ids, RunStatus.succeeded)
    executions = _executions(log)
    assert executions["start"] == executions["end"] == {float(i): 1 for i in range(3)}, executions


def test_a_claim_in_doubt_for_another_run_than_the_one_asked_for_is_handed_back(tmp_path: Path) -> None:
    # a Slurm job or Ray task claims its own run by id: a claim in doubt for another run goes back to the queue
    kb = _kb(tmp_path)
    first, second = (queue_store.enqueue(kb.engine, "noop", {"value": v}).id for v in (1.0, 2.0))
    with lost_answers(CLAIM), pytest.raises(OperationalError):
        queue_store.claim_next(kb.engine, "w:1", first)
    assert _held_by(kb, first) == ("w:1", 1)  # the claim went through
    taken = queue_store.claim_next(kb.engine, "w:1", second)
    assert taken is not None and taken.id == second
    back = queue_store.get_run(kb.engine, first)
    assert back is not None and back.status is RunStatus.queued and _held_by(kb, first)[0] is None


@pytest.mark.postgres
def test_a_postgres_restart_under_two_live_workers_loses_and_doubles_no_run(
        tmp_path: Path, pg_database: str, pg_url: str, kb_workers: Callable[..., subprocess.Popen[bytes]]) -> None:
    kb = _kb(tmp_path, database_url=pg_database)
    log = tmp_path / "executions.log"
    ids = [queue_store.enqueue(kb.engine, "noop", {"value": float(i), "steps": 8, "step_seconds": 0.1,
                                                   "log_file": str(log)}).id for i in range(8)]
    pair = [kb_workers(KB_DATABASE_URL=pg_database) for _ in range(2)]
    _wait(lambda: _statuses(kb)["succeeded"] >= 2 and _statuses(kb)["running"] >= 1, 90, "two runs done, one running")
    restart_postgres(pg_url, down_seconds=2.0)  # every connection is cut; new ones are refused for 2 s
    try:
        _wait(lambda: _statuses(kb)["succeeded"] == len(ids), 120, "every run succeeded after the restart")
        assert [w.poll() for w in pair] == [None, None], "both workers outlived the restart"
        executions = _executions(log)
        assert executions["start"] == executions["end"] == {float(i): 1 for i in range(8)}, executions
        with Session(kb.engine) as session:
            assert len(session.exec(select(Evidence)).all()) == len(ids)
        # A worker may still wait between tries (0.5 s doubling to 30 s) while its peer, back first, ran every
        # run left: its outage ends at its next try. Its lines are judged once it has (a worker that never
        # comes back fails here).
        _wait(lambda: all((text := _worker_log(tmp_path, n)).count("unavailable") <= text.count("answers again")
                          for n in range(2)), 60, "each worker saw the database answer again")
        logs = [_worker_log(tmp_path, n) for n in range(2)]
        assert any("unavailable" in text for text in logs), logs
        for text in logs:  # one line when the outage starts, one when it ends, not one per try
            assert text.count("unavailable") == text.count("answers again") <= 2, text
            assert "Traceback" not in text, text
    except AssertionError as exc:  # seen in a parallel suite, never alone: keep what the workers and tables said
        raise AssertionError(f"{exc}\n{_queue_state(kb, log, [w.poll() for w in pair])}\n"
                             + "\n".join(f"worker-{n}:\n{_worker_log(tmp_path, n)}" for n in range(2))) from None


def _queue_state(kb: KnowledgeBase, log: Path, exits: list[int | None]) -> str:
    """The runs table (a row per run: status, holder, attempt, lease, message), the evidence per run, the
    analyzer's own count of executions and the workers' exits: what a failed fault test must leave behind."""
    with Session(kb.engine) as session:
        runs = session.exec(select(Run).order_by(col(Run.created_at))).all()
        evidence = collections.Counter(session.exec(select(Evidence.run_id)).all())
    rows = [f"  {r.id[:12]} value={json.loads(r.params_json).get('value')} {r.status:9} attempts={r.attempts} "
            f"worker={r.worker_id} "
            f"beat={r.heartbeat_at} lease={r.lease_expires_at} evidence={evidence[r.id]} "
            f"message={r.message!r} error={(r.error or '').splitlines()[:1]}" for r in runs]
    return "\n".join(["runs:", *rows, f"executions: {_executions(log)}", f"worker exits: {exits}"])


@pytest.mark.parametrize(("lock_seconds", "busy_timeout"),
                         [(8.0, 1.0), pytest.param(35.0, 30.0, marks=pytest.mark.slow)])  # the 35 s: slow
def test_an_exclusive_sqlite_lock_mid_run_is_waited_out(
        tmp_path: Path, kb_workers: Callable[..., subprocess.Popen[bytes]], lock_seconds: float,
        busy_timeout: float) -> None:
    kb = _kb(tmp_path)
    log = tmp_path / "executions.log"
    # 6 s: long enough that the lock, taken once the heartbeat has shown 10 % (which may lag the analyzer by a
    # beat), always lands before the analyzer ends; short enough that it ends while the lock is still held.
    run = queue_store.enqueue(kb.engine, "noop", {"value": 1.0, "steps": 60, "step_seconds": 0.1,
                                                  "log_file": str(log)})
    env = {"KB_DB_BUSY_TIMEOUT": str(busy_timeout)}
    first = kb_workers(**env)
    _wait(lambda: (r := kb.get_run(run.id)) is not None and r.progress >= 0.1, 60, "the run is under way")
    holder = sqlite3.connect(kb.settings.home / "index.sqlite", timeout=5)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        time.sleep(1.0)
        second = kb_workers(**env)  # a worker starting during the lock waits instead of exiting
        time.sleep(lock_seconds - 1.0)  # the analyzer (6 s) finishes while the lock is held
        assert _executions(log)["end"] == {1.0: 1}
        assert second.poll() is None and first.poll() is None
    finally:
        holder.rollback()
        holder.close()
    later = queue_store.enqueue(kb.engine, "noop", {"value": 2.0, "log_file": str(log)})
    _wait(lambda: _statuses(kb)["succeeded"] == 2, 90, "both runs succeeded after the lock")
    record = kb.get_run(run.id)
    assert record is not None and record.status is RunStatus.succeeded and record.error is None
    assert [first.poll(), second.poll()] == [None, None]
    assert _executions(log)["end"] == {1.0: 1, 2.0: 1}
    assert kb.get_run(later.id).status is RunStatus.succeeded  # type: ignore[union-attr]
    text = _worker_log(tmp_path, 0)
    assert text.count("unavailable") == 1 and text.count("answers again") == 1, text


def test_a_peer_reclaims_the_run_of_a_worker_killed_beside_it_within_one_lease(
        tmp_path: Path, kb_workers: Callable[..., subprocess.Popen[bytes]]) -> None:
    kb = _kb(tmp_path)
    log = tmp_path / "executions.log"
    ids = [queue_store.enqueue(kb.engine, "noop", {"value": float(i), "steps": 25, "step_seconds": 0.1,
                                                   "log_file": str(log)}).id for i in range(3)]
    lease = 6.0
    pair = [kb_workers(KB_LEASE_SECONDS=str(lease)) for _ in range(2)]
    _wait(lambda: _statuses(kb)["running"] == 2, 60, "both workers hold a run")
    victim = pair[0]
    (held,) = [i for i in ids if (_held_by(kb, i)[0] or "").endswith(f":{victim.pid}")
               and kb.get_run(i).status is RunStatus.running]  # type: ignore[union-attr]
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    killed_at = time.monotonic()
    _wait(lambda: kb.get_run(held).status is not RunStatus.running or _held_by(kb, held)[1] > 1,  # type: ignore[union-attr]
          lease, "the peer reclaimed the dead worker's run within one lease")
    assert time.monotonic() - killed_at <= lease
    _wait(lambda: _statuses(kb)["succeeded"] == len(ids), 60, "every run succeeded")
    assert pair[1].poll() is None
    assert _executions(log)["end"] == {float(i): 1 for i in range(3)}
    assert _held_by(kb, held)[1] == 2


def test_a_live_worker_reclaims_a_run_whose_lease_expired_on_another_host(
        tmp_path: Path, kb_workers: Callable[..., subprocess.Popen[bytes]]) -> None:
    import datetime as dt

    kb = _kb(tmp_path)
    log = tmp_path / "executions.log"
    peer = kb_workers(KB_LEASE_SECONDS="3")
    time.sleep(2.0)  # the worker is up and idle: only its poll loop can notice the expiry
    run = queue_store.enqueue(kb.engine, "noop", {"value": 7.0, "log_file": str(log)}, executor="local")
    gone = queue_store.claim_next(kb.engine, "another-host:4242", run_id=run.id, lease=dt.timedelta(seconds=2))
    assert gone is not None and gone.attempts == 1
    _wait(lambda: kb.get_run(run.id).status is RunStatus.succeeded, 30, "the expired run ran")  # type: ignore[union-attr]
    assert peer.poll() is None and _held_by(kb, run.id)[1] == 2
    assert _executions(log)["end"] == {7.0: 1}


def test_a_worker_that_lost_its_lease_records_nothing(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    log = tmp_path / "executions.log"
    run = queue_store.enqueue(kb.engine, "noop", {"value": 1.0, "steps": 30, "step_seconds": 0.05,
                                                  "log_file": str(log)})
    mine = queue_store.claim_next(kb.engine, "host-a:1")
    assert mine is not None and mine.attempts == 1
    outcome: list[RunStatus] = []
    thread = threading.Thread(target=lambda: outcome.append(
        execution.execute(kb.engine, kb.job_config, mine, heartbeat_interval=0.1)))
    thread.start()
    time.sleep(0.4)
    assert queue_store.release(kb.engine, run.id, 1, "looked dead") is RunStatus.queued
    theirs = queue_store.claim_next(kb.engine, "host-b:2")
    assert theirs is not None and theirs.attempts == 2
    # Every write of attempt 1 is refused from now on, whatever its worker does.
    assert queue_store.heartbeat(kb.engine, run.id, 0.5, attempt=1) == queue_store.LOST
    assert not queue_store.finish(kb.engine, run.id, RunStatus.failed, error="late", attempt=1)
    assert queue_store.release(kb.engine, run.id, 1, "twice") is None
    thread.join(timeout=30)
    assert outcome == [RunStatus.cancelled]
    assert execution.execute(kb.engine, kb.job_config, theirs) is RunStatus.succeeded
    assert queue_store.finish(kb.engine, run.id, RunStatus.succeeded, attempt=2), "finishing again is idempotent"
    with Session(kb.engine) as session:
        assert len(session.exec(select(Evidence).where(Evidence.run_id == run.id)).all()) == 1
    assert sorted(p.name for p in (kb.settings.home / "runs" / run.id).iterdir()) == ["attempt-2.json"]


def test_an_unreachable_store_fails_the_run_cleanly_at_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("s3fs")
    import s3fs

    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    # kb tries the store 7 times with a doubling wait (31.5 s per operation): the same tries, a shorter wait,
    # since what is checked is how the run ends, not how long an outage is ridden out (test_store_outages)
    from kb.evidence import artifact_store

    monkeypatch.setattr(artifact_store, "STORE_FIRST_DELAY", 0.01)
    s3fs.S3FileSystem.clear_instance_cache()
    kb = _kb(tmp_path, artifact_store="s3://kb-unreachable/team")
    log = tmp_path / "executions.log"
    runs = [queue_store.enqueue(kb.engine, "noop", {"value": float(i), "log_file": str(log)}) for i in range(2)]
    assert kb.work() == {"failed": 2}
    for run in runs:
        record = kb.get_run(run.id)
        assert record is not None and record.error is not None
        assert record.error.startswith("could not restore the run's checkpoints from the artifact store"), record.error
    assert _executions(log)["start"] == {}, "the analyzer never started"
    assert not list((kb.settings.home / "staging").iterdir()), "no staging folder is left behind"
    assert not [t for t in threading.enumerate() if t.name.startswith("heartbeat-")], "no heartbeat thread is left"


def _runs_by_value(papers: Path, home: Path) -> dict[float, tuple[str, str | None]]:
    listed = run_kb(papers, home, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    return {r["params"]["value"]: (r["status"], (r["error"] or "").splitlines()[0] if r["error"] else None)
            for r in json.loads(listed.stdout)}


def test_a_rebuild_restores_succeeded_and_failed_runs_and_runs_nothing_again(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    log = tmp_path / "executions.log"
    for value, fail in ((1.0, False), (2.0, False), (3.0, True)):
        queue_store.enqueue(kb.engine, "noop", {"value": value, "fail": fail, "log_file": str(log)})
    assert kb.work() == {"succeeded": 2, "failed": 1}
    papers, home = kb.settings.papers, kb.settings.home
    before = _runs_by_value(papers, home)
    kb.engine.dispose()
    for suffix in ("", "-wal", "-shm"):
        (home / f"index.sqlite{suffix}").unlink(missing_ok=True)

    rebuilt = run_kb(papers, home, "index", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    after = _runs_by_value(papers, home)
    assert after == before and after[3.0] == ("failed", "RuntimeError: asked to fail"), after
    worked = run_kb(papers, home, "worker")
    assert worked.returncode == 0 and "queue empty" in worked.stdout, worked.stdout
    assert _executions(log)["start"] == {1.0: 1, 2.0: 1, 3.0: 1}, "nothing ran again"


@pytest.mark.postgres
@pytest.mark.slow  # 25 s: two CLI rebuilds against PostgreSQL and S3
def test_a_rebuild_fills_an_empty_postgres_database_from_an_s3_store(
        tmp_path: Path, pg_database: str, s3_url: str) -> None:
    from sqlalchemy import create_engine, text

    kb = _kb(tmp_path, database_url=pg_database, artifact_store=s3_url)
    log = tmp_path / "executions.log"
    for value, fail in ((1.0, False), (3.0, True)):
        queue_store.enqueue(kb.engine, "noop", {"value": value, "fail": fail, "log_file": str(log)})
    assert kb.work() == {"succeeded": 1, "failed": 1}
    kb.engine.dispose()
    env = {"KB_DATABASE_URL": pg_database, "KB_ARTIFACT_STORE": s3_url}
    os.environ.update(env)
    try:
        papers, home = kb.settings.papers, kb.settings.home
        before = _runs_by_value(papers, home)
        refused = run_kb(papers, home, "index", "--rebuild")
        assert refused.returncode != 0 and "2 run(s)" in refused.stderr and "Traceback" not in refused.stderr
        admin = create_engine(pg_database)
        with admin.begin() as conn:  # the operator drops and creates the database
            conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        admin.dispose()
        rebuilt = run_kb(papers, home, "index", "--rebuild")
        assert rebuilt.returncode == 0, rebuilt.stderr
        assert _runs_by_value(papers, home) == before
        assert "queue empty" in run_kb(papers, home, "worker").stdout
    finally:
        for key in env:
            os.environ.pop(key, None)
    assert _executions(log)["start"] == {1.0: 1, 3.0: 1}
