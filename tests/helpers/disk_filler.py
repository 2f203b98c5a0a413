"""A test-only analyzer that writes until the disk is full (``disk-filler``), for ``tests/test_disk_full.py``.

Registered only in the processes that test starts (KB_ANALYZER_MODULES), never in the test process itself.
"""

from __future__ import annotations

from pydantic import Field

from analyzers.base import Analyzer, AnalyzerParams, AnalyzerResult, RunContext, metric
from analyzers.registry import register
from schemas.run import EvidenceScale

CHUNK = b"\0" * (256 * 1024)


class FillerParams(AnalyzerParams):
    """How much the analyzer tries to write."""

    megabytes: int = Field(default=64, ge=1, description="Megabytes written to the run's output folder.")


class FillerResult(AnalyzerResult):
    """The megabytes written (never reached on a small disk)."""

    written_mb: float = metric(description="megabytes written", exact=True)


@register
class DiskFiller(Analyzer[FillerParams, FillerResult]):
    """Writes ``megabytes`` of zeros into its output folder, as a run with large checkpoints or plots would."""

    name = "disk-filler"
    summary = "Writes megabytes of zeros into its output (to test a run on a full disk)."
    Params = FillerParams
    Result = FillerResult
    scales = {"smoke": {}}

    def run(self, params: FillerParams, ctx: RunContext) -> FillerResult:
        with (ctx.out_dir / "big.bin").open("wb") as handle:
            for _ in range(params.megabytes * 4):
                handle.write(CHUNK)
                handle.flush()
        return FillerResult(written_mb=float(params.megabytes), scale=EvidenceScale(name="smoke"))
