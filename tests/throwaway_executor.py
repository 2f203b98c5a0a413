"""A throw-away executor for tests of the executor registry: it notes what it was handed, then runs the runs here.

Not shipped: ``tests/test_executors_registry.py`` names this module in KB_EXECUTOR_MODULES, the way a lab adds its
own executor (Kubernetes, say), and checks that the CLI, the app and the docs find it with nothing else changed.
"""

from __future__ import annotations

import json

from sqlalchemy.engine import Engine

from kb.queue import execution
from kb.queue.executors import Executor, register

NAME = "throwaway-test"
LOG = "throwaway-executor.jsonl"  # under the config's KB home: one line per call


@register
class ThrowawayExecutor(Executor):
    """Claims and executes its runs in this process by id (as a job would), after writing down what it got."""

    name = NAME
    label = "Throwaway"
    description = "a test executor that notes its config, then runs the runs in this process"

    def _note(self, call: str, run_ids: list[str]) -> None:
        line = {"call": call, "run_ids": run_ids, "config": self.config.model_dump(mode="json")}
        with (self.config.home / LOG).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")

    def run(self, engine: Engine, run_ids: list[str]) -> dict[str, str]:
        self._note("run", run_ids)
        return {run_id: execution.execute_by_id(engine, self.config, run_id, NAME) for run_id in run_ids}

    def submit(self, engine: Engine, run_ids: list[str]) -> dict[str, str]:
        self._note("submit", run_ids)
        return {run_id: f"tw-{i}" for i, run_id in enumerate(run_ids)}
