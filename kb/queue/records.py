"""A run's outcome kept in the artifact store, so that the index (a cache) can be rebuilt without re-running.

Once a run's outcome is final (succeeded, which includes "not runnable here", failed or cancelled) the worker
writes one JSON record at ``runs/<run id>/attempt-<n>.json``: the run as it ended and, for a result, its
evidence. The record is written before the outcome is committed to the database, and removed again when the
database refuses it (another attempt holds the run), so a record names an outcome, never a mere claim. ``kb
index --rebuild`` reads them back (``reattach_evidence``), each checked as data first
(``kb.queue.record_checks``: its path, size and schema); a refused record is skipped and named, and no
record's verdict is taken as it is: each is judged again from its metrics by kb's own rule. A record the store
cannot take (it is down past its retries) is spooled under ``<KB home>/spool/`` and uploaded when the store
answers again (``flush_spool``), if the database still holds that attempt's outcome.

What a rebuild makes of a record: a final status is restored as it is. Records written before kb
kept outcomes (``evidence/<sha>/<sha>/kb-evidence.json``) hold the run as it was claimed, "running",
next to its evidence: the evidence proves the run finished, so it comes back succeeded. A record
without a final status and without evidence comes back failed ("interrupted"). No record is ever
re-queued: a rebuild never makes a worker run an analyzer again. A run still in flight when the index
was lost has no record yet; its outcome lands in the store when it ends, and the next
``kb index --rebuild`` restores it.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from analyzers.files import atomic_write_bytes
from kb.evidence.artifact_store import STORE_TRIES, ArtifactStore, store_transient
from kb.evidence.verdicts import evaluate
from kb.index.database import Evidence, Run, utcnow
from kb.index.indexing import claim_for_key
from kb.queue.record_checks import (
    MAX_RECORD_BYTES,
    RecordRefused,
    StoredEvidence,
    StoredRun,
    check_record,
    strict_json,
)
from kb.queue.store import timing_fields
from schemas import EvidenceScale, RunStatus, Verdict, VerdictKind

#: The record name of kb versions that kept the run as claimed, beside its evidence files.
LEGACY_RECORD_NAME = "kb-evidence.json"
FORMAT = 2
# Who held the run is no outcome: a restored run is held by nobody.
_HOLDER = ("worker_id", "heartbeat_at", "lease_expires_at", "job_id")


def record_key(run_id: str, attempt: int) -> str:
    """The store key of the outcome of attempt ``attempt`` of run ``run_id``."""
    return f"runs/{run_id}/attempt-{attempt}.json"


def write_outcome(
    store: ArtifactStore,
    run: Run,
    status: RunStatus,
    *,
    attempt: int,
    error: str | None = None,
    evidence: Evidence | None = None,
    spool: Path | None = None,
    timing: tuple[float, dict[str, float], float | None] | None = None,
) -> str:
    """Write the final outcome of ``run``'s attempt ``attempt`` to the store (atomic, once); returns its key.

    ``timing``: what the attempt's time was (``kb.queue.store.finish``), kept so a rebuild restores it. With
    ``spool`` (a KB home's ``spool_dir``) a record the store does not take is kept there and ``Spooled``
    raised."""
    fields = run_fields(run)
    fields.update(status=status.value, error=error, attempts=attempt, finished_at=utcnow().isoformat(),
                  **timing_fields(timing))
    if status is RunStatus.succeeded:
        fields["progress"] = 1.0
    record = {"format": FORMAT, "attempt": attempt, "run": fields,
              "evidence": evidence.model_dump(mode="json", exclude={"id"}) if evidence is not None else None}
    key = record_key(run.id, attempt)
    try:
        keep_record(store, key, record)
    except Exception:
        if spool is None:
            raise
        (spool / key).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(spool / key, json.dumps(record, sort_keys=True, default=str).encode())
        raise Spooled(spool / key) from None
    return key


def run_fields(run: Run) -> dict[str, Any]:
    """A run row as a record keeps it: JSON-ready, without who held it (a restored run is held by nobody)."""
    return {k: v for k, v in run.model_dump(mode="json").items() if k not in _HOLDER}


def keep_record(store: ArtifactStore, key: str, record: dict[str, Any]) -> None:
    """Write a record at ``key`` in the store (atomic; a key already there is kept as it is)."""
    put_bytes(store, key, json.dumps(record, sort_keys=True, default=str).encode())


def carried_scale(record: dict[str, Any]) -> EvidenceScale | None:
    """The scale the analyzer reported, where a record carries it as data beside the metrics (an imported
    run's: ``evidence.evidence_scale``); None when absent or not a scale."""
    scale = (record.get("evidence") or {}).get("evidence_scale")
    try:
        return EvidenceScale.model_validate(scale) if isinstance(scale, dict) else None
    except ValidationError:
        return None


class Spooled(Exception):
    """The store did not take an outcome record: it waits at ``path`` for ``flush_spool``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"kept at {path} until the artifact store answers")


def put_bytes(store: ArtifactStore, key: str, data: bytes) -> None:
    """Write ``data`` at ``key`` in the store (atomic; a key already there is kept as it is)."""
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
        put_bytes(store, path.relative_to(root).as_posix(), path.read_bytes())
        path.unlink(missing_ok=True)
        sent += 1
    return sent


def remove_outcome(store: ArtifactStore, run_id: str, attempt: int, spool: Path | None = None) -> None:
    """Take back the record of an attempt the database did not accept (it lost the run to another attempt)."""
    if spool is not None:
        (spool / record_key(run_id, attempt)).unlink(missing_ok=True)
    store.remove(record_key(run_id, attempt))


class StoreUnreadable(Exception):
    """The artifact store did not answer a rebuild's reads, after its retries: nothing was restored from
    it."""

    def __init__(self, url: str, exc: BaseException) -> None:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        super().__init__(
            f"the artifact store {url} did not answer ({reason}) after {STORE_TRIES} tries: the notes "
            "are indexed but no run was restored from it; run `kb index --rebuild` again once it answers"
        )


@dataclass
class StoredOutcome:
    """One record that passed ``kb.queue.record_checks``: where it lies and what it restores."""

    key: str
    run: StoredRun
    evidence: StoredEvidence | None
    verdict_json: str | None  # kept only to read the evidence scale; the verdict itself is judged again
    # the scale the analyzer reported, when carried apart (an evidence bundle)
    scale: EvidenceScale | None = None


@dataclass
class RestoreReport:
    """What a rebuild made of the store: runs restored, and each record skipped with its reason."""

    restored: int = 0
    skipped: list[str] = field(default_factory=list)
    # runs restored that ran but whose record keeps no measured time (written before kb kept it)
    untimed: int = 0


def _read_record(store: ArtifactStore, path: str, key: str | None) -> StoredOutcome:
    if store.retrying(f"sizing {path}", lambda: store.fs.size(path)) > MAX_RECORD_BYTES:
        raise RecordRefused(f"over the {MAX_RECORD_BYTES:,}-byte limit of a run record")  # never loaded

    def read() -> bytes:
        with store.fs.open(path, "rb") as handle:
            return bytes(handle.read(MAX_RECORD_BYTES + 1))

    raw = store.retrying(f"reading {path}", read)
    run, evidence, record = check_record(raw, key)
    verdict = (record.get("evidence") or {}).get("verdict_json")
    return StoredOutcome(key or path, run, evidence, verdict if isinstance(verdict, str) else None,
                         carried_scale(record))


def read_outcomes(store: ArtifactStore) -> tuple[list[StoredOutcome], list[str]]:
    """One checked record per run in the store (its latest attempt's outcome, else a legacy record), and one
    line per record refused: its store key and why (``kb.queue.record_checks``).

    Each read is retried while the store is down (``ArtifactStore.retrying``); ``StoreUnreadable`` when it
    does not come back (an outage is never mistaken for a bad record)."""
    try:
        return _read_outcomes(store)
    except Exception as exc:
        if not store_transient(exc):
            raise
        raise StoreUnreadable(store.url, exc) from exc


def _read_outcomes(store: ArtifactStore) -> tuple[list[StoredOutcome], list[str]]:
    skipped: list[str] = []
    latest: dict[str, StoredOutcome] = {}
    for outcome in _checked_records(store, "run records", "runs/*/attempt-*.json", skipped, keyed=True):
        held = latest.get(outcome.run.id)
        if held is None or held.run.attempts < outcome.run.attempts:
            latest[outcome.run.id] = outcome
    outcomes = list(latest.values())
    for outcome in _checked_records(store, "legacy records", f"evidence/*/*/{LEGACY_RECORD_NAME}", skipped,
                                    keyed=False):
        if outcome.run.id not in latest:
            outcomes.append(outcome)
    return outcomes, skipped


def _checked_records(store: ArtifactStore, what: str, pattern: str, skipped: list[str], *,
                     keyed: bool) -> Iterator[StoredOutcome]:
    """The records under ``pattern`` that pass their checks (``keyed``: their path must name their run and
    attempt); one line in ``skipped`` for each refused. A store outage is raised, never taken for a bad
    record."""
    prefix = f"{store.root}/".lstrip("/")
    for path in store.retrying(
        f"listing the {what}", lambda: sorted(store.fs.glob(f"{store.root}/{pattern}"))
    ):
        key = str(path).lstrip("/").removeprefix(prefix)
        try:
            yield _read_record(store, path, key if keyed else None)
        except (RecordRefused, OSError) as exc:
            if not isinstance(exc, RecordRefused) and store_transient(exc):
                raise  # the store is down, not the record bad: read_outcomes says so
            skipped.append(f"{key}: {exc}")


def restored_run(outcome: StoredOutcome) -> Run:
    """The run row a record restores (see the module docstring for what becomes of a non-final status)."""
    fields = {k: v for k, v in outcome.run.model_dump().items() if k in Run.model_fields and v is not None}
    if outcome.run.status not in (RunStatus.succeeded, RunStatus.failed, RunStatus.cancelled):
        if outcome.evidence is not None:
            fields.update(status=RunStatus.succeeded.value, progress=1.0)
        else:
            fields.update(status=RunStatus.failed.value,
                          error="interrupted: its worker stopped before the outcome was recorded")
    else:
        fields["status"] = outcome.run.status.value
    return Run(**fields)


def _evidence_scale(verdict_json: str | None) -> EvidenceScale:
    """The scale the analyzer reported, kept in the record's verdict: a measurement like the metrics."""
    try:
        scale = Verdict.model_validate_json(verdict_json).evidence_scale if verdict_json else None
    except ValidationError:
        scale = None
    return scale or EvidenceScale(name="unknown")


def _stored_kind(verdict_json: str | None) -> str | None:
    """The kind a record's verdict names (only "not runnable" is ever kept, and only without metrics)."""
    try:
        data = strict_json(verdict_json, "verdict") if verdict_json else None
    except RecordRefused:
        return None
    return data.get("kind") if isinstance(data, dict) else None


def _judge_restored(session: Session, engine: Engine, restored: list[tuple[Evidence, StoredOutcome]]) -> None:
    """Judge each restored piece of evidence from its metrics with kb's own rule
    (``kb.evidence.verdicts.evaluate``): a record's verdict is never taken as it is, so a planted record
    cannot make a claim read "supported" with a reason of its own. A seed of a group is judged on the group's
    metrics landed up to it."""
    for row, outcome in restored:
        if row.claim_key is None:
            continue
        claim = claim_for_key(engine, row.claim_key)
        metrics = json.loads(row.metrics_json)
        old_kind = _stored_kind(outcome.verdict_json)
        verdict: Verdict | None
        if not metrics and old_kind == VerdictKind.not_runnable.value:
            verdict = Verdict(kind=VerdictKind.not_runnable, reason="the analyzer could not run here "
                              "(restored from the store without metrics)")
        elif claim is None:
            verdict = None  # no claim in the notes to judge against
        else:
            results = [metrics]
            if row.group_id:
                group = session.exec(select(Evidence).where(Evidence.group_id == row.group_id)
                                     .where(col(Evidence.created_at) <= row.created_at)).all()
                results = [m for m in (json.loads(e.metrics_json) for e in group) if m]
            verdict = evaluate(
                claim, results or [metrics], outcome.scale or _evidence_scale(outcome.verdict_json)
            )
        row.verdict_json = verdict.model_dump_json() if verdict else None
        row.verdict_kind = verdict.kind.value if verdict else None
        session.add(row)


def reattach_evidence(engine: Engine, store: ArtifactStore) -> RestoreReport:
    """Add the runs (with their final status) and evidence kept in the store that the index lacks.

    Every record is checked first (``kb.queue.record_checks``); a refused one is skipped and named in the
    report. Verdicts are judged again from the metrics (``attach_outcomes``).
    """
    outcomes, skipped = read_outcomes(store)
    report = RestoreReport(skipped=skipped)
    added = set(attach_outcomes(engine, outcomes))
    report.restored = len(added)
    report.untimed = sum(o.run.id in added and o.run.actual_seconds is None and o.run.started_at is not None
                         for o in outcomes)
    return report


def attach_outcomes(engine: Engine, outcomes: list[StoredOutcome]) -> list[str]:
    """Add the runs and evidence of checked records that the index lacks, in one transaction; returns the ids
    of the runs added. Each verdict is judged again from the metrics; per claim, the newest evidence is
    current and the older is history, as when the runs first landed."""
    def landed(outcome: StoredOutcome) -> str:
        created = outcome.evidence.created_at if outcome.evidence is not None else None
        return str(created or outcome.run.finished_at)

    added: list[str] = []
    restored: list[tuple[Evidence, StoredOutcome]] = []
    with Session(engine) as session:
        known = set(session.exec(select(Run.id)).all())
        for outcome in sorted(outcomes, key=landed):  # evidence ids in landing order
            if outcome.run.id in known:
                continue
            session.add(restored_run(outcome))
            session.flush()  # the run row first: evidence refers to it
            if outcome.evidence is not None:
                row = Evidence(**outcome.evidence.model_dump(exclude_none=True))
                session.add(row)
                session.flush()
                restored.append((row, outcome))
            known.add(outcome.run.id)
            added.append(outcome.run.id)
        _judge_restored(session, engine, restored)
        _mark_superseded(session)
        session.commit()
    return added


def _mark_superseded(session: Session) -> None:
    """Per claim, every piece of evidence older than the newest (outside its seed group) becomes history."""
    claims = session.exec(
        select(Evidence.claim_key).where(col(Evidence.claim_key).is_not(None)).distinct()
    ).all()
    for claim_key in claims:
        rows = session.exec(select(Evidence).where(Evidence.claim_key == claim_key)
                            .order_by(col(Evidence.created_at).desc())).all()
        newest = rows[0]
        for row in rows[1:]:
            if not row.stale and not (newest.group_id and row.group_id == newest.group_id):
                row.stale, row.stale_reason = True, f"superseded by run {newest.run_id}"
                session.add(row)


def database_contents(engine: Engine) -> str | None:
    """What an index database already holds ("4 note(s), 12 run(s)"), or None when it is empty."""
    from kb.index.database import Paper

    with Session(engine) as session:
        counts = {"note(s)": len(session.exec(select(Paper.id)).all()),
                  "run(s)": len(session.exec(select(Run.id)).all())}
    held = [f"{n} {what}" for what, n in counts.items() if n]
    return ", ".join(held) or None
