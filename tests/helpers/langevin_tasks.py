"""A tiny Langevin sampling problem the batched-sampler tests share: ES and OT starts of one small transformer at
two temperatures, each a ``TemperatureTask`` with its own checkpoint file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from analyzers.langevin.chain_tasks import SamplingSettings, TemperatureTask
from analyzers.langevin.data import make_splits
from analyzers.langevin.model import ModelConfig, build_model


def tiny_tasks(folder: Path, settings: SamplingSettings, temperatures: tuple[float, ...] = (1e-4, 1e-3),
               kind: str = "transformer", device: str = "cpu") -> list[TemperatureTask]:
    """Two starts (ES, OT: two seeded initialisations) x ``temperatures`` of one 8-wide transformer (or, with
    ``kind="feedforward"``, the feed-forward baseline, named 'ffn') on 80 random sequences of 86 residues
    (40/10/30 split), sampled on ``device``; checkpoints under ``folder``."""
    sequences = np.random.default_rng(0).integers(0, 20, size=(80, 86))
    splits = make_splits(sequences, (40, 10, 30), seed=0)
    config = ModelConfig(embed_dim=8, hidden_dim=16, kind=kind)
    name = "transformer" if kind == "transformer" else "ffn"
    states = {}
    for seed, start in enumerate(("ES", "OT")):
        torch.manual_seed(seed)
        states[start] = build_model(config).state_dict()
    return [TemperatureTask(f"{name}@{start}", t, config, states[start], splits, settings, 0, device,
                            folder / f"{name}-{start}-{t:g}.pt")
            for start in ("ES", "OT") for t in temperatures]  # fmt: skip
