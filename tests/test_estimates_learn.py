"""Estimates that learn (issue 40): the median of this machine's earlier runs of the same analyzer and
parameters, else the declared time scaled by the measured speed; first-use costs (a built-in model to train)
as their own stage; in-run, one bar over the stages that never moves back, and a time left from each stage's
own pace; the estimate and the actual time stored with each run."""

from __future__ import annotations

import datetime as dt
import json
import statistics
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session

from analyzers import registry
from analyzers.base import RunContext
from analyzers.depth.catalog import TRAIN_SECONDS, builtin_folder
from analyzers.progress import MAIN_STAGE, first_use_stage
from kb.evidence.estimates import RunEstimate, StagedClock, estimate, machine_slowness, sharing, time_left
from kb.index.database import Run, make_engine, utcnow
from kb.index.migrate import upgrade
from schemas import RunStatus
from tests.helpers.queue_kb import queue_kb

MODEL = "builtin:esm-designed-4x64"


def _engine(tmp_path: Path) -> Engine:
    engine = make_engine(f"sqlite:///{tmp_path / 'index.db'}")
    upgrade(engine)
    return engine


def _insert(engine: Engine, analyzer: str, params: dict[str, Any], seconds: float, *,
            status: RunStatus = RunStatus.succeeded, stages: dict[str, float] | None = None,
            stored: bool = True) -> None:
    finished = utcnow()
    run = Run(analyzer=analyzer, params_json=json.dumps(params), status=status.value,
              started_at=finished - dt.timedelta(seconds=seconds), finished_at=finished,
              actual_seconds=seconds if stored else None,
              stages_json=json.dumps(stages) if stages is not None else None)
    with Session(engine) as session:
        session.add(run)
        session.commit()


def test_estimate_is_the_median_of_earlier_runs_of_the_same_parameters(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    probe = registry.get("depth.probe")
    smoke = probe.params_for(scale="smoke")
    for seconds, seed in ((12.0, 0), (30.0, 1), (18.0, 2)):  # any seed counts
        _insert(engine, "depth.probe", smoke.model_copy(update={"seed": seed}).model_dump(mode="json"), seconds)
    _insert(engine, "depth.probe", probe.params_for({"max_sequences": 4}).model_dump(mode="json"), 900.0)
    _insert(engine, "depth.probe", smoke.model_dump(mode="json"), 500.0, status=RunStatus.failed)
    # an older run, timed from started to finished (before runs kept their actual time)
    _insert(engine, "depth.probe", smoke.model_dump(mode="json"), 20.0, stored=False)
    found = estimate(engine, probe, smoke, loading=())
    assert found.seconds == statistics.median([12.0, 30.0, 18.0, 20.0]) == 19.0
    assert found.basis == "measured here, 4 runs"
    assert found.stages == ((MAIN_STAGE, 19.0),)


def test_a_runs_first_use_stages_are_left_out_of_its_history(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    probe = registry.get("depth.probe")
    smoke = probe.params_for(scale="smoke").model_dump(mode="json")
    _insert(engine, "depth.probe", smoke, 50.0, stages={first_use_stage(f"training {MODEL}"): 41.0,
                                                        MAIN_STAGE: 9.0})
    assert estimate(engine, probe, probe.params_for(scale="smoke"), loading=()).seconds == 9.0


def test_a_learned_estimate_splits_the_runs_own_time_by_its_stored_stage_times(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    probe = registry.get("depth.probe")
    smoke = probe.params_for(scale="smoke")
    params = smoke.model_dump(mode="json")
    training = first_use_stage(f"training {MODEL}")
    for design, sampling in ((10.0, 50.0), (30.0, 70.0), (20.0, 90.0)):
        _insert(engine, "depth.probe", params, 2.0 + design + sampling + 40.0,
                stages={MAIN_STAGE: 2.0, "design": design, "sampling": sampling, training: 40.0})
    found = estimate(engine, probe, smoke, loading=())
    assert found.own_stages == (("design", 20.0), ("sampling", 70.0))  # each stage's median; first use out
    assert found.seconds == statistics.median([62.0, 102.0, 112.0])
    # a run that stored other stages (an older version of the analyzer): no split, the fractions weigh them
    _insert(engine, "depth.probe", params, 100.0, stages={MAIN_STAGE: 100.0})
    assert estimate(engine, probe, smoke, loading=()).own_stages == ()


def test_without_history_the_declared_time_is_scaled_by_this_machines_speed(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    probe = registry.get("depth.probe")
    found = estimate(engine, probe, probe.params_for(scale="smoke"), loading=())
    assert found.seconds == probe.expected_seconds["smoke"] * machine_slowness()
    assert "'smoke' preset" in found.basis
    custom = estimate(engine, probe, probe.params_for({"max_sequences": 3}), loading=())
    assert custom.seconds is None and "no run of depth.probe" in custom.basis


def test_training_a_built_in_model_is_a_first_use_stage_until_the_cache_holds_it(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    probe = registry.get("depth.probe")
    params = probe.params_for(scale="smoke")
    cache = tmp_path / "cache"
    fresh = estimate(engine, probe, params, cache_dir=cache, loading=())
    training = TRAIN_SECONDS[MODEL] * machine_slowness()
    own = probe.expected_seconds["smoke"] * machine_slowness()
    assert fresh.stages == ((first_use_stage(f"training {MODEL}"), training), (MAIN_STAGE, own))
    assert fresh.seconds == training + own
    assert "first use, once: training builtin:esm-designed-4x64" in fresh.text()
    # a plan pays for it once: the second run needing the same model does not count it again
    twice = sharing([(probe, params, fresh), (probe, params, fresh)])
    assert twice[0].seconds == training + own and twice[1].seconds == own
    # ...and the queue orders them by their own time, so the run that pays it (queued first) runs first
    assert twice[0].sort_key == twice[1].sort_key and twice[0].own_seconds == own
    trained = builtin_folder(MODEL, params.seed, cache / "depth")
    trained.mkdir(parents=True)
    (trained / "training.json").write_text("{}", encoding="utf-8")
    assert estimate(engine, probe, params, cache_dir=cache, loading=()).stages == ((MAIN_STAGE, own),)


def test_the_staged_bar_never_moves_back_and_the_time_left_follows_each_stages_pace() -> None:
    training, own = 40.0, 10.0
    stage = first_use_stage(f"training {MODEL}")
    clock = StagedClock()
    clock.expect(RunEstimate(training + own, "test", stages=((stage, training), (MAIN_STAGE, own))))
    assert clock.update(0.0, elapsed=2.0)[0] == 0.0  # importing its modules, before it names a stage
    clock.enter(stage, 0.3, elapsed=2.0)
    assert clock.update(0.0, elapsed=2.0)[0] == 0.0  # the start weighs nothing: the bar does not jump
    clock.stages[-1].began = 0.0  # (measure the stage from 0 s below, for round numbers)
    # training reports 0..0.3 of the analyzer's fraction; here it runs twice as slow as estimated
    bar, left = clock.update(0.15, elapsed=40.0)
    assert bar == 0.5 * training / (training + own)
    # its own pace: 40 s for half the stage, blended with the estimate by its progress (time_left), then the run
    assert left == time_left(40.0, 0.5, training) + own
    bars = [bar]
    bar, _ = clock.update(0.3, elapsed=80.0)
    bars.append(bar)
    clock.enter(MAIN_STAGE, 1.0, elapsed=80.0)
    # the analyzer's own fraction starts again low ("preparing" at 0): the bar stays where training ended
    bar, left = clock.update(0.0, elapsed=80.5)
    bars.append(bar)
    assert bar == training / (training + own)
    # the later stage's estimate scaled by how the done stage went against its own (80 s for 40 s: 2x), the
    # estimate counted as a tenth of the run's planned 50 s at its own pace: (80 + 5) / (40 + 5)
    assert left is not None and abs(left - (85 / 45 * own - 0.5)) < 1e-9
    for fraction, elapsed in ((0.5, 85.0), (0.65, 88.0), (1.0, 92.0)):
        bars.append(clock.update(fraction, elapsed)[0])
    assert bars == sorted(bars) and bars[-1] == 1.0
    assert clock.durations(92.0) == {MAIN_STAGE: 2.0 + 12.0, stage: 80.0}  # the start counts as the run's own


def test_a_planned_first_use_stage_the_run_skips_leaves_the_bar_reaching_its_end() -> None:
    # the cache got the model from another run meanwhile: the analyzer never enters the first-use stage
    clock = StagedClock()
    clock.expect(RunEstimate(50.0, "test", stages=((first_use_stage("training x"), 40.0), (MAIN_STAGE, 10.0))))
    assert clock.update(0.5, elapsed=5.0)[0] == 0.5
    assert clock.update(1.0, elapsed=10.0)[0] == 1.0


def test_a_family_probes_bar_moves_forward_across_its_models(tmp_path: Path) -> None:
    # RunContext.within maps each model's 0..1 onto its share of the run: the bar never falls back
    seen: list[float] = []
    ctx = RunContext(tmp_path, progress=lambda fraction, message: seen.append(fraction))
    for index in range(3):
        share = ctx.within(index / 3, (index + 1) / 3)
        for fraction in (0.0, 0.5, 0.95, 1.0):
            share.report(fraction)
    assert seen == sorted(seen) and seen[-1] == 1.0


def test_a_run_stores_its_estimate_and_actual_time(tmp_path: Path) -> None:
    kb = queue_kb(tmp_path)
    queued, _ = kb.verify()
    assert queued
    kb.work(once=True)
    ended = [kb.get_run(run.id) for run in queued]
    assert all(run is not None and run.status is RunStatus.succeeded for run in ended)
    run = ended[0]
    assert run is not None and run.actual_seconds is not None
    assert run.started_at is not None and run.finished_at is not None
    assert 0 < run.actual_seconds <= (run.finished_at - run.started_at).total_seconds() + 1
    assert abs(sum(run.stages.values()) - run.actual_seconds) < 1e-6
    # the next run of the same claim is queued with what this one took here as its estimate
    again, _ = kb.verify(["q#echo-big"])
    assert again[0].expected_seconds == run.stages[MAIN_STAGE]
    assert kb.run_estimates[again[0].id].basis == "measured here, 1 run"
