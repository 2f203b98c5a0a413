"""The loss as a function of one flat weight vector: minibatch gradients for the samplers, the per-weight
variance of the minibatch gradient (for the masses), and full-split evaluations (loss, error, attention).

The model's parameters are made views into one float32 buffer (and their gradients views into another),
so loading a sampled weight vector is one copy and reading the gradient needs no concatenation. The
samplers keep their own float64 master copy; the model sees it rounded to float32.

``ReplicaObjective`` is the same loss for R stacked flat weight vectors (R, n) at once, for batched chains:
``torch.func.functional_call`` of the model on each replica's parameters, ``grad_and_value`` and ``vmap`` over
the replicas. Replica r draws its minibatch from its own generator exactly as ``FlatObjective`` does, so a
replica sees the minibatches a single chain with that generator sees.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn
from torch.func import functional_call, grad, grad_and_value, vmap

from analyzers.langevin.data import MaskedSplit, masked_loss


class FlatObjective:
    """Minibatch loss and gradient of ``model`` on ``split`` as functions of a flat weight vector."""

    def __init__(
        self, model: nn.Module, split: MaskedSplit, batch_size: int, generator: torch.Generator
    ) -> None:
        self.model = model
        self.split = split
        self.batch_size = batch_size
        self.generator = generator
        parameters = [p for p in model.parameters() if p.requires_grad]
        device = parameters[0].device
        self.size = sum(p.numel() for p in parameters)
        self.flat = torch.empty(self.size, dtype=torch.float32, device=device)
        self.flat_grad = torch.zeros(self.size, dtype=torch.float32, device=device)
        offset = 0
        with torch.no_grad():
            for p in parameters:
                count = p.numel()
                self.flat[offset : offset + count].copy_(p.detach().reshape(-1))
                p.data = self.flat[offset : offset + count].view_as(p)
                p.grad = self.flat_grad[offset : offset + count].view_as(p)  # backward accumulates in place
                offset += count
        self.full_batch = batch_size >= len(split)
        model.eval()  # sampling: no dropout

    @property
    def device(self) -> torch.device:
        return self.flat.device

    def weights(self) -> torch.Tensor:
        """The current weights as float64 (n,)."""
        return self.flat.double()

    def load(self, w: torch.Tensor) -> None:
        """Put a flat weight vector (any float dtype) into the model."""
        self.flat.copy_(w)

    def _batch(self) -> MaskedSplit:
        if self.full_batch:
            return self.split
        index = torch.randint(
            len(self.split), (self.batch_size,), generator=self.generator, device=self.device
        )
        return self.split.subset(index)

    def __call__(self, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(minibatch loss (), gradient (n,) in w's dtype) at ``w``."""
        self.load(w)
        batch = self._batch()
        self.flat_grad.zero_()
        loss, _ = masked_loss(self.model(batch.inputs)["logits"], batch)
        loss.backward()
        return loss.detach(), self.flat_grad.to(w.dtype)

    def gradient_variance(self, w: torch.Tensor, batches: int) -> torch.Tensor:
        """Per-weight variance of the minibatch gradient over ``batches`` minibatches at ``w``. (n,)
        float64"""
        return minibatch_gradient_variance(self, w, batches)

    def per_sequence_gradients(self, w: torch.Tensor) -> torch.Tensor:
        """The gradient of every training sequence's loss at ``w``: (N, n) float64 (the minibatch noise's
        covariance is theirs over the batch size, exactly)."""
        return per_sequence_gradients(self.model, self.split, w)


FlatLoss = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def flat_loss(model: nn.Module) -> FlatLoss:
    """loss(flat, inputs, targets, mask): the masked loss of ``model`` on one batch (batch, seq) with its
    trainable parameters taken from the flat vector (n,) as views (``torch.func``: batched replicas,
    per-sequence gradients)."""
    named = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    sizes = [p.numel() for _, p in named]

    def loss(
        flat: torch.Tensor, inputs: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        params = {name: part.view(p.shape) for (name, p), part in zip(named, flat.split(sizes), strict=True)}
        logits = functional_call(model, params, (inputs,))["logits"]  # (batch, seq, 21)
        return masked_loss(logits, MaskedSplit(inputs, targets, mask))[0]

    return loss


def per_sequence_gradients(
    model: nn.Module, split: MaskedSplit, w: torch.Tensor, chunk: int = 100
) -> torch.Tensor:
    """d(loss of sequence i)/dw for every sequence of ``split`` at the flat weights ``w`` (n,): (N, n)
    float64.

    The minibatch loss is the mean of per-sequence losses (Eq. 29), so these N gradients are all the minibatch
    noise there is: a minibatch of b sequences drawn with replacement has noise covariance Cov_i(g_i) / b.
    ``torch.func`` evaluates the model on each sequence alone (a batch of one), ``chunk`` sequences per
    call."""
    loss = flat_loss(model)
    each = vmap(grad(lambda flat, inputs, targets, mask: loss(flat, inputs[None], targets[None], mask[None])),
                in_dims=(None, 0, 0, 0))  # fmt: skip
    flat = w.to(next(p for p in model.parameters() if p.requires_grad).dtype)
    was_training = model.training
    model.eval()
    try:
        return torch.cat(
            [
                each(
                    flat, split.inputs[i : i + chunk], split.targets[i : i + chunk], split.mask[i : i + chunk]
                ).double()
                for i in range(0, len(split), chunk)
            ]
        )
    finally:
        model.train(was_training)


def minibatch_gradient_variance(objective: Any, w: torch.Tensor, batches: int) -> torch.Tensor:
    """Unbiased per-weight variance of ``objective``'s minibatch gradient over ``batches`` draws at ``w``, in
    float64 and ``w``'s shape. ``objective(w)`` returns (loss, gradient); its ``full_batch`` switch is turned
    off meanwhile, since the variance of true minibatches is what sets the masses (``FlatObjective``, one
    chain, and ``ReplicaObjective``, R chains at once)."""
    if batches < 2:
        raise ValueError("the gradient variance needs at least two minibatches")
    total = torch.zeros(w.shape, dtype=torch.float64, device=w.device)
    total_sq = torch.zeros_like(total)
    full_batch, objective.full_batch = objective.full_batch, False
    try:
        for _ in range(batches):
            grad = objective(w.double())[1]
            total += grad
            total_sq += grad * grad
    finally:
        objective.full_batch = full_batch
    mean = total / batches
    return ((total_sq / batches - mean * mean) * batches / (batches - 1)).clamp(min=0.0)


@torch.no_grad()
def evaluate_split(
    model: nn.Module, split: MaskedSplit, batch_size: int = 1024, attention: bool = False
) -> tuple[float, float, torch.Tensor | None]:
    """(loss, error, mean attention (layers, L, L) or None) of the model in eval mode on a whole split.

    The mean attention is averaged over the split's sequences (not yet symmetrized)."""
    loss_sum = torch.zeros((), dtype=torch.float64, device=split.targets.device)
    error_sum = torch.zeros_like(loss_sum)  # per-sequence errors (Eq. 29-30): batches weighted by sequences
    attention_sum = None
    for start in range(0, len(split), batch_size):
        batch = split.subset(torch.arange(start, min(start + batch_size, len(split))))
        out = model(batch.inputs, return_attention=attention)
        loss, error = masked_loss(out["logits"], batch)
        loss_sum += loss.double() * len(batch)
        error_sum += error.double() * len(batch)
        if attention and "attention" in out:
            summed = out["attention"].double().sum(0)  # (layers, L, L)
            attention_sum = summed if attention_sum is None else attention_sum + summed
    mean_attention = None if attention_sum is None else (attention_sum / len(split)).cpu()
    return float(loss_sum) / len(split), float(error_sum) / len(split), mean_attention


class ReplicaObjective:
    """Minibatch loss and gradient of ``model`` on ``split`` for R stacked flat weight vectors, one model
    call."""

    def __init__(self, model: nn.Module, split: MaskedSplit, batch_size: int,
                 generators: Sequence[torch.Generator]) -> None:
        self.model = model.eval()  # sampling: no dropout
        self.split = split
        self.batch_size = batch_size
        self.generators = list(generators)
        trainable = [p for p in model.parameters() if p.requires_grad]
        self.size = sum(p.numel() for p in trainable)
        self.device = trainable[0].device
        self.full_batch = batch_size >= len(split)
        loss = flat_loss(self.model)  # flat (n,) float32; inputs/targets/mask (batch, seq)
        self._own_batches = vmap(grad_and_value(loss), in_dims=(0, 0, 0, 0))  # a minibatch per replica
        self._shared_batch = vmap(grad_and_value(loss), in_dims=(0, None, None, None))  # the whole split
        self._losses = vmap(loss, in_dims=(0, None, None, None))  # evaluation: R weight vectors, one split

    @property
    def replicas(self) -> int:
        return len(self.generators)

    def weights(self) -> torch.Tensor:
        """The model's current weights as one float64 row (n,)."""
        return torch.cat(
            [p.detach().reshape(-1) for p in self.model.parameters() if p.requires_grad]
        ).double()

    def draw(self) -> torch.Tensor | None:
        """Each replica's next minibatch, (R, batch) indices drawn from its own generator as ``FlatObjective``
        draws them; None for the full batch."""
        if self.full_batch:
            return None
        return torch.stack([
            torch.randint(len(self.split), (self.batch_size,), generator=g, device=self.device)
            for g in self.generators
        ])  # fmt: skip

    def evaluate(self, w: torch.Tensor, index: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """(minibatch losses (R,), gradients (R, n) in w's dtype) at w (R, n) on the minibatches ``index``
        (R, batch), or on the whole split for None: no random draw, no host synchronisation (a CUDA graph
        captures it, ``integrator``)."""
        flat = w.float()
        if index is None:
            grads, losses = self._shared_batch(flat, self.split.inputs, self.split.targets, self.split.mask)
        else:
            batch = self.split.subset(index)  # (R, batch, seq)
            grads, losses = self._own_batches(flat, batch.inputs, batch.targets, batch.mask)
        return losses.detach(), grads.detach().to(w.dtype)  # the loss in the model's dtype, as FlatObjective

    def __call__(self, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(minibatch losses (R,), gradients (R, n) in w's dtype) at w (R, n), each replica on its next
        minibatch."""
        return self.evaluate(w, self.draw())

    def full_losses(self, w: torch.Tensor, chunk: int = 1024) -> torch.Tensor:
        """The loss of each replica's weights (R, n) on the whole split, (R,) float64 on the device: the
        energy ``evaluate_split`` reads one weight vector at a time, here one vmapped call per ``chunk``
        sequences and no host synchronisation (read with the next snapshot)."""
        flat = w.float()
        total = torch.zeros(len(w), dtype=torch.float64, device=w.device)
        for start in range(0, len(self.split), chunk):
            part = self.split.subset(
                torch.arange(start, min(start + chunk, len(self.split)), device=self.device)
            )
            with torch.no_grad():
                losses = self._losses(flat, part.inputs, part.targets, part.mask)  # (R,) means over the chunk
            total += losses.double() * len(part)
        return total / len(self.split)

    def gradient_variance(self, w: torch.Tensor, batches: int) -> torch.Tensor:
        """Per-replica, per-weight variance of the minibatch gradient over ``batches`` minibatches: (R, n)
        float64."""
        return minibatch_gradient_variance(self, w, batches)
