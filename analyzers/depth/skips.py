"""Layer-skip, sublayer-skip, future-effect and layer-deletion probes, computed by replaying suffixes.

A variant perturbs one layer ``s``: ``layer`` replaces its output by its input (``h_{s+1} := h_s``, the
same as deleting the layer from a residual model), ``attn`` / ``mlp`` zero only that sublayer's update,
and ``future`` (causal models) skips the layer only at positions ``< t`` and is measured at ``>= t``.
Layers before ``s`` are unchanged, so instead of re-running the model, each variant starts from the
clean ``h_s`` and replays layers ``s..L-1`` with the calls recorded in the clean pass (attention mask,
rotary / position tensors). Several variants are replayed together along the batch axis, up to
``replay_tokens`` tokens at a time. ``naive_variant`` computes the same thing with a full forward pass
per variant and hooks, as a reference for tests and benchmarks.

Measured per variant ``(kind, s)``: ``heatmap[s][l]`` = mean over sequences of the max over measured
positions of ``||D_l - D'_l|| / ||D_l||`` for ``l >= s`` (NaN for ``l < s``), the output effect
``||softmax(z) - softmax(z')||_2`` (mean over positions, and mean over sequences of the max), and for
``layer`` variants the deletion effect on masked-token (or next-token) accuracy and perplexity.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from analyzers.depth.adapters import Adapter
from analyzers.depth.batches import Batch
from analyzers.depth.instrument import (
    EPS,
    CleanPass,
    CleanRecord,
    call_layer,
    fast_attention,
    first_tensor,
    hooks,
    zeroed,
)
from analyzers.depth.probes import ProbeAccumulator, ProbeOptions
from analyzers.depth.scoring import eval_positions, prediction_rows

KINDS = ("layer", "attn", "mlp", "future")
PREFIX = {"layer": "skip", "attn": "skip_attn", "mlp": "skip_mlp", "future": "future"}


@dataclass(frozen=True)
class Variant:
    """One perturbation: ``kind`` in KINDS applied at layer ``layer``."""

    kind: str
    layer: int


def variants_for(
    adapter: Adapter, options: ProbeOptions, kinds: tuple[str, ...] | None = None
) -> list[Variant]:
    """The variants the options ask for that the architecture supports."""
    if kinds is None:
        kinds = ("layer",)
        if options.sublayer_skips and adapter.pre_ln:
            kinds += ("attn", "mlp")
        if options.future and adapter.objective == "causal":
            kinds += ("future",)
    return [Variant(kind, layer) for layer in range(adapter.num_layers) for kind in kinds]


def future_start(batch: Batch, fraction: float) -> torch.Tensor:
    """Per sequence, the position t where the future-effect variant stops skipping: the first residue
    plus ``fraction`` of the residues. Returns ``(batch, 1)``."""
    positions = torch.arange(batch.real.shape[1], device=batch.real.device)
    first = torch.where(batch.real, positions, batch.real.shape[1]).amin(1)
    count = batch.real.sum(1)
    return (first + (fraction * count).long().clamp_min(1))[:, None]


class SkipTally:
    """Per-batch sums of the skip measurements, added to the accumulator once at the end."""

    def __init__(self, num_layers: int, batch: Batch, clean: CleanRecord, adapter: Adapter,
                 options: ProbeOptions) -> None:
        self.num_layers, self.batch, self.clean, self.adapter = num_layers, batch, clean, adapter
        self.replay_tokens, self.future_fraction = options.replay_tokens, options.future_fraction
        device = batch.real.device
        positions = torch.arange(batch.real.shape[1], device=device)
        future = batch.real & (positions[None, :] >= future_start(batch, options.future_fraction))
        self.measure_mask = {"layer": batch.real, "attn": batch.real, "mlp": batch.real, "future": future}
        assert clean.logits is not None
        self.clean_probs = clean.logits.float().softmax(-1)  # (batch, seq, vocab)
        self.eval_where, self.eval_targets = eval_positions(batch, adapter.objective)
        # Sums per sequence (the last axis), so that every skip metric has a standard error across sequences.
        batch_size = batch.size
        shape = (len(KINDS), num_layers, num_layers, batch_size)
        self.heat_sum = torch.zeros(shape, dtype=torch.float64, device=device)
        self.heat_count = torch.zeros(shape, dtype=torch.float64, device=device)
        self.out_sum = torch.zeros(len(KINDS), num_layers, batch_size, dtype=torch.float64, device=device)
        self.out_count = torch.zeros_like(self.out_sum)
        self.out_max_sum = torch.zeros_like(self.out_sum)
        self.out_max_count = torch.zeros_like(self.out_sum)
        # correct, nll, count
        self.deletion = torch.zeros(3, num_layers, batch_size, dtype=torch.float64, device=device)
        self.used: set[str] = set()

    def layer(self, variants: list[Variant], layer: int, delta: torch.Tensor) -> None:
        """Relative change of layer ``layer``'s update for each variant; ``delta`` is ``(n * batch, seq,
        dim)``."""
        batch = self.batch.size
        clean = (self.clean.states[layer + 1].float() - self.clean.states[layer].float())  # (batch, seq, dim)
        mask = torch.cat([self.measure_mask[v.kind] for v in variants])  # (n * batch, seq)
        diff = (clean.repeat(len(variants), 1, 1) - delta.float()).norm(dim=-1)
        ratio = diff / clean.norm(dim=-1).clamp_min(EPS).repeat(len(variants), 1)  # (n * batch, seq)
        worst = ratio.masked_fill(~mask, float("-inf")).amax(-1).view(len(variants), batch)
        valid = mask.any(-1).view(len(variants), batch)
        kinds = torch.tensor([KINDS.index(v.kind) for v in variants], device=delta.device)
        rows = torch.tensor([v.layer for v in variants], device=delta.device)
        self.heat_sum[kinds, rows, layer] += torch.where(valid, worst, 0).double()  # (n, batch)
        self.heat_count[kinds, rows, layer] += valid.double()
        self.used.update(v.kind for v in variants)

    def output(self, variant: Variant, logits: torch.Tensor) -> None:
        """Output effect (and, for ``layer`` variants, deletion metrics) of one variant's logits (batch, seq,
        vocab)."""
        kind, row = KINDS.index(variant.kind), variant.layer
        mask = self.measure_mask[variant.kind]
        effect = (logits.float().softmax(-1) - self.clean_probs).norm(dim=-1)  # (batch, seq)
        self.out_sum[kind, row] += (effect * mask).sum(-1).double()  # (batch,)
        self.out_count[kind, row] += mask.sum(-1).double()
        valid = mask.any(-1)  # (batch,); torch.where rather than boolean indexing: no host sync on a GPU
        worst = effect.masked_fill(~mask, float("-inf")).amax(-1)
        self.out_max_sum[kind, row] += torch.where(valid, worst, 0).double()
        self.out_max_count[kind, row] += valid.double()
        if variant.kind == "layer":
            correct, nll, count = prediction_rows(
                logits, self.eval_where, self.eval_targets, self.adapter.residue_onehot
            )
            self.deletion[:, row] += torch.stack([correct, nll, count])

    def commit(self, acc: ProbeAccumulator) -> None:
        """Add this batch's sums to the run's accumulator."""
        for kind in sorted(self.used, key=KINDS.index):
            index, prefix = KINDS.index(kind), PREFIX[kind]
            # sequence axis first: (batch, layer, layer) and (batch, layer)
            acc.add_rows(f"{prefix}_heatmap", self.heat_sum[index].movedim(-1, 0),
                         self.heat_count[index].movedim(-1, 0))
            acc.add_rows(f"{prefix}_output_effect", self.out_sum[index].T, self.out_count[index].T)
            acc.add_rows(
                f"{prefix}_output_effect_max", self.out_max_sum[index].T, self.out_max_count[index].T
            )
        if "layer" in self.used:
            acc.add_rows("deletion_accuracy", self.deletion[0].T, self.deletion[2].T)
            acc.add_rows("deletion_nll", self.deletion[1].T, self.deletion[2].T)


def _entry(
    adapter: Adapter, clean: CleanRecord, variant: Variant, batch_size: int, tally: SkipTally
) -> torch.Tensor:
    """The new output of the perturbed layer ``s`` (``h'_{s+1}``), computed from the clean ``h_s``."""
    s = variant.layer
    hidden = clean.states[s]
    if variant.kind == "layer":
        return hidden
    if variant.kind == "future":
        return torch.where(_before_t(tally)[..., None], hidden, clean.states[s + 1])
    module = adapter.attn_out[s] if variant.kind == "attn" else adapter.mlp_out[s]
    with zeroed(module):
        return call_layer(adapter.layers[s], clean.calls[s], hidden, batch_size)


def _before_t(tally: SkipTally) -> torch.Tensor:
    """(batch, seq) bool: positions before each sequence's future-effect start t."""
    positions = torch.arange(tally.batch.real.shape[1], device=tally.batch.real.device)
    return positions[None, :] < future_start(tally.batch, tally.future_fraction)


def _chunks(variants: list[Variant], batch: Batch, replay_tokens: int | None) -> Iterator[list[Variant]]:
    if replay_tokens is None:
        replay_tokens = 16384 if batch.input_ids.device.type == "cuda" else 0
    per_variant = batch.size * batch.input_ids.shape[1]
    size = max(1, replay_tokens // max(per_variant, 1))
    ordered = sorted(variants, key=lambda v: (v.layer, KINDS.index(v.kind)))
    for start in range(0, len(ordered), size):
        yield ordered[start : start + size]


@torch.no_grad()
def replay_variants(
    model: nn.Module,
    adapter: Adapter,
    clean: CleanRecord,
    batch: Batch,
    variants: list[Variant],
    tally: SkipTally,
) -> None:
    """Prefix reuse: each variant starts at its layer from the clean state; variants share replays, with
    SDPA attention (no attention map is read here)."""
    with fast_attention(model):
        _replay(adapter, clean, batch, variants, tally)


def _replay(
    adapter: Adapter, clean: CleanRecord, batch: Batch, variants: list[Variant], tally: SkipTally
) -> None:
    batch_size, num_layers = batch.size, adapter.num_layers
    for chunk in _chunks(variants, batch, tally.replay_tokens):
        active: list[Variant] = []
        state: torch.Tensor | None = None  # (len(active) * batch, seq, dim)
        cache: dict = {}
        for layer in range(chunk[0].layer, num_layers):
            outputs = []
            if active:
                assert state is not None
                out = call_layer(adapter.layers[layer], clean.calls[layer], state, batch_size, cache)
                tally.layer(active, layer, out - state)
                outputs.append(out)
            entering = [v for v in chunk if v.layer == layer]
            for variant in entering:
                out = _entry(adapter, clean, variant, batch_size, tally)
                tally.layer([variant], layer, out - clean.states[layer])
                outputs.append(out)
            active += entering
            state = torch.cat(outputs) if len(outputs) > 1 else outputs[0]
        assert state is not None
        for index, variant in enumerate(active):
            final = state[index * batch_size : (index + 1) * batch_size]
            tally.output(variant, adapter.logits_from_hidden(final))


@torch.no_grad()
def naive_variant(
    model: nn.Module, adapter: Adapter, batch: Batch, variant: Variant, tally: SkipTally
) -> None:
    """Reference: one full forward pass with the perturbation applied by hooks."""
    s = variant.layer
    with ExitStack() as stack:
        if variant.kind in ("layer", "future"):
            before_t = _before_t(tally)

            def replace(_module: nn.Module, args: tuple, kwargs: dict, output: Any) -> Any:
                hidden = args[0] if args else kwargs["hidden_states"]
                if variant.kind == "layer":
                    new = hidden
                else:
                    new = torch.where(before_t[..., None], hidden, first_tensor(output))
                return new if isinstance(output, torch.Tensor) else (new, *output[1:])

            stack.enter_context(hooks([adapter.layers[s].register_forward_hook(replace, with_kwargs=True)]))
        else:
            stack.enter_context(zeroed(adapter.attn_out[s] if variant.kind == "attn" else adapter.mlp_out[s]))
        passer = CleanPass(adapter, record_calls=False)
        record = stack.enter_context(passer.active())
        logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, use_cache=False).logits
    for layer in range(s, adapter.num_layers):
        tally.layer([variant], layer, record.states[layer + 1] - record.states[layer])
    tally.output(variant, logits)


def skip_probes(
    model: nn.Module,
    adapter: Adapter,
    clean: CleanRecord,
    batch: Batch,
    acc: ProbeAccumulator,
    options: ProbeOptions,
    kinds: tuple[str, ...] | None = None,
    naive: bool = False,
) -> None:
    """Run every variant on one batch (prefix reuse, or ``naive`` full passes) and add to ``acc``."""
    tally = SkipTally(adapter.num_layers, batch, clean, adapter, options)
    variants = variants_for(adapter, options, kinds)
    if naive:
        for variant in variants:
            naive_variant(model, adapter, batch, variant, tally)
    else:
        replay_variants(model, adapter, clean, batch, variants, tally)
    tally.commit(acc)
    if variants and any(v.kind == "layer" for v in variants):
        assert clean.logits is not None
        where, targets = tally.eval_where, tally.eval_targets
        correct, nll, count = prediction_rows(clean.logits, where, targets, adapter.residue_onehot)
        acc.add_rows("baseline_accuracy", correct, count)
        acc.add_rows("baseline_nll", nll, count)
