"""One instrumented forward pass (plus one per skipped layer) measuring how a model uses its depth.

Notation (pre-LN): ``h_l`` is the input of layer ``l``, ``a_l`` its attention update, ``m_l`` its MLP
update, ``h_{l+1} = h_l + a_l + m_l`` and ``D_l = h_{l+1} - h_l``. Everything is captured with forward
hooks on the modules an ``Adapter`` names, so the model's own code runs unchanged.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn

from analyzers.depth.models import Adapter

EPS = 1e-12


def effective_rank(matrix: torch.Tensor) -> float:
    """Roy & Vetterli effective rank: ``exp(entropy(s / sum s))`` of the singular values."""
    singular = torch.linalg.svdvals(matrix.double())
    p = singular / singular.sum().clamp_min(EPS)
    p = p[p > 0]
    return float(torch.exp(-(p * p.log()).sum()))


def stable_rank(matrix: torch.Tensor) -> float:
    """Stable rank ``||X||_F^2 / ||X||_2^2`` (not the effective rank)."""
    singular = torch.linalg.svdvals(matrix.double())
    return float((singular**2).sum() / (singular[0] ** 2).clamp_min(EPS))


def _mean(values: torch.Tensor, mask: torch.Tensor) -> float:
    """Mean of ``values`` (batch, seq) over positions where ``mask`` is true."""
    return float(values[mask].mean()) if mask.any() else float("nan")


def _cos(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.cosine_similarity(x, y, dim=-1, eps=EPS)  # (batch, seq)


@contextmanager
def _hooks(adapter: Adapter, skip: int | None = None):
    """Record each layer's input and output (and a_l, m_l); with ``skip``, make that layer the identity."""
    record: dict[str, dict[int, torch.Tensor]] = {"inp": {}, "out": {}, "attn": {}, "mlp": {}}
    handles = []

    def layer_hook(index: int):
        def hook(module: nn.Module, args: tuple, kwargs: dict, output: Any):
            hidden_in = args[0] if args else kwargs["hidden_states"]
            record["inp"][index] = hidden_in.detach()
            if index == skip:
                output = hidden_in if isinstance(output, torch.Tensor) else (hidden_in, *output[1:])
            record["out"][index] = (output if isinstance(output, torch.Tensor) else output[0]).detach()
            return output

        return hook

    def store(kind: str, index: int):
        def hook(module: nn.Module, args: tuple, output: torch.Tensor):
            record[kind][index] = (output if isinstance(output, torch.Tensor) else output[0]).detach()

        return hook

    for index, layer in enumerate(adapter.layers):
        handles.append(layer.register_forward_hook(layer_hook(index), with_kwargs=True))
    for index, module in enumerate(adapter.attn_out):
        handles.append(module.register_forward_hook(store("attn", index)))
    for index, module in enumerate(adapter.mlp_out):
        handles.append(module.register_forward_hook(store("mlp", index)))
    try:
        yield record
    finally:
        for handle in handles:
            handle.remove()


def mask_tokens(
    input_ids: torch.Tensor, real: torch.Tensor, mask_token_id: int, fraction: float, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Replace a seeded ``fraction`` of the ``real`` positions by the mask token; returns (ids, masked)."""
    generator = torch.Generator().manual_seed(seed)
    draw = torch.rand(input_ids.shape, generator=generator).to(input_ids.device)  # (batch, seq)
    masked = (draw < fraction) & real
    return input_ids.masked_fill(masked, mask_token_id), masked


def _kl(log_p: torch.Tensor, log_q: torch.Tensor) -> torch.Tensor:
    """KL(p || q) over the last axis, from log-probabilities."""
    return (log_p.exp() * (log_p - log_q)).sum(-1)


@torch.no_grad()
def probe_batch(
    model: nn.Module,
    adapter: Adapter,
    input_ids: torch.Tensor,  # (batch, seq)
    attention_mask: torch.Tensor,  # (batch, seq)
    real: torch.Tensor,  # (batch, seq) bool: residue positions (no special / pad tokens)
    masked: torch.Tensor | None = None,  # (batch, seq) bool: positions replaced by the mask token
    with_skips: bool = True,
) -> dict[str, Any]:
    """All per-layer measurements on one batch; lists are indexed by layer."""
    num_layers = len(adapter.layers)
    with _hooks(adapter) as rec:
        out = model(input_ids=input_ids, attention_mask=attention_mask, output_attentions=True)
    logits = out.logits.float()  # (batch, seq, vocab)
    states = [rec["inp"][i].float() for i in range(num_layers)] + [rec["out"][num_layers - 1].float()]
    result: dict[str, Any] = {"num_layers": num_layers}

    # Logit lens over the L+1 residual states h_0 .. h_L (h_L through the final norm = the model's logits).
    log_final = logits.log_softmax(-1)
    top_final = logits.argmax(-1)
    kl_all, kl_masked, top1 = [], [], []
    for hidden in states:
        lens = adapter.logits_from_hidden(hidden.to(out.logits.dtype)).float().log_softmax(-1)
        kl = _kl(lens, log_final)  # (batch, seq)
        kl_all.append(_mean(kl, real))
        kl_masked.append(_mean(kl, masked) if masked is not None else float("nan"))
        top1.append(_mean((lens.argmax(-1) == top_final).float(), real))
    result.update(logit_lens_kl=kl_all, logit_lens_kl_masked=kl_masked, logit_lens_top1=top1)

    # Angular distance between consecutive states, and ranks of each state's real-token matrix.
    result["angular_distance"] = [
        _mean(torch.arccos(_cos(states[i], states[i + 1]).clamp(-1, 1)) / math.pi, real) for i in range(num_layers)
    ]
    result["erank"] = [effective_rank(h[real]) for h in states]
    result["stable_rank"] = [stable_rank(h[real]) for h in states]

    # Attention entropy per layer and head, normalised by log(number of real keys).
    if out.attentions:
        keys = attention_mask.sum(-1).float().clamp_min(2)  # (batch,)
        entropy = []
        for probs in out.attentions:  # (batch, heads, seq, seq)
            row = -(probs.float() * probs.float().clamp_min(EPS).log()).sum(-1)  # (batch, heads, seq)
            row = row / keys.log()[:, None, None]
            weight = real[:, None, :].float()  # (batch, 1, seq)
            entropy.append(((row * weight).sum((0, 2)) / weight.sum((0, 2)).clamp_min(1)).tolist())
        result["attention_entropy"] = entropy  # [layer][head]

    if adapter.pre_ln:
        contrib: dict[str, list[float]] = {k: [] for k in ("attn", "mlp", "block", "cos_attn", "cos_mlp", "cos_res")}
        for i in range(num_layers):
            h, a, m = states[i], rec["attn"][i].float(), rec["mlp"][i].float()  # (batch, seq, dim)
            h_norm = h.norm(dim=-1).clamp_min(EPS)
            contrib["attn"].append(_mean(a.norm(dim=-1) / h_norm, real))
            contrib["mlp"].append(_mean(m.norm(dim=-1) / (h + a).norm(dim=-1).clamp_min(EPS), real))
            contrib["block"].append(_mean((a + m).norm(dim=-1) / h_norm, real))
            contrib["cos_attn"].append(_mean(_cos(a, h), real))
            contrib["cos_mlp"].append(_mean(_cos(m, h + a), real))
            contrib["cos_res"].append(_mean(_cos(states[i + 1], h), real))
        result["contribution"] = contrib
    else:
        result["contribution"] = "post-LN: residual decomposition not defined"

    if with_skips:
        result.update(skip_effects(model, adapter, input_ids, attention_mask, real, logits, states))
    return result


@torch.no_grad()
def skip_effects(
    model: nn.Module,
    adapter: Adapter,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    real: torch.Tensor,
    logits: torch.Tensor,  # (batch, seq, vocab) of the unperturbed run
    states: list[torch.Tensor],  # L+1 states (batch, seq, dim) of the unperturbed run
) -> dict[str, Any]:
    """Skip each layer in turn (its output := its input) and measure later updates and the output.

    ``skip_heatmap[s][l]`` = mean over sequences of max over real positions of ``||D_l - D'_l|| / ||D_l||``
    for ``l >= s`` (NaN for ``l < s``); ``skip_output_effect[s]`` = mean ``||softmax(z) - softmax(z')||_2``.
    The whole model is re-run per skipped layer (simple and architecture-agnostic; the unchanged prefix
    is recomputed rather than reused).
    """
    num_layers = len(adapter.layers)
    probs = logits.softmax(-1)
    deltas = [states[i + 1] - states[i] for i in range(num_layers)]  # each (batch, seq, dim)
    heatmap = [[float("nan")] * num_layers for _ in range(num_layers)]
    output_effect = []
    for s in range(num_layers):
        with _hooks(adapter, skip=s) as rec:
            z = model(input_ids=input_ids, attention_mask=attention_mask).logits.float()
        output_effect.append(_mean((z.softmax(-1) - probs).norm(dim=-1), real))
        for layer in range(s, num_layers):
            skipped = rec["out"][layer].float() - rec["inp"][layer].float()
            ratio = (deltas[layer] - skipped).norm(dim=-1) / deltas[layer].norm(dim=-1).clamp_min(EPS)
            worst = ratio.masked_fill(~real, 0).amax(-1)  # (batch,)
            heatmap[s][layer] = float(worst.mean())
    return {"skip_heatmap": heatmap, "skip_output_effect": output_effect}


def summarize(per_layer: dict[str, Any]) -> dict[str, float]:
    """Summary metrics a claim can reference, from the per-layer lists."""
    kl = per_layer["logit_lens_kl"]  # L+1 values
    num_layers = len(kl) - 1
    drops = [kl[i] - kl[i + 1] for i in range(num_layers)]
    total = kl[0] - kl[-1]
    late = sum(drops[num_layers // 2 :])
    effects = per_layer.get("skip_output_effect", [])
    half = num_layers // 2
    return {
        "late_half_kl_drop_fraction": late / total if abs(total) > EPS else float("nan"),
        "mean_skip_output_effect_early_half": sum(effects[:half]) / max(half, 1) if effects else float("nan"),
        "mean_skip_output_effect_late_half": (
            sum(effects[half:]) / max(num_layers - half, 1) if effects else float("nan")
        ),
        "final_layer_erank": per_layer["erank"][-1],
    }
