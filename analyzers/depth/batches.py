"""Token batches for the depth analyzers: tokenization, residue masks, seeded masking, length checks.

Masks are drawn per record from a generator seeded by ``(seed, sequence)``, so the masked positions of a
sequence do not depend on the batch size or on which other sequences share its batch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import torch

from analyzers.depth.data import Record
from analyzers.depth.loading import format_sequence, nonresidue_ids, saprot_mask_ids


@dataclass
class Batch:
    """One padded batch. ``real`` marks residue tokens (no special token, no padding); ``masked`` the
    positions replaced by the mask token (masked models); ``labels`` the original tokens."""

    input_ids: torch.Tensor  # (batch, seq)
    attention_mask: torch.Tensor  # (batch, seq)
    real: torch.Tensor  # (batch, seq) bool
    labels: torch.Tensor  # (batch, seq): tokens before masking
    masked: torch.Tensor | None = None  # (batch, seq) bool

    def to(self, device: str | torch.device) -> Batch:
        """The same batch on ``device``."""
        return Batch(
            self.input_ids.to(device),
            self.attention_mask.to(device),
            self.real.to(device),
            self.labels.to(device),
            None if self.masked is None else self.masked.to(device),
        )

    @property
    def size(self) -> int:
        """Sequences in the batch."""
        return int(self.input_ids.shape[0])


def record_seed(seed: int, sequence: str) -> int:
    """A 63-bit generator seed from the run seed and the sequence itself."""
    return int(hashlib.sha256(f"{seed}:{sequence}".encode()).hexdigest()[:15], 16)


def check_lengths(
    records: list[Record], tokenizer: Any, input_format: str, max_tokens: int | None, model: str
) -> None:
    """``ValueError`` naming the first record whose token count exceeds the model's maximum."""
    if max_tokens is None:
        return
    for record in records:
        count = len(tokenizer(format_sequence(record.sequence, input_format, record.structure))["input_ids"])
        if count > max_tokens:
            raise ValueError(
                f"record {record.name!r} ({len(record.sequence)} residues, {count} tokens) is longer than "
                f"{model} "
                f"accepts ({max_tokens} tokens with special tokens); crop it, or pass --max-length to drop "
                f"longer ones"
            )


def encode(
    records: list[Record],
    tokenizer: Any,
    input_format: str = "plain",
    mask_fraction: float = 0.0,
    seed: int = 0,
) -> Batch:
    """Tokenize and pad ``records``; with ``mask_fraction`` > 0 (masked models; the noise level of a
    diffusion model) replace a seeded Bernoulli(``mask_fraction``) subset of each sequence's residue
    tokens (at least one) by the mask token. SaProt residues whose 3Di letter is known are hidden as
    '#<3Di>' (the residue masked, its structure kept). Tokens a format adds (ProtGPT2's line breaks,
    ProGen2's termini) are not residues: ``real`` leaves them out like special tokens."""
    texts = [format_sequence(record.sequence, input_format, record.structure) for record in records]
    encoded = tokenizer(texts, return_tensors="pt", padding=True)
    input_ids, attention_mask = encoded["input_ids"], encoded["attention_mask"]  # (batch, seq)
    special = torch.tensor(
        sorted(set(tokenizer.all_special_ids) | set(nonresidue_ids(tokenizer, input_format))),
        dtype=input_ids.dtype,
    )
    real = attention_mask.bool() & ~torch.isin(input_ids, special)
    if mask_fraction <= 0:
        return Batch(input_ids, attention_mask, real, input_ids.clone())
    if tokenizer.mask_token_id is None:
        raise ValueError("masking asked for but the tokenizer has no mask token")
    generators = [torch.Generator().manual_seed(record_seed(seed, r.sequence)) for r in records]
    draws = torch.stack([torch.rand(input_ids.shape[1], generator=g) for g in generators])  # (batch, seq)
    masked = (draws < mask_fraction) & real
    # At least one masked residue per sequence: the one with the smallest draw.
    forced = (
        torch.zeros_like(masked).scatter_(1, draws.masked_fill(~real, 2.0).argmin(1, keepdim=True), True)
        & real
    )
    masked |= forced & ~masked.any(1, keepdim=True)
    if input_format == "saprot":
        replacement = saprot_mask_ids(tokenizer)[input_ids]  # (batch, seq)
        return Batch(torch.where(masked, replacement, input_ids), attention_mask, real, input_ids, masked)
    return Batch(
        input_ids.masked_fill(masked, tokenizer.mask_token_id), attention_mask, real, input_ids, masked
    )
