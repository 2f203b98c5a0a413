"""Pseudo-Langevin samplers of p(w) ~ exp(-L(w)/T) over a flat weight vector (paper Appendix D).

``PseudoLangevin`` uses per-weight masses M_i = sigma_i^2 dt^2 / (4 r T m1^2) (sigma_i^2: minibatch
gradient variance, r: the share of the thermostat noise that minibatch noise supplies) and adds white
noise so the total per-step momentum noise is M T m1^2; friction c1 = sqrt(1 - m1^2). With
``constrained`` it stays on the sphere |w|^2 = Q: SHAKE-like position projection (smallest-|lambda|
root of a quadratic) and RATTLE-like momentum projection (w . M^-1 p = 0). ``sgld_step`` is the plain
SGLD baseline.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

GradFn = Callable[[torch.Tensor], tuple[float, torch.Tensor]]  # w (n,) -> (loss, grad (n,))


def _check_temperature(temperature: float) -> None:
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")


def masses_from_variance(
    grad_variance: torch.Tensor, temperature: float, dt: float, m1: float, r: float, floor_fraction: float = 1.0
) -> torch.Tensor:
    """M_i = sigma_i^2 dt^2 / (4 r T m1^2), floored at ``floor_fraction`` x the median mass.

    The floor (our choice, not the paper's) keeps weights with near-zero gradient variance from
    taking huge steps (step size ~ sqrt(T / M)) that would throw the constrained sampler off the sphere.
    """
    _check_temperature(temperature)
    masses = grad_variance * dt**2 / (4 * r * temperature * m1**2)  # (n,)
    floor = floor_fraction * masses.median()
    if not floor > 0:
        floor = torch.tensor(1.0, dtype=masses.dtype)
    return masses.clamp(min=float(floor))


@dataclass
class SamplerConfig:
    """Step parameters (authors' defaults: dt 1, m1 0.1)."""

    temperature: float
    dt: float = 1.0
    m1: float = 0.1  # c1 = sqrt(1 - m1^2) is the per-step momentum retention
    constrained: bool = True


class PseudoLangevin:
    """Langevin dynamics with per-weight masses; optionally constrained to |w|^2 = Q (Q from the start)."""

    def __init__(
        self,
        weights: torch.Tensor,
        grad_fn: GradFn,
        masses: torch.Tensor,
        config: SamplerConfig,
        grad_variance: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> None:
        _check_temperature(config.temperature)
        self.config = config
        self.grad_fn = grad_fn
        self.w = weights.detach().clone()  # (n,)
        self.masses = masses.detach().clone()  # (n,)
        self.q = float(self.w @ self.w)
        self.generator = generator
        temperature, dt, m1 = config.temperature, config.dt, config.m1
        self.c1 = math.sqrt(1.0 - m1**2)
        variance = torch.zeros_like(self.w) if grad_variance is None else grad_variance
        # Added noise: total momentum noise per step is M T m1^2, minibatch noise supplies sigma^2 dt^2 / 4.
        self.noise_scale = (self.masses * temperature * m1**2 - variance * dt**2 / 4).clamp(min=0).sqrt()
        self.p = self.masses.sqrt() * math.sqrt(temperature) * self._normal()  # thermal start
        self.loss, self.grad = grad_fn(self.w)
        if config.constrained:
            self.p = self._rattle(self.p)

    def _normal(self) -> torch.Tensor:
        return torch.randn(self.w.shape, generator=self.generator, dtype=self.w.dtype)

    def _rattle(self, p: torch.Tensor) -> torch.Tensor:
        """Remove the momentum component that would leave the sphere: w . M^-1 p = 0."""
        u = self.w / self.masses
        return p - (u @ p) / (u @ self.w) * self.w

    def _shake(self, w_old: torch.Tensor, w_free: torch.Tensor) -> torch.Tensor:
        """w_free + lambda M^-1 w_old with |.|^2 = Q, lambda the smallest-|lambda| root."""
        u = w_old / self.masses
        a, b, c = float(u @ u), 2.0 * float(w_free @ u), float(w_free @ w_free) - self.q
        disc = b * b - 4 * a * c
        if disc < 0:
            raise RuntimeError(
                f"SHAKE projection failed (negative discriminant {disc:.3g}): the step left the sphere "
                "too far; reduce dt or raise the masses"
            )
        root = math.sqrt(disc)
        # Numerically stable pair of roots; pick the one of smaller magnitude.
        qv = -0.5 * (b + math.copysign(root, b)) if b != 0 else -0.5 * root
        roots = [qv / a, c / qv] if qv != 0 else [0.0]
        lam = min(roots, key=abs)
        return w_free + lam * u

    def step(self) -> float:
        """One step (kick/2, thermostat, drift, kick/2); returns the loss at the new weights."""
        dt, constrained = self.config.dt, self.config.constrained
        p = self.p - 0.5 * dt * self.grad
        if constrained:
            p = self._rattle(p)
        p = self.c1 * p + self.noise_scale * self._normal()
        if constrained:
            p = self._rattle(p)
        w_new = self.w + dt * p / self.masses
        if constrained:
            w_new = self._shake(self.w, w_new)
            p = self.masses * (w_new - self.w) / dt
        self.w = w_new
        self.loss, self.grad = self.grad_fn(self.w)
        p = p - 0.5 * dt * self.grad
        self.p = self._rattle(p) if constrained else p
        return self.loss


def sgld_step(
    w: torch.Tensor,
    grad_fn: GradFn,
    step_size: float,
    temperature: float,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, float]:
    """Plain SGLD: w <- w - (eps/2) grad L + sqrt(eps T) xi (stationary density exp(-L/T))."""
    _check_temperature(temperature)
    loss, grad = grad_fn(w)
    noise = torch.randn(w.shape, generator=generator, dtype=w.dtype)
    return w - 0.5 * step_size * grad + math.sqrt(step_size * temperature) * noise, loss
