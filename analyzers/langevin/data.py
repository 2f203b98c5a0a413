"""The masked-token data set (paper Sect. II.1): every sequence gets a fixed random 15 % mask once, masked
sites are replaced by the mask token, and the shuffled sequences are cut into train / validation / test.
Loss = mean over sequences of the mean masked-site negative log-likelihood; error = 1 - accuracy over all
masked sites (paper Appendix B)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from analyzers.langevin.model import MASK_ID


@dataclass
class MaskedSplit:
    """Masked inputs, targets and the mask itself; all (n, L)."""

    inputs: torch.Tensor  # long, masked sites set to MASK_ID
    targets: torch.Tensor  # long
    mask: torch.Tensor  # bool

    def __len__(self) -> int:
        return len(self.targets)

    def subset(self, index: torch.Tensor) -> MaskedSplit:
        """The rows ``index`` (a tensor on any device: moved to the data's device)."""
        index = index.to(self.targets.device)
        return MaskedSplit(self.inputs[index], self.targets[index], self.mask[index])

    def to(self, device: str | torch.device) -> MaskedSplit:
        return MaskedSplit(self.inputs.to(device), self.targets.to(device), self.mask.to(device))

    def batches(self, batch_size: int) -> list[MaskedSplit]:
        """Consecutive chunks of at most ``batch_size`` rows (evaluation)."""
        return [self.subset(torch.arange(i, min(i + batch_size, len(self)))) for i in range(0, len(self), batch_size)]


@dataclass
class Splits:
    """Train, validation and test splits and a hash of what they contain."""

    train: MaskedSplit
    validation: MaskedSplit
    test: MaskedSplit
    digest: str

    def to(self, device: str | torch.device) -> Splits:
        return Splits(self.train.to(device), self.validation.to(device), self.test.to(device), self.digest)


def make_splits(
    sequences: np.ndarray, sizes: tuple[int, int, int], mask_fraction: float = 0.15, seed: int = 0
) -> Splits:
    """Shuffle (n, L) sequences with ``seed``, fix the masks once per sequence, cut train/validation/test."""
    if sum(sizes) > len(sequences):
        raise ValueError(
            f"split sizes train/validation/test {sizes} need {sum(sizes)} sequences, have {len(sequences)}; "
            "design more sequences or shrink the splits"
        )
    if sizes[0] < 1 or sizes[2] < 1:
        raise ValueError(f"the train and test splits need at least one sequence, got {sizes}")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(sequences))[: sum(sizes)]
    targets = torch.as_tensor(sequences[order], dtype=torch.long)
    mask = torch.as_tensor(rng.random(targets.shape) < mask_fraction)
    mask[mask.sum(1) == 0, 0] = True  # every sequence has at least one masked site
    inputs = targets.masked_fill(mask, MASK_ID)
    full = MaskedSplit(inputs, targets, mask)
    bounds = np.cumsum((0, *sizes))
    parts = [full.subset(torch.arange(bounds[k], bounds[k + 1])) for k in range(3)]
    digest = hashlib.sha256(inputs.numpy().tobytes() + targets.numpy().tobytes()).hexdigest()[:16]
    return Splits(parts[0], parts[1], parts[2], digest)


def masked_loss(logits: torch.Tensor, split: MaskedSplit) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, error) for logits (n, L, 21): mean over sequences of the mean masked NLL; 1 - masked accuracy."""
    nll = nn.functional.cross_entropy(logits.transpose(1, 2).float(), split.targets, reduction="none")  # (n, L)
    maskf = split.mask.to(nll.dtype)
    per_sequence = (nll * maskf).sum(1) / maskf.sum(1)
    correct = (logits.argmax(-1) == split.targets).to(nll.dtype)
    error = 1.0 - (correct * maskf).sum() / maskf.sum()
    return per_sequence.mean(), error


@torch.no_grad()
def evaluate(model: nn.Module, split: MaskedSplit, batch_size: int = 1024) -> tuple[float, float]:
    """(loss, error) on a whole split, model in eval mode (no dropout); sums weighted like the full mean."""
    was_training = model.training
    model.eval()
    loss_sum = correct = masked = 0.0
    for batch in split.batches(batch_size):
        logits = model(batch.inputs)["logits"]
        loss, error = masked_loss(logits, batch)
        loss_sum += float(loss) * len(batch)
        count = float(batch.mask.sum())
        correct += (1.0 - float(error)) * count
        masked += count
    model.train(was_training)
    return loss_sum / len(split), 1.0 - correct / masked
