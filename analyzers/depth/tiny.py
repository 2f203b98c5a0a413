"""Small models built here: the trained tiny ESMs the ``smoke`` / ``small`` scales probe, and random
tiny models of every supported family for tests and the GPU benchmark's ``--tiny`` mode (ESM-2, GPT-2 /
ProtGPT2, ESM-C, DPLM and ProGen2 checkpoints in their hub layouts, SaProt's residue x 3Di vocabulary).

A randomly initialised model says nothing about how trained PLMs use their depth, so the default CPU path
probes an ESM-2-shaped model *trained* on the shipped designed corpus (``data/designed.fasta``: designed
sequences, not natural proteins). Training is deterministic given the seed; the result is cached under the
run's cache folder (``<KB home>/cache/depth/``) keyed by its recipe and the corpus hash, with a
``training.json`` that records how it was made. The recipes (``BUILTINS``) live in ``catalog.py`` so that
naming the built-ins needs no torch.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from analyzers.depth.catalog import BUILTINS, TinyRecipe, builtin_folder, describe, is_trained
from analyzers.depth.data import (
    AMINO_ACIDS,
    DESIGNED_FASTA,
    THREE_DI_LETTERS,
    file_sha256,
    read_fasta,
    split_records,
)
from analyzers.depth.training import (
    TrainConfig,
    esm_config,
    evaluate_masked_lm,
    save_esm_tokenizer,
    train_masked_lm,
)
from analyzers.files import atomic_folder

__all__ = [
    "BUILTINS", "TinyRecipe", "build_random_dplm", "residue_gpt2_tokenizer",
    "build_random_esm", "build_random_esmc", "build_random_gpt2",
    "build_random_progen2", "build_random_saprot", "describe", "trained_tiny_esm",
]


def trained_tiny_esm(
    name: str, seed: int = 0, report: Callable[[float, str], None] = lambda f, m: None, *, cache: Path
) -> Path:
    """Folder of the built-in trained tiny ESM ``name`` (trained on first use, then cached in ``cache``)."""
    recipe = BUILTINS[name]
    corpus_hash = file_sha256(DESIGNED_FASTA)
    root = builtin_folder(name, seed, cache)
    if is_trained(root):
        return root
    from transformers import EsmForMaskedLM, EsmTokenizer

    train, val = split_records(read_fasta(DESIGNED_FASTA))
    with atomic_folder(root) as staging:
        save_esm_tokenizer(staging)
        tokenizer = EsmTokenizer.from_pretrained(staging)
        torch.manual_seed(seed)
        model = EsmForMaskedLM(esm_config(recipe.num_layers, recipe.width, recipe.num_heads))
        config = TrainConfig(
            steps=recipe.steps, batch_size=recipe.batch_size, learning_rate=recipe.learning_rate, seed=seed,
            warmup_steps=max(10, recipe.steps // 10),
        )
        losses = train_masked_lm(
            model, tokenizer, train, config, lambda f, m: report(f, f"training {name}: {m}")
        )
        perplexity, accuracy = evaluate_masked_lm(model, tokenizer, val, seed=seed)
        model.save_pretrained(staging)
        summary = {
            "name": name, "recipe": asdict(recipe), "seed": seed, "corpus": DESIGNED_FASTA.name,
            "corpus_sha256": corpus_hash, "train_sequences": len(train), "val_sequences": len(val),
            "final_train_loss": sum(losses[-20:]) / len(losses[-20:]), "val_perplexity": perplexity,
            "val_masked_accuracy": accuracy,
        }
        (staging / "training.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return root


def build_random_esm(
    folder: Path, num_layers: int = 4, width: int = 32, num_heads: int = 4, seed: int = 0
) -> Path:
    """Save a RANDOMLY INITIALISED ESM-2-shaped masked LM and its tokenizer to ``folder`` (tests only)."""
    from transformers import EsmForMaskedLM

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    EsmForMaskedLM(esm_config(num_layers, width, num_heads)).save_pretrained(folder)
    save_esm_tokenizer(folder)
    return folder


def residue_gpt2_tokenizer() -> Any:
    """A GPT-2-style tokenizer with one residue per token, ``<|endoftext|>`` and a line-break token (the
    ProtGPT2 input convention), standing in for ProtGPT2's BPE tokenizer where the hub is out of reach."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<pad>", "<unk>"]
    # "\n": ProtGPT2's model card writes sequences as 60-residue lines; the line break is its own token.
    vocab = {
        token: index for index, token in enumerate(specials + list("ACDEFGHIKLMNPQRSTVWYXBZUO") + ["\n"])
    }
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    return PreTrainedTokenizerFast(
        tokenizer_object=backend, eos_token="<|endoftext|>", bos_token="<|endoftext|>", pad_token="<pad>",
        unk_token="<unk>",
    )


def build_random_gpt2(
    folder: Path, num_layers: int = 3, width: int = 32, num_heads: int = 4, seed: int = 0
) -> Path:
    """Save a RANDOMLY INITIALISED GPT-2 causal LM with a one-residue-per-token tokenizer (tests only)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = residue_gpt2_tokenizer()
    tokenizer.save_pretrained(folder)
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(tokenizer.get_vocab()),
        n_embd=width,
        n_layer=num_layers,
        n_head=num_heads,
        n_positions=256,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=1,
        architectures=["GPT2LMHeadModel"],
    )
    GPT2LMHeadModel(config).save_pretrained(folder)
    return folder


def _word_level_tokenizer(tokens: list[str]) -> object:
    """A one-character-per-token ``tokenizers`` object over ``tokens`` (specials first)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers

    backend = Tokenizer(models.WordLevel(vocab={t: i for i, t in enumerate(tokens)}, unk_token=tokens[0]))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    return backend


def esmc_tiny_config(num_layers: int = 3, width: int = 32, num_heads: int = 4) -> Any:
    """An ESM-C config at a test size (ESM-C 600M is 36 layers x 1152 with 18 heads)."""
    from transformers import EsmcConfig

    return EsmcConfig(
        vocab_size=64, hidden_size=width, intermediate_size=3 * width, num_hidden_layers=num_layers,
        num_attention_heads=num_heads, max_position_embeddings=512, rope_parameters={"rope_type": "default",
        "rope_theta": 10000.0}, architectures=["EsmcForMaskedLM"],
    )


def build_random_esmc(
    folder: Path, num_layers: int = 3, width: int = 32, num_heads: int = 4, seed: int = 0
) -> Path:
    """Save a RANDOMLY INITIALISED ESM-C (``EsmcForMaskedLM``) and its tokenizer to ``folder`` (tests only).

    Three layers make the residual scaling ``sqrt(3 / 36)`` far from 1, so a probe that forgot to undo
    it would be off by 3.5x. The random init's residual projections are scaled up so the branches are
    not negligible next to the embeddings."""
    from transformers import EsmcForMaskedLM, EsmcTokenizer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    model = EsmcForMaskedLM(esmc_tiny_config(num_layers, width, num_heads))
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith(("self_attn.o_proj.weight", "mlp.down_proj.weight")):
                parameter.mul_(5.0)
    model.save_pretrained(folder)
    EsmcTokenizer().save_pretrained(folder)
    return folder


def build_random_dplm(
    folder: Path, num_layers: int = 3, width: int = 32, num_heads: int = 4, seed: int = 0
) -> Path:
    """Save a RANDOMLY INITIALISED DPLM-layout checkpoint (tests only): ESM-2 weights under the ``net.``
    prefix of byprot's wrapper, ``architectures: ["EsmForDPLM"]`` and ``dplm_type`` in the config."""
    import json

    from safetensors.torch import save_file
    from transformers import EsmForMaskedLM

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    config = esm_config(num_layers, width, num_heads)
    model = EsmForMaskedLM(config)
    state = {
        f"net.{k}": v.contiguous() for k, v in model.state_dict().items() if k != "lm_head.decoder.weight"
    }
    save_file(state, str(folder / "model.safetensors"))
    raw = config.to_dict()
    raw.update(architectures=["EsmForDPLM"], dplm_type="dplm")
    (folder / "config.json").write_text(json.dumps(raw, indent=2), encoding="utf-8")
    save_esm_tokenizer(folder)
    return folder


def saprot_vocab() -> list[str]:
    """SaProt's vocabulary: ESM's five specials, then every residue x 3Di token ('#' for unknown on
    either side: 'A#' residue with unknown structure, '#d' masked residue with known structure)."""
    residues, structures = AMINO_ACIDS + "#", THREE_DI_LETTERS
    return ["<cls>", "<pad>", "<eos>", "<unk>", "<mask>"] + [a + b for a in residues for b in structures]


def build_random_saprot(
    folder: Path, num_layers: int = 3, width: int = 32, num_heads: int = 4, seed: int = 0
) -> Path:
    """Save a RANDOMLY INITIALISED SaProt-shaped ``EsmForMaskedLM`` with the residue x 3Di vocabulary
    (tests)."""
    from transformers import EsmForMaskedLM, EsmTokenizer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    vocab = saprot_vocab()
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    EsmTokenizer(vocab_file=str(folder / "vocab.txt")).save_pretrained(folder)
    torch.manual_seed(seed)
    config = esm_config(num_layers, width, num_heads)
    config.vocab_size = len(vocab)
    config.mask_token_id, config.pad_token_id = vocab.index("<mask>"), vocab.index("<pad>")
    EsmForMaskedLM(config).save_pretrained(folder)
    return folder


PROGEN2_TOKENS = ["<|pad|>", "<|bos|>", "<|eos|>", "1", "2", *"ABCDEFGHIJKLMNOPQRSTUVWXYZ"]


def build_random_progen2(
    folder: Path, num_layers: int = 3, width: int = 64, num_heads: int = 8, rotary_dim: int = 4, seed: int = 0
) -> tuple[Path, dict[str, torch.Tensor]]:
    """Save a RANDOMLY INITIALISED checkpoint in ProGen2's hub layout (tests only): ``model_type:
    progen``, ``ProGenForCausalLM``, GPT-J-style weight names with the fused qkv rows in ProGen2's 8
    groups, and only a ``tokenizer.json``. Returns the folder and the saved tensors (for an
    independent forward pass)."""
    import json

    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    generator = torch.Generator().manual_seed(seed)
    vocab = len(PROGEN2_TOKENS)

    def normal(*shape: int, std: float = 0.2) -> torch.Tensor:
        return torch.randn(*shape, generator=generator) * std

    state: dict[str, torch.Tensor] = {"transformer.wte.weight": normal(vocab, width, std=1.0)}
    for index in range(num_layers):
        prefix = f"transformer.h.{index}"
        state |= {
            f"{prefix}.ln_1.weight": 1 + normal(width, std=0.1),
            f"{prefix}.ln_1.bias": normal(width, std=0.1),
            f"{prefix}.attn.qkv_proj.weight": normal(3 * width, width),
            f"{prefix}.attn.out_proj.weight": normal(width, width),
            f"{prefix}.mlp.fc_in.weight": normal(4 * width, width),
            f"{prefix}.mlp.fc_in.bias": normal(4 * width),
            f"{prefix}.mlp.fc_out.weight": normal(width, 4 * width),
            f"{prefix}.mlp.fc_out.bias": normal(width),
            # ProGen2's remote code kept its causal mask as a buffer in the checkpoint.
            f"{prefix}.attn.causal_mask": torch.tril(torch.ones(64, 64, dtype=torch.bool))[None, None],
        }
    state |= {
        "transformer.ln_f.weight": 1 + normal(width, std=0.1),
        "transformer.ln_f.bias": normal(width, std=0.1),
        "lm_head.weight": normal(vocab, width),
        "lm_head.bias": normal(vocab),
    }
    save_file(state, str(folder / "model.safetensors"))
    config = {
        "architectures": ["ProGenForCausalLM"], "model_type": "progen",
        "auto_map": {"AutoConfig": "configuration_progen.ProGenConfig",
                     "AutoModelForCausalLM": "modeling_progen.ProGenForCausalLM"},
        "vocab_size": vocab, "n_positions": 64, "n_ctx": 64, "n_embd": width, "n_layer": num_layers,
        "n_head": num_heads, "rotary_dim": rotary_dim, "n_inner": None, "activation_function": "gelu_new",
        "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0, "layer_norm_epsilon": 1e-5,
        "initializer_range": 0.02, "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": False,
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    backend = _word_level_tokenizer(PROGEN2_TOKENS)
    backend.save(str(folder / "tokenizer.json"))  # type: ignore[attr-defined]
    return folder, state
