"""The shared experiment: contact map -> designed sequences -> ES-like trained model -> constrained
pseudo-Langevin sampling at each temperature, with losses, errors and mean attention recorded."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters

from analyzers.langevin import design, structure
from analyzers.langevin.analysis import specific_heat, symmetrized_mean_attention
from analyzers.langevin.model import CompactTransformer, ModelConfig, PoolingFeedForward, count_parameters
from analyzers.langevin.sampler import PseudoLangevin, SamplerConfig, masses_from_variance
from analyzers.langevin.train import MaskedSplit, evaluate, make_splits, masked_loss, train


@dataclass
class TemperatureRecord:
    """What sampling at one temperature produced for one model."""

    temperature: float
    mean_loss: float
    specific_heat: float
    train_error: float
    test_error: float
    mean_attention: np.ndarray | None = None  # (L, L), transformer only


@dataclass
class ModelSweep:
    """One model's training trace and per-temperature sampling records."""

    name: str
    num_parameters: int
    train_trace: list[float]
    es_test_error: float
    squared_norm: float
    records: list[TemperatureRecord] = field(default_factory=list)


def load_contacts(params) -> tuple[np.ndarray, str]:  # noqa: ANN001 - the analyzers' Params
    """Contact map (L, L) and a description of its source."""
    if params.structure_file:
        path = Path(params.structure_file)
        return (
            structure.contact_map_from_file(path, params.chain, params.model_index, params.cutoff, 1),
            f"file {path.name} chain {params.chain or 'first'} model {params.model_index}",
        )
    if params.pdb_id:
        path = structure.fetch_pdb(params.pdb_id, params.cache_dir)
        return (
            structure.contact_map_from_file(path, params.chain, params.model_index, params.cutoff, 1),
            f"RCSB {params.pdb_id.upper()} chain {params.chain or 'first'} model {params.model_index}",
        )
    return structure.ideal_four_helix_bundle(), "idealized four-helix bundle (geometric, ACBP-like helices; not 2ABD)"


def make_grad_fn(model: nn.Module, split: MaskedSplit, batch_size: int, generator: torch.Generator):
    """Flat-vector loss/gradient on random minibatches (the whole split when it is small enough)."""
    params = list(model.parameters())

    def grad_fn(w: torch.Tensor) -> tuple[float, torch.Tensor]:
        vector_to_parameters(w.float(), params)  # the sampler works in float64 (SHAKE precision)
        batch = (
            split
            if batch_size >= len(split)
            else split.subset(torch.randint(len(split), (batch_size,), generator=generator))
        )
        model.zero_grad()
        loss, _ = masked_loss(model(batch.inputs)["logits"], batch)
        loss.backward()
        return float(loss.detach()), parameters_to_vector([p.grad for p in params]).detach().double()

    return grad_fn


def gradient_variance(model: nn.Module, split: MaskedSplit, batch_size: int, batches: int, seed: int) -> torch.Tensor:
    """Per-weight variance of the minibatch gradient over ``batches`` minibatches. (n,)"""
    generator = torch.Generator().manual_seed(seed)
    grad_fn = make_grad_fn(model, split, min(batch_size, len(split) // 2), generator)  # true minibatches
    w = parameters_to_vector(model.parameters()).detach().double()
    grads = torch.stack([grad_fn(w)[1] for _ in range(batches)])  # (batches, n)
    return grads.var(dim=0)


def sweep_model(
    name: str,
    model: nn.Module,
    splits: tuple[MaskedSplit, MaskedSplit, MaskedSplit],
    params,  # noqa: ANN001
    report: Callable[[str], None],
) -> ModelSweep:
    """Train briefly (the early-stopped model), then sample at every temperature from it."""
    train_split, _, test_split = splits
    trace = train(model, train_split, params.train_steps, params.batch_size, params.warmup, params.seed)
    model.eval()  # no dropout while sampling
    w0 = parameters_to_vector(model.parameters()).detach().clone().double()
    sweep = ModelSweep(name, count_parameters(model), trace, evaluate(model, test_split)[1], float(w0 @ w0))
    report(f"{name}: trained, test error {sweep.es_test_error:.3f}")
    variance = gradient_variance(model, train_split, params.batch_size, params.variance_batches, params.seed).double()
    full_batch = params.sampling_batch_size >= len(train_split)
    for temperature in params.temperatures:
        generator = torch.Generator().manual_seed(params.seed + 1)
        vector_to_parameters(w0.float(), model.parameters())
        masses = masses_from_variance(variance, temperature, params.dt, params.m1, params.r)
        if params.uniform_mass:  # one mass (the median): keeps the SHAKE quadratic solvable
            masses = torch.full_like(masses, float(masses.median()))
        sampler = PseudoLangevin(
            w0,
            make_grad_fn(model, train_split, params.sampling_batch_size, generator),
            masses,
            SamplerConfig(temperature, params.dt, params.m1, constrained=True),
            grad_variance=None if full_batch else variance,
            generator=generator,
        )
        losses, train_errors, test_errors, attentions = [], [], [], []
        for step in range(params.sampling_steps):
            losses.append(sampler.step())
            if (step + 1) % params.snapshot_every == 0:
                vector_to_parameters(sampler.w.float(), model.parameters())
                train_errors.append(evaluate(model, train_split)[1])
                test_errors.append(evaluate(model, test_split)[1])
                if isinstance(model, CompactTransformer):
                    with torch.no_grad():
                        out = model(test_split.inputs, return_attention=True)
                    attentions.append(out["attention"][:, params.attention_layer].mean(0).numpy())
        trace_losses = np.asarray(losses[len(losses) // 2 :])  # second half: past the transient
        sweep.records.append(
            TemperatureRecord(
                temperature=float(temperature),
                mean_loss=float(trace_losses.mean()),
                specific_heat=specific_heat(trace_losses, temperature),
                train_error=float(np.mean(train_errors)),
                test_error=float(np.mean(test_errors)),
                mean_attention=symmetrized_mean_attention(np.stack(attentions)) if attentions else None,
            )
        )
        report(f"{name}: T={temperature:g} test error {sweep.records[-1].test_error:.3f}")
    return sweep


def prepare_data(params, report: Callable[[str], None]):  # noqa: ANN001, ANN201
    """Contacts, source, designed sequences (report), and the masked splits."""
    contacts, source = load_contacts(params)
    composition = design.encode(structure.ACBP_SEQUENCE)
    if len(composition) != len(contacts):
        raise ValueError(f"structure has {len(contacts)} residues, the ACBP composition {len(composition)}")
    designed = design.simulated_tempering(
        contacts,
        design.interaction_matrix(params.seed),
        composition,
        params.num_sequences,
        params.design_temperatures,
        sweeps_between=params.design_sweeps_between,
        seed=params.seed,
    )
    report(f"designed {len(designed.sequences)} sequences, identity {designed.mean_pairwise_identity:.2f}")
    splits = make_splits(designed.sequences, (params.train_size, params.val_size, params.test_size), seed=params.seed)
    data_hash = hashlib.sha256(designed.sequences.tobytes()).hexdigest()[:16]
    return contacts, source, designed, splits, data_hash


def build_models(params) -> dict[str, nn.Module]:  # noqa: ANN001
    """The transformer and (optionally) the feed-forward baseline, seeded."""
    length = 86
    torch.manual_seed(params.seed)
    models: dict[str, nn.Module] = {
        "transformer": CompactTransformer(ModelConfig(length, params.embed_dim, params.hidden_dim, params.num_layers))
    }
    if getattr(params, "include_ffn", False):
        models["ffn"] = PoolingFeedForward(ModelConfig(length, params.ffn_embed_dim, params.ffn_hidden_dim))
    return models
