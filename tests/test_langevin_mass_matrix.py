"""The low-rank mass matrix against dense linear algebra, the exact minibatch-noise spectrum against the covariance
it stands for, and the sampler with that mass at its temperature along every direction where the per-weight
masses run hot (known answer: a quadratic loss, Gaussian with variance T / h along each eigen-direction)."""

from __future__ import annotations

import pytest
import torch

from analyzers.langevin.dynamics import PseudoLangevin, SamplerConfig
from analyzers.langevin.mass_matrix import MassMatrix, masses_from_variance, noise_covariance_mass, noise_spectrum
from analyzers.langevin.thermostat import directional_kinetic_temperature

N, RANK = 12, 3


def _random_mass(seed: int = 0, share: float = 0.3) -> MassMatrix:
    generator = torch.Generator().manual_seed(seed)
    diagonal = torch.rand(N, dtype=torch.float64, generator=generator) + 0.5
    directions = torch.linalg.qr(torch.randn(N, RANK, dtype=torch.float64, generator=generator))[0].T  # (k, n)
    factors = torch.tensor([40.0, 5.0, 0.3], dtype=torch.float64)
    return MassMatrix(diagonal, directions, factors, torch.tensor(share, dtype=torch.float64))


def _dense(mass: MassMatrix) -> torch.Tensor:
    root = torch.diag(mass.diagonal.sqrt())
    inner = torch.eye(N, dtype=torch.float64) + mass.directions.T @ torch.diag(mass.factors - 1.0) @ mass.directions
    return root @ inner @ root


def _apply(function: object, size: int = N) -> torch.Tensor:
    """The matrix of a linear map, column by column."""
    return torch.stack([function(column) for column in torch.eye(size, dtype=torch.float64)], dim=1)  # type: ignore[operator]


def test_mass_matrix_products_match_dense_linear_algebra() -> None:
    mass = _random_mass()
    dense = _dense(mass)
    torch.testing.assert_close(_apply(mass.inverse), torch.linalg.inv(dense))
    root = _apply(mass.sqrt)
    torch.testing.assert_close(root @ root.T, dense)  # S S^T = M
    torch.testing.assert_close(_apply(mass.inverse_sqrt) @ root, torch.eye(N, dtype=torch.float64))
    torch.testing.assert_close(mass.trace_inverse(), torch.linalg.inv(dense).trace())
    # the added noise leaves out the share along V: Cov = M - share D^1/2 V^T Lambda V D^1/2
    added = _apply(mass.added_noise)
    low_rank = mass.directions.T @ torch.diag(mass.factors) @ mass.directions
    expected = dense - 0.3 * torch.diag(mass.diagonal.sqrt()) @ low_rank @ torch.diag(mass.diagonal.sqrt())
    torch.testing.assert_close(added @ added.T, expected)
    torch.testing.assert_close(_apply(mass.scaled(4.0).inverse), torch.linalg.inv(4.0 * dense))


def test_mass_matrix_batched_replicas_match_each_matrix() -> None:
    masses = [_random_mass(0), MassMatrix.per_weight(torch.linspace(1.0, 2.0, N, dtype=torch.float64))]
    stacked = MassMatrix.stack(masses)
    x = torch.randn(2, N, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    for method in ("inverse", "sqrt", "inverse_sqrt", "added_noise"):
        batched = getattr(stacked, method)(x)
        for index, mass in enumerate(masses):
            torch.testing.assert_close(batched[index], getattr(mass, method)(x[index]))
    torch.testing.assert_close(stacked.replica(0).inverse(x[0]), masses[0].inverse(x[0]))


def test_noise_spectrum_is_the_whitened_minibatch_covariance() -> None:
    generator = torch.Generator().manual_seed(1)
    mixing = torch.randn(N, N, dtype=torch.float64, generator=generator)
    gradients = torch.randn(40, N, dtype=torch.float64, generator=generator) @ mixing
    batch = 4
    spectrum = noise_spectrum(gradients, batch, floor_fraction=1e-9)
    variance, directions, eigenvalues = spectrum.floored, spectrum.directions, spectrum.eigenvalues
    torch.testing.assert_close(spectrum.variance, variance)
    covariance = torch.cov(gradients.T, correction=0) / batch  # what a minibatch of 4 drawn with replacement carries
    torch.testing.assert_close(variance, covariance.diagonal())
    whitened = covariance / torch.outer(variance.sqrt(), variance.sqrt())
    expected = torch.linalg.eigvalsh(whitened).flip(0)
    torch.testing.assert_close(eigenvalues, expected[: len(eigenvalues)])
    torch.testing.assert_close(directions @ whitened @ directions.T, torch.diag(eigenvalues))


# -- the sampler at T along every direction ------------------------------------------------------------------
REPLICAS, DIM, SEQUENCES, BATCH, M1 = 12, 30, 300, 4, 0.3


def _problem() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Stiffness (n,), per-sequence gradient noise (N, n) and the rank-2 noise directions (R, DIM, 2).

    REPLICAS copies of a DIM-dimensional quadratic stacked into one weight vector; the minibatch gradient is the
    quadratic's plus the mean of BATCH per-sequence noise vectors drawn with replacement (mostly rank 2 per
    copy, as a network's per-sequence gradients are mostly low rank), so the noise is known exactly."""
    generator = torch.Generator().manual_seed(0)
    stiffness = torch.linspace(1.0, 4.0, DIM, dtype=torch.float64).repeat(REPLICAS)
    directions = torch.linalg.qr(torch.randn(REPLICAS, DIM, 2, dtype=torch.float64, generator=generator))[0]
    z = torch.randn(SEQUENCES, REPLICAS, 2, 1, dtype=torch.float64, generator=generator)
    correlated = (directions @ (torch.tensor([2.0, 1.4], dtype=torch.float64)[:, None] * z)).reshape(SEQUENCES, -1)
    per_sequence = correlated + 0.1 * torch.randn(SEQUENCES, REPLICAS * DIM, dtype=torch.float64, generator=generator)
    return stiffness, per_sequence - per_sequence.mean(0), directions


def _sample(mass_rule: str, r: float, steps: int) -> dict[str, torch.Tensor | float]:
    stiffness, per_sequence, directions = _problem()
    generator = torch.Generator().manual_seed(1)

    def grad_fn(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch = torch.randint(SEQUENCES, (BATCH,), generator=generator)
        return 0.5 * (stiffness * w * w).sum(), stiffness * w + per_sequence[batch].mean(0)

    spectrum = noise_spectrum(per_sequence, BATCH, floor_fraction=1e-9)
    variance, top = spectrum.variance, spectrum.directions
    # T chosen so the median mass is ~60 x the stiffness (small discretization bias): same dynamics for any r
    temperature = (1 - M1**2) * float(variance.median()) / (r * M1**2 * 60 * float(stiffness.median()))
    if mass_rule == "noise-covariance":
        mass = noise_covariance_mass(spectrum, temperature, m1=M1, r=r)
    else:
        mass = MassMatrix.per_weight(masses_from_variance(variance, temperature, m1=M1, r=r, floor_fraction=1e-9))
    zero = torch.zeros(REPLICAS * DIM, dtype=torch.float64)
    sampler = PseudoLangevin(zero, grad_fn, mass, SamplerConfig(temperature, m1=M1, constrained=False),
                             variance, generator)  # fmt: skip
    positions, scaled = [], []
    for step in range(steps):
        sampler.step()
        if step >= 1000 and step % 5 == 0:
            positions.append(sampler.w.clone())
            scaled.append(sampler.mass.inverse_sqrt(sampler.p))
    w = torch.stack(positions)
    eigen_ratio = (w.var(0) * stiffness / temperature).view(REPLICAS, DIM).mean(0)
    along = torch.einsum("srd,rdk->srk", w.view(-1, REPLICAS, DIM), directions).var(0)
    exact = torch.einsum("rdk,d->rk", directions**2, 1.0 / stiffness[:DIM]) * temperature
    kinetic = directional_kinetic_temperature(torch.stack(scaled), torch.ones_like(zero), top[:3]) / temperature
    return {"eigen_ratio": eigen_ratio, "noise_ratio": (along / exact).mean(0), "kinetic_top": kinetic,
            "rank": mass.rank}  # fmt: skip


@pytest.mark.slow  # suite time: over 10 s on 2 cores
def test_noise_covariance_mass_samples_every_direction_at_t_where_per_weight_masses_run_hot() -> None:
    hot = _sample("per-weight", r=0.5, steps=4000)
    kinetic_hot = hot["kinetic_top"]
    assert isinstance(kinetic_hot, torch.Tensor) and float(kinetic_hot[0]) > 1.5  # the paper's rule at r = 0.5
    result = _sample("noise-covariance", r=0.5, steps=30000)
    # the correlated directions, and the few white ones that 300 sequences make 10% hot at r = 0.5
    assert 2 * REPLICAS <= int(result["rank"]) <= 3 * REPLICAS
    for key in ("eigen_ratio", "noise_ratio", "kinetic_top"):
        ratio = result[key]
        assert isinstance(ratio, torch.Tensor)
        assert float((ratio - 1).abs().max()) < 0.10, (key, ratio)
