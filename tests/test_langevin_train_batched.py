"""Training runs batched (``train_batched``): every run of a batch, of either architecture, equals itself trained alone
bit for bit, stopping at its own step; the protocol's stages (the ES-norm ensemble, the ES/OT references) give
each seed what it gives alone; the optimizer is torch's Adam to the bit, and the one op that is not bit-identical to
the one-model path (the vmapped model call) is within float32 rounding of it."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import pytest
import torch
from torch import nn

from analyzers.langevin.data import MaskedSplit, Splits, make_splits, masked_loss
from analyzers.langevin.model import ModelConfig, build_model
from analyzers.langevin.train import TrainingSettings, noam_lr
from analyzers.langevin.train_batched import (
    StackedTrainer,
    early_stopped_norms,
    reference_runs,
    train_es_ot_batched,
)

CONFIGS = {
    "transformer": ModelConfig(embed_dim=8, hidden_dim=16),
    "feedforward": ModelConfig(embed_dim=8, hidden_dim=16, kind="feedforward"),
}


def _splits() -> Splits:
    return make_splits(np.random.default_rng(2).integers(0, 20, size=(160, 86)), (100, 30, 30), seed=0)


def _maker(config: ModelConfig) -> Callable[[int], nn.Module]:
    def make(seed: int) -> nn.Module:
        torch.manual_seed(seed)
        return build_model(config)

    return make


def _same_rows(batched: StackedTrainer, run: int, alone: StackedTrainer) -> bool:
    return all(torch.equal(store[name][run], own[name][0])
               for store, own in ((batched.params, alone.params), (batched.exp_avg, alone.exp_avg),
                                  (batched.exp_avg_sq, alone.exp_avg_sq))
               for name in batched.names)  # fmt: skip


@pytest.mark.parametrize("kind", list(CONFIGS))
def test_every_run_of_a_batch_equals_itself_trained_alone(kind: str) -> None:
    """Three seeds, one stopped at step 2: each run's weights and Adam moments equal those of the run alone, stopped
    at the same step; a stopped run's rows stay as they were."""
    splits, make = _splits(), _maker(CONFIGS[kind])
    settings = TrainingSettings(batch_size=16, warmup=10)
    seeds = [0, 1, 2]
    batched = StackedTrainer([make(seed) for seed in seeds], splits.train, settings, seeds)
    losses = []
    for step in range(4):
        if step == 2:
            batched.stop(1)
            frozen = {name: p[1].clone() for name, p in batched.params.items()}
        losses.append(batched.step())
    assert batched.steps_taken == [4, 2, 4]
    assert all(torch.equal(batched.params[name][1], frozen[name]) for name in batched.names)
    assert torch.isnan(losses[-1][1]) and not torch.isnan(losses[-1][0])
    for run, seed in enumerate(seeds):
        alone = StackedTrainer([make(seed)], splits.train, settings, [seed])
        alone_losses = [alone.step() for _ in range(batched.steps_taken[run])]
        assert _same_rows(batched, run, alone), (kind, seed)
        assert all(torch.equal(a[0], b[run]) for a, b in zip(alone_losses, losses, strict=False))
    # dropout is on, from each run's own stream: two seeds' first steps differ, a seed's own does not
    assert not torch.equal(batched.params["embedding.weight"][0], batched.params["embedding.weight"][2])


def test_the_batched_optimizer_is_torch_adam_to_the_bit() -> None:
    """Given the same gradients, the masked stacked update writes what ``torch.optim.Adam`` (betas 0.9/0.98, eps
    1e-9, the Noam rate) writes into one model, over several steps."""
    splits = _splits()
    config = ModelConfig(embed_dim=8, hidden_dim=16, dropout=0.0)
    settings = TrainingSettings(batch_size=16, warmup=10)
    model = _maker(config)(0)
    trainer = StackedTrainer([model, _maker(config)(1)], splits.train, settings, [0, 1])
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    generator = torch.Generator().manual_seed(5)
    for step in range(1, 5):
        for group in optimizer.param_groups:
            group["lr"] = noam_lr(step, config.embed_dim, settings.warmup)
        grads = {name: torch.randn(trainer.params[name].shape, generator=generator) for name in trainer.names}
        for name, parameter in model.named_parameters():
            parameter.grad = grads[name][0].clone()
        optimizer.step()
        trainer._adam(grads, torch.tensor([0, 1]), True, step)
        for name, parameter in model.named_parameters():
            assert torch.equal(trainer.params[name][0], parameter.detach()), (step, name)


def test_the_vmapped_gradient_is_the_models_own_to_float32_rounding() -> None:
    """The one op that is not bit-identical to one model's: the gradient of the vmapped call against autograd
    through the ``nn.Module`` (no dropout), within gamma_K |g|-scale of float32, K the longest sum in the
    backward pass (a weight gradient sums batch x sequence products)."""
    splits = _splits()
    config = ModelConfig(embed_dim=8, hidden_dim=16, num_layers=2, dropout=0.0)
    settings = TrainingSettings(batch_size=16, warmup=10)
    model = _maker(config)(0)
    trainer = StackedTrainer([model], splits.train, settings, [0])
    index = torch.arange(16)
    batch = splits.train.subset(index)
    masks = tuple(torch.ones((1, *shape)) for shape in trainer.site_shapes)
    params = {name: p for name, p in trainer.params.items()}
    grads, loss = trainer._grad(params, masks, batch.inputs[None], batch.targets[None], batch.mask[None])
    model.zero_grad()
    reference, _ = masked_loss(model(batch.inputs)["logits"], MaskedSplit(batch.inputs, batch.targets, batch.mask))
    reference.backward()
    terms = 16 * config.seq_len * config.hidden_dim  # the longest reduction: batch x positions x width
    gamma = terms * torch.finfo(torch.float32).eps / 2
    assert math.isclose(float(loss[0].detach()), float(reference.detach()), rel_tol=4 * gamma)
    for name, parameter in model.named_parameters():
        assert parameter.grad is not None
        scale = float(parameter.grad.abs().max()) + float(grads[name][0].abs().max())
        difference = float((grads[name][0] - parameter.grad).abs().max())
        assert difference <= 4 * gamma * scale, (name, difference, scale)


@pytest.mark.slow  # the protocol's stages batched and per seed: minutes on the shared 2 cores
def test_the_protocols_stages_give_each_seed_what_it_gives_alone() -> None:
    splits, make = _splits(), _maker(ModelConfig(embed_dim=8, hidden_dim=16))
    settings = TrainingSettings(batch_size=16, warmup=10, max_steps=60, eval_every=5, patience=1, ot_max_steps=15,
                                saturation_window=1)  # fmt: skip
    seeds = [1000, 1001]
    messages: list[str] = []
    norms = early_stopped_norms(make, splits, settings, seeds, messages.append)
    assert norms == [early_stopped_norms(make, splits, settings, [seed])[0] for seed in seeds]
    evaluations = [sum(f"seed {seed}:" in m for m in messages) for seed in seeds]
    assert evaluations[0] != evaluations[1]  # each stopped at its own evaluation
    # these seeds' norms rise from 221, 194 and 207 through 260 at different steps
    target, seeds = 260.0, [0, 2, 3]
    references = reference_runs(make, splits, settings, seeds, target)
    assert len({reference.es_step for reference in references}) > 1
    for seed, reference in zip(seeds, references, strict=True):
        own = reference_runs(make, splits, settings, [seed], target)[0]
        assert (own.es_step, own.ot_step, own.ot_saturated, own.trace, own.metrics) == (
            reference.es_step, reference.ot_step, reference.ot_saturated, reference.trace, reference.metrics)
        for name in own.es_state:
            assert torch.equal(own.es_state[name], reference.es_state[name])
            assert torch.equal(own.ot_state[name], reference.ot_state[name])
    given = dataclasses.replace(settings, norm_target=target)
    outcome = train_es_ot_batched(make, splits, given, seed=0)
    assert outcome.es_step == references[0].es_step and outcome.ensemble_norms == []
    assert outcome.reference_metrics == [references[0].metrics]
