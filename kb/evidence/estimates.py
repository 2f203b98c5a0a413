"""How long a run will take, before and while it runs: the one rule the queue's order and every display use.

Before a run: the median duration of earlier runs of the same analyzer on the same parameters (any seed)
in this index (what this machine really took), else the analyzer's ``expected_seconds`` for the preset
(measured on the reference machine, 2 CPU cores) scaled by this machine's speed (a 0.3-second calibration,
once per process), else unknown. A run that cannot execute here (``preflight`` says why: no GPU) answers at
once. ``kb.core`` queues the runs of one ``verify`` quick ones first by this estimate, so the first verdicts
come in minutes; the demo prints it for each run before it starts. While a run works, ``with_time_left``
turns its progress and estimate into the "about N min left" every surface shows.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import statistics
import time
from dataclasses import dataclass

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from analyzers.base import Analyzer, AnalyzerParams, NotRunnable
from analyzers.progress import duration_text
from kb.index.database import Run
from schemas import RunStatus

#: Seconds ``calibration_seconds`` took on the reference machine (the project's 2-core machine, best of 5).
REFERENCE_CALIBRATION_SECONDS = 0.045
#: Earlier runs of the same analyzer and preset whose median is the estimate.
HISTORY = 5


@dataclass(frozen=True)
class RunEstimate:
    """How long one run should take here, and where that number comes from."""

    seconds: float | None  # None: no way to tell yet
    basis: str  # "measured here, 3 runs", "'small' preset, 1.4x the reference machine's time", ...
    scale: str = "custom"  # the preset the parameters are (``Analyzer.scale_name``)
    not_runnable: str | None = None  # why the run cannot execute here (it ends at once with that verdict)
    shares_work: bool = False  # an earlier run of the same plan builds the cached stages this one reuses

    @property
    def sort_key(self) -> tuple[int, float]:
        """Quick first: runs that end at once, then by seconds, then those without an estimate."""
        if self.not_runnable is not None:
            return (0, 0.0)
        return (1, self.seconds) if self.seconds is not None else (2, 0.0)

    def text(self) -> str:
        """The estimate as the demo prints it: 'about 3 min (measured here, 2 runs)'."""
        if self.not_runnable is not None:
            return f"at once: not runnable here ({self.not_runnable})"
        if self.shares_work:
            return f"quick after the earlier run whose cached stages it reuses ({self.basis})"
        if self.seconds is None:
            return f"unknown ({self.basis})"
        return f"about {duration_text(self.seconds)} ({self.basis})"


def calibration_seconds() -> float:
    """Best of 6 timings of a fixed small float32 workload (matrix products, as the analyzers do)."""
    import numpy as np

    matrix = np.random.default_rng(0).standard_normal((384, 384), dtype=np.float32)
    best = float("inf")
    for _ in range(6):  # the first round warms the BLAS threads up; best of all: the least disturbed
        start = time.perf_counter()
        product = matrix
        for _ in range(20):
            product = np.tanh(product @ matrix * 0.05)
        best = min(best, time.perf_counter() - start)
    return best


@functools.cache
def machine_slowness() -> float:
    """How many times slower than the reference machine this one is now (below 1: faster); measured once."""
    return min(20.0, max(0.25, calibration_seconds() / REFERENCE_CALIBRATION_SECONDS))


def _history_key(params: AnalyzerParams) -> str:
    # The same parameters (any seed) on the same kind of device: what a claim's re-verification repeats.
    kept = params.model_dump(mode="json", exclude={"seed"})
    return json.dumps({**kept, "device": params.device.split(":")[0]}, sort_keys=True, default=str)


def past_durations(engine: Engine, analyzer: Analyzer,  # type: ignore[type-arg]
                   params: AnalyzerParams) -> list[float]:
    """Seconds the latest succeeded runs of this analyzer on these parameters (any seed) took here, newest
    first."""
    wanted = _history_key(params)
    found: list[float] = []
    with Session(engine) as session:
        rows = session.exec(select(Run).where(Run.analyzer == analyzer.name,
                                              Run.status == RunStatus.succeeded.value)
                            .order_by(col(Run.finished_at).desc()).limit(200)).all()
    for run in rows:
        if run.started_at is None or run.finished_at is None:
            continue
        try:
            earlier = analyzer.params_for(json.loads(run.params_json))
        except ValueError:  # parameters of an older version of the analyzer
            continue
        if _history_key(earlier) == wanted:
            found.append((run.finished_at - run.started_at) / dt.timedelta(seconds=1))
            if len(found) == HISTORY:
                break
    return found


def estimate(engine: Engine, analyzer: Analyzer, params: AnalyzerParams,  # type: ignore[type-arg]
             scale: str | None = None) -> RunEstimate:
    """How long a run of ``analyzer`` on ``params`` should take on this machine (see the module docstring).

    ``scale``: the preset the parameters started from (a claim's bound scale, which its own parameters may
    change a little); default the preset they equal, if any.
    """
    scale = scale or analyzer.scale_name(params)
    try:
        analyzer.preflight(params)
    except NotRunnable as exc:
        return RunEstimate(0.0, "preflight", scale, not_runnable=str(exc))
    past = past_durations(engine, analyzer, params)
    if past:
        runs = f"{len(past)} run{'s' if len(past) > 1 else ''}"
        return RunEstimate(statistics.median(past), f"measured here, {runs}", scale)
    expected = analyzer.expected_seconds.get(scale)
    if expected is None:
        return RunEstimate(None, f"no run of {analyzer.name} at '{scale}' timed here yet", scale)
    slowness = machine_slowness()
    basis = f"'{scale}' preset, {slowness:.1f}x the reference machine's time"
    return RunEstimate(expected * slowness, basis, scale)


def sharing(planned: list[tuple[Analyzer, AnalyzerParams, RunEstimate]]) -> list[RunEstimate]:  # type: ignore[type-arg]
    """The estimates of one plan's runs (in the order they will run), each run whose cached stages
    (``Analyzer.cached_stages``) the runs before it all build marked so: it sorts after the runs with an
    estimate and counts nothing in the plan's total, since the earlier runs pay for the stages."""
    built: set[str] = set()
    marked = []
    for analyzer, params, found in planned:
        stages = analyzer.cached_stages(params)
        if stages and stages <= built and found.not_runnable is None:
            found = RunEstimate(None, f"its full time alone: {found.text()}", found.scale, shares_work=True)
        built |= stages
        marked.append(found)
    return marked


def time_left(elapsed: float, fraction: float, expected: float | None) -> float | None:
    """Seconds a running run has left, from its progress and its estimate (None: no way to tell).

    Early on the estimate counts most (a first report of 1 % says little); as the run moves on, its own
    pace takes over. A run past its estimate with little progress is judged by its pace alone.
    """
    by_pace = elapsed * (1 - fraction) / fraction if fraction >= 0.01 and elapsed >= 1 else None
    by_estimate = expected - elapsed if expected is not None and expected > elapsed else None
    if by_pace is None:
        return by_estimate
    if by_estimate is None:
        return by_pace
    return fraction * by_pace + (1 - fraction) * by_estimate


def with_time_left(message: str, elapsed: float, fraction: float, expected: float | None) -> str:
    """A progress message with its time left appended, the way the CLI, ``kb runs`` and the app show it."""
    left = time_left(elapsed, fraction, expected)
    if left is None or " left" in message:  # an analyzer that says its own time left knows it best
        return message
    said = f"about {duration_text(left)} left"
    return f"{message} · {said}" if message else said
