"""``depth.sweep``: train masked PLMs of several depths at one parameter budget, then probe each.

This is how seed 000's claims (an optimal depth, perplexity per depth, rank and attention entropy
with depth) and the abstract's "more pronounced in deeper models" are tested at whatever scale the
machine allows. For every depth the width is solved (a multiple of the head count) so that the
``EsmForMaskedLM`` parameter counts match the budget within a few percent; each model is trained with
seeded 15 % masking on the same corpus and steps, evaluated on held-out sequences (validation
perplexity and masked-token accuracy), saved with ``save_pretrained`` (safetensors) under
``checkpoints/``, and probed with ``depth.probe``'s probes.

``depth_inefficiency_trend`` is minus the least-squares slope, across depths, of
``log(late_to_early_skip_effect_ratio)`` against ``log2(depth)``, where the ratio is the mean output
effect of skipping one layer of the later half over that of the earlier half. Positive: the deeper
the model, the less its later layers change the output relative to its earlier ones, i.e. deeper
models use their later layers less.

This module declares the analyzer (cheap to import); the training and probing is ``sweep_run.run_sweep``.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, field_validator

from analyzers.base import Analyzer, AnalyzerParams, AnalyzerResult, GpuNeed, Resources, RunContext, operator_only
from analyzers.registry import register


class DepthSweepParams(AnalyzerParams):
    """Depths, budget, corpus and training length of the sweep."""

    depths: list[int] = Field(default=[2, 4, 8], description="Layer counts to train (each >= 2).")
    parameter_budget: float = Field(default=60_000, gt=0, description="Parameters per model (EsmForMaskedLM).")
    num_heads: int = Field(default=4, ge=1, description="Attention heads; widths are multiples of it.")
    fasta: str | None = operator_only(
        description="Training corpus (a path: set by the person running kb); default: the shipped designed "
        "sequences (not natural proteins). "
        "A relative path that does not exist here is looked up under KB_HOME/data.",
    )
    val_fraction: float = Field(default=0.1, gt=0, lt=1, description="Held-out share when the FASTA has no split tags.")
    max_val_sequences: int = Field(default=100, ge=1, description="Validation sequences evaluated.")
    max_residues: int = Field(default=1022, ge=8, description="Longer sequences are cropped (random window).")
    steps: int = Field(default=40, ge=1, description="Optimiser steps per depth.")
    batch_size: int = Field(default=16, ge=1, description="Sequences per step.")
    learning_rate: float = Field(default=3e-3, gt=0, description="Peak AdamW learning rate (cosine decay).")
    warmup_steps: int = Field(default=10, ge=0, description="Linear warm-up steps.")
    dtype: Literal["float32", "bfloat16", "float16"] = Field(
        default="float32", description="Autocast dtype on CUDA (weights stay float32); CPU trains in float32."
    )
    probe_sequences: int = Field(default=8, ge=1, description="Held-out sequences the probes run on.")
    probe_batch_size: int = Field(default=8, ge=1, description="Sequences per probe pass.")
    sublayer_skips: bool = Field(default=False, description="Also run attention-/MLP-only skips in the probes.")

    @field_validator("depths")
    @classmethod
    def _depths(cls, depths: list[int]) -> list[int]:
        if len(depths) < 2 or min(depths) < 2 or len(set(depths)) != len(depths):
            raise ValueError("depths: give at least two distinct layer counts, each >= 2")
        return sorted(depths)


class DepthSweepResult(AnalyzerResult):
    """Per-depth training and probe numbers, and the trend across depths."""

    depths: list[int] = Field(description="Layer counts trained.")
    widths_by_depth: list[int] = Field(description="Solved hidden size per depth.")
    intermediate_by_depth: list[int] = Field(description="Solved FFN width per depth.")
    parameters_by_depth: list[int] = Field(description="Exact parameter count per depth.")
    parameter_spread: float = Field(description="max/min parameter count - 1 across depths.")
    train_loss_by_depth: list[float] = Field(description="Mean training loss over the last 10 % of steps.")
    converged_by_depth: list[bool] = Field(default_factory=list, description="Whether each depth passed the "
                                           "convergence rule (see ``convergence_rule``).")
    convergence_by_depth: list[str] = Field(default_factory=list, description="Why each depth did or did not.")
    unigram_accuracy: float | None = Field(default=None, description="Masked accuracy of always predicting the "
                                           "validation set's most frequent residue: the floor a model must beat.")
    convergence_rule: str = Field(default="", description="The rule the flags apply.")
    val_perplexity_by_depth: list[float] = Field(description="Validation perplexity at seeded 15 % masks.")
    masked_accuracy_by_depth: list[float] = Field(description="Validation masked-token accuracy.")
    best_depth: int = Field(description="Depth with the lowest validation perplexity.")
    best_depth_is_interior: bool = Field(
        description="The best depth is neither the shallowest nor the deepest trained: perplexity turns back up "
        "past an optimum (seed 000's 'curse of depth' shape)."
    )
    late_half_kl_drop_fraction_by_depth: list[float | None] = Field(description="Logit-lens late-half share.")
    late_to_early_skip_effect_ratio_by_depth: list[float | None] = Field(description="Late/early skip output effect.")
    late_half_effect_on_later_layers_by_depth: list[float | None] = Field(description="Late layers' skip effect.")
    erank_ratio_by_depth: list[float | None] = Field(description="erank(h_L) / erank(h_0).")
    stable_rank_ratio_by_depth: list[float | None] = Field(description="Stable rank(h_L) / stable rank(h_0).")
    attention_entropy_last_over_first_by_depth: list[float | None] = Field(description="Entropy last/first layer.")
    depth_inefficiency_trend: float | None = Field(description="-slope of log(late/early skip effect) vs log2 depth.")


def _slope(x: list[float], y: list[float]) -> float | None:
    pairs = [(a, b) for a, b in zip(x, y, strict=True) if b is not None and math.isfinite(b)]
    if len(pairs) < 2:
        return None
    mean_x = sum(a for a, _ in pairs) / len(pairs)
    mean_y = sum(b for _, b in pairs) / len(pairs)
    spread = sum((a - mean_x) ** 2 for a, _ in pairs)
    return sum((a - mean_x) * (b - mean_y) for a, b in pairs) / spread if spread else None


def inefficiency_trend(depths: list[int], ratios: list[float | None]) -> float | None:
    """Minus the slope of log(late/early skip output effect) over log2(depth) (see the module docstring)."""
    logs = [math.log(r) if r is not None and r > 0 else None for r in ratios]
    slope = _slope([math.log2(d) for d in depths], logs)  # type: ignore[arg-type]
    return None if slope is None else -slope


@register
class DepthSweep(Analyzer[DepthSweepParams, DepthSweepResult]):
    """Masked PLMs of several depths at one parameter budget: perplexity and probes per depth."""

    name = "depth.sweep"
    version = "2"
    summary = "Train masked PLMs of several depths at a fixed parameter budget; perplexity and probes per depth."
    Params = DepthSweepParams
    Result = DepthSweepResult
    metrics = {
        "depths": "layer counts trained",
        "parameters_by_depth": "exact parameter count per depth (equal within a few %)",
        "val_perplexity_by_depth": "validation perplexity at seeded 15 % masked positions, per depth",
        "masked_accuracy_by_depth": "validation masked-token accuracy, per depth",
        "best_depth": "depth with the lowest validation perplexity",
        "best_depth_is_interior": "True when the best depth is neither the shallowest nor the deepest trained",
        "late_half_kl_drop_fraction_by_depth": "share of the logit-lens KL decrease made by the later half, per depth",
        "late_to_early_skip_effect_ratio_by_depth": "late-half / early-half mean skip output effect, per depth",
        "erank_ratio_by_depth": "erank(h_L)/erank(h_0) per depth (seed 000: rank collapse)",
        "attention_entropy_last_over_first_by_depth": "attention entropy last/first layer per depth (seed 000)",
        "depth_inefficiency_trend": "-slope of log(late/early skip output effect) over log2(depth); > 0: deeper "
        "models use their later layers less",
    }
    resources = Resources(gpu=GpuNeed.recommended, memory_gb=2.0)
    scales = {
        "smoke": {},
        "small": {
            "depths": [2, 4, 8, 16], "parameter_budget": 150_000, "num_heads": 4, "steps": 400, "batch_size": 32,
            "learning_rate": 2e-3, "warmup_steps": 40, "probe_sequences": 32, "max_val_sequences": 200,
        },
        "paper": {
            "depths": [6, 12, 24, 36, 48], "parameter_budget": 650e6, "num_heads": 20, "fasta": "uniref50.fasta",
            "steps": 100_000, "batch_size": 64, "learning_rate": 4e-4, "warmup_steps": 2000, "dtype": "bfloat16",
            "device": "cuda", "probe_sequences": 128, "max_val_sequences": 2000, "sublayer_skips": True,
        },
    }

    def run(self, params: DepthSweepParams, ctx: RunContext) -> DepthSweepResult:
        from analyzers.depth.sweep_run import run_sweep  # torch and transformers: imported when the analyzer runs

        return run_sweep(params, ctx, self.scale_name(params))
