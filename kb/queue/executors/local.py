"""The ``local`` executor: runs execute in a ``kb worker`` on this machine (or in ``kb verify`` itself)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kb.queue.executors import reconciling, register
from kb.queue.executors.base import Executor

if TYPE_CHECKING:  # the queue's machinery loads when a run executes, not when the CLI lists executors
    from sqlalchemy.engine import Engine


@register
class LocalExecutor(Executor):
    """Runs wait in the queue for a worker of this KB home; ``kb verify`` works through the queue itself."""

    name = "local"
    label = "This machine"
    description = ("in this process (`kb verify`) or a `kb worker` on any machine that reaches the index; "
                   "the app starts one background worker per KB home")
    needs_worker = True

    def run(self, engine: Engine, run_ids: list[str]) -> dict[str, int]:
        """Work through the queue here until it is empty (these runs and any queued before them)."""
        from kb.queue import execution

        return execution.work(engine, self.config, watched=reconciling(), once=True)
