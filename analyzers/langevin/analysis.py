"""Attention-versus-contact metrics and thermodynamic summaries."""

from __future__ import annotations

import numpy as np


def symmetrized_mean_attention(attention: np.ndarray) -> np.ndarray:
    """Mean over leading axes of (..., L, L) attention, symmetrized (A + A^T) / 2 -> (L, L)."""
    mean = attention.reshape(-1, *attention.shape[-2:]).mean(axis=0)
    return 0.5 * (mean + mean.T)


def _top_pairs(scores: np.ndarray, min_separation: int, count: int) -> np.ndarray:
    """The ``count`` highest-scoring pairs i<j with j - i >= min_separation, as (count, 2)."""
    i, j = np.triu_indices(len(scores), k=max(min_separation, 1))
    order = np.argsort(-scores[i, j], kind="stable")[:count]
    return np.stack([i[order], j[order]], axis=1)


def precision_at_l(scores: np.ndarray, contacts: np.ndarray, min_separation: int = 6, top: int | None = None) -> float:
    """P@L: fraction of true contacts among the L (= ``top``) highest pairs with |i-j| >= min_separation."""
    top = len(scores) if top is None else top
    pairs = _top_pairs(scores, min_separation, top)
    return float(contacts[pairs[:, 0], pairs[:, 1]].mean())


def tolerance_precision(
    scores: np.ndarray, contacts: np.ndarray, min_separation: int = 6, delta: int = 1, top: int | None = None
) -> float:
    """The paper's tolerant metric: among the top pairs with |i-j| > min_separation, the fraction lying
    within ``delta`` of a true contact (|i-i'| <= delta and |j-j'| <= delta, contact also separated)."""
    length = len(scores)
    top = length if top is None else top
    pairs = _top_pairs(scores, min_separation + 1, top)
    index = np.arange(length)
    separated = contacts & (np.abs(index[:, None] - index[None, :]) > min_separation)
    # Dilate the contact map by delta in both coordinates (a box filter via shifted ORs).
    near = np.zeros_like(separated)
    padded = np.pad(separated, delta)
    for di in range(2 * delta + 1):
        for dj in range(2 * delta + 1):
            near |= padded[di : di + length, dj : dj + length]
    return float(near[pairs[:, 0], pairs[:, 1]].mean())


def specific_heat(losses: np.ndarray, temperature: float) -> float:
    """C = var(L) / T^2 over a sampled loss trace."""
    return float(np.var(losses) / temperature**2)
