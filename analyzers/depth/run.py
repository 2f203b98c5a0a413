"""Probe one loaded model on a list of sequences (batched by length) and summarise the per-layer lists
into the metrics claims reference."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from analyzers.depth.batches import encode
from analyzers.depth.data import Record, length_batches
from analyzers.depth.loading import LoadedModel, OutOfMemory
from analyzers.depth.probes import ProbeAccumulator, ProbeOptions, clean_pass, reshape_contributions
from analyzers.depth.skips import skip_probes


def probe_model(
    loaded: LoadedModel,
    records: list[Record],
    options: ProbeOptions,
    batch_size: int = 8,
    mask_fraction: float = 0.15,
    seed: int = 0,
    report: Callable[[float, str], None] = lambda fraction, message: None,
) -> dict[str, Any]:
    """Every probe over ``records``; returns the per-layer lists (``summarize`` makes the metrics)."""
    adapter, device = loaded.adapter, next(loaded.model.parameters()).device
    accumulator = ProbeAccumulator(adapter.num_layers, adapter.objective, adapter.pre_ln)
    masking = mask_fraction if adapter.objective == "masked" else 0.0
    batches = length_batches(records, batch_size)
    for index, batch_records in enumerate(batches):
        batch = encode(batch_records, loaded.tokenizer, loaded.input_format, masking, seed).to(device)
        try:
            record = clean_pass(loaded.model, adapter, batch, accumulator, options)
            if options.skips:
                skip_probes(loaded.model, adapter, record, batch, accumulator, options)
        except torch.OutOfMemoryError as error:
            raise OutOfMemory(
                f"out of memory on {device} probing a batch of {batch.size} sequences of {batch.input_ids.shape[1]} "
                f"tokens: lower --batch-size (now {batch_size}) or --replay-tokens "
                f"(now {options.replay_tokens or 'auto'}), or drop long sequences with --max-length"
            ) from error
        del record
        shape = f"{batch.size} x {batch.input_ids.shape[1]}"
        report((index + 1) / len(batches), f"batch {index + 1}/{len(batches)} ({shape})")
    layers = accumulator.finish()
    reshape_contributions(layers)
    for name in ("deletion_nll", "baseline_nll"):
        if name in layers:
            values = layers.pop(name)
            perplexity_name = name.replace("_nll", "_perplexity")
            layers[perplexity_name] = [math.exp(v) for v in values] if isinstance(values, list) else math.exp(values)
    layers["num_sequences"] = len(records)
    layers["evaluation"] = (
        "masked positions (seeded 15 %)" if adapter.objective == "masked" and masking > 0 else
        "next-token prediction" if adapter.objective == "causal" else "all residue positions (nothing masked)"
    )
    return layers


def _mean(values: list[float]) -> float:
    finite = [v for v in values if v is not None and not math.isnan(v)]
    return sum(finite) / len(finite) if finite else float("nan")


def late_half_share(kl: list[float]) -> float:
    """Share of the logit-lens KL decrease ``KL_0 - KL_L`` made by layers ``L//2 .. L-1``."""
    num_layers = len(kl) - 1
    total = kl[0] - kl[-1]
    if not num_layers or abs(total) < 1e-12:
        return float("nan")
    return (kl[num_layers // 2] - kl[-1]) / total


def _effect_on_later_layers(heatmap: list[list[float]], rows: range) -> float:
    """Mean of ``heatmap[s][l]`` over ``s`` in ``rows`` and ``l > s`` (a layer's effect on later computation)."""
    values = [heatmap[s][layer] for s in rows for layer in range(s + 1, len(heatmap))]
    return _mean(values)


def summarize(layers: dict[str, Any]) -> dict[str, float]:
    """Summary metrics a claim can reference, from the per-layer lists. The early half is layers
    ``0 .. L//2 - 1``, the late half ``L//2 .. L-1``."""
    num_layers = layers["num_layers"]
    half = num_layers // 2
    early, late = range(0, half), range(half, num_layers)
    nan = float("nan")
    summary: dict[str, float] = {
        "late_half_kl_drop_fraction": late_half_share(layers["logit_lens_kl"]),
        "late_half_kl_drop_fraction_masked": (
            late_half_share(layers["logit_lens_kl_masked"]) if "logit_lens_kl_masked" in layers else nan
        ),
        "final_layer_erank": layers["erank"][-1],
        "erank_ratio": layers["erank"][-1] / layers["erank"][0] if layers["erank"][0] else nan,
        "stable_rank_ratio": layers["stable_rank"][-1] / layers["stable_rank"][0] if layers["stable_rank"][0] else nan,
    }
    entropy = layers.get("attention_entropy_mean") or []
    summary["attention_entropy_last_over_first"] = entropy[-1] / entropy[0] if entropy and entropy[0] else nan
    effects = layers.get("skip_output_effect")
    if effects:
        summary["mean_skip_output_effect_early_half"] = _mean([effects[i] for i in early])
        summary["mean_skip_output_effect_late_half"] = _mean([effects[i] for i in late])
        early_mean = summary["mean_skip_output_effect_early_half"]
        summary["late_to_early_skip_effect_ratio"] = (
            summary["mean_skip_output_effect_late_half"] / early_mean if early_mean else nan
        )
        summary["early_half_effect_on_later_layers"] = _effect_on_later_layers(layers["skip_heatmap"], early)
        summary["late_half_effect_on_later_layers"] = _effect_on_later_layers(layers["skip_heatmap"], late)
    if "baseline_perplexity" in layers:
        base_ppl, base_acc = layers["baseline_perplexity"], layers["baseline_accuracy"]
        summary["baseline_perplexity"] = base_ppl
        summary["baseline_accuracy"] = base_acc
        summary["max_deletion_perplexity_increase"] = max(p - base_ppl for p in layers["deletion_perplexity"])
        summary["mean_deletion_accuracy_drop_late_half"] = _mean(
            [base_acc - layers["deletion_accuracy"][i] for i in late]
        )
    return summary
