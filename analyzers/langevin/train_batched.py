"""Training runs of one model batched: R seeds (the ES-norm ensemble, the ES/OT references) advance in one
vmapped model call per step instead of R, each stopping at its own step and giving the weights it gives alone.

A compact model's step is launch-bound on a GPU (a few hundred small kernels), so R runs side by side cost
about what one costs. What keeps each run its own:

* **Per-run random streams.** Run r draws its epoch order from its own CPU generator (``seed``, as
  ``train.Trainer``) and its dropout masks from its own device generator (``seed + DROPOUT_STREAM``), outside
  the vmapped call; the dropout modules read the masks handed in (``_SiteDropout``). No run's draws depend on
  which other runs share the batch.
* **Masked updates.** A stopped run takes no more steps: only the active runs are gathered into the vmapped
  call, and the optimizer writes their rows only. Runs start together, so every active run has taken the same
  number of steps: one learning rate and one bias correction serve them all, with torch's own single-tensor
  Adam arithmetic (betas (0.9, 0.98), eps 1e-9, the Noam schedule of ``train``).

So a run equals itself trained alone through this code (R = 1), bit for bit on the CPU
(tests/test_langevin_train_batched.py). Against ``train.Trainer`` (an ``nn.Module`` and ``torch.optim.Adam``)
it draws other dropout masks (its own generator instead of the global one); without dropout the two differ
only by float32 rounding (a vmapped model call multiplies as a batched matmul, which sums in another order
than one model's matmul), tested to a tolerance from float32's eps and the step count.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence

import torch
from torch import nn
from torch.func import functional_call, grad_and_value, vmap

from analyzers.langevin.data import MaskedSplit, Splits, evaluate, masked_loss
from analyzers.langevin.train import (
    Reference,
    TrainingError,
    TrainingOutcome,
    TrainingSettings,
    noam_lr,
    squared_norm,
    training_outcome,
)

# run r's dropout generator is seeded with its seed + this (its order generator: with its seed)
DROPOUT_STREAM = 7919
BETAS, EPS = (0.9, 0.98), 1e-9  # the paper's Adam (Appendix C), as train.Trainer


class _Masks:
    """The dropout masks of one forward pass, consumed in call order by the model's dropout sites; empty:
    record each site's input shape instead (the probe pass) and pass the input through."""

    def __init__(self) -> None:
        self.pending: list[torch.Tensor] = []
        self.shapes: list[torch.Size] | None = None

    def take(self, x: torch.Tensor) -> torch.Tensor:
        if self.shapes is not None:
            self.shapes.append(x.shape)
            return x
        if not self.pending:
            return x  # no dropout (evaluation)
        return x * self.pending.pop(0)


class _SiteDropout(nn.Module):
    """Dropout with a mask handed in (``_Masks``): the place of one ``nn.Dropout`` module, used once or more
    per forward pass."""

    def __init__(self, masks: _Masks) -> None:
        super().__init__()
        self.masks = masks

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.masks.take(x)


def _with_site_dropout(model: nn.Module, masks: _Masks) -> tuple[nn.Module, float]:
    """A copy of ``model`` whose ``nn.Dropout`` modules read ``masks``; their drop probability (one per
    model)."""
    model = copy.deepcopy(model)
    rates = set()
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, nn.Dropout):
                rates.add(child.p)
                setattr(module, name, _SiteDropout(masks))
    if len(rates) > 1:
        raise ValueError(f"one dropout rate per model, found {sorted(rates)}")
    return model, rates.pop() if rates else 0.0


class StackedTrainer:
    """R training runs of one model architecture (``models``: each run's initialized model; ``seeds``: its
    random streams) advanced together; see the module docstring."""

    def __init__(self, models: Sequence[nn.Module], train_split: MaskedSplit, settings: TrainingSettings,
                 seeds: Sequence[int]) -> None:  # fmt: skip
        if len(models) != len(seeds) or not models:
            raise ValueError("one seed per model, at least one model")
        self.settings, self.train_split = settings, train_split
        self.device = train_split.targets.device
        self.masks = _Masks()
        self.model, self.rate = _with_site_dropout(models[0], self.masks)
        self.names = [name for name, p in self.model.named_parameters() if p.requires_grad]
        # (R, *shape) per parameter: run r's weights are row r
        self.params = {name: torch.stack([dict(m.named_parameters())[name].detach() for m in models]).clone()
                       for name in self.names}  # fmt: skip
        self.exp_avg = {name: torch.zeros_like(p) for name, p in self.params.items()}
        self.exp_avg_sq = {name: torch.zeros_like(p) for name, p in self.params.items()}
        # every compact model has a config
        self.embed_dim = int(getattr(self.model, "config").embed_dim)  # noqa: B009
        self.order_generators = [torch.Generator().manual_seed(seed) for seed in seeds]
        self.dropout_generators = [torch.Generator(self.device).manual_seed(seed + DROPOUT_STREAM)
                                   for seed in seeds]  # fmt: skip
        self.orders = [torch.zeros(0, dtype=torch.long) for _ in seeds]
        self.active = [True] * len(seeds)
        self.steps_taken = [0] * len(seeds)
        self.batch_size = min(settings.batch_size, len(train_split))
        self.site_shapes = self._probe()
        self._grad = vmap(grad_and_value(self._loss))
        self._eval = vmap(self._logits_loss, in_dims=(0, None, None, None))

    @property
    def runs(self) -> int:
        return len(self.active)

    def _probe(self) -> list[torch.Size]:
        """Each dropout site's input shape in one training forward pass (the batch size is fixed)."""
        self.masks.shapes = []
        try:
            with torch.no_grad():
                params = {name: p[0] for name, p in self.params.items()}
                functional_call(self.model, params, (self.train_split.inputs[: self.batch_size],))
            return list(self.masks.shapes)
        finally:
            self.masks.shapes = None

    def _loss(self, params: dict[str, torch.Tensor], masks: tuple[torch.Tensor, ...], inputs: torch.Tensor,
              targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # fmt: skip
        self.masks.pending = list(masks)
        logits = functional_call(self.model, params, (inputs,))["logits"]  # (batch, seq, 21)
        return masked_loss(logits, MaskedSplit(inputs, targets, mask))[0]

    def _logits_loss(self, params: dict[str, torch.Tensor], inputs: torch.Tensor, targets: torch.Tensor,
                     mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
        self.masks.pending = []
        logits = functional_call(self.model, params, (inputs,))["logits"]
        return masked_loss(logits, MaskedSplit(inputs, targets, mask))

    def _next_batch(self, run: int) -> torch.Tensor:
        """Run ``run``'s next minibatch indices: its epochs' order from its own generator, as ``Trainer``."""
        if len(self.orders[run]) < self.batch_size:
            self.orders[run] = torch.randperm(len(self.train_split), generator=self.order_generators[run])
        index, self.orders[run] = self.orders[run][: self.batch_size], self.orders[run][self.batch_size :]
        return index

    def _dropout_masks(self, run: int) -> list[torch.Tensor]:
        keep = 1.0 - self.rate
        return [(torch.rand(shape, generator=self.dropout_generators[run], device=self.device) >= self.rate)
                .to(torch.float32) / keep for shape in self.site_shapes]  # fmt: skip

    def stop(self, run: int) -> None:
        """Run ``run`` takes no more steps (its weights stay those of its last step)."""
        self.active[run] = False

    def step(self) -> torch.Tensor:
        """One Adam step of every active run; their minibatch losses (R,) on the device (NaN for a stopped
        run)."""
        live = [run for run, on in enumerate(self.active) if on]
        losses = torch.full((self.runs,), math.nan, device=self.device)
        if not live:
            return losses
        steps = {self.steps_taken[run] for run in live}
        assert len(steps) == 1, "active runs advance together"
        where = torch.tensor(live, device=self.device)
        every = len(live) == self.runs
        params = {name: p if every else p.index_select(0, where) for name, p in self.params.items()}
        batches = [self.train_split.subset(self._next_batch(run)) for run in live]
        site_masks = [self._dropout_masks(run) for run in live]
        masks = tuple(torch.stack([m[site] for m in site_masks]) for site in range(len(self.site_shapes)))
        inputs = torch.stack([b.inputs for b in batches])  # (R', batch, seq)
        targets, mask = torch.stack([b.targets for b in batches]), torch.stack([b.mask for b in batches])
        grads, loss = self._grad(params, masks, inputs, targets, mask)
        self._adam(grads, where, every, steps.pop() + 1)
        for run in live:
            self.steps_taken[run] += 1
        return losses.index_copy(0, where, loss.detach())

    @torch.no_grad()
    def _adam(self, grads: dict[str, torch.Tensor], where: torch.Tensor, every: bool, step: int) -> None:
        """torch.optim.Adam's single-tensor update (amsgrad off, no weight decay) on the active runs' rows."""
        lr = self.settings.lr_scale * noam_lr(step, self.embed_dim, self.settings.warmup)
        beta1, beta2 = BETAS
        bias_correction1, bias_correction2 = 1 - beta1**step, 1 - beta2**step
        step_size, bias_correction2_sqrt = lr / bias_correction1, bias_correction2**0.5
        for name, grad in grads.items():
            rows = [t if every else t.index_select(0, where)
                    for t in (self.params[name], self.exp_avg[name], self.exp_avg_sq[name])]  # fmt: skip
            param, exp_avg, exp_avg_sq = rows
            exp_avg = exp_avg.lerp(grad, 1 - beta1)
            exp_avg_sq = exp_avg_sq.mul(beta2).addcmul_(grad, grad, value=1 - beta2)
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(EPS)
            param = param.addcdiv(exp_avg, denom, value=-step_size)
            updated = ((self.params, param), (self.exp_avg, exp_avg), (self.exp_avg_sq, exp_avg_sq))
            for store, value in updated:
                if every:
                    store[name] = value
                else:
                    store[name] = store[name].index_copy(0, where, value)

    # -- what the protocol reads -------------------------------------------------------------------------
    @torch.no_grad()
    def squared_norms(self) -> list[float]:
        """|w|^2 of each run, float64, each summed as ``train.squared_norm_tensor`` sums one model's (one read
        for all runs)."""
        norms = [sum((p[run].double() ** 2).sum() for p in self.params.values()) for run in range(self.runs)]
        return torch.stack(norms).tolist()  # type: ignore[arg-type]

    @torch.no_grad()
    def evaluate(self, split: MaskedSplit, runs: Sequence[int] | None = None, batch_size: int = 1024
                 ) -> dict[int, tuple[float, float]]:  # fmt: skip
        """(loss, error) of ``runs`` (default: all) on a whole split without dropout, batches weighted by
        their sequences (``data.evaluate``'s means)."""
        runs = list(range(self.runs)) if runs is None else list(runs)
        where = torch.tensor(runs, device=self.device)
        params = {name: p.index_select(0, where) for name, p in self.params.items()}
        sums = [[0.0, 0.0] for _ in runs]
        for batch in split.batches(batch_size):
            losses, errors = self._eval(params, batch.inputs, batch.targets, batch.mask)
            for row, (loss, error) in enumerate(zip(losses.tolist(), errors.tolist(), strict=True)):
                sums[row][0] += loss * len(batch)
                sums[row][1] += error * len(batch)
        return {run: (loss / len(split), error / len(split))
                for run, (loss, error) in zip(runs, sums, strict=True)}  # fmt: skip

    def state(self, run: int) -> dict[str, torch.Tensor]:
        """Run ``run``'s weights as a CPU state dict of the original model (its buffers included)."""
        return {name: (self.params[name][run] if name in self.params else value).detach().cpu().clone()
                for name, value in self.model.state_dict().items()}  # fmt: skip


def early_stopped_norms(make_model: Callable[[int], nn.Module], splits: Splits, settings: TrainingSettings,
                        seeds: Sequence[int], report: Callable[[str], None] = lambda message: None,
                        ) -> list[float]:  # fmt: skip
    """Stage 1 of ``train.train_es_ot`` for every seed at once: each run trained with early stopping on the
    validation loss (stopped after ``patience`` evaluations without improvement, or at ``max_steps``); its
    |w|^2 at its best validation loss. Each run stops at its own step."""
    trainer = StackedTrainer([make_model(seed) for seed in seeds], splits.train, settings, seeds)
    validation = splits.validation if len(splits.validation) else splits.train
    norms = trainer.squared_norms()
    best = [math.inf] * trainer.runs
    waited = [0] * trainer.runs
    while any(trainer.active):
        for _ in range(settings.eval_every):
            trainer.step()
        losses = trainer.evaluate(validation, [run for run, on in enumerate(trainer.active) if on])
        current = trainer.squared_norms()
        for run, seed in enumerate(seeds):
            if not trainer.active[run]:
                continue
            loss = losses[run][0]
            report(f"norm ensemble seed {seed}: step {trainer.steps_taken[run]}, validation loss {loss:.4f}")
            if loss < best[run]:
                best[run], norms[run], waited[run] = loss, current[run], 0
            else:
                waited[run] += 1
            if waited[run] >= settings.patience or trainer.steps_taken[run] >= settings.max_steps:
                trainer.stop(run)
    return norms



def reference_runs(make_model: Callable[[int], nn.Module], splits: Splits, settings: TrainingSettings,
                   seeds: Sequence[int], target: float, report: Callable[[str], None] = lambda message: None,
                   ) -> list[Reference]:  # fmt: skip
    """Stage 2 of ``train.train_es_ot`` for every seed at once: each run's ES weights where its |w|^2 crosses
    ``target``, then its OT weights at saturation (its evaluations every ``eval_every`` steps after its own ES
    step), each run stopping at its own step (``train._reference_run``'s rules, one run at a time)."""
    trainer = StackedTrainer([make_model(seed) for seed in seeds], splits.train, settings, seeds)
    runs = [_ReferenceState(norm < target) for norm in trainer.squared_norms()]
    while any(trainer.active):
        trainer.step()
        norms = trainer.squared_norms()
        due = []
        for run, state in enumerate(runs):
            step = trainer.steps_taken[run]
            if not trainer.active[run]:
                continue
            if state.es_state is None:
                if (norms[run] < target) != state.side:
                    state.es_state, state.es_step = trainer.state(run), step
                    report(f"ES weights of seed {seeds[run]} at step {step}: |w|^2 = {norms[run]:.2f} "
                           f"(target {target:.2f})")
                elif step >= settings.max_steps:
                    raise TrainingError(
                        f"the squared weight norm never reached the ES target {target:.2f} in "
                        f"{settings.max_steps} steps (it is {norms[run]:.2f}, seed {seeds[run]}): the norm "
                        "constraint cannot be satisfied; raise max_steps, or the ensemble's patience, or "
                        "give a reachable norm target")
            elif (step - state.es_step) % settings.eval_every == 0:
                due.append(run)
            if state.es_state is not None and settings.ot_max_steps <= 0:
                trainer.stop(run)
        if due:
            _evaluate_ot(trainer, runs, due, norms, splits, settings)
    return [state.finish(make_model(seed), trainer, run, splits)
            for run, (seed, state) in enumerate(zip(seeds, runs, strict=True))]  # fmt: skip


def _evaluate_ot(trainer: StackedTrainer, runs: list[_ReferenceState], due: list[int], norms: Sequence[float],
                 splits: Splits, settings: TrainingSettings) -> None:  # fmt: skip
    """The OT evaluations due this step, each added to its run's trace; a run that saturates, or whose
    evaluations reach ``ot_max_steps``, stops."""
    for run, (loss, error) in trainer.evaluate(splits.train, due).items():
        state = runs[run]
        state.trace.append({"step": trainer.steps_taken[run], "train_loss": loss, "train_error": error,
                            "squared_norm": norms[run]})  # fmt: skip
        capped = settings.eval_every * len(state.trace) >= settings.ot_max_steps
        if state.saturated_after(settings) or capped:
            trainer.stop(run)


class _ReferenceState:
    """One reference run's progress through the protocol."""

    def __init__(self, side: bool) -> None:
        self.side = side  # below the target at the start
        self.es_state: dict[str, torch.Tensor] | None = None
        self.es_step = 0
        self.trace: list[dict[str, float]] = []
        self.saturated = False

    def saturated_after(self, settings: TrainingSettings) -> bool:
        """``train._reference_run``'s saturation test on the evaluations so far."""
        if len(self.trace) <= settings.saturation_window:
            return False
        old, new = self.trace[-1 - settings.saturation_window], self.trace[-1]
        relative = (old["train_loss"] - new["train_loss"]) / max(abs(old["train_loss"]), 1e-12)
        self.saturated = relative < settings.saturation_tolerance and abs(
            old["train_error"] - new["train_error"]) < 0.005
        return self.saturated

    def finish(self, model: nn.Module, trainer: StackedTrainer, run: int, splits: Splits) -> Reference:
        assert self.es_state is not None
        ot_state = trainer.state(run)
        metrics: dict[str, dict[str, float]] = {}
        for name, state in (("es", self.es_state), ("ot", ot_state)):
            model.load_state_dict(state)
            metrics[name] = {"squared_norm": squared_norm(model)}
            for split_name, split in (("train", splits.train), ("validation", splits.validation),
                                      ("test", splits.test)):  # fmt: skip
                if len(split):
                    loss, error = evaluate(model, split)
                    metrics[name][f"{split_name}_loss"], metrics[name][f"{split_name}_error"] = loss, error
        return Reference(self.es_state, ot_state, self.es_step, trainer.steps_taken[run], self.saturated,
                         self.trace, metrics)  # fmt: skip


def train_es_ot_batched(
    make_model: Callable[[int], nn.Module],
    splits: Splits,
    settings: TrainingSettings,
    seed: int = 0,
    report: Callable[[str], None] = lambda message: None,
    progress: Callable[[float], None] = lambda share: None,
) -> TrainingOutcome:
    """``train.train_es_ot`` with each stage's seeds batched: the ES-norm ensemble's runs in one batch, then
    the references' (one vmapped model call per step; each run its own random streams and its own stopping
    step). Its dropout masks come from per-run generators, so its weights differ from the one-at-a-time
    path's, which draws them from the global one. ``progress`` moves per stage, not per step."""
    norms: list[float] = []
    if settings.norm_target is None:
        ensemble = [seed + 1000 + k for k in range(settings.ensemble_size)]
        norms = early_stopped_norms(make_model, splits, settings, ensemble, report)
        report(f"norm ensemble of {len(norms)}: |w|^2 = {', '.join(f'{n:.1f}' for n in norms)}")
    progress(0.5)
    target = sum(norms) / len(norms) if settings.norm_target is None else settings.norm_target
    seeds = [seed + k for k in range(max(settings.references, 1))]
    references = reference_runs(make_model, splits, settings, seeds, target, report)
    progress(1.0)
    return training_outcome(target, norms, references)
