"""A test-only analyzer that returns no result (``none-result``), for ``tests/test_bad_results.py``.

It writes a ``metrics.json`` of its own, optionally not JSON, and returns None, as a hand-written analyzer
that forgot its return statement does. Registered only in the processes that test starts
(KB_ANALYZER_MODULES).
"""

from __future__ import annotations

from pydantic import Field

from analyzers.base import Analyzer, AnalyzerParams, AnalyzerResult, RunContext, metric
from analyzers.registry import register


class NoneParams(AnalyzerParams):
    """What the analyzer leaves in its output folder."""

    broken_metrics: bool = Field(default=False, description="Write a metrics.json that is not JSON.")


class NoneResult(AnalyzerResult):
    """Never returned."""

    value: float = metric(description="a value it never returns", exact=True)


@register
class NoneAnalyzer(Analyzer[NoneParams, NoneResult]):
    """Returns None instead of its result."""

    name = "none-result"
    summary = "Returns None (to test that a missing result fails the run)."
    Params = NoneParams
    Result = NoneResult
    scales = {"smoke": {}}

    def run(self, params: NoneParams, ctx: RunContext) -> NoneResult:
        text = "value = 3 (not JSON)" if params.broken_metrics else '{"value": 3}'
        (ctx.out_dir / "metrics.json").write_text(text, encoding="utf-8")
        return None  # type: ignore[return-value]  # the mistake under test
