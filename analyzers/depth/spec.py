"""What the depth analyzers are: their parameters, results, metrics and scales (cheap to import: the
registry loads it for every ``kb`` command; the work is in ``compute``).

``depth.probe``: how much each layer of a PLM changes the residual stream and the prediction. One
instrumented pass per batch gives the logit lens, contributions, angular distances, ranks and attention
entropy; the skip, sublayer-skip, future-effect and deletion probes replay only the layers after the
perturbed one. The default model is a small ESM-2-shaped model trained here on the shipped designed
sequences (see ``tiny.py``); real PLMs are named by hub id or folder.

``depth.sweep``: train masked PLMs of several depths at one parameter budget, then probe each. This is
how seed 000's claims (an optimal depth, perplexity per depth, rank and attention entropy with depth) and
the abstract's "more pronounced in deeper models" are tested at whatever scale the machine allows. For
every depth the width is solved so that the ``EsmForMaskedLM`` parameter counts match the budget within a
few percent; each model is trained with seeded 15 % masking on the same corpus and steps, evaluated on
held-out sequences (validation perplexity and masked-token accuracy), saved with ``save_pretrained``
(safetensors) under ``checkpoints/``, and probed with ``depth.probe``'s probes.

``depth_inefficiency_trend`` is minus the least-squares slope, across depths, of
``log(late_to_early_skip_effect_ratio)`` against ``log2(depth)``, where the ratio is the mean output
effect of skipping one layer of the later half over that of the earlier half. Positive: the deeper the
model, the less its later layers change the output relative to its earlier ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from analyzers.base import (
    Analyzer,
    AnalyzerParams,
    AnalyzerResult,
    GpuNeed,
    NotRunnable,
    Resources,
    looks_like_path,
    metric,
    operator_only,
)
from analyzers.depth.catalog import BUILTINS, TRAIN_SECONDS, builtin_folder, is_trained
from analyzers.progress import first_use_stage
from analyzers.registry import register

DEFAULT_MODEL = "builtin:esm-designed-4x64"
#: The CPU ``small`` sweep: tiny models trained to a flat validation loss on the designed corpus; measured
#: 18 minutes wall (7.5 minutes of CPU) on this shared 2-core machine, every depth converged by the rule (see
#: analyzers/depth/README.md). 30k parameters at 100 or 150 tokens per parameter were not converged.
SMALL_SWEEP: dict[str, Any] = {
    "depths": [2, 4, 8, 16], "parameter_budget": 12_000, "head_size": 4, "tokens_per_parameter": 400,
    "batch_tokens": 2816, "learning_rate": 3e-3, "warmup_fraction": 0.05, "evaluations": 20,
    "probe_sequences": 32, "max_val_sequences": 200,
}


#: The ``depth.probe`` family presets: checkpoints of one family at several depths (``models``), and one
#: checkpoint of each of six PLM families across the three objectives (the curse-of-depth paper's v1 probes
#: six PLMs; the note names ESM-2, ProtGPT2, DPLM and SaProt, and kb adds ProGen2 and ProtBERT, the other
#: families its adapters load, at sizes near 650M).
FAMILY_SMOKE = ("builtin:esm-designed-2x64", "builtin:esm-designed-4x64", "builtin:esm-designed-8x64")
ESM2_FAMILY = ("facebook/esm2_t6_8M_UR50D", "facebook/esm2_t12_35M_UR50D", "facebook/esm2_t30_150M_UR50D",
               "facebook/esm2_t33_650M_UR50D", "facebook/esm2_t36_3B_UR50D", "facebook/esm2_t48_15B_UR50D")
SIX_PLMS = ("facebook/esm2_t33_650M_UR50D", "nferruz/ProtGPT2", "hugohrban/progen2-base",
            "airkingbd/dplm_650m", "westlake-repl/SaProt_650M_AF2", "Rostlab/prot_bert")

#: What a probe's numbers rest on (the model beats the unigram baseline), and a sweep's per-depth numbers.
LEARNED = ("learned",)
TRAINED = ("converged", "learned")


class DepthProbeParams(AnalyzerParams):
    """Which model to probe, on which sequences, with which probes."""

    model: str = Field(
        default=DEFAULT_MODEL,
        description="Hub id, local folder, imported name, or a built-in trained tiny ESM "
        f"({', '.join(BUILTINS)}: trained here on designed sequences, not real PLMs).",
    )
    fasta: str | None = operator_only(
        description="FASTA of sequences (a path: set by the person running kb); default: held-out chains of "
        "the shipped designed corpus."
    )
    max_sequences: int = Field(
        default=16, ge=1, description="Sequences probed (the first N after filtering)."
    )
    max_length: int | None = Field(
        default=None,
        ge=1,
        description="Drop sequences longer than this (residues); default: keep all, and a "
        "sequence longer than the model accepts is an error.",
    )
    batch_size: int = Field(default=8, ge=1, description="Sequences per forward pass (batched by length).")
    dtype: Literal["float32", "float16", "bfloat16"] = Field(default="float32", description="Model dtype.")
    mask_fraction: float = Field(
        default=0.15, ge=0, lt=1, description="Masked LMs: seeded share of residues masked."
    )
    noise_level: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="Diffusion LMs (DPLM): the noise level probed, as the share of residues "
        "masked: t/T for diffusion step t of the T=500 steps DPLM was trained with (0.5 = step 250). Each "
        "residue is masked with this probability, as in DPLM's training; masked LMs use mask_fraction "
        "instead.",
    )
    structure_fasta: str | None = operator_only(
        description="SaProt: FASTA of 3Di structure strings (Foldseek letters, '#' where unknown), one per "
        "sequence under the same record name and of the same length (a path: set by the person running kb); "
        "default: structure unknown ('#') everywhere.",
    )
    top_k: int = Field(default=5, ge=1, description="Logit lens: size of the top-k sets compared.")
    skips: bool = Field(default=True, description="Layer-skip heatmap, output effect and layer deletion.")
    sublayer_skips: bool = Field(
        default=True, description="Also skip only attention / only the MLP (pre-LN)."
    )
    future: bool = Field(default=True, description="Causal models: skip at positions < t, measure at >= t.")
    replay_tokens: int | None = Field(
        default=None, ge=0, description="Skip probes: tokens (variants x batch x length) replayed together; "
        "default: one variant at a time on CPU, 16384 on CUDA.",
    )
    trust_remote_code: bool = operator_only(False, description="Allow a hub model's own Python code to run.")
    models: list[str] = Field(
        default_factory=list,
        description="Several checkpoints of one family (hub ids or built-in names), probed "
        "one after another on the same sequences instead of `model`: the result adds each one's numbers and "
        "the trend of the late/early skip effect ratio against depth (`depth_inefficiency_trend`). Empty: "
        "`model`.",
    )

    @field_validator("models")
    @classmethod
    def _models(cls, models: list[str]) -> list[str]:
        if len(models) == 1 or len(set(models)) != len(models):
            raise ValueError("models: give two or more distinct checkpoints (or none, and `model`)")
        return models

    @classmethod
    def note_errors(cls, params: dict[str, Any]) -> dict[str, str]:
        """A note names a model by hub id, catalog or built-in name, or a name imported under the KB home:
        never by a folder, which would make kb read whatever files the note points at."""
        errors = super().note_errors(params)
        named = [params.get("model"), *(params.get("models") or [])]
        for model in named:
            if isinstance(model, str) and looks_like_path(model):
                errors["models" if model != params.get("model") else "model"] = (
                    f"{model!r} is a folder; a note names a model by hub id (owner/name), built-in "
                    "name, or a name imported with `kb models import FOLDER --name NAME`")
        return errors


class DepthProbeResult(AnalyzerResult):
    """Summary metrics and per-layer lists."""

    model: str = Field(description="The model probed (as given).")
    num_layers: int = Field(description="Layers of the probed model.")
    late_half_kl_drop_fraction: float | None = metric(
        uncertainty="sequences", rests_on=LEARNED,
        description="share of the logit-lens KL(p_l || p_L) decrease made by layers L//2..L-1"
    )
    late_half_kl_drop_fraction_masked: float | None = metric(
        uncertainty="sequences", rests_on=LEARNED,
        description="the same at masked positions (masked models)")
    mean_skip_output_effect_early_half: float | None = metric(
        uncertainty="sequences", rests_on=LEARNED,
        description="mean ||softmax(z)-softmax(z')|| when skipping an early-half layer"
    )
    mean_skip_output_effect_late_half: float | None = metric(
        uncertainty="sequences", rests_on=LEARNED,
        description="mean ||softmax(z)-softmax(z')|| when skipping a late-half layer"
    )
    late_to_early_skip_effect_ratio: float | None = metric(
        uncertainty="sequences", rests_on=LEARNED,
        description="late-half over early-half mean skip output effect"
    )
    early_half_effect_on_later_layers: float | None = metric(
        uncertainty="sequences", rests_on=LEARNED,
        description="mean ||D_l - D'_l||/||D_l|| over l > s, s in the early half"
    )
    late_half_effect_on_later_layers: float | None = metric(
        uncertainty="sequences", rests_on=LEARNED,
        description="mean ||D_l - D'_l||/||D_l|| over l > s, s in the late half"
    )
    final_layer_erank: float | None = metric(
        uncertainty="sequences", rests_on=LEARNED,
        description="effective rank (Roy & Vetterli) of the final residual state's token matrix"
    )
    erank_ratio: float | None = metric(
        uncertainty="sequences", rests_on=LEARNED,
        description="erank(h_L) / erank(h_0)")
    stable_rank_ratio: float | None = metric(
        uncertainty="sequences", rests_on=LEARNED,
        description="stable rank(h_L) / stable rank(h_0)")
    late_to_early_dependence_ratio: float | None = metric(
        None, uncertainty="sequences", rests_on=LEARNED,
        description="how much a late-half layer's computation depends on the layers before it, over the same "
        "for an early-half layer: a layer l's dependence is the mean over s < l of ||D_l - D'_l|| / ||D_l|| "
        "when layer s is skipped; < 1: later layers depend less on earlier computations (4+ layers: below, "
        "no early layer has an earlier one)"
    )
    attention_entropy_last_over_first: float | None = metric(
        uncertainty="sequences", rests_on=LEARNED,
        description="mean normalised attention entropy of the last layer / the first"
    )
    baseline_perplexity: float | None = metric(
        uncertainty="sequences", rests_on=LEARNED,
        description="perplexity of the intact model at masked positions (or next token)"
    )
    baseline_accuracy: float | None = metric(
        uncertainty="sequences", rests_on=LEARNED,
        description="accuracy of the intact model at masked positions (or next token)"
    )
    max_deletion_perplexity_increase: float | None = metric(
        uncertainty="sequences", rests_on=LEARNED,
        description="largest perplexity increase from deleting a single layer"
    )
    mean_deletion_accuracy_drop_late_half: float | None = metric(
        uncertainty="sequences", rests_on=LEARNED,
        description="mean accuracy drop from deleting one late-half layer"
    )
    lens_perplexity_by_layer: list[float | None] | None = metric(
        None, uncertainty="sequences", rests_on=LEARNED,
        description="logit-lens perplexity at state h_l, l = 0..L (masked or next-token positions)",
    )
    stable_rank_retention: float | None = metric(
        None, uncertainty="sequences", rests_on=LEARNED,
        description="stable rank(h_L) / stable rank(h_0) per sequence, mean over sequences",
    )
    erank_retention_by_layer: list[float | None] | None = metric(
        None, uncertainty="sequences", rests_on=LEARNED,
        description="erank(h_l) / erank(h_0) per sequence and state, mean over sequences",
    )
    rank_collapse_slope: float | None = metric(
        None, uncertainty="sequences", rests_on=LEARNED,
        description="slope of erank(h_l)/erank(h_0) over relative depth; < 0: rank collapse",
    )
    stable_rank_retention_by_layer: list[float | None] | None = metric(
        None, uncertainty="sequences", rests_on=LEARNED,
        description="stable rank(h_l) / stable rank(h_0) per sequence and state, mean over sequences",
    )
    stable_rank_collapse_slope: float | None = metric(
        None, uncertainty="sequences", rests_on=LEARNED,
        description="slope of stable rank(h_l)/stable rank(h_0) over relative depth (the analysis note's "
        "rank_eff = ||X||_F^2 / ||X||_2^2); < 0: rank collapse",
    )
    attention_entropy_by_layer: list[float | None] | None = metric(
        None, uncertainty="sequences", rests_on=LEARNED,
        description="attention entropy / log(keys) per layer, mean over heads",
    )
    attention_entropy_depth_slope: float | None = metric(
        None, uncertainty="sequences", rests_on=LEARNED,
        description="slope of normalised attention entropy over relative depth; > 0: more uniform deeper",
    )
    models: list[str] = Field(
        default_factory=list, description="Checkpoints of a family run (`models`), in order."
    )
    num_layers_by_model: list[int] = Field(
        default_factory=list, description="Family run: layers per checkpoint."
    )
    late_to_early_skip_effect_ratio_by_model: list[float | None] = metric(
        default_factory=list, uncertainty="sequences", rests_on=LEARNED,
        description="family run: late/early skip effect ratio per checkpoint",
    )
    late_half_kl_drop_fraction_by_model: list[float | None] = Field(
        default_factory=list,
        description="Family run: late-half KL drop share per checkpoint (checks per element).",
    )
    depth_inefficiency_trend: float | None = metric(
        None, uncertainty="sequences", rests_on=LEARNED,
        description="family run: -slope of log(late/early skip ratio) over log2(layers); > 0: effect grows",
    )
    late_to_early_dependence_ratio_by_model: list[float | None] = Field(
        default_factory=list,
        description="Family run: each checkpoint's late/early dependence ratio (checks per element).",
    )
    late_half_kl_drop_fraction_min_over_models: float | None = metric(
        None, uncertainty="sequences", rests_on=LEARNED,
        description="family run: the smallest checkpoint's late-half KL drop share (every model's late half "
        "makes at least this share); its interval from every member's, none left out",
    )
    late_to_early_dependence_ratio_max_over_models: float | None = metric(
        None, uncertainty="sequences", rests_on=LEARNED,
        description="family run: the largest checkpoint's late/early dependence ratio (< 1: in every model "
        "the later layers depend less on earlier computations); its interval from every member's",
    )
    layers: dict[str, Any] = Field(
        description="Per-layer lists (logit lens, contributions, ranks, skips, ...); a "
        "family run: those of its deepest checkpoint."
    )
    layers_by_model: dict[str, Any] = Field(
        default_factory=dict, description="Family run: per-layer lists of each checkpoint."
    )


@register
class DepthProbe(Analyzer[DepthProbeParams, DepthProbeResult]):
    """Logit lens, residual contributions, layer skips, deletion, ranks and attention entropy of one PLM."""

    name = "depth.probe"
    # 7: learned over t(n - 1); small and esm2_8m probe 128 sequences (issue 35: power); 8: the late/early
    # dependence ratio and the family's every-model bounds
    version = "8"
    summary = (
        "Curse-of-depth probes of a PLM: logit lens, contributions, layer skips and deletion, ranks, entropy."
    )
    Params = DepthProbeParams
    Result = DepthProbeResult
    compute = "analyzers.depth.compute:probe"
    resources = Resources(gpu=GpuNeed.recommended, memory_gb=4.0)
    # Reference seconds (kb.evidence.estimates), the built-ins' training and the libraries' loading apart
    # (their own first-use stages): smoke about 1,000 times the speed probe, timed between two probes under
    # loads of 4-20 (benchmarks/bench_costs.py; 5 rounds, 650-1,240); family_smoke (three models, 16
    # sequences) 3.5 smokes and plms_smoke (its larger two models) 2.5, as their run stages took against the
    # smoke runs' beside them in benchmarks/bench_estimates.py near idle (2026-11-28: 3.3-3.5 and 2.3-2.7; 4.9
    # for family_smoke under a load of 8-13, still within 2x of this)
    expected_seconds = {"smoke": 11.0, "family_smoke": 38.0, "plms_smoke": 27.5}
    libraries = ("torch", "transformers", "matplotlib")
    scales = {
        "smoke": {"model": DEFAULT_MODEL, "max_sequences": 8},
        "small": {"model": "builtin:esm-designed-8x128", "max_sequences": 128},
        "esm2_8m": {"model": "facebook/esm2_t6_8M_UR50D", "max_sequences": 128},
        "paper": {"model": "facebook/esm2_t33_650M_UR50D", "max_sequences": 128, "device": "cuda"},
        # The 36-layer PLM of the analysis note's rank numbers (ESM-2 3B has 36 layers).
        "esm2_3b": {
            "model": "facebook/esm2_t36_3B_UR50D",
            "max_sequences": 128,
            "device": "cuda",
            "dtype": "bfloat16",
        },
        # One family across depths: tiny built-ins here, the ESM-2 checkpoints 8M..15B (6..48 layers) on a GPU
        # (15B in bf16: ~30 GB of weights, one 80 GB GPU).
        "family_smoke": {"models": list(FAMILY_SMOKE), "max_sequences": 16},
        # six_plms' stand-in here: the built-ins with an early half that has a layer after the first (4+
        # layers), so the late/early dependence ratio is defined for every member
        "plms_smoke": {"models": list(FAMILY_SMOKE[1:]), "max_sequences": 16},
        "esm2_family": {
            "models": list(ESM2_FAMILY),
            "max_sequences": 128,
            "device": "cuda",
            "dtype": "bfloat16",
        },
        "six_plms": {"models": list(SIX_PLMS), "max_sequences": 128, "device": "cuda", "dtype": "bfloat16"},
    }
    # Rough GPU hours per run on one H100-class GPU (skip probes dominate: one replay per layer and sublayer);
    # six_plms: six models of 0.4-0.8B, each about a `paper` run.
    gpu_hours = {"paper": 0.2, "esm2_3b": 0.5, "esm2_family": 3.0, "six_plms": 1.2}

    def first_use(self, params: DepthProbeParams, cache_dir: Path) -> list[tuple[str, float]]:
        """Training each built-in model the run probes that ``cache_dir`` does not hold yet
        (``untrained``)."""
        return [(first_use_stage(f"training {model}"), TRAIN_SECONDS[model])
                for model in untrained(params, cache_dir)]


def untrained(params: DepthProbeParams, cache_dir: Path) -> list[str]:
    """The built-in models a probe run names (``model`` or ``models``) not yet trained under ``cache_dir``."""
    models = params.models or [params.model]
    return [model for model in dict.fromkeys(models)
            if model in BUILTINS and not is_trained(builtin_folder(model, params.seed, cache_dir / "depth"))]


class DepthSweepParams(AnalyzerParams):
    """Depths, parameter and token budgets, corpus, optimisation and the convergence rule of the sweep."""

    depths: list[int] = Field(default=[2, 4, 8], description="Layer counts to train (each >= 2).")
    parameter_budget: float = Field(
        default=60_000, gt=0, description="Parameters per model (EsmForMaskedLM)."
    )
    head_size: int = Field(
        default=64,
        ge=2,
        description="Dimensions per attention head (even; fixed across depths "
        "so depth is not confounded with head size): width is a multiple of it.",
    )
    tokens_per_parameter: float = Field(
        default=20,
        gt=0,
        description="Training budget: residues seen per parameter (ESM-2 650M saw about 1,500; "
        "Chinchilla-optimal text LMs about 20). The step count follows from it and the tokens per step.",
    )
    fasta: str | None = operator_only(
        description="Training corpus (a path: set by the person running kb), streamed, never read whole; "
        "default: the shipped designed sequences (not natural proteins). A relative path that does not "
        "exist here is looked up in the KB home's data folder.",
    )
    val_fraction: float = Field(
        default=0.1, gt=0, lt=1, description="Held-out share when the FASTA has no split tags."
    )
    max_val_sequences: int = Field(default=100, ge=1, description="Validation sequences evaluated.")
    max_residues: int = Field(default=1022, ge=8, description="Longer sequences are cropped (random window).")
    batch_tokens: int = Field(
        default=4096, ge=16, description="Padded tokens per micro-batch (length-bucketed)."
    )
    accumulation: int = Field(
        default=1, ge=1, description="Micro-batches per optimiser step (gradient accumulation)."
    )
    buffer_sequences: int = Field(default=10_000, ge=1, description="Shuffle buffer of the streamed corpus "
                                  "(sequences sorted by length into batches, batches shuffled).")
    learning_rate: float = Field(
        default=3e-3, gt=0, description="Peak AdamW learning rate (cosine decay to 0)."
    )
    warmup_fraction: float = Field(default=0.05, ge=0, lt=1, description="Share of steps in linear warm-up.")
    evaluations: int = Field(default=20, ge=2, description="Validation evaluations over training: every "
                             "ceil(steps / evaluations) steps and at the last step.")
    convergence_window: int = Field(
        default=5, ge=1, description="K: the convergence rule looks at the last K evaluations."
    )
    convergence_tolerance: float = Field(
        default=0.01,
        gt=0,
        description="A depth is converged when its validation loss improved by less than this "
        "relative amount over the last K evaluations.",
    )
    dtype: Literal["float32", "bfloat16"] = Field(
        default="float32", description="Autocast dtype on CUDA (weights stay float32); CPU trains in float32."
    )
    gradient_checkpointing: bool = Field(
        default=False,
        description="Recompute activations in the backward pass (less memory, about a third more compute).",
    )
    checkpoint_every: int = Field(
        default=500,
        ge=0,
        description="Steps between resumable checkpoints within a "
        "depth, when the runner keeps checkpoints (0: only after each depth).",
    )
    probe_sequences: int = Field(default=8, ge=1, description="Held-out sequences the probes run on.")
    probe_batch_size: int = Field(default=8, ge=1, description="Sequences per probe pass.")
    sublayer_skips: bool = Field(
        default=False, description="Also run attention-/MLP-only skips in the probes."
    )

    @field_validator("depths")
    @classmethod
    def _depths(cls, depths: list[int]) -> list[int]:
        if len(depths) < 2 or min(depths) < 2 or len(set(depths)) != len(depths):
            raise ValueError("depths: give at least two distinct layer counts, each >= 2")
        return sorted(depths)

    @field_validator("head_size")
    @classmethod
    def _head_size(cls, head_size: int) -> int:
        if head_size % 2:
            raise ValueError("head_size must be even (rotary embeddings rotate pairs of dimensions)")
        return head_size


class DepthSweepResult(AnalyzerResult):
    """Per-depth training and probe numbers, learning curves, the convergence verdicts, and the trend."""

    depths: list[int] = metric(description="layer counts trained", exact=True)
    widths_by_depth: list[int] = Field(description="Solved hidden size per depth.")
    heads_by_depth: list[int] = Field(
        default_factory=list, description="Attention heads per depth (width / head size)."
    )
    intermediate_by_depth: list[int] = Field(description="Solved FFN width per depth.")
    parameters_by_depth: list[int] = metric(
        description="exact parameter count per depth (equal within a few %)", exact=True
    )
    parameter_spread: float = Field(description="max/min parameter count - 1 across depths.")
    steps: int = Field(default=0, description="Optimiser steps per depth (from the token budget).")
    tokens_per_parameter_by_depth: list[float] = Field(
        default_factory=list, description="Residues trained on per parameter, as counted during training."
    )
    train_loss_by_depth: list[float] = Field(description="Mean training loss over the last 10 % of steps.")
    learning_curves_by_depth: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Per depth: train_loss (per step, or means over train_loss_every steps "
        "past 2,000 steps), val_steps and val_loss (mean masked-token NLL at each evaluation).",
    )
    val_loss_improvement_by_depth: list[float | None] = Field(
        default_factory=list, description="Relative validation-loss improvement over the last K evaluations."
    )
    converged_by_depth: list[bool] = Field(default_factory=list, description="Whether each depth passed the "
                                           "convergence rule (see ``convergence_rule``).")
    convergence_by_depth: list[str] = Field(
        default_factory=list, description="Why each depth did or did not."
    )
    unigram_accuracy: float | None = Field(
        default=None,
        description="Masked accuracy of always predicting the "
        "validation set's most frequent residue: the floor a model must beat.",
    )
    convergence_rule: str = Field(default="", description="The rule the flags apply.")
    best_depth_z: float | None = Field(
        default=None, description="Paired z of the runner-up's validation NLL over the best depth's, across "
        "validation sequences; best_depth is decided only when it is at least 2."
    )
    val_perplexity_by_depth: list[float] = metric(
        uncertainty="sequences", rests_on=TRAINED,
        description="validation perplexity at seeded 15 % masked positions, per depth"
    )
    masked_accuracy_by_depth: list[float] = metric(
        uncertainty="sequences", rests_on=TRAINED,
        description="validation masked-token accuracy, per depth")
    best_depth: int = metric(
        uncertainty="sequences", rests_on=TRAINED,
        description="depth with the lowest validation perplexity")
    best_depth_is_interior: bool = metric(
        uncertainty="sequences", rests_on=TRAINED,
        description="True when the best depth is neither the shallowest nor the deepest trained"
    )
    late_half_kl_drop_fraction_by_depth: list[float | None] = metric(
        uncertainty="sequences", rests_on=TRAINED,
        description="share of the logit-lens KL decrease made by the later half, per depth"
    )
    late_to_early_skip_effect_ratio_by_depth: list[float | None] = metric(
        uncertainty="sequences", rests_on=TRAINED,
        description="late-half / early-half mean skip output effect, per depth"
    )
    late_half_effect_on_later_layers_by_depth: list[float | None] = Field(
        description="Late layers' skip effect."
    )
    erank_ratio_by_depth: list[float | None] = metric(
        uncertainty="sequences", rests_on=TRAINED,
        description="erank(h_L)/erank(h_0) per depth (seed 000: rank collapse)"
    )
    stable_rank_ratio_by_depth: list[float | None] = Field(description="Stable rank(h_L) / stable rank(h_0).")
    attention_entropy_last_over_first_by_depth: list[float | None] = metric(
        uncertainty="sequences", rests_on=TRAINED,
        description="attention entropy last/first layer per depth (seed 000)"
    )
    deepest_perplexity_rise: float | None = metric(
        None, uncertainty="sequences", rests_on=TRAINED,
        description="val perplexity of the deepest depth minus the next deepest (> 0: rises again)",
    )
    perplexity_fall_and_rise: float | None = metric(
        None, uncertainty="sequences", rests_on=TRAINED,
        description="the smaller of the val perplexity's fall (shallowest minus next deepest) and its rise "
        "(deepest minus next deepest); > 0: falls, then rises again at the deepest depth",
    )
    depth_inefficiency_trend: float | None = metric(
        uncertainty="sequences",
        rests_on=TRAINED,
        description="-slope of log(late/early skip output effect) over log2(depth); > 0: deeper models use "
        "their later layers less",
    )


#: An H100's sustained FLOP/s on the sweep's training steps: ~20 % of its 989 TFLOP/s dense bf16 peak, for
#: bf16 autocast over float32 weights and eager attention (an assumption from the setup, not measured here).
H100_SWEEP_FLOPS = 0.2 * 989e12


#: The largest sweep, in hours on one H100, that ``DepthSweep.preflight`` lets a CPU start (the `small` preset
#: is well under a second of an H100; an hour of one is weeks of a 2-core CPU).
CPU_LIMIT_H100_HOURS = 1.0


def h100_sweep_seconds(preset: dict[str, Any]) -> float:
    """Seconds a sweep at ``preset`` trains on one H100, from its size: depths x steps x seconds a step.

    Steps per depth: tokens_per_parameter x parameter_budget residues over batch_tokens x accumulation a
    step (a lower bound: the sweep counts real residues, and padding makes it a few percent more). A step
    costs 8 FLOPs per parameter per token: 6 for the forward and backward passes, 2 more where activation
    checkpointing runs the forward pass again. Validation and the probes add under 1 %.
    """
    tokens_per_step = preset["batch_tokens"] * preset["accumulation"]
    steps = -(-preset["tokens_per_parameter"] * preset["parameter_budget"] // tokens_per_step)  # ceil
    flops_per_token = 8 if preset.get("gradient_checkpointing") else 6
    seconds_per_step = flops_per_token * preset["parameter_budget"] * tokens_per_step / H100_SWEEP_FLOPS
    return float(len(preset["depths"]) * steps * seconds_per_step)


@register
class DepthSweep(Analyzer[DepthSweepParams, DepthSweepResult]):
    """Masked PLMs of several depths at one parameter budget: perplexity and probes per depth."""

    name = "depth.sweep"
    # 6: learned over sequences, t(n - 1); best depth Bonferroni over k - 1 comparisons (issue 35); 7: the
    # perplexity's fall and rise, paired
    version = "7"
    summary = (
        "Train masked PLMs of several depths at a fixed parameter budget; perplexity and probes per depth."
    )
    Params = DepthSweepParams
    Result = DepthSweepResult
    compute = "analyzers.depth.sweep:sweep"
    resources = Resources(gpu=GpuNeed.recommended, memory_gb=2.0)
    # How a run is carried out, not what it measures: results agree (to float round-off) whatever these are.
    scale_ignored_fields = frozenset({"gradient_checkpointing", "checkpoint_every", "probe_batch_size"})
    # 5 depths x 650M parameters x 20 tokens per parameter (about 6 N D = 5e19 FLOPs a depth) at ~40 % of an
    # H100.
    scales = {
        "smoke": {"tokens_per_parameter": 2, "head_size": 8, "batch_tokens": 2048},
        "small": SMALL_SWEEP,
        "paper": {
            "depths": [6, 12, 24, 36, 48],
            "parameter_budget": 650e6,
            "head_size": 64,
            "fasta": "uniref50.fasta",
            "tokens_per_parameter": 20,
            "batch_tokens": 16_384,
            "accumulation": 4,
            "buffer_sequences": 20_000,
            "learning_rate": 4e-4,
            "warmup_fraction": 0.01,
            "evaluations": 40,
            "dtype": "bfloat16",
            "gradient_checkpointing": True,
            "checkpoint_every": 1000,
            "device": "cuda",
            "probe_sequences": 128,
            "max_val_sequences": 2000,
            "sublayer_skips": True,
        },
    }
    # 'paper' runs on CUDA only, so there is no 2-core time to measure: its estimate is one H100's, from the
    # preset's size (h100_sweep_seconds): 5 depths x 198,365 steps x 1.7 s = 1.7e6 s, about 20 days
    # (gpu_hours: the same figure in hours, so every surface quotes one cost). Where past runs of it were
    # timed, kb.evidence.estimates uses those instead.
    expected_seconds = {"paper": h100_sweep_seconds(scales["paper"])}
    libraries = ("torch", "transformers", "matplotlib")
    gpu_hours = {"paper": float(round(h100_sweep_seconds(scales["paper"]) / 3600))}

    def preflight(self, params: DepthSweepParams) -> None:
        """Refuse, on a CPU, a sweep an H100 needs over an hour for (``kb verify`` asks for the CPU unless
        told otherwise): at the paper's size that is years of CPU time, so it is not runnable here, at
        once."""
        super().preflight(params)
        if not params.device.startswith("cuda"):
            hours = h100_sweep_seconds(params.model_dump()) / 3600
            if hours > CPU_LIMIT_H100_HOURS:
                raise NotRunnable(
                    f"this sweep trains {len(params.depths)} models of {params.parameter_budget:.3g} "
                    f"parameters, about {hours:,.0f} hours on one H100: beyond a CPU; re-verify "
                    "on a CUDA GPU machine with --device cuda"
                )
