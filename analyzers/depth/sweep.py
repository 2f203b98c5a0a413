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
"""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import Field, field_validator

from analyzers.base import Analyzer, AnalyzerParams, AnalyzerResult, GpuNeed, NotRunnable, Resources, RunContext
from analyzers.depth import plots
from analyzers.depth.analyzer import json_safe
from analyzers.depth.catalog import kb_home
from analyzers.depth.data import DESIGNED_DESCRIPTION, DESIGNED_FASTA, file_sha256, read_fasta, split_records
from analyzers.depth.loading import ResolvedModel, check_device, load_model
from analyzers.depth.probes import ProbeOptions
from analyzers.depth.run import probe_model, summarize
from analyzers.depth.training import (
    TrainConfig,
    count_parameters,
    esm_config,
    evaluate_masked_lm,
    save_esm_tokenizer,
    solve_shape,
    train_masked_lm,
)
from analyzers.registry import register
from schemas.run import EvidenceScale


class DepthSweepParams(AnalyzerParams):
    """Depths, budget, corpus and training length of the sweep."""

    depths: list[int] = Field(default=[2, 4, 8], description="Layer counts to train (each >= 2).")
    parameter_budget: float = Field(default=60_000, gt=0, description="Parameters per model (EsmForMaskedLM).")
    num_heads: int = Field(default=4, ge=1, description="Attention heads; widths are multiples of it.")
    fasta: str | None = Field(
        default=None, description="Training corpus; default: the shipped designed sequences (not natural proteins). "
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


def _corpus(fasta: str | None) -> Path:
    if fasta is None:
        return DESIGNED_FASTA
    path = Path(fasta).expanduser()
    if not path.exists() and not path.is_absolute() and (kb_home() / "data" / path).exists():
        path = kb_home() / "data" / path
    if not path.exists():
        raise NotRunnable(
            f"training corpus {fasta} not found (looked here and under {kb_home() / 'data'}); this scale trains on "
            "a UniRef50 FASTA you provide: download UniRef50 (uniprot.org) and pass fasta=PATH or put it there"
        )
    return path


def _scaled(report: Callable[[float, str], None], offset: float, width: float) -> Callable[[float, str], None]:
    """``report`` for a sub-task occupying ``[offset, offset + width]`` of the progress bar."""

    def scaled(fraction: float, message: str) -> None:
        report(offset + width * fraction, message)

    return scaled


def _finite(value: Any) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


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

    def scale_name(self, params: DepthSweepParams) -> str:
        """The preset these parameters are (its name), or 'custom'."""
        for name in self.scales:
            if params == self.params_for(scale=name).model_copy(update={"seed": params.seed}):
                return name
        return "custom"

    def run(self, params: DepthSweepParams, ctx: RunContext) -> DepthSweepResult:
        from transformers import EsmForMaskedLM, EsmTokenizer

        corpus = _corpus(params.fasta)
        check_device(params.device)
        records = read_fasta(corpus, min_length=8)
        train, val = split_records(records, params.val_fraction)
        if not train or not val:
            raise ValueError(f"{corpus}: needs both training and validation sequences ({len(train)} / {len(val)})")
        val = val[: params.max_val_sequences]
        notes = [f"corpus: {DESIGNED_DESCRIPTION}"] if corpus == DESIGNED_FASTA else []
        checkpoints = ctx.out_dir / "checkpoints"
        checkpoints.mkdir(parents=True, exist_ok=True)
        save_esm_tokenizer(checkpoints)
        tokenizer = EsmTokenizer.from_pretrained(checkpoints)
        shapes = [solve_shape(depth, params.parameter_budget, params.num_heads) for depth in params.depths]
        widths = [width for width, _ in shapes]
        rows: list[dict[str, Any]] = []
        per_depth_layers: dict[int, dict[str, Any]] = {}
        share = 1.0 / len(params.depths)
        for index, (depth, (width, intermediate)) in enumerate(zip(params.depths, shapes, strict=True)):
            base = index * share

            def report(fraction: float, message: str, base: float = base, depth: int = depth) -> None:
                ctx.report(base + share * fraction, f"{depth} layers: {message}")

            torch.manual_seed(params.seed)
            model = EsmForMaskedLM(
                esm_config(depth, width, params.num_heads, intermediate, max_tokens=params.max_residues + 2)
            )
            config = TrainConfig(
                steps=params.steps, batch_size=params.batch_size, learning_rate=params.learning_rate,
                warmup_steps=params.warmup_steps, max_residues=params.max_residues, seed=params.seed,
                device=params.device, dtype=params.dtype,
            )
            losses = train_masked_lm(model, tokenizer, train, config, _scaled(report, 0.0, 0.8))
            perplexity, accuracy = evaluate_masked_lm(
                model, tokenizer, val, seed=params.seed, device=params.device, max_residues=params.max_residues
            )
            folder = checkpoints / f"depth-{depth:02d}"
            model.save_pretrained(folder)
            save_esm_tokenizer(folder)
            del model
            report(0.85, f"val perplexity {perplexity:.2f}; probing")
            loaded = load_model(ResolvedModel(f"sweep-depth-{depth}", folder, "trained"), params.device)
            layers = probe_model(
                loaded, [r for r in val if len(r.sequence) <= params.max_residues][: params.probe_sequences],
                ProbeOptions(sublayer_skips=params.sublayer_skips), params.probe_batch_size, 0.15, params.seed,
                _scaled(report, 0.85, 0.15),
            )
            layers.pop("notes", None)
            per_depth_layers[depth] = layers
            tail = losses[-max(1, len(losses) // 10) :]
            rows.append({
                "depth": depth, "width": width, "intermediate": intermediate,
                "parameters": count_parameters(depth, width, params.num_heads, intermediate),
                "train_loss": sum(tail) / len(tail), "val_perplexity": perplexity, "masked_accuracy": accuracy,
                **summarize(layers), "weights_hash": loaded.provenance["weights_hash"],
            })

        def column(key: str) -> list[float | None]:
            return [_finite(row.get(key)) for row in rows]

        parameters = [row["parameters"] for row in rows]
        summary: dict[str, Any] = {
            "depths": params.depths,
            "widths_by_depth": widths,
            "intermediate_by_depth": [intermediate for _, intermediate in shapes],
            "parameters_by_depth": parameters,
            "parameter_spread": max(parameters) / min(parameters) - 1,
            "train_loss_by_depth": [row["train_loss"] for row in rows],
            "val_perplexity_by_depth": [row["val_perplexity"] for row in rows],
            "masked_accuracy_by_depth": [row["masked_accuracy"] for row in rows],
            "best_depth": (best := min(rows, key=lambda row: row["val_perplexity"])["depth"]),
            "best_depth_is_interior": min(params.depths) < best < max(params.depths),
            "late_half_kl_drop_fraction_by_depth": column("late_half_kl_drop_fraction"),
            "late_to_early_skip_effect_ratio_by_depth": column("late_to_early_skip_effect_ratio"),
            "late_half_effect_on_later_layers_by_depth": column("late_half_effect_on_later_layers"),
            "erank_ratio_by_depth": column("erank_ratio"),
            "stable_rank_ratio_by_depth": column("stable_rank_ratio"),
            "attention_entropy_last_over_first_by_depth": column("attention_entropy_last_over_first"),
        }
        summary["depth_inefficiency_trend"] = inefficiency_trend(
            params.depths, summary["late_to_early_skip_effect_ratio_by_depth"]
        )
        metrics_path = ctx.out_dir / "sweep_metrics.json"
        metrics_path.write_text(
            json.dumps(json_safe({**summary, "per_depth": rows, "layers_by_depth": per_depth_layers}), indent=2,
                       allow_nan=False),
            encoding="utf-8",
        )
        artifacts = [metrics_path.name, *plots.write_sweep_plots(summary, per_depth_layers, ctx.out_dir)]
        artifacts += sorted(str(p.relative_to(ctx.out_dir)) for p in checkpoints.rglob("*") if p.is_file())
        import transformers

        ctx.report(1.0, "done")
        return DepthSweepResult(
            **summary,
            scale=EvidenceScale(
                name=self.scale_name(params), parameters=float(sum(parameters) / len(parameters)),
                data=f"{len(train)} training / {len(val)} validation sequences from {corpus.name}",
                description=(
                    f"depths {params.depths} at ~{params.parameter_budget:.3g} parameters, {params.steps} steps"
                ),
            ),
            artifacts=artifacts,
            provenance={
                "data": str(corpus), "data_hash": file_sha256(corpus), "device": params.device, "dtype": params.dtype,
                "seed": params.seed, "python": platform.python_version(),
                "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
                "weights_hash_by_depth": {row["depth"]: row["weights_hash"] for row in rows},
            },
            notes=notes + [
                "depth_inefficiency_trend = -slope of log(late/early mean skip output effect) over log2(depth); "
                "> 0 means deeper models use their later layers less",
                f"(width, FFN width) solved per depth for ~{params.parameter_budget:.3g} parameters: "
                f"{dict(zip(params.depths, shapes, strict=True))}",
            ],
        )
