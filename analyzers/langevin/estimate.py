"""How long each stage of a Langevin run will take, from a short timed warm-up of its step on the device in
use.

Before a long run (the ``paper`` preset sets ``estimate_stages``) the pipeline times a few tempering sweeps of
one design shard, a few Adam steps of each model, and a few batched sampler steps of each model's chains (the
GPU path, captured as the run will capture it) or one chain's steps (the CPU path), and reports what the run
commits to: per stage, the step time times the steps the parameters ask for. Training stops early at its ES
and OT criteria, so its figure is a bound (the step caps); sampling counts the sampler's steps only (the
evaluations every ``snapshot_every`` / ``energy_every`` steps come on top).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable

import numpy as np
import torch

from analyzers.langevin import design
from analyzers.langevin.data import Splits, make_splits, masked_loss
from analyzers.langevin.design_parallel import available_cores, shard_plan
from analyzers.langevin.dynamics import PseudoLangevin, ReplicaPseudoLangevin, SamplerConfig
from analyzers.langevin.model import ModelConfig, build_model
from analyzers.langevin.objective import FlatObjective, ReplicaObjective
from analyzers.langevin.spec import LangevinParams
from analyzers.progress import duration_text


def _seconds_per_call(fn: Callable[[], object], calls: int, device: str, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(calls):
        fn()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return (time.perf_counter() - started) / calls


def design_seconds(
    params: LangevinParams, contacts: np.ndarray, composition: np.ndarray, sweeps: int = 20
) -> float:
    """The design's wall time: one shard's sweep time x its sweeps x the shards each core runs in turn."""
    chains = params.design_chains or design.default_chains(params.num_sequences)
    plan = shard_plan(params.num_sequences, chains, params.design_shards)
    size, samples = plan[0]
    levels = len(params.design_temperatures)
    started = time.perf_counter()
    design.simulated_tempering(
        contacts,
        design.interaction_matrix(params.interaction_seed),
        composition,
        1,
        params.design_temperatures,
        sweeps_between=1,
        burn_in_sweeps=sweeps,
        num_chains=size,
        seed=params.seed,
    )
    per_sweep = (time.perf_counter() - started) / (sweeps + 1)
    ticks = math.ceil(samples / max(size / levels, 1.0))  # a tick samples the chains at the lowest level
    workers = params.design_workers or available_cores()
    return per_sweep * (params.design_burn_in_sweeps + params.design_sweeps_between * ticks) * math.ceil(
        len(plan) / workers)


def training_seconds(
    params: LangevinParams, config: ModelConfig, splits: Splits, device: str, steps: int = 5
) -> float:
    """At most: the Adam step's time x every training step cap (ES ensemble, then each reference's ES and
    OT)."""
    model = build_model(config).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    train = splits.train.to(device)
    generator = torch.Generator().manual_seed(0)

    def step() -> None:
        batch = train.subset(torch.randint(len(train), (params.batch_size,), generator=generator))
        loss, _ = masked_loss(model(batch.inputs)["logits"], batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        float(loss.detach())  # the trainer reads its loss every step

    per_step = _seconds_per_call(step, steps, device)
    caps = (params.es_ensemble_size + params.references) * params.max_train_steps
    return per_step * (caps + params.references * params.ot_max_steps)


def sampling_seconds(
    params: LangevinParams, config: ModelConfig, splits: Splits, device: str, steps: int = 5
) -> float:
    """The sampler's steps of one model's chains: batched on a GPU (one step for all its chains, captured as
    the run captures it), one chain at a time over the worker processes on a CPU."""
    chains = len(params.sample_from) * len(params.temperatures)
    train = splits.train.to(device)
    model = build_model(config).to(device)
    temperature = float(params.temperatures[len(params.temperatures) // 2])
    if device.startswith("cuda"):
        objective = ReplicaObjective(
            model,
            train,
            params.sampling_batch_size,
            [torch.Generator(device).manual_seed(i) for i in range(chains)],
        )
        w = objective.weights().expand(chains, -1)
        sampler = ReplicaPseudoLangevin(
            w, objective, torch.ones_like(w) * 1e3, [temperature] * chains,
            [torch.Generator(device).manual_seed(100 + i) for i in range(chains)], None,
            step_capture=params.step_capture,
        )  # fmt: skip
        return _seconds_per_call(sampler.step, steps, device, warmup=3) * params.sampling_steps
    flat = FlatObjective(model, train, params.sampling_batch_size, torch.Generator().manual_seed(0))
    w = flat.weights()
    single = PseudoLangevin(w, flat, torch.ones_like(w) * 1e3, SamplerConfig(temperature), None,
                            torch.Generator().manual_seed(1))  # fmt: skip
    workers = params.workers or os.cpu_count() or 1
    return _seconds_per_call(single.step, steps, device) * params.sampling_steps * math.ceil(chains / workers)


def estimate_stages(
    params: LangevinParams, contacts: np.ndarray, composition: np.ndarray, configs: dict[str, ModelConfig],
    device: str,
) -> dict[str, float]:
    """Seconds per stage (design, then per model: training, relaxation, sampling) of a run of ``params``, from
    a few timed steps of each on ``device`` (random sequences of the run's sizes: a step's time does not
    depend on them)."""
    sizes = (params.train_size, params.val_size, params.test_size)
    sequences = np.random.default_rng(0).integers(0, 20, size=(sum(sizes), len(composition)))
    splits = make_splits(sequences, sizes, params.mask_fraction, params.seed)
    estimates = {} if params.sequences_file else {"design": design_seconds(params, contacts, composition)}
    for name, config in configs.items():
        train = training_seconds(params, config, splits, device)
        estimates[f"training {name}"] = train
        if params.relax_starts:  # a relaxation step is a training step on the sphere
            per_step = train / max(1, (params.es_ensemble_size + params.references) * params.max_train_steps
                                   + params.references * params.ot_max_steps)  # fmt: skip
            estimates[f"relaxing {name}"] = per_step * params.relax_steps * len(params.relax_starts)
        estimates[f"sampling {name}"] = sampling_seconds(params, config, splits, device)
    return estimates


def estimate_text(estimates: dict[str, float]) -> str:
    """'estimated: design 40 s, training transformer <= 2 h, ...; in all <= 3 h'."""
    parts = [f"{stage} {'<= ' if stage.startswith('training') else ''}{duration_text(seconds)}"
             for stage, seconds in estimates.items()]  # fmt: skip
    total = duration_text(sum(estimates.values()))
    return f"estimated time per stage on this device: {', '.join(parts)}; in all <= {total}"


def stage_comparison(estimates: dict[str, float], measured: dict[str, float], reused: list[str]
                     ) -> dict[str, dict[str, float | None]]:
    """Per stage: the estimate made before the run, the time it took, and their ratio (measured / estimated).
    Sampling is compared over all models together (on a CPU their chains share the worker processes, so no
    model's own time exists). A stage reused from the cache has no ratio (its time is a read, not the
    work)."""
    combined = {stage: seconds for stage, seconds in estimates.items() if not stage.startswith("sampling ")}
    sampling = [seconds for stage, seconds in estimates.items() if stage.startswith("sampling ")]
    if sampling:
        combined["sampling"] = sum(sampling)
    rows: dict[str, dict[str, float | None]] = {}
    for stage in dict.fromkeys([*combined, *measured]):
        estimate, took = combined.get(stage), measured.get(stage)
        ratio = took / estimate if estimate and took is not None and not _reused(stage, reused) else None
        rows[stage] = {"estimated_s": estimate, "measured_s": took, "ratio": ratio}
    return rows


def _reused(stage: str, reused: list[str]) -> bool:
    """Whether the pipeline's ``reused`` list ('design', 'training:ffn', 'relaxed:ffn@OT', 'sampling:3/10
    temperatures') says ``stage`` came (wholly or partly) from the cache."""
    kind, _, model = stage.partition(" ")
    prefix = {"design": "design", "training": f"training:{model}", "relaxing": f"relaxed:{model}@",
              "sampling": "sampling:"}.get(kind)  # fmt: skip
    return prefix is not None and any(entry.startswith(prefix) for entry in reused)


def comparison_text(rows: dict[str, dict[str, float | None]]) -> str:
    """'measured time per stage against the estimate: design 41 s / 40 s (1.02x), training transformer 2 min /
    <= 5 min (0.40x), ...' (reused stages say so)."""
    parts = []
    for stage, row in rows.items():
        took, estimate, ratio = row["measured_s"], row["estimated_s"], row["ratio"]
        if took is None:
            continue
        bound = "<= " if stage.startswith("training") else ""
        against = "" if estimate is None else f" / {bound}{duration_text(estimate)}"
        tail = f" ({ratio:.2f}x)" if ratio is not None else (" (reused)" if estimate is not None else "")
        parts.append(f"{stage} {duration_text(took)}{against}{tail}")
    return f"measured time per stage against the estimate: {', '.join(parts)}"
