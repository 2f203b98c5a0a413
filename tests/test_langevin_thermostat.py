"""The sampler is at its temperature along every direction when minibatch noise is correlated (known answer:
a quadratic loss, whose exact distribution is Gaussian with variance T / h along each eigen-direction)."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from analyzers.langevin.dynamics import PseudoLangevin, SamplerConfig
from analyzers.langevin.mass_matrix import masses_from_variance, noise_spectrum
from analyzers.langevin.thermostat import directional_kinetic_temperature, safe_share

REPLICAS, DIM, RANK, M1 = 24, 30, 2, 0.3


def amplification_per_weight_masses(grad_samples: torch.Tensor, k: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    """The top-k noise directions and amplifications of gradient samples (B, n), each sample standing for one
    sequence of a minibatch of one."""
    spectrum = noise_spectrum(grad_samples, 1, floor_fraction=1e-9)
    return spectrum.directions[:k], spectrum.eigenvalues[:k]


def _problem(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Stiffness (n,), per-replica noise directions (R, DIM, RANK), their amplitudes, white amplitudes (n,).

    REPLICAS independent copies of a DIM-dimensional quadratic, stacked so that one sampler runs them all;
    each copy's minibatch noise is mostly rank RANK (strongly correlated across weights) plus a little
    independent noise, as in a network's minibatch gradients."""
    generator = torch.Generator().manual_seed(seed)
    stiffness = torch.linspace(1.0, 4.0, DIM, dtype=torch.float64).repeat(REPLICAS)
    directions = torch.linalg.qr(torch.randn(REPLICAS, DIM, RANK, dtype=torch.float64, generator=generator))[0]
    amplitudes = torch.tensor([1.0, 0.7], dtype=torch.float64)[:RANK]
    white = torch.full((REPLICAS * DIM,), 0.05, dtype=torch.float64)
    return stiffness, directions, amplitudes, white


def _noisy_gradient(stiffness: torch.Tensor, directions: torch.Tensor, amplitudes: torch.Tensor, white: torch.Tensor,
                    generator: torch.Generator) -> Any:
    def grad_fn(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = torch.randn(REPLICAS, RANK, 1, dtype=torch.float64, generator=generator)
        correlated = (directions @ (amplitudes[:, None] * z)).reshape(-1)
        noise = correlated + white * torch.randn(w.shape, dtype=torch.float64, generator=generator)
        return 0.5 * (stiffness * w * w).sum(), stiffness * w + noise

    return grad_fn


def _sample(r: float, steps: int, seed: int = 1) -> dict[str, torch.Tensor | float]:
    stiffness, directions, amplitudes, white = _problem()
    generator = torch.Generator().manual_seed(seed)
    grad_fn = _noisy_gradient(stiffness, directions, amplitudes, white, generator)
    zero = torch.zeros(REPLICAS * DIM, dtype=torch.float64)
    grad_samples = torch.stack([grad_fn(zero)[1] for _ in range(400)])  # what the analyzer estimates from
    variance = grad_samples.var(0)
    top, amplification = amplification_per_weight_masses(grad_samples, k=3)
    # T chosen so the median mass is ~60 x the stiffness (small discretization bias): same dynamics for any r
    temperature = (1 - M1**2) * float(variance.median()) / (r * M1**2 * 60 * float(stiffness.median()))
    masses = masses_from_variance(variance, temperature, dt=1.0, m1=M1, r=r, floor_fraction=1e-9)
    sampler = PseudoLangevin(
        zero, grad_fn, masses, SamplerConfig(temperature, dt=1.0, m1=M1, constrained=False),
        noise_variance=variance, generator=generator,
    )  # fmt: skip
    positions, momenta = [], []
    for step in range(steps):
        sampler.step()
        if step >= 1000 and step % 5 == 0:
            positions.append(sampler.w.clone())
            momenta.append(sampler.p.clone())
    w, p = torch.stack(positions), torch.stack(momenta)
    # per eigen-direction of the loss (the coordinates): h Var(w) / T, pooled over the replicas
    eigen_ratio = (w.var(0) * stiffness / temperature).view(REPLICAS, DIM).mean(0)
    # along each replica's noise directions u: Var(u . w) / (T u^T H^-1 u)
    along = torch.einsum("srd,rdk->srk", w.view(-1, REPLICAS, DIM), directions).var(0)
    exact = torch.einsum("rdk,d->rk", directions**2, 1.0 / stiffness[:DIM]) * temperature
    return {
        "eigen_ratio": eigen_ratio, "noise_ratio": (along / exact).mean(0), "temperature": temperature,
        "amplification": float(amplification[0]), "kinetic_top": directional_kinetic_temperature(p, masses, top),
        "kinetic_mean": float((p**2 / masses).mean()),
    }  # fmt: skip


def test_thermostat_amplification_of_low_rank_noise_is_large() -> None:
    stiffness, directions, amplitudes, white = _problem()
    grad_fn = _noisy_gradient(stiffness, directions, amplitudes, white, torch.Generator().manual_seed(0))
    zero = torch.zeros(REPLICAS * DIM, dtype=torch.float64)
    _, amplification = amplification_per_weight_masses(torch.stack([grad_fn(zero)[1] for _ in range(400)]), k=3)
    # one replica's rank-RANK noise concentrates its variance on RANK of DIM directions: A ~ DIM / RANK
    assert 0.6 * DIM / RANK < float(amplification[0]) < 1.5 * DIM
    white_only = torch.randn(400, 200, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    assert float(amplification_per_weight_masses(white_only, k=1)[1][0]) < 3.0  # independent noise: A ~ 1


def test_thermostat_paper_share_overheats_the_noise_directions_and_the_average_hides_it() -> None:
    result = _sample(r=0.5, steps=6000)
    temperature, amplification = float(result["temperature"]), float(result["amplification"])
    hot = float(result["kinetic_top"][0]) / temperature  # type: ignore[index]
    # at most the no-coupling bound 1 - r + r A (the loss's curvature spreads the excess to other directions)
    assert 1.5 < hot <= 1.2 * (1 - 0.5 + 0.5 * amplification)
    assert abs(float(result["kinetic_mean"]) / temperature - 1.0) < 0.25  # the average cannot see it


@pytest.mark.slow  # suite time: over 10 s on 2 cores
def test_thermostat_safe_share_samples_every_eigen_direction_at_t() -> None:
    probe = _sample(r=0.5, steps=1200)
    r = safe_share(0.5, float(probe["amplification"]), tolerance=0.05)
    assert r < 0.5 / 10
    result = _sample(r=r, steps=30000)
    eigen_ratio = result["eigen_ratio"]
    noise_ratio = result["noise_ratio"]
    assert isinstance(eigen_ratio, torch.Tensor) and isinstance(noise_ratio, torch.Tensor)
    assert float((eigen_ratio - 1).abs().max()) < 0.10, eigen_ratio
    assert float((noise_ratio - 1).abs().max()) < 0.10, noise_ratio
    kinetic = result["kinetic_top"]
    assert isinstance(kinetic, torch.Tensor)
    assert float((kinetic / float(result["temperature"]) - 1).abs().max()) < 0.10
    assert math.isfinite(float(result["kinetic_mean"]))

