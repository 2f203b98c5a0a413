"""Finding and loading PLM weights: local folders, imported models, the Hugging Face hub cache, the hub.

A model is named by an imported name (``kb models import``), a local folder (``save_pretrained``
layout: ``config.json``, weights, tokenizer files) or a hub id (``owner/name``). Hub ids are served from
the local Hugging Face cache when present (its snapshot commit is the revision); otherwise they are
downloaded when the hub answers within seconds, and when it does not (or ``HF_HUB_OFFLINE`` is set) the
loader fails at once with how to provide the weights. Safetensors are preferred; pickle checkpoints
(``pytorch_model.bin``) are only read with ``weights_only`` loading. ``trust_remote_code`` is off unless
the caller asks for it, and no family needs it:

- DPLM checkpoints (``EsmForDPLM``) are ESM-2 weights, sometimes under a ``net.`` prefix: they load
  into ``EsmForMaskedLM`` with the prefix removed;
- ProGen2 checkpoints (``ProGenForCausalLM``, remote code that no longer imports) load into the native
  ``CodeGenForCausalLM``: same blocks and weight names, but ProGen2 splits its fused ``qkv_proj`` into 8
  interleaved groups where CodeGen splits it into 4, so the rows are permuted on load
  (``progen_qkv_to_codegen``);
- ESM-C loads through transformers' ``EsmcForMaskedLM``.

How sequences are written for each family (``input_format_for`` / ``format_sequence``): plain letters
(ESM-2, ESM-C, DPLM), spaced letters (ProtBERT), ``<|endoftext|>`` then 60-residue lines (ProtGPT2's
model card), ``1`` + sequence + ``2`` (ProGen2's termini), and amino-acid x 3Di tokens (SaProt: ``Ad``,
or ``A#`` where the structure is unknown). Imported models live under the cache folder the caller
gives (``<KB home>/cache/models``); analyzers read no kb settings.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from analyzers.base import NotRunnable, looks_like_path
from analyzers.depth.adapters import (
    CONVERTED_ARCHITECTURES,
    Adapter,
    adapter_for,
    check_supported,
)
from analyzers.depth.catalog import MODELS, ModelCard, imported_models, models_dir, register_imported
from analyzers.depth.data import AMINO_ACIDS
from analyzers.files import atomic_folder

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
TRUE_WORDS = {"1", "true", "yes", "on"}
CONFIG_PATTERNS = [
    "*.json",
    "*.txt",
    "*.model",
    "tokenizer*",
    "vocab*",
    "merges.txt",
    "special_tokens_map.json",
]
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


class ModelError(ValueError):
    """A model name, folder or checkpoint that cannot be used; the message says which and what to do."""


class OutOfMemory(RuntimeError):
    """The device ran out of memory; the message says what did not fit and what to lower."""


@dataclass
class ResolvedModel:
    """Where a model's files are, and how they were found."""

    spec: str  # what the user gave
    folder: Path
    source: str  # "folder", "imported", "hub-cache" or "hub-download"
    hub_id: str | None = None
    revision: str | None = None
    card: ModelCard | None = None

    @property
    def model_id(self) -> str:
        """The hub id when there is one, else the name or folder the user gave."""
        return self.hub_id or self.spec


@dataclass
class LoadedModel:
    """A model ready to probe, with its tokenizer, adapter and provenance."""

    model: nn.Module
    tokenizer: Any
    adapter: Adapter
    resolved: ResolvedModel
    input_format: str
    provenance: dict[str, Any] = field(default_factory=dict)


def hub_offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` asks for no hub access."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in TRUE_WORDS


def hub_reachable(timeout_s: float = 3.0) -> bool:
    """Whether the hub endpoint (``HF_ENDPOINT``) answers an HTTP request within ``timeout_s``.

    A bare TCP connect is not enough (proxies accept connections they cannot serve), so this asks for
    the endpoint's API root and accepts any HTTP answer. The request (DNS included, which socket
    timeouts do not bound) runs in a daemon thread, so this never waits longer than ``timeout_s``.
    """
    if hub_offline():
        return False
    import urllib.error
    import urllib.request

    url = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/") + "/api/models?limit=1"
    answered = threading.Event()

    def ask() -> None:
        try:
            # The hub endpoint is https or the operator's own HF_ENDPOINT, never a note's.
            request = urllib.request.Request(url, method="HEAD")  # noqa: S310
            with urllib.request.urlopen(request, timeout=timeout_s):  # noqa: S310
                answered.set()
        # an HTTP answer, even an error status, means the hub is there
        except urllib.error.HTTPError as error:
            if error.code < 500:
                answered.set()
        except (OSError, ValueError):
            pass

    threading.Thread(target=ask, daemon=True).start()
    return answered.wait(timeout_s)


def how_to_provide(hub_id: str) -> str:
    """The message for weights that are not here and cannot be downloaded now."""
    why = (
        "HF_HUB_OFFLINE is set"
        if hub_offline()
        else "the Hugging Face hub is not reachable from this machine"
    )
    return (
        f"weights for {hub_id} are not in the local Hugging Face cache and {why}: on a machine with "
        f"internet run `kb models pull {hub_id}` (or `huggingface-cli download {hub_id}`) and copy the cache "
        f"(~/.cache/huggingface/hub) here, or save the model to a folder and run `kb models import FOLDER`"
    )


def _card_or_error(hub_id: str) -> ModelCard | None:
    card = MODELS.get(hub_id)
    if card is not None and not card.supported:
        raise ModelError(f"{hub_id} ({card.family}) is not supported yet: {card.why_not}")
    return card


def _cached_snapshot(hub_id: str, revision: str | None = None) -> Path | None:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        folder = Path(snapshot_download(hub_id, revision=revision, local_files_only=True))
    except (LocalEntryNotFoundError, FileNotFoundError, OSError, ValueError):
        return None
    return folder if (folder / "config.json").is_file() else None


def resolve_model(
    spec: str, allow_download: bool = True, trust_remote_code: bool = False, cache_dir: Path | None = None
) -> ResolvedModel:
    """Find a model's files: imported name (registered under ``cache_dir``), local folder, hub cache, or
    (online) a fresh download.

    Raises ``ModelError`` for names that are none of these or for catalog models not supported yet, and
    ``NotRunnable`` when a hub model is not cached and the hub cannot be reached (with how to provide it).
    """
    imported = imported_models(cache_dir)
    if spec in imported:
        folder = Path(imported[spec]["path"])
        if not (folder / "config.json").is_file():
            raise ModelError(
                f"imported model {spec!r} points to {folder}, which is gone; run `kb models import` again"
            )
        return ResolvedModel(spec, folder, "imported")
    path = Path(spec).expanduser()
    # A folder only when named as a path (absolute, ~, ./, ../): 'owner/name' is a hub id even where this
    # process's current folder holds an 'owner/name' folder, so that a note's hub id never loads whatever
    # a shared or job folder happens to hold (the operator's `kb probe --model DIR` is made absolute).
    if looks_like_path(spec, syntax_only=True):
        if path.is_dir():
            return ResolvedModel(spec, path.resolve(), "folder")
        raise ModelError(
            f"{spec}: " + ("is a file, not a model folder (give the folder with config.json and the weights)"
                           if path.exists() else "no such folder")
        )
    if not HUB_ID.match(spec):
        here = " (a folder here: name it ./" + spec + " or by its absolute path)" if path.is_dir() else ""
        raise ModelError(
            f"unknown model {spec!r}{here}: not an imported name, not a folder, not a hub id (owner/name); "
            "see `kb models list`"
        )
    card = _card_or_error(spec)
    cached = _cached_snapshot(spec)
    if cached is not None:
        return ResolvedModel(spec, cached, "hub-cache", spec, cached.name, card)
    if not allow_download or not hub_reachable():
        raise NotRunnable(how_to_provide(spec))
    return pull_model(spec, trust_remote_code=trust_remote_code)


def pull_model(hub_id: str, revision: str | None = None, trust_remote_code: bool = False) -> ResolvedModel:
    """Download a hub model into the Hugging Face cache (safetensors when the repo has them) and resolve
    it."""
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    if not HUB_ID.match(hub_id):
        raise ModelError(f"{hub_id!r} is not a hub id (owner/name)")
    card = _card_or_error(hub_id)
    if hub_offline() or not hub_reachable():
        cached = _cached_snapshot(hub_id, revision)
        if cached is not None:
            return ResolvedModel(hub_id, cached, "hub-cache", hub_id, cached.name, card)
        raise NotRunnable(how_to_provide(hub_id))
    try:
        files = HfApi().list_repo_files(hub_id, revision=revision)
        weights = (
            ["*.safetensors"] if any(f.endswith(".safetensors") for f in files) else ["pytorch_model*.bin*"]
        )
        code = ["*.py"] if trust_remote_code else []
        folder = Path(
            snapshot_download(
                hub_id, revision=revision, allow_patterns=CONFIG_PATTERNS + weights + code, etag_timeout=5
            )
        )
    except (RepositoryNotFoundError, RevisionNotFoundError) as error:
        raise ModelError(f"{hub_id}: no such model (or revision) on the Hugging Face hub") from error
    except (HfHubHTTPError, OSError) as error:
        raise NotRunnable(f"downloading {hub_id} failed ({error}); {how_to_provide(hub_id)}") from error
    return ResolvedModel(hub_id, folder, "hub-download", hub_id, folder.name, card)


def weight_files(folder: Path) -> list[Path]:
    """The checkpoint files transformers would read: safetensors when present, else pickle ``.bin``."""
    safetensors = sorted(folder.glob("*.safetensors"))
    return safetensors or sorted(folder.glob("pytorch_model*.bin"))


def weights_hash(folder: Path) -> str | None:
    """SHA-256 over ``name:sha256(content)`` of the weight files. Hub-cache blobs are named by their
    SHA-256 already (LFS), so a 2.6 GB checkpoint from the cache costs no read."""
    files = weight_files(folder)
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        blob = path.resolve()
        if path.is_symlink() and re.fullmatch(r"[0-9a-f]{64}", blob.name):
            file_hash = blob.name
        else:
            file_digest = hashlib.sha256()
            with blob.open("rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    file_digest.update(chunk)
            file_hash = file_digest.hexdigest()
        digest.update(f"{path.name}:{file_hash}\n".encode())
    return digest.hexdigest()


#: ProtGPT2's model card writes a sequence as FASTA lines of this many residues after ``<|endoftext|>``.
PROTGPT2_LINE = 60
#: Foldseek's 3Di alphabet (SaProt writes it in lower case), and '#' where the structure is unknown.
THREE_DI = "acdefghiklmnpqrstvwy"


def input_format_for(tokenizer: Any, architecture: str | None = None) -> str:
    """How sequences must be written for this model: ``saprot`` ('Ad' / 'A#' tokens), ``spaced``
    (ProtBERT), ``protgpt2`` (a GPT-2 with ``<|endoftext|>``: the model card's start token and
    60-residue lines), ``progen2`` (CodeGen: '1' + sequence + '2') or ``plain`` letters."""
    vocab = tokenizer.get_vocab()
    if "A#" in vocab and "L#" in vocab:
        return "saprot"
    if type(tokenizer).__name__.startswith("Bert") and len(vocab) < 64:
        return "spaced"
    if architecture == "GPT2LMHeadModel" and "<|endoftext|>" in vocab:
        return "protgpt2"
    if architecture == "CodeGenForCausalLM" and "1" in vocab and "2" in vocab:
        return "progen2"
    return "plain"


def format_sequence(sequence: str, input_format: str, structure: str | None = None) -> str:
    """A residue string written the way the model's tokenizer expects it. ``structure`` (SaProt only):
    the 3Di letters of the residues, '#' where unknown."""
    if input_format == "saprot":
        letters = structure.lower() if structure is not None else "#" * len(sequence)
        if len(letters) != len(sequence):
            raise ValueError(
                f"structure string of {len(letters)} letters for a sequence of {len(sequence)} residues"
            )
        return "".join(f"{residue}{letter}" for residue, letter in zip(sequence, letters, strict=True))
    if input_format == "spaced":  # ProtBERT maps the rare letters to X
        return " ".join(sequence.translate(str.maketrans("UZOB", "XXXX")))
    if input_format == "protgpt2":
        lines = [sequence[i : i + PROTGPT2_LINE] for i in range(0, len(sequence), PROTGPT2_LINE)]
        return "<|endoftext|>" + "\n".join(lines)
    if input_format == "progen2":
        return f"1{sequence}2"
    return sequence


def nonresidue_ids(tokenizer: Any, input_format: str) -> list[int]:
    """Tokens a format adds that are not residues and are not special tokens either: ProtGPT2's line
    breaks, ProGen2's '1' / '2' termini. The probes leave them out like special tokens."""
    texts = {"protgpt2": ["\n"], "progen2": ["1", "2"]}.get(input_format, [])
    vocab = tokenizer.get_vocab()
    ids = [vocab[text] for text in texts if text in vocab]
    if input_format == "protgpt2":  # byte-level BPE spells a newline as 'Ċ'
        ids += [vocab[text] for text in ("Ċ", "ĊĊ") if text in vocab]
    return sorted(set(ids))


def saprot_residue_classes(tokenizer: Any) -> torch.Tensor:
    """For every vocabulary entry, the index in ``AMINO_ACIDS`` of the amino acid a SaProt token stands
    for ('Ad' and 'A#' -> A), -1 for special tokens, '#x' (masked residue) and non-standard letters."""
    vocab = tokenizer.get_vocab()
    classes = torch.full((max(vocab.values()) + 1,), -1, dtype=torch.long)
    for token, index in vocab.items():
        if len(token) == 2 and token[0] in AMINO_ACIDS and (token[1] in THREE_DI or token[1] == "#"):
            classes[index] = AMINO_ACIDS.index(token[0])
    return classes


def saprot_mask_ids(tokenizer: Any) -> torch.Tensor:
    """For every vocabulary entry, the token that masks it: '#d' (residue hidden, 3Di letter kept: how
    SaProt hides a residue whose structure is known) where the vocabulary has it, else the mask token."""
    vocab = tokenizer.get_vocab()
    masks = torch.full((max(vocab.values()) + 1,), int(tokenizer.mask_token_id), dtype=torch.long)
    for token, index in vocab.items():
        if len(token) == 2 and token[0] in AMINO_ACIDS and token[1] in THREE_DI and f"#{token[1]}" in vocab:
            masks[index] = vocab[f"#{token[1]}"]
    return masks


def check_device(device: str) -> None:
    """Raise ``NotRunnable`` for an unavailable CUDA device, ``ModelError`` for an unknown device string."""
    if device == "cpu":
        return
    if device == "cuda" or device.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise NotRunnable(
                f"CUDA asked for (--device {device}) but torch.cuda.is_available() is False on this machine; "
                "use --device cpu or run on a machine with an NVIDIA GPU"
            )
        index = int(device.split(":")[1]) if ":" in device else 0
        if index >= torch.cuda.device_count():
            raise NotRunnable(
                f"--device {device}: this machine has {torch.cuda.device_count()} CUDA device(s)"
            )
        return
    if device == "mps" and torch.backends.mps.is_available():
        return
    raise ModelError(f"unknown device {device!r}; use cpu, cuda or cuda:N")


def read_config(folder: Path) -> dict[str, Any]:
    """``config.json`` as plain JSON (read before transformers, which cannot parse every family's)."""
    import json

    path = Path(folder) / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ModelError(f"{path}: cannot be read as a JSON config: {error}") from error
    if not isinstance(data, dict):
        raise ModelError(f"{path}: not a JSON object")
    return data


def checkpoint_architecture(folder: Path) -> str | None:
    """The class the checkpoint names (``architectures[0]``), e.g. ``ProGenForCausalLM``."""
    names = read_config(folder).get("architectures") or []
    return str(names[0]) if names else None


def _transformers_config(folder: Path, architecture: str, trust_remote_code: bool) -> Any:
    """The transformers config object of the class the checkpoint loads into."""
    from transformers import AutoConfig, CodeGenConfig

    if architecture == "ProGenForCausalLM":
        raw = read_config(folder)
        fields = set(CodeGenConfig().to_dict())
        kept = {
            key: value
            for key, value in raw.items()
            if key in fields
            and key not in ("model_type", "architectures", "auto_map", "transformers_version")
        }
        return CodeGenConfig(**kept, architectures=["CodeGenForCausalLM"])
    try:
        config = AutoConfig.from_pretrained(
            folder, local_files_only=True, trust_remote_code=trust_remote_code
        )
    except (OSError, ValueError, TypeError) as error:
        raise ModelError(
            f"{folder / 'config.json'}: cannot be read as a transformers config: {error}"
        ) from error
    if architecture in CONVERTED_ARCHITECTURES:
        config.architectures = [CONVERTED_ARCHITECTURES[architecture]]
    return config


def validate_folder(folder: Path, trust_remote_code: bool = False) -> dict[str, Any]:
    """Check that a folder holds a probe-able model: config, weights, tokenizer, supported architecture.

    Returns ``{"architecture", "weights", "weights_format", "config"}``; raises ``ModelError`` naming the
    folder and what is missing otherwise.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ModelError(f"{folder}: not a folder")
    if not (folder / "config.json").is_file():
        raise ModelError(f"{folder}: no config.json (save the model with save_pretrained)")
    architecture = checkpoint_architecture(folder)
    try:
        check_supported(architecture, str(folder))
    except ValueError as error:
        raise ModelError(str(error)) from error
    assert architecture is not None  # check_supported refused None
    config = _transformers_config(folder, architecture, trust_remote_code)
    files = weight_files(folder)
    if not files:
        raise ModelError(f"{folder}: no weights (model.safetensors or pytorch_model.bin)")
    try:
        load_tokenizer(folder)
    except (OSError, ValueError, TypeError) as error:
        raise ModelError(
            f"{folder}: no usable tokenizer files ({error}); save the tokenizer beside the model"
        ) from error
    return {
        "architecture": architecture,
        "weights": [f.name for f in files],
        "weights_format": "safetensors" if files[0].suffix == ".safetensors" else "pickle (weights_only)",
        "config": config,
    }


def load_tokenizer(folder: Path) -> Any:
    """The folder's tokenizer. ProGen2's hub repos ship a bare ``tokenizer.json`` beside a config whose
    model type transformers does not know: where ``AutoTokenizer`` cannot read the folder, the
    ``tokenizer.json`` is read with ``PreTrainedTokenizerFast`` and its pad / bos / eos tokens named."""
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    folder = Path(folder)
    bare = (folder / "tokenizer.json").is_file()
    if (folder / "tokenizer_config.json").is_file() or not bare:
        try:
            return AutoTokenizer.from_pretrained(folder, local_files_only=True)
        except (OSError, ValueError, KeyError, TypeError):
            if not bare:
                raise
    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    vocab = tokenizer.get_vocab()
    for role, token in (("pad_token", "<|pad|>"), ("bos_token", "<|bos|>"), ("eos_token", "<|eos|>")):
        if token in vocab and getattr(tokenizer, role) is None:
            setattr(tokenizer, role, token)
    return tokenizer


def import_model(
    folder: Path, name: str | None = None, trust_remote_code: bool = False, cache_dir: Path | None = None
) -> dict[str, Any]:
    """Validate a local model folder, copy it under ``<cache_dir>/models/NAME`` and register it.

    The copy is made in a temporary folder and renamed into place, so a failed import leaves nothing
    half-written. Returns the registry entry.
    """
    if cache_dir is None:
        raise ModelError(
            "importing a model needs the KB home's cache folder (run it through `kb models import`)"
        )
    folder = Path(folder).expanduser().resolve()
    report = validate_folder(folder, trust_remote_code)
    name = name or folder.name
    if not re.fullmatch(r"[\w.-]+", name) or "/" in name:
        raise ModelError(f"model name {name!r}: use letters, digits, '.', '_' and '-' only (no '/')")
    load_model(ResolvedModel(name, folder, "folder"), trust_remote_code=trust_remote_code)  # strict key check
    target = models_dir(cache_dir) / name
    with atomic_folder(target, "import") as staging:
        shutil.copytree(folder, staging, symlinks=False, dirs_exist_ok=True)
    config = report["config"]
    entry = {
        "path": str(target),
        "source": str(folder),
        "architecture": report["architecture"],
        "weights_format": report["weights_format"],
        "weights_hash": weights_hash(target),
        "num_layers": int(getattr(config, "num_hidden_layers", 0) or getattr(config, "n_layer", 0)),
        "width": int(getattr(config, "hidden_size", 0) or getattr(config, "n_embd", 0)),
    }
    register_imported(cache_dir, name, entry)
    return {"name": name, **entry}


def _model_class(architecture: str) -> Any:
    import transformers

    return getattr(transformers, architecture)


def read_state_dict(files: list[Path]) -> dict[str, torch.Tensor]:
    """Every tensor of the checkpoint files: safetensors, or pickles read with ``weights_only``."""
    state: dict[str, torch.Tensor] = {}
    for path in files:
        if path.suffix == ".safetensors":
            from safetensors.torch import load_file

            state.update(load_file(str(path)))
        else:
            state.update(torch.load(path, map_location="cpu", weights_only=True))
    return state


def progen_qkv_to_codegen(weight: torch.Tensor, groups_from: int = 8, groups_to: int = 4) -> torch.Tensor:
    """Permute the rows of a fused ``qkv_proj`` weight ``(3 * dim, dim)`` from ProGen2's layout (its rows
    cut into ``groups_from`` groups of ``[q | v | k]``, each part holding ``dim / groups_from`` rows of
    consecutive heads) to CodeGen's (``groups_to`` such groups)."""
    dim = weight.shape[1]
    parts = weight.reshape(groups_from, 3, dim // groups_from, dim)  # (group, q/v/k, rows, dim)
    by_kind = parts.permute(1, 0, 2, 3).reshape(3, dim, dim)  # (q/v/k, heads x head_dim, dim)
    regrouped = by_kind.reshape(3, groups_to, dim // groups_to, dim).permute(1, 0, 2, 3)
    return regrouped.reshape(3 * dim, dim)


# Buffers a checkpoint may carry that the native classes rebuild (causal masks, rotary tables, ids).
_REBUILT = re.compile(r"(^|\.)(attn\.(bias|masked_bias|causal_mask)|position_ids|inv_freq)$")


def convert_state_dict(architecture: str, state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A converted checkpoint's tensors renamed (DPLM's ``net.`` prefix) or permuted (ProGen2's qkv)
    for the native class it loads into; buffers the native class rebuilds are dropped."""
    out: dict[str, torch.Tensor] = {}
    for key, value in state.items():
        name = key.removeprefix("net.") if architecture == "EsmForDPLM" else key
        if _REBUILT.search(name):
            continue
        if architecture == "ProGenForCausalLM" and name.endswith("attn.qkv_proj.weight"):
            value = progen_qkv_to_codegen(value)
        out[name] = value
    return out


def _load_converted(folder: Path, architecture: str, config: Any, dtype: torch.dtype, spec: str) -> nn.Module:
    """Build the native class and load the converted tensors, refusing missing or unknown keys."""
    model = _model_class(CONVERTED_ARCHITECTURES[architecture])(config)
    state = convert_state_dict(architecture, read_state_dict(weight_files(folder)))
    expected = {k for k in model.state_dict() if not _REBUILT.search(k)}
    tied = (
        {"lm_head.decoder.weight", "lm_head.weight"}
        if getattr(config, "tie_word_embeddings", False)
        else set()
    )
    missing = sorted(expected - set(state) - tied)
    unexpected = sorted(set(state) - expected)
    mismatched = sorted(k for k in set(state) & expected if state[k].shape != model.state_dict()[k].shape)
    if missing or unexpected or mismatched:
        problems = {
            "missing_keys": missing[:5],
            "unexpected_keys": unexpected[:5],
            "mismatched_keys": mismatched[:5],
        }
        raise ModelError(
            f"{spec}: checkpoint ({architecture}) does not match "
            f"{CONVERTED_ARCHITECTURES[architecture]}: { {k: v for k, v in problems.items() if v} }"
        )
    model.load_state_dict(state, strict=False)
    if tied:
        model.tie_weights()
    return model.to(dtype)


def _checked_checkpoint(resolved: ResolvedModel, trust_remote_code: bool) -> tuple[str, str, Any, list[Path]]:
    """The checkpoint's architecture, the one it loads as, its transformers config and its weight files; a
    ``ModelError`` for a folder without a config or weights, or an architecture the probes do not support."""
    folder = resolved.folder
    if not (folder / "config.json").is_file():
        raise ModelError(f"{resolved.spec}: {folder} holds no config.json")
    checkpoint_class = checkpoint_architecture(folder)
    try:
        check_supported(checkpoint_class, resolved.spec)
    except ValueError as error:
        raise ModelError(str(error)) from error
    assert checkpoint_class is not None  # check_supported refused None
    architecture = CONVERTED_ARCHITECTURES.get(checkpoint_class, checkpoint_class)
    config = _transformers_config(folder, checkpoint_class, trust_remote_code)
    files = weight_files(folder)
    if not files:
        raise ModelError(f"{resolved.spec}: {folder} has no weights (model.safetensors or pytorch_model.bin)")
    return checkpoint_class, architecture, config, files


def _load_weights(
    resolved: ResolvedModel, checkpoint_class: str, architecture: str, config: Any, safetensors: bool,
    dtype: str, trust_remote_code: bool, attention: str,
) -> tuple[Any, Any]:
    """The model (on the CPU, weight keys checked strictly) and its tokenizer."""
    folder = resolved.folder
    from transformers.utils import logging as transformers_logging

    bars = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()  # kb shows its own progress; per-tensor bars are noise
    try:
        if checkpoint_class in CONVERTED_ARCHITECTURES:
            config._attn_implementation = attention
            loaded = _load_converted(folder, checkpoint_class, config, DTYPES[dtype], resolved.spec)
        else:
            loaded, info = _model_class(architecture).from_pretrained(
                folder,
                dtype=DTYPES[dtype],
                attn_implementation=attention,
                local_files_only=True,
                trust_remote_code=trust_remote_code,
                use_safetensors=safetensors,
                weights_only=True,
                output_loading_info=True,
            )
            problems = {k: v for k, v in info.items()
                        if k in ("missing_keys", "unexpected_keys", "mismatched_keys") and v}
            if problems:
                raise ModelError(f"{resolved.spec}: checkpoint does not match {architecture}: {problems}")
        tokenizer = load_tokenizer(folder)
    except OSError as error:
        raise ModelError(f"{resolved.spec}: cannot load the checkpoint in {folder}: {error}") from error
    finally:
        if bars:
            transformers_logging.enable_progress_bar()
    # GPT-2 tokenizers ship no pad token; padded positions are masked anyway
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return loaded, tokenizer


def _on_device(loaded: Any, spec: str, device: str, dtype: str) -> Any:
    """The model moved to ``device`` in eval mode; ``OutOfMemory`` saying what to do when it does not fit."""
    try:
        return loaded.to(device).eval()
    except torch.OutOfMemoryError as error:
        size = sum(p.numel() * p.element_size() for p in loaded.parameters()) / 2**30
        raise OutOfMemory(
            f"{spec} ({size:.1f} GiB of weights in {dtype}) does not fit on {device}: "
            "use --dtype bfloat16 or a larger GPU"
        ) from error


def load_model(
    model: str | ResolvedModel,
    device: str = "cpu",
    dtype: str = "float32",
    trust_remote_code: bool = False,
    allow_download: bool = True,
    cache_dir: Path | None = None,
    attention: str = "eager",
) -> LoadedModel:
    """A model in eval mode, its tokenizer, adapter and provenance. Attention is eager by default (the
    entropy probe reads attention probabilities); ``attention="sdpa"`` gives fast kernels where no map
    is read. Weight keys are checked strictly: a checkpoint that leaves parameters uninitialised or
    carries unknown ones is refused. ``cache_dir`` is where imported models are registered."""
    check_device(device)
    if dtype not in DTYPES:
        raise ModelError(f"unknown dtype {dtype!r}; use {', '.join(DTYPES)}")
    if isinstance(model, ResolvedModel):
        resolved = model
    else:
        resolved = resolve_model(model, allow_download, trust_remote_code, cache_dir)
    folder = resolved.folder
    checkpoint_class, architecture, config, files = _checked_checkpoint(resolved, trust_remote_code)
    safetensors = files[0].suffix == ".safetensors"
    loaded, tokenizer = _load_weights(
        resolved, checkpoint_class, architecture, config, safetensors, dtype, trust_remote_code, attention
    )
    loaded = _on_device(loaded, resolved.spec, device, dtype)
    adapter = adapter_for(loaded)
    input_format = input_format_for(tokenizer, architecture)
    if input_format == "saprot":
        classes = saprot_residue_classes(tokenizer)  # (vocab,)
        onehot = torch.zeros(len(classes), len(AMINO_ACIDS), device=device)
        onehot[classes >= 0, classes[classes >= 0]] = 1.0
        adapter.residue_onehot = onehot
    if checkpoint_class == "EsmForDPLM":
        adapter.objective = "diffusion"
    import transformers

    provenance = {
        "model_id": resolved.model_id,
        "model_revision": resolved.revision,
        "model_source": resolved.source,
        "model_path": str(folder),
        "weights_hash": weights_hash(folder),
        "weights_format": "safetensors" if safetensors else "pickle (weights_only)",
        "architecture": architecture,
        "checkpoint_architecture": checkpoint_class,
        "input_format": input_format,
        "num_parameters": int(sum(p.numel() for p in loaded.parameters())),
        "device": device,
        "dtype": dtype,
        "attention": attention,
        "trust_remote_code": trust_remote_code,
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
    }
    return LoadedModel(loaded, tokenizer, adapter, resolved, input_format, provenance)
