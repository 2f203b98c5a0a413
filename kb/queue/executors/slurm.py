"""The ``slurm`` executor: one Slurm job per run (the mechanics are in ``kb.queue.slurm``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from kb.queue.executors import register
from kb.queue.executors.base import Executor

if TYPE_CHECKING:  # the queue's machinery loads when a run executes, not when the CLI lists executors
    from sqlalchemy.engine import Engine

TERMINAL = ("succeeded", "failed", "cancelled")


@register
class SlurmExecutor(Executor):
    """Submits a job per run, notices vanished jobs (``reconcile``) and cancels jobs of cancelled runs."""

    name = "slurm"
    label = "Slurm"
    description = (
        "one Slurm job per run (submitit; a GPU when the run asks for CUDA; `KB_SLURM__PARTITION`, "
        "...), resubmitted from its last checkpoint after preemption; install `plm-kb[slurm]`"
    )
    needs_shared_database = True
    reconciles = True
    settings = ("slurm",)

    def submit(self, engine: Engine, run_ids: list[str]) -> dict[str, str]:
        """Submit one job per run; returns the job id per run."""
        from kb.queue import slurm

        self.check()
        return slurm.submit(engine, self.config, run_ids)

    def run(self, engine: Engine, run_ids: list[str], poll: float = 3.0) -> dict[str, str]:
        """Submit the runs and wait for them to end, resubmitting runs whose job vanished."""
        from kb.queue import store as queue_store

        self.submit(engine, run_ids)
        while True:
            records = queue_store.list_runs(engine, ids=run_ids, limit=len(run_ids) or 1)
            if all(r.status.value in TERMINAL for r in records):
                return {r.id: r.status.value for r in records}
            self.reconcile(engine)
            time.sleep(poll)

    def reconcile(self, engine: Engine) -> dict[str, str]:
        """Resubmit (or fail, past the attempt limit) runs whose Slurm job disappeared."""
        from kb.queue import slurm

        return slurm.reconcile(engine, self.config)

    def cancel_job(self, job_id: str) -> None:
        """``scancel`` the job."""
        from kb.queue import slurm

        slurm.cancel_job(job_id)
