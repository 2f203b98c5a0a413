"""depth.sweep's 'paper' preset declares how long it takes (one H100, from the preset's size), so `kb demo`
and `kb verify` estimate its claims instead of saying "unknown"."""

from __future__ import annotations

import math
from pathlib import Path

from analyzers.depth.spec import DepthSweep
from kb.core import KnowledgeBase
from kb.evidence.estimates import estimate
from kb.settings import Settings


def test_depth_sweep_paper_estimate_follows_the_presets_size() -> None:
    params = DepthSweep().params_for({}, scale="paper")
    # Recomputed from the validated parameters: depths x steps x (8 FLOPs per parameter per token, 6 for the
    # passes and 2 for the recomputed forward of activation checkpointing) at 20 % of an H100's bf16 peak.
    tokens_per_step = params.batch_tokens * params.accumulation
    steps = math.ceil(params.tokens_per_parameter * params.parameter_budget / tokens_per_step)
    assert params.gradient_checkpointing and steps == 198_365
    seconds = len(params.depths) * steps * 8 * params.parameter_budget * tokens_per_step / (0.2 * 989e12)
    assert math.isclose(DepthSweep.expected_seconds["paper"], seconds, rel_tol=1e-9)
    # The GPU-hours every surface quotes as its cost are the same figure, rounded to the hour (one cost, not two).
    assert abs(DepthSweep.expected_seconds["paper"] / 3600 - DepthSweep.gpu_hours["paper"]) <= 0.5


def test_depth_sweep_paper_claim_is_not_runnable_on_a_cpu_at_once(tmp_path: Path) -> None:
    # `kb verify` asks for the CPU unless told otherwise: 475 H100-hours there would be years, so the demo's plan
    # says "at once: not runnable here" (sorted first) rather than an estimate in weeks.
    kb = KnowledgeBase(Settings(papers=tmp_path / "papers", home=tmp_path / "home"))
    analyzer = DepthSweep()
    found = estimate(kb.engine, analyzer, analyzer.params_for({"device": "cpu"}, scale="paper"), scale="paper")
    assert found.not_runnable is not None and found.sort_key == (0, 0.0)
    assert "about 475 hours on one H100" in found.text() and "--device cuda" in found.text()
    small = estimate(kb.engine, analyzer, analyzer.params_for({"device": "cpu"}, scale="small"), scale="small")
    assert small.not_runnable is None  # the CPU proxies still run here
