"""``depth.probe``: how much each layer of a PLM changes the residual stream and the prediction.

One instrumented pass per batch gives the logit lens, contributions, angular distances, ranks and
attention entropy; the skip, sublayer-skip, future-effect and deletion probes replay only the layers
after the perturbed one. The default model is a small ESM-2-shaped model trained here on the shipped
designed sequences (see ``tiny.py``); real PLMs are named by hub id or folder.
"""

from __future__ import annotations

import json
import math
import platform
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import Field

from analyzers.base import Analyzer, AnalyzerParams, AnalyzerResult, GpuNeed, Resources, RunContext
from analyzers.depth import plots, tiny
from analyzers.depth.batches import check_lengths
from analyzers.depth.catalog import MODELS
from analyzers.depth.data import DESIGNED_DESCRIPTION, DESIGNED_FASTA, Record, file_sha256, read_fasta, split_records
from analyzers.depth.loading import LoadedModel, ResolvedModel, check_device, load_model
from analyzers.depth.probes import ProbeOptions
from analyzers.depth.run import probe_model, summarize
from analyzers.registry import register
from schemas.run import EvidenceScale

DEFAULT_MODEL = "builtin:esm-designed-4x64"


class DepthProbeParams(AnalyzerParams):
    """Which model to probe, on which sequences, with which probes."""

    model: str = Field(
        default=DEFAULT_MODEL,
        description="Hub id, local folder, imported name, or a built-in trained tiny ESM "
        f"({', '.join(tiny.BUILTINS)}: trained here on designed sequences, not real PLMs).",
    )
    fasta: str | None = Field(
        default=None, description="FASTA of sequences; default: held-out chains of the shipped designed corpus."
    )
    max_sequences: int = Field(default=16, ge=1, description="Sequences probed (the first N after filtering).")
    max_length: int | None = Field(
        default=None, ge=1, description="Drop sequences longer than this (residues); default: keep all, and a "
        "sequence longer than the model accepts is an error.",
    )
    batch_size: int = Field(default=8, ge=1, description="Sequences per forward pass (batched by length).")
    dtype: Literal["float32", "float16", "bfloat16"] = Field(default="float32", description="Model dtype.")
    mask_fraction: float = Field(default=0.15, ge=0, lt=1, description="Masked LMs: seeded share of residues masked.")
    top_k: int = Field(default=5, ge=1, description="Logit lens: size of the top-k sets compared.")
    skips: bool = Field(default=True, description="Layer-skip heatmap, output effect and layer deletion.")
    sublayer_skips: bool = Field(default=True, description="Also skip only attention / only the MLP (pre-LN).")
    future: bool = Field(default=True, description="Causal models: skip at positions < t, measure at >= t.")
    replay_tokens: int | None = Field(
        default=None, ge=0, description="Skip probes: tokens (variants x batch x length) replayed together; "
        "default: one variant at a time on CPU, 16384 on CUDA.",
    )
    trust_remote_code: bool = Field(default=False, description="Allow a hub model's own Python code to run.")


class DepthProbeResult(AnalyzerResult):
    """Summary metrics and per-layer lists."""

    model: str = Field(description="The model probed (as given).")
    num_layers: int = Field(description="Layers of the probed model.")
    late_half_kl_drop_fraction: float | None = Field(description="Late-half share of the logit-lens KL decrease.")
    late_half_kl_drop_fraction_masked: float | None = Field(description="The same at masked positions.")
    mean_skip_output_effect_early_half: float | None = Field(description="Mean output effect, early-half skip.")
    mean_skip_output_effect_late_half: float | None = Field(description="Mean output effect, late-half skip.")
    late_to_early_skip_effect_ratio: float | None = Field(description="Late / early mean skip output effect.")
    early_half_effect_on_later_layers: float | None = Field(description="Early layers' skip effect on later updates.")
    late_half_effect_on_later_layers: float | None = Field(description="Late layers' skip effect on later updates.")
    final_layer_erank: float | None = Field(description="Effective rank of the last residual state.")
    erank_ratio: float | None = Field(description="erank(h_L) / erank(h_0).")
    stable_rank_ratio: float | None = Field(description="Stable rank(h_L) / stable rank(h_0).")
    attention_entropy_last_over_first: float | None = Field(description="Attention entropy, last / first layer.")
    baseline_perplexity: float | None = Field(description="Perplexity of the intact model.")
    baseline_accuracy: float | None = Field(description="Accuracy of the intact model.")
    max_deletion_perplexity_increase: float | None = Field(description="Max perplexity increase, one layer deleted.")
    mean_deletion_accuracy_drop_late_half: float | None = Field(description="Mean accuracy drop, late layer deleted.")
    layers: dict[str, Any] = Field(description="Per-layer lists (logit lens, contributions, ranks, skips, ...).")


def _finite(value: float) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def json_safe(value: Any) -> Any:
    """NaN / inf -> None recursively, so files are strict JSON."""
    if isinstance(value, dict):
        return {key: json_safe(v) for key, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def resolve_spec(model: str, seed: int, report: Any = lambda f, m: None) -> tuple[str | ResolvedModel, list[str]]:
    """A built-in name becomes its trained folder (trained on first use); notes say what it is."""
    if model in tiny.BUILTINS:
        folder = tiny.trained_tiny_esm(model, seed=seed, report=report)
        return ResolvedModel(model, folder, "builtin"), [tiny.describe(model)]
    if model.startswith("builtin:"):
        raise ValueError(f"unknown built-in model {model!r}; built-ins: {', '.join(tiny.BUILTINS)}")
    return model, []


def select_records(
    fasta: str | None, max_length: int | None, max_sequences: int
) -> tuple[Path, list[Record], list[str]]:
    """The sequences to probe and notes on where they come from."""
    notes: list[str] = []
    path = Path(fasta) if fasta else DESIGNED_FASTA
    records = read_fasta(path, max_length=max_length)
    if path == DESIGNED_FASTA:
        records = split_records(records)[1]
        notes.append(f"sequences: held-out chains of the shipped {DESIGNED_DESCRIPTION}")
    if not records:
        raise ValueError(f"{path}: no sequence left after the length filter (--max-length {max_length})")
    return path, records[:max_sequences], notes


def probe_one(params: DepthProbeParams, ctx: RunContext, out_dir: Path, title: str = "") -> DepthProbeResult:
    """Load, probe and write ``depth_metrics.json`` and plots into ``out_dir``; the typed result."""
    check_device(params.device)
    torch.manual_seed(params.seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    ctx.report(0.0, f"preparing {params.model}")
    spec, notes = resolve_spec(params.model, params.seed, lambda f, m: ctx.report(0.3 * f, m))
    fasta, records, data_notes = select_records(params.fasta, params.max_length, params.max_sequences)
    notes += data_notes
    ctx.report(0.3, f"loading {params.model}")
    loaded: LoadedModel = load_model(spec, params.device, params.dtype, params.trust_remote_code)
    check_lengths(records, loaded.tokenizer, loaded.input_format, loaded.adapter.max_tokens, params.model)
    if not loaded.adapter.pre_ln:
        notes.append("post-LN model: the residual decomposition (contributions, sublayer skips) is not defined")
    if loaded.input_format == "saprot":
        notes.append("SaProt fed residues as '<aa>#' (structure tokens unknown)")
    options = ProbeOptions(
        top_k=params.top_k, skips=params.skips, sublayer_skips=params.sublayer_skips, future=params.future,
        replay_tokens=params.replay_tokens,
    )
    layers = probe_model(
        loaded, records, options, params.batch_size, params.mask_fraction, params.seed,
        lambda f, m: ctx.report(0.35 + 0.6 * f, f"{params.model}: {m}"),
    )
    notes += layers.pop("notes", [])
    summary = summarize(layers)
    metrics_path = out_dir / "depth_metrics.json"
    metrics_path.write_text(
        json.dumps(json_safe({"model": params.model, **summary, "layers": layers}), indent=2, allow_nan=False),
        encoding="utf-8",
    )
    artifacts = [metrics_path.name, *plots.write_plots(layers, out_dir, title)]
    card = MODELS.get(loaded.resolved.model_id)
    provenance = {
        **loaded.provenance,
        "data": str(fasta),
        "data_hash": file_sha256(fasta),
        "num_sequences": len(records),
        "seed": params.seed,
        "python": platform.python_version(),
        "gpu_name": torch.cuda.get_device_name(params.device) if params.device.startswith("cuda") else None,
    }
    if loaded.resolved.source == "builtin":
        provenance["training"] = json.loads((loaded.resolved.folder / "training.json").read_text(encoding="utf-8"))
    parameters = float(loaded.provenance["num_parameters"])
    nan = float("nan")
    ctx.report(1.0, "done")
    return DepthProbeResult(
        model=params.model,
        num_layers=loaded.adapter.num_layers,
        **{name: _finite(summary.get(name, nan)) for name in DepthProbe.metrics},
        layers=json_safe(layers),
        scale=EvidenceScale(
            name="custom", parameters=parameters,
            data=f"{len(records)} sequences from {fasta.name}",
            description=card.family if card else None,
        ),
        artifacts=artifacts,
        provenance=provenance,
        notes=notes,
    )


@register
class DepthProbe(Analyzer[DepthProbeParams, DepthProbeResult]):
    """Logit lens, residual contributions, layer skips, deletion, ranks and attention entropy of one PLM."""

    name = "depth.probe"
    version = "3"
    summary = "Curse-of-depth probes of a PLM: logit lens, contributions, layer skips and deletion, ranks, entropy."
    Params = DepthProbeParams
    Result = DepthProbeResult
    metrics = {
        "late_half_kl_drop_fraction": "share of the logit-lens KL(p_l || p_L) decrease made by layers L//2..L-1",
        "late_half_kl_drop_fraction_masked": "the same at masked positions (masked models)",
        "mean_skip_output_effect_early_half": "mean ||softmax(z)-softmax(z')|| when skipping an early-half layer",
        "mean_skip_output_effect_late_half": "mean ||softmax(z)-softmax(z')|| when skipping a late-half layer",
        "late_to_early_skip_effect_ratio": "late-half over early-half mean skip output effect",
        "early_half_effect_on_later_layers": "mean ||D_l - D'_l||/||D_l|| over l > s, s in the early half",
        "late_half_effect_on_later_layers": "mean ||D_l - D'_l||/||D_l|| over l > s, s in the late half",
        "final_layer_erank": "effective rank (Roy & Vetterli) of the final residual state's token matrix",
        "erank_ratio": "erank(h_L) / erank(h_0)",
        "stable_rank_ratio": "stable rank(h_L) / stable rank(h_0)",
        "attention_entropy_last_over_first": "mean normalised attention entropy of the last layer / the first",
        "baseline_perplexity": "perplexity of the intact model at masked positions (or next token)",
        "baseline_accuracy": "accuracy of the intact model at masked positions (or next token)",
        "max_deletion_perplexity_increase": "largest perplexity increase from deleting a single layer",
        "mean_deletion_accuracy_drop_late_half": "mean accuracy drop from deleting one late-half layer",
    }
    resources = Resources(gpu=GpuNeed.recommended, memory_gb=4.0)
    scales = {
        "smoke": {"model": DEFAULT_MODEL, "max_sequences": 8},
        "small": {"model": "builtin:esm-designed-8x128", "max_sequences": 32},
        "esm2_8m": {"model": "facebook/esm2_t6_8M_UR50D", "max_sequences": 32},
        "paper": {"model": "facebook/esm2_t33_650M_UR50D", "max_sequences": 128, "device": "cuda"},
    }

    def run(self, params: DepthProbeParams, ctx: RunContext) -> DepthProbeResult:
        result = probe_one(params, ctx, ctx.out_dir)
        result.scale.name = self.scale_name(params)
        return result

    def scale_name(self, params: DepthProbeParams) -> str:
        """The preset these parameters are (its name, whatever the seed), or 'custom'."""
        for name in self.scales:
            if params == self.params_for(scale=name).model_copy(update={"seed": params.seed}):
                return name
        return "custom"
