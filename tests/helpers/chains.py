"""Synthetic Markov chains with known answers for the convergence checks and reports."""

from __future__ import annotations

import math

import numpy as np


def ar1(rng: np.random.Generator, phi: float, draws: int, chains: int = 2, shift: float = 0.0) -> np.ndarray:
    """Stationary AR(1) chains of unit variance, (chains, draws): integrated autocorrelation time
    (1 + phi) / (1 - phi) draws (phi 0: independent draws); the last chain moved by ``shift`` sd (two basins)."""
    noise = rng.standard_normal((chains, draws + 200))
    x = np.zeros_like(noise)
    for t in range(1, draws + 200):
        x[:, t] = phi * x[:, t - 1] + math.sqrt(1 - phi * phi) * noise[:, t]
    x = x[:, 200:]
    x[-1] += shift
    return x
