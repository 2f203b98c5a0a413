"""The depth probe set as it was before issue 28 made it GPU-friendly: one probe, one layer, one state at a
time, with per-layer one-hot sums and the ranks from one eigendecomposition per state. Kept verbatim (from
``analyzers/depth/probes.py`` at kb 0.3.0) as the independent computation that the vectorised probes in
``analyzers/depth/probes.py`` must reproduce (``tests/test_depth_probe_speed.py``)."""

# ruff: noqa
# mypy: ignore-errors

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from analyzers.depth.adapters import Adapter
from analyzers.depth.batches import Batch
from analyzers.depth.instrument import EPS, CleanPass, CleanRecord
from analyzers.depth.probes import ProbeOptions
from analyzers.depth.scoring import eval_positions, prediction_rows

ZERO_NORM = 1e-6


def effective_rank_from_gram(gram: torch.Tensor) -> float:
    eigen = torch.linalg.eigvalsh(gram.double()).clamp_min(0)
    singular = eigen.sqrt()
    p = singular / singular.sum().clamp_min(EPS)
    return float(torch.exp(torch.special.entr(p).sum()))


def stable_rank_from_gram(gram: torch.Tensor) -> float:
    eigen = torch.linalg.eigvalsh(gram.double()).clamp_min(0)
    return float(eigen.sum() / eigen.max().clamp_min(EPS))


def _cos(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.cosine_similarity(x, y, dim=-1, eps=EPS)  # (batch, seq)


class ProbeAccumulator:
    """Sums (and maxima) over batches; ``finish()`` turns them into per-layer lists."""

    def __init__(self, num_layers: int, objective: str, pre_ln: bool) -> None:
        self.num_layers, self.objective, self.pre_ln = num_layers, objective, pre_ln
        self.sums: dict[str, torch.Tensor] = {}
        self.counts: dict[str, torch.Tensor] = {}
        self.maxima: dict[str, torch.Tensor] = {}
        self.grams: torch.Tensor | None = None  # (L+1, dim, dim) float64
        self.notes: set[str] = set()
        # Per-sequence sums and counts: name -> [batch index, sums (batch, ...), counts (batch, ...)] per batch.
        self.row_parts: dict[str, list[list[Any]]] = {}
        self.batch_index = 0

    def add(self, name: str, total: torch.Tensor, count: torch.Tensor | float) -> None:
        """Add a sum and the number of terms it holds (both may be arrays of the same shape). Sums stay on
        the device they come from until ``finish``: moving each to the host would wait for the GPU."""
        total = total.detach().double()
        count = torch.as_tensor(count, dtype=torch.float64, device=total.device).detach()
        if name in self.sums:
            self.sums[name] += total
            self.counts[name] += count
        else:
            self.sums[name], self.counts[name] = total.clone(), count.clone()

    def add_rows(self, name: str, totals: torch.Tensor, counts: torch.Tensor) -> None:
        """Add per-sequence sums ``(batch, ...)`` and their counts (broadcastable): kept per sequence for the
        standard errors, and added to the batch totals that ``finish`` divides."""
        totals, counts = totals.detach().double(), counts.detach().double()
        self.add(name, totals.sum(0), counts.expand_as(totals).sum(0) if counts.dim() else counts)
        parts = self.row_parts.setdefault(name, [])
        if parts and parts[-1][0] == self.batch_index:  # another layer of the same batch
            parts[-1][1] = parts[-1][1] + totals
            parts[-1][2] = parts[-1][2] + counts
        else:
            parts.append([self.batch_index, totals.clone(), counts.clone()])

    def rows(self) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        """Per-sequence ``(sums, counts)`` of every measurement added with ``add_rows``: ``(sequences, ...)``,
        float64 on the host."""
        out = {}
        for name, parts in self.row_parts.items():
            sums = torch.cat([p[1] for p in parts]).cpu()
            counts = torch.cat([p[2].expand_as(p[1]) for p in parts]).cpu()
            out[name] = (sums, counts)
        return out

    def set_max(self, name: str, value: torch.Tensor) -> None:
        """Keep the element-wise maximum over batches."""
        value = value.detach().double()
        self.maxima[name] = torch.maximum(self.maxima[name], value) if name in self.maxima else value.clone()

    def mean(self, name: str) -> list[Any]:
        """Sum / count (NaN where nothing was counted), as nested lists."""
        if name not in self.sums:
            return []
        count, total = self.counts[name].cpu(), self.sums[name].cpu()
        mean = torch.where(count > 0, total / count.clamp_min(1), torch.full_like(count, float("nan")))
        return mean.tolist()

    def finish(self) -> dict[str, Any]:
        """Per-layer lists of every measurement (JSON-ready apart from NaN)."""
        out: dict[str, Any] = {"num_layers": self.num_layers, "objective": self.objective, "pre_ln": self.pre_ln}
        for name in sorted(self.sums):
            out[name] = self.mean(name)
        for name in sorted(self.maxima):
            out[name] = self.maxima[name].cpu().tolist()
        if self.grams is not None:
            out["erank"] = [effective_rank_from_gram(g) for g in self.grams]
            out["stable_rank"] = [stable_rank_from_gram(g) for g in self.grams]
        if "attention_entropy" in self.sums:
            out["attention_entropy_mean"] = [
                float(torch.tensor(row).nanmean()) for row in out["attention_entropy"]
            ]
        if not self.pre_ln:
            out["contribution"] = "post-LN: residual decomposition not defined"
        out["notes"] = sorted(self.notes)
        return out


def _contribution_hook(acc: ProbeAccumulator, real: torch.Tensor):  # noqa: ANN202
    """Reduce (h_l, a_l, m_l) of one layer to sums over residue tokens as soon as the layer ran.

    A ratio or cosine is left out where its reference vector is zero: ESM's token dropout zeroes the
    embeddings of masked tokens, so ``h_0`` is exactly 0 there and ``||a_0|| / ||h_0||`` is undefined."""
    num_layers = acc.num_layers

    def reduce(layer: int, hidden: torch.Tensor, attn: torch.Tensor, mlp: torch.Tensor) -> None:
        h, a, m = hidden.float(), attn.float(), mlp.float()  # (batch, seq, dim)
        h_norm, ha_norm = h.norm(dim=-1), (h + a).norm(dim=-1)  # (batch, seq)
        defined_h, defined_ha = real & (h_norm > ZERO_NORM), real & (ha_norm > ZERO_NORM)
        h_norm, ha_norm = h_norm.clamp_min(EPS), ha_norm.clamp_min(EPS)
        ratios = torch.stack(
            [
                a.norm(dim=-1) / h_norm,
                m.norm(dim=-1) / ha_norm,
                (a + m).norm(dim=-1) / h_norm,
                _cos(a, h),
                _cos(m, h + a),
                _cos(h + a + m, h),
            ]
        )  # (6, batch, seq)
        defined = torch.stack([defined_h, defined_ha, defined_h, defined_h, defined_ha, defined_h])  # (6, batch, seq)
        onehot = torch.zeros(num_layers, dtype=torch.float64, device=h.device)
        onehot[layer] = 1
        sums = (ratios * defined).sum((1, 2)).double()  # (6,)
        counts = defined.sum((1, 2)).double()
        acc.add("contribution_sums", sums[:, None] * onehot, counts[:, None] * onehot)
        maxima = torch.full((3, num_layers), float("-inf"), dtype=torch.float64, device=h.device)
        maxima[:, layer] = ratios[:3].masked_fill(~defined[:3], float("-inf")).amax((1, 2)).double()
        acc.set_max("contribution_max", maxima)

    return reduce


def _attention_hook(acc: ProbeAccumulator, batch: Batch, causal: bool):  # noqa: ANN202
    """Reduce one layer's attention probabilities to per-head entropy sums over residue queries."""
    keys = batch.attention_mask.float().cumsum(-1) if causal else batch.attention_mask.float().sum(-1, keepdim=True)
    keys = keys.expand_as(batch.attention_mask.float())  # (batch, seq): keys each query can see
    usable = batch.real & (keys >= 2)  # log(1) = 0: a single visible key has no entropy to normalise
    log_keys = keys.clamp_min(2).log()
    num_layers = acc.num_layers

    def reduce(layer: int, probs: torch.Tensor) -> None:
        # -sum p log p with in-place ops on one float32 copy: 2.5x faster than torch.special.entr on CPU.
        probs = probs.float()
        entropy = -probs.clamp_min(1e-30).log_().mul_(probs).sum(-1)  # (batch, heads, seq) nats
        weight = usable[:, None, :].float()  # (batch, 1, seq)
        onehot = torch.zeros(num_layers, 1, dtype=torch.float64, device=probs.device)
        onehot[layer] = 1
        normalised = ((entropy / log_keys[:, None, :]) * weight).sum(2).double()  # (batch, heads)
        raw = (entropy * weight).sum(2).double()
        count = weight.sum(2).double()  # (batch, 1)
        acc.add_rows("attention_entropy", onehot * normalised[:, None, :], onehot * count[:, None, :])
        acc.add_rows("attention_entropy_nats", onehot * raw[:, None, :], onehot * count[:, None, :])

    return reduce


def logit_lens(
    acc: ProbeAccumulator, adapter: Adapter, record: CleanRecord, batch: Batch, top_k: int, max_elements: int = 1 << 26
) -> None:
    """KL(p_l || p_L), top-1 and top-k agreement of every state's lens distribution with the output, and the
    lens's own NLL of the true token at the evaluated positions (masked ones, or next token): the perplexity
    a model would have if it stopped at state ``l`` (``lens_nll``).

    Sequences are taken a few at a time so that one lens distribution holds at most ``max_elements``
    values: with a 50k-token vocabulary (ProtGPT2) a whole batch would need gigabytes per layer."""
    logits = record.logits
    assert logits is not None
    k = min(top_k, logits.shape[-1])
    where = {"": batch.real} | ({"_masked": batch.masked} if batch.masked is not None else {})
    num_states, size = len(record.states), logits.shape[0]
    sums = torch.zeros(len(where), 3, size, num_states, dtype=torch.float64, device=logits.device)
    scored = torch.zeros(2, size, num_states, dtype=torch.float64, device=logits.device)  # NLL, count
    eval_where, targets = eval_positions(batch, adapter.objective)
    rows = max(1, max_elements // (logits.shape[1] * logits.shape[2]))
    for start in range(0, logits.shape[0], rows):
        part = slice(start, start + rows)
        log_final = logits[part].float().log_softmax(-1)  # (rows, seq, vocab)
        top_final = log_final.topk(k, dim=-1).indices  # (rows, seq, k)
        weights = torch.stack([mask[part].float() for mask in where.values()])  # (where, rows, seq)
        for index, hidden in enumerate(record.states):
            lens = adapter.logits_from_hidden(hidden[part]).float().log_softmax(-1)
            kl = (lens.exp() * (lens - log_final)).sum(-1)  # (rows, seq)
            top_lens = lens.topk(k, dim=-1).indices
            top1 = (top_lens[..., 0] == top_final[..., 0]).float()
            overlap = (top_lens[..., :, None] == top_final[..., None, :]).any(-1).float().mean(-1)  # (rows, seq)
            values = torch.stack([kl, top1, overlap])  # (3, rows, seq)
            sums[:, :, part, index] = (weights[:, None] * values[None]).sum(-1).double()  # (where, 3, rows)
            _, nll, count = prediction_rows(lens, eval_where[part], targets[part], adapter.residue_onehot)
            scored[0, part, index], scored[1, part, index] = nll, count
    for position, (suffix, mask) in enumerate(where.items()):
        count = mask.double().sum(-1)[:, None]  # (batch, 1)
        for metric, name in enumerate(("logit_lens_kl", "logit_lens_top1", "logit_lens_topk")):
            acc.add_rows(f"{name}{suffix}", sums[position, metric], count)
    acc.add_rows("lens_nll", scored[0], scored[1])


def angular_and_ranks(acc: ProbeAccumulator, record: CleanRecord, real: torch.Tensor, chunk: int = 2048) -> None:
    """Angular distance arccos(cos(h_l, h_m)) / pi for every pair of states (mean over residue tokens where
    neither state is the zero vector), and the Gram matrices X_l^T X_l of the residue-token matrices for
    the ranks."""
    flat_real = real.reshape(-1)
    tokens = int(flat_real.sum())
    if tokens == 0:
        return
    num_states = len(record.states)
    dim = record.states[0].shape[-1]
    angular = torch.zeros(num_states, num_states, dtype=torch.float64, device=real.device)
    pairs = torch.zeros(num_states, num_states, dtype=torch.float64, device=real.device)
    grams = torch.zeros(num_states, dim, dim, dtype=torch.float64, device=real.device)
    index = flat_real.nonzero().squeeze(1)
    for start in range(0, tokens, chunk):
        rows = index[start : start + chunk]
        stacked = torch.stack([h.reshape(-1, dim)[rows].float() for h in record.states])  # (L+1, n, dim)
        # float64 before the product: a float32 Gram of a low-rank matrix at width 1280 misreads its rank
        # (24.49 instead of 23.88 on a rank-25 test matrix).
        as64 = stacked.double()
        grams += torch.einsum("lnd,lne->lde", as64, as64)
        norms = stacked.norm(dim=-1, keepdim=True)  # (L+1, n, 1)
        nonzero = (norms > ZERO_NORM).float()
        unit = stacked / norms.clamp_min(EPS)
        cosine = torch.einsum("lnd,mnd->nlm", unit, unit).clamp(-1, 1)  # (n, L+1, L+1)
        both = torch.einsum("lni,mni->nlm", nonzero, nonzero)  # (n, L+1, L+1): 1 where both states are nonzero
        angular += (torch.arccos(cosine) / math.pi * both).sum(0).double()
        pairs += both.sum(0).double()
    angular.diagonal().zero_()  # a state is at distance 0 from itself, not arccos(1 - float noise)
    acc.add("angular_distance", angular, pairs)
    acc.grams = grams if acc.grams is None else acc.grams + grams
    sequence_ranks(acc, record, real)


def sequence_ranks(acc: ProbeAccumulator, record: CleanRecord, real: torch.Tensor) -> None:
    """Stable and effective rank of each sequence's own token matrix at every state, from its singular values
    in float64 (padding rows are zero and change none of them); kept per sequence, with the ratios to the
    sequence's first state (``stable_rank_retention``: final over initial)."""
    weight = real.double()[..., None]  # (batch, seq, 1)
    stable, erank = [], []
    for hidden in record.states:  # one state at a time: (batch, seq, dim) float64 at most
        matrix = hidden.double() * weight
        # eigenvalues of the smaller Gram matrix are the squared singular values (float64: the Gram squares the
        # condition number, which moves erank by ~1e-8 relative); batched eigvalsh is far cheaper than an SVD
        gram = matrix @ matrix.mT if matrix.shape[1] <= matrix.shape[2] else matrix.mT @ matrix
        squared = torch.linalg.eigvalsh(gram).clamp_min(0)  # (batch, min(seq, dim))
        singular = squared.sqrt()
        stable.append(squared.sum(-1) / squared.amax(-1).clamp_min(EPS))
        p = singular / singular.sum(-1, keepdim=True).clamp_min(EPS)
        erank.append(torch.exp(torch.special.entr(p).sum(-1)))
    stable_by_state, erank_by_state = torch.stack(stable, -1), torch.stack(erank, -1)  # (batch, L+1)
    ones = torch.ones_like(stable_by_state[:, :1])
    acc.add_rows("sequence_stable_rank", stable_by_state, ones)
    acc.add_rows("sequence_erank", erank_by_state, ones)
    acc.add_rows("sequence_erank_relative", erank_by_state / erank_by_state[:, :1].clamp_min(EPS), ones)
    acc.add_rows("sequence_stable_rank_relative", stable_by_state / stable_by_state[:, :1].clamp_min(EPS), ones)
    acc.add_rows("stable_rank_retention", stable_by_state[:, -1] / stable_by_state[:, 0].clamp_min(EPS), ones[:, 0])


@torch.no_grad()
def clean_pass(
    model: nn.Module, adapter: Adapter, batch: Batch, acc: ProbeAccumulator, options: ProbeOptions
) -> CleanRecord:
    """One instrumented forward pass: records states and layer calls, and adds every no-skip probe."""
    acc.batch_index += 1  # per-sequence rows of this batch start here
    passer = CleanPass(
        adapter,
        on_contribution=_contribution_hook(acc, batch.real) if adapter.pre_ln else None,
        on_attention=_attention_hook(acc, batch, adapter.objective == "causal"),
        record_calls=options.skips,
    )
    with passer.active() as record:
        record.logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, use_cache=False).logits
    if not passer.saw_attention:
        acc.notes.add("attention probabilities not returned (non-eager attention): no attention entropy")
    logit_lens(acc, adapter, record, batch, options.top_k)
    angular_and_ranks(acc, record, batch.real)
    return record

