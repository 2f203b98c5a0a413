"""Where a probed model is scored and how: the evaluated positions and per-sequence prediction sums.

Shared by the layer-deletion probe (``skips.py``), the intact model's baseline and the logit lens read as a
perplexity at every depth (``probes.py``). Sums are kept per sequence, so that every number built from them
has a standard error across sequences (``uncertainty.py``).
"""

from __future__ import annotations

import torch

from analyzers.depth.batches import Batch


def eval_positions(batch: Batch, objective: str) -> tuple[torch.Tensor, torch.Tensor]:
    """``(where, targets)`` for the prediction metrics: masked positions and their original tokens (masked
    models; all residue positions when nothing is masked), or next-token pairs (causal models)."""
    if objective == "causal":
        where = torch.zeros_like(batch.real)
        where[:, :-1] = batch.real[:, :-1] & batch.real[:, 1:]
        targets = torch.zeros_like(batch.labels)
        targets[:, :-1] = batch.labels[:, 1:]
        return where, targets
    return (batch.masked if batch.masked is not None else batch.real), batch.labels


def prediction_rows(
    logits: torch.Tensor,
    where: torch.Tensor,
    targets: torch.Tensor,
    residue_onehot: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per sequence ``(correct, summed NLL, count)``, each ``(batch,)`` float64, of predicting ``targets`` at
    ``where`` from ``logits`` ``(batch, seq, vocab)``.

    With ``residue_onehot`` (SaProt: ``(vocab, amino acids)``, each token's amino acid) the prediction is
    over amino acids: each amino acid's probability is the sum over its tokens (one per structure
    letter) before the argmax, and the NLL is that of the summed probability of the true amino acid.
    Every position is scored and ``where`` weights them: boolean indexing would wait for the GPU."""
    weight = where.double()  # (batch, seq)
    log_probs = logits.float().log_softmax(-1)  # (batch, seq, vocab)
    if residue_onehot is not None:
        onehot = residue_onehot.to(device=logits.device, dtype=torch.float32)  # (vocab, classes)
        probs = log_probs.exp() @ onehot  # (batch, seq, classes)
        truth = onehot[targets]  # (batch, seq, classes)
        # a label of no amino acid (X) cannot be scored over amino acids
        weight = weight * (truth.sum(-1) > 0)
        picked = (probs * truth).sum(-1)  # (batch, seq)
        nll = -(picked.clamp_min(1e-30).log() * weight).sum(-1)
        correct = ((probs.argmax(-1) == truth.argmax(-1)) * weight).sum(-1)
        return correct.double(), nll.double(), weight.sum(-1)
    nll = -(log_probs.gather(-1, targets[..., None]).squeeze(-1) * weight).sum(-1)
    correct = ((log_probs.argmax(-1) == targets) * weight).sum(-1)
    return correct.double(), nll.double(), weight.sum(-1)

