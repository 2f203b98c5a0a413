"""Execute queued runs: call the analyzer, store its artifacts content-addressed, record evidence.

A worker loops: recover runs abandoned by dead workers, claim the next run, run its analyzer in a
staging folder while a heartbeat thread keeps the run alive and relays progress, then move the
artifacts into ``<KB home>/evidence/<sha256>/`` and add the evidence (metrics, provenance, verdict)
in one transaction. Nothing earlier is touched when a run fails.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import json
import logging
import os
import platform
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import traceback
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

from analyzers import registry
from analyzers.base import AnalyzerResult, Cancelled, NotRunnable, RunContext
from kb import __version__, runs
from kb.artifact_store import ArtifactStore, evidence_key
from kb.db import Evidence, Run, utcnow
from kb.verdicts import evaluate
from schemas import EvidenceScale, Provenance, RunStatus, Verdict, VerdictKind

log = logging.getLogger("kb.worker")
_PACKAGES = ("torch", "transformers", "numpy", "pydantic", "sqlmodel")


def worker_id() -> str:
    """A readable id of this worker process."""
    return f"{socket.gethostname()}:{os.getpid()}"


@functools.cache
def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


@functools.cache
def _packages() -> dict[str, str]:
    # Cached: versions cannot change inside one worker process, and metadata lookups cost milliseconds.
    found = {}
    for name in _PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def _gpu_name(device: str) -> str | None:
    if not device.startswith("cuda"):
        return None
    try:
        import torch

        return torch.cuda.get_device_name(torch.device(device)) if torch.cuda.is_available() else None
    except Exception:  # noqa: BLE001 - provenance must never fail a run
        return None


class _GpuClock:
    """Seconds the run held the GPU (analyzer time, synchronized) and its peak memory; nothing on a CPU run."""

    def __init__(self, device: str) -> None:
        self.device = device if device.startswith("cuda") else None
        self.start = 0.0
        self.measured: dict[str, float] = {}

    def __enter__(self) -> _GpuClock:
        if self.device is not None and _cuda_available():
            import torch

            torch.cuda.reset_peak_memory_stats(self.device)
            self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        # Stop the clock when the analyzer returns: hashing and uploading its files is not GPU time.
        if self.device is not None and _cuda_available():
            import torch

            torch.cuda.synchronize(self.device)
            self.measured = {"gpu_seconds": time.perf_counter() - self.start,
                             "gpu_peak_memory_gb": torch.cuda.max_memory_allocated(self.device) / 2**30}

    def reading(self) -> dict[str, float]:
        """``gpu_seconds`` and ``gpu_peak_memory_gb`` of the analyzer's work, when it used a GPU."""
        return dict(self.measured)


def _cuda_available() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - provenance must never fail a run
        return False


class _Heartbeat(threading.Thread):
    """Keeps a run's heartbeat fresh and notices cancellation, off the analyzer's thread."""

    def __init__(self, engine: Engine, run_id: str, interval: float = 2.0, owner: str | None = None) -> None:
        super().__init__(daemon=True)
        self.engine, self.run_id, self.interval, self.owner = engine, run_id, interval, owner
        self.progress: tuple[float, str] | None = None
        self.cancelled = threading.Event()
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            self.beat()

    def beat(self) -> None:
        try:
            self._beat()
        except OperationalError as exc:  # a database lock or a dropped connection: try again next interval
            log.warning("run %s: heartbeat failed (%s); retrying", self.run_id[:12], str(exc).splitlines()[0])

    def _beat(self) -> None:
        fraction, message = self.progress or (None, None)
        # Cancelled by a user, or lost: re-queued after this worker looked dead and taken by another. Either
        # way the analyzer stops at its next progress report and this worker records nothing.
        if runs.heartbeat(self.engine, self.run_id, fraction, message, owner=self.owner) in (
                RunStatus.cancelled.value, runs.LOST):
            self.cancelled.set()


def execute(engine: Engine, home: Path, run: Run, *, heartbeat_interval: float = 2.0,
            store: ArtifactStore | None = None) -> RunStatus:
    """Run one claimed run to the end and record its outcome.

    The analyzer works in a staging folder under ``home`` (local to this machine); its files then go to
    ``store`` (default: the folder store in ``home``). A checkpoint left in the store by an earlier
    attempt of this run (a killed or preempted job) is restored into ``ctx.checkpoint_dir`` first.
    """
    store = store or ArtifactStore(home)
    started = utcnow()
    wall0 = time.perf_counter()
    params: dict[str, Any] = json.loads(run.params_json)
    owner = run.worker_id
    beat = _Heartbeat(engine, run.id, heartbeat_interval, owner=owner)
    beat.start()
    staging = Path(tempfile.mkdtemp(prefix=f"run-{run.id[:8]}-", dir=_staging_root(home)))
    checkpoints = Path(tempfile.mkdtemp(prefix=f"ckpt-{run.id[:8]}-", dir=_staging_root(home)))
    log_lines: list[str] = [f"{utcnow().isoformat()} attempt on {socket.gethostname()}"
                            + (f" (Slurm job {os.environ['SLURM_JOB_ID']})" if "SLURM_JOB_ID" in os.environ else "")]
    restored = store.pull_checkpoints(run.id, checkpoints)
    if restored:
        log_lines.append(f"{utcnow().isoformat()} restored {restored} checkpoint file(s) of an earlier attempt")

    def progress(fraction: float, message: str) -> None:
        beat.progress = (fraction, message)
        log_lines.append(f"{utcnow().isoformat()} {fraction:5.1%} {message}")

    gpu = _GpuClock(run.device or "cpu")
    try:
        analyzer = registry.get(run.analyzer)
        validated = analyzer.params_for(params)
        analyzer.preflight(validated)
        ctx = RunContext(out_dir=staging, progress=progress, is_cancelled=beat.cancelled.is_set,
                         cache_dir=home / "cache", checkpoint_dir=checkpoints,
                         on_checkpoint=functools.partial(_push, store, run.id, checkpoints))
        with gpu:
            result: AnalyzerResult | None = analyzer.run(validated, ctx)
        not_runnable: str | None = None
    except NotRunnable as exc:
        result, not_runnable = None, str(exc)
    except Cancelled:
        beat.stopped.set()
        if runs.finish(engine, run.id, RunStatus.cancelled, owner=owner) or _cancelled_by_user(engine, run.id):
            store.drop_checkpoints(run.id)  # a lost run keeps them: its next attempt resumes from them
        _clean(staging, checkpoints)
        return RunStatus.cancelled
    except Exception as exc:  # noqa: BLE001 - any analyzer failure becomes a failed run, never lost evidence
        beat.stopped.set()
        error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}"
        runs.finish(engine, run.id, RunStatus.failed, error=error, owner=owner)
        _clean(staging, checkpoints)
        return RunStatus.failed
    finally:
        beat.stopped.set()

    if beat.cancelled.is_set():
        _clean(staging, checkpoints)
        if _cancelled_by_user(engine, run.id):
            store.drop_checkpoints(run.id)
        return RunStatus.cancelled
    try:
        return _record(engine, run, store, staging, checkpoints, owner=owner, params=params, result=result,
                       not_runnable=not_runnable, log_lines=log_lines, gpu=gpu, started=started, wall0=wall0)
    except Exception as exc:  # noqa: BLE001 - a failure after the analyzer (verdict, provenance, storage) ends the run
        error = f"after the analyzer returned: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}"
        log.error("run %s: %s", run.id[:12], error.splitlines()[0])
        runs.finish(engine, run.id, RunStatus.failed, error=error, owner=owner)
        return RunStatus.failed
    finally:
        _clean(staging, checkpoints)


def _record(engine: Engine, run: Run, store: ArtifactStore, staging: Path, checkpoints: Path, *, owner: str | None,
            params: dict[str, Any], result: AnalyzerResult | None, not_runnable: str | None, log_lines: list[str],
            gpu: _GpuClock, started: Any, wall0: float) -> RunStatus:
    """Store the run's files, then its provenance, verdict and evidence in one transaction."""
    (staging / "log.txt").write_text("\n".join(log_lines) + "\n", encoding="utf-8")
    metrics = result.model_dump(mode="json") if result is not None else {}
    if result is not None:
        (staging / "metrics.json").write_text(json.dumps(metrics, indent=2, default=str), encoding="utf-8")
    artifacts = store.put_tree(staging)
    analyzer_version = getattr(registry.load_all().get(run.analyzer), "version", "1")
    gpu_reading = gpu.reading() if result is not None else {}
    recorded: dict[str, Any] = {
        "kb_version": __version__, "git_commit": _git_commit(), "analyzer": run.analyzer,
        "analyzer_version": analyzer_version, "gpu_seconds": gpu_reading.get("gpu_seconds"),
        "params_hash": runs.params_hash(params), "python": platform.python_version(), "packages": _packages(),
        "device": run.device or "cpu", "gpu_name": _gpu_name(run.device or "cpu"), "seed": params.get("seed"),
        "host": socket.gethostname(), "scheduler_job_id": os.environ.get("SLURM_JOB_ID"),
        "started_at": started, "finished_at": utcnow(), "wall_seconds": time.perf_counter() - wall0,
    }
    # What the analyzer knows first-hand (the device it really used, weight and data hashes) wins.
    analyzer_said = result.provenance if result is not None else {}
    recorded.update({k: v for k, v in analyzer_said.items() if k in Provenance.model_fields and v is not None})
    extra = {k: v for k, v in analyzer_said.items() if k not in Provenance.model_fields}
    if "gpu_peak_memory_gb" in gpu_reading:
        extra["gpu_peak_memory_gb"] = gpu_reading["gpu_peak_memory_gb"]
    recorded["extra"] = extra or None
    provenance = Provenance.model_validate({k: v for k, v in recorded.items() if v is not None})
    verdict = _verdict(engine, run, metrics, result, not_runnable)
    evidence = Evidence(
        run_id=run.id, claim_key=run.claim_key, analyzer=run.analyzer, metrics_json=json.dumps(metrics, default=str),
        artifacts_json=json.dumps(artifacts), provenance_json=provenance.model_dump_json(),
        verdict_json=verdict.model_dump_json() if verdict else None,
        verdict_kind=verdict.kind.value if verdict else None,
        group_id=run.group_id, binding_hash=run.binding_hash, analyzer_version=analyzer_version, kb_version=__version__,
    )
    _store_record(store, run, evidence)
    if not runs.finish(engine, run.id, RunStatus.succeeded, evidence=evidence, owner=owner):
        log.warning("run %s: finished here but another worker holds it now; its result is not recorded twice",
                    run.id[:12])
        return RunStatus.cancelled
    store.drop_checkpoints(run.id)  # the run is done: its evidence keeps what it needs
    return RunStatus.succeeded


RECORD_NAME = "kb-evidence.json"


def _store_record(store: ArtifactStore, run: Run, evidence: Evidence) -> None:
    """Keep the run and its evidence as JSON in the store too: the index is a cache that
    ``kb index --rebuild`` can re-create from the notes and these records, so no run is ever lost."""
    record = {"run": {k: v for k, v in run.model_dump(mode="json").items() if k not in ("worker_id", "heartbeat_at")},
              "evidence": evidence.model_dump(mode="json", exclude={"id"})}
    payload = json.dumps(record, sort_keys=True, default=str).encode()
    with tempfile.NamedTemporaryFile(delete=False, suffix=".json") as handle:
        handle.write(payload)
    try:
        store.put_file(Path(handle.name), evidence_key(hashlib.sha256(payload).hexdigest(), RECORD_NAME), move=True)
    finally:
        Path(handle.name).unlink(missing_ok=True)


def reattach_evidence(engine: Engine, store: ArtifactStore) -> int:
    """Add the runs and evidence recorded in the store (``_store_record``) that the index lacks; returns how many.

    Per claim, the newest evidence is current and the older is history, as when the runs first landed.
    """
    from sqlmodel import Session, col, select

    dates = ("created_at", "started_at", "finished_at", "heartbeat_at")

    def parsed(row: dict[str, Any]) -> dict[str, Any]:
        return {k: (dt.datetime.fromisoformat(v) if k in dates and isinstance(v, str) else v) for k, v in row.items()}

    added = 0
    with Session(engine) as session:
        known = set(session.exec(select(Run.id)).all())
        records = []
        for path in store.fs.glob(f"{store.root}/evidence/*/*/{RECORD_NAME}"):
            with store.fs.open(path, "rb") as handle:
                records.append(json.loads(handle.read()))
        for record in sorted(records, key=lambda r: str(r["evidence"].get("created_at"))):  # ids in landing order
            run = record["run"]
            if run["id"] in known:
                continue
            session.add(Run(**parsed(run)))
            session.flush()  # the run row first: evidence refers to it
            session.add(Evidence(**parsed(record["evidence"])))
            known.add(run["id"])
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


def _cancelled_by_user(engine: Engine, run_id: str) -> bool:
    record = runs.get_run(engine, run_id)
    return record is not None and record.status is RunStatus.cancelled


def _push(store: ArtifactStore, run_id: str, checkpoints: Path) -> None:
    store.push_checkpoints(run_id, checkpoints)


def _sweep_staging(engine: Engine, home: Path) -> None:
    """Remove staging folders that no running run owns (left by workers that were killed)."""
    root = home / "staging"
    if not root.is_dir():
        return
    running = {r.id[:8] for r in runs.list_runs(engine, status=RunStatus.running.value, limit=100_000)}
    for folder in root.iterdir():
        parts = folder.name.split("-")
        if folder.is_dir() and len(parts) >= 2 and parts[0] in ("run", "ckpt") and parts[1] not in running:
            shutil.rmtree(folder, ignore_errors=True)


def _clean(*folders: Path) -> None:
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def _staging_root(home: Path) -> Path:
    root = home / "staging"
    root.mkdir(parents=True, exist_ok=True)
    return root


def _verdict(engine: Engine, run: Run, metrics: dict[str, Any], result: AnalyzerResult | None,
             not_runnable: str | None) -> Verdict | None:
    claim = runs.claim_for_key(engine, run.claim_key) if run.claim_key else None
    if not_runnable is not None:
        return Verdict(kind=VerdictKind.not_runnable, reason=not_runnable)
    if claim is None:
        return None
    scale = result.scale if result is not None else EvidenceScale(name="unknown")
    if run.group_id is None:
        return evaluate(claim, [metrics], scale)
    earlier, total = runs.group_results(engine, run.group_id)
    results = [m for m in earlier if m] + [metrics]  # a not-runnable sibling left no metrics
    verdict = evaluate(claim, results, scale)
    if len(results) < total:
        verdict = verdict.model_copy(update={"reason": f"{verdict.reason} ({len(results)} of {total} seeds so far)"})
    return verdict


def work(engine: Engine, home: Path, *, once: bool = True, poll: float = 1.0,
         idle_timeout: float | None = None, heartbeat_interval: float = 2.0, store: ArtifactStore | None = None,
         device: str | None = None) -> dict[str, int]:
    """Process queued runs. ``once``: stop when the queue is empty. Returns counts per final status.

    ``store`` is where evidence files go (default: the KB home); ``device`` ('cuda', 'cpu') takes only
    runs that ask for it, e.g. a worker on a GPU machine that serves a shared index.
    """
    me = worker_id()
    recovered = runs.recover_stale(engine)
    if recovered:
        log.info("re-queued %d run(s) left by workers that stopped: %s", len(recovered), ", ".join(recovered))
    _sweep_staging(engine, home)
    counts: dict[str, int] = {}
    idle_since = time.monotonic()
    while True:
        run = runs.claim_next(engine, me, device=device)
        if run is None:
            if once or (idle_timeout is not None and time.monotonic() - idle_since > idle_timeout):
                return counts
            time.sleep(poll)
            continue
        log.info("run %s: %s%s on %s", run.id[:12], run.analyzer, f" for {run.claim_key}" if run.claim_key else "",
                 run.device or "cpu")
        started = time.perf_counter()
        try:
            status = execute(engine, home, run, heartbeat_interval=heartbeat_interval, store=store)
        except Exception as exc:  # noqa: BLE001 - the worker outlives any one run (a lost database connection, ...)
            log.error("run %s: %s: %s", run.id[:12], type(exc).__name__, exc)
            with contextlib.suppress(Exception):
                runs.finish(engine, run.id, RunStatus.failed, error=f"{type(exc).__name__}: {exc}", owner=me)
            status = RunStatus.failed
        log.info("run %s: %s in %.1f s", run.id[:12], status.value, time.perf_counter() - started)
        counts[status.value] = counts.get(status.value, 0) + 1
        idle_since = time.monotonic()
