"""The masked-token data set (paper Sect. II.1): every sequence gets a fixed random 15 % mask once, masked
sites are replaced by the mask token, and the shuffled sequences are cut into train / validation / test.
Loss = mean over sequences of the mean masked-site negative log-likelihood; error = mean over sequences of
the per-sequence error, the fraction of that sequence's masked sites predicted wrong (paper Eq. 29-30: a
mean of per-sequence errors, not pooled over all masked sites)."""

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
        return [
            self.subset(torch.arange(i, min(i + batch_size, len(self))))
            for i in range(0, len(self), batch_size)
        ]


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
    """(loss, error) for logits (n, L, 21), both means over sequences of per-sequence values (Eq. 29-30):
    the mean masked-site NLL and the fraction of masked sites whose most likely residue is wrong."""
    # (n, L)
    nll = nn.functional.cross_entropy(logits.transpose(1, 2).float(), split.targets, reduction="none")
    maskf = split.mask.to(nll.dtype)
    masked_per_sequence = maskf.sum(1)  # (n,) at least one masked site each (make_splits)
    per_sequence = (nll * maskf).sum(1) / masked_per_sequence
    wrong = (logits.argmax(-1) != split.targets).to(nll.dtype)  # (n, L)
    per_sequence_error = (wrong * maskf).sum(1) / masked_per_sequence
    return per_sequence.mean(), per_sequence_error.mean()


@torch.no_grad()
def evaluate(model: nn.Module, split: MaskedSplit, batch_size: int = 1024) -> tuple[float, float]:
    """(loss, error) on a whole split, model in eval mode (no dropout); batches weighted by their sequences,
    so both are the means over the split's sequences (Eq. 29-30)."""
    was_training = model.training
    model.eval()
    loss_sum = error_sum = 0.0
    for batch in split.batches(batch_size):
        logits = model(batch.inputs)["logits"]
        loss, error = masked_loss(logits, batch)
        loss_sum += float(loss) * len(batch)
        error_sum += float(error) * len(batch)
    model.train(was_training)
    return loss_sum / len(split), error_sum / len(split)


def majority_error(train: MaskedSplit, test: MaskedSplit) -> float:
    """The test error (Eq. 29-30) of always predicting the training split's most frequent residue: the
    baseline a model must beat to have learned anything."""
    majority = int(torch.bincount(train.targets.flatten()).argmax())
    wrong = (test.targets != majority) & test.mask  # (n, L)
    return float((wrong.sum(1) / test.mask.sum(1)).mean())
