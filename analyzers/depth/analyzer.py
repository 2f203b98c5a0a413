"""``depth.probe``: how much each layer of a PLM changes the residual stream and the prediction.

One instrumented pass per batch gives the logit lens, contributions, angular distances, ranks and
attention entropy; the skip, sublayer-skip, future-effect and deletion probes replay only the layers
after the perturbed one. The default model is a small ESM-2-shaped model trained here on the shipped
designed sequences (see ``tiny.py``); real PLMs are named by hub id or folder.

This module only declares the analyzer (cheap to import: the registry loads it for every ``kb`` command);
the work is ``run.probe_one``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from analyzers.base import (
    Analyzer,
    AnalyzerParams,
    AnalyzerResult,
    GpuNeed,
    Resources,
    RunContext,
    looks_like_path,
    operator_only,
)
from analyzers.depth.catalog import BUILTINS
from analyzers.registry import register

DEFAULT_MODEL = "builtin:esm-designed-4x64"


class DepthProbeParams(AnalyzerParams):
    """Which model to probe, on which sequences, with which probes."""

    model: str = Field(
        default=DEFAULT_MODEL,
        description="Hub id, local folder, imported name, or a built-in trained tiny ESM "
        f"({', '.join(BUILTINS)}: trained here on designed sequences, not real PLMs).",
    )
    fasta: str | None = operator_only(
        description="FASTA of sequences (a path: set by the person running kb); default: held-out chains of the "
        "shipped designed corpus."
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
    trust_remote_code: bool = operator_only(False, description="Allow a hub model's own Python code to run.")

    @classmethod
    def note_errors(cls, params: dict[str, Any]) -> dict[str, str]:
        """A note names a model by hub id, catalog or built-in name, or a name imported under the KB home:
        never by a folder, which would make kb read whatever files the note points at."""
        errors = super().note_errors(params)
        model = params.get("model")
        if isinstance(model, str) and looks_like_path(model):
            errors["model"] = (f"{model!r} is a folder; a note names a model by hub id (owner/name), built-in "
                               "name, or a name imported with `kb models import FOLDER --name NAME`")
        return errors


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
        from analyzers.depth.run import probe_one  # torch and transformers: imported when the analyzer runs

        result = probe_one(params, ctx, ctx.out_dir)
        result.scale.name = self.scale_name(params)
        return result
