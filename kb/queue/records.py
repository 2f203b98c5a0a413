"""A run's outcome kept in the artifact store, so that the index (a cache) can be rebuilt without re-running.

Once a run's outcome is final (succeeded, which includes "not runnable here", failed or cancelled) the
worker writes one JSON record at ``runs/<run id>/attempt-<n>.json``: the run as it ended and, for a
result, its evidence. The record is written before the outcome is committed to the database, and
removed again when the database refuses it (another attempt holds the run), so a record names an
outcome, never a mere claim. ``kb index --rebuild`` reads them back (``reattach_evidence``). A record
the store cannot take (it is down past its retries) is spooled under ``<KB home>/spool/`` and uploaded
when the store answers again (``flush_spool``), if the database still holds that attempt's outcome.

What a rebuild makes of a record: a final status is restored as it is. Records written before kb
kept outcomes (``evidence/<sha>/<sha>/kb-evidence.json``) hold the run as it was claimed, "running",
next to its evidence: the evidence proves the run finished, so it comes back succeeded. A record
without a final status and without evidence comes back failed ("interrupted"). No record is ever
re-queued: a rebuild never makes a worker run an analyzer again. A run still in flight when the index
was lost has no record yet; its outcome lands in the store when it ends, and the next
``kb index --rebuild`` restores it.
"""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from analyzers.files import atomic_write_bytes
from kb.evidence.artifact_store import STORE_TRIES, ArtifactStore, store_transient
from kb.index.database import Evidence, Run, utcnow
from schemas import RunStatus

#: The record name of kb versions that kept the run as claimed, beside its evidence files.
LEGACY_RECORD_NAME = "kb-evidence.json"
FORMAT = 2
_DATES = ("created_at", "started_at", "finished_at", "heartbeat_at", "lease_expires_at")
# Who held the run is no outcome: a restored run is held by nobody.
_HOLDER = ("worker_id", "heartbeat_at", "lease_expires_at", "job_id")


def record_key(run_id: str, attempt: int) -> str:
    """The store key of the outcome of attempt ``attempt`` of run ``run_id``."""
    return f"runs/{run_id}/attempt-{attempt}.json"


def write_outcome(store: ArtifactStore, run: Run, status: RunStatus, *, attempt: int, error: str | None = None,
                  evidence: Evidence | None = None, spool: Path | None = None) -> str:
    """Write the final outcome of ``run``'s attempt ``attempt`` to the store (atomic, once); returns its key.

    With ``spool`` (a KB home's ``spool_dir``) a record the store does not take is kept there and ``Spooled``
    raised."""
    fields = {k: v for k, v in run.model_dump(mode="json").items() if k not in _HOLDER}
    fields.update(status=status.value, error=error, attempts=attempt, finished_at=utcnow().isoformat())
    if status is RunStatus.succeeded:
        fields["progress"] = 1.0
    record = {"format": FORMAT, "attempt": attempt, "run": fields,
              "evidence": evidence.model_dump(mode="json", exclude={"id"}) if evidence is not None else None}
    key = record_key(run.id, attempt)
    try:
        _put(store, key, json.dumps(record, sort_keys=True, default=str).encode())
    except Exception:
        if spool is None:
            raise
        (spool / key).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(spool / key, json.dumps(record, sort_keys=True, default=str).encode())
        raise Spooled(spool / key) from None
    return key


class Spooled(Exception):
    """The store did not take an outcome record: it waits at ``path`` for ``flush_spool``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"kept at {path} until the artifact store answers")


def _put(store: ArtifactStore, key: str, data: bytes) -> None:
    with tempfile.NamedTemporaryFile(delete=False, suffix=".json") as handle:
        handle.write(data)
    try:
        store.put_file(Path(handle.name), key, move=True)
    finally:
        Path(handle.name).unlink(missing_ok=True)


def spool_dir(home: Path) -> Path:
    """Where a KB home keeps the outcome records its store could not take yet."""
    return Path(home) / "spool"


def flush_spool(engine: Engine, store: ArtifactStore, home: Path) -> int:
    """Upload the spooled records the database still agrees with (its run ended with that attempt and status);
    drop those it refused. Returns how many reached the store; a store still down leaves the rest."""
    root = spool_dir(home)
    if not root.is_dir():
        return 0
    sent = 0
    for path in sorted(root.glob("runs/*/attempt-*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        with Session(engine) as session:
            row = session.get(Run, record["run"]["id"])
        if row is None or row.attempts != record["attempt"] or row.status != record["run"]["status"]:
            path.unlink(missing_ok=True)  # the database never recorded this outcome: no record of it
            continue
        _put(store, path.relative_to(root).as_posix(), path.read_bytes())
        path.unlink(missing_ok=True)
        sent += 1
    return sent


def remove_outcome(store: ArtifactStore, run_id: str, attempt: int, spool: Path | None = None) -> None:
    """Take back the record of an attempt the database did not accept (it lost the run to another attempt)."""
    if spool is not None:
        (spool / record_key(run_id, attempt)).unlink(missing_ok=True)
    store.remove(record_key(run_id, attempt))


class StoreUnreadable(Exception):
    """The artifact store did not answer a rebuild's reads, after its retries: nothing was restored from it."""

    def __init__(self, url: str, exc: BaseException) -> None:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        super().__init__(f"the artifact store {url} did not answer ({reason}) after {STORE_TRIES} tries: the notes "
                         "are indexed but no run was restored from it; run `kb index --rebuild` again once it answers")


def read_outcomes(store: ArtifactStore) -> list[dict[str, Any]]:
    """One record per run in the store: its latest attempt's outcome, else a legacy record.

    Each read is retried while the store is down (``ArtifactStore.retrying``); ``StoreUnreadable`` when it
    does not come back."""
    try:
        return _read_outcomes(store)
    except Exception as exc:
        if not store_transient(exc):
            raise
        raise StoreUnreadable(store.url, exc) from exc


def _read(store: ArtifactStore, path: str) -> dict[str, Any]:
    def read() -> dict[str, Any]:
        with store.fs.open(path, "rb") as handle:
            return dict(json.loads(handle.read()))

    return store.retrying(f"reading {path}", read)


def _read_outcomes(store: ArtifactStore) -> list[dict[str, Any]]:
    latest: dict[str, tuple[int, dict[str, Any]]] = {}
    found = store.retrying("listing the run records",
                           lambda: list(store.fs.glob(f"{store.root}/runs/*/attempt-*.json")))
    for path in found:
        record = _read(store, path)
        run_id, attempt = record["run"]["id"], int(record.get("attempt", 0))
        if run_id not in latest or latest[run_id][0] < attempt:
            latest[run_id] = (attempt, record)
    records = [record for _, record in latest.values()]
    legacy = store.retrying("listing the legacy records",
                            lambda: list(store.fs.glob(f"{store.root}/evidence/*/*/{LEGACY_RECORD_NAME}")))
    for path in legacy:
        record = _read(store, path)
        if record["run"]["id"] not in latest:
            records.append(record)
    return records


def restored_run(record: dict[str, Any]) -> Run:
    """The run row a record restores (see the module docstring for what becomes of a non-final status)."""
    fields = {k: v for k, v in record["run"].items() if k in Run.model_fields and k not in _HOLDER}
    fields = {k: (dt.datetime.fromisoformat(v) if k in _DATES and isinstance(v, str) else v) for k, v in fields.items()}
    if fields.get("status") not in {s.value for s in (RunStatus.succeeded, RunStatus.failed, RunStatus.cancelled)}:
        if record.get("evidence") is not None:
            fields.update(status=RunStatus.succeeded.value, progress=1.0)
        else:
            fields.update(status=RunStatus.failed.value,
                          error="interrupted: its worker stopped before the outcome was recorded")
    return Run(**fields)


def reattach_evidence(engine: Engine, store: ArtifactStore) -> int:
    """Add the runs (with their final status) and evidence kept in the store that the index lacks.

    Returns how many runs were added. Per claim, the newest evidence is current and the older is
    history, as when the runs first landed.
    """
    def landed(record: dict[str, Any]) -> str:
        return str((record.get("evidence") or {}).get("created_at") or record["run"].get("finished_at"))

    added = 0
    with Session(engine) as session:
        known = set(session.exec(select(Run.id)).all())
        for record in sorted(read_outcomes(store), key=landed):  # evidence ids in landing order
            if record["run"]["id"] in known:
                continue
            session.add(restored_run(record))
            session.flush()  # the run row first: evidence refers to it
            if record.get("evidence") is not None:
                evidence: dict[str, Any] = dict(record["evidence"])
                if isinstance(evidence.get("created_at"), str):
                    evidence["created_at"] = dt.datetime.fromisoformat(evidence["created_at"])
                session.add(Evidence(**evidence))
            known.add(record["run"]["id"])
            added += 1
        session.commit()
        claims = session.exec(select(Evidence.claim_key).where(col(Evidence.claim_key).is_not(None)).distinct()).all()
        for claim_key in claims:
            rows = session.exec(select(Evidence).where(Evidence.claim_key == claim_key)
                                .order_by(col(Evidence.created_at).desc())).all()
            newest = rows[0]
            for row in rows[1:]:
                if not row.stale and not (newest.group_id and row.group_id == newest.group_id):
                    row.stale, row.stale_reason = True, f"superseded by run {newest.run_id}"
                    session.add(row)
        session.commit()
    return added


def database_contents(engine: Engine) -> str | None:
    """What an index database already holds ("4 note(s), 12 run(s)"), or None when it is empty."""
    from kb.index.database import Paper

    with Session(engine) as session:
        counts = {"note(s)": len(session.exec(select(Paper.id)).all()),
                  "run(s)": len(session.exec(select(Run.id)).all())}
    held = [f"{n} {what}" for what, n in counts.items() if n]
    return ", ".join(held) or None
