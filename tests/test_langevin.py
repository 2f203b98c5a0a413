"""Tests of the Langevin analyzers: structure, design, model counts, training, samplers, metrics, registry."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from analyzers.base import NotRunnable, RunContext
from analyzers.langevin import analysis, design, structure
from analyzers.langevin.model import CompactTransformer, ModelConfig, PoolingFeedForward, count_parameters
from analyzers.langevin.sampler import PseudoLangevin, SamplerConfig, sgld_step
from analyzers.langevin.train import make_splits, masked_loss, noam_lr
from analyzers.registry import get


def test_structure_ideal_bundle_is_symmetric_with_long_range_contacts() -> None:
    contacts = structure.ideal_four_helix_bundle()
    assert contacts.shape == (86, 86) and contacts.dtype == bool
    assert (contacts == contacts.T).all() and not contacts.diagonal().any()
    i, j = np.nonzero(np.triu(contacts))
    assert (j - i >= 12).sum() > 20  # helix-helix packing


def test_structure_missing_file_and_chain_errors(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        structure.contact_map_from_file(tmp_path / "none.pdb")
    pdb = tmp_path / "two.pdb"
    pdb.write_text(
        "ATOM      1  CA  ALA A   1       0.000   0.000   0.000  1.00  0.00           C\n"
        "ATOM      2  CA  ALA A   2       3.800   0.000   0.000  1.00  0.00           C\n"
        "ATOM      3  CA  ALA A   3      20.000   0.000   0.000  1.00  0.00           C\nEND\n"
    )
    contacts = structure.contact_map_from_file(pdb, chain="A")
    assert contacts[0, 1] and not contacts[0, 2]
    with pytest.raises(ValueError, match="chain 'Z' not found"):
        structure.contact_map_from_file(pdb, chain="Z")


def test_design_swap_delta_matches_full_energy_and_composition_kept() -> None:
    contacts = structure.ideal_four_helix_bundle()
    interactions = design.interaction_matrix(0)
    assert np.allclose(interactions, interactions.T)
    rng = np.random.default_rng(1)
    seq = design.encode(structure.ACBP_SEQUENCE)
    for _ in range(20):
        i, j = rng.integers(0, 86, size=2)
        swapped = seq.copy()
        swapped[[i, j]] = swapped[[j, i]]
        full = design.energy(contacts, interactions, np.stack([seq, swapped]))
        assert design.swap_delta(contacts, interactions, seq, int(i), int(j)) == pytest.approx(full[1] - full[0])
        seq = swapped


def test_design_tempering_exact_composition_and_lower_energy_at_lower_temperature() -> None:
    contacts = structure.ideal_four_helix_bundle()
    composition = design.encode(structure.ACBP_SEQUENCE)
    report = design.simulated_tempering(contacts, design.interaction_matrix(0), composition, 30, [3.0, 1.5, 0.7])
    assert report.sequences.shape == (30, 86)
    assert (np.sort(report.sequences, axis=1) == np.sort(composition)).all()
    assert report.mean_energy[2] < report.mean_energy[1] < report.mean_energy[0]
    assert 0 < report.mean_pairwise_identity < 1


def test_model_parameter_counts_match_table_a1() -> None:
    for layers, d, m, thousands in [(1, 26, 104, 8), (1, 64, 256, 44), (4, 14, 56, 9), (4, 64, 256, 169)]:
        model = CompactTransformer(ModelConfig(embed_dim=d, hidden_dim=m, num_layers=layers))
        assert round(count_parameters(model) / 1000) == thousands
    assert round(count_parameters(PoolingFeedForward(ModelConfig(embed_dim=64, hidden_dim=320))) / 1000) == 174


def test_model_returns_row_stochastic_attention() -> None:
    model = CompactTransformer(ModelConfig(embed_dim=8, hidden_dim=16, num_layers=2))
    out = model(torch.randint(0, 21, (3, 86)), return_attention=True)
    assert out["logits"].shape == (3, 86, 21) and out["attention"].shape == (3, 2, 86, 86)
    assert torch.allclose(out["attention"].sum(-1), torch.ones(3, 2, 86), atol=1e-5)


def test_train_masks_and_loss_definitions() -> None:
    sequences = np.random.default_rng(0).integers(0, 20, size=(50, 86))
    train_split, _, test_split = make_splits(sequences, (30, 10, 10), seed=0)
    assert (train_split.inputs[train_split.mask] == 20).all()
    assert 0.08 < train_split.mask.float().mean() < 0.22
    logits = torch.nn.functional.one_hot(test_split.targets, 21).float() * 50
    loss, error = masked_loss(logits, test_split)
    assert float(loss) < 1e-6 and float(error) == 0.0
    assert noam_lr(4000, 64, 4000) == pytest.approx(64**-0.5 * 4000**-0.5)


def test_sampler_unconstrained_quadratic_variance_is_t_over_k() -> None:
    stiffness, temperature = 4.0, 0.5

    def grad_fn(w: torch.Tensor) -> tuple[float, torch.Tensor]:
        return float(0.5 * stiffness * (w @ w)), stiffness * w

    generator = torch.Generator().manual_seed(0)
    sampler = PseudoLangevin(
        torch.zeros(200, dtype=torch.float64),
        grad_fn,
        torch.ones(200, dtype=torch.float64),
        SamplerConfig(temperature, dt=0.1, m1=0.3, constrained=False),
        generator=generator,
    )
    samples = []
    for step in range(2000):
        sampler.step()
        if step >= 300:
            samples.append(sampler.w.clone())
    assert torch.stack(samples).var().item() == pytest.approx(temperature / stiffness, rel=0.1)


def test_sampler_sphere_linear_potential_matches_von_mises_fisher() -> None:
    field, temperature = torch.tensor([0.0, 0.0, 1.0], dtype=torch.float64), 0.5

    def grad_fn(w: torch.Tensor) -> tuple[float, torch.Tensor]:
        return float(-(field @ w)), -field

    sampler = PseudoLangevin(
        torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64),
        grad_fn,
        torch.ones(3, dtype=torch.float64),
        SamplerConfig(temperature, dt=0.1, m1=0.5),
        generator=torch.Generator().manual_seed(1),
    )
    along, norms = [], []
    for _ in range(12000):
        sampler.step()
        along.append(float(sampler.w[2]))
        norms.append(float(sampler.w @ sampler.w))
    kappa = 1.0 / temperature
    assert np.mean(along[1000:]) == pytest.approx(1 / math.tanh(kappa) - 1 / kappa, abs=0.04)
    assert np.max(np.abs(np.array(norms) - 1.0)) < 1e-6


def test_sampler_rejects_non_positive_temperature() -> None:
    w = torch.ones(3)
    with pytest.raises(ValueError):
        PseudoLangevin(w, lambda x: (0.0, x), torch.ones(3), SamplerConfig(0.0))
    with pytest.raises(ValueError):
        sgld_step(w, lambda x: (0.0, x), 0.1, -1.0)


def test_analysis_metrics_on_hand_built_matrices() -> None:
    contacts = np.zeros((10, 10), dtype=bool)
    contacts[0, 8] = contacts[8, 0] = contacts[1, 9] = contacts[9, 1] = True
    scores = np.zeros((10, 10))
    scores[0, 8] = scores[8, 0] = 1.0  # a true contact
    scores[2, 9] = scores[9, 2] = 0.9  # off by one from (1, 9)
    assert analysis.precision_at_l(scores, contacts, min_separation=6, top=2) == 0.5
    assert analysis.tolerance_precision(scores, contacts, min_separation=5, delta=1, top=2) == 1.0
    assert analysis.specific_heat(np.array([1.0, 3.0]), 0.5) == pytest.approx(4.0)
    assert np.allclose(analysis.symmetrized_mean_attention(np.stack([scores, scores.T])), scores)


def test_analyzers_cuda_without_gpu_is_not_runnable(tmp_path) -> None:
    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    analyzer = get("langevin.sweep")
    with pytest.raises(NotRunnable):
        analyzer.run(analyzer.params_for({"device": "cuda"}, scale="smoke"), RunContext(out_dir=tmp_path))


@pytest.mark.parametrize("name", ["langevin.sweep", "langevin.contacts"])
def test_analyzers_smoke_through_registry(name: str, tmp_path) -> None:
    analyzer = get(name)
    result = analyzer.run(analyzer.params_for(scale="smoke"), RunContext(out_dir=tmp_path))
    assert result.scale.name == "smoke"
    for artifact in result.artifacts:
        assert (tmp_path / artifact).is_file()
    assert len(result.temperatures) == 3
    assert "structure_source" in result.provenance and "not 2ABD" in result.provenance["structure_source"]
    if name == "langevin.sweep":
        assert all(0 <= e <= 1 for e in result.test_error_by_temperature)
    else:
        assert all(0 <= p <= 1 for p in result.p_at_l_by_temperature)
