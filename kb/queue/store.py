"""The durable run queue: runs live in the database, workers hold them by lease, every write is fenced.

States: queued -> running -> succeeded | failed | cancelled. A worker claims a run with one
conditional UPDATE (so two workers never take the same run, on SQLite and PostgreSQL alike), which
also counts the attempt and gives the run a lease (``lease_expires_at``). The worker renews the lease
with each heartbeat. Every running worker reclaims runs whose lease expired (``reclaim``), and at once
those whose worker process on this host is gone. Each attempt has a number, and every later write of
a worker (heartbeat, finish) is conditional on ``attempts == its attempt``: a worker whose run was
reclaimed and taken by another can no longer record anything (fencing). A claim is in doubt from its commit
until its session has closed (a database restart can cut the connection anywhere in between): the thread that
made it asks the database first on its next claim, and takes the run if the claim went through
(``claim_next``), or hands it back if it claims no more. The rule that fails a run
after ``MAX_ATTEMPTS`` workers died on it lives in ``release`` only. Every time the queue writes or judges
(claims, leases, heartbeats, reclaims, ends) is the database's own (``db_now``), never a worker's clock.
Evidence is only ever added, never overwritten: a failed run leaves earlier evidence intact.

Queued runs are served in one order (``order_key``): interactive before bulk, short before long, and
waiting raises a run's priority so nothing starves; ``queue_positions`` tells each its place and start.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import case, func, literal, or_, type_coerce, update
from sqlalchemy.engine import Engine
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import Interval
from sqlmodel import Session, col, select
from sqlmodel.sql.sqltypes import UTCDateTime

from kb.hashing import params_hash  # noqa: F401 - re-exported: the worker records it with each run's evidence
from kb.index.database import Evidence, Run
from kb.queue.retry import is_transient, retrying
from schemas import RunRecord, RunStatus

#: How long a claim holds a run without a heartbeat renewing it (``Settings.lease_seconds`` overrides it).
LEASE = dt.timedelta(seconds=60)
#: Runs claimed before leases existed (no ``lease_expires_at``) are abandoned once their heartbeat is this
#: old.
STALE_AFTER = LEASE
#: A run that killed its worker this many times fails instead of being re-queued once more.
MAX_ATTEMPTS = 3
#: The statuses a run ends in: its record in the artifact store is written once it has one of them.
FINAL = frozenset({RunStatus.succeeded, RunStatus.failed, RunStatus.cancelled})
#: A run's message when a worker takes it, and a succeeded run's when it never reported progress.
STARTED, FINISHED_SILENTLY = "started", "finished (it reported no progress)"


def db_now(engine: Engine, plus: dt.timedelta | None = None) -> ColumnElement[dt.datetime]:
    """The database's own time (plus ``plus``), evaluated inside the statement that uses it.

    The one clock of the queue: every lease is granted, renewed, judged and reclaimed against it, never
    against a worker's clock, so two workers whose clocks differ (or a clock stepped by NTP) never take each
    other's live runs. PostgreSQL: ``now()``; SQLite: its own ``'now'`` in the text form SQLAlchemy stores
    (ISO order, so comparisons with stored times hold).
    """
    if engine.dialect.name == "sqlite":
        modifier = f"{plus.total_seconds():+.3f} seconds" if plus is not None else "+0 seconds"
        return type_coerce(func.strftime("%Y-%m-%d %H:%M:%f", "now", modifier), UTCDateTime())
    now: ColumnElement[dt.datetime] = type_coerce(func.now(), UTCDateTime())
    if plus is not None:
        return type_coerce(func.now() + literal(plus, Interval()), UTCDateTime())
    return now


def database_time(engine: Engine) -> dt.datetime:
    """What the database's clock reads now (aware, UTC): what workers and displays judge leases by."""
    with Session(engine) as session:
        moment = session.exec(select(db_now(engine))).one()
    aware = _aware(moment)
    assert aware is not None
    return aware


#: A run a person waits on (``kb verify`` of named claims, the app's re-verify), and bulk work (``kb demo``,
#: ``kb verify --all``): the queue serves the lower number first.
INTERACTIVE, BULK = 0, 2
#: Each such wait in the queue lowers a run's priority number by one, so bulk work never starves.
AGE_STEP = dt.timedelta(minutes=30)
#: A run expected to take at most this long is short: the second lane takes it beside a long run.
SHORT_SECONDS = 300.0
#: How many queued runs one claim considers (by priority, then age): a queue is rarely this long.
CANDIDATES = 500


def order_key(priority: int, expected: float | None, created_at: dt.datetime,
              now: dt.datetime) -> tuple[int, int, float, dt.datetime]:
    """Where a queued run stands: priority lowered by its wait (``AGE_STEP``), then short ahead of long
    (unknown durations after known ones), then first come first served. The one rule of the queue's order."""
    waited = max(0, int((now - created_at) / AGE_STEP))
    return (priority - waited, expected is None, expected or 0.0, created_at)


def enqueue(engine: Engine, analyzer: str, params: dict[str, Any], *, claim_key: str | None = None,
            device: str = "cpu", executor: str = "local", group_id: str | None = None,
            binding: str | None = None, priority: int = INTERACTIVE,
            expected_seconds: float | None = None) -> Run:
    """Queue a run of ``analyzer`` with already-validated ``params``.

    ``group_id`` ties the runs of one claim over several seeds together; ``binding`` is the claim's
    ``binding_hash`` at queueing time, so the evidence can tell when the note's binding changed.
    ``priority`` and ``expected_seconds`` (its estimate) place it in the queue (``order_key``).
    """
    run = Run(analyzer=analyzer, params_json=params_text(params),
              claim_key=claim_key, device=device, executor=executor, status=RunStatus.queued.value,
              group_id=group_id, binding_hash=binding, priority=priority, expected_seconds=expected_seconds)
    run.created_at = db_now(engine)  # type: ignore[assignment]  # the queue's clock orders and ages runs
    try:
        with Session(engine) as session:
            session.add(run)
            session.commit()
            session.refresh(run)
        return run
    except Exception as exc:
        if not is_transient(exc):
            raise
        # The commit may have gone through before the connection was lost (its answer, the read back or the
        # close failed): then the run is queued, and an error would have the person queue it a second time.
        # Its id was made here, so its row tells.
        queued = retrying(engine, "checking a queued run", lambda: _row(engine, run.id), write=False)
        if queued is None:
            raise
        return queued


def _row(engine: Engine, run_id: str) -> Run | None:
    """The runs table's row of one run (detached, every column loaded), or None."""
    with Session(engine) as session:
        return session.get(Run, run_id)


def params_text(params: dict[str, Any]) -> str:
    """A run's parameters as the runs table keeps them (keys sorted): equal parameters, equal text."""
    return json.dumps(params, sort_keys=True, default=str)


def in_flight(engine: Engine, claim_key: str, params: list[dict[str, Any]], *, device: str,
              executor: str) -> list[RunRecord] | None:
    """The queued or running runs of ``claim_key`` that already do what queueing ``params`` (one run each) on
    ``device`` with ``executor`` would do, one per parameter set; None when a set has none. A second request
    for the same work (two people pressing Re-verify, ``kb verify`` beside the app's worker, a demo started
    again) joins it rather than doing it twice."""
    wanted = [params_text(p) for p in params]
    same_executor = col(Run.executor) == executor
    if executor == "local":  # runs queued before runs named their executor are local ones
        same_executor = or_(same_executor, col(Run.executor).is_(None))
    with Session(engine) as session:
        rows = session.exec(select(Run).where(
            Run.claim_key == claim_key, col(Run.params_json).in_(wanted), Run.device == device,
            col(Run.status).in_([RunStatus.queued.value, RunStatus.running.value]),
            same_executor,
        ).order_by(col(Run.created_at))).all()
    first: dict[str, Run] = {}
    for row in rows:
        first.setdefault(row.params_json, row)
    return [to_record(first[text]) for text in wanted] if all(text in first for text in wanted) else None


def hasten(engine: Engine, run_ids: list[str], priority: int) -> None:
    """Give the queued runs among ``run_ids`` ``priority`` where it is more urgent than theirs (a person now
    waits on a run the demo queued in bulk)."""
    with Session(engine) as session:
        session.exec(update(Run).where(  # type: ignore[call-overload]
            col(Run.id).in_(run_ids), col(Run.status) == RunStatus.queued.value, col(Run.priority) > priority,
        ).values(priority=priority))
        session.commit()


def _local_queued(engine: Engine, device: str | None = None) -> Any:
    """The query of queued runs that local workers take (``device``: only those asking for that kind)."""
    columns = (Run.id, Run.attempts, Run.priority, Run.expected_seconds, Run.created_at, db_now(engine))
    local = or_(col(Run.executor).is_(None), col(Run.executor) == "local")
    query = select(*columns).where(Run.status == RunStatus.queued.value, local)  # type: ignore[call-overload]
    if device is not None:
        query = query.where(or_(col(Run.device) == device, col(Run.device).startswith(f"{device}:")))
    return query.order_by(col(Run.priority), col(Run.created_at)).limit(CANDIDATES)


def _in_order(rows: list[Any]) -> list[Any]:
    if not rows:
        return []
    now = _aware(rows[0][5])
    assert now is not None
    return sorted(rows, key=lambda r: order_key(r[2] or 0, r[3], _aware(r[4]) or now, now))


#: The claim each thread made whose answer its connection lost: (run id, attempt). Per thread, because a
#: worker's two lanes claim under one worker id, and each must take back only what it claimed itself.
_in_doubt = threading.local()


def claim_next(engine: Engine, worker_id: str, run_id: str | None = None, *, device: str | None = None,
               lease: dt.timedelta = LEASE, short_only: bool = False) -> Run | None:
    """Atomically take the next queued run (``order_key``), or ``run_id``, for this worker; None when none is
    left.

    The run comes back with its new attempt number in ``attempts`` (the fencing token of every later
    write) and a lease of ``lease``. Without ``run_id`` only runs for the local executor are taken (a
    Slurm job or a Ray task claims its own run by id), and with ``device`` only runs asking for that
    device kind ('cuda' takes 'cuda:1' too). ``short_only``: only interactive runs expected to be short
    (the second lane beside a long run). Two workers that pick the same run race on one conditional
    UPDATE; the loser takes its next candidate.

    A claim whose commit raised (the connection cut by a restart) may have gone through: the database holds
    the run for this worker, whose live process would keep anyone from reclaiming it, and the worker would
    never run it. So the thread's next call (the retry of ``kb.queue.retry``) first reads that run and takes
    it when the claim did go through (``_claimed_in_doubt``); a thread that claims no more hands it back
    (``hand_back_in_doubt``).
    """
    if (doubted := _claimed_in_doubt(engine, worker_id, lambda run: run_id in (None, run.id))) is not None:
        return doubted
    with Session(engine) as session:
        if run_id is not None:
            rows = session.exec(select(Run.id, Run.attempts).where(Run.id == run_id,
                                                                  Run.status == RunStatus.queued.value)).all()
        else:
            query = _local_queued(engine, device)
            if short_only:
                query = query.where(
                    col(Run.priority) <= INTERACTIVE, col(Run.expected_seconds) <= SHORT_SECONDS
                )
            rows = _in_order(list(session.exec(query).all()))
        session.rollback()
        run, attempt = None, 0
        for candidate in rows:
            candidate_id, attempts = candidate[0], candidate[1]
            now = db_now(engine)
            taken = session.exec(  # type: ignore[call-overload]
                update(Run).where(col(Run.id) == candidate_id, col(Run.status) == RunStatus.queued.value,
                                  col(Run.attempts) == attempts)
                .values(status=RunStatus.running.value, worker_id=worker_id, started_at=now, heartbeat_at=now,
                        lease_expires_at=db_now(engine, lease), progress=0.0, message=STARTED,
                        attempts=attempts + 1)
            )
            if taken.rowcount != 1:  # another worker (or this worker's other lane) won it: the next one
                session.rollback()
                continue
            # Only a claim that matched its row is in doubt when its commit raises: one that matched none
            # wrote nothing, and the run may be another lane's of this very worker (same id, same attempt).
            attempt = attempts + 1
            _in_doubt.claim = (candidate_id, attempt)  # until this thread learns the claim's outcome
            session.commit()
            run = session.get(Run, candidate_id)
            break
    # In doubt until the session has closed: closing rolls back the read's transaction, and a connection cut
    # just before raises there, after the claim went through and its run was read.
    _in_doubt.claim = None
    return run if run is not None and run.attempts == attempt else None


def _claimed_in_doubt(engine: Engine, worker_id: str, keep: Callable[[Run], bool]) -> Run | None:
    """The run this thread's last claim took, when that claim's commit raised yet went through and ``keep``
    wants it; None when it did not (or there is none in doubt). One ``keep`` refuses goes back to the
    queue."""
    doubted: tuple[str, int] | None = getattr(_in_doubt, "claim", None)
    if doubted is None:
        return None
    run = _row(engine, doubted[0])
    ours = (RunStatus.running.value, worker_id, doubted[1])
    if run is not None and (run.status, run.worker_id, run.attempts) == ours and not keep(run):
        # A release that raises leaves the claim in doubt: the next call hands it back (a release whose
        # answer was lost finds the run queued, no longer ours, and forgets it).
        release(engine, run.id, doubted[1], "the answer to its claim was lost", voluntary=True)
        run = None
    _in_doubt.claim = None  # its outcome is known now (a read that raises leaves it in doubt)
    return run if run is not None and (run.status, run.worker_id, run.attempts) == ours else None


def hand_back_in_doubt(engine: Engine, worker_id: str) -> None:
    """Give back to the queue the run this thread's last claim took, if that claim's commit raised yet went
    through: what a lane that stops claiming (``kb.queue.execution.ShortLane``) must do before it ends, since
    no later claim of its thread will take the run, and a live worker's run is never reclaimed."""
    _claimed_in_doubt(engine, worker_id, lambda run: False)


def _short(priority: int | None, expected: float | None) -> bool:
    return (priority or 0) <= INTERACTIVE and expected is not None and expected <= SHORT_SECONDS


def is_short(run: Run) -> bool:
    """Whether ``run`` is one the second lane takes: interactive and expected to be short
    (``SHORT_SECONDS``)."""
    return _short(run.priority, run.expected_seconds)


def queue_positions(engine: Engine) -> dict[str, tuple[int, float | None]]:
    """Each queued local run's place in line (1: next) and the seconds until it should start (None: unknown).

    An estimate: the runs ahead of it in line, plus the time left of the run it waits for (the one running
    that should end first; for a short interactive run beside a long one, the short lane's own run only).
    """
    from kb.evidence.estimates import time_left

    with Session(engine) as session:
        rows = _in_order(list(session.exec(_local_queued(engine)).all()))
        running = session.exec(select(Run, db_now(engine)).where(Run.status == RunStatus.running.value)).all()
    lefts: list[tuple[bool, float | None]] = []  # (in the short lane, seconds left) per running run
    for run, now in running:
        started, moment = _aware(run.started_at), _aware(now)
        elapsed = (moment - started).total_seconds() if started and moment else 0.0
        lefts.append((_short(run.priority, run.expected_seconds),
                      time_left(elapsed, run.progress or 0.0, run.expected_seconds)))
    positions: dict[str, tuple[int, float | None]] = {}
    ahead: float | None = 0.0
    for place, row in enumerate(rows, start=1):
        waited_for = [left for in_lane, left in lefts if in_lane] if _short(row[2], row[3]) else \
            [left for _, left in lefts]
        known = [left for left in waited_for if left is not None]
        first_free = 0.0 if not waited_for else (min(known) if known else None)
        positions[row[0]] = (place, None if ahead is None or first_free is None else ahead + first_free)
        ahead = None if ahead is None or row[3] is None else ahead + row[3]
    return positions


#: What every surface says of a running run whose lease expired (its worker died or lost the database).
ORPHANED = "its worker stopped; waiting for a worker to take it over"


def waiting_words(engine: Engine, *, watched: frozenset[str]) -> dict[str, str]:
    """What every surface (``kb runs``, ``kb verify``, the app) says of a run that waits, by run id: a queued
    run's place in line and expected start, and ``ORPHANED`` for a running run whose worker is gone
    (``watched``: the executors that watch their own runs, ``kb.queue.executors.reconciling``)."""
    from analyzers.progress import duration_text

    words = {}
    for run_id, (place, wait) in queue_positions(engine).items():
        start = "next" if place == 1 and wait == 0 else (
            f"starts in about {duration_text(wait)}" if wait is not None else "start time unknown")
        words[run_id] = f"#{place} in line, {start}"
    with Session(engine) as session:
        rows = session.exec(select(Run, db_now(engine)).where(Run.status == RunStatus.running.value)).all()
    for run, now in rows:
        moment = _aware(now)
        if run.executor not in watched and moment is not None and lease_dead(run, now=moment):
            words[run.id] = ORPHANED
    return words


def live_holders(engine: Engine) -> int:
    """How many running runs a live worker holds (its lease unexpired by the database's clock)."""
    with Session(engine) as session:
        rows = session.exec(select(Run, db_now(engine)).where(Run.status == RunStatus.running.value)).all()
    return sum(
        1 for run, now in rows if (moment := _aware(now)) is not None and not lease_dead(run, now=moment)
    )


def holds(engine: Engine, run_id: str, attempt: int, status: RunStatus) -> bool:
    """Whether attempt ``attempt`` still holds the run (running), or already ended it with ``status``: the
    fence a worker reads before it writes the outcome's record."""
    with Session(engine) as session:
        row = session.get(Run, run_id)
        return (
            row is not None
            and row.attempts == attempt
            and row.status in (RunStatus.running.value, status.value)
        )


#: What ``heartbeat`` answers when another worker now holds the run (it was reclaimed and taken again).
LOST = "lost"


def heartbeat(engine: Engine, run_id: str, progress: float | None = None, message: str | None = None, *,
              attempt: int | None = None, lease: dt.timedelta = LEASE) -> str:
    """Record that the run is alive (and its progress) and renew its lease; returns the run's current status.

    With ``attempt`` (the number its claim returned) nothing is written unless that attempt still holds
    the run, and the answer is ``LOST`` when another attempt took it meanwhile: the caller must stop.
    """
    values: dict[str, Any] = {"heartbeat_at": db_now(engine), "lease_expires_at": db_now(engine, lease)}
    if progress is not None:
        values["progress"] = progress
    if message is not None:
        values["message"] = message[:500]
    with Session(engine) as session:
        query = update(Run).where(col(Run.id) == run_id, col(Run.status) == RunStatus.running.value)
        if attempt is not None:
            query = query.where(col(Run.attempts) == attempt)
        session.exec(query.values(**values))  # type: ignore[call-overload]
        session.commit()
        run = session.get(Run, run_id)
        if run is None:
            return RunStatus.cancelled.value
        if attempt is not None and run.attempts != attempt and run.status != RunStatus.cancelled.value:
            return LOST
        return run.status


def timing_fields(timing: tuple[float, dict[str, float], float | None] | None) -> dict[str, Any]:
    """The run columns an attempt's ``timing`` sets (``finish``), as its outcome record keeps them too, so
    that ``kb index --rebuild`` restores them: ``actual_seconds``, ``stages_json`` and, when given, the
    estimate."""
    if timing is None:
        return {}
    fields: dict[str, Any] = {
        "actual_seconds": timing[0],
        "stages_json": json.dumps(timing[1], sort_keys=True),
    }
    if timing[2] is not None:
        fields["expected_seconds"] = timing[2]
    return fields


def finish(engine: Engine, run_id: str, status: RunStatus, *, error: str | None = None,
           evidence: Evidence | None = None, attempt: int | None = None,
           timing: tuple[float, dict[str, float], float | None] | None = None) -> bool:
    """End a run (and add its evidence) in one transaction; a cancelled run stays cancelled.

    With ``attempt`` the run ends only if that attempt still holds it (a worker whose run was reclaimed and
    taken by another never records a second result), and the call is idempotent: when this attempt already
    recorded ``status`` (a retry after a commit whose answer the connection lost) it answers True again
    without writing. Returns whether the outcome is recorded. ``timing``: the seconds the attempt worked, each
    of its stages took, and its estimate when it started (the cache as it found it: a first-use stage it paid
    is in it; None: keep the estimate it was queued with), kept together (``kb.evidence.estimates``).
    """
    values: dict[str, Any] = {"status": status.value, "error": error, "finished_at": db_now(engine),
                              "lease_expires_at": None, **timing_fields(timing)}
    if status is RunStatus.succeeded:
        values["progress"] = 1.0
        # a run that never reported progress would keep saying "started" in the Runs table once done
        values["message"] = case((col(Run.message) == STARTED, FINISHED_SILENTLY), else_=col(Run.message))
    with Session(engine) as session:
        query = update(Run).where(col(Run.id) == run_id)
        if attempt is not None:
            query = query.where(col(Run.attempts) == attempt, col(Run.status) == RunStatus.running.value)
        if status is not RunStatus.cancelled:
            query = query.where(col(Run.status) != RunStatus.cancelled.value)
        written = session.exec(query.values(**values))  # type: ignore[call-overload]
        if written.rowcount != 1:
            session.rollback()
            if attempt is None:
                return False
            run = session.get(Run, run_id)
            return run is not None and run.attempts == attempt and run.status == status.value
        if evidence is not None:
            if evidence.claim_key:
                _mark_superseded(session, evidence.claim_key, run_id, evidence.group_id)
            session.add(evidence)
        session.commit()
        return True


def _mark_superseded(session: Session, claim_key: str, run_id: str, group_id: str | None) -> None:
    """Older evidence of the claim stays as history but is no longer current (seeds of one group stay)."""
    for old in session.exec(
        select(Evidence).where(Evidence.claim_key == claim_key, col(Evidence.stale).is_(False))
    ):
        if group_id is not None and old.group_id == group_id:
            continue
        old.stale = True
        old.stale_reason = f"superseded by run {run_id}"
        session.add(old)


def set_job(engine: Engine, run_id: str, job_id: str | None) -> None:
    """Record the scheduler job that executes a run (None: no job holds it now)."""
    with Session(engine) as session:
        session.exec(update(Run).where(col(Run.id) == run_id).values(job_id=job_id))  # type: ignore[call-overload]
        session.commit()


def release(engine: Engine, run_id: str, attempt: int, why: str, *, if_expired: bool = False,
            voluntary: bool = False) -> RunStatus | None:
    """A run whose attempt ``attempt`` ended without an outcome (worker or job gone): re-queue it, or fail it.

    The one home of the attempt limit: after ``MAX_ATTEMPTS`` attempts the run fails with the reason
    instead of taking another worker down. Conditional on the attempt, so two workers reclaiming the
    same run act once. ``if_expired``: only while its lease has expired by the database's clock, judged in
    this very statement (a holder that renewed meanwhile keeps it). ``voluntary``: its worker handed it
    back (stopped by a signal), which is no death: it is re-queued whatever its attempts. Returns the run's
    new status, or None when that attempt no longer holds it.
    """
    now = db_now(engine)
    if attempt >= MAX_ATTEMPTS and not voluntary:
        values: dict[str, Any] = {
            "status": RunStatus.failed.value,
            "finished_at": now,
            "lease_expires_at": None,
            "error": f"gave up after {attempt} attempts: {why}",
        }
    else:
        values = {
            "status": RunStatus.queued.value,
            "worker_id": None,
            "job_id": None,
            "lease_expires_at": None,
            "message": f"re-queued: {why}"[:500],
        }
    try:
        with Session(engine) as session:
            expired = [or_(col(Run.lease_expires_at).is_(None), col(Run.lease_expires_at) < now)]
            result = session.exec(  # type: ignore[call-overload]
                update(Run).where(col(Run.id) == run_id, col(Run.attempts) == attempt,
                                  col(Run.status).in_([RunStatus.queued.value, RunStatus.running.value]),
                                  *(expired if if_expired else []))
                .values(**values))
            session.commit()
    except Exception as exc:
        # A release whose answer was lost may have gone through: a retry would then find the run no longer
        # running and never learn that it failed here (its outcome kept out of the store). Its row tells.
        if not is_transient(exc) or not _released_so(engine, run_id, attempt, values):
            raise
        return RunStatus(values["status"])
    if not result.rowcount:
        return None
    return RunStatus(values["status"])


def _released_so(engine: Engine, run_id: str, attempt: int, values: dict[str, Any]) -> bool:
    """Whether run ``run_id`` is as a release of ``attempt`` with ``values`` left it."""
    row = retrying(engine, "checking a released run", lambda: _row(engine, run_id), write=False)
    return row is not None and row.attempts == attempt and row.status == values["status"] and \
        row.error == values.get("error", row.error) and row.message == values.get("message", row.message)


def cancel(engine: Engine, run_id: str) -> bool:
    """Cancel a queued or running run; a running analyzer stops at its next progress report."""
    with Session(engine) as session:
        result = session.exec(  # type: ignore[call-overload]
            update(Run).where(col(Run.id) == run_id,
                              col(Run.status).in_([RunStatus.queued.value, RunStatus.running.value]))
            .values(status=RunStatus.cancelled.value, finished_at=db_now(engine), message="cancelled",
                    lease_expires_at=None)
        )
        session.commit()
        return bool(result.rowcount)


def worker_alive_here(worker_id: str | None) -> bool | None:
    """Whether the worker that holds a run, if it ran on this host, is still alive; None if it ran elsewhere.

    Worker ids end in ``<host>:<pid>`` (``execution.worker_id``), also behind a ``ray:`` or ``slurm:...:``
    prefix, so a process on this host can be checked directly instead of waiting for its lease.
    """
    if not worker_id:
        return None
    parts = worker_id.rsplit(":", 2)
    if len(parts) < 2 or not parts[-1].isdigit() or parts[-2] != socket.gethostname():
        return None
    try:
        os.kill(int(parts[-1]), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _aware(moment: dt.datetime | None) -> dt.datetime | None:
    # SQLite hands datetimes back without their zone; they were written in UTC.
    return moment.replace(tzinfo=dt.UTC) if moment is not None and moment.tzinfo is None else moment


def lease_dead(run: Run, *, now: dt.datetime, stale_after: dt.timedelta | None = None) -> bool:
    """Whether ``run`` (running) lost its worker: its process on this host is gone, or its lease expired.

    ``now`` is the database's time (``database_time``, or read in the same query as ``run``), never this
    process's clock. ``stale_after`` judges by the heartbeat's age instead (an operator who knows the
    workers are gone).
    """
    alive_here = worker_alive_here(run.worker_id)
    if alive_here is False:
        return True
    if alive_here is True and stale_after is None:
        return False  # a live process on this host holds it, however late its heartbeat (a lock, a restart)
    beat, expires = _aware(run.heartbeat_at), _aware(run.lease_expires_at)
    if stale_after is not None or expires is None:
        return beat is None or beat < now - (stale_after if stale_after is not None else STALE_AFTER)
    return expires < now


def reclaim(engine: Engine, *, watched: frozenset[str], expired: bool = True,
            stale_after: dt.timedelta | None = None) -> dict[str, RunStatus]:
    """Release the runs whose worker is gone (see ``lease_dead``): re-queued, or failed past the attempt
    limit.

    Cheap enough for every poll of every worker: one indexed read of the running runs. ``expired=False`` only
    releases runs whose worker process on this host is gone (a worker that just lived through an outage must
    not take runs whose holders could not renew their lease either). Runs of an executor that ``reconciles``
    (Slurm), named in ``watched``, are left to it: it asks the scheduler. Returns the new status per released
    run.
    """
    with Session(engine) as session:
        rows = session.exec(select(Run, db_now(engine)).where(Run.status == RunStatus.running.value)).all()
        now = _aware(rows[0][1]) if rows else None
        running = [run for run, _ in rows]
    released: dict[str, RunStatus] = {}
    for run in running:
        if run.executor in watched:
            continue
        if worker_alive_here(run.worker_id) is not False and not expired and stale_after is None:
            continue
        assert now is not None
        if not lease_dead(run, now=now, stale_after=stale_after):
            continue
        why = f"the worker running it stopped (last: {run.worker_id})"
        # An expired lease is judged once more by the release itself: its holder may have renewed meanwhile.
        by_lease = stale_after is None and worker_alive_here(run.worker_id) is None
        status = release(engine, run.id, run.attempts or 0, why, if_expired=by_lease)
        if status is not None:
            released[run.id] = status
    return released


def recover_stale(
    engine: Engine, *, watched: frozenset[str], stale_after: dt.timedelta | None = None
) -> list[str]:
    """Runs left 'running' by a dead worker, re-queued (or failed past the attempt limit); returns their ids.
    ``watched``: the executors that watch their own runs (``kb.queue.executors.reconciling``)."""
    return list(reclaim(engine, watched=watched, stale_after=stale_after))


def list_runs(engine: Engine, *, status: str | None = None, claim_key: str | None = None,
              limit: int = 100, ids: list[str] | None = None) -> list[RunRecord]:
    """Runs, newest first (optionally only those with the given ids)."""
    with Session(engine) as session:
        query = select(Run)
        if ids is not None:
            query = query.where(col(Run.id).in_(ids))
        if status:
            query = query.where(Run.status == status)
        if claim_key:
            query = query.where(Run.claim_key == claim_key)
        rows = session.exec(query.order_by(col(Run.created_at).desc()).limit(limit)).all()
        return [to_record(r) for r in rows]


def get_run(engine: Engine, run_id: str) -> RunRecord | None:
    """One run by id."""
    row = _row(engine, run_id)
    return to_record(row) if row is not None else None


def retry(engine: Engine, run_id: str, *, device: str | None = None, executor: str | None = None) -> Run:
    """Queue a new run with the same analyzer, parameters, claim, device and binding as ``run_id``.

    The new run stands alone (no seed group): its verdict is drawn from its own result. ``device`` and
    ``executor`` say where it runs instead (a run imported from a GPU machine, re-run here on the CPU).
    """
    with Session(engine) as session:
        run = session.get(Run, run_id)
    if run is None:
        raise KeyError(f"no run {run_id!r}; run 'kb runs' to see run ids")
    if run.status in (RunStatus.queued.value, RunStatus.running.value):
        raise ValueError(f"run {run_id} is still {run.status}: cancel it first, or wait for it to end")
    params = json.loads(run.params_json)
    if device is not None and "device" in params:
        params["device"] = device
    return enqueue(
        engine,
        run.analyzer,
        params,
        claim_key=run.claim_key,
        device=device or run.device or "cpu",
        executor=executor or run.executor or "local",
        binding=run.binding_hash,
        expected_seconds=run.expected_seconds,
    )


def to_record(run: Run) -> RunRecord:
    """The public model of a run row."""
    return RunRecord(
        id=run.id,
        claim_key=run.claim_key,
        analyzer=run.analyzer,
        params=json.loads(run.params_json),
        device=run.device or "cpu",
        executor=run.executor or "local",
        job_id=run.job_id,
        attempts=run.attempts or 0,
        priority=run.priority or 0,
        expected_seconds=run.expected_seconds,
        actual_seconds=run.actual_seconds,
        stages=json.loads(run.stages_json) if run.stages_json else {},
        status=RunStatus(run.status),
        progress=run.progress,
        message=run.message,
        error=run.error,
        created_at=run.created_at,
        started_at=run.started_at,
        finished_at=run.finished_at,
    )
