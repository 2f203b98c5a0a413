"""Tolerances derived from the computation, not from one machine's last digits.

Two correct implementations of a float64 computation agree only up to the rounding their different operation
orders make, and that depends on the CPU and the BLAS/LAPACK build (an AMD EPYC with MKL moved a sequence's
effective rank by 3e-9 relative where this machine agreed to 1e-10). The helpers here turn the size and the
conditioning of the problem into the tolerance a comparison may use, so that a test holds on any CPU and
still fails on a real error (which moves these quantities by 1e-4 or more).
"""

from __future__ import annotations

import torch

from analyzers.depth.probes import ranks_from_eigenvalues

UNIT_ROUNDOFF = torch.finfo(torch.float64).eps / 2  # u = 2^-53
# A backward-stable symmetric eigensolver returns eigenvalues within c * k * u * ||A||_2 of the exact ones
# (Demmel, Applied Numerical Linear Algebra, sec. 5.2, with Weyl's inequality); c covers the solver's own
# constant and the two solvers being compared, each off by that much.
SOLVER_CONSTANT = 8.0
# The first-order bound below is exact to first order; this margin covers the second-order terms.
SAFETY = 4.0


def eigenvalue_error(squared: torch.Tensor) -> torch.Tensor:
    """The absolute error ``(..., 1)`` a backward-stable solver may make in each eigenvalue of the Gram
    matrices whose eigenvalues are ``squared`` ``(..., k)``."""
    size = squared.shape[-1]
    return SOLVER_CONSTANT * size * UNIT_ROUNDOFF * squared.abs().amax(-1, keepdim=True)


def rank_rtol(squared: torch.Tensor) -> float:
    """Relative tolerance for stable and effective ranks computed from the eigenvalues ``squared`` ``(..., k)``
    of Gram matrices: the first-order change of each rank when every eigenvalue moves by the solver's error,
    largest over the matrices. Small eigenvalues dominate it (a singular value is the square root of an
    eigenvalue, so the Gram squares the condition number); an eigenvalue below the solver's error is read at
    that error, where its square root's slope is finite."""
    error = eigenvalue_error(squared.double())
    floored = torch.maximum(squared.double(), error).detach().requires_grad_(True)
    stable, erank = ranks_from_eigenvalues(floored)
    worst = 0.0
    for rank in (stable, erank):
        (slope,) = torch.autograd.grad(rank.sum(), floored, retain_graph=True)
        change = (slope.abs() * error).sum(-1) / rank.detach().abs().clamp_min(1e-300)
        worst = max(worst, float(change.max()))
    return SAFETY * worst


def sum_rtol(num_terms: int) -> float:
    """Relative tolerance for a float64 sum of ``num_terms`` same-signed terms in two orders: Higham's
    gamma_n = n u / (1 - n u) each way."""
    gamma = num_terms * UNIT_ROUNDOFF / (1 - num_terms * UNIT_ROUNDOFF)
    return SAFETY * 2 * gamma
