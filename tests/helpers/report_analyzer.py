"""A test-only analyzer whose result looks like a real one's (``test.report``): a value, caveats, a readable
matplotlib plot, per-temperature and per-layer lists, and a run as long as asked, with progress.

For the app's "at a glance" tests (``tests/test_app_glance.py``, ``tests/test_browser_glance.py``): shared
caveats, plot thumbnails, Compare's axes and runs arriving while a demo-like run goes on. Registered in the
processes a test starts through KB_ANALYZER_MODULES, and in the test process by the test's own fixture.
"""

from __future__ import annotations

import time

from pydantic import Field

from analyzers.base import Analyzer, AnalyzerParams, AnalyzerResult, RunContext, metric
from analyzers.registry import register
from schemas.run import EvidenceScale

TEMPERATURES = [0.5, 1.0, 1.5, 2.0, 2.5]


class ReportParams(AnalyzerParams):
    """What the run reports and how long it takes."""

    value: float = Field(default=1.0, description="The value to return as the metric 'value'.")
    caveats: list[str] = Field(default_factory=list, description="Caveats the result reports (its notes).")
    seconds: float = Field(default=0.0, ge=0, le=600, description="How long the run takes, reporting progress.")
    plot: bool = Field(default=False, description="Also draw a two-panel matplotlib figure, as analyzers do.")
    num_layers: int = Field(default=4, ge=2, le=64, description="Length of the per-layer list.")


class ReportResult(AnalyzerResult):
    """A value, the temperatures it was 'sampled' at with an error per temperature, and a per-layer KL."""

    value: float = metric(description="the 'value' parameter, echoed", exact=True)
    temperatures: list[float] = Field(description="Sampling temperatures.")
    error_by_temperature: list[float] = Field(description="An error per temperature, lowest in the middle.")
    layers: dict[str, list[float]] = Field(description="Per-layer lists: a KL that halves every layer.")


@register
class Report(Analyzer[ReportParams, ReportResult]):
    """Echo a value with caveats, lists along two axes and a plot; ``seconds`` makes it a run one can watch."""

    name = "test.report"
    summary = "Returns its 'value' with caveats, per-temperature and per-layer lists and a plot (tests only)."
    Params = ReportParams
    Result = ReportResult
    scales = {"smoke": {}}
    expected_seconds = {"smoke": 1.0}

    def run(self, params: ReportParams, ctx: RunContext) -> ReportResult:
        steps = max(1, int(params.seconds / 0.2))
        for step in range(steps):
            time.sleep(params.seconds / steps)
            ctx.report((step + 1) / steps, f"step {step + 1}/{steps}")
        errors = [0.3 + 0.1 * (t - 1.5) ** 2 for t in TEMPERATURES]
        kl = [2.0 ** -layer for layer in range(params.num_layers)]
        artifacts = []
        if params.plot:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
            left.plot(TEMPERATURES, errors, marker="o")
            left.set(xlabel="temperature T", ylabel="test error", title="Test error against temperature")
            right.plot(range(params.num_layers), kl, marker="o")
            right.set(xlabel="layer", ylabel="KL(p_l || p_L)", title="Logit-lens KL by layer")
            figure.tight_layout()
            figure.savefig(ctx.out_dir / "value_by_temperature.png", dpi=100)
            plt.close(figure)
            artifacts.append("value_by_temperature.png")
        return ReportResult(value=params.value, temperatures=TEMPERATURES, error_by_temperature=errors,
                            layers={"kl": kl}, scale=EvidenceScale(name="smoke"), artifacts=artifacts,
                            notes=list(params.caveats))
