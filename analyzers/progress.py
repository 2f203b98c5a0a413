"""Progress of an analyzer's long loops: reported often enough to show a run is alive, never too often.

A run must say what it is doing at least every ``RunContext.report_every`` seconds (30 by default): kb's
displays (``kb demo``, ``kb runs``, the app) show the latest report, with the time left that kb works out
from the run's progress and its estimate (``kb.evidence.estimates.StagedClock``). A loop of many short
iterations (training steps, sampler steps, tempering sweeps) calls a ``Reporter`` at every iteration; the
reporter passes a report on at most three times per interval, so the bound holds for iterations up to two
thirds of it, and maps the loop's share onto its stage of the run (training from 5 % to 30 %, say), so the
fraction moves while the stage runs rather than jumping at its end.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from analyzers.base import Cancelled

#: The stage of a run's own work (``RunContext.enter_stage``); first-use stages are named by
#: ``first_use_stage``.
MAIN_STAGE = "run"
FIRST_USE = "first use: "


#: The heavy libraries analyzers import (``Analyzer.libraries``): the module whose import loads each, and the
#: seconds that import takes in a fresh process on the reference machine (the speed probe's unit, see
#: ``kb.evidence.estimates``). The first run in a process that needs one loads it as a first-use stage of its
#: own (``loading_stage``), so its time is never read as the run's own.
LIBRARIES: dict[str, tuple[str, float]] = {
    # about 290, 550 and 90 times the probe, timed between two probes in fresh processes under loads of 4-20
    # (benchmarks/bench_costs.py, medians of 3 rounds), times its reference 0.011 s
    "torch": ("torch", 3.2),
    "transformers": ("transformers.modeling_utils", 6.0),
    "matplotlib": ("matplotlib.pyplot", 1.0),
}


def loading_stage(library: str) -> str:
    """The first-use stage of importing ``library`` (a key of ``LIBRARIES``): 'first use: loading torch'."""
    return first_use_stage(f"loading {library}")


def first_use_stage(what: str) -> str:
    """The name of a one-off stage: 'first use: training builtin:esm-designed-4x64'."""
    return FIRST_USE + what


def is_first_use(stage: str) -> bool:
    """Whether a stage is a one-off cost (not part of the time the same run takes again here)."""
    return stage.startswith(FIRST_USE)


def duration_text(seconds: float) -> str:
    """'8 s', '4 min', '1 h 10 min': rounded the way a person reads a clock."""
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


class Reporter:
    """Throttled reports of one loop that fills the share ``start``..``end`` of a run's progress.

    ``reporter(done, total, message)`` at every iteration; ``force=True`` reports whatever the throttle
    says (a stage's last step). ``report`` is ``RunContext.report`` or a stage's mapping of it.
    """

    def __init__(self, report: Callable[[float, str], None], every: float = 30.0, start: float = 0.0,
                 end: float = 1.0, is_cancelled: Callable[[], bool] = lambda: False) -> None:
        self.report, self.gap, self.start, self.end = report, every / 3, start, end
        self.is_cancelled = is_cancelled
        self.last = -math.inf

    def __call__(self, done: float, total: float, message: str, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < self.gap:
            # The throttle holds back the message, never a cancellation: a loop stops at its next iteration
            # (``RunContext.is_cancelled``), as it did when every iteration reported.
            if self.is_cancelled():
                raise Cancelled(message or "cancelled")
            return
        self.last = now
        share = min(1.0, max(0.0, done / total)) if total > 0 else 0.0
        self.report(self.start + (self.end - self.start) * share, message)
