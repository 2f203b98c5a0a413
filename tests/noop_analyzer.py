"""A no-op analyzer for tests and benchmarks of the run queue itself: returns the value it is given.

It is not shipped: the tests register it through KB_ANALYZER_MODULES (see conftest.py), as a lab adds its own.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from pydantic import Field

from analyzers.base import Analyzer, AnalyzerParams, AnalyzerResult, NotRunnable, RunContext, metric
from analyzers.progress import Reporter
from analyzers.registry import register
from schemas.run import EvidenceScale


class NoopParams(AnalyzerParams):
    """What the no-op analyzer should pretend to do."""

    value: float = Field(default=1.0, description="The value to return as the metric 'value'.")
    value_per_seed: float = Field(default=0.0, description="Added once per unit of seed (to test seed spreads).")
    steps: int = Field(default=1, ge=1, le=100_000, description="Progress reports to make.")
    step_seconds: float = Field(default=0.0, ge=0, description="Sleep per step (to test cancellation).")
    fail: bool = Field(default=False, description="Raise an error instead of returning (to test failures).")
    not_runnable: str | None = Field(default=None, description="Raise NotRunnable with this reason.")
    plot: bool = Field(default=False, description="Also write a small PNG (to test how plots travel).")
    throttled: bool = Field(default=False, description="Report through a Reporter at the run's report_every, as "
                            "long loops do, instead of at every step (to test the progress bound).")
    log_file: str | None = Field(default=None, description="Append 'start VALUE' and 'end VALUE' lines to this "
                                 "file (to count executions from the analyzer's own side).")
    curve_steps: int = Field(default=0, ge=0, le=10_000, description="Also record a per-step series "
                             "'loss_by_step' of this many steps, value / (step + 1) (to test the run's curves).")


class NoopResult(AnalyzerResult):
    """The value, echoed back."""

    # exact by construction: the value given, echoed (a claim on it is settled without an error bar)
    value: float = metric(description="the 'value' parameter, echoed", exact=True)
    loss_by_step: list[float] | None = Field(default=None, description="value / (step + 1) per step, when asked")


@register
class Noop(Analyzer[NoopParams, NoopResult]):
    """Echo a value; with steps and sleeps it stands in for a long run."""

    name = "noop"
    summary = "Returns its 'value' parameter; exercises the queue, progress, cancellation and failures."
    Params = NoopParams
    Result = NoopResult
    # 'slow': a run made slow on purpose (tests of the queue's order, the demo's estimates, the progress bound).
    scales = {"smoke": {}, "slow": {"steps": 60, "step_seconds": 0.1, "throttled": True}}
    expected_seconds = {"smoke": 0.05, "slow": 6.0}

    def preflight(self, params: NoopParams) -> None:
        # Known before the run starts, as a missing GPU is: kb.evidence.estimates says so when it plans the run.
        if params.not_runnable:
            raise NotRunnable(params.not_runnable)
        super().preflight(params)

    def run(self, params: NoopParams, ctx: RunContext) -> NoopResult:
        if params.not_runnable:
            raise NotRunnable(params.not_runnable)
        # Resumable, like a long training run: the step reached is checkpointed after every step, so a run
        # killed half-way (a preempted Slurm job) finishes the remaining steps on its next attempt.
        state = ctx.checkpoint_dir / "noop-state.json" if ctx.checkpoint_dir is not None else None
        start = json.loads(state.read_text())["step"] if state is not None and state.is_file() else 0
        notes = [f"resumed from a checkpoint at step {start}"] if start else []
        _log(params, "start")
        reporter = Reporter(ctx.report, ctx.report_every) if params.throttled else None
        for step in range(start, params.steps):
            time.sleep(params.step_seconds)
            if state is not None:
                partial = state.with_suffix(".part")
                partial.write_text(json.dumps({"step": step + 1}), encoding="utf-8")
                os.replace(partial, state)
                ctx.checkpoint_saved()
            if reporter is not None:
                reporter(step + 1, params.steps, f"step {step + 1}/{params.steps}", force=step + 1 == params.steps)
            else:
                ctx.report((step + 1) / params.steps, f"step {step + 1}/{params.steps}")
        if params.fail:
            raise RuntimeError("asked to fail")
        _log(params, "end")
        value = params.value + params.value_per_seed * params.seed
        (ctx.out_dir / "value.txt").write_text(f"{value}\n", encoding="utf-8")
        artifacts = ["value.txt"]
        if params.plot:
            from PIL import Image

            Image.new("RGB", (64, 16), (40, 120, 200)).save(ctx.out_dir / "value.png")
            artifacts.append("value.png")
        curve = [value / (step + 1) for step in range(params.curve_steps)] if params.curve_steps else None
        return NoopResult(value=value, loss_by_step=curve, scale=EvidenceScale(name="smoke"), artifacts=artifacts,
                          notes=notes)


def _log(params: NoopParams, event: str) -> None:
    if params.log_file:
        # One short append per line (O_APPEND): lines of concurrent workers never interleave.
        with open(params.log_file, "a", encoding="utf-8") as handle:
            handle.write(f"{event} {params.value}\n")


def register_for_subprocesses() -> None:
    """Name this module in KB_ANALYZER_MODULES, with the checkout on PYTHONPATH, for every process started from
    here on (the CLI, the app's worker, Slurm jobs, Ray workers): they register ``noop`` as this one does."""
    os.environ["KB_ANALYZER_MODULES"] = __name__
    root = str(Path(__file__).resolve().parents[1])
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
