"""Small models built here: the trained tiny ESMs the ``smoke`` / ``small`` scales probe, and random
tiny models for tests.

A randomly initialised model says nothing about how trained PLMs use their depth, so the default CPU
path probes an ESM-2-shaped model *trained* on the shipped designed corpus (``data/designed.fasta``:
designed sequences, not natural proteins). Training is deterministic given the seed; the result is
cached under ``KB_HOME/cache/depth/`` keyed by its recipe and the corpus hash, with a
``training.json`` that records how it was made. The recipes (``BUILTINS``) live in ``catalog.py`` so
that naming the built-ins needs no torch.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import torch

from analyzers.depth.catalog import BUILTINS, TinyRecipe, describe, kb_home
from analyzers.depth.data import DESIGNED_FASTA, file_sha256, read_fasta, split_records
from analyzers.depth.training import (
    TrainConfig,
    esm_config,
    evaluate_masked_lm,
    save_esm_tokenizer,
    train_masked_lm,
)

__all__ = ["BUILTINS", "TinyRecipe", "build_random_esm", "build_random_gpt2", "describe", "trained_tiny_esm"]


def trained_tiny_esm(
    name: str, seed: int = 0, report: Callable[[float, str], None] = lambda f, m: None, cache: Path | None = None
) -> Path:
    """Folder of the built-in trained tiny ESM ``name`` (trained on first use, then cached)."""
    recipe = BUILTINS[name]
    corpus_hash = file_sha256(DESIGNED_FASTA)
    key = hashlib.sha256(json.dumps([asdict(recipe), seed, corpus_hash, 2]).encode()).hexdigest()[:12]
    root = (cache or kb_home() / "cache" / "depth") / f"{name.split(':', 1)[1]}-seed{seed}-{key}"
    if (root / "training.json").is_file():
        return root
    from transformers import EsmForMaskedLM, EsmTokenizer

    train, val = split_records(read_fasta(DESIGNED_FASTA))
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root.parent, prefix=f".{root.name}-"))
    try:
        save_esm_tokenizer(staging)
        tokenizer = EsmTokenizer.from_pretrained(staging)
        torch.manual_seed(seed)
        model = EsmForMaskedLM(esm_config(recipe.num_layers, recipe.width, recipe.num_heads))
        config = TrainConfig(
            steps=recipe.steps, batch_size=recipe.batch_size, learning_rate=recipe.learning_rate, seed=seed,
            warmup_steps=max(10, recipe.steps // 10),
        )
        losses = train_masked_lm(model, tokenizer, train, config, lambda f, m: report(f, f"training {name}: {m}"))
        perplexity, accuracy = evaluate_masked_lm(model, tokenizer, val, seed=seed)
        model.save_pretrained(staging)
        summary = {
            "name": name, "recipe": asdict(recipe), "seed": seed, "corpus": DESIGNED_FASTA.name,
            "corpus_sha256": corpus_hash, "train_sequences": len(train), "val_sequences": len(val),
            "final_train_loss": sum(losses[-20:]) / len(losses[-20:]), "val_perplexity": perplexity,
            "val_masked_accuracy": accuracy,
        }
        (staging / "training.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
        if root.exists():
            shutil.rmtree(root)
        os.replace(staging, root)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return root


def build_random_esm(folder: Path, num_layers: int = 4, width: int = 32, num_heads: int = 4, seed: int = 0) -> Path:
    """Save a RANDOMLY INITIALISED ESM-2-shaped masked LM and its tokenizer to ``folder`` (tests only)."""
    from transformers import EsmForMaskedLM

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    EsmForMaskedLM(esm_config(num_layers, width, num_heads)).save_pretrained(folder)
    save_esm_tokenizer(folder)
    return folder


def build_random_gpt2(folder: Path, num_layers: int = 3, width: int = 32, num_heads: int = 4, seed: int = 0) -> Path:
    """Save a RANDOMLY INITIALISED GPT-2 causal LM with a one-residue-per-token tokenizer (tests only)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    specials = ["<|endoftext|>", "<pad>", "<unk>"]
    vocab = {token: index for index, token in enumerate(specials + list("ACDEFGHIKLMNPQRSTVWYXBZUO"))}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, eos_token="<|endoftext|>", bos_token="<|endoftext|>", pad_token="<pad>",
        unk_token="<unk>",
    )
    tokenizer.save_pretrained(folder)
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(vocab), n_embd=width, n_layer=num_layers, n_head=num_heads, n_positions=256,
        bos_token_id=0, eos_token_id=0, pad_token_id=1, architectures=["GPT2LMHeadModel"],
    )
    GPT2LMHeadModel(config).save_pretrained(folder)
    return folder
