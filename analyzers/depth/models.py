"""The protein language models the depth probes know, how to load them, and per-architecture adapters.

An adapter names, for one architecture, the list of residual blocks, the modules whose outputs are the
attention update ``a_l`` and MLP update ``m_l`` (pre-LN: ``h_{l+1} = h_l + a_l + m_l``), the final norm
and the output head, so that the probes never depend on a model's class.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from analyzers.base import NotRunnable


@dataclass(frozen=True)
class ModelCard:
    """One real PLM checkpoint on the Hugging Face hub."""

    hub_id: str
    family: str
    objective: str  # "masked" or "causal"
    num_layers: int
    width: int
    approx_params: float


MODELS: dict[str, ModelCard] = {
    card.hub_id: card
    for card in [
        ModelCard("facebook/esm2_t6_8M_UR50D", "esm2", "masked", 6, 320, 8e6),
        ModelCard("facebook/esm2_t12_35M_UR50D", "esm2", "masked", 12, 480, 35e6),
        ModelCard("facebook/esm2_t30_150M_UR50D", "esm2", "masked", 30, 640, 150e6),
        ModelCard("facebook/esm2_t33_650M_UR50D", "esm2", "masked", 33, 1280, 650e6),
        ModelCard("facebook/esm2_t36_3B_UR50D", "esm2", "masked", 36, 2560, 3e9),
        ModelCard("facebook/esm2_t48_15B_UR50D", "esm2", "masked", 48, 5120, 15e9),
        ModelCard("nferruz/ProtGPT2", "protgpt2", "causal", 36, 1280, 738e6),
        ModelCard("westlake-repl/SaProt_35M_AF2", "saprot", "masked", 12, 480, 35e6),
        ModelCard("westlake-repl/SaProt_650M_AF2", "saprot", "masked", 33, 1280, 650e6),
        ModelCard("Rostlab/prot_bert", "protbert", "masked", 30, 1024, 420e6),
    ]
}

SUPPORTED_ARCHITECTURES = ("EsmForMaskedLM", "GPT2LMHeadModel", "BertForMaskedLM")


@dataclass
class Adapter:
    """Where the residual stream's parts live in one loaded model."""

    architecture: str
    objective: str  # "masked" or "causal"
    pre_ln: bool
    layers: nn.ModuleList
    attn_out: list[nn.Module]  # output = a_l  # (batch, seq, dim)
    mlp_out: list[nn.Module]  # output = m_l  # (batch, seq, dim)
    final_norm: nn.Module
    head: nn.Module

    def logits_from_hidden(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logit lens: the model's own final norm and head applied to a residual state."""
        return self.head(self.final_norm(hidden))  # (..., seq, vocab)


def adapter_for(model: nn.Module) -> Adapter:
    """The adapter of a loaded model; ``ValueError`` naming the supported architectures otherwise."""
    name = type(model).__name__
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
            model.esm.encoder.emb_layer_norm_after,
            model.lm_head,
        )
    if name == "GPT2LMHeadModel":
        layers = model.transformer.h
        return Adapter(
            name,
            "causal",
            True,
            layers,
            [block.attn.c_proj for block in layers],
            [block.mlp for block in layers],
            model.transformer.ln_f,
            model.lm_head,
        )
    if name == "BertForMaskedLM":
        layers = model.bert.encoder.layer
        # Post-LN: no a_l / m_l decomposition; the "final norm" is the identity (each layer ends normed).
        return Adapter(name, "masked", False, layers, [], [], nn.Identity(), model.cls)
    raise ValueError(f"unsupported architecture {name!r}; supported: {', '.join(SUPPORTED_ARCHITECTURES)}")


def _hub_reachable(timeout_s: float = 3.0) -> bool:
    """Whether huggingface.co answers a TCP connect within ``timeout_s`` (never hangs longer)."""
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False"):
        return False
    try:
        with socket.create_connection(("huggingface.co", 443), timeout=timeout_s):
            return True
    except OSError:
        return False


def _not_available(model_id: str) -> NotRunnable:
    return NotRunnable(
        f"weights for {model_id} not available offline: download with `huggingface-cli download {model_id}` "
        "on a machine with internet or pass a local folder"
    )


def load_model(
    model_id: str, device: str = "cpu", dtype: torch.dtype = torch.float32, trust_remote_code: bool = False
) -> tuple[nn.Module, object]:
    """``(model, tokenizer)`` for a hub id or local folder, in eval mode, eager attention.

    Tries the local cache first (``local_files_only``); goes to the hub only when it answers quickly,
    else raises ``NotRunnable`` with the command that fetches the weights.
    """
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", "5")
    os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", "10")
    is_local = Path(model_id).is_dir()
    try:
        config = AutoConfig.from_pretrained(model_id, local_files_only=True, trust_remote_code=trust_remote_code)
        local_only = True
    except (OSError, ValueError) as error:
        if is_local:
            raise NotRunnable(f"{model_id} is a folder but holds no loadable model: {error}") from error
        if not _hub_reachable():
            raise _not_available(model_id) from error
        try:
            config = AutoConfig.from_pretrained(model_id, trust_remote_code=trust_remote_code)
        except OSError as hub_error:
            raise NotRunnable(
                f"{model_id} is neither a local folder nor a model on the hub: {hub_error}"
            ) from hub_error
        local_only = False
    architectures = list(getattr(config, "architectures", None) or [])
    causal = any(a.endswith("CausalLM") or a.endswith("LMHeadModel") for a in architectures)
    auto = AutoModelForCausalLM if causal else AutoModelForMaskedLM
    kwargs = dict(local_files_only=local_only, trust_remote_code=trust_remote_code, attn_implementation="eager")
    try:
        model = auto.from_pretrained(model_id, dtype=dtype, **kwargs)
        tokenizer = AutoTokenizer.from_pretrained(model_id, local_files_only=local_only)
    except OSError as error:
        raise _not_available(model_id) from error
    adapter_for(model)  # fail early on an unsupported architecture
    return model.to(device).eval(), tokenizer


def weight_files(model_id: str) -> list[Path]:
    """The safetensors (or .bin) files of a local folder or cached hub snapshot; empty when not found."""
    folder = Path(model_id)
    if not folder.is_dir():
        try:
            from huggingface_hub import snapshot_download

            folder = Path(snapshot_download(model_id, local_files_only=True))
        except Exception:  # noqa: BLE001 - not cached: no hash, reported as such
            return []
    files = sorted(folder.glob("*.safetensors")) or sorted(folder.glob("*.bin"))
    return files


# fmt: off
ESM_VOCAB = [
    "<cls>", "<pad>", "<eos>", "<unk>", "L", "A", "G", "V", "S", "E", "R", "T", "I", "D", "P", "K", "Q", "N",
    "F", "Y", "M", "H", "W", "C", "X", "B", "U", "Z", "O", ".", "-", "<null_1>", "<mask>",
]
# fmt: on


def build_tiny_esm(folder: Path, num_layers: int = 4, hidden: int = 64, seed: int = 0) -> Path:
    """Save a RANDOMLY INITIALISED tiny ESM-2-shaped masked LM (+ tokenizer) to ``folder``.

    For smoke tests only: it is not a trained PLM, and its numbers say nothing about real models.
    """
    from transformers import EsmConfig, EsmForMaskedLM, EsmTokenizer

    folder = Path(folder)
    if (folder / "config.json").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(ESM_VOCAB) + "\n", encoding="utf-8")
    torch.manual_seed(seed)
    config = EsmConfig(
        vocab_size=len(ESM_VOCAB),
        hidden_size=hidden,
        num_hidden_layers=num_layers,
        num_attention_heads=4,
        intermediate_size=2 * hidden,
        max_position_embeddings=1026,
        position_embedding_type="rotary",
        pad_token_id=1,
        mask_token_id=32,
        token_dropout=True,
        emb_layer_norm_before=False,
    )
    EsmForMaskedLM(config).save_pretrained(folder)
    EsmTokenizer(vocab_file=str(vocab)).save_pretrained(folder)
    return folder
