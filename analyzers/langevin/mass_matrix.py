"""The sampler's mass matrix: per-weight masses plus, optionally, a low-rank term along the minibatch noise.

The paper's rule (Appendix D) gives each weight its own mass M_i = kappa sigma_i^2, kappa = c1^2 dt^2 / (r T
m1^2), so that the minibatch noise supplies the share r of the thermostat noise M T m1^2, if the noise were
independent across weights. It is not: a minibatch gradient is the mean of per-sequence gradients, so its
noise covariance Sigma = Cov_i(g_i) / batch lives in the span of the N training sequences' gradients, and
along its top directions it is ~1,000 times what the per-weight masses assume (thermostat.py). Those are also
the loss's stiff directions (Sigma is close to the Fisher matrix), where light masses make the integrator
heat.

``MassMatrix`` holds M = D^1/2 (I + V^T (Lambda - 1) V) D^1/2: the per-weight masses D (..., n) and, in the
D^-1/2-scaled coordinates, k orthonormal directions V (..., k, n) with factors Lambda (..., k) > 0. With k = 0
it is the paper's diagonal. :func:`noise_covariance_mass` takes V and Lambda from the exact minibatch-noise
covariance (per-sequence gradients): Lambda_j = u_j^T D^-1/2 Sigma D^-1/2 u_j kappa wherever that exceeds the
per-weight mass, so the minibatch noise supplies at most the share r along *every* direction, not only on
average, and r need not be capped by the worst direction. Every product is O(k n); nothing (n, n) is formed.
Leading dimensions batch replicas: (R, n), (R, k, n), (R, k).

The rules that set the masses live here too: :func:`masses_from_variance` (the paper's per-weight rule, its
variance floored by :func:`floored_variance`), the constraint's guard (:func:`guarded_masses`,
:func:`guarded_mass_matrix`: heavier masses while the thermal step is too long for SHAKE) and what a sampler
derives from its masses (:func:`as_mass_matrix`, :func:`present_noise`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


@dataclass
class MassMatrix:
    """M = D^1/2 (I + V^T (Lambda - 1) V) D^1/2 (see the module docstring); S = D^1/2 (I + V^T (Lambda^1/2 -
    1) V) is its square root (S S^T = M), used for the noise and for the scaled momenta S^-1 p ~ N(0, T I)."""

    diagonal: torch.Tensor  # D (..., n) > 0
    directions: torch.Tensor  # V (..., k, n), orthonormal rows in D^-1/2-scaled coordinates
    factors: torch.Tensor  # Lambda (..., k) > 0
    # the share of the thermostat noise M T m1^2 that the gradient's own noise supplies along V (...,): the
    # sampler adds the rest there (0: exact gradients, or no low-rank term)
    noise_share: torch.Tensor

    @classmethod
    def per_weight(cls, masses: torch.Tensor) -> MassMatrix:
        """The diagonal mass matrix (the paper's rule): no low-rank term."""
        batch = masses.shape[:-1]
        empty = masses.new_zeros((*batch, 0, masses.shape[-1]))
        return cls(masses, empty, masses.new_zeros((*batch, 0)), masses.new_zeros(batch))

    @property
    def rank(self) -> int:
        return self.directions.shape[-2]

    def _along(self, x: torch.Tensor, power: float) -> torch.Tensor:
        """(I + V^T (Lambda^power - 1) V) x, in the scaled coordinates."""
        if self.rank == 0:
            return x
        coefficients = torch.einsum("...kn,...n->...k", self.directions, x.to(self.directions))  # (..., k)
        weights = (self.factors**power - 1.0).to(coefficients) * coefficients
        return x + torch.einsum("...kn,...k->...n", self.directions, weights).to(x)

    def inverse(self, x: torch.Tensor) -> torch.Tensor:
        """M^-1 x."""
        root = self.diagonal.sqrt()
        return self._along(x / root, -1.0) / root

    def sqrt(self, x: torch.Tensor) -> torch.Tensor:
        """S x (a draw of N(0, M) from x ~ N(0, I))."""
        return self.diagonal.sqrt() * self._along(x, 0.5)

    def inverse_sqrt(self, x: torch.Tensor) -> torch.Tensor:
        """S^-1 x (momenta p ~ N(0, M T) become N(0, T I))."""
        return self._along(x / self.diagonal.sqrt(), -0.5)

    def low_rank_diagonal(self) -> torch.Tensor:
        """diag(V^T Lambda V) (..., n): each scaled coordinate's share of the low-rank term."""
        if self.rank == 0:
            return torch.zeros_like(self.diagonal)
        return torch.einsum("...kn,...k->...n", self.directions.to(self.diagonal) ** 2, self.factors)

    def trace_inverse(self) -> torch.Tensor:
        """tr(M^-1) = sum_i 1/D_i + sum_j (1/Lambda_j - 1) sum_i V_ji^2 / D_i: (...)."""
        diagonal_part = (1.0 / self.diagonal).sum(-1)
        if self.rank == 0:
            return diagonal_part
        along = (self.directions.to(self.diagonal) ** 2 / self.diagonal[..., None, :]).sum(-1)  # (..., k)
        return diagonal_part + ((1.0 / self.factors - 1.0) * along).sum(-1)

    def added_noise(self, x: torch.Tensor) -> torch.Tensor:
        """S (I + V^T ((1 - share)^1/2 - 1) V) x = D^1/2 (I + V^T ((Lambda (1 - share))^1/2 - 1) V) x
        (orthonormal V: the two low-rank factors multiply): for x ~ N(0, I), N(0, M) less the share the
        gradient's own noise supplies along V."""
        if self.rank == 0:
            return self.sqrt(x)
        kept = (self.factors * (1.0 - self.noise_share[..., None]).clamp(min=0.0)).sqrt() - 1.0  # (..., k)
        coefficients = torch.einsum("...kn,...n->...k", self.directions, x.to(self.directions))  # (..., k)
        along = torch.einsum("...kn,...k->...n", self.directions, kept.to(coefficients) * coefficients)
        return self.diagonal.sqrt() * (x + along.to(x))

    def scaled(self, factor: float) -> MassMatrix:
        """factor x M (the gradient's noise is then a share smaller by that factor)."""
        return MassMatrix(self.diagonal * factor, self.directions, self.factors, self.noise_share / factor)

    def without_gradient_noise(self) -> MassMatrix:
        """The same M for exact (full-batch) gradients: the sampler adds all of the noise."""
        return MassMatrix(self.diagonal, self.directions, self.factors, torch.zeros_like(self.noise_share))

    def to(self, like: torch.Tensor) -> MassMatrix:
        """On ``like``'s device and dtype; the directions keep theirs (float32: half the memory traffic of
        the O(k n) products, which dominate a step at k ~ 500)."""
        return MassMatrix(self.diagonal.to(like), self.directions.to(like.device), self.factors.to(like),
                          self.noise_share.to(like))  # fmt: skip

    def state(self) -> dict[str, torch.Tensor]:
        return {"masses": self.diagonal, "mass_directions": self.directions, "mass_factors": self.factors,
                "mass_noise_share": self.noise_share}  # fmt: skip

    @classmethod
    def from_state(cls, state: dict[str, torch.Tensor]) -> MassMatrix:
        return cls(
            state["masses"], state["mass_directions"], state["mass_factors"], state["mass_noise_share"]
        )

    @classmethod
    def stack(cls, masses: list[MassMatrix]) -> MassMatrix:
        """One batched matrix of R matrices; ranks padded with directions of factor 1 (no effect)."""
        rank = max(m.rank for m in masses)

        def padded(m: MassMatrix) -> tuple[torch.Tensor, torch.Tensor]:
            extra = rank - m.rank
            directions = torch.cat([m.directions, m.directions.new_zeros((extra, m.directions.shape[-1]))])
            return directions, torch.cat([m.factors, m.factors.new_ones(extra)])

        parts = [padded(m) for m in masses]
        return cls(
            torch.stack([m.diagonal for m in masses]),
            torch.stack([d for d, _ in parts]),
            torch.stack([f for _, f in parts]),
            torch.stack([m.noise_share for m in masses]),
        )

    def replica(self, index: int) -> MassMatrix:
        """Replica ``index`` of a batched matrix."""
        return MassMatrix(
            self.diagonal[index], self.directions[index], self.factors[index], self.noise_share[index]
        )


def floored_variance(variance: torch.Tensor, floor_fraction: float) -> torch.Tensor:
    """``variance`` (n,) floored at ``floor_fraction`` x its median (at its smallest positive value, or 1,
    when the median is 0): a weight whose minibatch gradient hardly varies (e.g. the output row of the mask
    token, never a target) would otherwise get a vanishing mass and an unbounded velocity sqrt(T / M_i)."""
    floor = floor_fraction * variance.median()
    if not floor > 0:
        positive = variance[variance > 0]
        floor = positive.min() if len(positive) else torch.tensor(1.0, dtype=variance.dtype)
    return variance.clamp(min=float(floor))


@dataclass
class NoiseSpectrum:
    """The minibatch-noise covariance Sigma at one w, from the per-sequence gradients (see
    :func:`noise_spectrum`)."""

    variance: torch.Tensor  # diag(Sigma) (n,)
    floored: torch.Tensor  # the same, floored at a fraction of its median: D (n,)
    directions: torch.Tensor  # eigenvectors of D^-1/2 Sigma D^-1/2 (k, n), k <= N - 1
    eigenvalues: torch.Tensor  # their eigenvalues (k,), descending: the amplification along each direction


def noise_spectrum(
    per_sequence_gradients: torch.Tensor, batch_size: int, floor_fraction: float = 1e-3
) -> NoiseSpectrum:
    """The minibatch-noise covariance of ``batch_size`` sequences drawn with replacement: Sigma = Cov_i(g_i) /
    batch_size over the N per-sequence gradients g_i (N, n), exactly (not estimated from a few minibatches,
    whose top eigenvalues sampling inflates ~1.5-2x here). diag(Sigma) is floored at ``floor_fraction`` x its
    median (:func:`floored_variance`); the eigenpairs are those of D^-1/2 Sigma D^-1/2: an eigenvalue is how
    many times the per-weight model underestimates the noise along its direction (thermostat.py's
    amplification)."""
    gradients = per_sequence_gradients.double()
    count = gradients.shape[0]
    centered = gradients - gradients.mean(0)
    variance = (centered**2).sum(0) / (count * batch_size)  # (n,)
    floored = floored_variance(variance, floor_fraction)
    # (N, n): scaled^T scaled = D^-1/2 Sigma D^-1/2
    scaled = centered / (floored.sqrt() * (count * batch_size) ** 0.5)
    # eigenpairs through the (N, N) Gram matrix: N << n, and 2.7x faster than an SVD of (N, n) at N = 1,000
    eigenvalues, vectors = torch.linalg.eigh(scaled @ scaled.T)  # ascending
    eigenvalues, vectors = eigenvalues.flip(0), vectors.flip(1)
    nonzero = eigenvalues > 1e-12 * eigenvalues[0].clamp(min=1e-300)  # centering leaves one null direction
    eigenvalues, vectors = eigenvalues[nonzero], vectors[:, nonzero]
    directions = (vectors.T @ scaled) / eigenvalues.sqrt()[:, None]  # (k, n), orthonormal rows
    return NoiseSpectrum(variance, floored, directions, eigenvalues)


def noise_covariance_mass(
    spectrum: NoiseSpectrum,
    temperature: float,
    dt: float = 1.0,
    m1: float = 0.1,
    r: float = 0.01,
    tolerance: float = 0.05,
) -> MassMatrix:
    """M = kappa D^1/2 (I + V^T (Lambda - 1) V) D^1/2 from the exact minibatch-noise covariance, keeping the
    directions where the per-weight rule would run more than ``tolerance`` hot: r (Lambda - 1) > tolerance
    (thermostat.py). Along them the minibatch noise c1^2 dt^2 Sigma is exactly the share r of the thermostat
    noise M T m1^2; along the others it is at most tolerance above r, the bound ``thermostat.safe_share``
    keeps by lowering r, kept here at the full r. kappa = c1^2 dt^2 / (r T m1^2) as in the per-weight rule (k
    = 0)."""
    check_temperature(temperature)
    if not 0 < r < 1:
        raise ValueError(f"the minibatch noise share r must be in (0, 1), got {r}")
    kept = r * (spectrum.eigenvalues - 1.0) > tolerance
    kappa = (1.0 - m1**2) * dt**2 / (r * temperature * m1**2)
    share = torch.tensor(r, dtype=spectrum.floored.dtype, device=spectrum.floored.device)
    directions = spectrum.directions[kept].float().contiguous()
    return MassMatrix(kappa * spectrum.floored, directions, spectrum.eigenvalues[kept].contiguous(), share)


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
    c1_squared = 1.0 - m1**2
    return (
        c1_squared
        * floored_variance(grad_variance.double(), floor_fraction)
        * dt**2
        / (r * temperature * m1**2)
    )


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
    return mass.scaled(scale), {
        "effective_r": float(mass.noise_share) / scale,
        "step_ratio": ratio / math.sqrt(scale),
        "mass_rank": mass.rank,
    }


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
    return masses * scale, {
        "variance_floor": floor,
        "effective_r": r / scale,
        "step_ratio": ratio / math.sqrt(scale),
    }


def as_mass_matrix(masses: torch.Tensor | MassMatrix, noise_variance: torch.Tensor | None) -> MassMatrix:
    """The masses as a ``MassMatrix``, positive; without gradient noise (exact gradients) it supplies no
    share."""
    mass = masses if isinstance(masses, MassMatrix) else MassMatrix.per_weight(masses.detach())
    if not bool((mass.diagonal > 0).all()) or not bool((mass.factors > 0).all()):
        raise ValueError("all masses must be positive")
    return mass if noise_variance is not None else mass.without_gradient_noise()


def present_noise(
    mass: MassMatrix,
    noise_variance: torch.Tensor | None,
    temperature: torch.Tensor | float,
    dt: float,
    m1: float,
) -> torch.Tensor:
    """Per scaled coordinate, the thermostat noise (of T m1^2 in all) that the gradient's per-weight noise
    sigma^2 already supplies outside the mass's low-rank directions: c1^2 dt^2 sigma_i^2 / D_i (the paper's
    rule) less the share that ``MassMatrix.added_noise`` takes off along V. (..., n)"""
    if noise_variance is None:
        return torch.zeros_like(mass.diagonal)
    per_weight = (1.0 - m1**2) * dt**2 * noise_variance.to(mass.diagonal) / mass.diagonal
    along_directions = mass.noise_share[..., None] * temperature * m1**2 * mass.low_rank_diagonal()
    return (per_weight - along_directions).clamp(min=0.0)
