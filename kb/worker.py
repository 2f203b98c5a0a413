"""Execute queued runs: call the analyzer, store its artifacts content-addressed, record evidence.

A worker loops: recover runs abandoned by dead workers, claim the next run, run its analyzer in a
staging folder while a heartbeat thread keeps the run alive and relays progress, then move the
artifacts into ``<KB home>/evidence/<sha256>/`` and add the evidence (metrics, provenance, verdict)
in one transaction. Nothing earlier is touched when a run fails.
"""

from __future__ import annotations

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

from analyzers import registry
from analyzers.base import AnalyzerResult, Cancelled, NotRunnable, RunContext
from kb import __version__, runs
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

    def __enter__(self) -> _GpuClock:
        if self.device is not None and _cuda_available():
            import torch

            torch.cuda.reset_peak_memory_stats(self.device)
            self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def reading(self) -> dict[str, float]:
        """``gpu_seconds`` and ``gpu_peak_memory_gb`` when the run used a GPU."""
        if self.device is None or not _cuda_available():
            return {}
        import torch

        torch.cuda.synchronize(self.device)
        return {"gpu_seconds": time.perf_counter() - self.start,
                "gpu_peak_memory_gb": torch.cuda.max_memory_allocated(self.device) / 2**30}


def _cuda_available() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - provenance must never fail a run
        return False


def store_artifacts(home: Path, staging: Path) -> list[str]:
    """Move staged files into content-addressed folders; returns paths relative to the KB home.

    A file goes to ``evidence/<sha256[:2]>/<sha256>/<its path in the staging folder>``, so names stay
    readable (``checkpoints/depth-04/config.json``) and identical files are stored once. Files are
    hashed in chunks and moved, never read whole: checkpoints can be gigabytes.
    """
    stored = []
    for path in sorted(p for p in staging.rglob("*") if p.is_file()):
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        sha = digest.hexdigest()
        target = home / "evidence" / sha[:2] / sha / path.relative_to(staging)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)  # staging lives under the KB home: same filesystem, an atomic rename
        stored.append(str(target.relative_to(home)))
    return stored


class _Heartbeat(threading.Thread):
    """Keeps a run's heartbeat fresh and notices cancellation, off the analyzer's thread."""

    def __init__(self, engine: Engine, run_id: str, interval: float = 2.0) -> None:
        super().__init__(daemon=True)
        self.engine, self.run_id, self.interval = engine, run_id, interval
        self.progress: tuple[float, str] | None = None
        self.cancelled = threading.Event()
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            self.beat()

    def beat(self) -> None:
        fraction, message = self.progress or (None, None)
        if runs.heartbeat(self.engine, self.run_id, fraction, message) == RunStatus.cancelled.value:
            self.cancelled.set()


def execute(engine: Engine, home: Path, run: Run, *, heartbeat_interval: float = 2.0) -> RunStatus:
    """Run one claimed run to the end and record its outcome."""
    started = utcnow()
    wall0 = time.perf_counter()
    params: dict[str, Any] = json.loads(run.params_json)
    beat = _Heartbeat(engine, run.id, heartbeat_interval)
    beat.start()
    staging = Path(tempfile.mkdtemp(prefix=f"run-{run.id[:8]}-", dir=_staging_root(home)))
    log_lines: list[str] = []

    def progress(fraction: float, message: str) -> None:
        beat.progress = (fraction, message)
        log_lines.append(f"{utcnow().isoformat()} {fraction:5.1%} {message}")

    gpu = _GpuClock(run.device or "cpu")
    try:
        analyzer = registry.get(run.analyzer)
        validated = analyzer.params_for(params)
        analyzer.preflight(validated)
        ctx = RunContext(out_dir=staging, progress=progress, is_cancelled=beat.cancelled.is_set)
        with gpu:
            result: AnalyzerResult | None = analyzer.run(validated, ctx)
        not_runnable: str | None = None
    except NotRunnable as exc:
        result, not_runnable = None, str(exc)
    except Cancelled:
        beat.stopped.set()
        runs.finish(engine, run.id, RunStatus.cancelled)
        shutil.rmtree(staging, ignore_errors=True)
        return RunStatus.cancelled
    except Exception as exc:  # noqa: BLE001 - any analyzer failure becomes a failed run, never lost evidence
        beat.stopped.set()
        error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}"
        runs.finish(engine, run.id, RunStatus.failed, error=error)
        shutil.rmtree(staging, ignore_errors=True)
        return RunStatus.failed
    finally:
        beat.stopped.set()

    if beat.cancelled.is_set():
        shutil.rmtree(staging, ignore_errors=True)
        return RunStatus.cancelled
    (staging / "log.txt").write_text("\n".join(log_lines) + "\n", encoding="utf-8")
    metrics = result.model_dump(mode="json") if result is not None else {}
    if result is not None:
        (staging / "metrics.json").write_text(json.dumps(metrics, indent=2, default=str), encoding="utf-8")
    artifacts = store_artifacts(home, staging)
    shutil.rmtree(staging, ignore_errors=True)
    analyzer_version = getattr(registry.load_all().get(run.analyzer), "version", "1")
    gpu_reading = gpu.reading() if result is not None else {}
    recorded: dict[str, Any] = {
        "kb_version": __version__, "git_commit": _git_commit(), "analyzer": run.analyzer,
        "analyzer_version": analyzer_version, "gpu_seconds": gpu_reading.get("gpu_seconds"),
        "params_hash": runs.params_hash(params), "python": platform.python_version(), "packages": _packages(),
        "device": run.device or "cpu", "gpu_name": _gpu_name(run.device or "cpu"), "seed": params.get("seed"),
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
    runs.finish(engine, run.id, RunStatus.succeeded, evidence=evidence)
    return RunStatus.succeeded


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
         idle_timeout: float | None = None, heartbeat_interval: float = 2.0) -> dict[str, int]:
    """Process queued runs. ``once``: stop when the queue is empty. Returns counts per final status."""
    me = worker_id()
    recovered = runs.recover_stale(engine)
    if recovered:
        log.info("re-queued %d run(s) left by workers that stopped: %s", len(recovered), ", ".join(recovered))
    counts: dict[str, int] = {}
    idle_since = time.monotonic()
    while True:
        run = runs.claim_next(engine, me)
        if run is None:
            if once or (idle_timeout is not None and time.monotonic() - idle_since > idle_timeout):
                return counts
            time.sleep(poll)
            continue
        log.info("run %s: %s%s on %s", run.id[:12], run.analyzer, f" for {run.claim_key}" if run.claim_key else "",
                 run.device or "cpu")
        started = time.perf_counter()
        status = execute(engine, home, run, heartbeat_interval=heartbeat_interval)
        log.info("run %s: %s in %.1f s", run.id[:12], status.value, time.perf_counter() - started)
        counts[status.value] = counts.get(status.value, 0) + 1
        idle_since = time.monotonic()
