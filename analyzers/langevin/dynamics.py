"""Samplers of p(w) ~ exp(-L(w)/T) over a flat weight vector (paper Appendix D), on any torch device.

``PseudoLangevin`` is Langevin dynamics with one fresh minibatch gradient per step and per-weight masses
set from the minibatch-gradient variance so that the total noise is thermalized at T (the paper's rule):
per step the momentum receives friction c1 = sqrt(1 - m1^2), the minibatch noise of a full kick
(variance c1^2 sigma^2 dt^2 after the friction) and added white noise of variance k^2, with

    M_i = c1^2 sigma_i^2 dt^2 / (r T m1^2),   k_i^2 = M_i T m1^2 - c1^2 sigma_i^2 dt^2 = (1 - r) M_i T m1^2,

so the minibatch noise supplies the share r of the thermostat noise M T m1^2 and p stays distributed as
N(0, M T). (The authors' integrator draws two minibatches per step and counts sigma^2 dt^2 / 4 per half
kick; the rule is the same, written for this integrator.)

With ``constrained`` the weights stay on the sphere |w|^2 = Q: after the drift a SHAKE multiplier
(the smallest-|lambda| root of a quadratic) moves w along M^-1 w_old back onto the sphere, and RATTLE
projections keep the momenta tangent (w . M^-1 p = 0), also at the start. A negative discriminant means
the step left the sphere too far for the projection: it raises ``ConstraintError`` (checked at the
sampler's ``check`` calls so a GPU does not synchronize every step). With non-uniform masses the
constrained dynamics samples exp(-L/T) times the M-metric surface factor sqrt(w^T M^-1 w); the Fixman
term (T/2) log(w^T M^-1 w) added to the potential (``fixman``, default on) removes that bias.

The masses may also be a ``mass_matrix.MassMatrix`` with a low-rank term along the minibatch noise (so that
the noise is at its share r along every direction, not only per weight); every M^-1 and M^1/2 above is then
that matrix's, and the added noise is what it leaves for the sampler to supply.

``ReplicaPseudoLangevin`` is R such chains of one model advanced together (for a GPU, where one small model
leaves most of the device idle): each at its own temperature, with its own minibatches and noise drawn from
its own generators in the single sampler's order, one model call per step (``objective.ReplicaObjective``).
Both take their step from ``integrator.langevin_update``; with the same seeds the replicas give the single
chains' numbers to float tolerance (tested; the objective's vmapped gradient sums in another order).
``LockstepReplicas`` advances several of them, each of its own weight shape (an experiment's attention model
and its feed-forward baseline), in one call per step (``integrator.AdvanceGroups``: on CUDA one graph replay
for the whole experiment), each giving the numbers it gives stepped alone.

``SGLD`` is the plain stochastic-gradient Langevin baseline, w <- w - (eps/2) grad L + sqrt(eps T) xi.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from analyzers.langevin.integrator import (
    ChainState,
    IndexedGradFn,
    OneChain,
    StepConstants,
    StepRunner,
    chain_dot,
    fixman_force,
    langevin_update,
    rattle,
    resolve_capture,
)
from analyzers.langevin.mass_matrix import MassMatrix, as_mass_matrix, check_temperature, present_noise
from analyzers.langevin.objective import ReplicaObjective

GradFn = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]  # w (n,) -> (loss (), grad (n,))
# w (R, n) -> (loss (R,), grad (R, n))
BatchGradFn = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


class ConstraintError(ValueError):
    """The SHAKE projection has no real solution (negative discriminant): the norm cannot be kept."""


@dataclass
class SamplerConfig:
    """Step parameters (authors' defaults: dt 1, m1 0.1)."""

    temperature: float
    dt: float = 1.0
    m1: float = 0.1  # c1 = sqrt(1 - m1^2) is the per-step momentum retention
    constrained: bool = True
    fixman: bool = True  # remove the M-metric surface factor (constrained, non-uniform masses)


class PseudoLangevin:
    """Langevin dynamics with per-weight masses; optionally constrained to |w|^2 = Q (Q from the start).

    weights, masses: (n,) tensors on the sampler's device (float64 recommended: SHAKE solves for a
    norm to ~1e-12). ``noise_variance``: per-weight variance of the gradient noise that ``grad_fn``
    itself carries (minibatch noise; None for an exact gradient), subtracted from the added noise.
    """

    def __init__(
        self,
        weights: torch.Tensor,
        grad_fn: GradFn,
        masses: torch.Tensor | MassMatrix,
        config: SamplerConfig,
        noise_variance: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
        groups: torch.Tensor | None = None,
    ) -> None:
        check_temperature(config.temperature)
        if not 0 < config.m1 < 1:
            raise ValueError(f"m1 must be in (0, 1), got {config.m1}")
        self.config = config
        self.grad_fn = grad_fn
        self.generator = generator
        self.w = weights.detach().clone()  # (n,)
        # groups (n,) long: independent norm constraints |w_g|^2 = Q_g per group (None: one for all weights).
        self.reduction = OneChain(None if groups is None else groups.to(self.w.device))
        self.q = self.reduction.dot(self.w, self.w)
        if config.constrained and not bool((self.q > 0).all()):
            raise ConstraintError("the norm constraint needs a non-zero starting weight vector")
        self.c1 = math.sqrt(1.0 - config.m1**2)
        self.bad_steps = torch.zeros((), dtype=torch.long, device=self.w.device)
        self.steps_done = 0
        self.set_masses(masses, noise_variance)
        self.loss, self.grad = self._gradient(self.w)

    # -- masses and noise -------------------------------------------------------------------------------
    def set_masses(
        self, masses: torch.Tensor | MassMatrix, noise_variance: torch.Tensor | None = None
    ) -> None:
        """New masses (e.g. after re-estimating the variance); momenta are redrawn from N(0, M T).

        Redrawing p from its conditional distribution leaves the target of (w, p) invariant."""
        self.mass = as_mass_matrix(masses, noise_variance).to(self.w)
        temperature, dt, m1 = self.config.temperature, self.config.dt, self.config.m1
        present = present_noise(self.mass, noise_variance, temperature, dt, m1)
        self.noise_factor = (temperature * m1**2 - present).clamp(min=0.0).sqrt()  # (n,)
        self.p = math.sqrt(temperature) * self.mass.sqrt(self._normal())
        self._inverse_w = self.mass.inverse(self.w)  # M^-1 w for the current w (RATTLE, SHAKE, Fixman)
        if self.config.constrained:
            self.p = rattle(self.p, self.w, self._inverse_w, self.reduction)

    def _normal(self) -> torch.Tensor:
        return torch.randn(self.w.shape, generator=self.generator, dtype=self.w.dtype, device=self.w.device)

    def _gradient(self, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Loss and gradient at ``w``, the sampler's current weights (whose M^-1 w is cached)."""
        loss, grad = self.grad_fn(w)
        if self.config.constrained and self.config.fixman:
            grad = grad + fixman_force(self.config.temperature, w, self._inverse_w, self.reduction)
        return loss, grad

    def check(self) -> None:
        """Raise ``ConstraintError`` if any SHAKE step since the start had a negative discriminant."""
        bad = int(self.bad_steps)
        if bad:
            raise ConstraintError(
                f"SHAKE projection failed {bad} times in {self.steps_done} steps (negative discriminant): "
                f"the "
                "unconstrained step left the sphere |w|^2 = Q too far to be projected back. Lower the "
                "minibatch noise share r (heavier masses, smaller steps), raise the variance floor, or use "
                "dt < 1"
            )

    # -- dynamics ---------------------------------------------------------------------------------------
    def step(self) -> torch.Tensor:
        """One step (``integrator.langevin_update``: kick/2, thermostat, drift (+SHAKE), new gradient, kick/2
        (+RATTLE)). Returns the loss."""
        config = self.config
        constants = StepConstants(
            self.mass,
            config.temperature,
            self.q,
            self.noise_factor,
            config.dt,
            self.c1,
            config.constrained,
            config.fixman,
            self.reduction,
        )
        noise = self._normal()  # drawn before the new gradient, as the step always drew it
        self.w, self.p, self.grad, self.loss, self._inverse_w, bad = langevin_update(
            self.w, self.p, self.grad, self._inverse_w, constants, noise, None, lambda w, _: self.grad_fn(w))
        self.bad_steps = self.bad_steps + bad
        self.steps_done += 1
        return self.loss

    def kinetic_temperature(self) -> float:
        """p^T M^-1 p / n (equals T at equilibrium, up to the constrained direction)."""
        return float((self.p * self.mass.inverse(self.p)).mean())

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue exactly (with the generator state saved by the caller)."""
        return {
            "w": self.w, "p": self.p, **self.mass.state(), "noise_factor": self.noise_factor, "q": self.q,
            "loss": self.loss, "grad": self.grad, "bad_steps": self.bad_steps, "steps_done": self.steps_done,
        }  # fmt: skip

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from :meth:`state_dict`."""
        device = self.w.device
        for key in ("w", "p", "noise_factor", "q", "loss", "grad", "bad_steps"):
            setattr(self, key, state[key].to(device))
        self.mass = MassMatrix.from_state(state).to(self.w)
        self._inverse_w = self.mass.inverse(self.w)
        self.steps_done = int(state["steps_done"])


class SGLD:
    """Plain SGLD (the baseline): w <- w - (eps/2) grad L + sqrt(eps T) xi; stationary density exp(-L/T)
    for small eps when the gradient noise is small against the injected noise."""

    def __init__(
        self,
        weights: torch.Tensor,
        grad_fn: GradFn,
        step_size: float,
        temperature: float,
        generator: torch.Generator | None = None,
    ) -> None:
        check_temperature(temperature)
        if not step_size > 0:
            raise ValueError(f"SGLD step size must be > 0, got {step_size}")
        self.w = weights.detach().clone()
        self.grad_fn, self.step_size, self.temperature, self.generator = (
            grad_fn,
            step_size,
            temperature,
            generator,
        )
        self.steps_done = 0
        self.loss = torch.zeros((), dtype=self.w.dtype, device=self.w.device)

    def step(self) -> torch.Tensor:
        self.loss, grad = self.grad_fn(self.w)
        noise = torch.randn(self.w.shape, generator=self.generator, dtype=self.w.dtype, device=self.w.device)
        self.w = self.w - 0.5 * self.step_size * grad + math.sqrt(self.step_size * self.temperature) * noise
        self.steps_done += 1
        return self.loss

    def check(self) -> None:
        """Nothing to check (no constraint)."""

    def state_dict(self) -> dict[str, Any]:
        return {"w": self.w, "loss": self.loss, "steps_done": self.steps_done}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.w, self.loss = state["w"].to(self.w.device), state["loss"].to(self.w.device)
        self.steps_done = int(state["steps_done"])


class ReplicaPseudoLangevin:
    """R pseudo-Langevin chains (see ``PseudoLangevin``) at temperatures (R,), one norm sphere each: the
    temperatures of one start, or every start and temperature of one model (the weights (R, n) may differ).

    weights, masses, noise_variance: (R, n); ``generators``: one noise generator per replica. The step is
    ``integrator.langevin_update``; ``step_capture`` (``integrator.STEP_CAPTURES``) runs it eagerly, from a
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
            raise ValueError(
                "weights (R, n), temperatures (R,) and generators (R,) must describe the same replicas"
            )
        self.grad_fn = grad_fn
        self.generators = list(generators)
        self.dt, self.m1, self.constrained, self.fixman = dt, m1, constrained, fixman
        w = weights.detach().clone()  # (R, n)
        self.temperature = torch.tensor(list(temperatures), dtype=w.dtype, device=w.device)[:, None]  # (R, 1)
        self.q = chain_dot(w, w)  # (R, 1)
        if constrained and not bool((self.q > 0).all()):
            raise ConstraintError("the norm constraint needs a non-zero starting weight vector")
        self.c1 = math.sqrt(1.0 - m1**2)
        indexed = isinstance(grad_fn, ReplicaObjective) or (
            hasattr(grad_fn, "draw") and hasattr(grad_fn, "evaluate")
        )
        capture = resolve_capture(step_capture, w.device)
        if capture != "none" and not indexed:
            raise ValueError(
                "a captured step needs a ReplicaObjective (its minibatches drawn outside the step)"
            )
        self.indexed = indexed  # its minibatches drawn outside the step: it can be captured
        draw = grad_fn.draw if indexed else lambda: None  # type: ignore[union-attr]
        self._draw: Callable[[], torch.Tensor | None] = draw
        # w (R, n), minibatch indices -> (losses (R,), gradients (R, n)): what the step calls
        self.evaluate: IndexedGradFn = (
            grad_fn.evaluate if indexed else lambda w, index: grad_fn(w)  # type: ignore[union-attr]
        )
        self.runner = StepRunner([self.evaluate], capture)
        zeros = torch.zeros_like(w)
        self.state = ChainState(
            w,
            zeros,
            zeros.clone(),
            torch.zeros(len(w), dtype=w.dtype, device=w.device),
            zeros.clone(),
            torch.zeros(len(w), dtype=torch.long, device=w.device),
        )
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

    def set_masses(
        self, masses: torch.Tensor | MassMatrix, noise_variance: torch.Tensor | None = None
    ) -> None:
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
        # New constants: any runner's graph (this sampler's, a lockstep's) was captured over the old ones and
        # the state's old tensors, and captures again at its next step (``StepRunner`` compares by identity).
        self.constants = StepConstants(
            self.mass,
            self.temperature,
            self.q,
            self.noise_factor,
            self.dt,
            self.c1,
            self.constrained,
            self.fixman,
        )

    def _gradient(self, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        loss, grad = self.evaluate(w, self._draw())
        if self.constrained and self.fixman:
            grad = grad + fixman_force(self.temperature, w, self.state.inverse_w)
        return loss, grad

    def check(self) -> None:
        """Raise ``ConstraintError`` if any replica's SHAKE step had a negative discriminant."""
        bad = self.bad_steps.tolist()
        if any(bad):
            temperatures = [
                f"{t:g}" for t, count in zip(self.temperature[:, 0].tolist(), bad, strict=True) if count
            ]
            raise ConstraintError(
                f"SHAKE projection failed (negative discriminant) at T = {', '.join(temperatures)} within "
                f"{self.steps_done} steps: lower the minibatch noise share r, raise the variance floor, or "
                f"use dt < 1"
            )

    def draw_inputs(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """A step's random inputs, drawn outside it, each replica from its own generators in the single
        sampler's order: the thermostat's normal draws (R, n), then the minibatch indices (R, batch) or
        None."""
        noise = self._normal()
        return noise, self._draw()

    def step(self) -> torch.Tensor:
        """One step of every replica (the single sampler's order). Returns the minibatch losses (R,)."""
        return step_groups([self], self.runner)[0]

    def kinetic_temperature(self) -> torch.Tensor:
        """p^T M^-1 p / n per replica: (R,)."""
        return (self.p * self.mass.inverse(self.p)).mean(-1)

    def replica_state(self, index: int) -> dict[str, Any]:
        """Replica ``index`` in ``PseudoLangevin.state_dict``'s format (a single sampler can continue it),
        every tensor its own copy: ``torch.save`` writes a view's whole storage, so a view of the batch would
        put every replica's state into each replica's checkpoint (R times the bytes: 10 GB per checkpoint of
        the ``small`` preset's 10 chains with ~578 mass directions, where its own replica is 0.1 GB)."""
        state = {
            "w": self.w[index], "p": self.p[index], **self.mass.replica(index).state(),
            "noise_factor": self.noise_factor[index], "q": self.q[index, 0], "loss": self.loss[index],
            "grad": self.grad[index], "bad_steps": self.bad_steps[index], "steps_done": self.steps_done,
        }  # fmt: skip
        return {
            key: value.clone() if isinstance(value, torch.Tensor) else value for key, value in state.items()
        }

    def load_replica_state(self, index: int, state: dict[str, Any]) -> None:
        """Continue replica ``index`` from a ``PseudoLangevin.state_dict`` (or :meth:`replica_state`)."""
        for key in ("w", "p", "grad"):
            getattr(self.state, key)[index] = state[key].to(self.w)
        self.noise_factor[index] = state["noise_factor"].to(self.w)
        masses = [
            MassMatrix.from_state(state) if r == index else self.mass.replica(r) for r in range(len(self.w))
        ]
        self.mass = MassMatrix.stack([m.to(self.w) for m in masses])
        self.state.inverse_w[index] = self.mass.inverse(self.w)[index]
        self.q[index, 0] = state["q"].to(self.w)
        self.loss[index] = state["loss"].to(self.loss)
        self.bad_steps[index] = state["bad_steps"].to(self.bad_steps)
        self.steps_done = int(state["steps_done"])
        self._constants_changed()


def step_groups(samplers: Sequence[ReplicaPseudoLangevin], runner: StepRunner) -> list[torch.Tensor]:
    """One step of every sampler's replicas by ``runner`` (its ``AdvanceGroups`` built over their
    ``evaluate``, in this order): each sampler's random inputs drawn from its own generators, then one call of
    the runner for all of them (one graph replay when captured). Each sampler's minibatch losses (R,)."""
    inputs = [sampler.draw_inputs() for sampler in samplers]
    runner.step([sampler.state for sampler in samplers], [sampler.constants for sampler in samplers],
                [noise for noise, _ in inputs], [index for _, index in inputs])  # fmt: skip
    for sampler in samplers:
        sampler.steps_done += 1
    # a graph rewrites its buffers at the next replay
    return [sampler.loss if runner.capture == "none" else sampler.loss.clone() for sampler in samplers]


class LockstepReplicas:
    """Several ``ReplicaPseudoLangevin`` (groups of chains, each of its own weight shape: an experiment's
    attention model and its feed-forward baseline) advanced in one call per step: one ``StepRunner`` over all
    of them, so on CUDA one captured graph, one replay per step of the whole experiment, where each sampler's
    own runner would replay one graph per group. Each sampler keeps its state, constants and generators (its
    masses set, its replicas resumed, its own way); a group's numbers are those of the group stepped alone,
    bit for bit eagerly. ``step_capture``: ``integrator.STEP_CAPTURES``, resolved for the samplers'
    device."""

    def __init__(self, samplers: Sequence[ReplicaPseudoLangevin], step_capture: str = "none") -> None:
        self.samplers = list(samplers)
        if not self.samplers:
            raise ValueError("no samplers to step in lockstep")
        devices = {sampler.w.device for sampler in self.samplers}
        if len(devices) > 1:
            raise ValueError(f"samplers in lockstep must share a device, got {sorted(map(str, devices))}")
        if len({sampler.steps_done for sampler in self.samplers}) > 1:
            raise ValueError("samplers in lockstep must stand at the same step")
        capture = resolve_capture(step_capture, devices.pop())
        if capture != "none" and not all(sampler.indexed for sampler in self.samplers):
            raise ValueError(
                "a captured step needs a ReplicaObjective (its minibatches drawn outside the step)"
            )
        self.runner = StepRunner([sampler.evaluate for sampler in self.samplers], capture)

    @property
    def steps_done(self) -> int:
        return self.samplers[0].steps_done

    def step(self) -> list[torch.Tensor]:
        """One step of every replica of every sampler: each sampler's minibatch losses (R,)."""
        return step_groups(self.samplers, self.runner)
