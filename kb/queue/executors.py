"""Where queued runs execute: in this process (``local``) or as Ray tasks (``ray``) on a cluster.

Both go through the same durable queue: a Ray task claims its run by id exactly like a local worker,
so a run is never executed twice and its evidence lands in the same database. Ray tasks ask for a
GPU when the run's device is CUDA. The KB home must be on storage the Ray workers share (NFS, the
same machine) because artifacts are written there.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from kb.db import init_db, make_engine
from kb.queue import execution
from kb.queue import store as queue_store

EXECUTORS = ("local", "ray", "slurm")


@functools.cache
def _engine(database_url: str) -> Engine:
    # One engine (and one migration check) per Ray worker process, not per task: Ray reuses workers.
    engine = make_engine(database_url)
    init_db(engine)
    return engine


def _execute_one(database_url: str, home: str, run_id: str) -> str:
    """Claim and execute one run by id (the body of a Ray task)."""
    engine = _engine(database_url)
    run = queue_store.claim_next(engine, f"ray:{execution.worker_id()}", run_id=run_id)
    if run is None:
        return "skipped"  # taken by another worker or cancelled meanwhile
    return execution.execute(engine, Path(home), run).value


def run_on_ray(database_url: str, home: Path, run_ids: list[str], *, address: str | None = None,
               devices: dict[str, str] | None = None, **init_kwargs: Any) -> dict[str, str]:
    """Execute runs as Ray tasks (``address=None`` starts a local Ray instance); returns status per run."""
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError("the ray executor needs Ray: pip install 'plm-kb[ray]'") from exc
    if database_url.startswith("sqlite:///:memory:"):
        raise ValueError("Ray workers cannot share an in-memory SQLite database; use a file or a server URL")
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, **init_kwargs)
    try:
        task = ray.remote(_execute_one)
        refs = {}
        for run_id in run_ids:
            gpus = 1 if (devices or {}).get(run_id, "cpu").startswith("cuda") else 0
            refs[run_id] = task.options(num_gpus=gpus).remote(database_url, str(home), run_id)
        return {run_id: ray.get(ref) for run_id, ref in refs.items()}
    finally:
        if started_here:
            ray.shutdown()
