"""Temperatures as batched replicas: R chains of one model, each at its own temperature with its own
minibatches and noise, advanced together by one model call per step (for a GPU, where one small model
leaves most of the device idle; the CPU keeps one temperature per process, ``sampling.run_temperatures``).

* ``ReplicaObjective``: the minibatch loss and gradient of R flat weight vectors (R, n) at once, by
  ``torch.func.functional_call`` of the model on each replica's parameters, ``grad_and_value`` and
  ``vmap`` over the replicas. Replica r draws its minibatch from its own generator exactly as
  ``FlatObjective`` does, so a replica sees the minibatches a single-temperature run with that generator
  sees.
* ``ReplicaPseudoLangevin``: the step of ``sampler.PseudoLangevin`` (kick/2, thermostat, drift + SHAKE,
  kick/2 + RATTLE, Fixman term) written on (R, n) tensors, every reduction per replica, temperatures
  (R, 1); replica r draws its noise from its own generator in the single sampler's order. Same seeds,
  same numbers as R single-temperature samplers, to float tolerance (tested). The step itself is
  ``batched_step.langevin_update``, which a CUDA graph captures (``step_capture``); the replicas may start
  from different weights (every start and temperature of one model in one batch).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn
from torch.func import grad_and_value, vmap

from analyzers.langevin.batched_step import (
    ChainState,
    IndexedGradFn,
    StepConstants,
    StepRunner,
    chain_dot,
    rattle,
    resolve_capture,
)
from analyzers.langevin.data import MaskedSplit
from analyzers.langevin.mass_matrix import MassMatrix
from analyzers.langevin.objective import flat_loss, minibatch_gradient_variance
from analyzers.langevin.sampler import ConstraintError, as_mass_matrix, check_temperature, present_noise

BatchGradFn = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]  # w (R, n) -> (loss (R,), grad (R, n))


class ReplicaObjective:
    """Minibatch loss and gradient of ``model`` on ``split`` for R stacked flat weight vectors, one model call."""

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
        return torch.cat([p.detach().reshape(-1) for p in self.model.parameters() if p.requires_grad]).double()

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
        captures it, ``batched_step``)."""
        flat = w.float()
        if index is None:
            grads, losses = self._shared_batch(flat, self.split.inputs, self.split.targets, self.split.mask)
        else:
            batch = self.split.subset(index)  # (R, batch, seq)
            grads, losses = self._own_batches(flat, batch.inputs, batch.targets, batch.mask)
        return losses.detach(), grads.detach().to(w.dtype)  # the loss in the model's dtype, as FlatObjective

    def __call__(self, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(minibatch losses (R,), gradients (R, n) in w's dtype) at w (R, n), each replica on its next minibatch."""
        return self.evaluate(w, self.draw())

    def full_losses(self, w: torch.Tensor, chunk: int = 1024) -> torch.Tensor:
        """The loss of each replica's weights (R, n) on the whole split, (R,) float64 on the device: the energy
        ``evaluate_split`` reads one weight vector at a time, here one vmapped call per ``chunk`` sequences and
        no host synchronisation (read with the next snapshot)."""
        flat = w.float()
        total = torch.zeros(len(w), dtype=torch.float64, device=w.device)
        for start in range(0, len(self.split), chunk):
            part = self.split.subset(torch.arange(start, min(start + chunk, len(self.split)), device=self.device))
            with torch.no_grad():
                losses = self._losses(flat, part.inputs, part.targets, part.mask)  # (R,) means over the chunk
            total += losses.double() * len(part)
        return total / len(self.split)

    def gradient_variance(self, w: torch.Tensor, batches: int) -> torch.Tensor:
        """Per-replica, per-weight variance of the minibatch gradient over ``batches`` minibatches: (R, n) float64."""
        return minibatch_gradient_variance(self, w, batches)


class ReplicaPseudoLangevin:
    """R pseudo-Langevin chains (see ``sampler.PseudoLangevin``) at temperatures (R,), one norm sphere each: the
    temperatures of one start, or every start and temperature of one model (the weights (R, n) may differ).

    weights, masses, noise_variance: (R, n); ``generators``: one noise generator per replica. The step is
    ``batched_step.langevin_update``; ``step_capture`` (``batched_step.STEP_CAPTURES``) runs it eagerly, from a
    CUDA graph or compiled. The grad_fn is a ``ReplicaObjective`` (or anything with its ``draw`` and
    ``evaluate``), or a plain w -> (losses, gradients) function (eager only)."""

    def __init__(
        self,
        weights: torch.Tensor,
        grad_fn: ReplicaObjective | BatchGradFn,
        masses: torch.Tensor | MassMatrix,
        temperatures: Sequence[float],
        generators: Sequence[torch.Generator],
        noise_variance: torch.Tensor | None = None,
        dt: float = 1.0,
        m1: float = 0.1,
        constrained: bool = True,
        fixman: bool = True,
        step_capture: str = "none",
    ) -> None:
        for temperature in temperatures:
            check_temperature(temperature)
        if not 0 < m1 < 1:
            raise ValueError(f"m1 must be in (0, 1), got {m1}")
        if weights.dim() != 2 or len(temperatures) != len(weights) or len(generators) != len(weights):
            raise ValueError("weights (R, n), temperatures (R,) and generators (R,) must describe the same replicas")
        self.grad_fn = grad_fn
        self.generators = list(generators)
        self.dt, self.m1, self.constrained, self.fixman = dt, m1, constrained, fixman
        w = weights.detach().clone()  # (R, n)
        self.temperature = torch.tensor(list(temperatures), dtype=w.dtype, device=w.device)[:, None]  # (R, 1)
        self.q = chain_dot(w, w)  # (R, 1)
        if constrained and not bool((self.q > 0).all()):
            raise ConstraintError("the norm constraint needs a non-zero starting weight vector")
        self.c1 = math.sqrt(1.0 - m1**2)
        indexed = isinstance(grad_fn, ReplicaObjective) or (hasattr(grad_fn, "draw") and hasattr(grad_fn, "evaluate"))
        capture = resolve_capture(step_capture, w.device)
        if capture != "none" and not indexed:
            raise ValueError("a captured step needs a ReplicaObjective (its minibatches drawn outside the step)")
        self._draw: Callable[[], torch.Tensor | None] = grad_fn.draw if indexed else lambda: None  # type: ignore[union-attr]
        evaluate: IndexedGradFn = grad_fn.evaluate if indexed else lambda w, index: grad_fn(w)  # type: ignore[union-attr]
        self.runner = StepRunner(evaluate, capture)
        zeros = torch.zeros_like(w)
        self.state = ChainState(w, zeros, zeros.clone(), torch.zeros(len(w), dtype=w.dtype, device=w.device),
                                zeros.clone(), torch.zeros(len(w), dtype=torch.long, device=w.device))  # fmt: skip
        self.steps_done = 0
        self.set_masses(masses, noise_variance)
        self.state.loss, self.state.grad = self._gradient(self.w)  # (R,) in the model's dtype, (R, n)

    # the state's tensors, by name (a captured graph writes into them in place)
    @property
    def w(self) -> torch.Tensor:
        return self.state.w

    @property
    def p(self) -> torch.Tensor:
        return self.state.p

    @property
    def grad(self) -> torch.Tensor:
        return self.state.grad

    @property
    def loss(self) -> torch.Tensor:
        return self.state.loss

    @property
    def bad_steps(self) -> torch.Tensor:
        return self.state.bad_steps

    def _normal(self) -> torch.Tensor:
        size = self.w.shape[1]
        return torch.stack([  # each replica's own stream, one draw per step as the single sampler draws it
            torch.randn(size, generator=g, dtype=self.w.dtype, device=self.w.device) for g in self.generators
        ])  # fmt: skip

    def set_masses(self, masses: torch.Tensor | MassMatrix, noise_variance: torch.Tensor | None = None) -> None:
        """New masses (R, n) or a batched ``MassMatrix``; momenta redrawn from N(0, M T) (leaves the target of
        (w, p) invariant)."""
        self.mass = as_mass_matrix(masses, noise_variance).to(self.w)
        present = present_noise(self.mass, noise_variance, self.temperature, self.dt, self.m1)
        self.noise_factor = (self.temperature * self.m1**2 - present).clamp(min=0.0).sqrt()  # (R, n)
        p = self.temperature.sqrt() * self.mass.sqrt(self._normal())
        self.state.inverse_w = self.mass.inverse(self.w)  # (R, n) M^-1 w for the current w
        self.state.p = rattle(p, self.w, self.state.inverse_w) if self.constrained else p
        self._constants_changed()

    def _constants_changed(self) -> None:
        self.constants = StepConstants(self.mass, self.temperature, self.q, self.noise_factor, self.dt, self.c1,
                                       self.constrained, self.fixman)  # fmt: skip
        self.runner.reset()  # a graph holds the old tensors: capture again at the next step

    def _gradient(self, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        loss, grad = self.runner.gradient(w, self._draw())
        if self.constrained and self.fixman:
            inverse_w = self.state.inverse_w
            grad = grad + self.temperature * inverse_w / chain_dot(w, inverse_w)
        return loss, grad

    def check(self) -> None:
        """Raise ``ConstraintError`` if any replica's SHAKE step had a negative discriminant."""
        bad = self.bad_steps.tolist()
        if any(bad):
            temperatures = [f"{t:g}" for t, count in zip(self.temperature[:, 0].tolist(), bad, strict=True) if count]
            raise ConstraintError(
                f"SHAKE projection failed (negative discriminant) at T = {', '.join(temperatures)} within "
                f"{self.steps_done} steps: lower the minibatch noise share r, raise the variance floor, or use dt < 1"
            )

    def step(self) -> torch.Tensor:
        """One step of every replica (the single sampler's order). Returns the minibatch losses (R,)."""
        noise = self._normal()  # drawn outside the step, each replica from its own generators
        index = self._draw()
        self.runner.step(self.state, self.constants, noise, index)
        self.steps_done += 1
        return self.loss if self.runner.capture == "none" else self.loss.clone()  # a graph rewrites its buffer

    def kinetic_temperature(self) -> torch.Tensor:
        """p^T M^-1 p / n per replica: (R,)."""
        return (self.p * self.mass.inverse(self.p)).mean(-1)

    def replica_state(self, index: int) -> dict[str, Any]:
        """Replica ``index`` in ``PseudoLangevin.state_dict``'s format (a single sampler can continue it), every
        tensor its own copy: ``torch.save`` writes a view's whole storage, so a view of the batch would put every
        replica's state into each replica's checkpoint (R times the bytes: 10 GB per checkpoint of the ``small``
        preset's 10 chains with ~578 mass directions, where its own replica is 0.1 GB)."""
        state = {
            "w": self.w[index], "p": self.p[index], **self.mass.replica(index).state(),
            "noise_factor": self.noise_factor[index], "q": self.q[index, 0], "loss": self.loss[index],
            "grad": self.grad[index], "bad_steps": self.bad_steps[index], "steps_done": self.steps_done,
        }  # fmt: skip
        return {key: value.clone() if isinstance(value, torch.Tensor) else value for key, value in state.items()}

    def load_replica_state(self, index: int, state: dict[str, Any]) -> None:
        """Continue replica ``index`` from a ``PseudoLangevin.state_dict`` (or :meth:`replica_state`)."""
        for key in ("w", "p", "grad"):
            getattr(self.state, key)[index] = state[key].to(self.w)
        self.noise_factor[index] = state["noise_factor"].to(self.w)
        masses = [MassMatrix.from_state(state) if r == index else self.mass.replica(r) for r in range(len(self.w))]
        self.mass = MassMatrix.stack([m.to(self.w) for m in masses])
        self.state.inverse_w[index] = self.mass.inverse(self.w)[index]
        self.q[index, 0] = state["q"].to(self.w)
        self.loss[index] = state["loss"].to(self.loss)
        self.bad_steps[index] = state["bad_steps"].to(self.bad_steps)
        self.steps_done = int(state["steps_done"])
        self._constants_changed()
