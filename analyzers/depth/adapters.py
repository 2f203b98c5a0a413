"""Per-architecture adapters: where the residual stream's parts live in a loaded model.

An adapter names, for one architecture, the residual blocks, the modules whose outputs are the
attention update ``a_l`` and the MLP update ``m_l`` (pre-LN: ``h_{l+1} = h_l + a_l + m_l``), the modules
that return attention probabilities, the final norm and the output head, so that the probes never
depend on a model's class. Supported:

- ESM-2-like masked LMs (``EsmForMaskedLM``: ESM-2, SaProt, and DPLM, whose checkpoints are ESM-2
  weights under another class name; ``loading.py`` renames them);
- ESM-C (``EsmcForMaskedLM``): pre-LN blocks that divide both residual branches by
  ``scaling_factor = sqrt(L / 36)`` before adding them, so the hooked projections see ``scale * a_l``
  and the adapter's ``residual_scale`` divides it back out for the contribution ratios;
- GPT-2-like causal LMs (``GPT2LMHeadModel``, ProtGPT2);
- CodeGen causal LMs (``CodeGenForCausalLM``, ProGen2 after ``loading.py`` converts its weights):
  GPT-J-style parallel blocks, ``h_{l+1} = h_l + attn(ln(h_l)) + mlp(ln(h_l))``, so ``m_l`` does not see
  ``a_l`` (the MLP ratio is still ``||m_l|| / ||h_l + a_l||`` by the shared definition);
- BERT-like masked LMs (``BertForMaskedLM``, ProtBERT; post-LN, so no residual decomposition is
  claimed for them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

SUPPORTED_ARCHITECTURES = (
    "EsmForMaskedLM", "EsmcForMaskedLM", "GPT2LMHeadModel", "CodeGenForCausalLM", "BertForMaskedLM",
)
#: Checkpoint classes that load into a supported class once ``loading.py`` converts their weights.
CONVERTED_ARCHITECTURES = {"EsmForDPLM": "EsmForMaskedLM", "ProGenForCausalLM": "CodeGenForCausalLM"}


class UnsupportedArchitecture(ValueError):
    """The model's class has no adapter; the message names the supported ones."""


@dataclass
class Adapter:
    """Where the residual stream's parts live in one loaded model."""

    architecture: str
    objective: str  # "masked", "causal" or "diffusion" (masked at a chosen noise level)
    pre_ln: bool
    layers: nn.ModuleList
    attn_out: list[nn.Module]  # output = a_l  # (batch, seq, dim); empty for post-LN
    mlp_out: list[nn.Module]  # output = m_l  # (batch, seq, dim); empty for post-LN
    attn_probs: list[nn.Module]  # output[1] = attention probabilities  # (batch, heads, seq, seq)
    final_norm: nn.Module
    head: nn.Module
    max_tokens: int | None  # longest input (tokens, special ones included) the model was built for
    # The block adds ``branch / residual_scale`` (ESM-C); hooks see the branch, so a_l = output / scale.
    residual_scale: float = 1.0
    # SaProt: one-hot of the amino acid each vocabulary entry stands for (all zero: none), so that
    # predictions sum the probability over structure letters before the argmax.  # (vocab, 20)
    residue_onehot: torch.Tensor | None = None

    @property
    def num_layers(self) -> int:
        """Residual blocks of the model."""
        return len(self.layers)

    def logits_from_hidden(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logit lens: the model's own final norm and head applied to a residual state."""
        return self.head(self.final_norm(hidden))  # (..., seq, vocab)


def check_supported(architecture: str | None, where: str) -> None:
    """Raise ``UnsupportedArchitecture`` naming ``where`` and the supported architectures."""
    if architecture not in SUPPORTED_ARCHITECTURES and architecture not in CONVERTED_ARCHITECTURES:
        raise UnsupportedArchitecture(
            f"{where}: unsupported architecture {architecture!r}; the depth probes support "
            f"{', '.join(SUPPORTED_ARCHITECTURES + tuple(CONVERTED_ARCHITECTURES))} (see `kb models list`)"
        )


def adapter_for(model: Any) -> Adapter:
    """The adapter of a loaded model; ``UnsupportedArchitecture`` naming the supported ones otherwise."""
    name = type(model).__name__
    config = getattr(model, "config", None)
    max_tokens = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    if name == "EsmForMaskedLM":
        layers = model.esm.encoder.layer
        return Adapter(
            name,
            "masked",
            True,
            layers,
            # EsmSelfOutput / EsmOutput add the residual inside the module: hook their dense layers.
            [layer.attention.output.dense for layer in layers],
            [layer.output.dense for layer in layers],
            [layer.attention.self for layer in layers],
            model.esm.encoder.emb_layer_norm_after,
            model.lm_head,
            max_tokens,
        )
    if name == "EsmcForMaskedLM":
        layers = model.esmc.layers
        scales = {float(layer.scaling_factor) for layer in layers}
        assert len(scales) == 1, "ESM-C layers share one residual scaling factor"
        return Adapter(
            name,
            "masked",
            True,
            layers,
            [layer.self_attn.o_proj for layer in layers],
            [layer.mlp for layer in layers],
            [layer.self_attn for layer in layers],
            model.esmc.norm,
            model.lm_head,
            max_tokens,
            residual_scale=scales.pop(),
        )
    if name in ("CodeGenForCausalLM", "GPT2LMHeadModel"):
        # The same pre-LN decoder; only the attention output projection's name differs.
        layers = model.transformer.h
        out_proj = "out_proj" if name == "CodeGenForCausalLM" else "c_proj"
        return Adapter(
            name,
            "causal",
            True,
            layers,
            [getattr(block.attn, out_proj) for block in layers],
            [block.mlp for block in layers],
            [block.attn for block in layers],
            model.transformer.ln_f,
            model.lm_head,
            max_tokens,
        )
    if name == "BertForMaskedLM":
        layers = model.bert.encoder.layer
        # Post-LN: no a_l / m_l decomposition; each layer's output is already normed, so the logit lens
        # applies the MLM head (transform, LayerNorm, decoder) directly.
        return Adapter(
            name,
            "masked",
            False,
            layers,
            [],
            [],
            [layer.attention.self for layer in layers],
            nn.Identity(),
            model.cls,
            max_tokens,
        )
    check_supported(name, "model")
    raise AssertionError("unreachable")  # check_supported raised
