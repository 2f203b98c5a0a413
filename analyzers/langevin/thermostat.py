"""Is the sampler at its temperature along every direction? Correlated minibatch noise, per direction.

The paper's mass rule (Appendix D) sets M_i from each weight's own minibatch-gradient variance sigma_i^2
so that the minibatch noise supplies a share r of the thermostat noise M T m1^2. That treats the noise
as independent across weights. It is not: minibatch noise is low rank. In the scaled velocity
x = M^-1/2 p the per-step noise the minibatch injects has covariance C = c1^2 dt^2 M^-1/2 Sigma M^-1/2,
which the per-weight rule assumes to be r T m1^2 I. Along a unit direction u the stationary kinetic
temperature is then (friction m1^2 removes what is injected)

    T_u = T (1 - r) + u^T C u / m1^2 = T (1 - r + r A_u),    A_u = u^T C u / (r T m1^2),

(the bound without the loss's curvature, which spreads part of the excess to other directions),
A_u the *amplification*: how many times the per-weight model underestimates the noise along u
(~1,500-2,800 along the top directions of the paper's one-block d=64 model). Hence:

* :func:`noise_directions` finds the leading directions of C from minibatch-gradient samples and
  their A_u (independent of T: A_u = u^T D^-1/2 Sigma D^-1/2 u / mean-diagonal with D = diag(sigma^2));
* :func:`safe_share` caps r so that the worst direction is off by at most ``tolerance``:
  r (A_max - 1) <= tolerance. The cap depends on the weights, not on T, so every temperature of a run
  started from the same weights uses the same r (no silent change between temperatures);
* :func:`directional_kinetic_temperature` measures T_u from the momenta, for the report.
"""

from __future__ import annotations

import torch


def noise_directions(grad_samples: torch.Tensor, masses: torch.Tensor, k: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    """(directions (k, n), amplification (k,)) of the minibatch noise in the scaled velocity M^-1/2 p.

    grad_samples: (B, n) minibatch gradients at one w. The directions are the top-k eigenvectors of
    M^-1/2 Sigma M^-1/2 (Sigma their sample covariance); the amplification is each eigenvalue over the
    mean diagonal of that matrix, i.e. over what the per-weight model puts on every direction when the
    masses follow sigma_i^2 (A_u = 1 everywhere for independent noise, up to sampling error)."""
    samples = grad_samples.double()
    centered = (samples - samples.mean(0)) / masses.double().sqrt()
    batches = centered.shape[0]
    # eigenvalues of centered^T centered / (B-1) = squared singular values / (B-1); no (n, n) matrix
    _, singular, vh = torch.linalg.svd(centered, full_matrices=False)
    eigen = singular**2 / max(batches - 1, 1)
    diagonal_mean = (centered**2).sum(0).mean() / max(batches - 1, 1)
    k = min(k, len(eigen))
    return vh[:k], eigen[:k] / diagonal_mean.clamp(min=1e-300)


def amplification_per_weight_masses(grad_samples: torch.Tensor, k: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`noise_directions` for masses proportional to each weight's own gradient variance (the paper's rule)."""
    variance = grad_samples.double().var(0).clamp(min=1e-300)
    return noise_directions(grad_samples, variance, k)


def safe_share(r: float, amplification: float, tolerance: float = 0.05) -> float:
    """The minibatch noise share to use: ``r``, lowered so that r (A_max - 1) <= ``tolerance``."""
    if amplification <= 1.0:
        return r
    return min(r, tolerance / (amplification - 1.0))


def directional_kinetic_temperature(
    momenta: torch.Tensor, masses: torch.Tensor, directions: torch.Tensor
) -> torch.Tensor:
    """Mean (u . M^-1/2 p)^2 over momenta samples (S, n) for each unit direction u (k, n): (k,) temperatures."""
    scaled = momenta.double() / masses.double().sqrt()
    return ((scaled @ directions.double().T) ** 2).mean(0)
