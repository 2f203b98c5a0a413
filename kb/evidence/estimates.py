"""How long a run will take, before and while it runs: the one rule the queue's order and every display use.

Before a run: the median duration of earlier runs of the same analyzer on the same parameters (any seed) in
this index (what this machine really took), else the analyzer's ``expected_seconds`` for the preset (the
reference machine's seconds) scaled by this machine's speed now (a short probe of small single-threaded work,
measured again each minute in a long-lived process), else unknown. A run that cannot execute here
(``preflight`` says why: no GPU) answers at once. ``kb.core`` queues the runs of one ``verify`` quick ones
first by this estimate, so the first verdicts come in minutes; the demo prints it for each run before it
starts. While a run works, ``with_left`` appends the "about N min left" every surface shows.

First-use costs (training a built-in model, a download into the cache: ``Analyzer.first_use``; loading a heavy
library the process lacks: ``Analyzer.libraries``) are stages of their own: added to the estimate while the
cache or the process lacks what they build (their median here once paid, else their declared time scaled by
the speed), and left out of the run's own history, since
a run stores each stage's duration (``Run.stages_json``) beside its estimate and its actual time. While a
run works, ``StagedClock`` turns its stages into one bar weighted by their estimates, which never moves back,
and a time left from each stage's own measured pace. A stage of the run's own work (design, training) is
weighed by its median time in the past runs the estimate comes from (``RunEstimate.own_stages``), else by the
share of the progress fraction the analyzer declares for it.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from analyzers.base import Analyzer, AnalyzerParams, NotRunnable
from analyzers.progress import LIBRARIES, MAIN_STAGE, duration_text, is_first_use, loading_stage
from kb.index.database import Run
from schemas import RunStatus

#: Seconds ``calibration_seconds`` takes on the reference machine: the project's 2-core machine without
#: contention (one probe round's CPU time there, median of 20, measured under load: what it costs when not
#: kept waiting). The unit of every declared time: each is its cost measured as a multiple of the probe's
#: time, the two interleaved, times this (``benchmarks/bench_costs.py``), so the unit cancels out of an
#: estimate made that way: the declared multiple times the probe's time now.
REFERENCE_CALIBRATION_SECONDS = 0.011
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
    # (stage, seconds) in the order the run works through them: first-use stages, then MAIN_STAGE (its own
    # work)
    stages: tuple[tuple[str, float | None], ...] = field(default=())
    # The run's own work split by the stages it names (design, training, ...): the median seconds of each in
    # the past runs the estimate is measured from, when they stored their stage times. A stage's weight on the
    # bar and in the time left comes from here, not from the share of the progress fraction the analyzer
    # declares for it, which need not match its time on this machine.
    own_stages: tuple[tuple[str, float], ...] = field(default=())

    @property
    def first_use_seconds(self) -> float:
        """Seconds of one-off stages in this estimate (0: none)."""
        return sum(seconds or 0.0 for name, seconds in self.stages if is_first_use(name))

    @property
    def own_seconds(self) -> float | None:
        """Seconds of the run's own work, first-use stages left out: what orders the queue, since whichever
        run of a plan starts first pays a first-use stage the runs after it share."""
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
        once = "; ".join(
            f"{name.removeprefix('first use: ')} ~{duration_text(seconds)}" for name, seconds in first
        )
        own = self.seconds - self.first_use_seconds
        return (
            f"about {duration_text(self.seconds)} (first use, once: {once}; then "
            f"{duration_text(own)}: {self.basis})"
        )


def calibration_seconds(rounds: int = 5) -> float:
    """The median of ``rounds`` timings of a fixed small single-threaded workload: interpreter steps and small
    array products, what the analyzers' tiny models and imports mostly are. (A large multi-threaded matrix
    product, as before, measured its BLAS threads' contention: 80-100x slower than idle under a load of 15
    while the analyzers' work was 17-50x slower.) The median: under changing load the best is the luckiest
    moment, not the machine the run will get."""
    import numpy as np

    matrix = np.random.default_rng(0).standard_normal((48, 48))
    timings = []
    for _ in range(rounds):
        start = time.perf_counter()
        total = 0
        for step in range(10_000):
            total += step % 7
        product = matrix
        for _ in range(150):
            product = np.tanh(product @ matrix * 0.05)
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


#: Seconds a measured speed holds: a long-lived process (a worker, the demo) measures again after this, so the
#: estimate a run gets at its start follows the machine's load as it changes.
SLOWNESS_HOLDS = 60.0
_measured: list[tuple[float, float]] = []  # (monotonic time, slowness) of the latest measurement


def machine_slowness() -> float:
    """How many times slower than the reference machine this one is now (below 1: faster): measured at most
    once every ``SLOWNESS_HOLDS`` seconds in a process."""
    now = time.monotonic()
    if not _measured or now - _measured[-1][0] > SLOWNESS_HOLDS:
        slowness = min(50.0, max(0.25, calibration_seconds() / REFERENCE_CALIBRATION_SECONDS))
        _measured[:] = [(now, slowness)]
    return _measured[-1][1]


def _history_key(params: AnalyzerParams) -> str:
    # The same parameters (any seed) on the same kind of device: what a claim's re-verification repeats.
    kept = params.model_dump(mode="json", exclude={"seed"})
    return json.dumps({**kept, "device": params.device.split(":")[0]}, sort_keys=True, default=str)


def past_runs(engine: Engine, analyzer: Analyzer,  # type: ignore[type-arg]
              params: AnalyzerParams) -> list[tuple[float, dict[str, float]]]:
    """The latest succeeded runs of this analyzer on these parameters (any seed) here, newest first: each
    one's own seconds (``own_seconds``) and the seconds of each of its own stages it stored (first-use ones
    left out; empty for runs from before kb stored stage times)."""
    wanted = _history_key(params)
    found: list[tuple[float, dict[str, float]]] = []
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
            stages: dict[str, float] = json.loads(run.stages_json) if run.stages_json else {}
            found.append((seconds, {name: float(value) for name, value in stages.items()
                                    if not is_first_use(name)}))
            if len(found) == HISTORY:
                break
    return found


def stage_medians(past: Sequence[dict[str, float]]) -> tuple[tuple[str, float], ...]:
    """The median seconds of each named stage of the run's own work over ``past`` runs' stored stage times,
    when every one of them named the same stages (a run that names none, or an analyzer whose stages changed
    between versions, gives none: the declared fractions weigh the stages then)."""
    named = [{name: s for name, s in stages.items() if name != MAIN_STAGE} for stages in past]
    if not named or not named[0] or any(stages.keys() != named[0].keys() for stages in named):
        return ()
    return tuple((name, statistics.median(stages[name] for stages in named)) for name in named[0])


def own_seconds(run: Run) -> float | None:
    """Seconds a finished run spent on its own work: its measured time less its first-use stages (what the
    same run takes again here); runs from before kb stored times, from started to finished."""
    if run.actual_seconds is not None:
        stages: dict[str, float] = json.loads(run.stages_json) if run.stages_json else {}
        return max(0.0, run.actual_seconds - sum(v for k, v in stages.items() if is_first_use(k)))
    if run.started_at is None or run.finished_at is None:
        return None
    return (run.finished_at - run.started_at) / dt.timedelta(seconds=1)


def missing_libraries(analyzer: Analyzer) -> list[str]:  # type: ignore[type-arg]
    """The heavy libraries ``analyzer`` needs (``Analyzer.libraries``) that this process has not loaded
    yet."""
    return [name for name in analyzer.libraries if LIBRARIES[name][0] not in sys.modules]


def load_libraries(libraries: Sequence[str], clock: StagedClock, elapsed: Callable[[], float]) -> None:
    """Import ``libraries`` (``missing_libraries``), each timed as its own first-use stage on ``clock``, then
    go back to the run's start: what the worker and ``kb run`` do before an analyzer's own code."""
    for name in libraries:
        clock.enter(loading_stage(name), 0.0, elapsed())
        importlib.import_module(LIBRARIES[name][0])
    if libraries:
        clock.enter(MAIN_STAGE, 1.0, elapsed(), implicit=True)


def past_stage_seconds(engine: Engine, stage: str) -> list[float]:
    """Seconds the stage ``stage`` (a first-use one: loading a library, training a built-in model) took in the
    latest runs here that paid it, of any analyzer, newest first (up to ``HISTORY``)."""
    found: list[float] = []
    with Session(engine) as session:
        rows = session.exec(select(Run.stages_json).where(Run.status == RunStatus.succeeded.value,
                                                          col(Run.stages_json).contains(json.dumps(stage),
                                                                                        autoescape=True))
                            .order_by(col(Run.finished_at).desc()).limit(HISTORY)).all()
    for text in rows:
        seconds = json.loads(text or "{}").get(stage)
        if isinstance(seconds, int | float):
            found.append(float(seconds))
    return found


def first_use_estimate(engine: Engine, stage: str, reference: float) -> float:
    """Seconds a first-use stage should take here: the median of this machine's past ones, else ``reference``
    (seconds on the reference machine) scaled by this machine's measured speed."""
    past = past_stage_seconds(engine, stage)
    return statistics.median(past) if past else reference * machine_slowness()


def estimate(engine: Engine, analyzer: Analyzer, params: AnalyzerParams,  # type: ignore[type-arg]
             scale: str | None = None, cache_dir: Path | None = None,
             loading: Sequence[str] | None = None) -> RunEstimate:
    """How long a run of ``analyzer`` on ``params`` should take on this machine (see the module docstring).

    ``scale``: the preset the parameters started from (a claim's bound scale, which its own parameters may
    change a little); default the preset they equal, if any. ``cache_dir``: the analyzers' cache the run will
    use, whose gaps are first-use stages (None: none counted). ``loading``: the libraries the run's process
    has to load first (default: those this process lacks, ``missing_libraries``).
    """
    scale = scale or analyzer.scale_name(params)
    try:
        analyzer.preflight(params)
    except NotRunnable as exc:
        return RunEstimate(0.0, "preflight", scale, not_runnable=str(exc))
    loads = missing_libraries(analyzer) if loading is None else loading
    first: list[tuple[str, float | None]] = [
        (loading_stage(name), first_use_estimate(engine, loading_stage(name), LIBRARIES[name][1]))
        for name in loads
    ]
    if cache_dir is not None:
        first += [(name, first_use_estimate(engine, name, seconds))
                  for name, seconds in analyzer.first_use(params, cache_dir)]
    past = past_runs(engine, analyzer, params)
    own: float | None
    split: tuple[tuple[str, float], ...] = ()
    if past:
        own, basis = (statistics.median(s for s, _ in past),
                      f"measured here, {len(past)} run{'s' if len(past) > 1 else ''}")
        split = stage_medians([stages for _, stages in past])
    elif (expected := analyzer.expected_seconds.get(scale)) is not None:
        own = expected * machine_slowness()
        basis = f"'{scale}' preset, {machine_slowness():.1f}x the reference machine's time"
    else:
        own, basis = None, f"no run of {analyzer.name} at '{scale}' timed here yet"
    stages = (*first, (MAIN_STAGE, own))
    total = None if own is None else own + sum(seconds or 0.0 for _, seconds in first)
    return RunEstimate(total, basis, scale, stages=stages, own_stages=split)


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
            own = (
                None
                if found.seconds is None
                else sum(s for s in left if s is not None)
                if None not in left
                else found.seconds - sum(seconds or 0.0 for name, seconds in found.stages if name in paid)
            )
            found = RunEstimate(own, found.basis, found.scale, found.not_runnable, stages=kept,
                                own_stages=found.own_stages)
        paid |= {name for name, _ in found.stages if is_first_use(name)}
        stages = analyzer.cached_stages(params)
        if stages and stages <= built and found.not_runnable is None:
            found = RunEstimate(None, f"its full time alone: {found.text()}", found.scale, shares_work=True)
        built |= stages
        marked.append(found)
    return marked


#: How much the estimate counts in a run's time left, as a share of the work done at the estimated rate: the
#: first tenth of a stage is read half from the estimate, and the measured rate takes over as the stage moves
#: on.
PRIOR_SHARE = 0.1


def time_left(elapsed: float, fraction: float, expected: float | None) -> float | None:
    """Seconds a running run (or stage) has left, from its progress and its estimate (None: no way to tell).

    The rate is the run's own measured rate with the estimate counted as ``PRIOR_SHARE`` of the work already
    done at the estimated rate: (fraction + k) / (elapsed + k * expected). So early on (a first report of 1 %
    says little) the estimate counts most, the measured rate takes over as the run moves, and the time left
    falls as fast as the run really works (a weight of ``fraction`` on each, as before, gave (1 - fraction) *
    expected whatever the time spent: a slow run's time left stood still). Before any measurable progress,
    the estimate less the time spent; past it, unknown.
    """
    if fraction < 0.01 or elapsed < 1:
        return expected - elapsed if expected is not None and expected > elapsed else None
    if expected is None or expected <= 0:
        return elapsed * (1 - fraction) / fraction
    rate = (fraction + PRIOR_SHARE) / (elapsed + PRIOR_SHARE * expected)
    return (1 - fraction) / rate


def with_left(message: str, left: float | None) -> str:
    """``message`` with 'about N left' appended (unchanged when unknown, or when it says its own time
    left)."""
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
    # the run's start before it named a stage (imports, setup): weighs nothing on the bar
    implicit: bool = False


class StagedClock:
    """One run's progress over its stages (``RunContext.enter_stage``), for the bar and the time left.

    Each stage weighs the seconds it should take: a first-use stage its own estimate (``RunEstimate.stages``);
    a stage of the run's own work (``MAIN_STAGE``, or the analyzer's own names: design, training, sampling)
    the share of the run's own estimate that its span of the analyzer's fraction declares. The bar: done
    stages count whole, the current one by its share done, and it never moves back. The time left: the current
    stage's from its own measured rate (``time_left``: its estimate early, its rate as it moves), plus the
    stages still to come, scaled by how the stages done so far went against their estimates. A run that names
    no stages is one stage, ``MAIN_STAGE``, over its whole fraction.
    """

    def __init__(self) -> None:
        self.stages = [_Stage(MAIN_STAGE, 0.0, 0.0, 1.0, implicit=True)]
        self.expected: dict[str, float | None] = {}
        self.fraction = 0.0  # the analyzer's latest
        self.shown = 0.0  # the bar's latest: never lower than before
        self.planned: list[str] = []
        self.split: dict[str, float] = {}  # the estimate's own stages, learned (``RunEstimate.own_stages``)

    def expect(self, estimate: RunEstimate) -> None:
        """Weigh the stages by ``estimate`` (asked for lazily: a run that never reports pays nothing)."""
        self.expected = dict(estimate.stages)
        self.split = dict(estimate.own_stages)
        self.planned = [name for name, _ in estimate.stages]
        if not estimate.stages and estimate.seconds is not None:
            self.expected, self.planned = {MAIN_STAGE: estimate.seconds}, [MAIN_STAGE]

    def enter(self, name: str, until: float, elapsed: float, *, implicit: bool = False) -> None:
        """The analyzer entered stage ``name`` (ending at its fraction ``until``) ``elapsed`` seconds in;
        ``implicit``: back to the run's start before it names a stage (after loading its libraries)."""
        self.stages[-1].ended = elapsed
        self.stages.append(_Stage(name, elapsed, self.fraction, until, implicit=implicit))

    def _local(self, stage: _Stage) -> float:
        span = stage.until - stage.start
        return 0.0 if span <= 0 else min(1.0, max(0.0, (self.fraction - stage.start) / span))

    def _own_span(self) -> tuple[float, float]:
        """Where the run's own work lies on the analyzer's fraction: from its first named own stage to 1."""
        for stage in self.stages:
            if not stage.implicit and not is_first_use(stage.name):
                return stage.start, 1.0 - stage.start
        return 0.0, 1.0

    def _own_share(self, start: float, until: float) -> float | None:
        """Seconds the part ``start``..``until`` of the analyzer's fraction should take, by the run's own
        estimate."""
        own = self.expected.get(MAIN_STAGE)
        origin, span = self._own_span()
        if own is None:
            return None if until > start else 0.0
        return own * max(0.0, min(until, 1.0) - max(start, origin)) / span if span > 0 else 0.0

    def _learned(self) -> bool:
        """Whether learned stage times weigh the run's own stages: each one it has named so far has one."""
        named = [s.name for s in self.stages if not s.implicit and not is_first_use(s.name)]
        return bool(self.split) and all(name in self.split for name in named)

    def _weight(self, stage: _Stage) -> float | None:
        if is_first_use(stage.name):
            return self.expected.get(stage.name)
        if stage.implicit:  # the whole run while it names no stage
            return self.expected.get(MAIN_STAGE)
        if self._learned():
            return self.split[stage.name]
        return self._own_share(stage.start, stage.until)

    def _to_come(self, current: _Stage) -> list[float | None]:
        """The estimates of what the run has still to do after its current stage."""
        if current.implicit:  # a run that names no stage: one stage (a planned first use was done meanwhile)
            return []
        entered = {stage.name for stage in self.stages}
        if is_first_use(current.name):
            after = (
                self.planned[self.planned.index(current.name) + 1 :] if current.name in self.planned else []
            )
            first = [self.expected.get(name) for name in after if is_first_use(name) and name not in entered]
            return [*first, self.expected.get(MAIN_STAGE)]
        if self._learned():  # the named stages past runs went through that this one has not entered yet
            return [seconds for name, seconds in self.split.items() if name not in entered]
        return [self._own_share(current.until, 1.0)]

    def update(self, fraction: float, elapsed: float) -> tuple[float, float | None]:
        """The bar's fraction and the seconds left after the analyzer reported ``fraction``."""
        self.fraction = fraction
        current = self.stages[-1]
        # the start before a named stage: none
        done = [stage for stage in self.stages[:-1] if not stage.implicit]
        local = self._local(current)
        weights = [self._weight(stage) for stage in done]
        present, later = self._weight(current), self._to_come(current)
        known = [w for w in [*weights, present, *later] if w is not None]
        if len(known) == len(weights) + 1 + len(later) and sum(known) > 0:
            finished = sum(w or 0.0 for w in weights)
            bar = (finished + (present or 0.0) * local) / sum(known)
        else:  # no estimate for some stage: the analyzer's own fraction
            bar = fraction
        self.shown = max(self.shown, min(1.0, bar))
        return self.shown, self._left(current, done, local, elapsed, later)

    def _left(self, current: _Stage, done: list[_Stage], local: float, elapsed: float,
              later: list[float | None]) -> float | None:
        # How the stages done so far went against their estimates, the estimate itself counted as PRIOR_SHARE
        # of the run at its own pace (one quick first stage does not rescale the rest alone), within bounds.
        timed = [(s.ended - s.began, w) for s in done if s.ended is not None and (w := self._weight(s))]
        planned = sum(w for w in [*(w for _, w in timed), self._weight(current), *later] if w)
        prior = PRIOR_SHARE * planned
        pace = 1.0
        if timed and prior + sum(w for _, w in timed) > 0:
            pace = (sum(a for a, _ in timed) + prior) / (sum(w for _, w in timed) + prior)
            pace = min(4.0, max(0.25, pace))
        expected = self._weight(current)
        left = time_left(elapsed - current.began, local, None if expected is None else expected * pace)
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
