"""Runs of analyzers, the evidence they leave, and the verdicts drawn from it.

A run is one execution of one analyzer with one set of parameters, usually on behalf of a claim. When
it succeeds it leaves evidence: the result (metrics JSON), artifacts (plots, logs), provenance and a
verdict on the claim. Earlier evidence is never overwritten; it becomes history (and may be stale).
"""

from __future__ import annotations

import datetime as dt
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: A run id as a record or bundle from elsewhere may give one (kb writes uuid hex): it is joined into store keys
#: and local paths and typed on command lines, so it starts with a letter or digit (never '.', '..' or '-x').
RUN_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}"


class RunStatus(StrEnum):
    """Life cycle of a run in the durable queue."""

    queued = "queued"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"


class VerdictKind(StrEnum):
    """What the evidence says about a claim."""

    supported = "supported"
    refuted = "refuted"
    inconclusive = "inconclusive"
    not_runnable = "not_runnable"
    error = "error"


class EvidenceScale(BaseModel):
    """The scale an analyzer actually ran at (compared with the claim's scale in the verdict)."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    name: str = Field(description="Scale preset: 'smoke', 'small', 'paper' or 'custom'.")
    parameters: float | None = Field(default=None, ge=0, description="Parameters of the model(s) probed/trained.")
    data: str | None = Field(default=None, description="Data the evidence was produced on.")
    description: str | None = Field(default=None, description="Free-text description of the setting.")


class Provenance(BaseModel):
    """Everything needed to say how evidence was produced and whether it is still current."""

    model_config = ConfigDict(defer_build=True, extra="allow")

    kb_version: str = Field(description="Version of the plm-kb package.")
    git_commit: str | None = Field(default=None, description="Commit of the kb checkout, when in a git repo.")
    analyzer: str = Field(description="Registry name of the analyzer.")
    analyzer_version: str = Field(description="Version string the analyzer declares; bump it when results change.")
    params_hash: str = Field(description="SHA-256 of the canonical JSON of the validated parameters.")
    python: str = Field(description="Python version.")
    packages: dict[str, str] = Field(default_factory=dict, description="Versions of the packages that matter.")
    device: str = Field(description="Device the analyzer ran on, e.g. 'cpu' or 'cuda:0'.")
    gpu_name: str | None = Field(default=None, description="GPU model, when a GPU was used.")
    host: str | None = Field(default=None, description="Machine the run executed on.")
    scheduler_job_id: str | None = Field(default=None, description="Slurm job id, when a scheduler ran it.")
    dtype: str | None = Field(default=None, description="Floating-point type of the computation.")
    seed: int | None = Field(default=None, description="Random seed.")
    model_id: str | None = Field(default=None, description="Model hub id or local path.")
    model_revision: str | None = Field(default=None, description="Model revision (commit) when known.")
    weights_hash: str | None = Field(default=None, description="SHA-256 over the weight files.")
    data_hash: str | None = Field(default=None, description="SHA-256 of the input data.")
    wall_seconds: float | None = Field(default=None, ge=0, description="Wall-clock time of the run.")
    gpu_seconds: float | None = Field(default=None, ge=0, description="Time the GPU was in use, when measured.")
    started_at: dt.datetime | None = Field(default=None, description="When the run started (UTC).")
    finished_at: dt.datetime | None = Field(default=None, description="When the run finished (UTC).")
    imported_from: str | None = Field(default=None, description="The evidence bundle it came in, when it was "
                                      "made elsewhere and imported (`kb evidence import`); set by the importer.")
    imported_at: dt.datetime | None = Field(default=None, description="When it was imported (UTC).")


class Verdict(BaseModel):
    """The judgement on one claim from one piece of evidence, and why."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    kind: VerdictKind = Field(description="supported, refuted, inconclusive, not_runnable or error.")
    reason: str = Field(description="One or two sentences a reader can check against the numbers.")
    observed: float | list[float] | bool | str | None = Field(
        default=None, description="Value of the metric the expectation looked at (mean over seeds)."
    )
    spread: float | None = Field(default=None, ge=0, description="Standard deviation over seeds, if repeated.")
    expected: str | None = Field(
        default=None, description="The expectation, written out, e.g. 'best_depth in [24, 36]'."
    )
    evidence_scale: EvidenceScale | None = Field(default=None, description="Scale the evidence was made at.")
    claim_scale: dict[str, Any] | None = Field(default=None, description="Scale the claim was made at.")
    proxy: bool = Field(
        default=False, description="True when the evidence is a smaller-scale proxy of the claim's setting."
    )
    proxy_outcome: Literal["consistent", "at_odds"] | None = Field(
        default=None, description="What a proxy said before it was held inconclusive: 'consistent' (it would have "
        "supported the claim) or 'at_odds' (it would have refuted it); None when not a proxy or undecided.",
    )


class RunRecord(BaseModel):
    """One analyzer run as the queue and the app see it."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    id: str = Field(description="Run identifier.")
    claim_key: str | None = Field(default=None, description="'<note id>#<claim id>' the run verifies, if any.")
    analyzer: str = Field(description="Registry name of the analyzer.")
    params: dict[str, Any] = Field(default_factory=dict, description="Validated analyzer parameters.")
    device: str = Field(default="cpu", description="Requested device.")
    executor: str = Field(default="local", description="A registered executor (kb.queue.executors): 'local', "
                          "'ray', 'slurm', ...")
    job_id: str | None = Field(default=None, description="Scheduler job id (Slurm) executing the run, if any.")
    attempts: int = Field(default=0, ge=0, description="Times a worker or job took the run.")
    priority: int = Field(default=0, description="0: a person waits on it (interactive); 2: bulk work. Waiting "
                          "raises it (kb.queue.store.order_key).")
    expected_seconds: float | None = Field(default=None, description="Estimated duration when queued, if known.")
    actual_seconds: float | None = Field(default=None, description="Seconds its last attempt worked, first-use "
                                         "stages included (None: not ended, or ended before kb kept it).")
    stages: dict[str, float] = Field(default_factory=dict, description="Seconds each stage of its last attempt "
                                     "took ('first use: ...' stages, 'run').")
    status: RunStatus = Field(description="Queue state.")
    progress: float = Field(default=0.0, ge=0, le=1, description="Fraction done, 0 to 1.")
    message: str | None = Field(default=None, description="Latest progress message.")
    error: str | None = Field(default=None, description="Error message when the run failed.")
    created_at: dt.datetime = Field(description="When the run was queued (UTC).")
    started_at: dt.datetime | None = Field(default=None, description="When a worker took it (UTC).")
    finished_at: dt.datetime | None = Field(default=None, description="When it ended (UTC).")


class EvidenceRecord(BaseModel):
    """What a succeeded (or not-runnable) run leaves behind for a claim."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    id: str = Field(description="Evidence identifier.")
    run_id: str = Field(description="Run that produced it.")
    claim_key: str | None = Field(default=None, description="'<note id>#<claim id>' it bears on.")
    analyzer: str = Field(description="Registry name of the analyzer.")
    metrics: dict[str, Any] = Field(default_factory=dict, description="The analyzer's result as JSON.")
    artifacts: list[str] = Field(default_factory=list, description="Artifact paths relative to the KB home.")
    provenance: Provenance | None = Field(default=None, description="How the evidence was made.")
    verdict: Verdict | None = Field(default=None, description="Verdict on the claim.")
    stale: bool = Field(default=False, description="True when code, parameters or inputs changed since.")
    stale_reason: str | None = Field(default=None, description="What changed, when stale.")
    created_at: dt.datetime = Field(description="When the evidence was recorded (UTC).")
