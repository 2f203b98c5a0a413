"""Masked-LM training and evaluation of ESM-2-shaped models (``EsmForMaskedLM``), and the width solver
that keeps parameter counts equal across depths.

Training follows ESM-2's recipe at small scale: 15 % of residues selected per sequence, of which 80 %
become ``<mask>``, 10 % a random amino acid and 10 % stay; loss on the selected positions; AdamW with
linear warm-up and cosine decay; gradient clipping. Evaluation masks a fixed, seeded 15 % of each
held-out sequence (all of them ``<mask>``) and reports perplexity ``exp(mean NLL)`` and accuracy there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from analyzers.depth.batches import encode
from analyzers.depth.data import AMINO_ACIDS, Record

# fmt: off
ESM_VOCAB = [
    "<cls>", "<pad>", "<eos>", "<unk>", "L", "A", "G", "V", "S", "E", "R", "T", "I", "D", "P", "K", "Q", "N",
    "F", "Y", "M", "H", "W", "C", "X", "B", "U", "Z", "O", ".", "-", "<null_1>", "<mask>",
]
# fmt: on


def esm_config(  # noqa: ANN201
    num_layers: int,
    width: int,
    num_heads: int,
    intermediate: int | None = None,
    max_tokens: int = 1026,
    dropout: float = 0.0,
):
    """An ESM-2-shaped config: pre-LN, rotary positions, FFN ``intermediate`` wide (default 4x width), ESM
    vocabulary, token dropout."""
    from transformers import EsmConfig

    if width % (2 * num_heads):
        raise ValueError(f"width {width} must be a multiple of 2 x {num_heads} heads (rotary needs an even head size)")
    return EsmConfig(
        vocab_size=len(ESM_VOCAB),
        hidden_size=width,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        intermediate_size=intermediate or 4 * width,
        max_position_embeddings=max_tokens,
        position_embedding_type="rotary",
        pad_token_id=ESM_VOCAB.index("<pad>"),
        mask_token_id=ESM_VOCAB.index("<mask>"),
        token_dropout=True,
        emb_layer_norm_before=False,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
        architectures=["EsmForMaskedLM"],
    )


def count_parameters(num_layers: int, width: int, num_heads: int, intermediate: int | None = None) -> int:
    """Exact parameter count of ``EsmForMaskedLM`` (rotary, no pooler) for this shape, in closed form:
    embeddings ``V d``; per layer Q, K, V, O ``4 (d^2 + d)``, FFN ``2 d f + f + d``, two LayerNorms ``4 d``;
    final LayerNorm ``2 d``; contact-head regression ``L H + 1``; LM head dense + LayerNorm ``d^2 + 3 d``
    and bias ``V`` (its decoder is tied to the embeddings). Tests check it against built models."""
    d, f, vocab = width, intermediate or 4 * width, len(ESM_VOCAB)
    per_layer = 4 * d * d + 2 * d * f + 9 * d + f
    return vocab * d + num_layers * per_layer + 2 * d + num_layers * num_heads + 1 + d * d + 3 * d + vocab


def solve_shape(num_layers: int, budget: float, num_heads: int) -> tuple[int, int]:
    """``(width, intermediate)`` whose ``EsmForMaskedLM`` parameter count matches ``budget`` at this depth.

    The width is the multiple of ``2 * num_heads`` (rotary embeddings need an even head size) whose count
    with the usual 4x FFN is closest to the budget (bisection: the count grows with width); the FFN width
    is then adjusted, since the count is linear in it (``num_layers * (2 * width + 1)`` per unit), to land
    on the budget, so that counts agree across depths to well under 1 %.
    """
    step = 2 * num_heads
    low, high = 1, 1
    while count_parameters(num_layers, high * step, num_heads) < budget:
        high *= 2
    while high - low > 1:
        middle = (low + high) // 2
        if count_parameters(num_layers, middle * step, num_heads) < budget:
            low = middle
        else:
            high = middle
    width = step * min((low, high), key=lambda k: abs(count_parameters(num_layers, k * step, num_heads) - budget))
    per_unit = num_layers * (2 * width + 1)
    intermediate = 4 * width + round((budget - count_parameters(num_layers, width, num_heads)) / per_unit)
    return width, max(width, intermediate)


def save_esm_tokenizer(folder) -> None:  # noqa: ANN001
    """Write the ESM-2 vocabulary and tokenizer files to ``folder``."""
    from transformers import EsmTokenizer

    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(ESM_VOCAB) + "\n", encoding="utf-8")
    EsmTokenizer(vocab_file=str(vocab)).save_pretrained(folder)


@dataclass
class TrainConfig:
    """Optimisation settings of one masked-LM training run."""

    steps: int = 300
    batch_size: int = 32
    learning_rate: float = 2e-3
    warmup_steps: int = 30
    weight_decay: float = 0.01
    mask_fraction: float = 0.15
    max_residues: int = 1022  # longer sequences are cropped to a random window (ESM-2 crops at 1022)
    seed: int = 0
    device: str = "cpu"
    dtype: str = "float32"  # bfloat16 / float16: autocast on CUDA, weights kept in float32


@contextmanager
def _fast(model: Any, device: str) -> Iterator[None]:
    """SDPA attention (training and evaluation need no attention probabilities) and, for narrow models on
    CPU, one thread: their ops are too small to amortise thread hand-offs, and on a shared machine a second
    thread oversubscribes the cores (measured 2.5x slower than one thread here)."""
    attention = model.config._attn_implementation
    threads = torch.get_num_threads()
    model.set_attn_implementation("sdpa")
    if device == "cpu" and model.config.hidden_size <= 256:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        model.set_attn_implementation(attention)


def _learning_rate(step: int, config: TrainConfig) -> float:
    if step < config.warmup_steps:
        return config.learning_rate * (step + 1) / config.warmup_steps
    progress = (step - config.warmup_steps) / max(1, config.steps - config.warmup_steps)
    return config.learning_rate * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))


def _crop(records: list[Record], max_residues: int, generator: torch.Generator) -> list[Record]:
    out = []
    for record in records:
        excess = len(record.sequence) - max_residues
        if excess > 0:
            start = int(torch.randint(0, excess + 1, (1,), generator=generator))
            record = Record(record.name, record.header, record.sequence[start : start + max_residues])
        out.append(record)
    return out


def train_masked_lm(
    model: nn.Module,
    tokenizer,  # noqa: ANN001
    records: list[Record],
    config: TrainConfig,
    report: Callable[[float, str], None] = lambda fraction, message: None,
) -> list[float]:
    """Train ``model`` in place on ``records``; returns the loss of every step. Deterministic given the seed
    (on CPU). ``report`` is called every few steps (it may raise to cancel)."""
    if not records:
        raise ValueError("no training sequences")
    torch.manual_seed(config.seed)
    generator = torch.Generator().manual_seed(config.seed)
    model.to(config.device).train()
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.learning_rate, betas=(0.9, 0.98), weight_decay=config.weight_decay
    )
    letters = torch.tensor(tokenizer.convert_tokens_to_ids(list(AMINO_ACIDS)))
    mask_id = tokenizer.mask_token_id
    autocast = config.device.startswith("cuda") and config.dtype != "float32"
    amp_dtype = torch.bfloat16 if config.dtype == "bfloat16" else torch.float16
    losses: list[torch.Tensor] = []  # kept on the device: reading each one would sync the GPU every step
    every = max(1, config.steps // 50)
    with _fast(model, config.device):
        for step in range(config.steps):
            picks = torch.randint(0, len(records), (config.batch_size,), generator=generator).tolist()
            batch = encode(_crop([records[i] for i in picks], config.max_residues, generator), tokenizer)
            ids, real = batch.input_ids, batch.real  # (batch, seq)
            selected = (torch.rand(ids.shape, generator=generator) < config.mask_fraction) & real
            action = torch.rand(ids.shape, generator=generator)  # 80 % mask, 10 % random letter, 10 % unchanged
            random_letters = letters[torch.randint(0, len(letters), ids.shape, generator=generator)]
            inputs = torch.where(selected & (action < 0.8), mask_id, ids)
            inputs = torch.where(selected & (action >= 0.8) & (action < 0.9), random_letters, inputs)
            labels = ids.masked_fill(~selected, -100)
            for group in optimizer.param_groups:
                group["lr"] = _learning_rate(step, config)
            with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=autocast):
                out = model(
                    input_ids=inputs.to(config.device),
                    attention_mask=batch.attention_mask.to(config.device),
                    labels=labels.to(config.device),
                )
            optimizer.zero_grad(set_to_none=True)
            out.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            losses.append(out.loss.detach())
            if step % every == 0 or step == config.steps - 1:
                report((step + 1) / config.steps, f"step {step + 1}/{config.steps} loss {float(losses[-1]):.3f}")
    model.eval()
    return torch.stack(losses).float().cpu().tolist()


@torch.no_grad()
def evaluate_masked_lm(
    model: nn.Module,
    tokenizer,  # noqa: ANN001
    records: list[Record],
    batch_size: int = 32,
    seed: int = 0,
    mask_fraction: float = 0.15,
    device: str = "cpu",
    max_residues: int = 1022,
) -> tuple[float, float]:
    """``(perplexity, accuracy)`` at a fixed seeded ``mask_fraction`` of masked residues of ``records``."""
    model.eval()
    total_nll, total_correct, total = 0.0, 0, 0
    records = [Record(r.name, r.header, r.sequence[:max_residues]) for r in records]
    with _fast(model, device):
        for start in range(0, len(records), batch_size):
            batch = encode(records[start : start + batch_size], tokenizer, mask_fraction=mask_fraction, seed=seed)
            batch = batch.to(device)
            logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits.float()
            assert batch.masked is not None
            selected, truth = logits[batch.masked], batch.labels[batch.masked]
            total_nll += float(torch.nn.functional.cross_entropy(selected, truth, reduction="sum"))
            total_correct += int((selected.argmax(-1) == truth).sum())
            total += len(truth)
    if total == 0:
        raise ValueError("no masked position to evaluate")
    return math.exp(total_nll / total), total_correct / total
