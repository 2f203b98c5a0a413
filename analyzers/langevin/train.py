"""Training (paper Appendix C): Adam (0.9, 0.98, 1e-9), linear warm-up then inverse square root (Noam),
dropout, and the two-stage protocol that yields the early-stopped (ES) and over-trained (OT) weights.

Stage 1 (the norm target): ``ensemble_size`` independent runs (seeds ``seed + 1000 + k``) are trained with
early stopping on the validation loss (stop after ``patience`` evaluations without improvement); the
squared weight norm |w|^2 of each run at its best validation loss is recorded, and the target Q is their
mean. Stage 2 (the reference runs, seeds ``seed + k`` for k < ``references``): training stops as soon as
|w|^2 reaches Q (crosses it, from whichever side it started), which saves the ES weights; the same run
then continues with no norm condition until the training loss and error saturate (relative loss change
below ``saturation_tolerance`` over ``saturation_window`` evaluations and error change below 0.005), which
saves the OT weights. The paper's ES and OT error bars come from three reference runs per architecture
(Sect. III.1); the first reference (seed ``seed``) is the one the sampler starts from.

A step reads nothing back from the device (on a GPU each read waits for the queue to drain, and the small
models are launch-bound): the loss stays a tensor, an epoch's order moves to the device once, and the ES
stage's norm test is read every ``check_every`` steps, the weights of the steps in between kept on the device,
so the ES weights and every later step are those of a check at every step (``check_every=1``; tested bit for
bit).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn

from analyzers.langevin.data import MaskedSplit, Splits, evaluate, masked_loss


class TrainingError(ValueError):
    """The training protocol cannot produce what was asked (e.g. the norm target is never reached)."""


def noam_lr(step: int, embed_dim: int, warmup: int) -> float:
    """lr = d^-0.5 min(s^-0.5, s w^-1.5), step counted from 1."""
    step = max(step, 1)
    return embed_dim**-0.5 * min(step**-0.5, step * warmup**-1.5)


def squared_norm(model: nn.Module) -> float:
    """|w|^2 over all trainable parameters."""
    return float(squared_norm_tensor(model))


def squared_norm_tensor(model: nn.Module) -> torch.Tensor:
    """|w|^2 as a float64 tensor on the model's device (nothing read back: ``squared_norm`` reads it)."""
    with torch.no_grad():
        return sum((p.detach().double() ** 2).sum() for p in model.parameters())  # type: ignore[return-value]


def scale_onto_sphere(model: nn.Module, target: float) -> None:
    """Scale every weight of ``model`` (in place) by one factor so that |w|^2 = ``target``."""
    factor = (target / squared_norm(model)) ** 0.5
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.mul_(factor)


@dataclass
class TrainingSettings:
    """Knobs of the protocol (defaults: the paper's optimizer; lengths set by the scale)."""

    batch_size: int = 64
    warmup: int = 4000
    max_steps: int = 20_000  # per run, each stage
    eval_every: int = 100
    patience: int = 10  # evaluations without a better validation loss (stage 1)
    ensemble_size: int = 3  # runs whose mean ES norm is the target (stage 1)
    saturation_window: int = 5
    saturation_tolerance: float = 0.01
    ot_max_steps: int = 20_000  # extra steps after ES for the OT weights
    lr_scale: float = 1.0
    norm_target: float | None = None  # a given Q replaces the stage-1 ensemble
    references: int = 1  # reference runs (seeds seed + k) whose ES / OT metrics give the error bars


@dataclass
class TrainingOutcome:
    """ES and OT weights (CPU state dicts) and what the protocol measured."""

    es_state: dict[str, torch.Tensor]
    ot_state: dict[str, torch.Tensor]
    norm_target: float
    ensemble_norms: list[float]
    es_step: int
    ot_step: int
    ot_saturated: bool
    trace: list[dict[str, float]] = field(default_factory=list)  # reference run, every eval_every steps
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)  # es/ot x train/val/test loss/error
    reference_metrics: list[dict[str, dict[str, float]]] = field(default_factory=list)  # per reference seed


class Trainer:
    """Adam + Noam over shuffled epochs of one model."""

    def __init__(
        self, model: nn.Module, train_split: MaskedSplit, settings: TrainingSettings, seed: int
    ) -> None:
        self.model, self.train_split, self.settings = model, train_split, settings
        self.generator = torch.Generator().manual_seed(seed)
        embed_dim = int(getattr(model, "config").embed_dim)  # noqa: B009 - every compact model has a config
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: settings.lr_scale * noam_lr(s + 1, embed_dim, settings.warmup)
        )
        self.step_count = 0
        self.device = train_split.targets.device
        self._order = torch.zeros(0, dtype=torch.long, device=self.device)

    def step(self) -> torch.Tensor:
        """One Adam step; its minibatch loss, left on the device (reading it would wait for the step)."""
        batch_size = min(self.settings.batch_size, len(self.train_split))
        if len(self._order) < batch_size:  # a new epoch: its order drawn on the CPU, moved once
            order = torch.randperm(len(self.train_split), generator=self.generator)
            if self.device.type == "cuda":
                order = order.pin_memory()  # a pinned copy does not wait for the queue
            self._order = order.to(self.device, non_blocking=True)
        index, self._order = self._order[:batch_size], self._order[batch_size:]
        batch = self.train_split.subset(index)
        self.model.train()
        loss, _ = masked_loss(self.model(batch.inputs)["logits"], batch)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.scheduler.step()
        self.step_count += 1
        return loss.detach()


def _early_stopped_norm(
    make_model: Callable[[int], nn.Module],
    splits: Splits,
    settings: TrainingSettings,
    seed: int,
    report: Callable[[str], None],
    progress: Callable[[float], None] = lambda share: None,
) -> float:
    """|w|^2 at the best validation loss of one early-stopped run; ``progress(share)`` of ``max_steps`` at
    every step (a cheap call: the caller throttles it), so a slow machine still shows the training moving."""
    model = make_model(seed)
    trainer = Trainer(model, splits.train, settings, seed)
    best_loss, best_norm, waited = math.inf, squared_norm(model), 0
    validation = splits.validation if len(splits.validation) else splits.train
    while trainer.step_count < settings.max_steps and waited < settings.patience:
        for _ in range(settings.eval_every):
            trainer.step()
            progress(trainer.step_count / settings.max_steps)
        loss, _ = evaluate(model, validation)
        report(f"norm ensemble seed {seed}: step {trainer.step_count}, validation loss {loss:.4f}")
        if loss < best_loss:
            best_loss, best_norm, waited = loss, squared_norm(model), 0
        else:
            waited += 1
    return best_norm


def _state(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


def train_es_ot(
    make_model: Callable[[int], nn.Module],
    splits: Splits,
    settings: TrainingSettings,
    seed: int = 0,
    report: Callable[[str], None] = lambda message: None,
    progress: Callable[[float], None] = lambda share: None,
    check_every: int = 50,
) -> TrainingOutcome:
    """Run the two-stage protocol; ``make_model(seed)`` builds a freshly initialized model on the device.

    ``progress(share)``: the share of the training done, 0 to 1, at every step. Each phase (an ensemble
    run, a reference's ES part, its OT part) counts the same, its share of its step cap within it, so the
    share moves while a phase runs and steps up where one ends early. ``check_every``: steps between two reads
    of the ES norm test (at most ``eval_every``); the result is the same for any value.
    ``train_batched.train_es_ot_batched`` runs the same protocol with each stage's seeds batched.
    """
    ensemble = settings.ensemble_size if settings.norm_target is None else 0
    count = max(settings.references, 1)
    phases = ensemble + 2 * count

    def phase(index: int) -> Callable[[float], None]:
        return lambda within: progress((index + min(1.0, within)) / phases)

    norms = []
    for k in range(ensemble):
        norms.append(_early_stopped_norm(make_model, splits, settings, seed + 1000 + k, report, phase(k)))
        report(f"norm ensemble {k + 1}/{settings.ensemble_size}: |w|^2 = {norms[-1]:.1f}")
    target = sum(norms) / len(norms) if settings.norm_target is None else settings.norm_target
    references = [_reference_run(make_model, splits, settings, seed + k, target, report,
                                 (phase(ensemble + 2 * k), phase(ensemble + 2 * k + 1)), check_every)
                  for k in range(count)]  # fmt: skip
    return training_outcome(target, norms, references)


def training_outcome(target: float, norms: list[float], references: list[Reference]) -> TrainingOutcome:
    """The protocol's outcome: the first reference's weights and trace, every reference's metrics."""
    first = references[0]
    return TrainingOutcome(
        norm_target=target,
        ensemble_norms=norms,
        reference_metrics=[reference.metrics for reference in references],
        **{
            k: getattr(first, k)
            for k in ("es_state", "ot_state", "es_step", "ot_step", "ot_saturated", "trace", "metrics")
        },
    )


@dataclass
class Reference:
    """One reference run: its ES and OT weights and metrics."""

    es_state: dict[str, torch.Tensor]
    ot_state: dict[str, torch.Tensor]
    es_step: int
    ot_step: int
    ot_saturated: bool
    trace: list[dict[str, float]]
    metrics: dict[str, dict[str, float]]


def _train_to_norm(
    model: nn.Module, trainer: Trainer, settings: TrainingSettings, seed: int, target: float,
    report: Callable[[str], None], progress: Callable[[float], None], check_every: int,
) -> tuple[dict[str, torch.Tensor], int, float]:
    """Train until |w|^2 crosses ``target``: the weights at the first step past it (on the CPU), that step
    and the norm there. The norm is read every ``check_every`` steps (at most ``eval_every``); each step's
    weights wait on the device until then."""
    side = squared_norm(model) < target
    weights = model.state_dict()  # views of the weights: the steps update them in place
    names, tensors = list(weights), list(weights.values())
    block = max(1, min(check_every, settings.eval_every))
    # each step's weights until the read
    kept = [[torch.empty_like(t) for t in tensors] for _ in range(block)]
    while trainer.step_count < settings.max_steps:
        first = trainer.step_count
        norms = []
        for slot in range(min(block, settings.max_steps - first)):
            trainer.step()
            progress(trainer.step_count / settings.max_steps)
            norms.append(squared_norm_tensor(model))
            torch._foreach_copy_(kept[slot], tensors)
        for slot, norm in enumerate(torch.stack(norms).tolist()):  # one read for the block
            step = first + slot + 1
            if (norm < target) != side:
                es_state = {name: t.cpu().clone() for name, t in zip(names, kept[slot], strict=True)}
                return es_state, step, norm
            if step % settings.eval_every == 0:
                report(f"reference run (seed {seed}): step {step}, |w|^2 {norm:.2f} -> {target:.2f}")
    raise TrainingError(
        f"the squared weight norm never reached the ES target {target:.2f} in {settings.max_steps} steps "
        f"(it is {squared_norm(model):.2f}): the norm constraint cannot be satisfied; raise max_steps, "
        "or the ensemble's patience, or give a reachable norm target"
    )


def _train_to_saturation(
    model: nn.Module, trainer: Trainer, splits: Splits, settings: TrainingSettings, es_step: int,
    report: Callable[[str], None], progress: Callable[[float], None],
) -> tuple[bool, list[dict[str, float]]]:
    """Over-train from the ES step, evaluating every ``eval_every`` steps, until the training loss and error
    stop improving (or ``ot_max_steps``): whether they saturated, and the evaluations."""
    trace: list[dict[str, float]] = []
    history: list[tuple[float, float]] = []
    while settings.eval_every * len(history) < settings.ot_max_steps:  # evaluations at es_step + k eval_every
        while trainer.step_count < es_step + settings.eval_every * (len(history) + 1):
            trainer.step()
            progress((trainer.step_count - es_step) / settings.ot_max_steps)
        train_loss, train_error = evaluate(model, splits.train)
        trace.append({"step": trainer.step_count, "train_loss": train_loss, "train_error": train_error,
                      "squared_norm": squared_norm(model)})  # fmt: skip
        history.append((train_loss, train_error))
        report(
            f"over-training: step {trainer.step_count}, train loss {train_loss:.4f}, error {train_error:.4f}"
        )
        if len(history) > settings.saturation_window:
            old_loss, old_error = history[-1 - settings.saturation_window]
            relative = (old_loss - train_loss) / max(abs(old_loss), 1e-12)
            if relative < settings.saturation_tolerance and abs(old_error - train_error) < 0.005:
                return True, trace
    return False, trace


def _reference_metrics(
    model: nn.Module, splits: Splits, states: dict[str, dict[str, torch.Tensor]]
) -> dict[str, dict[str, float]]:
    """Per named weight state: |w|^2 and the loss and error on every non-empty split (loads each state)."""
    metrics: dict[str, dict[str, float]] = {}
    for name, state in states.items():
        model.load_state_dict(state)
        metrics[name] = {"squared_norm": squared_norm(model)}
        for split_name, split in (
            ("train", splits.train),
            ("validation", splits.validation),
            ("test", splits.test),
        ):
            if len(split):
                loss, error = evaluate(model, split)
                metrics[name][f"{split_name}_loss"], metrics[name][f"{split_name}_error"] = loss, error
    return metrics


def _reference_run(
    make_model: Callable[[int], nn.Module],
    splits: Splits,
    settings: TrainingSettings,
    seed: int,
    target: float,
    report: Callable[[str], None],
    progress: tuple[Callable[[float], None], Callable[[float], None]] = (
        lambda share: None,
        lambda share: None,
    ),
    check_every: int = 1,
) -> Reference:
    """Stage 2 for one seed: ES weights where |w|^2 reaches ``target``, then OT weights at saturation.

    ``progress``: the ES part's and the OT part's share of their step caps, at every step. The norm test is
    read every ``check_every`` steps (at most ``eval_every``); each step's weights wait on the device until
    then, and the steps past the crossing are the OT stage's first (the same steps: training does not depend
    on the test), so the weights and the OT stage's evaluation steps are those of a test at every step.
    """
    model = make_model(seed)
    trainer = Trainer(model, splits.train, settings, seed)
    es_state, es_step, es_norm = _train_to_norm(model, trainer, settings, seed, target, report, progress[0],
                                                check_every)
    report(f"ES weights at step {es_step}: |w|^2 = {es_norm:.2f} (target {target:.2f})")
    saturated, trace = _train_to_saturation(model, trainer, splits, settings, es_step, report, progress[1])
    ot_state = _state(model)
    report(f"OT weights at step {trainer.step_count} (saturated: {saturated})")
    metrics = _reference_metrics(model, splits, {"es": es_state, "ot": ot_state})
    return Reference(es_state, ot_state, es_step, trainer.step_count, saturated, trace, metrics)


def relax_on_sphere(
    model: nn.Module, train_split: MaskedSplit, steps: int, lr: float, batch_size: int, seed: int
) -> list[dict[str, float]]:
    """Relax ``model`` (in place) toward a nearby minimum of the training loss on its own sphere |w|^2 = Q:
    Adam (the paper's betas and eps) on the dropout-free loss that the sampler samples, the learning rate
    decaying from ``lr`` to 0 on a cosine, every step followed by a rescale back onto the sphere.

    Why: at low T the sampled distribution sits near the loss's minima on the sphere, far below the ES loss
    (on the `small` transformer 0.14 against 0.49), and the sampler reaches them only at the pace its noise
    allows (a fall of 0.1 in 2,500 steps at T = 1e-5). A start relaxed there is near that equilibrium from the
    first step; the chain then heats to T by itself. Returns the training loss (dropout-free, as ``evaluate``
    measures it) before the first step and every fifth of the way."""
    generator = torch.Generator().manual_seed(seed)
    target = squared_norm(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9)
    model.eval()  # the sampler's loss: no dropout
    trace = [{"step": 0, "train_loss": evaluate(model, train_split)[0]}]
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = lr * 0.5 * (1.0 + math.cos(math.pi * step / steps))
        index = torch.randint(len(train_split), (min(batch_size, len(train_split)),), generator=generator)
        batch = train_split.subset(index)  # subset moves the index to the data's device
        loss, _ = masked_loss(model(batch.inputs)["logits"], batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scale_onto_sphere(model, target)  # back onto the sphere, as pipeline.onto_sphere puts OT there
        if (step + 1) % max(steps // 5, 1) == 0 or step + 1 == steps:
            trace.append({"step": step + 1, "train_loss": evaluate(model, train_split)[0]})
    return trace
