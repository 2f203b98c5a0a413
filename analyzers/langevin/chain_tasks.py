"""What one sampling chain is asked to do and where it keeps its state: the sampler settings
(``SamplingSettings``), one (model, start, temperature) job (``TemperatureTask``), the seed of its own random
streams (``chain_seed``), and its checkpoint file (read, finished, reused). ``chain_runs`` runs tasks.

A task's checkpoint holds its sampler state, its two generators and its records, in one format whichever path
ran it (one chain alone or a replica of a batch), so either path continues or reuses what the other wrote.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from analyzers.langevin.data import Splits
from analyzers.langevin.model import ModelConfig
from analyzers.langevin.store import UnreadableCache, load_plain, save_plain


@dataclass
class SamplingSettings:
    """How to sample (defaults: the authors' dt, m1 and minibatch; lengths set by the scale)."""

    sampler: str = "pseudo-langevin"  # or "unconstrained", "sgld"
    # "minibatch": a fresh minibatch gradient per step supplies the share r of the thermostat noise (the
    # paper); "full_batch": the gradient of the whole training split and white noise for all of it (no
    # correlated noise)
    noise: str = "minibatch"
    steps: int = 2000
    burn_in_fraction: float = 0.5  # records before this fraction of the steps are not averaged
    batch_size: int = 64
    dt: float = 1.0
    m1: float = 0.1
    r: float = 0.01  # share of the thermostat noise that the minibatch noise supplies
    # or "per-layer" (layer means of the variance), "uniform" (the median), "noise-covariance" (per-weight
    # plus a low-rank term along the minibatch noise: mass_matrix.py)
    mass_rule: str = "per-weight"
    variance_floor: float = 1e-3  # sigma_i^2 >= this x median(sigma^2)
    max_step_ratio: float = 0.02  # keeps SHAKE solvable: raises the floor / the masses above this
    variance_batches: int = 50
    variance_every: int = 1000
    fixman: bool = True
    sgld_step_size: float = 1e-4
    snapshot_every: int = 100
    energy_every: int = 25  # full training loss only (the energy for C): cheaper than a snapshot
    weights_every: int = 100
    checkpoint_every: int = 500
    eval_batch_size: int = 1024


@dataclass
class TemperatureTask:
    """One (model, start, temperature) sampling job."""

    name: str  # e.g. 'transformer@ES'
    temperature: float
    config: ModelConfig
    start_state: dict[str, torch.Tensor]
    splits: Splits
    settings: SamplingSettings
    seed: int
    device: str
    checkpoint: Path  # the state in progress (a run's checkpoint folder, or the cache)
    layer_names: list[str] = field(default_factory=list)
    # where the finished records are kept for reuse (the cache); None: ``checkpoint``
    finished: Path | None = None

    @property
    def finished_path(self) -> Path:
        return self.finished or self.checkpoint


NOISE_MODES = ("minibatch", "full_batch")


def chain_seed(seed: int, temperature: float) -> int:
    """The seed of one temperature's chain: its own minibatches and noise, the same wherever it runs (alone,
    in a worker process, or as one replica of a batch) and whatever other temperatures run beside it."""
    digest = hashlib.sha256(f"{seed}:{float(temperature)!r}".encode()).digest()
    return int.from_bytes(digest[:6], "little")


def finished_state(sampler_state: dict[str, Any], done: bool) -> dict[str, Any]:
    """A sampler's state as a checkpoint keeps it: whole while the chain runs; once it is done (never
    continued, only its records reused) without the low-rank mass, ~100 MB at k ~ 600 directions of 44,245
    weights."""
    if not done:
        return sampler_state
    return {key: value for key, value in sampler_state.items() if key != "mass_directions"}


def read_checkpoint(path: Path) -> dict[str, Any] | None:
    """The checkpoint at ``path``, or None when there is none or it is not plain data (then sampling
    restarts)."""
    if not path.is_file():
        return None
    try:
        saved = load_plain(path)
    except UnreadableCache:
        return None
    return saved if isinstance(saved, dict) else None


def finished_records(task: TemperatureTask) -> dict[str, Any] | None:
    """The records of a task that finished (in the cache, or in its checkpoint: then kept in the cache too),
    else None."""
    for path in dict.fromkeys((task.finished_path, task.checkpoint)):
        stored = read_checkpoint(path)
        if stored is not None and stored.get("done"):
            if path != task.finished_path:  # finished on another node: keep it in this node's cache too
                save_plain(stored, task.finished_path)
            return dict(stored["records"])
    return None


def save_checkpoint(task: TemperatureTask, state: dict[str, Any], done: bool) -> None:
    """Write a task's checkpoint; a finished one goes to the cache too (other analyzers of the experiment
    reuse it)."""
    save_plain(state, task.checkpoint)
    if done and task.finished_path != task.checkpoint:
        save_plain(state, task.finished_path)
