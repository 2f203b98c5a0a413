"""Depth probe numerics against float64 references: effective rank of a low-rank wide matrix, and the
angular distance of a state to itself."""

from __future__ import annotations

import math

import torch

from analyzers.depth.instrument import CleanRecord
from analyzers.depth.probes import ProbeAccumulator, angular_and_ranks, effective_rank_from_gram


def _reference_erank(matrix: torch.Tensor) -> float:
    singular = torch.linalg.svdvals(matrix.double())
    p = singular / singular.sum()
    p = p[p > 0]
    return math.exp(float(-(p * p.log()).sum()))


def test_effective_rank_of_a_rank_25_matrix_at_width_1280_matches_float64() -> None:
    torch.manual_seed(0)
    tokens, dim, rank = 600, 1280, 25
    scales = torch.logspace(0, -3, rank)  # a wide spread of singular values, as trained states have
    matrix = (torch.randn(tokens, rank) * scales) @ torch.randn(rank, dim)
    states = [matrix.reshape(1, tokens, dim).float(), (2 * matrix).reshape(1, tokens, dim).float()]
    acc = ProbeAccumulator(num_layers=1, objective="masked", pre_ln=True)
    angular_and_ranks(acc, CleanRecord(states=states), torch.ones(1, tokens, dtype=torch.bool))
    assert acc.grams is not None
    # The Gram spectrum of a float32 state, computed in float64: the reference is the SVD of that state.
    flat = states[0].reshape(tokens, dim)
    reference = _reference_erank(flat)
    error = abs(effective_rank_from_gram(acc.grams[0]) - reference)
    float32_error = abs(effective_rank_from_gram((flat.T @ flat).double()) - reference)
    assert error < 1e-4 * reference and float32_error > 10 * error, (error, float32_error)
    angular = acc.sums["angular_distance"]
    assert float(angular[0, 0]) == 0.0 and float(angular[1, 1]) == 0.0
