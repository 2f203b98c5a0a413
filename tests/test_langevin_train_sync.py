"""Training off the per-step host reads (issue 28): the ES norm test read every ``check_every`` steps gives the
weights, steps, metrics and messages of a test at every step, bit for bit, and a step reads nothing back."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode

from analyzers.langevin.data import Splits, make_splits
from analyzers.langevin.model import ModelConfig, build_model
from analyzers.langevin.train import TrainingOutcome, TrainingSettings, train_es_ot

# what reads a tensor's value on the host (on a GPU: waits for the queue); Adam's own step counters live on the CPU
_READS = {torch.Tensor.item, torch.Tensor.tolist, torch.Tensor.__float__, torch.Tensor.__bool__,
          torch.Tensor.__int__, torch.Tensor.cpu, torch.Tensor.numpy}  # fmt: skip


class _CountReads(TorchFunctionMode):
    """Counts host reads of tensor values made outside torch itself."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if func in _READS and "torch/" not in sys._getframe(1).f_code.co_filename.replace("\\", "/"):
            self.reads += 1
        return func(*args, **(kwargs or {}))


def _splits() -> Splits:
    return make_splits(np.random.default_rng(2).integers(0, 20, size=(160, 86)), (100, 30, 30), seed=0)


def _train(settings: TrainingSettings, check_every: int) -> tuple[TrainingOutcome, list[str]]:
    config = ModelConfig(embed_dim=8, hidden_dim=16)

    def make_model(seed: int) -> torch.nn.Module:
        torch.manual_seed(seed)
        return build_model(config)

    messages: list[str] = []
    outcome = train_es_ot(make_model, _splits(), settings, seed=0, report=messages.append, check_every=check_every)
    return outcome, messages


@pytest.mark.parametrize("settings", [
    # eval_every 9 (the block) with an OT cap shorter than it; the crossing falls between two reads
    TrainingSettings(batch_size=16, warmup=10, max_steps=300, eval_every=9, patience=2, ensemble_size=1,
                     ot_max_steps=3, references=1),
    # blocks of 50 with a longer OT stage (the saturation test)
    pytest.param(TrainingSettings(batch_size=16, warmup=10, max_steps=300, eval_every=50, patience=2, ensemble_size=1,
                                  ot_max_steps=120, references=1), marks=pytest.mark.slow),
])  # fmt: skip
def test_reading_the_norm_test_every_k_steps_gives_the_weights_of_a_test_every_step(
    settings: TrainingSettings,
) -> None:
    every_step, messages = _train(settings, check_every=1)
    blocked, blocked_messages = _train(settings, check_every=50)
    assert every_step.es_step % settings.eval_every != 0  # steps past the crossing ran before the read
    for name in ("es_state", "ot_state"):
        for key, value in getattr(every_step, name).items():
            assert torch.equal(getattr(blocked, name)[key], value), (name, key)
    assert (blocked.es_step, blocked.ot_step, blocked.ot_saturated) == (
        every_step.es_step, every_step.ot_step, every_step.ot_saturated)
    assert blocked.reference_metrics == every_step.reference_metrics and blocked.trace == every_step.trace
    assert blocked_messages == messages


def test_a_training_step_reads_nothing_back() -> None:
    settings = TrainingSettings(batch_size=16, warmup=10, max_steps=400, eval_every=50, patience=2, ensemble_size=1,
                                ot_max_steps=100, references=1)  # fmt: skip
    counts = {}
    for check_every in (1, 50):
        with _CountReads() as counter:
            outcome, _ = _train(settings, check_every)
        counts[check_every] = counter.reads
    steps = outcome.ot_step  # the reference run's steps (the ensemble's come on top)
    assert counts[1] > outcome.es_step  # a read per ES step where the test is read every step
    # read every 50 steps, the ES stage's per-step reads are gone but one per block of 50
    assert counts[1] - counts[50] == outcome.es_step - -(-outcome.es_step // 50), counts
    # what is left does not grow with the steps: evaluations every 50 steps, the final metrics, the weight copies
    assert counts[50] < steps / 2, counts
