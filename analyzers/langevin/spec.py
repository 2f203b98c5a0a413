"""What the Langevin analyzers are: parameters and named scales, results, metrics (cheap to import: the
registry loads it for every ``kb`` command; the work is in ``compute``). Three of them share one cached
experiment (``pipeline``):

* ``langevin.sweep``: loss, specific heat and errors against the sampling temperature, transformer vs
  the pooling feed-forward baseline (claims: test error minimal at intermediate T; the feed-forward net's
  sharper specific-heat peak);
* ``langevin.contacts``: the mean attention against the contact map (P@L, the tolerant metric, best
  block, ES vs OT; claim: contacts best at temperatures above the best-learning one);
* ``langevin.similarity``: per-layer similarity q of sampled weights (claim: LayerNorm weights conserved);

and ``langevin.design`` checks the designed sequences alone (seconds).

The field defaults of ``LangevinParams`` are the 'smoke' scale (seconds on a CPU); 'small' runs in minutes
on a CPU and is sized to show the qualitative shape of the claims; 'paper' uses the paper's sizes (Table
A1 models, ~12,000 designed sequences, the authors' sampler defaults) and is meant for a GPU. Values the
paper does not publish are parameters with a stated default (contact cutoff, tempering ladder, metric
thresholds, sampling lengths).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ConfigDict, Field, ValidationInfo, field_validator, model_validator

from analyzers.base import Analyzer, AnalyzerParams, AnalyzerResult, GpuNeed, Resources, metric, operator_only
from analyzers.registry import register

# An RCSB id: four characters, a digit first (2ABD). Checked where a note declares it, not when a run fetches
# it.
PDB_ID_PATTERN = r"^[0-9][A-Za-z0-9]{3}$"

# The tempering ladder (high to low), 8 geometric levels from 2.0 to 0.7, and the protocol that calibrates it
# on 1UBI to the authors' set (identity 0.34, site entropy 1.57 nats on 2ABD): weights adapted for 8,000
# sweeps, then fixed, and every chain at T = 0.7 sampled every 100 sweeps. Two realizations of 1,700 sequences
# gave identity 0.40 and 0.32, entropy 1.42 and 1.65 nats, each with its samples at the level's mean energy
# and no drift between the two halves of the sampling. The landscape is glassy: after 20,000 sweeps of burn-in
# the same ladder gives identity 0.57 and 0.97 nats, so the set is a finite-time design (as the authors' is:
# their consecutive sequences share 0.48 of their sites), its burn-in part of the calibration. So the paper's
# 12,000 come from 1,400 chains, about 8.6 per chain as small's 1,700 from 200, each sampled as briefly:
# identity 0.27 and 0.29, entropy 1.71 and 1.70 nats over two seeds (4 minutes on one core). From 200 chains,
# sampled over 24,900 sweeps, they went deeper: 0.42 and 1.24 nats, 60 near-copies per chain (consecutive
# identity 0.73).
# The smoke scale keeps the ladder with a short burn-in (seconds, not calibrated).
# how the sampler sets its masses (chains.py): the paper's three, and the low-rank noise term of
# mass_matrix.py
MASS_RULES = ("per-weight", "per-layer", "uniform", "noise-covariance")
DEFAULT_LADDER: tuple[float, ...] = (2.0, 1.7215, 1.4817, 1.2754, 1.0977, 0.9449, 0.8133, 0.7)
CALIBRATED_BURN_IN = 8000
CALIBRATED_SWEEPS_BETWEEN = 100
CALIBRATED_CHAINS = 200  # for 1,700-2,000 sequences
PAPER_DESIGN_CHAINS = 1400  # for 12,000: as many sequences per chain as small's


def default_cache(kind: str, given: str | None, cache_dir: Path | None = None) -> Path:
    """``given`` (an operator's parameter), else ``kind`` under the run context's cache folder, else under the
    per-user cache ``~/.cache/kb`` (analyzers read no kb environment: the KB home comes in the RunContext)."""
    if given:
        return Path(given).expanduser()
    return (cache_dir if cache_dir is not None else Path("~/.cache/kb").expanduser()) / kind


def _positive_temperatures(values: list[float]) -> list[float]:
    bad = [t for t in values if not t > 0]
    if bad:
        raise ValueError(f"temperatures must be > 0, got {bad}")
    return values


class LangevinParams(AnalyzerParams):
    """Everything the Langevin experiment needs (defaults = the 'smoke' scale)."""

    # structure
    structure_file: str | None = operator_only(
        default=None,
        description="PDB/mmCIF file; default: the shipped PDB 1UBI (ubiquitin, not 2ABD). Operator "
        "only (reads a path).",
    )
    sequences_file: str | None = operator_only(
        default=None,
        description="FASTA or one sequence per line, replacing the design: each sequence must have the "
        "structure's length and only the 20 amino acids. Operator only (reads a path).",
    )
    pdb_id: str | None = Field(default=None, pattern=PDB_ID_PATTERN,
                               description="RCSB id to download (online only, cached), e.g. '2ABD'.")
    cache_dir: str | None = operator_only(
        default=None,
        description="Downloaded structures (default: pdb/ in the run's cache folder, else ~/.cache/kb/pdb). "
        "Operator only.",
    )
    chain: str | None = Field(
        default=None, description="Chain id; default: the first chain with amino acids."
    )
    model_index: int = Field(
        default=1, ge=1, description="Model of an NMR ensemble (1-based; the paper: model 1)."
    )
    cutoff: float = Field(
        default=4.5, gt=0, description="Heavy-atom contact cutoff in A (not published; 4.5 usual)."
    )
    sequence: str | None = Field(
        default=None, description="Composition for the design; default: the structure's sequence."
    )
    design_min_separation: int = Field(
        default=1, ge=1, description="Design energy uses contacts with |i-j| >= this."
    )
    # design
    num_sequences: int = Field(default=240, ge=10, description="Designed sequences (authors: 11,989).")
    interaction_seed: int = Field(default=0, description="Seed of the random 20x20 interaction matrix B.")
    design_temperatures: list[float] = Field(
        default=list(DEFAULT_LADDER),
        min_length=2,
        description="Simulated-tempering ladder; samples at the lowest.",
    )
    design_burn_in_sweeps: int = Field(
        default=40, ge=0, description="Tempering sweeps before sampling starts."
    )
    design_sweeps_between: int = Field(default=10, ge=1, description="Sweeps between two sampling ticks.")
    design_chains: int | None = Field(
        default=None, ge=1, description="Tempering chains (default: about n / 3)."
    )
    design_shards: int = Field(
        default=1,
        ge=1,
        description="Independent tempering runs the design's chains split into, to run on "
        "several cores (design_parallel); the sequences depend on it, never on the cores.",
    )
    design_workers: int = Field(
        default=0,
        ge=0,
        description="Processes that run the design's shards (0: one per available core); the "
        "sequences are the same for any number.",
    )
    # data
    train_size: int = Field(default=120, ge=1, description="Training sequences (authors: 1000).")
    val_size: int = Field(
        default=40, ge=0, description="Validation sequences (authors' feed-forward template: 1000)."
    )
    test_size: int = Field(default=80, ge=1, description="Test sequences.")
    mask_fraction: float = Field(default=0.15, gt=0, lt=1, description="Sites masked once per sequence.")
    # models
    embed_dim: int = Field(default=8, ge=2, description="Transformer d (Table A1: 26, 64, 14, 64).")
    hidden_dim: int = Field(default=32, ge=2, description="Transformer FFN width m (Table A1: 4d).")
    num_layers: int = Field(default=1, ge=1, description="Transformer blocks (Table A1: 1 or 4).")
    dropout: float = Field(default=0.1, ge=0, lt=1, description="Training dropout (paper: 0.1).")
    include_ffn: bool = Field(
        default=True, description="Also train and sample the pooling feed-forward baseline."
    )
    ffn_embed_dim: int = Field(default=8, ge=2, description="Feed-forward d (Table A1: 64).")
    ffn_hidden_dim: int = Field(default=40, ge=2, description="Feed-forward m (Table A1: 320).")
    # training
    batch_size: int = Field(default=32, ge=1, description="Training minibatch (authors: 64).")
    warmup: int = Field(default=20, ge=1, description="Noam warm-up steps (paper: 4000).")
    lr_scale: float = Field(default=1.0, gt=0, description="Multiplies the Noam learning rate.")
    max_train_steps: int = Field(default=150, ge=1, description="Step limit of each training run and stage.")
    eval_every: int = Field(default=10, ge=1, description="Steps between validation checks while training.")
    patience: int = Field(
        default=3, ge=1, description="Evaluations without a better validation loss (ES ensemble)."
    )
    es_ensemble_size: int = Field(
        default=1, ge=1, description="Early-stopped runs whose mean |w|^2 is the ES target."
    )
    references: int = Field(
        default=3,
        ge=1,
        description="ES/OT reference runs per architecture (seeds seed..seed+n-1; the paper's error "
        "bars come from three); sampling starts from the first.",
    )
    ot_max_steps: int = Field(
        default=60, ge=1, description="Extra steps after ES while training has not saturated."
    )
    saturation_tolerance: float = Field(
        default=0.01, gt=0, description="OT: relative train-loss change to stop."
    )
    # sampling
    temperatures: list[float] = Field(
        default=[1e-5, 1e-4, 1e-3], min_length=1, description="Sampling temperatures (loss units, > 0)."
    )
    sampler: str = Field(
        default="pseudo-langevin", description="pseudo-langevin (constrained), unconstrained or sgld."
    )
    sample_from: list[str] = Field(
        default=["ES"], description="Starting weights to sample from: ES and/or OT."
    )
    relax_starts: list[str] = Field(
        default=[],
        description="Starts (ES, OT) relaxed onto a nearby minimum of the training loss on the ES sphere "
        "before sampling (projected Adam, train.relax_on_sphere): a start from below the low-T equilibrium, "
        "where the unrelaxed weights approach it from above. Empty: the paper's starts as they are.",
    )
    relax_steps: int = Field(default=200, ge=1, description="Projected-Adam steps of a relaxed start.")
    relax_lr: float = Field(
        default=2e-3, gt=0, description="Peak learning rate of the relaxation (cosine to 0)."
    )
    sampling_steps: int = Field(default=40, ge=2, description="Sampler steps per temperature.")
    burn_in_fraction: float = Field(
        default=0.5, ge=0, lt=1, description="Share of steps left out of the averages."
    )
    sampling_batch_size: int = Field(default=32, ge=1, description="Sampler minibatch (authors: 64-128).")
    dt: float = Field(
        default=1.0, gt=0, description="Sampler time step (authors: 1; cancels out of the mass rule)."
    )
    m1: float = Field(default=0.1, gt=0, lt=1, description="Friction: c1 = sqrt(1 - m1^2) (authors: 0.1).")
    r: float = Field(
        default=0.5,
        gt=0,
        lt=1,
        description="Share of the thermostat noise supplied by the minibatch noise (authors' default 1e-2).",
    )
    noise: str = Field(
        default="minibatch",
        description="minibatch: a fresh minibatch gradient per step supplies the share r of the noise (the "
        "paper); full_batch: gradients of the whole training split and white noise for all of it (at T "
        "along every direction by construction; ~train_size / sampling_batch_size times the cost per step).",
    )
    mass_rule: str = Field(
        default="per-weight",
        description="per-weight (paper), per-layer or uniform masses, or noise-covariance: per-weight plus "
        "a low-rank term along the minibatch noise (exact, from per-sequence gradients), so r needs no cap.",
    )
    variance_floor: float = Field(
        default=1e-3, gt=0, le=1, description="Gradient variance floor, x its median."
    )
    max_step_ratio: float = Field(
        default=0.02, gt=0, description="Guard: thermal step / (|w| cos a) kept below this."
    )
    variance_batches: int = Field(default=4, ge=2, description="Minibatches per gradient-variance estimate.")
    variance_every: int = Field(
        default=20, ge=1, description="Steps between variance (and mass) re-estimates."
    )
    fixman: bool = Field(
        default=True, description="Remove the M-metric surface bias of the constrained sampler."
    )
    sgld_step_size: float = Field(default=1e-4, gt=0, description="Step size of the plain SGLD baseline.")
    snapshot_every: int = Field(
        default=10, ge=1, description="Steps between full evaluations (errors, attention)."
    )
    energy_every: int = Field(
        default=5, ge=1, description="Steps between full training losses (mean loss and C)."
    )
    weights_every: int = Field(default=10, ge=1, description="Steps between weight snapshots (similarity q).")
    checkpoint_every: int = Field(default=20, ge=1, description="Steps between sampler checkpoints (resume).")
    workers: int = Field(
        default=1, ge=0, description="Processes for the temperatures on CPU (0: one per core)."
    )
    threads: int = Field(default=1, ge=0, description="Torch CPU threads per process (0: torch's default).")
    estimate_stages: bool = Field(
        default=False,
        description="Before starting, time a few steps of each stage on the device and report the "
        "estimated time per stage (the paper preset: hours on a GPU).",
    )
    step_capture: str = Field(
        default="auto",
        description="How the GPU's batched sampler step runs: auto (a CUDA graph on CUDA), none "
        "(eager), graph (torch.cuda.CUDAGraph) or compile (torch.compile reduce-overhead). The CPU runs it "
        "eagerly.",
    )
    # contacts
    attention_layer: int | None = Field(
        default=None, description="Block compared with contacts; None: the best."
    )
    p_at_l_min_separation: int = Field(
        default=1,
        ge=1,
        description="P@L ranks pairs with |i-j| >= this (paper Sect. III.3: every off-diagonal pair).",
    )
    tolerance_min_separation: int = Field(
        default=6, ge=0, description="Tolerant metric: pairs with |i-j| > this."
    )
    tolerance_delta: int = Field(
        default=1, ge=0, description="Tolerant metric: a hit within Delta of a contact."
    )
    chance_permutations: int = Field(
        default=1000,
        ge=19,
        description="Shuffled contact maps of the chance test (one rule, every contact verdict).",
    )
    significance: float = Field(
        default=0.05, gt=0, lt=1, description="Level a chance test must pass (Bonferroni over temperatures)."
    )
    # bookkeeping
    work_dir: str | None = operator_only(
        default=None,
        description="Cache of designed data, trained weights and sampler checkpoints (reused and resumed); "
        "default: langevin/ in the run's cache folder (the KB home's cache), else ~/.cache/kb/langevin. "
        "Sampler checkpoints go to the run's checkpoint folder when it has one (resumed on any node). "
        "Operator only.",
    )

    _validate_temperatures = field_validator("temperatures", "design_temperatures")(_positive_temperatures)

    @field_validator("sample_from", "relax_starts")
    @classmethod
    def _starts(cls, values: list[str], info: ValidationInfo) -> list[str]:
        unknown = sorted(set(values) - {"ES", "OT"})
        if unknown or (not values and info.field_name == "sample_from"):
            raise ValueError(f"{info.field_name} takes ES and/or OT, got {values}")
        return values

    @field_validator("sampler")
    @classmethod
    def _sampler(cls, value: str) -> str:
        if value not in ("pseudo-langevin", "unconstrained", "sgld"):
            raise ValueError(f"sampler must be pseudo-langevin, unconstrained or sgld, got {value!r}")
        return value

    @field_validator("step_capture")
    @classmethod
    def _step_capture(cls, value: str) -> str:
        # integrator.STEP_CAPTURES (torch-free import here)
        if value not in ("auto", "none", "graph", "compile"):
            raise ValueError(f"step_capture must be auto, none, graph or compile, got {value!r}")
        return value

    @field_validator("noise")
    @classmethod
    def _noise(cls, value: str) -> str:
        if value not in ("minibatch", "full_batch"):
            raise ValueError(f"noise must be minibatch or full_batch, got {value!r}")
        return value

    @field_validator("mass_rule")
    @classmethod
    def _mass_rule(cls, value: str) -> str:
        if value not in MASS_RULES:
            raise ValueError(f"mass_rule must be one of {', '.join(MASS_RULES)}, got {value!r}")
        return value

    @model_validator(mode="after")
    def _sizes(self) -> LangevinParams:
        if not self.sequences_file and self.train_size + self.val_size + self.test_size > self.num_sequences:
            raise ValueError(
                f"train_size + val_size + test_size = {self.train_size + self.val_size + self.test_size} "
                f"exceeds num_sequences = {self.num_sequences}"
            )
        if self.structure_file and self.pdb_id:
            raise ValueError("give either structure_file or pdb_id, not both")
        return self


SMALL: dict[str, Any] = {
    # Sized to try one claim on 2 CPU cores (measured from a fresh cache: 26 minutes, 15 of them sampling; a
    # rerun reuses every stage): is the test error of Table A1's
    # one-block d=64 transformer (44,245 parameters) minimal at an intermediate temperature, and the
    # feed-forward net's (d=32, m=160: 45,877 parameters, the same size) not? 1,000 training sequences as in
    # the authors' transformer template, three ES/OT reference seeds per model for the error bars, and chains
    # from ES and from OT (scaled onto the ES sphere) at every temperature, so that R-hat compares two starts.
    "num_sequences": 1700,
    "design_burn_in_sweeps": CALIBRATED_BURN_IN,
    "design_sweeps_between": CALIBRATED_SWEEPS_BETWEEN,
    "design_chains": CALIBRATED_CHAINS,
    # One run, as before (its design cache key unchanged): a sweep's cost is mostly numpy's per-call overhead,
    # so 8 shards of 25 chains were ~1.4x faster on 16 cores but ~3x slower on the 2 cores `small` is meant
    # for.
    "design_shards": 1,
    "train_size": 1000,
    "val_size": 200,
    "test_size": 500,
    "embed_dim": 64,
    "hidden_dim": 256,
    "ffn_embed_dim": 32,
    "ffn_hidden_dim": 160,
    "batch_size": 64,
    "warmup": 400,
    "max_train_steps": 3000,
    "eval_every": 100,
    "patience": 3,
    "es_ensemble_size": 1,
    "references": 3,
    "ot_max_steps": 800,
    "temperatures": [1e-5, 3e-5, 1e-4, 3e-4, 1e-3],
    "sample_from": ["ES", "OT"],
    # the OT start relaxed onto a nearby minimum on the ES sphere: at low T the ES chain comes down from above
    # (0.49) and this one up from below (0.106), so a temperature reads equilibrated only if they meet; chains
    # from two relaxed starts reached separate plateaus (0.149 and 0.117 at T = 1e-5: two basins, each chain
    # flat)
    "relax_starts": ["OT"],
    "relax_steps": 1500,
    "relax_lr": 2e-3,
    # masses with the minibatch noise's low-rank term (exact, from the 1,000 per-sequence gradients): the
    # noise is at the authors' share r along every direction, where per-weight masses needed r ~ 4e-5 and
    # barely moved
    "mass_rule": "noise-covariance",
    "r": 0.01,
    # 1,500 steps keep the whole run under 30 minutes; at 2,500 (40 minutes) every chain drifted as well
    "sampling_steps": 1500,
    "sampling_batch_size": 64,
    "variance_batches": 20,
    "variance_every": 750,
    "snapshot_every": 150,
    # 50 draws of the loss per chain after burn-in: 'equilibrated' (R-hat < 1.1 and bulk ESS >= 25 over the
    # two starts) then passes 1.00 of the time on independent draws, against 0.90 with 25 (energy_every 30;
    # the README's power table); 50 more full training losses per chain cost about 1/6 more sampling time
    "energy_every": 15,
    "weights_every": 75,
    "checkpoint_every": 500,
    "workers": 0,
    "threads": 2,
}
PAPER: dict[str, Any] = {
    "num_sequences": 12000,
    "design_burn_in_sweeps": CALIBRATED_BURN_IN,
    "design_sweeps_between": CALIBRATED_SWEEPS_BETWEEN,
    "design_chains": PAPER_DESIGN_CHAINS,
    "design_shards": 16,  # 87-88 chains each, one per core of a 16-core node
    "train_size": 1000,
    "val_size": 1000,
    "test_size": 9989,
    "embed_dim": 64,  # Table A1: 4 blocks, d=64, m=256 (168,853 parameters)
    "hidden_dim": 256,
    "num_layers": 4,
    "ffn_embed_dim": 64,  # Table A1: d=64, m=320 (173,653 parameters)
    "ffn_hidden_dim": 320,
    "batch_size": 64,
    "warmup": 4000,
    "max_train_steps": 200_000,
    "eval_every": 500,
    "patience": 10,
    "es_ensemble_size": 5,
    "references": 3,
    "ot_max_steps": 200_000,
    "temperatures": [1e-7, 3e-7, 1e-6, 3e-6, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3],
    "sample_from": ["ES", "OT"],
    "sampling_steps": 200_000,
    "sampling_batch_size": 128,
    "r": 0.01,  # the authors' default
    "variance_batches": 500,
    "variance_every": 5000,
    "snapshot_every": 1000,
    "energy_every": 200,
    "weights_every": 2000,
    "checkpoint_every": 5000,
    "device": "cuda",
    "workers": 1,
    "estimate_stages": True,  # a GPU user sees what each stage costs before committing to hours
}
SCALES: dict[str, dict[str, Any]] = {"smoke": {}, "small": SMALL, "paper": PAPER}
# Seconds one run took on the project's 2-core machine from a fresh cache: small 26 minutes on 2 free cores
# (README, Known limit); each of the demo's three took about 25 minutes with other work beside it.
EXPECTED_SECONDS: dict[str, float] = {"small": 1560.0}


# What the metrics read off sampled temperatures rest on (checks.py states and tests each one per result).
CURVE = ("learned", "equilibrated", "thermalized")
CONTACTS = ("learned", "beats chance", "equilibrated", "thermalized")
SIMILARITY = ("learned", "resolved", "equilibrated", "thermalized")


class SweepResult(AnalyzerResult):
    """Loss, specific heat and errors against sampling temperature, transformer vs feed-forward."""

    model_config = ConfigDict(ser_json_inf_nan="constants")  # NaN (not computable) stays NaN in JSON

    temperatures: list[float] = metric(description="the sampling temperatures", exact=True)
    start: str = Field(description="Weights the sampling started from (ES or OT).")
    mean_loss_by_temperature: dict[str, list[float]] = Field(description="Mean full training loss per model.")
    specific_heat_by_temperature: dict[str, list[float]] = Field(description="C = var(L)/T^2 per model.")
    train_error_by_temperature: dict[str, list[float]] = Field(description="Mean training error per model.")
    validation_error_by_temperature: dict[str, list[float]] = Field(
        description="Mean validation error per model."
    )
    test_errors_by_model: dict[str, list[float]] = Field(
        description="Mean test error per model and temperature."
    )
    test_error_std_by_model: dict[str, list[float]] = Field(
        default_factory=dict,
        description="Per model and temperature: std of the test error over the snapshots.",
    )
    test_error_by_start: dict[str, dict[str, list[float]]] = Field(
        default_factory=dict,
        description="Per model and start (ES, OT): the test error of that start's chain per "
        "temperature (where the starts disagree, their spread is the error bar a single chain hides).",
    )
    test_error_by_temperature: list[float] = metric(
        description="transformer test error per temperature (mean of per-sequence errors, Eq. 29-30)",
        uncertainty="snapshots", rests_on=CURVE,
    )
    test_error_min_is_interior: bool = metric(
        description="True when the transformer's lowest test error is at neither end of the list",
        uncertainty="locations", rests_on=CURVE,
    )
    test_error_min_is_interior_by_model: dict[str, bool] = metric(
        default_factory=dict,
        description="per model: the lowest test error is at neither end of the temperatures",
        uncertainty="locations",
        rests_on=CURVE,
    )
    best_test_error_minus_es: float = metric(
        description="transformer: lowest sampled test error minus the ES references' mean (negative: "
                    "sampling helps)",
        uncertainty="snapshots",
        rests_on=CURVE,
    )
    best_test_error_minus_es_by_model: dict[str, float] = metric(
        default_factory=dict,
        description="per model: lowest sampled test error minus the ES references' mean",
        uncertainty="snapshots",
        rests_on=CURVE,
    )
    reference_test_errors: dict[str, dict[str, list[float]]] = Field(
        default_factory=dict,
        description="Per model: test errors of the ES and OT weights of each reference seed.",
    )
    validation_selected_temperature: float = Field(
        description="Transformer: T of the lowest validation error."
    )
    peak_temperature: dict[str, float] = metric(
        description="temperature of the specific-heat peak per model", uncertainty="locations", rests_on=CURVE
    )
    normalized_temperatures: dict[str, list[float]] = Field(description="T / T(peak C) per model.")
    specific_heat_peak_ratio_ffn_over_transformer: float | None = metric(
        description="peakedness (max C / mean C) ffn over transformer",
        uncertainty="snapshots",
        rests_on=CURVE,
    )
    loss_jump_ratio_ffn_over_transformer: float | None = metric(
        description="largest loss rise between neighbouring T, ffn over transformer", uncertainty="snapshots",
        rests_on=CURVE,
    )
    max_norm_drift: float = metric(
        description="largest deviation of |w|^2 from its constraint while sampling (this run's own, exact)",
        exact=True,
    )
    equilibrated_by_temperature: dict[str, list[bool]] = Field(
        description="Per model: no significant drift of the training loss across the averaging window."
    )
    loss_drift_by_temperature: dict[str, list[float]] = Field(
        description="Per model: mean loss of the last minus the first quarter of the averaging window."
    )
    thermostat_by_temperature: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict,
        description="Per model and temperature: minibatch share r used (capped so the worst noise direction "
        "stays within 5% of T, the same at every T), amplification of the top minibatch-noise directions, "
        "kinetic temperature on average and along those directions, and whether every direction is within "
        "20% of T.",
    )
    thermalized_by_temperature: dict[str, list[bool]] = Field(
        default_factory=dict,
        description="Per model and temperature: at T, i.e. no leading minibatch-noise direction has a "
        "kinetic temperature off by more than 20% beyond twice its standard error, and twice that error is "
        "within 20% (else off T or unresolved: a failed or unresolved precondition of the metrics that read "
        "that temperature).",
    )
    convergence_by_temperature: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict,
        description="Per model and temperature: rank-normalized split-R-hat (Vehtari et al. 2021) of the "
        "full training loss after burn-in over the chains from each start (ES, OT), the classic "
        "split-R-hat, the ESS (Geyer's initial monotone sequence), ESS per second, the chains compared; "
        "R-hat >= 1.1 is not equilibrated. state: equilibrated, metastable (each chain stationary, the "
        "starts apart) or relaxing (a chain drifts), with each chain's own split-R-hat and mean loss.",
    )
    trained: dict[str, dict[str, dict[str, float]]] = Field(description="ES / OT metrics per model.")
    design: dict[str, Any] = Field(
        description="Designed-sequence diagnostics (acceptance, identity, energies)."
    )


class ContactsResult(AnalyzerResult):
    """Mean attention against the contact map along the temperatures, and ES vs OT."""

    model_config = ConfigDict(ser_json_inf_nan="constants")

    temperatures: list[float] = Field(description="Sampling temperatures.")
    p_at_l_by_temperature: list[float] = metric(
        description="P@L (L = sequence length) of the best block's mean attention per temperature",
        uncertainty="pairs", rests_on=CONTACTS,
    )
    tolerance_precision_by_temperature: list[float] = metric(
        description="tolerant precision (separation, Delta) per temperature", uncertainty="pairs",
        rests_on=CONTACTS,
    )
    best_block_by_temperature: list[int] = Field(description="Block whose attention matched best (0-based).")
    test_error_by_temperature: list[float] = Field(
        description="Transformer masked test error per temperature."
    )
    best_contact_temperature_over_best_error_temperature: float = metric(
        description="T(best tolerant precision) / T(lowest test error)", uncertainty="locations",
        rests_on=CONTACTS,
    )
    best_p_at_l_temperature_over_best_error_temperature: float = metric(
        description="T(best P@L) / T(lowest test error)", uncertainty="locations",
        rests_on=CONTACTS,
    )
    trained_scores: dict[str, dict[str, float]] = Field(
        description="ES / OT: P@L and tolerant precision (best block)."
    )
    ot_minus_es_tolerance_precision: float = metric(
        description="tolerant precision of the OT weights minus the ES weights'", uncertainty="pairs",
        rests_on=("learned", "beats chance"),
    )
    ot_minus_es_p_at_l: float = metric(
        description="P@L of the OT weights minus the ES weights'", uncertainty="pairs",
        rests_on=("learned", "beats chance"),
    )
    rule: str = Field(description="The pair-selection rules of the metrics.")
    chance_by_temperature: list[dict[str, dict[str, float]]] = metric(
        default_factory=list,
        description="per temperature and metric (p_at_l, tolerance_precision): precision, chance level "
        "(mean over contact maps shuffled within each sequence separation) and one-sided p-value",
        uncertainty="permutations",
        rests_on=("learned",),
    )
    trained_chance: dict[str, dict[str, dict[str, float]]] = Field(
        default_factory=dict, description="The same chance test for the ES and OT weights' attention."
    )


class SimilarityResult(AnalyzerResult):
    """Per-layer similarity q between sampled weight vectors at one temperature."""

    model_config = ConfigDict(ser_json_inf_nan="constants")

    temperature_by_model: dict[str, float] = Field(
        description="T analysed per model (lowest mean test error)."
    )
    mean_q_by_layer: dict[str, dict[str, float]] = metric(
        description="mean q per model and layer", uncertainty="snapshots",
        rests_on=SIMILARITY,
    )
    normalization_mean_q: dict[str, float] = metric(
        description="mean q of LayerNorm weights per model", uncertainty="snapshots",
        rests_on=SIMILARITY,
    )
    other_mean_q: dict[str, float] = Field(description="Mean q of all other layers per model.")
    normalization_q_minus_other_q: float = metric(
        description="transformer: mean q of LayerNorm weights minus that of the other layers",
        uncertainty="snapshots", rests_on=SIMILARITY,
    )
    snapshots: dict[str, int] = Field(description="Weight snapshots compared per model.")


RUN_SETUP_FIELDS = frozenset({"device", "work_dir", "workers", "cache_dir"})


def pipeline_stages(analyzer: Analyzer[Any, Any], params: LangevinParams) -> frozenset[str]:
    """``Analyzer.cached_stages`` of every analyzer of the shared experiment: the design, training and samples
    of each model it trains (the transformer; the FFN too with ``include_ffn``), named by the parameters they
    depend on (all but where files go). Claims on the sweep, the contacts and the similarity at one preset
    share them: the pipeline caches each stage by what it depends on, so only the first run builds them."""
    shared = params.model_dump(mode="json", include=set(LangevinParams.model_fields),
                               exclude={"work_dir", "cache_dir", "workers", "include_ffn"})
    base = json.dumps(shared, sort_keys=True)
    return frozenset(f"langevin {model}: {base}" for model in ("transformer", "ffn")
                     if model == "transformer" or params.include_ffn)


class SweepParams(LangevinParams):
    """``langevin.sweep`` parameters (the shared experiment's)."""


class ContactsParams(LangevinParams):
    """``langevin.contacts`` parameters; the feed-forward baseline is not needed."""

    include_ffn: bool = Field(default=False, description="Also train and sample the feed-forward baseline.")


class SimilarityParams(LangevinParams):
    """``langevin.similarity`` parameters (the shared experiment's)."""


def _contacts_scales() -> dict[str, dict[str, Any]]:
    return {name: {**preset, "include_ffn": False} for name, preset in SCALES.items()}


@register
class LangevinSweep(Analyzer[SweepParams, SweepResult]):
    """Sample trained masked LMs at several temperatures on the norm sphere; loss, C and errors vs T."""

    name = "langevin.sweep"
    summary = (
        "Loss, specific heat and train/validation/test error vs pseudo-Langevin temperature "
        "(transformer vs FFN)."
    )
    # 9: the thermostat check pools every coordinate (power both ways); small's energy every 15 steps
    version = "9"
    # rough: 36 chains x 200,000 steps at the analyzer loop's 675 chain-steps/s measured on one H100 (issue
    # 37) is 3 hours, plus 12 reference trainings and the design
    gpu_hours = {"paper": 4.0}
    Params = SweepParams
    Result = SweepResult
    compute = "analyzers.langevin.compute:sweep"
    resources = Resources(gpu=GpuNeed.recommended, memory_gb=2.0)
    scales = SCALES
    scale_ignored_fields = RUN_SETUP_FIELDS
    expected_seconds = EXPECTED_SECONDS
    libraries = ("torch", "matplotlib")
    cached_stages = pipeline_stages



@register
class LangevinContacts(Analyzer[ContactsParams, ContactsResult]):
    """Compare the symmetrized mean attention of sampled transformers with the contact map, per
    temperature."""

    name = "langevin.contacts"
    summary = "P@L and the tolerant precision of mean attention vs contacts per temperature; ES vs OT."
    # 9: the thermostat check pools every coordinate (power both ways); small's energy every 15 steps
    version = "9"
    Params = ContactsParams
    Result = ContactsResult
    compute = "analyzers.langevin.compute:contacts"
    resources = Resources(gpu=GpuNeed.recommended, memory_gb=2.0)
    scales = _contacts_scales()
    scale_ignored_fields = RUN_SETUP_FIELDS
    expected_seconds = EXPECTED_SECONDS
    libraries = ("torch", "matplotlib")
    cached_stages = pipeline_stages



@register
class LangevinSimilarity(Analyzer[SimilarityParams, SimilarityResult]):
    """Per-layer similarity q between weight vectors sampled at the best temperature."""

    name = "langevin.similarity"
    summary = "Distribution of the per-layer similarity q of sampled weights; LayerNorm vs other layers."
    # 8: the thermostat check pools every coordinate (power both ways); small's energy every 15 steps
    version = "8"
    Params = SimilarityParams
    Result = SimilarityResult
    compute = "analyzers.langevin.compute:similarity"
    resources = Resources(gpu=GpuNeed.recommended, memory_gb=2.0)
    scales = SCALES
    scale_ignored_fields = RUN_SETUP_FIELDS
    expected_seconds = EXPECTED_SECONDS
    libraries = ("torch", "matplotlib")
    cached_stages = pipeline_stages



# -- sequence design alone -----------------------------------------------------------------------------
class DesignParams(AnalyzerParams):
    """``langevin.design`` parameters: the structure and the simulated tempering."""

    structure_file: str | None = operator_only(description="PDB/mmCIF file; default: the shipped PDB 1UBI.")
    pdb_id: str | None = Field(default=None, pattern=PDB_ID_PATTERN,
                               description="RCSB id to download (online only, cached), e.g. '2ABD'.")
    cache_dir: str | None = operator_only(description="Downloaded structures (default: <KB_HOME>/cache/pdb).")
    chain: str | None = Field(
        default=None, description="Chain id; default: the first chain with amino acids."
    )
    model_index: int = Field(default=1, ge=1, description="Model of an NMR ensemble (1-based).")
    cutoff: float = Field(default=4.5, gt=0, description="Heavy-atom contact cutoff in A.")
    design_min_separation: int = Field(
        default=1, ge=1, description="Design energy uses contacts with |i-j| >= this."
    )
    sequence: str | None = Field(default=None, description="Composition; default: the structure's sequence.")
    num_sequences: int = Field(default=600, ge=2, description="Sequences to design (authors: 11,989).")
    interaction_seed: int = Field(default=0, description="Seed of the random 20x20 interaction matrix B.")
    design_temperatures: list[float] = Field(default=list(DEFAULT_LADDER), min_length=2)
    design_burn_in_sweeps: int = Field(
        default=CALIBRATED_BURN_IN,
        ge=0,
        description="Tempering sweeps while the weights adapt, before sampling.",
    )
    design_sweeps_between: int = Field(
        default=CALIBRATED_SWEEPS_BETWEEN, ge=1, description="Sweeps between ticks."
    )
    num_chains: int | None = Field(default=CALIBRATED_CHAINS, ge=1, description="Tempering chains.")


class DesignResult(AnalyzerResult):
    """Diagnostics of the designed sequences."""

    num_sequences: int = Field(description="Sequences designed.")
    temperatures: list[float] = Field(description="Tempering ladder, high to low.")
    mean_energy_by_temperature: list[float] = Field(description="Mean energy per tempering temperature.")
    acceptance_swap_by_temperature: list[float] = Field(description="Swap acceptance per temperature.")
    acceptance_temperature_moves: float = Field(description="Accepted share of temperature moves.")
    # The set's own statistics are exact: computed over every sequence this run designed (a property of the
    # set)
    energy_decreases_with_temperature: bool = metric(
        description="True when the mean energy falls at every lower tempering temperature", exact=True
    )
    composition_exact: bool = metric(
        description="True when every sequence keeps the native composition", exact=True
    )
    mean_pairwise_identity: float = metric(
        description="mean identity between designed sequences (authors: about 0.34)", exact=True
    )
    site_entropy: float = metric(
        description="mean per-site entropy of the designed sequences, nats (authors: 1.57)", exact=True
    )
    samples_equilibrated: bool = metric(
        default=False,
        description="True when the samples' mean energy matches the lowest level's within 3 SE",
        uncertainty="sequences",
    )
    sample_minus_level_energy: float = Field(
        default=float("nan"), description="Samples' mean energy minus the lowest level's mean energy."
    )
    samples_stationary: bool = metric(
        default=False,
        description="True when the samples' mean energy is the same in both halves of the sampling",
        uncertainty="sequences",
    )
    consecutive_identity: float = Field(description="Identity of consecutive samples of one chain.")
    sequences_per_second: float = metric(
        description="throughput of the vectorized tempering (this run's)", exact=True
    )
    mean_sample_energy: float = Field(description="Mean energy of the sampled sequences.")


@register
class LangevinDesign(Analyzer[DesignParams, DesignResult]):
    """Design sequences on a contact map by adaptive simulated tempering and report their diagnostics."""

    name = "langevin.design"
    summary = "Designed sequences by vectorized adaptive simulated tempering: energies, acceptance, identity."
    version = "5"  # checks: the set's statistics exact (4: paper: 12,000 sequences from 1,400 chains)
    Params = DesignParams
    Result = DesignResult
    compute = "analyzers.langevin.compute:design"
    libraries = ("torch",)
    resources = Resources(gpu=GpuNeed.none, memory_gb=1.0)
    scales: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {"num_sequences": 600},
        "small": {"num_sequences": 2000},
        "paper": {"num_sequences": 12000, "num_chains": PAPER_DESIGN_CHAINS},
    }
