"""Compact masked-language models of the paper's Appendix A: a single-head transformer with merged
query-key (W_qk) and value-output (W_vo) matrices, and a pooling feed-forward baseline.

With biases on W1, W2 and the head, LayerNorm affine, and a 21-token head, the parameter counts
reproduce Table A1: 1 block d=26 m=104 -> 8,107; d=64 m=256 -> 44,245; 4 blocks d=14 m=56 -> 8,953;
4 blocks d=64 m=256 -> 168,853; feed-forward d=64 m=320 -> 173,653 (the paper: 8k, 44k, 9k, 169k, 174k).
Dropout (training only) acts on the input embeddings and on the outputs of the attention and
feed-forward sublayers, as in the original transformer (paper Appendix C).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn

VOCAB_SIZE = 21  # 20 amino acids + mask
MASK_ID = 20


def sinusoidal(length: int, dim: int) -> torch.Tensor:
    """Standard sinusoidal encoding (length, dim)."""
    position = torch.arange(length, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim)
    table[:, 0::2] = torch.sin(position * freq)
    table[:, 1::2] = torch.cos(position * freq[: dim // 2])
    return table


@dataclass
class ModelConfig:
    """Sizes of a compact model."""

    seq_len: int = 86  # ACBP length
    embed_dim: int = 16  # d
    hidden_dim: int = 64  # m, FFN width (4d for the transformers, 5d for the feed-forward net)
    num_layers: int = 1  # transformer blocks; the feed-forward net has one encoder
    dropout: float = 0.1  # training only (paper Appendix C)
    kind: str = "transformer"  # or "feedforward"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


# Table A1 of the paper: name -> (config, parameters in thousands as printed).
TABLE_A1: dict[str, tuple[ModelConfig, int]] = {
    "T1-d26": (ModelConfig(embed_dim=26, hidden_dim=104, num_layers=1), 8),
    "T1-d64": (ModelConfig(embed_dim=64, hidden_dim=256, num_layers=1), 44),
    "T4-d14": (ModelConfig(embed_dim=14, hidden_dim=56, num_layers=4), 9),
    "T4-d64": (ModelConfig(embed_dim=64, hidden_dim=256, num_layers=4), 169),
    "FF-d64": (ModelConfig(embed_dim=64, hidden_dim=320, kind="feedforward"), 174),
}


class CompactBlock(nn.Module):
    """X <- LN(X + A X W_vo), A = softmax(X W_qk X^T / sqrt(d)); X <- LN(X + W2(relu(W1 X + b1) + PE_m) +
    b2)."""

    pe_hidden: torch.Tensor

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        d, m = config.embed_dim, config.hidden_dim
        self.w_qk = nn.Parameter(torch.randn(d, d) / math.sqrt(d))
        self.w_vo = nn.Parameter(torch.randn(d, d) / math.sqrt(d))
        self.norm1 = nn.LayerNorm(d)
        self.linear1 = nn.Linear(d, m)
        self.linear2 = nn.Linear(m, d)
        self.norm2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)
        self.register_buffer("pe_hidden", sinusoidal(config.seq_len, m), persistent=False)  # (L, m)
        self.scale = 1.0 / math.sqrt(d)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # x: (batch, seq, d)
        scores = x @ self.w_qk @ x.transpose(1, 2) * self.scale  # (batch, seq, seq)
        attention = scores.softmax(dim=-1)  # no mask: [MASK] tokens are attended to
        x = self.norm1(x + self.dropout(attention @ x @ self.w_vo))
        hidden = torch.relu(self.linear1(x)) + self.pe_hidden[: x.shape[1]]  # (batch, seq, m)
        x = self.norm2(x + self.dropout(self.linear2(hidden)))
        return x, attention


class CompactTransformer(nn.Module):
    """Token embedding + sinusoidal positions, ``num_layers`` compact blocks, Linear(d, 21) head."""

    pe: torch.Tensor

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(VOCAB_SIZE, config.embed_dim)
        self.register_buffer("pe", sinusoidal(config.seq_len, config.embed_dim), persistent=False)
        self.dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(CompactBlock(config) for _ in range(config.num_layers))
        self.head = nn.Linear(config.embed_dim, VOCAB_SIZE)

    def forward(self, tokens: torch.Tensor, return_attention: bool = False) -> dict[str, torch.Tensor]:
        assert tokens.dim() == 2 and tokens.shape[1] <= self.config.seq_len, tokens.shape  # (batch, seq)
        x = self.dropout(self.embedding(tokens) + self.pe[: tokens.shape[1]])  # (batch, seq, d)
        attentions = []
        for block in self.blocks:
            x, attention = block(x)
            attentions.append(attention)
        out = {"logits": self.head(x)}  # (batch, seq, 21)
        if return_attention:
            out["attention"] = torch.stack(attentions, dim=1)  # (batch, layers, seq, seq)
        return out


class PoolingFeedForward(nn.Module):
    """Baseline (paper Appendix A): [LN(emb), mean over unmasked positions] (2d) -> W1 -> relu + PE_m -> W2 ->
    relu, plus a projection (d -> m) of the normalized input as residual, LayerNorm(m), Linear(m, 21) head.
    The ReLU after W2 is the paper's (a second non-linearity; the transformer's FFN has none after W2)."""

    pe: torch.Tensor
    pe_hidden: torch.Tensor

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        d, m = config.embed_dim, config.hidden_dim
        self.config = config
        self.embedding = nn.Embedding(VOCAB_SIZE, d)
        self.register_buffer("pe", sinusoidal(config.seq_len, d), persistent=False)
        self.norm_in = nn.LayerNorm(d)
        self.linear1 = nn.Linear(2 * d, m)
        self.linear2 = nn.Linear(m, m)
        self.residual = nn.Linear(d, m)
        self.norm_out = nn.LayerNorm(m)
        self.head = nn.Linear(m, VOCAB_SIZE)
        self.dropout = nn.Dropout(config.dropout)
        self.register_buffer("pe_hidden", sinusoidal(config.seq_len, m), persistent=False)

    def forward(self, tokens: torch.Tensor, return_attention: bool = False) -> dict[str, torch.Tensor]:
        assert tokens.dim() == 2 and tokens.shape[1] <= self.config.seq_len, tokens.shape  # (batch, seq)
        length = tokens.shape[1]
        x = self.norm_in(self.dropout(self.embedding(tokens) + self.pe[:length]))  # (batch, seq, d)
        visible = (tokens != MASK_ID).to(x.dtype)[..., None]  # (batch, seq, 1)
        # (batch, 1, d)
        pooled = (x * visible).sum(1, keepdim=True) / visible.sum(1, keepdim=True).clamp(min=1)
        features = torch.cat([x, pooled.expand_as(x)], dim=-1)  # (batch, seq, 2d)
        hidden = torch.relu(self.linear1(features)) + self.pe_hidden[:length]  # (batch, seq, m)
        # (batch, seq, m)
        y = self.norm_out(self.residual(x) + self.dropout(torch.relu(self.linear2(hidden))))
        return {"logits": self.head(y)}


def build_model(config: ModelConfig) -> nn.Module:
    """The model a config describes (``kind`` 'transformer' or 'feedforward')."""
    if config.kind == "transformer":
        return CompactTransformer(config)
    if config.kind == "feedforward":
        return PoolingFeedForward(config)
    raise ValueError(f"unknown model kind {config.kind!r}; use 'transformer' or 'feedforward'")


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def layer_slices(model: nn.Module) -> dict[str, slice]:
    """Where each named parameter tensor (a 'layer' for the similarity q) sits in the flat weight vector."""
    slices, offset = {}, 0
    for name, parameter in model.named_parameters():
        slices[name] = slice(offset, offset + parameter.numel())
        offset += parameter.numel()
    return slices


def table_a1() -> list[dict[str, object]]:
    """The Table A1 configurations with the exact parameter counts of these implementations."""
    rows: list[dict[str, object]] = []
    for name, (config, printed) in TABLE_A1.items():
        rows.append(
            {
                "name": name,
                "kind": config.kind,
                "num_layers": config.num_layers if config.kind == "transformer" else None,
                "embed_dim": config.embed_dim,
                "hidden_dim": config.hidden_dim,
                "parameters": count_parameters(build_model(config)),
                "paper_thousands": printed,
            }
        )
    return rows
