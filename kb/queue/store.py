"""The durable run queue: runs live in the database, workers claim them atomically.

States: queued -> running -> succeeded | failed | cancelled. A worker claims a run with one
conditional UPDATE (so two workers never take the same run, on SQLite and PostgreSQL alike),
heartbeats while it works, and a run whose worker stopped heartbeating (killed, machine lost) is
re-queued or failed by ``recover_stale`` on the next worker start. Evidence is only ever added, never
overwritten: a failed run leaves earlier evidence intact.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
from typing import Any

from sqlalchemy import or_, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from kb.db import ClaimRow, Evidence, Run, utcnow
from kb.hashing import params_hash  # noqa: F401 - re-exported: the worker records it with each run's evidence
from schemas import Claim, RunRecord, RunStatus

#: A running run whose heartbeat is older than this is considered abandoned.
STALE_AFTER = dt.timedelta(seconds=60)


def enqueue(engine: Engine, analyzer: str, params: dict[str, Any], *, claim_key: str | None = None,
            device: str = "cpu", executor: str = "local", group_id: str | None = None,
            binding: str | None = None) -> Run:
    """Queue a run of ``analyzer`` with already-validated ``params``.

    ``group_id`` ties the runs of one claim over several seeds together; ``binding`` is the claim's
    ``binding_hash`` at queueing time, so the evidence can tell when the note's binding changed.
    """
    run = Run(analyzer=analyzer, params_json=json.dumps(params, sort_keys=True, default=str),
              claim_key=claim_key, device=device, executor=executor, status=RunStatus.queued.value,
              group_id=group_id, binding_hash=binding)
    with Session(engine) as session:
        session.add(run)
        session.commit()
        session.refresh(run)
    return run


def claim_next(engine: Engine, worker_id: str, run_id: str | None = None, *, device: str | None = None) -> Run | None:
    """Atomically take the oldest queued run (or ``run_id``) for this worker; None when none is left.

    Without ``run_id`` only runs for the local executor are taken (a Slurm job or a Ray task claims its
    own run by id), and with ``device`` only runs asking for that device kind ('cuda' takes 'cuda:1' too).
    """
    with Session(engine) as session:
        while True:
            query = select(Run.id).where(Run.status == RunStatus.queued.value)
            if run_id is not None:
                query = query.where(Run.id == run_id)
            else:
                query = query.where(or_(col(Run.executor).is_(None), col(Run.executor) == "local"))
                if device is not None:
                    query = query.where(or_(col(Run.device) == device, col(Run.device).startswith(f"{device}:")))
            candidate = session.exec(query.order_by(col(Run.created_at)).limit(1)).first()
            if candidate is None:
                return None
            now = utcnow()
            taken = session.exec(  # type: ignore[call-overload]
                update(Run).where(col(Run.id) == candidate, col(Run.status) == RunStatus.queued.value)
                .values(status=RunStatus.running.value, worker_id=worker_id, started_at=now, heartbeat_at=now,
                        progress=0.0, message="started", attempts=col(Run.attempts) + 1)
            )
            session.commit()
            if taken.rowcount == 1:
                return session.get(Run, candidate)
            # Another worker won the race for this run: try the next one.


#: What ``heartbeat`` answers when another worker now holds the run (it was re-queued and taken again).
LOST = "lost"


def heartbeat(engine: Engine, run_id: str, progress: float | None = None, message: str | None = None, *,
              owner: str | None = None) -> str:
    """Record that the run is alive (and its progress); returns the run's current status.

    With ``owner`` (the worker id that claimed the run) nothing is written unless that worker still holds
    the run, and the answer is ``LOST`` when another worker took it meanwhile: the caller must stop.
    """
    values: dict[str, Any] = {"heartbeat_at": utcnow()}
    if progress is not None:
        values["progress"] = progress
    if message is not None:
        values["message"] = message[:500]
    with Session(engine) as session:
        query = update(Run).where(col(Run.id) == run_id, col(Run.status) == RunStatus.running.value)
        if owner is not None:
            query = query.where(col(Run.worker_id) == owner)
        session.exec(query.values(**values))  # type: ignore[call-overload]
        session.commit()
        run = session.get(Run, run_id)
        if run is None:
            return RunStatus.cancelled.value
        if owner is not None and run.worker_id != owner and run.status != RunStatus.cancelled.value:
            return LOST
        return run.status


def finish(engine: Engine, run_id: str, status: RunStatus, *, error: str | None = None,
           evidence: Evidence | None = None, owner: str | None = None) -> bool:
    """End a run (and add its evidence) in one transaction; a cancelled run stays cancelled.

    With ``owner`` the run ends only if that worker still holds it (a worker whose run was re-queued and
    taken by another never records a second result). Returns whether anything was written.
    """
    with Session(engine) as session:
        query = select(Run).where(Run.id == run_id)
        if engine.dialect.name != "sqlite":
            query = query.with_for_update()  # the owner check and the write are one step on a server database
        run = session.exec(query).first()
        if run is None:
            return False
        if owner is not None and (run.worker_id != owner or run.status != RunStatus.running.value):
            return False
        if run.status == RunStatus.cancelled.value and status is not RunStatus.cancelled:
            return False
        run.status = status.value
        run.error = error
        run.finished_at = utcnow()
        if status is RunStatus.succeeded:
            run.progress = 1.0
        if evidence is not None:
            if evidence.claim_key:
                _mark_superseded(session, evidence.claim_key, run_id, evidence.group_id)
            session.add(evidence)
        session.add(run)
        session.commit()
        return True


def _mark_superseded(session: Session, claim_key: str, run_id: str, group_id: str | None) -> None:
    """Older evidence of the claim stays as history but is no longer current (seeds of one group stay)."""
    for old in session.exec(select(Evidence).where(Evidence.claim_key == claim_key, col(Evidence.stale).is_(False))):
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


def requeue(engine: Engine, run_id: str, message: str) -> bool:
    """Put a run whose executor vanished (a job killed by the scheduler) back in the queue, saying why."""
    with Session(engine) as session:
        result = session.exec(  # type: ignore[call-overload]
            update(Run).where(col(Run.id) == run_id,
                              col(Run.status).in_([RunStatus.queued.value, RunStatus.running.value]))
            .values(status=RunStatus.queued.value, worker_id=None, job_id=None, message=message[:500])
        )
        session.commit()
        return bool(result.rowcount)


def cancel(engine: Engine, run_id: str) -> bool:
    """Cancel a queued or running run; a running analyzer stops at its next progress report."""
    with Session(engine) as session:
        result = session.exec(  # type: ignore[call-overload]
            update(Run).where(col(Run.id) == run_id,
                              col(Run.status).in_([RunStatus.queued.value, RunStatus.running.value]))
            .values(status=RunStatus.cancelled.value, finished_at=utcnow(), message="cancelled")
        )
        session.commit()
        return bool(result.rowcount)


#: A run that killed its worker this many times fails instead of being re-queued once more.
MAX_ATTEMPTS = 3


def _dead_here(worker_id: str | None) -> bool:
    """Whether the worker that holds a run ran on this host and its process is gone (seen at once, no wait)."""
    if not worker_id:
        return False
    parts = worker_id.rsplit(":", 2)
    if len(parts) < 2 or not parts[-1].isdigit() or parts[-2] != socket.gethostname():
        return False
    try:
        os.kill(int(parts[-1]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def recover_stale(engine: Engine, *, requeue: bool = True, stale_after: dt.timedelta = STALE_AFTER) -> list[str]:
    """Runs left 'running' by a dead worker: re-queue them (or fail them). Returns their ids.

    A worker on this host whose process is gone is noticed at once; one elsewhere when its heartbeat is
    older than ``stale_after``. A run that has already taken ``MAX_ATTEMPTS`` workers down fails with the
    reason instead of poisoning the next worker. Slurm runs are left to ``kb.queue.slurm.reconcile``.
    """
    cutoff = utcnow() - stale_after
    with Session(engine) as session:
        stale = session.exec(select(Run).where(Run.status == RunStatus.running.value)).all()
        ids = []
        for run in stale:
            if run.executor == "slurm":
                continue
            beat = run.heartbeat_at
            if beat is not None and beat.tzinfo is None:
                beat = beat.replace(tzinfo=dt.UTC)
            if beat is not None and beat >= cutoff and not _dead_here(run.worker_id):
                continue
            ids.append(run.id)
            if requeue and (run.attempts or 0) >= MAX_ATTEMPTS:
                run.status, run.finished_at = RunStatus.failed.value, utcnow()
                run.error = (f"gave up after {run.attempts} attempts: the worker running it stopped each time "
                             f"(last: {run.worker_id})")
            elif requeue:
                run.status, run.worker_id, run.message = RunStatus.queued.value, None, "re-queued: worker stopped"
            else:
                run.status, run.error, run.finished_at = RunStatus.failed.value, "worker stopped", utcnow()
            session.add(run)
        session.commit()
        return ids


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
    with Session(engine) as session:
        row = session.get(Run, run_id)
        return to_record(row) if row is not None else None


def retry(engine: Engine, run_id: str) -> Run:
    """Queue a new run with the same analyzer, parameters, claim, device and binding as ``run_id``.

    The new run stands alone (no seed group): its verdict is drawn from its own result.
    """
    with Session(engine) as session:
        run = session.get(Run, run_id)
    if run is None:
        raise KeyError(f"no run {run_id!r}; run 'kb runs' to see run ids")
    if run.status in (RunStatus.queued.value, RunStatus.running.value):
        raise ValueError(f"run {run_id} is still {run.status}: cancel it first, or wait for it to end")
    return enqueue(engine, run.analyzer, json.loads(run.params_json), claim_key=run.claim_key,
                   device=run.device or "cpu", executor=run.executor or "local", binding=run.binding_hash)


def to_record(run: Run) -> RunRecord:
    """The public model of a run row."""
    return RunRecord(id=run.id, claim_key=run.claim_key, analyzer=run.analyzer, params=json.loads(run.params_json),
                     device=run.device or "cpu", executor=run.executor or "local", job_id=run.job_id,
                     attempts=run.attempts or 0,
                     status=RunStatus(run.status),
                     progress=run.progress, message=run.message, error=run.error, created_at=run.created_at,
                     started_at=run.started_at, finished_at=run.finished_at)


def claim_for_key(engine: Engine, claim_key: str) -> Claim | None:
    """The indexed claim behind '<note id>#<claim id>'."""
    with Session(engine) as session:
        row = session.get(ClaimRow, claim_key)
        return Claim.model_validate_json(row.claim_json) if row else None


def group_results(engine: Engine, group_id: str) -> tuple[list[dict[str, Any]], int]:
    """Metrics of the group's evidence so far, and how many runs the group has in all."""
    with Session(engine) as session:
        rows = session.exec(select(Evidence.metrics_json).where(Evidence.group_id == group_id)).all()
        total = len(session.exec(select(Run.id).where(Run.group_id == group_id)).all())
    return [json.loads(r) for r in rows], total
