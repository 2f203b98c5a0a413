"""Progress bars that also show progress in a log: every long command's bars (``kb analyze``, ``kb verify``,
``kb demo``, ``kb langevin run``, ``kb depth run``).

rich's ``Progress`` draws on a terminal and, on anything else (a file, a pipe, CI, ``nohup``), draws nothing
until it stops: a 45-minute run written to a log showed no sign of life until its end. ``LoggedProgress`` is
that ``Progress``, and where the console is not a terminal it also writes a plain line per task: when the task
starts, when its description changes (at most every ``gap`` seconds, so a description that carries a
countdown does not write a line per update), at least every ``every`` seconds while it runs, and when it
completes. The line is the description as the bar shows it, its markup rendered away (user text in it is
escaped, as for the bar).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rich.progress import Progress, TaskID
from rich.text import Text

from analyzers.progress import duration_text


class LoggedProgress(Progress):
    """rich's ``Progress``, plus a plain line per task change where the console is not a terminal."""

    def __init__(self, *columns: Any, every: float = 60.0, gap: float = 5.0,
                 clock: Callable[[], float] = time.monotonic, **kwargs: Any) -> None:
        super().__init__(*columns, **kwargs)
        self.every, self.gap, self.clock = every, gap, clock
        self._said: dict[TaskID, tuple[float, str, bool]] = {}  # when, what and whether done it last said

    def add_task(self, description: str, *args: Any, **kwargs: Any) -> TaskID:
        task_id = super().add_task(description, *args, **kwargs)
        self._log(task_id, force=True)
        return task_id

    def update(self, task_id: TaskID, *args: Any, **kwargs: Any) -> None:
        super().update(task_id, *args, **kwargs)
        self._log(task_id)

    def _log(self, task_id: TaskID, *, force: bool = False) -> None:
        if self.disable or self.console.is_terminal:
            return  # the bar itself shows it
        task = self._tasks[task_id]
        now = self.clock()
        when, said, done = self._said.get(task_id, (-float("inf"), "", False))
        if not force:
            if done:
                return  # a finished task was told once
            changed = task.description != said and now - when >= self.gap
            if not (task.finished or changed or now - when >= self.every):
                return
        self._said[task_id] = (now, task.description, task.finished)
        share = f"{task.percentage:5.1f}%" if task.total else "     "
        elapsed = duration_text(task.elapsed) if task.elapsed else "0 s"
        plain = Text.from_markup(task.description).plain
        self.console.print(f"{share} {elapsed:>8}  {plain}", markup=False, highlight=False)
