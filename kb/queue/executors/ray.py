"""The ``ray`` executor: each run is a Ray task on a Ray cluster (or a local Ray instance).

A Ray task claims its run by id exactly like a local worker, so a run is never executed twice and its
evidence lands in the same database and artifact store (the config's: the KB home only where no store is
set, which the Ray workers must then share). Ray tasks ask for a GPU when the run's device is CUDA.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from kb.queue.executors import register
from kb.queue.executors.base import Executor, ExecutorUnavailable, JobConfig

if TYPE_CHECKING:  # the queue's machinery loads when a run executes, not when the CLI lists executors
    from sqlalchemy.engine import Engine

_engines: dict[str, Engine] = {}


def _engine(config: JobConfig) -> Engine:
    # One engine (and one migration check) per Ray worker process, not per task: Ray reuses workers.
    if config.database_url not in _engines:
        engine = config.engine()
        from kb.index.opening import init_db

        init_db(engine)
        _engines[config.database_url] = engine
    return _engines[config.database_url]


def execute_one(config: JobConfig, run_id: str) -> str:
    """Claim and execute one run by id (the body of a Ray task)."""
    from kb.queue import execution

    return execution.execute_by_id(_engine(config), config, run_id, "ray")


def run_on_ray(config: JobConfig, run_ids: list[str], *, devices: dict[str, str] | None = None,
               **init_kwargs: Any) -> dict[str, str]:
    """Execute runs as Ray tasks (a local Ray instance unless the config names a cluster); status per run."""
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ExecutorUnavailable("the ray executor needs Ray: pip install 'plm-kb[ray]'") from exc
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=config.ray_address, include_dashboard=False, log_to_driver=False, **init_kwargs)
    try:
        task = ray.remote(execute_one)
        refs = {}
        for run_id in run_ids:
            gpus = 1 if (devices or {}).get(run_id, "cpu").startswith("cuda") else 0
            refs[run_id] = task.options(num_gpus=gpus).remote(config, run_id)
        return {run_id: ray.get(ref) for run_id, ref in refs.items()}
    finally:
        if started_here:
            ray.shutdown()


@register
class RayExecutor(Executor):
    """One Ray task per run."""

    name = "ray"
    label = "Ray"
    description = (
        "one Ray task per run (`--ray-address`, `KB_RAY_ADDRESS`; a local Ray instance by default), "
        "a GPU when the run asks for CUDA; install `plm-kb[ray]`"
    )
    settings = ("ray_address",)

    def check(self) -> None:
        """Ray workers are other processes: they cannot share an in-memory SQLite database."""
        super().check()
        if self.config.database_url.startswith("sqlite:///:memory:"):
            raise ExecutorUnavailable(
                "Ray workers cannot share an in-memory SQLite database; use a file or a server URL"
            )

    def run(self, engine: Engine, run_ids: list[str], **init_kwargs: Any) -> dict[str, str]:
        """Execute the runs as Ray tasks and wait for them; returns the status per run."""
        self.check()
        from kb.queue import store as queue_store

        devices = {
            r.id: r.device or "cpu"
            for r in queue_store.list_runs(engine, ids=run_ids, limit=len(run_ids) or 1)
        }
        return run_on_ray(self.config, run_ids, devices=devices, **init_kwargs)

    def submit(self, engine: Engine, run_ids: list[str]) -> dict[str, str]:
        """Start the runs' Ray tasks from a background thread of this process (which must outlive them)."""
        self.check()
        threading.Thread(target=self.run, args=(engine, run_ids), daemon=True, name="kb-ray-submit").start()
        return {}
