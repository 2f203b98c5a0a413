"""Analysis of sampled models: specific heat and its peak, errors against normalized temperature, per-layer
weight similarity q, and mean attention against the contact map (P@L and the paper's tolerant metric).

Pair rules (stated in every result): P@L ranks the pairs i < j with j - i >= ``min_separation`` by the
symmetrized mean attention and counts true contacts among the top L. The tolerant metric keeps pairs
with j - i > ``min_separation`` (strictly, as in the paper) and counts a predicted pair (i, j) as correct
when some true contact (i', j') with j' - i' > ``min_separation`` has |i - i'| <= Delta and |j - j'| <= Delta.
"""

from __future__ import annotations

import math

import numpy as np


def symmetrized_mean_attention(attention: np.ndarray) -> np.ndarray:
    """Mean over leading axes of (..., L, L) attention, symmetrized (A + A^T) / 2 -> (L, L)."""
    mean = attention.reshape(-1, *attention.shape[-2:]).mean(axis=0)
    return 0.5 * (mean + mean.T)


def _top_pairs(scores: np.ndarray, min_separation: int, count: int) -> np.ndarray:
    """The ``count`` highest-scoring pairs i < j with j - i >= min_separation, as (count, 2)."""
    i, j = np.triu_indices(len(scores), k=max(min_separation, 1))
    order = np.argsort(-scores[i, j], kind="stable")[:count]
    return np.stack([i[order], j[order]], axis=1)


def precision_at_l(
    scores: np.ndarray, contacts: np.ndarray, min_separation: int = 6, top: int | None = None
) -> float:
    """P@L: fraction of true contacts among the L (= ``top``) highest pairs with j - i >= min_separation."""
    top = len(scores) if top is None else top
    pairs = _top_pairs(scores, min_separation, top)
    return float(contacts[pairs[:, 0], pairs[:, 1]].mean())


def precision_chance_test(
    scores: np.ndarray,
    contacts: np.ndarray,
    min_separation: int = 6,
    top: int | None = None,
    permutations: int = 2000,
    seed: int = 0,
) -> dict[str, float]:
    """Does P@L beat chance? A shuffled-contact test: the contact labels are permuted over the candidate
    pairs (j - i >= min_separation), which keeps their number and makes any ranking a random one.

    Returns the observed precision, the chance level (contacts / candidate pairs), and the one-sided
    p-value (1 + #shuffles with precision >= observed) / (1 + permutations)."""
    top = len(scores) if top is None else top
    i, j = np.triu_indices(len(scores), k=max(min_separation, 1))
    labels = contacts[i, j].astype(bool)
    chosen = np.argsort(-scores[i, j], kind="stable")[:top]
    observed = float(labels[chosen].mean())
    rng = np.random.default_rng(seed)
    shuffled = np.array([rng.permutation(labels)[chosen].mean() for _ in range(permutations)])
    p_value = (1 + int((shuffled >= observed - 1e-12).sum())) / (1 + permutations)
    return {"precision": observed, "chance": float(labels.mean()), "p_value": float(p_value)}


def _dilate(mask: np.ndarray, delta: int) -> np.ndarray:
    """True where a True of ``mask`` lies within ``delta`` in both coordinates (a box filter by cumsums)."""
    if delta <= 0:
        return mask.copy()
    length = len(mask)
    padded = np.pad(mask.astype(np.int64), ((delta + 1, delta), (delta + 1, delta)))
    table = padded.cumsum(0).cumsum(1)
    size = 2 * delta + 1
    window = table[size:, size:] - table[:-size, size:] - table[size:, :-size] + table[:-size, :-size]
    return window[:length, :length] > 0


def tolerance_precision(
    scores: np.ndarray, contacts: np.ndarray, min_separation: int = 6, delta: int = 1, top: int | None = None
) -> float:
    """The paper's tolerant metric: among the top L pairs with j - i > min_separation, the fraction lying
    within ``delta`` of a true contact that is itself separated by more than min_separation."""
    length = len(scores)
    top = length if top is None else top
    pairs = _top_pairs(scores, min_separation + 1, top)
    index = np.arange(length)
    separated = contacts & (np.abs(index[:, None] - index[None, :]) > min_separation)
    near = _dilate(separated, delta)
    return float(near[pairs[:, 0], pairs[:, 1]].mean())


def specific_heat(losses: np.ndarray, temperature: float) -> float:
    """C = var(L) / T^2 over a sampled loss trace."""
    return float(np.var(losses) / temperature**2)


def peak_index(values: list[float]) -> int:
    """Index of the largest value (the specific-heat peak); NaNs ignored."""
    return int(np.nanargmax(np.asarray(values, dtype=float)))


def peakedness(values: list[float]) -> float:
    """max / mean of non-negative values (1 for a flat curve, up to n for a single spike)."""
    array = np.asarray(values, dtype=float)
    return float(np.nanmax(array) / max(float(np.nanmean(array)), 1e-300))


def is_interior_minimum(values: list[float]) -> bool:
    """Whether the smallest value is at neither end of the list."""
    best = int(np.nanargmin(np.asarray(values, dtype=float)))
    return 0 < best < len(values) - 1


def layer_similarities(snapshots: np.ndarray, slices: dict[str, slice]) -> dict[str, np.ndarray]:
    """Per layer, q = w_a . w_b / (|w_a| |w_b|) over all pairs a < b of the weight snapshots (k, n)."""
    result = {}
    k = len(snapshots)
    upper = np.triu_indices(k, 1)
    for name, part in slices.items():
        block = snapshots[:, part].astype(np.float64)  # (k, n_layer)
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        unit = block / np.maximum(norms, 1e-300)
        result[name] = (unit @ unit.T)[upper] if k > 1 else np.zeros(0)
    return result


def is_normalization_layer(name: str) -> bool:
    """LayerNorm gains and biases (the paper finds them the most conserved)."""
    return "norm" in name


def chance_p_value(hits: int, top: int, positives: int, pairs: int) -> float:
    """P(at least ``hits`` true pairs among ``top`` pairs drawn at random from ``pairs``, ``positives`` true).

    Under the null that attention ranks pairs at random, the hits among the top L are hypergeometric; this is
    its exact upper tail (no sampling error), the test a precision must pass to mean anything.
    """
    total = math.comb(pairs, top)
    tail = sum(math.comb(positives, k) * math.comb(pairs - positives, top - k)
               for k in range(max(hits, 0), min(top, positives) + 1))
    return float(tail / total) if total else 1.0


def contact_chance(contacts: np.ndarray, min_separation: int, delta: int | None = None) -> tuple[int, int]:
    """(true pairs, eligible pairs) for P@L (``delta`` None) or the tolerant metric (pairs within delta)."""
    length = len(contacts)
    index = np.arange(length)
    gap = np.abs(index[:, None] - index[None, :])
    if delta is None:
        eligible = np.triu(gap >= max(min_separation, 1))
        return int((contacts & eligible).sum()), int(eligible.sum())
    eligible = np.triu(gap >= min_separation + 1)
    near = _dilate(contacts & (gap > min_separation), delta)
    return int((near & eligible).sum()), int(eligible.sum())


def contact_scores(
    mean_attention: np.ndarray, contacts: np.ndarray, p_separation: int, tolerance_separation: int, delta: int
) -> dict[str, float]:
    """P@L and the tolerant precision of one (L, L) attention map (symmetrized here)."""
    symmetric = 0.5 * (mean_attention + mean_attention.T)
    return {
        "p_at_l": precision_at_l(symmetric, contacts, p_separation),
        "tolerance_precision": tolerance_precision(symmetric, contacts, tolerance_separation, delta),
    }


def best_block(
    attention_by_block: np.ndarray,
    contacts: np.ndarray,
    p_separation: int,
    tolerance_separation: int,
    delta: int,
    criterion: str = "tolerance_precision",
) -> tuple[int, list[dict[str, float]]]:
    """The block (layer) whose mean attention (layers, L, L) best matches the contacts, and every block's scores."""
    scores = [contact_scores(a, contacts, p_separation, tolerance_separation, delta) for a in attention_by_block]
    return int(np.argmax([s[criterion] for s in scores])), scores
