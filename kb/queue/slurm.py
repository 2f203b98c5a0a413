"""Runs as Slurm jobs: one job per queued run, submitted with submitit, a GPU when the run asks for CUDA.

The job claims its run from the shared index by id, exactly as a local worker would, so a run never
executes twice; it works in a KB home of its own on the node (node-local scratch by default), uploads its
artifacts to the shared artifact store, and records where it ran (host, GPU, job id) in the provenance.
What the job and the submitting machine share is the index database (PostgreSQL) and the artifact store
(an fsspec URL); submitit's own job files (the pickled call, the job's stdout) sit in ``folder``, which
the compute nodes must see, as on any Slurm cluster.

Every scheduler setting is the operator's (``SlurmSettings``: partition, account, time limit, memory,
GPUs per job, extra sbatch options), read from kb's settings or flags, never from a note.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Engine

from kb.queue import store as queue_store
from kb.settings import SlurmSettings
from schemas import RunStatus

if TYPE_CHECKING:
    from kb.queue.executors.base import JobConfig

# Scheduler states that mean the job is still alive (queued, starting, running or being requeued).
ALIVE_STATES = frozenset(
    {
        "PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED",
        "REQUEUE_HOLD", "REQUEUE_FED", "SIGNALING", "STAGE_OUT", "STOPPED",
    }
)


def sbatch_parameters(settings: SlurmSettings, device: str) -> dict[str, Any]:
    """submitit parameters for one run: a GPU only when the run's device is CUDA."""
    params: dict[str, Any] = {
        "time": settings.time_minutes, "mem": f"{int(settings.mem_gb * 1024)}M",
        "cpus_per_task": settings.cpus_per_task, "job_name": "kb-run", "use_srun": False,
        "signal_delay_s": 60,
    }
    if settings.partition:
        params["partition"] = settings.partition
    if settings.account:
        params["account"] = settings.account
    if device.startswith("cuda") and settings.gpus_per_job:
        params["gpus_per_node"] = settings.gpus_per_job
    if settings.extra_sbatch:
        params["additional_parameters"] = dict(settings.extra_sbatch)
    return params


def submit(engine: Engine, config: JobConfig, run_ids: list[str]) -> dict[str, str]:
    """Submit one Slurm job per queued run that has none; records each job id on its run and returns them by
    run id.

    Each job carries ``config`` (index, store, offline, caches, lease): it needs nothing else from here.
    """
    try:
        import submitit
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError("the slurm executor needs submitit: pip install 'plm-kb[slurm]'") from exc
    settings = config.slurm
    folder = settings.folder or config.home / "slurm"
    folder.mkdir(parents=True, exist_ok=True)
    executor = submitit.SlurmExecutor(folder=str(folder), python=settings.python or sys.executable)
    submitted: dict[str, str] = {}
    for run_id in run_ids:
        record = queue_store.get_run(engine, run_id)
        if record is None or record.status is not RunStatus.queued or record.job_id is not None:
            continue  # gone, taken, or a job holds it already (a request that joined it): one job per run
        executor.update_parameters(**sbatch_parameters(settings, record.device or "cpu"))
        job = executor.submit(run_job, config, run_id)
        queue_store.set_job(engine, run_id, str(job.job_id))
        submitted[run_id] = str(job.job_id)
    return submitted


def run_job(config: JobConfig, run_id: str) -> str:
    """The body of a Slurm job: claim the run by id and execute it in a KB home on this node."""
    from kb.queue.execution import execute_by_id

    job_id = os.environ.get("SLURM_JOB_ID", "unknown")

    def stop(signum: int, frame: object) -> None:
        # scancel, preemption and the time limit all send SIGTERM before SIGKILL: stop at once, leave the run
        # as it is (its last checkpoint is in the store) and let ``reconcile`` resubmit it.
        raise SystemExit(f"Slurm job {job_id} got signal {signum}; the run resumes from its last checkpoint")

    signal.signal(signal.SIGTERM, stop)
    scratch = config.slurm.job_home or os.environ.get("SLURM_TMPDIR") or os.environ.get("TMPDIR") or "/tmp"
    home = Path(scratch) / f"kb-job-{job_id}"
    home.mkdir(parents=True, exist_ok=True)
    engine = config.engine()
    try:
        return execute_by_id(engine, config, run_id, f"slurm:{job_id}", home=home)
    finally:
        engine.dispose()
        shutil.rmtree(home, ignore_errors=True)  # the evidence is in the store; scratch is the node's


def cancel_job(job_id: str) -> None:
    """Ask Slurm to cancel a job (no error if it already ended)."""
    subprocess.run(["scancel", job_id], capture_output=True, timeout=30, check=False)


def job_states(job_ids: list[str]) -> dict[str, str]:
    """The scheduler's state of each job it still knows (``squeue``); a job it has forgotten is absent."""
    if not job_ids:
        return {}
    try:
        out = subprocess.run(["squeue", "-h", "-o", "%i %T", "-j", ",".join(job_ids)], capture_output=True,
                             text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return {}
    states: dict[str, str] = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2:
            states[parts[0]] = parts[1]
    return states


def slurm_available() -> str | None:
    """None when ``sbatch`` and ``squeue`` answer here, else why not."""
    if shutil.which("sbatch") is None or shutil.which("squeue") is None:
        return "sbatch/squeue are not on PATH (run kb on a Slurm login node)"
    try:
        out = subprocess.run(
            ["squeue", "-h", "-o", "%i"], capture_output=True, text=True, timeout=15, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"squeue failed: {exc}"
    return None if out.returncode == 0 else f"squeue failed: {out.stderr.strip()}"


def reconcile(engine: Engine, config: JobConfig) -> dict[str, str]:
    """Notice runs whose Slurm job is gone (killed, preempted, node lost) and resubmit or fail them.

    A run is only touched when the scheduler no longer knows its job, so it never executes twice at once.
    Resubmitted, it resumes from its last checkpoint in the store; past the queue's attempt limit
    (``kb.queue.store.release``) it fails with the reason. Returns what happened per run id
    ('resubmitted as job N' or 'failed: ...').
    """
    active = [r for r in queue_store.list_runs(engine, limit=10_000)
              if r.executor == "slurm" and r.job_id and r.status.value in ("queued", "running")]
    alive = {
        job
        for job, state in job_states([r.job_id for r in active if r.job_id]).items()
        if state in ALIVE_STATES
    }
    outcome: dict[str, str] = {}
    for record in active:
        if record.job_id in alive:
            continue
        fresh = queue_store.get_run(engine, record.id)
        if fresh is None or fresh.job_id != record.job_id or fresh.status.value not in ("queued", "running"):
            continue  # it ended (or was resubmitted) between the two reads
        why = f"Slurm job {record.job_id} ended without finishing the run (killed, preempted or node lost)"
        released = queue_store.release(engine, record.id, fresh.attempts, why)
        if released is RunStatus.failed:
            outcome[record.id] = f"failed: {why}"
        elif released is RunStatus.queued:
            job = submit(engine, config, [record.id])
            outcome[record.id] = f"resubmitted as job {job.get(record.id)}"
    return outcome
