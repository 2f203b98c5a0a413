"""Per-layer measurements of how a model uses its depth, from one instrumented pass per batch.

Notation (pre-LN): ``h_l`` is the input of layer ``l`` (``h_0`` the embeddings, ``h_L`` the last layer's
output before the final norm), ``a_l`` its attention update, ``m_l`` its MLP update,
``h_{l+1} = h_l + a_l + m_l`` and ``D_l = h_{l+1} - h_l``. Measurements (see ``depth-probes.md``):
relative contributions and cosines, logit lens (KL to the final distribution, top-1 and top-k
agreement) at all residue positions and at masked ones, angular distance between every pair of
states, effective rank (Roy & Vetterli, entropy of the normalised singular values) and stable rank of
each state's token matrix over all sequences, attention entropy per layer and head. The layer-skip
and deletion probes live in ``skips.py`` and add to the same accumulator.

Everything is summed over batches in a ``ProbeAccumulator`` and divided once at the end, so the
numbers do not depend on the batch size. The measurements the summary metrics are built from are also kept
per sequence (``add_rows``): ``uncertainty.py`` turns them into standard errors across sequences. The ranks
are also measured per sequence (each sequence's own token matrix, as rank collapse is defined per input).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from analyzers.depth.adapters import Adapter
from analyzers.depth.batches import Batch
from analyzers.depth.instrument import EPS, CleanPass, CleanRecord
from analyzers.depth.scoring import eval_positions, prediction_rows

ZERO_NORM = 1e-6  # a residual state this small is the zero vector ESM gives masked tokens at h_0


@dataclass
class ProbeOptions:
    """Which probes to run and their knobs."""

    top_k: int = 5
    skips: bool = True  # layer-skip heatmap, output effect and layer deletion
    sublayer_skips: bool = True  # attention-only / MLP-only skips (pre-LN models)
    future: bool = True  # causal models: skip at positions < t, measure at positions >= t
    future_fraction: float = 0.5  # t = this fraction of each sequence's residues
    # Tokens (variants x batch x length) replayed together by the skip probes; None: one variant at a time on
    # CPU (measured: a layer's cost per sequence grows with batch once eager attention maps leave the cache)
    # and 16384 on GPUs, where batching amortises kernel launches.
    replay_tokens: int | None = None


def ranks_from_eigenvalues(squared: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(stable rank, effective rank)`` of matrices ``X`` from the eigenvalues of ``X^T X`` (or ``X X^T``),
    the squared singular values ``(..., k)``: stable rank ``||X||_F^2 / ||X||_2^2`` (the quantity seed 000
    calls rank_eff) and the Roy & Vetterli effective rank ``exp(H(s / sum s))``, each ``(...)``."""
    squared = squared.clamp_min(0)
    singular = squared.sqrt()
    stable = squared.sum(-1) / squared.amax(-1).clamp_min(EPS)
    p = singular / singular.sum(-1, keepdim=True).clamp_min(EPS)
    return stable, torch.exp(torch.special.entr(p).sum(-1))


def effective_rank_from_gram(gram: torch.Tensor) -> float:
    """Roy & Vetterli effective rank ``exp(H(s / sum s))`` from ``X^T X`` (singular values ``s =
    sqrt(eig)``)."""
    return float(ranks_from_eigenvalues(torch.linalg.eigvalsh(gram.double()))[1])


def stable_rank_from_gram(gram: torch.Tensor) -> float:
    """Stable rank ``||X||_F^2 / ||X||_2^2`` from ``X^T X`` (the quantity seed 000 calls rank_eff)."""
    return float(ranks_from_eigenvalues(torch.linalg.eigvalsh(gram.double()))[0])


def effective_rank(matrix: torch.Tensor) -> float:
    """Roy & Vetterli effective rank of a matrix ``(tokens, dim)``."""
    matrix = matrix.double()
    return effective_rank_from_gram(matrix.T @ matrix)


def stable_rank(matrix: torch.Tensor) -> float:
    """Stable rank of a matrix ``(tokens, dim)``."""
    matrix = matrix.double()
    return stable_rank_from_gram(matrix.T @ matrix)


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
        # Per-sequence sums and counts: name -> [batch index, sums (batch, ...), counts (batch, ...)] per
        # batch.
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
        out: dict[str, Any] = {
            "num_layers": self.num_layers,
            "objective": self.objective,
            "pre_ln": self.pre_ln,
        }
        for name in sorted(self.sums):
            out[name] = self.mean(name)
        for name in sorted(self.maxima):
            out[name] = self.maxima[name].cpu().tolist()
        if self.grams is not None:
            # one batched call
            stable, erank = ranks_from_eigenvalues(torch.linalg.eigvalsh(self.grams.double()))
            out["erank"], out["stable_rank"] = erank.tolist(), stable.tolist()
        if "attention_entropy" in self.sums:
            out["attention_entropy_mean"] = [
                float(torch.tensor(row).nanmean()) for row in out["attention_entropy"]
            ]
        if not self.pre_ln:
            out["contribution"] = "post-LN: residual decomposition not defined"
        out["notes"] = sorted(self.notes)
        return out


class _ContributionSums:
    """Reduces (h_l, a_l, m_l) of each layer to sums over residue tokens as soon as the layer ran, and adds
    all layers to the accumulator at once after the pass (``flush``): nothing is read on the host.

    A ratio or cosine is left out where its reference vector is zero: ESM's token dropout zeroes the
    embeddings of masked tokens, so ``h_0`` is exactly 0 there and ``||a_0|| / ||h_0||`` is undefined."""

    def __init__(self, real: torch.Tensor) -> None:
        self.real = real  # (batch, seq)
        self.by_layer: dict[int, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}

    def __call__(self, layer: int, hidden: torch.Tensor, attn: torch.Tensor, mlp: torch.Tensor) -> None:
        h, a, m = hidden.float(), attn.float(), mlp.float()  # (batch, seq, dim)
        h_norm, ha_norm = h.norm(dim=-1), (h + a).norm(dim=-1)  # (batch, seq)
        defined_h, defined_ha = self.real & (h_norm > ZERO_NORM), self.real & (ha_norm > ZERO_NORM)
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
        # (6, batch, seq)
        defined = torch.stack([defined_h, defined_ha, defined_h, defined_h, defined_ha, defined_h])
        sums = (ratios * defined).sum((1, 2)).double()  # (6,)
        counts = defined.sum((1, 2)).double()
        maxima = ratios[:3].masked_fill(~defined[:3], float("-inf")).amax((1, 2)).double()  # (3,)
        self.by_layer[layer] = (sums, counts, maxima)

    def flush(self, acc: ProbeAccumulator) -> None:
        """Add every layer's sums ``(6, layers)`` and maxima ``(3, layers)`` (layers not seen: 0 and -inf)."""
        if not self.by_layer:
            return
        some = next(iter(self.by_layer.values()))
        missing = (
            torch.zeros_like(some[0]),
            torch.zeros_like(some[1]),
            torch.full_like(some[2], float("-inf")),
        )
        layers = [self.by_layer.get(index, missing) for index in range(acc.num_layers)]
        sums, counts, maxima = (torch.stack(part, -1) for part in zip(*layers, strict=True))
        acc.add("contribution_sums", sums, counts)
        acc.set_max("contribution_max", maxima)
        self.by_layer.clear()


class _AttentionEntropy:
    """Reduces each layer's attention probabilities to per-head entropy sums over residue queries as soon as
    the layer produces them; all layers go to the accumulator at once after the pass (``flush``)."""

    def __init__(self, batch: Batch, causal: bool) -> None:
        mask = batch.attention_mask.float()
        keys = mask.cumsum(-1) if causal else mask.sum(-1, keepdim=True)
        keys = keys.expand_as(mask)  # (batch, seq): keys each query can see
        # log(1) = 0: a single visible key has no entropy to normalise
        self.usable = (batch.real & (keys >= 2)).float()
        self.log_keys = keys.clamp_min(2).log()
        self.by_layer: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def __call__(self, layer: int, probs: torch.Tensor) -> None:
        # -sum p log p with in-place ops on one float32 copy: 2.5x faster than torch.special.entr on CPU.
        probs = probs.float()
        entropy = -probs.clamp_min(1e-30).log_().mul_(probs).sum(-1)  # (batch, heads, seq) nats
        weight = self.usable[:, None, :]  # (batch, 1, seq)
        normalised = ((entropy / self.log_keys[:, None, :]) * weight).sum(2).double()  # (batch, heads)
        raw = (entropy * weight).sum(2).double()
        self.by_layer[layer] = (normalised, raw)

    def flush(self, acc: ProbeAccumulator) -> None:
        """Add per-sequence sums ``(batch, layers, heads)`` over usable queries (layers not seen: 0 of 0)."""
        if not self.by_layer:
            return
        count = self.usable.sum(1).double()[:, None]  # (batch, 1): usable queries of each sequence
        some = next(iter(self.by_layer.values()))[0]
        missing = (torch.zeros_like(some), torch.zeros_like(some))
        layers = [
            (*self.by_layer.get(index, missing), count if index in self.by_layer else torch.zeros_like(count))
            for index in range(acc.num_layers)
        ]
        # (batch, layers, .)
        normalised, raw, counts = (torch.stack(part, 1) for part in zip(*layers, strict=True))
        acc.add_rows("attention_entropy", normalised, counts)
        acc.add_rows("attention_entropy_nats", raw, counts)
        self.by_layer.clear()


def _chunks(total: int, step: int) -> list[slice]:
    return [slice(start, min(start + step, total)) for start in range(0, total, step)]


def logit_lens(
    acc: ProbeAccumulator,
    adapter: Adapter,
    record: CleanRecord,
    batch: Batch,
    top_k: int,
    max_elements: int = 1 << 26,
) -> None:
    """KL(p_l || p_L), top-1 and top-k agreement of every state's lens distribution with the output, and the
    lens's own NLL of the true token at the evaluated positions (masked ones, or next token): the perplexity
    a model would have if it stopped at state ``l`` (``lens_nll``).

    Several states go through the head at once, as many (state, sequence) rows as keep one chunk's lens
    distributions and hidden states under ``max_elements`` values each: all of ESM's states in a few chunks
    (33-token vocabulary), a couple of sequences of one state with ProtGPT2's 50k-token vocabulary, where a
    whole batch would need gigabytes per layer."""
    logits = record.logits
    assert logits is not None
    size, length, vocab = logits.shape
    k = min(top_k, vocab)
    where = {"": batch.real} | ({"_masked": batch.masked} if batch.masked is not None else {})
    num_states, dim = len(record.states), record.states[0].shape[-1]
    sums = torch.zeros(len(where), 3, size, num_states, dtype=torch.float64, device=logits.device)
    scored = torch.zeros(2, size, num_states, dtype=torch.float64, device=logits.device)  # NLL, count
    eval_where, targets = eval_positions(batch, adapter.objective)
    all_weights = torch.stack([mask.float() for mask in where.values()])  # (where, batch, seq)
    per_chunk = max(1, max_elements // (length * max(vocab, dim)))  # (state, sequence) rows per chunk
    row_step = min(size, per_chunk)
    for part in _chunks(size, row_step):
        log_final = logits[part].float().log_softmax(-1)  # (rows, seq, vocab)
        top_final = log_final.topk(k, dim=-1).indices  # (rows, seq, k)
        weights = all_weights[:, part]  # (where, rows, seq)
        for chosen in _chunks(num_states, max(1, per_chunk // row_step)):
            hidden = torch.stack([record.states[index][part] for index in range(chosen.start, chosen.stop)])
            lens = adapter.logits_from_hidden(hidden).float().log_softmax(-1)  # (states, rows, seq, vocab)
            kl = (lens.exp() * (lens - log_final)).sum(-1)  # (states, rows, seq)
            top_lens = lens.topk(k, dim=-1).indices  # (states, rows, seq, k)
            top1 = (top_lens[..., 0] == top_final[..., 0]).float()
            overlap = (top_lens[..., :, None] == top_final[..., None, :]).any(-1).float().mean(-1)
            values = torch.stack([kl, top1, overlap], 1)  # (states, 3, rows, seq)
            summed = (weights[:, None, None] * values[None]).sum(-1).double()  # (where, states, 3, rows)
            sums[:, :, part, chosen] = summed.permute(0, 2, 3, 1)
            # (states, rows)
            nll, count = _lens_nll(lens, eval_where[part], targets[part], adapter.residue_onehot)
            scored[0, part, chosen], scored[1, part, chosen] = nll.T, count.T
    for position, (suffix, mask) in enumerate(where.items()):
        count = mask.double().sum(-1)[:, None]  # (batch, 1)
        for metric, name in enumerate(("logit_lens_kl", "logit_lens_top1", "logit_lens_topk")):
            acc.add_rows(f"{name}{suffix}", sums[position, metric], count)
    acc.add_rows("lens_nll", scored[0], scored[1])


def _lens_nll(
    lens: torch.Tensor, where: torch.Tensor, targets: torch.Tensor, residue_onehot: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per state and sequence ``(summed NLL, count)`` ``(states, rows)`` of the true tokens under lens log
    probabilities ``(states, rows, seq, vocab)``: a gather (they are normalised already), or SaProt's sum over
    structure letters (``scoring.prediction_rows``)."""
    states, rows = lens.shape[:2]
    if residue_onehot is not None:
        flat = lens.flatten(0, 1)  # (states * rows, seq, vocab)
        _, nll, count = prediction_rows(
            flat, where.repeat(states, 1), targets.repeat(states, 1), residue_onehot
        )
        return nll.view(states, rows), count.view(states, rows)
    weight = where.double()  # (rows, seq)
    picked = lens.gather(-1, targets.expand(states, -1, -1)[..., None]).squeeze(-1)  # (states, rows, seq)
    return -(picked * weight).sum(-1), weight.sum(-1).expand(states, -1)


def angular_and_ranks(
    acc: ProbeAccumulator, record: CleanRecord, real: torch.Tensor, chunk: int = 2048
) -> None:
    """Angular distance arccos(cos(h_l, h_m)) / pi for every pair of states (mean over residue tokens where
    neither state is the zero vector), and the Gram matrices X_l^T X_l of the residue-token matrices for the
    ranks. Every token is taken, padding weighted 0: selecting the residue tokens would wait for the GPU."""
    num_states = len(record.states)
    dim = record.states[0].shape[-1]
    flat_real = real.reshape(-1)
    angular = torch.zeros(num_states, num_states, dtype=torch.float64, device=real.device)
    pairs = torch.zeros(num_states, num_states, dtype=torch.float64, device=real.device)
    grams = torch.zeros(num_states, dim, dim, dtype=torch.float64, device=real.device)
    for rows in _chunks(flat_real.numel(), chunk):
        weight = flat_real[rows].float()[None, :, None]  # (1, n, 1)
        stacked = torch.stack([h.reshape(-1, dim)[rows].float() for h in record.states])  # (L+1, n, dim)
        # float64 before the product: a float32 Gram of a low-rank matrix at width 1280 misreads its rank
        # (24.49 instead of 23.88 on a rank-25 test matrix).
        as64 = stacked.double() * weight.double()
        grams += torch.einsum("lnd,lne->lde", as64, as64)
        norms = stacked.norm(dim=-1, keepdim=True)  # (L+1, n, 1)
        nonzero = (norms > ZERO_NORM).float() * weight
        unit = stacked / norms.clamp_min(EPS)
        cosine = torch.einsum("lnd,mnd->nlm", unit, unit).clamp(-1, 1)  # (n, L+1, L+1)
        # (n, L+1, L+1): 1 where both states are nonzero
        both = torch.einsum("lni,mni->nlm", nonzero, nonzero)
        angular += (torch.arccos(cosine) / math.pi * both).double().sum(0)  # float64 sum: any chunking agrees
        pairs += both.double().sum(0)
    angular.diagonal().zero_()  # a state is at distance 0 from itself, not arccos(1 - float noise)
    acc.add("angular_distance", angular, pairs)
    acc.grams = grams if acc.grams is None else acc.grams + grams
    sequence_ranks(acc, record, real)


def sequence_spectra(
    states: list[torch.Tensor], real: torch.Tensor, max_elements: int = 1 << 27
) -> torch.Tensor:
    """Squared singular values ``(batch, states, min(seq, dim))`` of each sequence's own token matrix at every
    state, in float64 (padding rows zeroed, which changes none of them): eigenvalues of the smaller Gram
    matrix (float64: the Gram squares the condition number, which moves erank by ~1e-8 relative), every
    state and sequence in one batched ``eigvalsh`` per ``max_elements`` Gram values (one host sync each, for
    the solver's error codes)."""
    weight = real.double()[..., None]  # (batch, seq, 1)
    size, length, dim = states[0].shape
    side = min(length, dim)
    parts = []
    for chosen in _chunks(len(states), max(1, max_elements // (size * side * side))):
        grams = []
        for hidden in states[chosen]:  # one state at a time: (batch, seq, dim) float64 at most
            matrix = hidden.double() * weight
            grams.append(matrix @ matrix.mT if length <= dim else matrix.mT @ matrix)  # (batch, side, side)
        parts.append(torch.linalg.eigvalsh(torch.stack(grams, 1)))  # (batch, chosen, side)
    return torch.cat(parts, 1)


def sequence_ranks(acc: ProbeAccumulator, record: CleanRecord, real: torch.Tensor) -> None:
    """Stable and effective rank of each sequence's own token matrix at every state (``sequence_spectra``),
    kept per sequence, with the ratios to the sequence's first state (``stable_rank_retention``: final over
    initial)."""
    # (batch, L+1)
    stable_by_state, erank_by_state = ranks_from_eigenvalues(sequence_spectra(record.states, real))
    ones = torch.ones_like(stable_by_state[:, :1])
    acc.add_rows("sequence_stable_rank", stable_by_state, ones)
    acc.add_rows("sequence_erank", erank_by_state, ones)
    acc.add_rows("sequence_erank_relative", erank_by_state / erank_by_state[:, :1].clamp_min(EPS), ones)
    acc.add_rows(
        "sequence_stable_rank_relative", stable_by_state / stable_by_state[:, :1].clamp_min(EPS), ones
    )
    acc.add_rows(
        "stable_rank_retention", stable_by_state[:, -1] / stable_by_state[:, 0].clamp_min(EPS), ones[:, 0]
    )


@torch.no_grad()
def clean_pass(
    model: nn.Module, adapter: Adapter, batch: Batch, acc: ProbeAccumulator, options: ProbeOptions
) -> CleanRecord:
    """One instrumented forward pass: records states and layer calls, and adds every no-skip probe. Nothing is
    read on the host but the rank solver's error codes (``sequence_spectra``)."""
    acc.batch_index += 1  # per-sequence rows of this batch start here
    contributions = _ContributionSums(batch.real) if adapter.pre_ln else None
    entropy = _AttentionEntropy(batch, adapter.objective == "causal")
    passer = CleanPass(
        adapter, on_contribution=contributions, on_attention=entropy, record_calls=options.skips
    )
    with passer.active() as record:
        record.logits = model(
            input_ids=batch.input_ids, attention_mask=batch.attention_mask, use_cache=False
        ).logits
    if contributions is not None:
        contributions.flush(acc)
    entropy.flush(acc)
    if not passer.saw_attention:
        acc.notes.add("attention probabilities not returned (non-eager attention): no attention entropy")
    logit_lens(acc, adapter, record, batch, options.top_k)
    angular_and_ranks(acc, record, real=batch.real)
    return record


def reshape_contributions(layers: dict[str, Any]) -> None:
    """Turn the stacked contribution sums into named per-layer lists (in place)."""
    sums = layers.pop("contribution_sums", None)
    maxima = layers.pop("contribution_max", None)
    if sums is None:
        return
    names = ("attn", "mlp", "block", "cos_attn", "cos_mlp", "cos_res")
    contribution = dict(zip(names, sums, strict=True))
    if maxima is not None:
        contribution.update({f"{n}_max": row for n, row in zip(names[:3], maxima, strict=False)})
    layers["contribution"] = contribution
