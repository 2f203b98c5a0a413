"""The work of ``depth.sweep``: for each depth, solve the width for the parameter budget, train an
``EsmForMaskedLM`` with seeded masking, evaluate it on held-out sequences, save it with
``save_pretrained`` and probe it with ``depth.probe``'s probes; then the trend across depths."""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import EsmForMaskedLM, EsmTokenizer

from analyzers.base import NotRunnable, RunContext
from analyzers.depth import plots
from analyzers.depth.catalog import kb_home
from analyzers.depth.data import DESIGNED_DESCRIPTION, DESIGNED_FASTA, file_sha256, read_fasta, split_records
from analyzers.depth.loading import ResolvedModel, check_device, load_model
from analyzers.depth.probes import ProbeOptions
from analyzers.depth.run import json_safe, probe_model, summarize
from analyzers.depth.sweep import DepthSweepParams, DepthSweepResult, inefficiency_trend
from analyzers.depth.training import (
    TrainConfig,
    count_parameters,
    esm_config,
    evaluate_masked_lm,
    save_esm_tokenizer,
    solve_shape,
    train_masked_lm,
)
from schemas.run import EvidenceScale

CONVERGENCE_RULE = ("a depth is converged when its training loss over the last 10 % of steps is within 1 % of "
                    "its mean over the 10 % before (no longer falling) and its masked accuracy beats always "
                    "predicting the most frequent residue by at least 0.02")


def unigram_accuracy(records: list[Any]) -> float:
    """Accuracy of always predicting the most frequent residue of ``records`` (the unigram floor)."""
    counts: dict[str, int] = {}
    for record in records:
        for letter in record.sequence:
            counts[letter] = counts.get(letter, 0) + 1
    total = sum(counts.values())
    return max(counts.values()) / total if total else 0.0


def convergence(losses: list[float], accuracy: float, unigram: float) -> tuple[bool, str]:
    """Whether a training run is converged by ``CONVERGENCE_RULE``, and why (numbers included)."""
    window = max(1, len(losses) // 10)
    if len(losses) < 20:
        return False, f"{len(losses)} steps are too few to tell"
    last = sum(losses[-window:]) / window
    before = sum(losses[-2 * window : -window]) / window
    falling = (before - last) / max(abs(before), 1e-12)
    if falling > 0.01:
        return False, (f"training loss still falling ({before:.3f} -> {last:.3f}, {falling:.1%} over the last "
                       "10 % of steps)")
    if accuracy < unigram + 0.02:
        return False, f"masked accuracy {accuracy:.3f} is at the unigram level ({unigram:.3f})"
    return True, f"loss flat ({before:.3f} -> {last:.3f}), accuracy {accuracy:.3f} > unigram {unigram:.3f}"


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


def run_sweep(params: DepthSweepParams, ctx: RunContext, scale_name: str) -> DepthSweepResult:
    """Train and probe one model per depth, write ``sweep_metrics.json``, plots and checkpoints into
    ``ctx.out_dir``; the result's evidence scale is named ``scale_name``."""
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
    unigram = unigram_accuracy(val)
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
        converged, why = convergence(losses, accuracy, unigram)
        rows.append({"converged": converged, "convergence": why,
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
    summary["converged_by_depth"] = [row["converged"] for row in rows]
    summary["convergence_by_depth"] = [row["convergence"] for row in rows]
    summary["unigram_accuracy"] = unigram
    summary["convergence_rule"] = CONVERGENCE_RULE
    untestable = {}
    unconverged = [f"{row['depth']} layers: {row['convergence']}" for row in rows if not row["converged"]]
    if unconverged:
        # The sweep compares trained models; while one is still learning, the comparison measures how fast each
        # depth optimises at this budget, not what depth is worth.
        why = "not trained to convergence at this budget (" + "; ".join(unconverged) + ")"
        for metric in ("best_depth", "best_depth_is_interior", "val_perplexity_by_depth", "masked_accuracy_by_depth",
                       "depth_inefficiency_trend"):
            untestable[metric] = why
    metrics_path = ctx.out_dir / "sweep_metrics.json"
    metrics_path.write_text(
        json.dumps(json_safe({**summary, "per_depth": rows, "layers_by_depth": per_depth_layers}), indent=2,
                   allow_nan=False),
        encoding="utf-8",
    )
    artifacts = [metrics_path.name, *plots.write_sweep_plots(summary, per_depth_layers, ctx.out_dir)]
    artifacts += sorted(str(p.relative_to(ctx.out_dir)) for p in checkpoints.rglob("*") if p.is_file())
    ctx.report(1.0, "done")
    return DepthSweepResult(
        **summary,
        untestable=untestable,
        scale=EvidenceScale(
            name=scale_name, parameters=float(sum(parameters) / len(parameters)),
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
