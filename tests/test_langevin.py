"""Unit tests of the Langevin analyzer's parts against independent computations or known results:
structure reading, sequence design, Table A1 counts, training protocol, samplers, contact metrics."""

from __future__ import annotations

import itertools
import math
import time
from pathlib import Path
from typing import Any

import gemmi
import numpy as np
import pytest
import torch

from analyzers.langevin import analysis, design, structure
from analyzers.langevin.data import MaskedSplit, make_splits, masked_loss
from analyzers.langevin.dynamics import SGLD, ConstraintError, PseudoLangevin, SamplerConfig
from analyzers.langevin.mass_matrix import constrained_step_ratio, guarded_masses, masses_from_variance
from analyzers.langevin.model import TABLE_A1, CompactTransformer, ModelConfig, build_model, count_parameters
from analyzers.langevin.train import TrainingError, TrainingSettings, noam_lr, squared_norm, train_es_ot
from kb.evidence.subjects import structures

# -- structure ------------------------------------------------------------------------------------------


def _pdb_text() -> str:
    """Two models; chain A: three alanines (CA + CB), chain B: one glycine far away."""

    def atom(serial: int, name: str, residue: str, chain: str, number: int, x: float, element: str) -> str:
        return (
            f"ATOM  {serial:5d} {name:<4} {residue:>3} {chain}{number:4d}    {x:8.3f}{0.0:8.3f}{0.0:8.3f}"
            f"  1.00  0.00          {element:>2}\n"
        )

    lines = []
    for model, shift in ((1, 0.0), (2, 10.0)):
        lines.append(f"MODEL     {model:4d}\n")
        lines.append(atom(1, "CA", "ALA", "A", 1, 0.0, "C"))
        lines.append(atom(2, "CB", "ALA", "A", 1, 1.5, "C"))
        lines.append(atom(3, "H", "ALA", "A", 1, 4.5, "H"))  # hydrogens never make contacts
        lines.append(atom(4, "CA", "ALA", "A", 2, 5.5 + shift, "C"))
        lines.append(atom(5, "CA", "ALA", "A", 3, 30.0, "C"))
        lines.append(atom(6, "CA", "GLY", "B", 1, 80.0, "C"))
        lines.append("ENDMDL\n")
    return "".join(lines) + "END\n"


def test_structure_reads_pdb_and_mmcif_models_chains_cutoff_separation(tmp_path: Path) -> None:
    pdb = tmp_path / "toy.pdb"
    pdb.write_text(_pdb_text())
    cif = tmp_path / "toy.cif"
    document = gemmi.read_structure(str(pdb))
    document.setup_entities()
    document.make_mmcif_document().write_file(str(cif))
    for path in (pdb, cif):
        first = structure.read_contact_map(path, chain="A", model=1, cutoff=4.5)
        assert first.sequence == "AAA" and first.contacts.shape == (3, 3)
        assert first.contacts[0, 1] and first.contacts[1, 0]  # CB (1.5) to CA (5.5): 4.0 A
        assert not first.contacts[0, 2]
        assert not structure.read_contact_map(path, chain="A", model=1, cutoff=3.5).contacts[0, 1]
        assert not structure.read_contact_map(path, chain="A", model=2, cutoff=4.5).contacts[0, 1]  # moved away
        assert not structure.read_contact_map(path, chain="A", cutoff=4.5, min_separation=2).contacts[0, 1]
        assert structure.read_contact_map(path).sequence == "AAA"  # first chain by default
        with pytest.raises(structure.StructureError, match=r"chain 'Z' not found.*\['A', 'B'\]"):
            structure.read_contact_map(path, chain="Z")
        with pytest.raises(structure.StructureError, match="model 3 not in"):
            structure.read_contact_map(path, model=3)


def test_structure_missing_or_unreadable_file_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="none.pdb"):
        structure.read_contact_map(tmp_path / "none.pdb")
    garbage = tmp_path / "garbage.cif"
    garbage.write_text("this is not a structure\n")
    with pytest.raises(structure.StructureError, match="garbage.cif"):
        structure.read_contact_map(garbage)


def test_structure_fetch_fails_fast_offline_and_uses_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="not a PDB id"):
        structure.fetch_pdb("toolong", tmp_path)
    with pytest.raises(ConnectionError, match="KB_OFFLINE"):
        structure.fetch_pdb("2abd", tmp_path, offline=True)
    monkeypatch.setattr(structure, "RCSB_URL", "http://10.255.255.1/{pdb_id}.cif")  # unroutable: would hang
    started = time.perf_counter()
    with pytest.raises(ConnectionError, match="offline"):
        structure.fetch_pdb("2ABD", tmp_path, timeout=1.0)
    assert time.perf_counter() - started < 3.0
    (tmp_path / "1XYZ.cif").write_text("cached")
    assert structure.fetch_pdb("1xyz", tmp_path).read_text() == "cached"  # no network for a cached id


def test_structure_ideal_bundle_has_helix_packing_and_is_named_for_what_it_is() -> None:
    contact_map = structure.bundle_contact_map()
    contacts = contact_map.contacts
    assert contacts.shape == (86, 86) and (contacts == contacts.T).all() and not contacts.diagonal().any()
    i, j = np.nonzero(np.triu(contacts))
    assert ((j - i) >= 12).sum() > 30  # helix-helix packing across the bundle
    assert all(contacts[k, k + 4] for k in range(22, 32))  # helical i, i+4 contacts inside helix A2
    assert "no PDB entry" in contact_map.source and structures(contact_map.source) == frozenset()


# -- design ---------------------------------------------------------------------------------------------


def test_design_swap_deltas_and_local_fields_equal_full_energy_differences() -> None:
    contacts = structure.ideal_four_helix_bundle()
    interactions = design.interaction_matrix(3)
    assert np.allclose(interactions, interactions.T)
    rng = np.random.default_rng(1)
    composition = design.encode(structure.ACBP_SEQUENCE)
    sequences = np.stack([rng.permutation(composition) for _ in range(40)])
    fields = design.LocalFields(sequences.copy(), contacts, interactions)
    current = sequences.copy()
    rows = np.arange(40)
    for _ in range(30):
        first = rng.integers(0, 86, 40)
        second = (first + rng.integers(1, 86, 40)) % 86
        gathered = design.swap_deltas(current, first, second, interactions, design.neighbor_lists(contacts), contacts)
        local = fields.deltas(current, first, second)
        swapped = current.copy()
        swapped[rows, first], swapped[rows, second] = current[rows, second], current[rows, first]
        full = design.energy(contacts, interactions, swapped) - design.energy(contacts, interactions, current)
        assert np.allclose(gathered, full, atol=1e-9)
        assert np.allclose(local, full, atol=1e-3)  # float32 fields
        moved = rows[current[rows, first] != current[rows, second]]
        fields.apply(current, moved, first[moved], second[moved])
        assert (current[moved] == swapped[moved]).all()
    assert np.allclose(fields.fields[:, :86], fields.compute(current)[:, :86], atol=1e-3)


@pytest.mark.slow  # suite time: over 10 s on 2 cores
def test_design_tempering_keeps_composition_and_energy_falls_with_temperature() -> None:
    contacts = structure.ideal_four_helix_bundle()
    composition = design.encode(structure.ACBP_SEQUENCE)
    report = design.simulated_tempering(
        contacts, design.interaction_matrix(0), composition, 120, (2.4, 1.9, 1.5, 1.2), burn_in_sweeps=60,
        sweeps_between=5, seed=0,
    )  # fmt: skip  (a ladder above the glassy range, where 60 sweeps equilibrate)
    assert report.sequences.shape == (120, 86)
    assert (np.sort(report.sequences, axis=1) == np.sort(composition)).all()
    assert all(np.diff(report.mean_energy) < 0)  # ladder high -> low T
    assert all(np.diff(report.acceptance_swap) < 0)
    full = design.energy(contacts, design.interaction_matrix(0), report.sequences)
    assert np.allclose(full, report.sample_energies, atol=1e-2)  # tracked energies are the true ones
    assert report.sample_energies.mean() < design.energy(contacts, design.interaction_matrix(0),
                                                         np.stack([composition] * 2)).mean()  # fmt: skip
    assert 0.0 < report.mean_pairwise_identity < 1.0 and 0 < report.acceptance_temperature < 1


def test_design_tempering_with_fewer_chains_than_levels_reaches_the_lowest_level() -> None:
    """3 chains on a ladder of 6 levels: the levels no chain starts at get a finite mean energy, so the weights
    are finite and the chains walk down to the lowest level and are sampled there (with NaN weights none ever
    moved past the first empty level: no sample until max_sweeps)."""
    contacts = structure.ideal_four_helix_bundle()
    composition = design.encode(structure.ACBP_SEQUENCE)
    report = design.simulated_tempering(
        contacts, design.interaction_matrix(0), composition, 6, (2.4, 2.1, 1.9, 1.7, 1.5, 1.2), burn_in_sweeps=60,
        sweeps_between=5, num_chains=3, seed=0, max_sweeps=3000,
    )  # fmt: skip
    assert report.sequences.shape == (6, 86) and report.num_chains == 3
    assert (np.sort(report.sequences, axis=1) == np.sort(composition)).all()
    full = design.energy(contacts, design.interaction_matrix(0), report.sequences)
    assert np.allclose(full, report.sample_energies, atol=1e-2)


def test_design_identity_and_fasta_round_trip(tmp_path: Path) -> None:
    sequences = np.array([[0, 1, 2, 3], [0, 1, 3, 2], [4, 1, 2, 3]])
    brute = np.mean([(sequences[a] == sequences[b]).mean() for a in range(3) for b in range(3) if a != b])
    assert design.mean_pairwise_identity(sequences) == pytest.approx(brute)
    path = tmp_path / "x.fasta"
    design.write_fasta(path, sequences)
    assert (design.read_fasta(path) == sequences).all()
    path.write_text(">a\nACDX\n")
    with pytest.raises(ValueError, match="record 'a'.*X"):
        design.read_fasta(path)


# -- models and training --------------------------------------------------------------------------------


def test_model_parameter_counts_match_table_a1() -> None:
    exact = {"T1-d26": 8107, "T1-d64": 44245, "T4-d14": 8953, "T4-d64": 168853, "FF-d64": 173653}
    for name, (config, thousands) in TABLE_A1.items():
        count = count_parameters(build_model(config))
        assert count == exact[name]
        assert round(count / 1000) == thousands


def test_model_attention_is_row_stochastic_and_dropout_only_in_training() -> None:
    model = CompactTransformer(ModelConfig(embed_dim=8, hidden_dim=16, num_layers=2))
    tokens = torch.randint(0, 21, (3, 86))
    model.eval()
    out = model(tokens, return_attention=True)
    assert out["logits"].shape == (3, 86, 21) and out["attention"].shape == (3, 2, 86, 86)
    assert torch.allclose(out["attention"].sum(-1), torch.ones(3, 2, 86), atol=1e-5)
    assert torch.equal(model(tokens)["logits"], out["logits"])  # deterministic in eval mode
    model.train()
    assert not torch.equal(model(tokens)["logits"], out["logits"])


def test_data_masks_fixed_and_loss_error_definitions() -> None:
    sequences = np.random.default_rng(0).integers(0, 20, size=(60, 86))
    splits = make_splits(sequences, (30, 10, 20), seed=0)
    assert (splits.train.inputs[splits.train.mask] == 20).all()
    assert (splits.train.inputs[~splits.train.mask] == splits.train.targets[~splits.train.mask]).all()
    assert 0.1 < splits.train.mask.float().mean() < 0.2
    assert make_splits(sequences, (30, 10, 20), seed=0).digest == splits.digest
    perfect = torch.nn.functional.one_hot(splits.test.targets, 21).float() * 50
    loss, error = masked_loss(perfect, splits.test)
    assert float(loss) < 1e-6 and float(error) == 0.0
    uniform = torch.zeros(20, 86, 21)
    assert float(masked_loss(uniform, splits.test)[0]) == pytest.approx(math.log(21), rel=1e-6)
    with pytest.raises(ValueError, match="need 90 sequences"):
        make_splits(sequences, (50, 20, 20))


def test_train_noam_schedule_peaks_at_warmup() -> None:
    rates = [noam_lr(s, 64, 100) for s in range(1, 400)]
    assert int(np.argmax(rates)) + 1 == 100
    assert noam_lr(100, 64, 100) == pytest.approx(64**-0.5 * 100**-0.5)
    assert noam_lr(400, 64, 100) == pytest.approx(64**-0.5 * 400**-0.5)


def _tiny_splits() -> object:
    sequences = np.random.default_rng(2).integers(0, 20, size=(100, 86))
    return make_splits(sequences, (60, 20, 20), seed=0)


def test_train_es_stops_where_the_norm_reaches_the_ensemble_target() -> None:
    splits = _tiny_splits()
    config = ModelConfig(embed_dim=8, hidden_dim=16)

    def make_model(seed: int) -> torch.nn.Module:
        torch.manual_seed(seed)
        return build_model(config)

    settings = TrainingSettings(batch_size=16, warmup=10, max_steps=300, eval_every=5, patience=2, ensemble_size=2,
                                ot_max_steps=30)  # fmt: skip
    outcome = train_es_ot(make_model, splits, settings, seed=0)
    assert outcome.norm_target == pytest.approx(np.mean(outcome.ensemble_norms))
    start = squared_norm(make_model(0))
    es_model, before = make_model(0), make_model(0)
    es_model.load_state_dict(outcome.es_state)
    assert (squared_norm(es_model) - outcome.norm_target) * (start - outcome.norm_target) < 0  # crossed
    assert outcome.metrics["es"]["squared_norm"] == pytest.approx(squared_norm(es_model))
    assert outcome.ot_step > outcome.es_step
    assert not torch.equal(before.state_dict()["head.weight"], es_model.state_dict()["head.weight"])
    unreachable = TrainingSettings(batch_size=16, warmup=10, max_steps=40, norm_target=1e9)
    with pytest.raises(TrainingError, match="cannot be satisfied"):
        train_es_ot(make_model, splits, unreachable, seed=0)


# -- samplers -------------------------------------------------------------------------------------------


def _quadratic(stiffness: torch.Tensor, noise: torch.Tensor | None = None,
               generator: torch.Generator | None = None) -> Any:
    def grad_fn(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        grad = stiffness * w
        if noise is not None:  # a Gaussian stand-in for minibatch noise of known variance
            grad = grad + noise.sqrt() * torch.randn(w.shape, generator=generator, dtype=w.dtype)
        return 0.5 * (stiffness * w * w).sum(), grad

    return grad_fn


def test_sampler_unconstrained_quadratic_is_gaussian_with_nonuniform_masses() -> None:
    n, temperature = 300, 0.3
    stiffness = torch.linspace(1.0, 8.0, n, dtype=torch.float64)
    masses = torch.exp(torch.linspace(-1.5, 1.5, n, dtype=torch.float64))
    sampler = PseudoLangevin(
        torch.zeros(n, dtype=torch.float64), _quadratic(stiffness), masses,
        SamplerConfig(temperature, dt=0.1, m1=0.3, constrained=False), generator=torch.Generator().manual_seed(0),
    )  # fmt: skip
    samples = []
    for step in range(4000):
        sampler.step()
        if step >= 500:
            samples.append(sampler.w.clone())
    ratio = torch.stack(samples).var(0) * stiffness / temperature  # 1 for each coordinate
    assert ratio.mean().item() == pytest.approx(1.0, abs=0.05)
    assert sampler.kinetic_temperature() == pytest.approx(temperature, rel=0.15)


def test_sampler_masses_from_minibatch_variance_thermalize_the_total_noise() -> None:
    n, temperature, r, m1 = 400, 0.05, 0.5, 0.3
    stiffness = torch.full((n,), 2.0, dtype=torch.float64)
    variance = torch.exp(torch.linspace(-2, 2, n, dtype=torch.float64))  # per-weight minibatch noise
    masses = masses_from_variance(variance, temperature, dt=1.0, m1=m1, r=r, floor_fraction=1e-9)
    assert torch.allclose(masses, (1 - m1**2) * variance / (r * temperature * m1**2))
    generator = torch.Generator().manual_seed(3)
    sampler = PseudoLangevin(
        torch.zeros(n, dtype=torch.float64), _quadratic(stiffness, variance, generator), masses,
        SamplerConfig(temperature, dt=1.0, m1=m1, constrained=False), noise_variance=variance, generator=generator,
    )  # fmt: skip
    # the white noise added per weight, M_i a_i^2 (a the per-coordinate factor of M^1/2 xi): the share 1 - r
    assert torch.allclose(masses * sampler.noise_factor**2, (1 - r) * masses * temperature * m1**2)
    samples = []
    for step in range(3000):
        sampler.step()
        if step >= 500:
            samples.append(sampler.w.clone())
    # Minibatch noise (share r) plus added noise (share 1 - r): the positions sample exp(-L/T).
    ratio = torch.stack(samples).var(0) * stiffness / temperature
    assert ratio.mean().item() == pytest.approx(1.0, abs=0.08)


def _exact_sphere_start(chains: int, dim: int, temperature: float, rng: np.random.Generator) -> np.ndarray:
    """Exact draws of exp(w_0 / T) on the unit sphere (rejection from the uniform distribution)."""
    accepted = []
    while sum(len(a) for a in accepted) < chains:
        u = rng.standard_normal((4 * chains, dim))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        accepted.append(u[rng.random(len(u)) < np.exp((u[:, 0] - 1.0) / temperature)])
    return np.concatenate(accepted)[:chains]


def _sphere_mean(
    masses: tuple[float, ...], fixman: bool, chains: int = 2000, steps: int = 1500, dt: float = 0.05
) -> tuple[float, float]:
    """Mean of w_0 under exp(w_0 / T) on |w| = 1 (linear potential), many independent spheres at once."""
    dim, temperature = len(masses), 1.0
    groups = torch.arange(chains).repeat_interleave(dim)
    field = torch.zeros(chains * dim, dtype=torch.float64)
    field[0::dim] = 1.0
    start = torch.as_tensor(_exact_sphere_start(chains, dim, temperature, np.random.default_rng(1)).reshape(-1))
    sampler = PseudoLangevin(
        start, lambda w: (-(field @ w), -field), torch.tensor(masses, dtype=torch.float64).repeat(chains),
        SamplerConfig(temperature, dt=dt, m1=0.3, fixman=fixman), generator=torch.Generator().manual_seed(0),
        groups=groups,
    )  # fmt: skip
    means, drift = [], 0.0
    for step in range(steps):
        sampler.step()
        if step >= steps // 3:
            means.append(float(sampler.w[0::dim].mean()))
        drift = max(drift, float(((sampler.w.view(chains, dim) ** 2).sum(1) - 1.0).abs().max()))
    sampler.check()
    return float(np.mean(means)), drift


def _sphere_expectation(masses: tuple[float, ...], power: float) -> float:
    """E[w_0] under exp(w_0) (w^T M^-1 w)^power on the unit sphere, by weighted uniform sampling."""
    u = np.random.default_rng(0).standard_normal((1_000_000, len(masses)))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    weight = np.exp(u[:, 0]) * ((u**2 / np.asarray(masses)).sum(1)) ** power
    return float((u[:, 0] * weight).sum() / weight.sum())


def test_sampler_constrained_linear_potential_matches_von_mises_fisher_with_nonuniform_masses() -> None:
    masses = (1.0, 9.0)
    theta = np.linspace(0, 2 * np.pi, 200_001)[:-1]  # on the circle E[cos] = I1(1) / I0(1), by quadrature
    exact = float((np.cos(theta) * np.exp(np.cos(theta))).sum() / np.exp(np.cos(theta)).sum())
    mean, drift = _sphere_mean(masses, fixman=True)
    assert mean == pytest.approx(exact, abs=0.02)
    assert drift < 1e-12  # the norm stays on the sphere to round-off
    biased, _ = _sphere_mean(masses, fixman=False)  # without the Fixman term: the M-metric surface bias
    assert biased == pytest.approx(_sphere_expectation(masses, 0.5), abs=0.02)
    assert biased - mean > 0.04


def test_sampler_constrained_three_dimensional_von_mises_fisher_mean() -> None:
    masses = (0.25, 1.0, 4.0)
    mean, drift = _sphere_mean(masses, fixman=True, chains=1500, steps=2000, dt=0.03)
    assert mean == pytest.approx(1 / math.tanh(1.0) - 1.0, abs=0.02)  # coth(kappa) - 1/kappa, kappa = 1
    assert drift < 1e-12


def test_sampler_shake_negative_discriminant_raises_and_guard_prevents_it() -> None:
    n, temperature = 50, 1.0
    w = torch.ones(n, dtype=torch.float64)
    masses = torch.full((n,), 1e-4, dtype=torch.float64)  # tiny masses: huge steps
    masses[0] = 1e4  # and very uneven: SHAKE moves mostly along one light coordinate
    sampler = PseudoLangevin(w, lambda x: (torch.zeros(()), torch.zeros_like(x)), masses, SamplerConfig(temperature),
                             generator=torch.Generator().manual_seed(0))  # fmt: skip
    for _ in range(5):
        sampler.step()
    with pytest.raises(ConstraintError, match="negative discriminant"):
        sampler.check()
    variance = torch.exp(torch.linspace(-12, 0, n, dtype=torch.float64))
    guarded, used = guarded_masses(variance, w, temperature, r=0.5, floor_fraction=1e-9, max_step_ratio=0.02)
    assert constrained_step_ratio(guarded, w, temperature) == pytest.approx(used["step_ratio"])
    assert used["step_ratio"] <= 0.02 + 1e-12 and used["effective_r"] < 0.5


def test_sampler_sgld_quadratic_has_the_exact_discrete_variance() -> None:
    n, temperature, step_size, stiffness = 2000, 0.5, 0.1, 3.0
    sampler = SGLD(torch.zeros(n, dtype=torch.float64), _quadratic(torch.full((n,), stiffness, dtype=torch.float64)),
                   step_size, temperature, torch.Generator().manual_seed(0))  # fmt: skip
    values = []
    for step in range(600):
        sampler.step()
        if step >= 100:
            values.append(sampler.w.clone())
    expected = temperature / (stiffness * (1 - step_size * stiffness / 4))  # w' = (1 - ek/2) w + sqrt(eT) xi
    assert torch.stack(values).var().item() == pytest.approx(expected, rel=0.03)


def test_sampler_rejects_non_positive_temperature() -> None:
    w = torch.ones(3, dtype=torch.float64)
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="temperature"):
            PseudoLangevin(w, lambda x: (torch.zeros(()), x), torch.ones(3, dtype=torch.float64), SamplerConfig(bad))
    with pytest.raises(ValueError, match="temperature"):
        SGLD(w, lambda x: (torch.zeros(()), x), 0.1, 0.0)


# -- analysis -------------------------------------------------------------------------------------------


def test_analysis_p_at_l_and_tolerance_metric_on_hand_built_matrices() -> None:
    contacts = np.zeros((12, 12), dtype=bool)
    for i, j in ((0, 8), (1, 10), (2, 3), (5, 11)):  # (5, 11): |i-j| = 6, too close for the tolerant metric
        contacts[i, j] = contacts[j, i] = True
    scores = np.zeros((12, 12))
    scores[0, 8] = scores[8, 0] = 1.0  # a true contact
    scores[2, 11] = scores[11, 2] = 0.9  # one off (in j and i) from (1, 10)
    scores[4, 11] = scores[11, 4] = 0.8  # next to (5, 11) only, which the tolerant metric does not count
    assert analysis.precision_at_l(scores, contacts, min_separation=6, top=3) == pytest.approx(1 / 3)
    assert analysis.tolerance_precision(scores, contacts, min_separation=6, delta=1, top=3) == pytest.approx(2 / 3)
    assert analysis.tolerance_precision(scores, contacts, min_separation=6, delta=0, top=3) == pytest.approx(1 / 3)
    assert analysis.tolerance_precision(scores, contacts, min_separation=5, delta=1, top=3) == pytest.approx(1.0)
    mask = np.random.default_rng(0).random((15, 15)) < 0.1
    for delta in (0, 1, 2):
        brute = np.zeros_like(mask)
        for i, j in zip(*np.nonzero(mask), strict=True):
            brute[max(i - delta, 0) : i + delta + 1, max(j - delta, 0) : j + delta + 1] = True
        assert (analysis._dilate(mask, delta) == brute).all()


def test_analysis_similarity_specific_heat_and_best_block() -> None:
    snapshots = np.array([[1.0, 0.0, 2.0, 2.0], [1.0, 0.0, -2.0, -2.0], [0.0, 1.0, 2.0, 2.0]])
    q = analysis.layer_similarities(snapshots, {"a": slice(0, 2), "b": slice(2, 4)})
    assert np.allclose(q["a"], [1.0, 0.0, 0.0]) and np.allclose(q["b"], [-1.0, 1.0, -1.0])
    assert analysis.specific_heat(np.array([1.0, 3.0]), 0.5) == pytest.approx(4.0)
    assert analysis.is_interior_minimum([3, 1, 2]) and not analysis.is_interior_minimum([1, 2, 3])
    assert analysis.peakedness([1, 1, 1]) == pytest.approx(1.0) and analysis.peakedness([0, 3, 0]) == pytest.approx(3)
    contacts = np.zeros((20, 20), dtype=bool)
    contacts[2, 15] = contacts[15, 2] = True
    good, bad = np.zeros((20, 20)), np.random.default_rng(0).random((20, 20))
    good[2, 15] = 1.0
    bad[2, 15] = 0.0
    block, scores = analysis.best_block(np.stack([bad, good]), contacts, 6, 6, 1)
    assert block == 1 and scores[1]["p_at_l"] == pytest.approx(1 / 20)


# -- the shipped structure, external sequences, paper definitions ----------------------------------------


def _heavy_atoms_by_residue(path: object) -> list[np.ndarray]:
    """Chain A amino-acid heavy atoms of a PDB file read with plain string slicing (PDB column rules), first
    altloc only: an independent reading of the file (no gemmi)."""
    residues: dict[tuple[str, str], list[list[float]]] = {}
    for line in open(path, encoding="ascii"):  # noqa: SIM115 - a short read
        if line.startswith("ENDMDL"):
            break  # model 1 only
        if not line.startswith("ATOM") or line[21] != "A" or line[16] not in (" ", "A"):
            continue
        if line[76:78].strip() in ("H", "D"):
            continue
        key = (line[22:26], line[26])  # residue number and insertion code
        residues.setdefault(key, []).append([float(line[30:38]), float(line[38:46]), float(line[46:54])])
    return [np.asarray(atoms) for atoms in residues.values()]


def test_structure_shipped_1ubi_contact_count_equals_an_independent_computation() -> None:
    contact_map = structure.shipped_contact_map(cutoff=4.5, min_separation=1)
    assert "1UBI" in contact_map.source and structures(contact_map.source) == {"1ubi"}  # it names no other
    assert contact_map.length == 76 and contact_map.sequence.startswith("MQIFVKTLTG")
    residues = _heavy_atoms_by_residue(structure.SHIPPED_STRUCTURE)
    assert len(residues) == 76
    length = len(residues)
    independent = np.zeros((length, length), dtype=bool)
    for i in range(length):  # plain numpy: the smallest heavy-atom distance of every residue pair
        for j in range(i + 1, length):
            distances = np.sqrt(((residues[i][:, None, :] - residues[j][None, :, :]) ** 2).sum(-1))
            independent[i, j] = independent[j, i] = distances.min() < 4.5
    assert (contact_map.contacts == independent).all()
    i, j = np.triu_indices(length, 3)
    assert contact_map.contacts[i, j].sum() == 180  # the counts quoted for 1UBI at |i-j| >= 3 and >= 6
    i, j = np.triu_indices(length, 6)
    assert contact_map.contacts[i, j].sum() == 131


def test_design_read_sequences_round_trip_and_one_line_errors(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    sequences = rng.integers(0, 20, (5, 12))
    fasta = tmp_path / "set.fasta"
    design.write_fasta(fasta, sequences, width=5)  # wrapped records
    assert (design.read_sequences(fasta, 12) == sequences).all()
    plain = tmp_path / "set.txt"
    plain.write_text("# made elsewhere\n" + "\n".join(design.decode(s).lower() for s in sequences) + "\n\n")
    assert (design.read_sequences(plain, 12) == sequences).all()
    with pytest.raises(ValueError, match=r"set.txt: record line 2: 12 residues, but 1UBI has 76") as error:
        design.read_sequences(plain, 76, "1UBI")
    assert "\n" not in str(error.value)
    fasta.write_text(">good\n" + design.decode(sequences[0]) + "\n>bad one\nACDEFGHIKLMB\n")
    with pytest.raises(ValueError, match=r"set.fasta: record bad one \(line 3\): letters outside .*: B"):
        design.read_sequences(fasta, 12)
    with pytest.raises(FileNotFoundError, match="sequences file not found"):
        design.read_sequences(tmp_path / "missing.fasta", 12)


def test_design_read_sequences_reads_the_authors_file_format(tmp_path: Path) -> None:
    # The authors' designed set (attentionSampling data/sequences_t=127.dat, README: Data) is not shipped:
    # a user fetches it and passes it as --sequences. Its format: no header, one 86-residue sequence per
    # line, CRLF line ends, each line a permutation of ACBP's residues. Stand-ins in that format, made here.
    rng = np.random.default_rng(0)
    native = np.array(list(structure.ACBP_SEQUENCE))
    lines = ["".join(rng.permutation(native)) for _ in range(4)]
    path = tmp_path / "sequences_t=127.dat"
    path.write_bytes("".join(line + "\r\n" for line in lines).encode("ascii"))
    read = design.read_sequences(path, len(structure.ACBP_SEQUENCE), "2ABD")
    assert read.shape == (4, 86)
    assert [design.decode(ids) for ids in read] == lines  # no '\r' left in a record, none dropped
    assert (np.sort(read, axis=1) == np.sort(design.encode(structure.ACBP_SEQUENCE))).all()
    with pytest.raises(ValueError, match=r"record line 1: 86 residues, but 1UBI has 76"):
        design.read_sequences(path, 76, "1UBI")  # the wrong structure is refused in one line


def test_design_site_entropy_by_brute_force() -> None:
    sequences = np.array([[0, 1], [0, 2], [0, 1], [0, 3]])
    brute = np.mean([0.0, -(0.5 * np.log(0.5) + 2 * 0.25 * np.log(0.25))])
    assert design.mean_site_entropy(sequences) == pytest.approx(brute)


def test_design_samples_have_the_exact_boltzmann_mean_energy() -> None:
    """Seven distinct residues on a random map: all 5,040 sequences enumerated give the exact mean energy at
    the lowest temperature. The samples (every chain at that level at fixed ticks, weights fixed after burn-in)
    agree with it within 3 clustered standard errors, and the report's own checks pass. (The rule this
    replaced, a sample when a chain arrives at the lowest level, put them 11.7 standard errors above.)"""
    length = 7
    upper = np.triu(np.random.default_rng(3).random((length, length)) < 0.6, 1)
    contacts, interactions = upper | upper.T, design.interaction_matrix(0)
    states = np.array(list(itertools.permutations(range(length))))
    energies = design.energy(contacts, interactions, states)
    ladder = (3.0, 1.5, 0.8, 0.4)
    weights = np.exp(-(energies - energies.min()) / ladder[-1])
    exact = float((weights * energies).sum() / weights.sum())
    report = design.simulated_tempering(contacts, interactions, np.arange(length), 400, ladder, burn_in_sweeps=200,
                                        sweeps_between=5, seed=0, num_chains=64)  # fmt: skip
    check = report.sample_energy_check()
    assert abs(report.sample_energies.mean() - exact) < 3 * check["sample_energy_standard_error"]
    assert check["samples_equilibrated"] and check["samples_stationary"]
    # the clustered error is larger than the naive one: samples of one chain are correlated
    naive = report.sample_energies.std(ddof=1) / np.sqrt(len(report.sample_energies))
    assert check["sample_energy_standard_error"] > naive


def test_design_stationarity_check_sees_a_drift() -> None:
    """Samples whose energy falls through the run (a landscape still relaxing) fail the stationarity check;
    the same energies in random order pass it."""
    rng = np.random.default_rng(0)
    falling = np.linspace(0.0, -3.0, 400) + rng.normal(0, 1, 400)
    chains = np.arange(400) % 40
    report = design.TemperingReport(np.zeros((400, 3), dtype=np.int64), [1.0, 0.5], [0.1, 0.1], 0.5, [0.0, -1.5],
                                    [1, 1], 0.2, 1.0, 0.1, sample_energies=falling, sample_chains=chains)  # fmt: skip
    assert not report.sample_energy_check()["samples_stationary"]
    report.sample_energies = rng.permutation(falling)
    assert report.sample_energy_check()["samples_stationary"]


def test_data_error_is_the_mean_of_per_sequence_errors() -> None:
    """Eq. 29-30: sequence 1 has one masked site (wrong), sequence 2 three (right): error (1 + 0) / 2, not the
    pooled 1 / 4."""
    targets = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8]])
    mask = torch.tensor([[True, False, False, False], [True, True, True, False]])
    split = MaskedSplit(targets.masked_fill(mask, 20), targets, mask)
    logits = torch.nn.functional.one_hot(targets, 21).float() * 10
    logits[0, 0] = torch.nn.functional.one_hot(torch.tensor(9), 21).float() * 10  # wrong on sequence 1
    _, error = masked_loss(logits, split)
    assert float(error) == pytest.approx(0.5)


def test_model_feedforward_has_a_relu_after_w2() -> None:
    """With W2's bias far negative the ReLU zeroes W2's output: the net reduces to LN(residual projection)."""
    model = build_model(ModelConfig(seq_len=10, embed_dim=4, hidden_dim=6, kind="feedforward")).eval()
    tokens = torch.randint(0, 21, (2, 10))
    with torch.no_grad():
        model.linear2.bias.fill_(-1e4)
        x = model.norm_in(model.embedding(tokens) + model.pe[:10])
        expected = model.head(model.norm_out(model.residual(x)))
        assert torch.allclose(model(tokens)["logits"], expected, atol=1e-5)
