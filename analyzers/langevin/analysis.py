"""Analysis of sampled models: specific heat and its peak, errors against normalized temperature, per-layer
weight similarity q, and mean attention against the contact map (P@L and the paper's tolerant metric).

Pair rules (stated in every result), paper Sect. III.3: P@L ranks the pairs i < j with j - i >=
``min_separation`` by the symmetrized mean attention and counts true contacts among the top L; the paper's
P@L takes every off-diagonal pair (default separation 1), so it credits short-range (helical) contacts and
"prioritizes contacts close to the diagonal", which is why it reads higher than the tolerant metric. The
tolerant metric keeps pairs with j - i > ``min_separation`` (strictly, as in the paper) and counts a
predicted pair (i, j) as correct when some true contact (i', j') with j' - i' > ``min_separation`` has
|i - i'| <= Delta and |j - j'| <= Delta.

One chance rule for every contact verdict (:func:`contact_chance_test`): the contact labels are shuffled
among the pairs of the same sequence separation |i - j| (which keeps how many contacts each separation
has, so an attention map that merely favours the diagonal gains nothing), the metric is recomputed on the
shuffled maps for the same ranking, and the one-sided p-value is the share of shuffles that score at
least as high.
"""

from __future__ import annotations

import numpy as np


def _top_pairs(scores: np.ndarray, min_separation: int, count: int) -> np.ndarray:
    """The ``count`` highest-scoring pairs i < j with j - i >= min_separation, as (count, 2)."""
    i, j = np.triu_indices(len(scores), k=max(min_separation, 1))
    order = np.argsort(-scores[i, j], kind="stable")[:count]
    return np.stack([i[order], j[order]], axis=1)


def precision_at_l(
    scores: np.ndarray, contacts: np.ndarray, min_separation: int = 1, top: int | None = None
) -> float:
    """P@L (Sect. III.3): fraction of true contacts among the L (= ``top``) highest pairs with j - i >=
    min_separation (the paper: every off-diagonal pair, separation 1)."""
    top = len(scores) if top is None else top
    pairs = _top_pairs(scores, min_separation, top)
    return float(contacts[pairs[:, 0], pairs[:, 1]].mean())


def shuffled_contact_maps(
    contacts: np.ndarray, min_separation: int, permutations: int, rng: np.random.Generator
) -> np.ndarray:
    """``permutations`` upper-triangular maps (permutations, L, L) bool whose contact labels are those of
    ``contacts`` shuffled among the pairs of the same separation s = j - i >= min_separation (one diagonal
    at a time); pairs closer than ``min_separation`` are False."""
    length = len(contacts)
    shuffled = np.zeros((permutations, length, length), dtype=bool)
    for separation in range(max(min_separation, 1), length):
        rows = np.arange(length - separation)
        labels = contacts[rows, rows + separation].astype(bool)  # (n_s,) one diagonal
        order = np.argsort(rng.random((permutations, len(rows))), axis=1)  # a permutation per shuffle
        shuffled[:, rows, rows + separation] = labels[order]
    return shuffled


def contact_chance_test(
    scores: np.ndarray,
    contacts: np.ndarray,
    metric: str = "p_at_l",
    min_separation: int = 1,
    delta: int = 1,
    top: int | None = None,
    permutations: int = 1000,
    seed: int = 0,
) -> dict[str, float]:
    """Does a contact precision beat chance? The one rule of every contact verdict (module docstring).

    ``metric`` 'p_at_l' (pairs with j - i >= min_separation) or 'tolerance' (pairs with j - i >
    min_separation, hits within ``delta``). Returns the observed precision, the chance level (the mean
    precision over the shuffled maps) and the one-sided p-value (1 + #shuffles >= observed) / (1 + shuffles).
    """
    if metric not in ("p_at_l", "tolerance"):
        raise ValueError(f"metric must be 'p_at_l' or 'tolerance', got {metric!r}")
    length = len(scores)
    top = length if top is None else top
    upper = np.triu(contacts.astype(bool), 1)
    first = min_separation if metric == "p_at_l" else min_separation + 1
    pairs = _top_pairs(scores, first, top)  # (top, 2) the ranking under test, fixed
    rng = np.random.default_rng(seed)
    null = []
    for start in range(0, permutations, 250):  # chunks bound the memory of the (chunk, L, L) maps
        maps = shuffled_contact_maps(upper, first, min(250, permutations - start), rng)
        if metric == "tolerance":
            maps = _dilate(maps, delta)
        null.append(maps[:, pairs[:, 0], pairs[:, 1]].mean(axis=1))
    shuffled = np.concatenate(null)
    if metric == "p_at_l":
        observed = precision_at_l(scores, contacts, min_separation, top)
    else:
        observed = tolerance_precision(scores, contacts, min_separation, delta, top)
    p_value = (1 + int((shuffled >= observed - 1e-12).sum())) / (1 + permutations)
    return {"precision": float(observed), "chance": float(shuffled.mean()), "p_value": float(p_value)}


def _dilate(mask: np.ndarray, delta: int) -> np.ndarray:
    """True where a True of ``mask`` (..., L, L) lies within ``delta`` in both coordinates (a box filter by
    cumulative sums over the last two axes)."""
    if delta <= 0:
        return mask.copy()
    length = mask.shape[-1]
    lead = [(0, 0)] * (mask.ndim - 2)
    padded = np.pad(mask.astype(np.int64), [*lead, (delta + 1, delta), (delta + 1, delta)])
    table = padded.cumsum(-2).cumsum(-1)
    size = 2 * delta + 1
    window = (table[..., size:, size:] - table[..., :-size, size:] - table[..., size:, :-size]
              + table[..., :-size, :-size])  # fmt: skip
    return window[..., :length, :length] > 0


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
    """The block (layer) whose mean attention (layers, L, L) best matches the contacts, and every block's
    scores."""
    scores = [
        contact_scores(a, contacts, p_separation, tolerance_separation, delta) for a in attention_by_block
    ]
    return int(np.argmax([s[criterion] for s in scores])), scores
