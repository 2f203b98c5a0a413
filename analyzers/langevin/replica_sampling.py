"""Every chain of one model (each start at each temperature) sampled as batched replicas (one model call per
step for all of them, ``replicas.py``; the step captured in a CUDA graph on a GPU, ``batched_step``), with the
records, checkpoints and thermostat checks of ``sampling.run_temperature``. What a chain records along the way
stays on the device (minibatch losses, kinetic sums, SHAKE failures, the full training loss every
``energy_every`` steps) and is read at the snapshots.

Each temperature keeps its own checkpoint file, in the single-temperature format (its replica's sampler
state, its two generators, its records), so a run started on a GPU can be resumed there or one temperature
at a time on a CPU, and a finished temperature is reused by either path. The replicas advance in lockstep:
temperatures whose checkpoints stand at different steps (left by the single-temperature path) are finished
one at a time instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from analyzers.base import Cancelled
from analyzers.langevin.batched_step import resolve_capture
from analyzers.langevin.mass_matrix import MassMatrix, NoiseSpectrum
from analyzers.langevin.model import build_model
from analyzers.langevin.objective import FlatObjective
from analyzers.langevin.replicas import ReplicaObjective, ReplicaPseudoLangevin
from analyzers.langevin.sampling import (
    KINETIC_EVERY,
    NOISE_MODES,
    TemperatureTask,
    _layer_slices,
    _masses,
    _snapshot,
    chain_seed,
    close_kinetic_block,
    exact_noise,
    finished_state,
    gradient_noise,
    noise_setup,
    read_checkpoint,
    run_temperature,
    thermostat_report,
)
from analyzers.langevin.store import save_plain


@dataclass
class _Replica:
    """One replica's weights, seen as a sampler by the snapshot code."""

    w: torch.Tensor  # (n,)


def _finished(task: TemperatureTask) -> dict[str, Any] | None:
    for path in dict.fromkeys((task.finished_path, task.checkpoint)):
        stored = read_checkpoint(path)
        if stored is not None and stored.get("done"):
            if path != task.finished_path:
                save_plain(stored, task.finished_path)
            return dict(stored["records"])
    return None


def run_replicas(
    tasks: list[TemperatureTask],
    progress: Callable[[int, int], None] = lambda done, total: None,
    should_stop: Callable[[], bool] = lambda: False,
    on_checkpoint: Callable[[], None] = lambda: None,
    step_capture: str = "auto",
) -> list[dict[str, Any]]:
    """Sample tasks of one model (any starts and temperatures) as replicas of one batch; the records in task order.
    ``step_capture``: how the batched step runs (``batched_step.STEP_CAPTURES``; auto: a CUDA graph on CUDA)."""
    first = tasks[0]
    if any((t.config, t.seed, t.device, t.settings) != (first.config, first.seed, first.device, first.settings)
           for t in tasks):  # fmt: skip
        raise ValueError("batched replicas must share the model, seed, device and settings")
    results: list[dict[str, Any] | None] = [_finished(task) for task in tasks]
    pending = [index for index, result in enumerate(results) if result is None]
    saved = [read_checkpoint(tasks[index].checkpoint) for index in pending]
    steps_saved = {0 if state is None else int(state["sampler"]["steps_done"]) for state in saved}
    if first.settings.sampler == "sgld" or len(steps_saved) > 1:  # no batched SGLD; replicas in lockstep only
        for index in pending:
            results[index] = run_temperature(tasks[index], progress, should_stop, on_checkpoint)
    elif pending:
        batch = _run_batch([tasks[i] for i in pending], saved, progress, should_stop, on_checkpoint, step_capture)
        for index, records in zip(pending, batch, strict=True):
            results[index] = records
    return [result for result in results if result is not None]


def _run_batch(
    tasks: list[TemperatureTask],
    saved: list[dict[str, Any] | None],
    progress: Callable[[int, int], None],
    should_stop: Callable[[], bool],
    on_checkpoint: Callable[[], None],
    step_capture: str,
) -> list[dict[str, Any]]:
    first = tasks[0]
    settings, device = first.settings, torch.device(first.device)
    if settings.noise not in NOISE_MODES:
        raise ValueError(f"unknown noise {settings.noise!r}; use minibatch or full_batch")
    torch.manual_seed(first.seed)
    splits = first.splits.to(device)

    def fresh_model(state: dict[str, torch.Tensor] = first.start_state) -> torch.nn.Module:
        model = build_model(first.config).to(device)
        model.load_state_dict(state)
        return model

    seeds = [chain_seed(task.seed, task.temperature) for task in tasks]
    batch_generators = [torch.Generator(device=device).manual_seed(seed) for seed in seeds]
    noise_generators = [torch.Generator(device=device).manual_seed(seed + 1) for seed in seeds]
    objective = ReplicaObjective(fresh_model(), splits.train, settings.batch_size, batch_generators)
    if settings.noise == "full_batch":
        objective.full_batch = True
    minibatch_noise = not objective.full_batch
    # A plain single-weight-vector objective: the noise setup (shared by every temperature) and the evaluations.
    evaluator = FlatObjective(fresh_model(), splits.train, settings.batch_size, torch.Generator(device=device))
    slices = _layer_slices(evaluator.model)
    # one start per task name ('transformer@ES'): its weights and its noise spectrum, shared by its temperatures
    start_weights: dict[str, torch.Tensor] = {}
    initial: dict[str, NoiseSpectrum] = {}
    for task in tasks:
        if task.name not in start_weights:
            start_weights[task.name] = torch.cat([p.detach().reshape(-1) for p in
                                                  fresh_model(task.start_state).parameters()
                                                  if p.requires_grad]).double()  # fmt: skip
            initial[task.name] = exact_noise(settings, evaluator, start_weights[task.name])
    setups = {name: noise_setup(spectrum, settings) for name, spectrum in initial.items()}
    records: list[dict[str, Any]] = [
        {
            "name": task.name, "temperature": task.temperature, "sampler": settings.sampler, "steps": settings.steps,
            "losses": np.zeros(settings.steps, dtype=np.float32), "snapshots": [], "weights": [],
            "attention_sum": None, "attention_count": 0, "mass_log10": [], "mass_guard": [], "seconds": 0.0,
            "energies": [], "start_norm": float(start_weights[task.name] @ start_weights[task.name]),
            **setups[task.name], "kinetic_blocks": [], "kinetic_block_steps": [], "replicas": len(tasks),
        }
        for task in tasks
    ]  # fmt: skip

    def fresh_masses(w: torch.Tensor, step: int) -> tuple[MassMatrix, torch.Tensor]:
        if settings.mass_rule == "noise-covariance":  # per replica: its own spectrum (N per-sequence gradients)
            noises, variances = zip(*(gradient_noise(settings, evaluator, w[index],
                                                     initial[task.name] if step == 0 else None)
                                      for index, task in enumerate(tasks)), strict=True)  # fmt: skip
            variance = torch.stack(variances)
        else:  # every replica's minibatch variance in one batched call
            variance = objective.gradient_variance(w, settings.variance_batches)  # (R, n)
            noises = tuple(variance)
        masses = []
        for index, task in enumerate(tasks):
            mass, used = _masses(task, noises[index], w[index], slices, float(records[index]["r_used"]))
            records[index]["mass_guard"].append({"step": step, **used})
            masses.append(mass)
        return MassMatrix.stack(masses), variance

    start = torch.stack([start_weights[task.name] for task in tasks])  # (R, n)
    masses, variance = fresh_masses(start, 0)
    sampler = ReplicaPseudoLangevin(
        start, objective, masses, [task.temperature for task in tasks], noise_generators,
        variance if minibatch_noise else None, settings.dt, settings.m1, settings.sampler == "pseudo-langevin",
        settings.fixman, resolve_capture(step_capture, device),
    )  # fmt: skip
    for index, state in enumerate(saved):
        if state is not None:  # built as at the start, then replaced by the checkpoint (as run_temperature does)
            sampler.load_replica_state(index, state["sampler"])
            batch_generators[index].set_state(state["batch_generator"])
            noise_generators[index].set_state(state["noise_generator"])
            records[index] = state["records"]
    replicas = len(tasks)
    losses_device = torch.zeros(replicas, settings.snapshot_every, dtype=torch.float64, device=device)
    open_block = sampler.steps_done % settings.snapshot_every  # resumed inside a block: its losses so far
    for index, record in enumerate(records):
        block = record["losses"][sampler.steps_done - open_block : sampler.steps_done].astype(np.float64)
        losses_device[index, :open_block] = torch.from_numpy(block)
    burn_in = int(settings.burn_in_fraction * settings.steps)
    started = time.perf_counter() - records[0]["seconds"] * replicas
    is_transformer = first.config.kind == "transformer"

    def checkpoint(done: bool) -> None:
        for index, task in enumerate(tasks):
            records[index]["seconds"] = (time.perf_counter() - started) / replicas  # the batch's time, shared
            state = {
                "sampler": finished_state(sampler.replica_state(index), done),
                "batch_generator": batch_generators[index].get_state(),
                "noise_generator": noise_generators[index].get_state(), "records": records[index], "done": done,
            }  # fmt: skip
            save_plain(state, task.checkpoint)
            if done and task.finished_path != task.checkpoint:
                save_plain(state, task.finished_path)
        on_checkpoint()

    # the full training loss of every replica, one vmapped call, kept on the device until the next snapshot
    pending_energies: list[tuple[int, torch.Tensor]] = []

    def park_energies() -> None:
        if pending_energies:
            values = torch.stack([losses for _, losses in pending_energies]).cpu().tolist()  # (count, R)
            for (step_of, _), row in zip(pending_energies, values, strict=True):
                for index, record in enumerate(records):
                    record["energies"].append((step_of, row[index]))
            pending_energies.clear()

    # (R, k, n), each replica its start's leading noise directions; a resumed batch keeps those it started with
    directions = torch.stack([record["noise_directions"] for record in records]).to(sampler.p)
    # the open block's sums live here while sampling and in each record (as run_temperature keeps them) at a
    # checkpoint or a block's end
    kinetic_sum = (torch.stack([record["directional_sum"] for record in records]).to(sampler.p)
                   if all("directional_sum" in record for record in records) else None)  # fmt: skip

    def park_kinetic_sums() -> None:
        if kinetic_sum is not None:
            for index, record in enumerate(records):
                record["directional_sum"] = kinetic_sum[index].clone()

    step = sampler.steps_done
    while step < settings.steps:
        if step > 0 and step % settings.variance_every == 0 and step != records[0].get("variance_step"):
            masses, variance = fresh_masses(sampler.w, step)
            sampler.set_masses(masses, variance if minibatch_noise else None)
            for record in records:
                record["variance_step"] = step
        losses_device[:, step % settings.snapshot_every] = sampler.step()
        step = sampler.steps_done
        if step > burn_in and step % KINETIC_EVERY == 0:  # every replica at once: a few kernels, not a few per replica
            scaled = sampler.mass.inverse_sqrt(sampler.p)  # (R, n)
            along = torch.einsum("rn,rkn->rk", scaled, directions)  # (R, k)
            values = torch.cat([(scaled * scaled).mean(-1, keepdim=True), along * along], dim=-1)  # (R, 1 + k)
            kinetic_sum = values if kinetic_sum is None else kinetic_sum + values
            for record in records:
                record["directional_count"] = record.get("directional_count", 0) + 1
        snapshot_due = step % settings.snapshot_every == 0 or step == settings.steps
        if snapshot_due:
            chunk = (step - 1) % settings.snapshot_every + 1
            losses = losses_device[:, :chunk].cpu().numpy()
            sampler.check()
            park_kinetic_sums()
            park_energies()
            kinetic_sum = None
            for index, (task, record) in enumerate(zip(tasks, records, strict=True)):
                close_kinetic_block(record)
                record["losses"][step - chunk : step] = losses[index]
                _snapshot(task, evaluator, _Replica(sampler.w[index]), splits, record, step, burn_in, is_transformer)
        if step % settings.energy_every == 0 and not snapshot_due:
            pending_energies.append((step, objective.full_losses(sampler.w, settings.eval_batch_size)))
        if step % settings.weights_every == 0 and step > burn_in:
            weights = sampler.w.float().cpu()  # one copy for every replica
            for index, record in enumerate(records):
                record["weights"].append(weights[index].clone())
        if step % settings.checkpoint_every == 0 and step < settings.steps:
            open_block = step % settings.snapshot_every  # a checkpoint inside a block keeps its losses so far
            for index, record in enumerate(records):
                record["losses"][step - open_block : step] = losses_device[index, :open_block].cpu().numpy()
            park_kinetic_sums()
            park_energies()
            checkpoint(False)
        if snapshot_due:
            progress(step, settings.steps)
            if should_stop():
                raise Cancelled(f"{first.name} replicas stopped at step {step}")
    kinetic = sampler.kinetic_temperature()
    for index, (task, record) in enumerate(zip(tasks, records, strict=True)):
        diagonal = sampler.mass.diagonal[index].cpu().numpy()
        record["mass_log10"] = np.percentile(np.log10(diagonal), [0, 50, 100]).tolist()
        record["kinetic_temperature"] = float(kinetic[index])
        record["thermostat"] = thermostat_report(record, task.temperature, settings)
        record.pop("noise_directions", None)
        record["final_norm"] = float(sampler.w[index] @ sampler.w[index])
    checkpoint(True)
    return records
