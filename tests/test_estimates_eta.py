"""In-run time left (issue 40): it comes from the run's own measured rate per stage and moves as the run moves.

The Langevin run's time left stood at "2 h 15 min" for 13 minutes: the old rule weighed the run's pace and
its estimate by the fraction done, which is (1 - fraction) * estimate whatever the time spent. These tests
drive ``time_left`` and ``StagedClock`` with a controllable clock (the elapsed seconds are given, no sleeps)
and compare the time left with the true time left of a simulated run.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from analyzers import registry
from analyzers.base import RunContext
from analyzers.progress import MAIN_STAGE, duration_text, loading_stage
from kb.evidence.estimates import RunEstimate, StagedClock, time_left


@pytest.mark.parametrize("expected", [30.0, 600.0, 8100.0])
def test_a_run_keeping_its_estimated_pace_counts_down_exactly(expected: float) -> None:
    for share in (0.02, 0.1, 0.37, 0.5, 0.9, 0.99):
        elapsed = share * expected
        assert time_left(elapsed, share, expected) == pytest.approx(expected - elapsed, rel=1e-9)


@pytest.mark.parametrize(("expected", "actual"), [(8100.0, 3000.0), (300.0, 1200.0)])
def test_the_time_left_moves_from_the_estimate_to_the_measured_rate(expected: float, actual: float) -> None:
    # a run working at a steady rate, its true duration ``actual``: the time left's error against the truth
    # lies between none and the estimate's own, and shrinks at every report as the run moves on
    errors = []
    for share in (0.02, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 0.95):
        elapsed = share * actual
        left = time_left(elapsed, share, expected)
        assert left is not None
        truth = actual - elapsed
        ratio = left / truth
        assert min(1.0, expected / actual) <= ratio <= max(1.0, expected / actual)
        errors.append(abs(ratio - 1))
    assert errors == sorted(errors, reverse=True) and errors[0] > 2 * errors[-1]
    assert errors[-1] < 0.2  # near the end the run's own rate decides


def test_the_issue_40_stall_the_time_left_falls_as_the_run_works() -> None:
    # the Langevin small run: estimated 2 h 15 min, working at twice that pace, reporting every minute for
    # 13 minutes from 5 % to 14 %: the old rule said "2 h 15 min"-ish throughout
    expected, actual = 8100.0, 4050.0
    shown = []
    for minute in range(1, 14):
        elapsed = 60.0 * minute
        left = time_left(elapsed, elapsed / actual, expected)
        assert left is not None
        shown.append(left)
    assert shown == sorted(shown, reverse=True) and len(set(map(duration_text, shown))) == len(shown)
    assert shown[-1] < 0.8 * (1 - 780 / actual) * expected  # well below what the old rule said at 13 min


def test_no_progress_yet_counts_down_the_estimate_and_then_says_nothing() -> None:
    assert time_left(10.0, 0.0, 100.0) == 90.0
    assert time_left(120.0, 0.0, 100.0) is None
    assert time_left(40.0, 0.5, None) == 40.0  # no estimate: the run's own pace alone


def _langevin_like(clock: StagedClock, spans: dict[str, tuple[float, float, float]],
                   every: float = 30.0) -> list[tuple[float, float, float | None]]:
    """Drive ``clock`` like a run with stages ``name: (start, until, seconds)`` reporting every ``every`` s
    at a steady rate within each stage; (elapsed, bar, left) at each report."""
    seen = []
    elapsed = 0.0
    for name, (start, until, seconds) in spans.items():
        clock.update(start, elapsed)
        clock.enter(name, until, elapsed)
        began = elapsed
        while elapsed < began + seconds:
            elapsed = min(began + seconds, elapsed + every)
            bar, left = clock.update(start + (until - start) * (elapsed - began) / seconds, elapsed)
            seen.append((elapsed, bar, left))
    return seen


def test_a_langevin_like_runs_time_left_follows_each_stages_rate() -> None:
    # stages named as the Langevin pipeline names them, on its fraction (design to 5 %, training to 30 %,
    # sampling to 95 %); the run's own estimate 8100 s, its true stages quicker and in other proportions
    spans = {"design": (0.0, 0.05, 60.0), "training": (0.05, 0.3, 1500.0), "sampling": (0.3, 0.95, 2400.0),
             "analysis": (0.95, 1.0, 60.0)}
    total = sum(seconds for _, _, seconds in spans.values())
    clock = StagedClock()
    clock.expect(RunEstimate(8100.0, "test", stages=((MAIN_STAGE, 8100.0),)))
    seen = _langevin_like(clock, spans)
    bars = [bar for _, bar, _ in seen]
    assert bars == sorted(bars) and bars[-1] == 1.0
    lefts = [left for _, _, left in seen]
    assert all(left is not None for left in lefts)
    # never standing still: two reports two minutes apart never show the same time left (in minutes)
    texts = [duration_text(left or 0.0) for _, _, left in seen]
    assert all(a != c for a, c in zip(texts, texts[4:], strict=False))
    # within each stage, after a tenth of it, the time left falls at every report of a steady run
    end = 0.0
    for _name, (_, _, seconds) in spans.items():
        inside = [left for elapsed, _, left in seen if end + 0.1 * seconds < elapsed <= end + seconds]
        assert inside == sorted(inside, reverse=True)  # type: ignore[type-var]
        end += seconds
    # half-way through sampling the run's own rate decides: within 1.5x of the true time left
    half = end - 60.0 - 1200.0
    left = next(left for elapsed, _, left in seen if elapsed >= half)
    truth = total - half
    assert left is not None and truth / 1.5 <= left <= truth * 1.5


def test_loading_a_library_is_a_first_use_stage_on_the_bar_and_the_clock() -> None:
    # the worker loads torch first (a stage of its own, no reports), then the run's start resumes
    clock = StagedClock()
    stage = loading_stage("torch")
    clock.expect(RunEstimate(40.0, "test", stages=((stage, 30.0), (MAIN_STAGE, 10.0))))
    clock.enter(stage, 0.0, elapsed=0.0)
    clock.enter(MAIN_STAGE, 1.0, elapsed=15.0, implicit=True)
    bar, left = clock.update(0.5, elapsed=20.0)
    assert bar == pytest.approx((30.0 + 5.0) / 40.0)
    # 15 s of loading against 30 s estimated: the rest of the run paced by it, the estimate counting as a tenth
    pace = (15.0 + 4.0) / (30.0 + 4.0)
    assert left == pytest.approx(time_left(5.0, 0.5, 10.0 * pace))
    assert clock.durations(25.0) == {stage: 15.0, MAIN_STAGE: 10.0}


@pytest.mark.analyzer("langevin.sweep")
@pytest.mark.slow  # a real Langevin smoke run: over 10 s on 2 cores
def test_a_real_langevin_smoke_run_names_its_stages_and_its_bar_and_time_left_move(tmp_path: Path) -> None:
    sweep = registry.get("langevin.sweep")
    params = sweep.params_for({"work_dir": str(tmp_path / "work")}, scale="smoke")
    clock = StagedClock()
    clock.expect(RunEstimate(60.0, "test", stages=((MAIN_STAGE, 60.0),)))
    started = time.perf_counter()
    entered: list[tuple[str, float, float]] = []  # (stage, its end on the bar, the fraction when entered)
    seen: list[tuple[float, str, float, float | None]] = []  # (fraction, stage, bar, time left)

    def progress(fraction: float, message: str) -> None:
        bar, left = clock.update(fraction, time.perf_counter() - started)
        seen.append((fraction, clock.stages[-1].name, bar, left))

    def on_stage(name: str, until: float) -> None:
        entered.append((name, until, clock.fraction))
        clock.enter(name, until, time.perf_counter() - started)

    sweep.run(params, RunContext(tmp_path / "out", progress=progress, on_stage=on_stage))
    assert [(name, until) for name, until, _ in entered] == [
        ("design", 0.05), ("training", 0.3), ("sampling", 0.95), ("analysis", 1.0)]
    # each stage begins where the one before it ends on the bar, and reports only inside its own span
    assert [start for _, _, start in entered] == [0.0, 0.05, 0.3, 0.95]
    spans = {name: (start, until) for name, until, start in entered}
    for fraction, stage, _, _ in seen:
        if stage in spans:
            assert spans[stage][0] <= fraction <= spans[stage][1], (stage, fraction)
    bars = [bar for _, _, bar, _ in seen]
    assert bars == sorted(bars) and bars[-1] == 1.0
    # once a stage has measurably moved, its own rate gives a time left (before, only the estimate can)
    moved = [left for fraction, stage, _, left in seen if stage in ("training", "sampling")
             and fraction - spans[stage][0] >= 0.01 * (spans[stage][1] - spans[stage][0])]
    assert moved and all(left is not None for left in moved)
    took = clock.durations(time.perf_counter() - started)
    assert set(took) == {MAIN_STAGE, "design", "training", "sampling", "analysis"}


def test_learned_stage_times_weigh_the_stages_where_the_declared_fractions_mislead() -> None:
    # training declared as a quarter of the bar takes 70 % of the time here: the earlier runs' stage times say
    # so, and the bar follows the clock and the time left is the true one at every report; weighed by the
    # declared fractions instead, the bar lags the clock by over 0.3 and the time left reaches twice the truth
    spans = {"design": (0.0, 0.05, 60.0), "training": (0.05, 0.3, 2800.0), "sampling": (0.3, 0.95, 1080.0),
             "analysis": (0.95, 1.0, 60.0)}
    total = sum(seconds for _, _, seconds in spans.values())
    learned = tuple((name, seconds) for name, (_, _, seconds) in spans.items())
    clock, declared = StagedClock(), StagedClock()
    clock.expect(RunEstimate(total, "test", stages=((MAIN_STAGE, total),), own_stages=learned))
    declared.expect(RunEstimate(total, "test", stages=((MAIN_STAGE, total),)))
    for elapsed, bar, left in _langevin_like(clock, spans):
        assert bar == pytest.approx(elapsed / total, abs=1e-9)
        assert left == pytest.approx(total - elapsed, rel=1e-9, abs=1e-6)
    seen = _langevin_like(declared, spans)
    assert max(elapsed / total - bar for elapsed, bar, _ in seen) > 0.3
    assert max(left / (total - elapsed) for elapsed, _, left in seen if left is not None and elapsed < total) > 2


def test_a_stage_the_earlier_runs_did_not_name_falls_back_to_the_declared_fractions() -> None:
    # an analyzer whose stages changed since the runs the estimate learned from: its new stage has no
    # learned time, so once it is entered every stage is weighed by the declared fractions, as without history
    spans = {"design": (0.0, 0.5, 100.0), "polishing": (0.5, 1.0, 100.0)}
    clock, declared = StagedClock(), StagedClock()
    clock.expect(RunEstimate(200.0, "test", stages=((MAIN_STAGE, 200.0),),
                             own_stages=(("design", 20.0), ("training", 180.0))))
    declared.expect(RunEstimate(200.0, "test", stages=((MAIN_STAGE, 200.0),)))
    once_entered = [report for report in _langevin_like(clock, spans) if report[0] > 100.0]
    assert once_entered == [report for report in _langevin_like(declared, spans) if report[0] > 100.0]
