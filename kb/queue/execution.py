"""Execute queued runs: call the analyzer, store its artifacts content-addressed, record evidence.

A worker loops: reclaim runs whose worker died (at every poll, not only at start-up), claim the next
run, run its analyzer in a staging folder while a heartbeat thread renews the run's lease and relays
progress, then move the artifacts into the store (``evidence/<sha256>/...``), keep the outcome's record
there (``kb.queue.records``) and add the evidence (metrics, provenance, verdict) in one transaction,
conditional on the attempt still holding the run. Database outages are waited out (``kb.queue.retry``);
nothing earlier is touched when a run fails.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import json
import logging
import os
import platform
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import traceback
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from analyzers import registry
from analyzers.base import AnalyzerResult, Cancelled, NotRunnable, cuda_available, result_record
from analyzers.files import atomic_write_bytes
from kb import __version__
from kb.disk import disk_full_message, full_path, is_disk_full
from kb.evidence import estimates
from kb.evidence.artifact_store import ArtifactStore
from kb.evidence.claim_states import group_results
from kb.evidence.verdicts import evaluate
from kb.index.database import Evidence, Run, utcnow
from kb.index.indexing import claim_for_key
from kb.queue import records, retry
from kb.queue import store as queue_store
from kb.queue.identity import IndexIdentity
from schemas import EvidenceScale, Provenance, RunStatus, Verdict, VerdictKind

if TYPE_CHECKING:
    from kb.queue.executors.base import JobConfig

log = logging.getLogger("kb.worker")
#: The run's log so far, kept beside its checkpoint, so ``log.txt`` keeps every attempt's lines.
ATTEMPT_LOG = ".kb-attempt-log.txt"
_PACKAGES = ("torch", "transformers", "numpy", "pydantic", "sqlmodel")


def worker_id() -> str:
    """A readable id of this worker process."""
    return f"{socket.gethostname()}:{os.getpid()}"


@functools.cache
def git_commit() -> str | None:
    """The commit of the kb checkout (provenance of its evidence and bundles), or None outside a git
    checkout."""
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
    """Seconds the run held the GPU (analyzer time, synchronized) and its peak memory; nothing on a CPU
    run."""

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
        return cuda_available()  # the one CUDA question (a CPU build answers without importing torch)
    except Exception:  # noqa: BLE001 - provenance must never fail a run
        return False


class Stop:
    """A request to stop a worker (SIGTERM, SIGINT): it takes no more runs, lets the running one reach its
    next checkpoint or end within ``grace`` seconds, stores what finished and hands the rest back to the
    queue, so a peer takes it at once. A second signal shortens the grace to nothing."""

    def __init__(self, grace: float = 30.0) -> None:
        self.grace = grace
        self.requested = threading.Event()
        self.at = float("inf")  # monotonic time of the request

    def request(self, why: str) -> None:
        """Ask the worker to stop (what the signal handler calls); a second request ends the grace period."""
        if self.requested.is_set():
            self.grace = 0.0
            log.warning("%s again: handing the running run back now", why)
            return
        self.at = time.monotonic()
        self.requested.set()
        log.warning(
            "%s: taking no more runs; the running one has %.0f s to reach its next checkpoint or end, "
            "then goes back to the queue",
            why,
            self.grace,
        )

    def overdue(self) -> bool:
        """Whether the grace period of a request is over."""
        return self.requested.is_set() and time.monotonic() - self.at >= self.grace

    def install(self) -> None:
        """Make SIGTERM and SIGINT request this stop (main thread only; elsewhere Python refuses handlers)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda number, _frame: self.request(signal.Signals(number).name))


class _Heartbeat(threading.Thread):
    """Renews a run's lease (and relays its progress) off the analyzer's thread; notices cancellation.

    It beats until the outcome is recorded, uploads included, so a long upload or a database outage
    while finishing never lets the lease lapse while the worker is alive.
    """

    def __init__(self, engine: Engine, run_id: str, interval: float = 2.0, attempt: int | None = None,
                 lease: dt.timedelta = queue_store.LEASE, reclaimer: Reclaimer | None = None,
                 stop: Stop | None = None) -> None:
        super().__init__(daemon=True, name=f"heartbeat-{run_id[:8]}")
        self.engine, self.run_id, self.interval, self.attempt, self.lease = (
            engine,
            run_id,
            interval,
            attempt,
            lease,
        )
        self.reclaimer, self.stop = reclaimer, stop
        self.progress: tuple[float, str] | None = None
        self.cancelled = threading.Event()
        self.stopped = threading.Event()
        self.analyzing = threading.Event()  # set while the analyzer runs (what a stop may cut short)
        self.folders: list[Path] = []

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            self.beat()
            if self.stop is not None and self.analyzing.is_set() and self.stop.overdue() \
                    and time.monotonic() - self.stop.at >= self.stop.grace + 2 * self.interval:
                self.abandon()

    def abandon(self) -> None:
        """The analyzer ignored a stop past its grace (no progress report, no checkpoint): hand the run back,
        remove this attempt's staging and end the process, as its supervisor asked."""
        log.warning("run %s: no checkpoint or end within the %.0f s grace period; handed back to the queue",
                    self.run_id[:12], self.stop.grace if self.stop else 0.0)
        with contextlib.suppress(Exception):
            _hand_back(self.engine, self.run_id, self.attempt or 0)
        _clean(*self.folders)
        logging.shutdown()
        os._exit(0)

    def beat(self) -> None:
        tracker = retry.outage(self.engine)
        fraction, message = self.progress or (None, None)
        try:
            status = queue_store.heartbeat(self.engine, self.run_id, fraction, message, attempt=self.attempt,
                                           lease=self.lease)
        except Exception as exc:  # noqa: BLE001 - the thread must outlive any one beat; the next one retries
            if retry.is_transient(exc):
                tracker.failed(f"renewing the lease of run {self.run_id[:12]}", exc)
            else:
                log.warning(
                    "run %s: heartbeat failed (%s); retrying", self.run_id[:12], str(exc).splitlines()[0]
                )
            return
        tracker.answered()
        if self.reclaimer is not None:  # a worker busy with a long run still frees its dead peers' runs
            self.reclaimer.maybe(patient=False)
        # Cancelled by a user, or lost: reclaimed after this worker looked dead and taken by another attempt.
        # Either way the analyzer stops at its next progress report and this worker records nothing.
        if status in (RunStatus.cancelled.value, queue_store.LOST):
            self.cancelled.set()


def execute(engine: Engine, config: JobConfig, run: Run, *, home: Path | None = None,
            store: ArtifactStore | None = None, heartbeat_interval: float = 2.0,
            reclaimer: Reclaimer | None = None, stop: Stop | None = None) -> RunStatus:
    """Run one claimed run to the end under ``config`` (offline, caches, lease, progress interval) and record
    its outcome (in the store, then in the database).

    The analyzer works in staging folders under ``home`` (default: the config's KB home; a Slurm job's own on
    its node), named by run and attempt; its files then go to ``store`` (default: the config's store). A
    checkpoint left in the store by an earlier attempt of this run (a killed or preempted job) is restored
    into ``ctx.checkpoint_dir`` first; a store that cannot be reached then fails the run with the reason.
    Whatever happens, the heartbeat thread stops and the staging folders go before this returns. With
    ``stop`` requested, the analyzer stops at its next checkpoint (or progress report past the grace period)
    and the run goes back to the queue (``RunStatus.queued``); a result that is in is stored first.
    """
    home = home or config.home
    store = store or config.store(home)
    beat = _Heartbeat(engine, run.id, heartbeat_interval, attempt=run.attempts, lease=config.lease,
                      reclaimer=reclaimer, stop=stop)
    beat.start()
    folders: list[Path] = []
    try:
        folders = [_staging_dir(home, run, "run"), _staging_dir(home, run, "ckpt")]
        beat.folders = folders
        return _Attempt(engine, config, home, run, store, beat, folders[0], folders[1])()
    finally:
        beat.stopped.set()
        beat.join(timeout=heartbeat_interval + 1)
        _clean(*folders)


class _Attempt:
    """One attempt at a claimed run: restore its checkpoints, run its analyzer in ``staging`` and record the
    outcome. It keeps what the analyzer's callbacks share while it runs: the attempt's log lines, the timed
    stages behind the progress bar and the time left, and whether a checkpoint reached the store after a stop
    was requested."""

    def __init__(self, engine: Engine, config: JobConfig, home: Path, run: Run, store: ArtifactStore,
                 beat: _Heartbeat, staging: Path, checkpoints: Path) -> None:
        self.engine, self.config, self.home, self.run, self.store = engine, config, home, run, store
        self.beat, self.staging, self.checkpoints = beat, staging, checkpoints
        self.started = utcnow()
        self.wall0 = time.perf_counter()
        self.params: dict[str, Any] = json.loads(run.params_json)
        slurm_job = f" (Slurm job {os.environ['SLURM_JOB_ID']})" if "SLURM_JOB_ID" in os.environ else ""
        self.log_lines = [
            f"{utcnow().isoformat()} attempt {run.attempts} on {socket.gethostname()}{slurm_job}"
        ]
        # The run's stages, timed; their estimate asked for at the first progress report (a run that never
        # reports, like most quick ones, pays nothing for it). The bar and the time left every surface shows
        # come from it.
        self.clock = estimates.StagedClock()
        self.asked: list[float | None] = []  # the estimate at the run's start, once asked for
        self.loads: list[str] = []  # the libraries this process lacked at the run's start: first-use stages
        self.checkpointed = threading.Event()  # a checkpoint reached the store after a stop was requested
        self.gpu = _GpuClock(run.device or "cpu")

    def progress(self, fraction: float, message: str) -> None:
        """The analyzer's progress report: relayed by the heartbeat with the time left, and logged."""
        elapsed = time.perf_counter() - self.wall0
        if not self.asked:
            self.asked.append(None)
            with contextlib.suppress(Exception):  # an estimate only words the messages: it never fails a run
                analyzer = registry.get(self.run.analyzer)
                found = estimates.estimate(self.engine, analyzer, analyzer.params_for(self.params),
                                           cache_dir=self.config.cache_for(self.home), loading=self.loads)
                self.clock.expect(found)
                self.asked[0] = found.seconds
        shown, left = self.clock.update(fraction, elapsed)
        self.beat.progress = (shown, estimates.with_left(message, left))
        self.log_lines.append(f"{utcnow().isoformat()} {fraction:5.1%} {message}")

    def on_stage(self, name: str, until: float) -> None:
        """The analyzer entered a stage that lasts until ``until`` of the progress."""
        self.clock.enter(name, until, time.perf_counter() - self.wall0)
        self.log_lines.append(f"{utcnow().isoformat()} stage: {name}")

    def timing(self) -> tuple[float, dict[str, float], float | None]:
        """Seconds so far, seconds per stage, and the estimate asked for at the start (None if never)."""
        elapsed = time.perf_counter() - self.wall0
        return elapsed, self.clock.durations(elapsed), self.asked[0] if self.asked else None

    def on_checkpoint(self) -> None:
        """The analyzer wrote a checkpoint: push it to the store."""
        # The log so far travels with the checkpoint: the attempt that resumes from it keeps it (log.txt).
        atomic_write_bytes(self.checkpoints / ATTEMPT_LOG, ("\n".join(self.log_lines) + "\n").encode())
        _push(self.store, self.run.id, self.checkpoints)
        if self.beat.stop is not None and self.beat.stop.requested.is_set():
            self.checkpointed.set()

    def stop_now(self) -> bool:
        """Whether the analyzer should stop: cancelled, or a stop requested and checkpointed (or overdue)."""
        stop = self.beat.stop
        return self.beat.cancelled.is_set() or (stop is not None and stop.requested.is_set()
                                                and (self.checkpointed.is_set() or stop.overdue()))

    def restore_checkpoints(self) -> None:
        """Bring back what an earlier attempt checkpointed to the store, and the lines it logged."""
        run, checkpoints = self.run, self.checkpoints
        try:
            restored = self.store.pull_checkpoints(run.id, checkpoints)
        except Exception as exc:  # an unreachable store fails this run, not the worker
            raise StoreUnreachable(
                f"could not restore the run's checkpoints from the artifact store {self.store.url} "
                f"({type(exc).__name__}: {exc}); retry the run once the store answers"
            ) from exc
        earlier = checkpoints / ATTEMPT_LOG
        if earlier.is_file():  # the earlier attempts' log, up to their last checkpoint (not the analyzer's)
            self.log_lines[:0] = earlier.read_text(encoding="utf-8").splitlines()
            earlier.unlink()
            restored -= 1
        if restored:
            self.log_lines.append(
                f"{utcnow().isoformat()} restored {restored} checkpoint file(s) of an earlier attempt"
            )

    def analyze(self) -> tuple[AnalyzerResult | None, str | None]:
        """Run the analyzer; its result, or None and the reason it could not run."""
        try:
            self.restore_checkpoints()
            analyzer = registry.get(self.run.analyzer)
            validated = analyzer.params_for(self.params)
            analyzer.preflight(validated)
            self.loads[:] = estimates.missing_libraries(analyzer)
            estimates.load_libraries(self.loads, self.clock, lambda: time.perf_counter() - self.wall0)
            ctx = self.config.run_context(
                self.staging, self.progress, home=self.home, is_cancelled=self.stop_now,
                checkpoint_dir=self.checkpoints, on_checkpoint=self.on_checkpoint, on_stage=self.on_stage,
            )  # fmt: skip
            self.beat.analyzing.set()
            try:
                with self.gpu:
                    result: AnalyzerResult | None = analyzer.run(validated, ctx)
            finally:
                self.beat.analyzing.clear()
        except NotRunnable as exc:
            return None, str(exc)
        return result, None

    def __call__(self) -> RunStatus:
        """Run the attempt to its outcome: succeeded, failed, cancelled, or handed back (queued)."""
        engine, run, store = self.engine, self.run, self.store
        try:
            result, not_runnable = self.analyze()
        except Cancelled:
            beat = self.beat
            if not beat.cancelled.is_set() and beat.stop is not None and beat.stop.requested.is_set():
                return _hand_back(engine, run.id, run.attempts, checkpointed=self.checkpointed.is_set())
            return _conclude_cancelled(engine, store, run)
        except Exception as exc:  # noqa: BLE001 - an analyzer failure fails the run, never loses evidence
            if is_disk_full(exc):
                error = _out_of_room(exc, run, self.staging, self.checkpoints)
            else:
                error = (
                    str(exc)
                    if isinstance(exc, StoreUnreachable)
                    else f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}"
                )
            _conclude(engine, store, run, RunStatus.failed, error=error, timing=self.timing())
            return RunStatus.failed
        if self.beat.cancelled.is_set():
            return _conclude_cancelled(engine, store, run)
        if not_runnable is None and not isinstance(result, AnalyzerResult):
            # No result, whatever files it left (a metrics.json of its own, JSON or not): nothing is evidence.
            error = (
                f"invalid result: analyzer {run.analyzer} returned {type(result).__name__}, not its result "
                f"({registry.get(run.analyzer).Result.__name__}); nothing it wrote was kept as evidence"
            )
            log.error("run %s: %s", run.id[:12], error)
            _clean(self.staging)
            _conclude(engine, store, run, RunStatus.failed, error=error)
            return RunStatus.failed
        return self.record(result, not_runnable)

    def record(self, result: AnalyzerResult | None, not_runnable: str | None) -> RunStatus:
        """Store the run's files and record its evidence, if this attempt still holds the run."""
        engine, run, store = self.engine, self.run, self.store
        try:
            evidence = _evidence(engine, run, store, self.staging, params=self.params, result=result,
                                 not_runnable=not_runnable, log_lines=self.log_lines, gpu=self.gpu,
                                 started=self.started, wall0=self.wall0)
            recorded = _conclude(
                engine, store, run, RunStatus.succeeded, evidence=evidence, timing=self.timing()
            )
        except Exception as exc:  # noqa: BLE001 - a failure after the analyzer (verdict, storage) ends it
            error = (
                _out_of_room(exc, run, self.staging, self.checkpoints)
                if is_disk_full(exc)
                else f"after the analyzer returned: {type(exc).__name__}: "
                     f"{exc}\n{traceback.format_exc(limit=8)}"
            )
            log.error("run %s: %s", run.id[:12], error.splitlines()[0])
            _conclude(engine, store, run, RunStatus.failed, error=error)
            return RunStatus.failed
        if not recorded:
            # Cancelled while its files were stored, or lost to another attempt: either way its files are no
            # evidence. A cancel by its user is recorded as such (the rebuild restores it cancelled).
            _best_effort(f"removing the files of run {run.id[:12]}", _drop_unreferenced, engine, store,
                         json.loads(evidence.artifacts_json))
            if retry.retrying(
                engine, f"reading run {run.id[:12]}", lambda: _cancelled_by_user(engine, run.id), write=False
            ):
                return _conclude_cancelled(engine, store, run)
            log.warning("run %s: finished here but attempt %d no longer holds it; its result is not recorded "
                        "twice", run.id[:12], run.attempts)
            return RunStatus.cancelled
        return RunStatus.succeeded


def _drop_unreferenced(engine: Engine, store: ArtifactStore, keys: list[str]) -> None:
    """Remove the stored files of a run that left no evidence, except those other evidence refers to (a key is
    content-addressed: an identical file of another run is the same object)."""
    with Session(engine) as session:
        kept = {
            key
            for listed in session.exec(select(Evidence.artifacts_json)).all()
            for key in json.loads(listed)
        }
    for key in keys:
        if key not in kept:
            store.remove(key)


def _hand_back(engine: Engine, run_id: str, attempt: int, *, checkpointed: bool = False) -> RunStatus:
    """Give a run this worker was asked to stop back to the queue at once (no death: no attempt counted
    against it), so a peer takes it now instead of after its lease; its checkpoint is in the store."""
    why = "its worker was stopped" + (" after a checkpoint" if checkpointed else "")
    status = retry.retrying(engine, f"handing back run {run_id[:12]}",
                            lambda: queue_store.release(engine, run_id, attempt, why, voluntary=True))
    log.info("run %s: handed back to the queue (%s)", run_id[:12], why)
    return status or RunStatus.queued


def _out_of_room(exc: BaseException, run: Run, staging: Path, checkpoints: Path) -> str:
    """A run that hit a full disk: its partial output goes at once (the room it took lets the failure be
    recorded), and the error is one line saying where the disk is full."""
    where = full_path(exc, staging)
    _clean(staging, checkpoints)
    message = disk_full_message(where)
    log.error("run %s: %s", run.id[:12], message)
    return message


class StoreUnreachable(Exception):
    """The artifact store did not answer when a run needed it (its checkpoints could not be restored)."""


def _conclude(engine: Engine, store: ArtifactStore, run: Run, status: RunStatus, *, error: str | None = None,
              evidence: Evidence | None = None,
              timing: tuple[float, dict[str, float], float | None] | None = None) -> bool:
    """Record an attempt's final outcome: its record in the store first, then the database, retried until
    the database answers. Returns False when another attempt holds the run (its record is taken back).

    The record is written only while this attempt holds the run (the fence, read just before), so a worker
    that lost its lease leaves none; a store that is down gets it from the spool when it answers again.
    """
    attempt = run.attempts
    holds = retry.retrying(engine, f"reading run {run.id[:12]}",
                           lambda: queue_store.holds(engine, run.id, attempt, status), write=False)
    written = holds and _keep_outcome(
        store, run, status, attempt, error=error, evidence=evidence, timing=timing
    )

    def finish() -> bool:
        # A fresh evidence row per try: a try whose commit failed leaves its row object spent.
        fresh = Evidence(**evidence.model_dump(exclude={"id"})) if evidence is not None else None
        return queue_store.finish(engine, run.id, status, error=error, evidence=fresh, attempt=attempt,
                                  timing=timing)

    recorded = retry.retrying(engine, f"recording the outcome of run {run.id[:12]}", finish)
    if not recorded and written:
        _best_effort(
            f"taking back the record of run {run.id[:12]}",
            records.remove_outcome,
            store,
            run.id,
            attempt,
            records.spool_dir(store.home),
        )
    if recorded and status is not RunStatus.failed:
        # Done (or cancelled by its user): the evidence keeps what it needs. A failed run keeps its
        # checkpoints for a retry; a lost one for the attempt that took it over.
        _best_effort(f"dropping the checkpoints of run {run.id[:12]}", store.drop_checkpoints, run.id)
    return recorded


def _keep_outcome(store: ArtifactStore, run: Run, status: RunStatus, attempt: int, *,
                  error: str | None = None, evidence: Evidence | None = None,
                  timing: tuple[float, dict[str, float], float | None] | None = None) -> bool:
    """Write an attempt's outcome record to the store, or to the home's spool while the store is down (it goes
    up when the store answers: ``records.flush_spool``); whether it was kept."""
    try:
        records.write_outcome(store, run, status, attempt=attempt, error=error, evidence=evidence,
                              spool=records.spool_dir(store.home), timing=timing)
    except records.Spooled as spooled:
        log.warning(
            "run %s: the artifact store %s does not answer; its %s outcome is %s",
            run.id[:12],
            store.url,
            status.value,
            spooled,
        )
    except Exception as exc:  # noqa: BLE001 - the spool failed (a full disk): the index has the outcome
        log.warning(
            "run %s: could not keep its %s outcome (%s: %s); the index has it",
            run.id[:12],
            status.value,
            type(exc).__name__,
            str(exc).splitlines()[0] if str(exc) else "",
        )
        return False
    return True


def cancel(engine: Engine, store: ArtifactStore, run_id: str) -> bool:
    """Cancel a queued or running run; False when it had ended already (or no run has this id).

    A running run's worker records the cancelled outcome when its analyzer stops (``_conclude_cancelled``). A
    queued run has no worker, so its outcome is recorded here the same way: the store's record first (of the
    attempt it did not start: ``attempts`` as it stands), then the database; the record is taken back when the
    database refuses (the run ended meanwhile), so ``kb index --rebuild`` restores it cancelled, never queued.
    """
    with Session(engine) as session:
        run = session.get(Run, run_id)
    if run is None or run.status != RunStatus.queued.value:
        return queue_store.cancel(engine, run_id)
    run.message = "cancelled"  # as queue_store.cancel writes it
    attempt = run.attempts or 0
    written = _keep_outcome(store, run, RunStatus.cancelled, attempt)
    cancelled = queue_store.cancel(engine, run_id)
    if not cancelled and written:
        _best_effort(f"taking back the record of run {run_id[:12]}", records.remove_outcome, store, run_id,
                     attempt, records.spool_dir(store.home))
    if cancelled:  # checkpoints an earlier, lost attempt left
        _best_effort(f"dropping the checkpoints of run {run_id[:12]}", store.drop_checkpoints, run_id)
    return cancelled


def _conclude_cancelled(engine: Engine, store: ArtifactStore, run: Run) -> RunStatus:
    """The analyzer stopped because its run was cancelled (recorded as such) or lost (nothing recorded)."""
    cancelled = retry.retrying(
        engine, f"reading run {run.id[:12]}", lambda: _cancelled_by_user(engine, run.id), write=False
    )
    if cancelled:
        _conclude(engine, store, run, RunStatus.cancelled)
    return RunStatus.cancelled


def _best_effort(what: str, action: Any, *args: Any) -> None:
    try:
        action(*args)
    except Exception as exc:  # noqa: BLE001 - housekeeping must not change a recorded outcome
        log.warning("%s failed (%s: %s)", what, type(exc).__name__, exc)


def _evidence(engine: Engine, run: Run, store: ArtifactStore, staging: Path, *, params: dict[str, Any],
              result: AnalyzerResult | None, not_runnable: str | None, log_lines: list[str], gpu: _GpuClock,
              started: Any, wall0: float) -> Evidence:
    """Store the run's files; return its evidence: metrics, provenance, verdict."""
    (staging / "log.txt").write_text("\n".join(log_lines) + "\n", encoding="utf-8")
    # strict JSON, every metric checked: a value of the wrong type fails the run here ("invalid result: ...")
    metrics = result_record(result) if result is not None else {}
    if result is not None:
        (staging / "metrics.json").write_text(
            json.dumps(metrics, indent=2, allow_nan=False), encoding="utf-8"
        )
    artifacts = store.put_tree(staging)
    analyzer_version = getattr(registry.load_all().get(run.analyzer), "version", "1")
    gpu_reading = gpu.reading() if result is not None else {}
    recorded: dict[str, Any] = {
        "kb_version": __version__,
        "git_commit": git_commit(),
        "analyzer": run.analyzer,
        "analyzer_version": analyzer_version,
        "gpu_seconds": gpu_reading.get("gpu_seconds"),
        "params_hash": queue_store.params_hash(params),
        "python": platform.python_version(),
        "packages": _packages(),
        "device": run.device or "cpu",
        "gpu_name": _gpu_name(run.device or "cpu"),
        "seed": params.get("seed"),
        "host": socket.gethostname(),
        "scheduler_job_id": os.environ.get("SLURM_JOB_ID"),
        "started_at": started,
        "finished_at": utcnow(),
        "wall_seconds": time.perf_counter() - wall0,
    }
    # What the analyzer knows first-hand (the device it really used, weight and data hashes) wins.
    analyzer_said = result.provenance if result is not None else {}
    recorded.update(
        {k: v for k, v in analyzer_said.items() if k in Provenance.model_fields and v is not None}
    )
    extra = {k: v for k, v in analyzer_said.items() if k not in Provenance.model_fields}
    if "gpu_peak_memory_gb" in gpu_reading:
        extra["gpu_peak_memory_gb"] = gpu_reading["gpu_peak_memory_gb"]
    recorded["extra"] = extra or None
    provenance = Provenance.model_validate({k: v for k, v in recorded.items() if v is not None})
    verdict = retry.retrying(engine, f"judging run {run.id[:12]}",
                             lambda: _verdict(engine, run, metrics, result, not_runnable), write=False)
    return Evidence(
        run_id=run.id,
        claim_key=run.claim_key,
        analyzer=run.analyzer,
        metrics_json=json.dumps(metrics, default=str),
        artifacts_json=json.dumps(artifacts),
        provenance_json=provenance.model_dump_json(),
        verdict_json=verdict.model_dump_json() if verdict else None,
        verdict_kind=verdict.kind.value if verdict else None,
        group_id=run.group_id,
        binding_hash=run.binding_hash,
        analyzer_version=analyzer_version,
        kb_version=__version__,
    )


def _cancelled_by_user(engine: Engine, run_id: str) -> bool:
    record = queue_store.get_run(engine, run_id)
    return record is not None and record.status is RunStatus.cancelled


def _push(store: ArtifactStore, run_id: str, checkpoints: Path) -> None:
    store.push_checkpoints(run_id, checkpoints)


def _staging_dir(home: Path, run: Run, kind: str) -> Path:
    """A fresh staging folder of this attempt of the run: ``<kind>-<run id>-a<attempt>-<random>``."""
    root = home / "staging"
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{kind}-{run.id}-a{run.attempts}-", dir=root))


def _sweep_staging(engine: Engine, home: Path) -> None:
    """Remove staging folders whose attempt no longer holds a live lease (left by workers that were killed).

    The folders are listed before the runs are read: a folder exists only once its claim is committed, so
    a run claimed meanwhile is seen running and its folder kept.
    """
    root = home / "staging"
    if not root.is_dir():
        return
    folders = [f for f in root.iterdir() if f.is_dir() and f.name.split("-", 1)[0] in ("run", "ckpt")]
    if not folders:
        return
    with Session(engine) as session:
        running = session.exec(select(Run).where(Run.status == RunStatus.running.value)).all()
    now = queue_store.database_time(engine)
    for folder in folders:
        parts = folder.name.split("-")
        if len(parts) < 3:
            continue
        # Folders of older kb versions carry an 8-character id prefix and no attempt.
        attempt = int(parts[2][1:]) if parts[2][:1] == "a" and parts[2][1:].isdigit() else None
        holder = next(
            (r for r in running if r.id == parts[1] or (len(parts[1]) == 8 and r.id.startswith(parts[1]))),
            None,
        )
        alive = holder is not None and (attempt is None or holder.attempts == attempt) \
            and not queue_store.lease_dead(holder, now=now)
        if not alive:
            shutil.rmtree(folder, ignore_errors=True)


#: An unfinished upload of evidence (whose key names no run) this old was left by a worker that died.
STALE_UPLOAD = dt.timedelta(hours=1)


def sweep_uploads(engine: Engine, store: ArtifactStore) -> int:
    """Abort the multipart uploads killed workers left in the store: a checkpoint's once its run has no live
    lease, any other once it is ``STALE_UPLOAD`` old (its key is content-addressed, not a run's). Returns how
    many were aborted."""
    pending = store.pending_uploads()
    if not pending:
        return 0
    with Session(engine) as session:
        running = {
            run.id: run for run in session.exec(select(Run).where(Run.status == RunStatus.running.value))
        }
    now = queue_store.database_time(engine)
    aborted = 0
    for key, upload_id, started in pending:
        parts = key.split("/")
        if parts[0] == "checkpoints" and len(parts) > 2:
            holder = running.get(parts[1])
            dead = holder is None or queue_store.lease_dead(holder, now=now)
        else:
            dead = started.astimezone(dt.UTC) < now - STALE_UPLOAD
        if dead:
            store.abort_upload(key, upload_id)
            aborted += 1
    if aborted:
        log.info("aborted %d unfinished upload(s) that stopped workers left in the store", aborted)
    return aborted


def _clean(*folders: Path) -> None:
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def _verdict(engine: Engine, run: Run, metrics: dict[str, Any], result: AnalyzerResult | None,
             not_runnable: str | None) -> Verdict | None:
    claim = claim_for_key(engine, run.claim_key) if run.claim_key else None
    if not_runnable is not None:
        return Verdict(kind=VerdictKind.not_runnable, reason=not_runnable)
    if claim is None:
        return None
    scale = result.scale if result is not None else EvidenceScale(name="unknown")
    if run.group_id is None:
        return evaluate(claim, [metrics], scale)
    earlier, total = group_results(engine, run.group_id)
    results = [m for m in earlier if m] + [metrics]  # a not-runnable sibling left no metrics
    verdict = evaluate(claim, results, scale)
    if len(results) < total:
        verdict = verdict.model_copy(
            update={"reason": f"{verdict.reason} ({len(results)} of {total} seeds so far)"}
        )
    return verdict


#: How often a busy worker looks for runs whose worker died (an idle one looks at every poll).
RECLAIM_EVERY = 1.0


def execute_by_id(
    engine: Engine, config: JobConfig, run_id: str, holder: str, *, home: Path | None = None
) -> str:
    """Claim run ``run_id`` for ``holder`` (e.g. 'ray:<worker>') and execute it: what every executor's job
    does.

    Returns the final status, or 'skipped' when the run was no longer queued (cancelled, or taken by another
    worker meanwhile): a run never executes twice.
    """
    # Retried through an outage in this thread: a claim whose answer was lost is then taken (or handed back).
    run = retry.retrying(engine, f"claiming run {run_id[:12]}", lambda: queue_store.claim_next(
        engine, f"{holder}:{worker_id()}", run_id=run_id, lease=config.lease))
    if run is None:
        return "skipped"
    return execute(engine, config, run, home=home).value


def work(
    engine: Engine,
    config: JobConfig,
    *,
    watched: frozenset[str],
    once: bool = True,
    poll: float = 1.0,
    idle_timeout: float | None = None,
    heartbeat_interval: float = 2.0,
    store: ArtifactStore | None = None,
    device: str | None = None,
    stop: Stop | None = None,
) -> dict[str, int]:
    """Process queued runs under ``config``. ``once``: stop when the queue is empty. Returns counts per final
    status. ``watched``: the executors that watch their own runs (``kb.queue.executors.reconciling``), whose
    runs this worker never reclaims.

    ``device`` ('cuda', 'cpu') takes only runs that ask for it, e.g. a worker on a GPU machine that serves a
    shared index. A database outage (restart, lost connection, lock) is waited out, never the end of the
    worker (``kb.queue.retry``). While it holds a long run, a second lane (``ShortLane``) takes short
    interactive ones beside it. ``stop`` (SIGTERM, SIGINT): no new runs; see ``Stop``.
    """
    me = worker_id()
    home, lease = config.home, config.lease
    store = store or config.store()
    heartbeat_interval = min(heartbeat_interval, lease.total_seconds() / 4)
    reclaimer = Reclaimer(engine, store, lease, watched, identity=IndexIdentity.of(engine), stop=stop)
    reclaimer.now()
    retry.retrying(engine, "sweeping staging folders", lambda: _sweep_staging(engine, home), write=False)
    _best_effort("sweeping unfinished uploads", sweep_uploads, engine, store)
    counts: dict[str, int] = {}
    idle_since = time.monotonic()
    lanes = config.short_lane and (os.cpu_count() or 1) >= 2
    while stop is None or not stop.requested.is_set():
        reclaimer.maybe()
        # A claim of an empty queue only reads: it must not end an outage of writes (a SQLite lock).
        run = retry.retrying(
            engine,
            "claiming a run",
            lambda: queue_store.claim_next(engine, me, device=device, lease=lease),
            write=False,
        )
        if run is None:
            if once or (idle_timeout is not None and time.monotonic() - idle_since > idle_timeout):
                return counts
            (stop.requested.wait(poll) if stop is not None else time.sleep(poll))
            continue
        lane = ShortLane(engine, config, store, me, device=device, poll=poll, counts=counts, stop=stop,
                         heartbeat_interval=heartbeat_interval, reclaimer=reclaimer) \
            if lanes and not queue_store.is_short(run) else None
        if lane is not None:
            lane.start()
        try:
            _work_one(
                engine,
                config,
                run,
                store,
                counts,
                heartbeat_interval=heartbeat_interval,
                reclaimer=reclaimer,
                stop=stop,
            )
        finally:
            if lane is not None:
                lane.done.set()
                lane.join()
        idle_since = time.monotonic()
    return counts


def _work_one(engine: Engine, config: JobConfig, run: Run, store: ArtifactStore, counts: dict[str, int], *,
              heartbeat_interval: float, reclaimer: Reclaimer, stop: Stop | None, lane: str = "") -> None:
    """Execute one claimed run, log it and count its outcome (the worker outlives any failure of it)."""
    log.info("run %s: %s%s on %s (attempt %d%s)", run.id[:12], run.analyzer,
             f" for {run.claim_key}" if run.claim_key else "", run.device or "cpu", run.attempts, lane)
    started = time.perf_counter()
    try:
        status = execute(engine, config, run, store=store, heartbeat_interval=heartbeat_interval,
                                 reclaimer=reclaimer, stop=stop)
    except Exception as exc:  # noqa: BLE001 - the worker outlives any one run
        log.error("run %s: %s: %s", run.id[:12], type(exc).__name__, exc)
        # Retried through an outage (finish is idempotent per attempt): a failure left unrecorded would keep
        # the run 'running' under this live worker, which nobody reclaims.
        error = f"{type(exc).__name__}: {exc}"
        with contextlib.suppress(Exception):
            retry.retrying(engine, f"recording the failure of run {run.id[:12]}", lambda: queue_store.finish(
                engine, run.id, RunStatus.failed, error=error, attempt=run.attempts))
        status = RunStatus.failed
    log.info("run %s: %s in %.1f s", run.id[:12], status.value, time.perf_counter() - started)
    counts[status.value] = counts.get(status.value, 0) + 1


class ShortLane(threading.Thread):
    """The second lane of a worker that holds a long run: it takes short interactive runs (a person's verify
    of one claim, ``queue_store.is_short``) one at a time beside it, so hours of bulk work never keep a person
    waiting. It ends with the long run (after the short run it holds, if any), or at a stop."""

    def __init__(
        self,
        engine: Engine,
        config: JobConfig,
        store: ArtifactStore,
        me: str,
        *,
        device: str | None,
        poll: float,
        counts: dict[str, int],
        stop: Stop | None,
        heartbeat_interval: float,
        reclaimer: Reclaimer,
    ) -> None:
        super().__init__(daemon=True, name="short-lane")
        self.engine, self.config, self.store, self.me, self.device = engine, config, store, me, device
        self.poll, self.counts, self.stop, self.reclaimer = poll, counts, stop, reclaimer
        self.heartbeat_interval = heartbeat_interval
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set() and (self.stop is None or not self.stop.requested.is_set()):
            try:
                run = queue_store.claim_next(
                    self.engine, self.me, device=self.device, lease=self.config.lease, short_only=True
                )
            except Exception as exc:  # noqa: BLE001 - an outage: the main lane rides it out and logs it
                if not retry.is_transient(exc):
                    log.warning("short lane: %s: %s", type(exc).__name__, str(exc).splitlines()[0])
                run = None
            if run is None:
                self.done.wait(self.poll)
                continue
            _work_one(self.engine, self.config, run, self.store, self.counts,
                      heartbeat_interval=self.heartbeat_interval, reclaimer=self.reclaimer, stop=self.stop,
                      lane=", short lane")
        # A claim whose answer an outage cut may have gone through: no later claim of this thread takes it,
        # and nobody reclaims a live worker's run, so it goes back to the queue before the lane ends.
        retry.retrying(self.engine, "handing back a claim in doubt",
                       lambda: queue_store.hand_back_in_doubt(self.engine, self.me))


class Reclaimer:
    """Releases the runs of dead workers, at most every ``RECLAIM_EVERY`` seconds, from the poll loop or the
    heartbeat thread (whichever comes first). A lease counts as expired only once the database has answered
    this worker for a whole lease: after an outage nobody could renew theirs. A run failed past the attempt
    limit gets its outcome record in the store."""

    def __init__(self, engine: Engine, store: ArtifactStore, lease: dt.timedelta, watched: frozenset[str], *,
                 identity: IndexIdentity | None = None, stop: Stop | None = None) -> None:
        self.engine, self.store, self.lease, self.watched = engine, store, lease, watched
        self.identity, self.stop = identity, stop
        self._lock = threading.Lock()
        self._last = float("-inf")

    def maybe(self, *, patient: bool = True) -> None:
        """Reclaim if the last look is ``RECLAIM_EVERY`` seconds old (never two threads at once).

        ``patient=False`` (the heartbeat thread, which must stay free to stop) tries once and leaves an
        outage to the next look."""
        if time.monotonic() - self._last < RECLAIM_EVERY or not self._lock.acquire(blocking=False):
            return
        try:
            self._last = time.monotonic()
            self.check_identity()
            if patient:
                self.now()
            else:
                with contextlib.suppress(Exception):
                    self.now(patient=False)
        finally:
            self._lock.release()

    def check_identity(self) -> None:
        """Notice an index replaced (reconnect) or deleted or migrated under this worker (stop at once)."""
        if self.identity is None:
            return
        change = self.identity.changed()
        if change in ("deleted", "migrated") and self.stop is not None:
            self.stop.grace = 0.0  # the run's outcome has no index to go to: hand it back at its next report
            self.stop.request(f"the index was {change}")

    def now(self, *, patient: bool = True) -> None:
        """Reclaim now (retrying through an outage unless ``patient`` is False)."""
        tracker = retry.outage(self.engine)

        def once() -> dict[str, RunStatus]:
            expired = tracker.healthy_for() >= self.lease.total_seconds()
            return queue_store.reclaim(self.engine, watched=self.watched, expired=expired)

        released = retry.retrying(self.engine, "reclaiming runs of stopped workers", once, write=False) \
            if patient else once()
        if patient and records.spool_dir(self.store.home).is_dir():  # outcomes kept while the store was down
            _best_effort(
                "uploading spooled outcomes", records.flush_spool, self.engine, self.store, self.store.home
            )
        if released:  # what the dead attempts left: their uploads in the store
            _best_effort("sweeping unfinished uploads", sweep_uploads, self.engine, self.store)
        for run_id, status in released.items():
            log.info("run %s: its worker stopped; %s", run_id[:12],
                     "re-queued" if status is RunStatus.queued else f"{status.value} (attempt limit)")
            if status is RunStatus.failed:
                with Session(self.engine) as session:
                    row = session.get(Run, run_id)
                if row is not None:
                    _best_effort(f"keeping the outcome of run {run_id[:12]}", functools.partial(
                        records.write_outcome, self.store, row, RunStatus.failed, attempt=row.attempts,
                        error=row.error))
