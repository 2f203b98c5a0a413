"""Masked-token training: fixed 15% masks per sequence, seeded splits, Adam(0.9, 0.98, 1e-9) with the
Noam schedule, dropout 0.1. Loss = mean over sequences of the mean masked-site NLL; error = 1 - accuracy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from analyzers.langevin.design import MASK_ID


@dataclass
class MaskedSplit:
    """Tokens with masks applied, targets and the mask itself; all (n, L)."""

    inputs: torch.Tensor  # long, masked sites set to MASK_ID
    targets: torch.Tensor  # long
    mask: torch.Tensor  # bool

    def __len__(self) -> int:
        return len(self.targets)

    def subset(self, index: torch.Tensor) -> MaskedSplit:
        return MaskedSplit(self.inputs[index], self.targets[index], self.mask[index])


def make_splits(
    sequences: np.ndarray, sizes: tuple[int, int, int], mask_fraction: float = 0.15, seed: int = 0
) -> tuple[MaskedSplit, MaskedSplit, MaskedSplit]:
    """Shuffle (n, L) sequences with ``seed``, fix masks once per sequence, cut train/validation/test."""
    if sum(sizes) > len(sequences):
        raise ValueError(f"split sizes {sizes} need {sum(sizes)} sequences, have {len(sequences)}")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(sequences))
    targets = torch.as_tensor(sequences[order], dtype=torch.long)
    mask = torch.as_tensor(rng.random(targets.shape) < mask_fraction)
    mask[mask.sum(1) == 0, 0] = True  # every sequence has at least one masked site
    inputs = targets.masked_fill(mask, MASK_ID)
    full = MaskedSplit(inputs, targets, mask)
    bounds = np.cumsum((0, *sizes))
    return tuple(full.subset(torch.arange(bounds[k], bounds[k + 1])) for k in range(3))  # type: ignore[return-value]


def masked_loss(logits: torch.Tensor, split: MaskedSplit) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, error): mean over sequences of the mean masked NLL; 1 - masked accuracy. logits (n, L, 21)."""
    nll = nn.functional.cross_entropy(logits.transpose(1, 2), split.targets, reduction="none")  # (n, L)
    maskf = split.mask.float()
    per_sequence = (nll * maskf).sum(1) / maskf.sum(1)
    correct = (logits.argmax(-1) == split.targets).float()
    error = 1.0 - (correct * maskf).sum() / maskf.sum()
    return per_sequence.mean(), error


def noam_lr(step: int, embed_dim: int, warmup: int) -> float:
    """lr = d^-0.5 min(s^-0.5, s w^-1.5), step counted from 1."""
    step = max(step, 1)
    return embed_dim**-0.5 * min(step**-0.5, step * warmup**-1.5)


@torch.no_grad()
def evaluate(model: nn.Module, split: MaskedSplit, batch_size: int = 512) -> tuple[float, float]:
    """(loss, error) on a split, model in eval mode (no dropout)."""
    was_training = model.training
    model.eval()
    logits = torch.cat([model(split.inputs[i : i + batch_size])["logits"] for i in range(0, len(split), batch_size)])
    loss, error = masked_loss(logits, split)
    model.train(was_training)
    return float(loss), float(error)


def train(
    model: nn.Module,
    train_split: MaskedSplit,
    steps: int,
    batch_size: int = 64,
    warmup: int = 4000,
    seed: int = 0,
    lr_scale: float = 1.0,
) -> list[float]:
    """Adam + Noam for ``steps`` minibatch steps; returns the training-loss trace (one per step)."""
    generator = torch.Generator().manual_seed(seed)
    embed_dim = model.config.embed_dim  # type: ignore[union-attr]
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: lr_scale * noam_lr(s + 1, embed_dim, warmup))
    model.train()
    trace = []
    for _ in range(steps):
        batch = train_split.subset(torch.randint(len(train_split), (batch_size,), generator=generator))
        loss, _ = masked_loss(model(batch.inputs)["logits"], batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        trace.append(float(loss.detach()))
    model.eval()
    return trace
