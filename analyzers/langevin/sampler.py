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

``SGLD`` is the plain stochastic-gradient Langevin baseline, w <- w - (eps/2) grad L + sqrt(eps T) xi.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from analyzers.langevin.mass_matrix import MassMatrix

GradFn = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]  # w (n,) -> (loss (), grad (n,))


class ConstraintError(ValueError):
    """The SHAKE projection has no real solution (negative discriminant): the norm cannot be kept."""


def check_temperature(temperature: float) -> None:
    """Temperatures must be positive (the Boltzmann weight exp(-L/T))."""
    if not temperature > 0 or not math.isfinite(temperature):
        raise ValueError(f"temperature must be a positive number, got {temperature}")


def masses_from_variance(
    grad_variance: torch.Tensor,
    temperature: float,
    dt: float = 1.0,
    m1: float = 0.1,
    r: float = 0.01,
    floor_fraction: float = 1e-3,
) -> torch.Tensor:
    """Per-weight masses M_i = c1^2 sigma_i^2 dt^2 / (r T m1^2) (see the module docstring).

    sigma_i^2 is floored at ``floor_fraction`` x its median: a weight whose minibatch gradient hardly
    varies (e.g. the output row of the mask token, never a target) would otherwise get a vanishing mass
    and an unbounded velocity sqrt(T / M_i), which also makes the SHAKE quadratic unsolvable.
    """
    check_temperature(temperature)
    if not 0 < r < 1:
        raise ValueError(f"the minibatch noise share r must be in (0, 1), got {r}")
    if not 0 < m1 < 1:
        raise ValueError(f"m1 must be in (0, 1), got {m1}")
    variance = grad_variance.double()
    floor = floor_fraction * variance.median()
    if not floor > 0:
        positive = variance[variance > 0]
        floor = positive.min() if len(positive) else torch.tensor(1.0, dtype=variance.dtype)
    c1_squared = 1.0 - m1**2
    return c1_squared * variance.clamp(min=float(floor)) * dt**2 / (r * temperature * m1**2)


def constrained_step_ratio(
    masses: torch.Tensor | MassMatrix, w: torch.Tensor, temperature: float, dt: float = 1.0
) -> float:
    """Thermal step over the room the SHAKE projection has: sqrt(dt^2 T tr M^-1) / (|w| cos a), with
    a the angle between w and M^-1 w (the direction SHAKE moves along). The projection fails (negative
    discriminant) once a step is comparable to |w| cos a; above ~0.03 failures appear in practice."""
    mass = masses if isinstance(masses, MassMatrix) else MassMatrix.per_weight(masses)
    direction = mass.inverse(w)
    cosine = float(w @ direction) / (float(w.norm()) * float(direction.norm()))
    step = math.sqrt(dt**2 * temperature * float(mass.trace_inverse()))
    return step / (float(w.norm()) * max(cosine, 1e-300))


def guarded_mass_matrix(
    mass: MassMatrix, w: torch.Tensor, temperature: float, dt: float = 1.0, max_step_ratio: float = 0.02
) -> tuple[MassMatrix, dict[str, float]]:
    """A mass matrix made safe for the constraint: scaled up (a smaller effective minibatch share) while the
    thermal step is above ``max_step_ratio`` x |w| cos a. Returns it and what was used."""
    ratio = constrained_step_ratio(mass, w, temperature, dt)
    scale = max(1.0, (ratio / max_step_ratio) ** 2)  # step ~ M^-1/2
    return mass.scaled(scale), {"effective_r": float(mass.noise_share) / scale, "step_ratio": ratio / math.sqrt(scale),
                                "mass_rank": mass.rank}  # fmt: skip


def guarded_masses(
    grad_variance: torch.Tensor,
    w: torch.Tensor,
    temperature: float,
    dt: float = 1.0,
    m1: float = 0.1,
    r: float = 0.01,
    floor_fraction: float = 1e-3,
    max_step_ratio: float = 0.02,
) -> tuple[torch.Tensor, dict[str, float]]:
    """:func:`masses_from_variance`, made safe for the constraint: while the thermal step is larger than
    ``max_step_ratio`` x |w| cos a (see :func:`constrained_step_ratio`) the variance floor is raised
    tenfold (up to the median); if that is not enough every mass is scaled up, which lowers the
    effective minibatch share r. Returns the masses and what was used (floor, effective r, ratio)."""
    floor = floor_fraction
    while True:
        masses = masses_from_variance(grad_variance, temperature, dt, m1, r, floor)
        ratio = constrained_step_ratio(masses, w, temperature, dt)
        if ratio <= max_step_ratio or floor >= 1.0:
            break
        floor = min(floor * 10.0, 1.0)
    scale = max(1.0, (ratio / max_step_ratio) ** 2)  # step ~ M^-1/2
    return masses * scale, {"variance_floor": floor, "effective_r": r / scale, "step_ratio": ratio / math.sqrt(scale)}


def as_mass_matrix(masses: torch.Tensor | MassMatrix, noise_variance: torch.Tensor | None) -> MassMatrix:
    """The masses as a ``MassMatrix``, positive; without gradient noise (exact gradients) it supplies no share."""
    mass = masses if isinstance(masses, MassMatrix) else MassMatrix.per_weight(masses.detach())
    if not bool((mass.diagonal > 0).all()) or not bool((mass.factors > 0).all()):
        raise ValueError("all masses must be positive")
    return mass if noise_variance is not None else mass.without_gradient_noise()


def present_noise(
    mass: MassMatrix, noise_variance: torch.Tensor | None, temperature: torch.Tensor | float, dt: float, m1: float
) -> torch.Tensor:
    """Per scaled coordinate, the thermostat noise (of T m1^2 in all) that the gradient's per-weight noise
    sigma^2 already supplies outside the mass's low-rank directions: c1^2 dt^2 sigma_i^2 / D_i (the paper's rule)
    less the share that ``MassMatrix.added_noise`` takes off along V. (..., n)"""
    if noise_variance is None:
        return torch.zeros_like(mass.diagonal)
    per_weight = (1.0 - m1**2) * dt**2 * noise_variance.to(mass.diagonal) / mass.diagonal
    along_directions = mass.noise_share[..., None] * temperature * m1**2 * mass.low_rank_diagonal()
    return (per_weight - along_directions).clamp(min=0.0)


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
        self.groups = None if groups is None else groups.to(self.w.device)
        self.num_groups = 1 if groups is None else int(groups.max()) + 1
        self.q = self._dot(self.w, self.w)
        if config.constrained and not bool((self.q > 0).all()):
            raise ConstraintError("the norm constraint needs a non-zero starting weight vector")
        self.c1 = math.sqrt(1.0 - config.m1**2)
        self.bad_steps = torch.zeros((), dtype=torch.long, device=self.w.device)
        self.steps_done = 0
        self.set_masses(masses, noise_variance)
        self.loss, self.grad = self._gradient(self.w)

    # -- masses and noise -------------------------------------------------------------------------------
    def set_masses(self, masses: torch.Tensor | MassMatrix, noise_variance: torch.Tensor | None = None) -> None:
        """New masses (e.g. after re-estimating the variance); momenta are redrawn from N(0, M T).

        Redrawing p from its conditional distribution leaves the target of (w, p) invariant."""
        self.mass = as_mass_matrix(masses, noise_variance).to(self.w)
        temperature, dt, m1 = self.config.temperature, self.config.dt, self.config.m1
        present = present_noise(self.mass, noise_variance, temperature, dt, m1)
        self.noise_factor = (temperature * m1**2 - present).clamp(min=0.0).sqrt()  # (n,)
        self.p = math.sqrt(temperature) * self.mass.sqrt(self._normal())
        self._inverse_w = self.mass.inverse(self.w)  # M^-1 w for the current w (RATTLE, SHAKE, Fixman)
        if self.config.constrained:
            self.p = self._rattle(self.p)

    def _normal(self) -> torch.Tensor:
        return torch.randn(self.w.shape, generator=self.generator, dtype=self.w.dtype, device=self.w.device)

    # -- constraint -------------------------------------------------------------------------------------
    def _dot(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """x . y per constraint group: () for one group, (G,) for several."""
        if self.groups is None:
            return x @ y
        return torch.zeros(self.num_groups, dtype=x.dtype, device=x.device).index_add_(0, self.groups, x * y)

    def _spread(self, values: torch.Tensor) -> torch.Tensor:
        """Per-group values onto the weights (identity for one group)."""
        return values if self.groups is None else values[self.groups]

    def _gradient(self, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Loss and gradient at ``w``, the sampler's current weights (whose M^-1 w is cached)."""
        loss, grad = self.grad_fn(w)
        if self.config.constrained and self.config.fixman:
            inverse_w = self._inverse_w
            grad = grad + self.config.temperature * inverse_w / self._spread(self._dot(w, inverse_w))
        return loss, grad

    def _rattle(self, p: torch.Tensor) -> torch.Tensor:
        """Remove the momentum component that would leave the sphere: w . M^-1 p = 0."""
        inverse_w = self._inverse_w
        return p - self._spread(self._dot(inverse_w, p) / self._dot(inverse_w, self.w)) * self.w

    def _shake(self, w_old: torch.Tensor, w_free: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(w_free + lambda M^-1 w_old with |.|^2 = Q, lambda spread over the weights), lambda the
        smallest-|lambda| root of a lambda^2 + b lambda + c = 0."""
        direction = self._inverse_w  # M^-1 w_old
        a = self._dot(direction, direction)
        b = 2.0 * self._dot(w_free, direction)
        c = self._dot(w_free, w_free) - self.q
        discriminant = b * b - 4.0 * a * c
        self.bad_steps += (discriminant < 0).long().sum()
        sign = torch.where(b >= 0, 1.0, -1.0).to(b)
        big = -0.5 * (b + sign * discriminant.clamp(min=0.0).sqrt())
        lam = torch.where(big != 0, c / big, torch.zeros_like(c))  # c / big is always the smaller root
        lam = self._spread(lam)
        return w_free + lam * direction, lam

    def check(self) -> None:
        """Raise ``ConstraintError`` if any SHAKE step since the start had a negative discriminant."""
        bad = int(self.bad_steps)
        if bad:
            raise ConstraintError(
                f"SHAKE projection failed {bad} times in {self.steps_done} steps (negative discriminant): the "
                "unconstrained step left the sphere |w|^2 = Q too far to be projected back. Lower the "
                "minibatch noise share r (heavier masses, smaller steps), raise the variance floor, or use dt < 1"
            )

    # -- dynamics ---------------------------------------------------------------------------------------
    def step(self) -> torch.Tensor:
        """One step: kick/2, thermostat, drift (+SHAKE), new gradient, kick/2 (+RATTLE). Returns the loss."""
        dt, constrained = self.config.dt, self.config.constrained
        p = self.p - 0.5 * dt * self.grad
        if constrained:
            p = self._rattle(p)
        p = self.c1 * p + self.mass.added_noise(self.noise_factor * self._normal())
        if constrained:
            p = self._rattle(p)
        w_free = self.w + dt * self.mass.inverse(p)
        if constrained:
            w_new, lam = self._shake(self.w, w_free)
            p = p + lam * self.w / dt  # the constraint impulse: p = M (w_new - w_old) / dt
        else:
            w_new = w_free
        self.w = w_new
        self._inverse_w = self.mass.inverse(self.w)
        self.loss, self.grad = self._gradient(self.w)
        p = p - 0.5 * dt * self.grad
        self.p = self._rattle(p) if constrained else p
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
        self.grad_fn, self.step_size, self.temperature, self.generator = grad_fn, step_size, temperature, generator
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
