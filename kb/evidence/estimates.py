"""How long a run will take, before and while it runs: the one rule the queue's order and every display use.

Before a run: the median duration of earlier runs of the same analyzer on the same parameters (any seed)
in this index (what this machine really took), else the analyzer's ``expected_seconds`` for the preset
(measured on the reference machine, 2 CPU cores) scaled by this machine's speed (a 0.3-second calibration,
once per process), else unknown. A run that cannot execute here (``preflight`` says why: no GPU) answers at
once. ``kb.core`` queues the runs of one ``verify`` quick ones first by this estimate, so the first verdicts
come in minutes; the demo prints it for each run before it starts. While a run works, ``with_left`` appends
the "about N min left" every surface shows.

First-use costs (training a built-in model, a download into the cache: ``Analyzer.first_use``) are stages of
their own: added to the estimate while the cache lacks what they build, and left out of the history, since
a run stores each stage's duration (``Run.stages_json``) beside its estimate and its actual time. While a
run works, ``StagedClock`` turns its stages into one bar weighted by their estimates, which never moves back,
and a time left from each stage's own measured pace.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from analyzers.base import Analyzer, AnalyzerParams, NotRunnable
from analyzers.progress import MAIN_STAGE, duration_text, is_first_use
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
    # (stage, seconds) in the order the run works through them: first-use stages, then MAIN_STAGE (its own work)
    stages: tuple[tuple[str, float | None], ...] = field(default=())

    @property
    def first_use_seconds(self) -> float:
        """Seconds of one-off stages in this estimate (0: none)."""
        return sum(seconds or 0.0 for name, seconds in self.stages if is_first_use(name))

    @property
    def own_seconds(self) -> float | None:
        """Seconds of the run's own work, first-use stages left out: what orders the queue, since whichever run of
        a plan starts first pays a first-use stage the runs after it share."""
        if self.seconds is None:
            return None
        own = [seconds for name, seconds in self.stages if not is_first_use(name)]
        if self.stages and None not in own:  # summed, not the total less first use: no rounding residue
            return sum(s for s in own if s is not None)
        return self.seconds - self.first_use_seconds

    @property
    def sort_key(self) -> tuple[int, float]:
        """Quick first: runs that end at once, then by their own seconds, then those without an estimate."""
        if self.not_runnable is not None:
            return (0, 0.0)
        own = self.own_seconds
        return (1, own) if own is not None else (2, 0.0)

    def text(self) -> str:
        """The estimate as the demo prints it: 'about 3 min (measured here, 2 runs)'."""
        if self.not_runnable is not None:
            return f"at once: not runnable here ({self.not_runnable})"
        if self.shares_work:
            return f"quick after the earlier run whose cached stages it reuses ({self.basis})"
        if self.seconds is None:
            return f"unknown ({self.basis})"
        first = [(name, seconds) for name, seconds in self.stages if is_first_use(name) and seconds]
        if not first:
            return f"about {duration_text(self.seconds)} ({self.basis})"
        once = "; ".join(f"{name.removeprefix('first use: ')} ~{duration_text(seconds)}" for name, seconds in first)
        own = self.seconds - self.first_use_seconds
        return f"about {duration_text(self.seconds)} (first use, once: {once}; then {duration_text(own)}: {self.basis})"


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
        seconds = own_seconds(run)
        if seconds is None:
            continue
        try:
            earlier = analyzer.params_for(json.loads(run.params_json))
        except ValueError:  # parameters of an older version of the analyzer
            continue
        if _history_key(earlier) == wanted:
            found.append(seconds)
            if len(found) == HISTORY:
                break
    return found


def own_seconds(run: Run) -> float | None:
    """Seconds a finished run spent on its own work: its measured time less its first-use stages (what the same
    run takes again here); runs from before kb stored times, from started to finished."""
    if run.actual_seconds is not None:
        stages: dict[str, float] = json.loads(run.stages_json) if run.stages_json else {}
        return max(0.0, run.actual_seconds - sum(v for k, v in stages.items() if is_first_use(k)))
    if run.started_at is None or run.finished_at is None:
        return None
    return (run.finished_at - run.started_at) / dt.timedelta(seconds=1)


def estimate(engine: Engine, analyzer: Analyzer, params: AnalyzerParams,  # type: ignore[type-arg]
             scale: str | None = None, cache_dir: Path | None = None) -> RunEstimate:
    """How long a run of ``analyzer`` on ``params`` should take on this machine (see the module docstring).

    ``scale``: the preset the parameters started from (a claim's bound scale, which its own parameters may
    change a little); default the preset they equal, if any. ``cache_dir``: the analyzers' cache the run will
    use, whose gaps are first-use stages (None: none counted).
    """
    scale = scale or analyzer.scale_name(params)
    try:
        analyzer.preflight(params)
    except NotRunnable as exc:
        return RunEstimate(0.0, "preflight", scale, not_runnable=str(exc))
    first: list[tuple[str, float | None]] = []
    if cache_dir is not None:
        first = [(name, seconds * machine_slowness()) for name, seconds in analyzer.first_use(params, cache_dir)]
    past = past_durations(engine, analyzer, params)
    own: float | None
    if past:
        own, basis = statistics.median(past), f"measured here, {len(past)} run{'s' if len(past) > 1 else ''}"
    elif (expected := analyzer.expected_seconds.get(scale)) is not None:
        own = expected * machine_slowness()
        basis = f"'{scale}' preset, {machine_slowness():.1f}x the reference machine's time"
    else:
        own, basis = None, f"no run of {analyzer.name} at '{scale}' timed here yet"
    stages = (*first, (MAIN_STAGE, own))
    total = None if own is None else own + sum(seconds or 0.0 for _, seconds in first)
    return RunEstimate(total, basis, scale, stages=stages)


def sharing(planned: list[tuple[Analyzer, AnalyzerParams, RunEstimate]]) -> list[RunEstimate]:  # type: ignore[type-arg]
    """The estimates of one plan's runs (in the order they will run), each run whose cached stages
    (``Analyzer.cached_stages``) the runs before it all build marked so: it sorts after the runs with an
    estimate and counts nothing in the plan's total, since the earlier runs pay for the stages. A first-use
    stage (a built-in model trained) counts only in the first run that needs it."""
    built: set[str] = set()
    paid: set[str] = set()  # first-use stages an earlier run of the plan pays for
    marked = []
    for analyzer, params, found in planned:
        if any(name in paid for name, _ in found.stages):
            kept = tuple((name, seconds) for name, seconds in found.stages if name not in paid)
            left = [seconds for _, seconds in kept]
            # The stages left, summed (not the total less what is paid: that leaves a rounding residue).
            own = None if found.seconds is None else sum(s for s in left if s is not None) if None not in left \
                else found.seconds - sum(seconds or 0.0 for name, seconds in found.stages if name in paid)
            found = RunEstimate(own, found.basis, found.scale, found.not_runnable, stages=kept)
        paid |= {name for name, _ in found.stages if is_first_use(name)}
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


def with_left(message: str, left: float | None) -> str:
    """``message`` with 'about N left' appended (unchanged when unknown, or when it says its own time left)."""
    if left is None or " left" in message:  # an analyzer that says its own time left knows it best
        return message
    said = f"about {duration_text(left)} left"
    return f"{message} · {said}" if message else said


@dataclass
class _Stage:
    name: str
    began: float  # seconds into the run
    start: float  # the run's reported fraction when the stage began
    until: float  # the fraction at which the analyzer said the stage ends
    ended: float | None = None
    implicit: bool = False  # the run's start before it named a stage (imports, setup): weighs nothing on the bar


class StagedClock:
    """One run's progress over its stages (``RunContext.enter_stage``), for the bar and the time left.

    The bar: each stage weighs its estimate (``RunEstimate.stages``; a stage without one, its share of the
    analyzer's own fraction); done stages count whole, the current one by its share done, and the bar never
    moves back. The time left: the current stage's by its own pace (``time_left``: its estimate early, its
    measured rate as it moves), plus the estimates of the stages still to come, scaled by how the stages done so
    far compared with theirs. A run that names no stages is one stage, ``MAIN_STAGE``, over its whole fraction.
    """

    def __init__(self) -> None:
        self.stages = [_Stage(MAIN_STAGE, 0.0, 0.0, 1.0, implicit=True)]
        self.expected: dict[str, float | None] = {}
        self.fraction = 0.0  # the analyzer's latest
        self.shown = 0.0  # the bar's latest: never lower than before
        self.planned: list[str] = []

    def expect(self, estimate: RunEstimate) -> None:
        """Weigh the stages by ``estimate`` (asked for lazily: a run that never reports pays nothing)."""
        self.expected = dict(estimate.stages)
        self.planned = [name for name, _ in estimate.stages]
        if not estimate.stages and estimate.seconds is not None:
            self.expected, self.planned = {MAIN_STAGE: estimate.seconds}, [MAIN_STAGE]

    def enter(self, name: str, until: float, elapsed: float) -> None:
        """The analyzer entered stage ``name`` (ending at its fraction ``until``) ``elapsed`` seconds in."""
        self.stages[-1].ended = elapsed
        self.stages.append(_Stage(name, elapsed, self.fraction, until))

    def _local(self, stage: _Stage) -> float:
        span = stage.until - stage.start
        return 0.0 if span <= 0 else min(1.0, max(0.0, (self.fraction - stage.start) / span))

    def _weight(self, stage: _Stage) -> float | None:
        return self.expected.get(stage.name)

    def update(self, fraction: float, elapsed: float) -> tuple[float, float | None]:
        """The bar's fraction and the seconds left after the analyzer reported ``fraction``."""
        self.fraction = fraction
        current = self.stages[-1]
        done = [stage for stage in self.stages[:-1] if not stage.implicit]  # the start before a named stage: none
        local = self._local(current)
        entered = {stage.name for stage in [*done, current]}
        # Stages planned after the current one: one planned before it but never entered (a model another run
        # trained meanwhile) is skipped, so the bar still reaches its end.
        after = self.planned[self.planned.index(current.name) + 1:] if current.name in self.planned else self.planned
        to_come = [name for name in after if name not in entered]
        weights = [self._weight(s) for s in [*done, current]] + [self.expected.get(n) for n in to_come]
        if weights and all(w is not None and w > 0 for w in weights):
            finished = sum(self._weight(s) or 0.0 for s in done)
            total = sum(w or 0.0 for w in weights)
            bar = (finished + (self._weight(current) or 0.0) * local) / total
        else:  # no estimate for some stage: the analyzer's own fraction
            bar = fraction
        self.shown = max(self.shown, min(1.0, bar))
        return self.shown, self._left(current, done, local, elapsed, to_come)

    def _left(self, current: _Stage, done: list[_Stage], local: float, elapsed: float,
              to_come: list[str]) -> float | None:
        timed = [(s.ended - s.began, self.expected[s.name]) for s in done
                 if s.ended is not None and self.expected.get(s.name)]
        pace = 1.0
        if timed:  # how the stages done so far went against their estimates, within bounds
            pace = min(4.0, max(0.25, sum(a for a, _ in timed) / sum(e or 1.0 for _, e in timed)))
        expected = self._weight(current)
        left = time_left(elapsed - current.began, local, None if expected is None else expected * pace)
        later = [self.expected.get(name) for name in to_come]
        if left is None or any(seconds is None for seconds in later):
            return None
        return left + sum((seconds or 0.0) * pace for seconds in later)

    def durations(self, elapsed: float) -> dict[str, float]:
        """Seconds each stage took, the current one ending now (``elapsed``): what the run stores."""
        spent: dict[str, float] = {}
        for stage in self.stages:
            end = stage.ended if stage.ended is not None else elapsed
            spent[stage.name] = spent.get(stage.name, 0.0) + max(0.0, end - stage.began)
        return spent
