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
(1,297, 1,168 and 1,044 along the top three directions of the `small` preset's one-block d=64 transformer
at its ES weights, exactly; 578 of its 44,245 directions are above 6). Hence:

* ``mass_matrix.noise_spectrum`` gives the directions of C and their A_u exactly, from the per-sequence
  gradients (independent of T: A_u = u^T D^-1/2 Sigma D^-1/2 u with D = diag(sigma^2));
* :func:`safe_share` caps r so that the worst direction is off by at most ``tolerance``:
  r (A_max - 1) <= tolerance. The cap depends on the weights, not on T, so every temperature of a run
  started from the same weights uses the same r (no silent change between temperatures). The other way out
  is a mass matrix with those directions in it (``mass_matrix.noise_covariance_mass``): no cap on r;
* :func:`directional_kinetic_temperature` measures T_u from the momenta, for the report.
"""

from __future__ import annotations

import torch


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
