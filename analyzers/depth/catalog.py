"""The protein language models the depth analyzers know: real checkpoints on the Hugging Face hub, the
built-in tiny ESMs trained here (their recipes; ``tiny.py`` trains them), and the local folders a user
imported with ``kb models import`` (kept in ``<cache>/models/registry.json``, the cache folder being the
KB home's ``cache/`` that kb hands to runs as ``RunContext.cache_dir`` and to the CLI hooks).

Each hub entry says what the model is (family, training objective, layers, width, parameters), which
class loads it (``loader``), how its sequences are written (``input_format``) and whether this package
can probe it, and if not, why. Nothing here imports kb: the KB home comes from the caller.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from analyzers.files import atomic_write_text


@dataclass(frozen=True)
class ModelCard:
    """One real PLM checkpoint on the Hugging Face hub."""

    hub_id: str
    family: str
    objective: str  # "masked", "causal" or "diffusion" (a masked model probed at a chosen noise level)
    num_layers: int
    width: int
    approx_params: float
    loader: str  # the transformers class (or other loader) the checkpoint needs
    supported: bool
    why_not: str = ""  # for unsupported entries: what is missing
    # "plain" letters, "spaced" (ProtBERT), "saprot" (residue + 3Di letter, '#' unknown), "protgpt2"
    # ('<|endoftext|>' + 60-residue lines, the model card's convention), "progen2" ('1' + sequence + '2')
    input_format: str = "plain"
    note: str = ""

    def row(self) -> dict[str, Any]:
        """JSON-ready description (``kb models list --json``)."""
        return {"id": self.hub_id, "kind": "hub", **{k: v for k, v in asdict(self).items() if k != "hub_id"}}


_ESM2_NOTE = "ESM-2, UniRef50; pre-LN; rotary positions"
_SAPROT_NOTE = ("residue x 3Di tokens: give 3Di strings (structure_fasta) or residues are fed as '<aa>#' "
                "(structure unknown); accuracy sums each amino acid's probability over structure letters")
_DPLM_NOTE = (
    "discrete diffusion (masking) LM with ESM-2 layers and weight names, loaded into EsmForMaskedLM "
    "(prefix 'net.' removed); probed at noise level noise_level = t/T (step t of T=500)"
)
_PROGEN_NOTE = ("loaded into transformers' CodeGenForCausalLM (no remote code): fused qkv rows permuted from "
                "8 to 4 groups; sequences written '1' + residues + '2'; GPT-J-style parallel attention/MLP")
_PROTGPT2_NOTE = (
    "BPE tokens (several residues per token); fed as '<|endoftext|>' + 60-residue lines (model card); "
    "vocabulary 50,257 makes the logit lens costly"
)
_ESMC_NOTE = ("ESM-C through transformers' EsmcForMaskedLM; residual branches divided by sqrt(L/36), "
              "undone for the contribution ratios")
_ESMC_WHY = (
    "the esm package's own checkpoint format (a pickled .pth, no config.json), which transformers cannot "
    "read: use the transformers-format ESM-C checkpoints (biohub/ESMC-*) or convert and `kb models import`"
)

# fmt: off
MODELS: dict[str, ModelCard] = {
    card.hub_id: card
    for card in [
        ModelCard("facebook/esm2_t6_8M_UR50D", "ESM-2", "masked", 6, 320, 7.8e6, "EsmForMaskedLM", True,
                  note=_ESM2_NOTE),
        ModelCard("facebook/esm2_t12_35M_UR50D", "ESM-2", "masked", 12, 480, 35e6, "EsmForMaskedLM", True,
                  note=_ESM2_NOTE),
        ModelCard("facebook/esm2_t30_150M_UR50D", "ESM-2", "masked", 30, 640, 150e6, "EsmForMaskedLM", True,
                  note=_ESM2_NOTE),
        ModelCard("facebook/esm2_t33_650M_UR50D", "ESM-2", "masked", 33, 1280, 650e6, "EsmForMaskedLM", True,
                  note=_ESM2_NOTE),
        ModelCard("facebook/esm2_t36_3B_UR50D", "ESM-2", "masked", 36, 2560, 3e9, "EsmForMaskedLM", True,
                  note=_ESM2_NOTE),
        ModelCard("facebook/esm2_t48_15B_UR50D", "ESM-2", "masked", 48, 5120, 15e9, "EsmForMaskedLM", True,
                  note=_ESM2_NOTE + "; ~60 GB in float32, use bfloat16 on a large GPU"),
        ModelCard("nferruz/ProtGPT2", "ProtGPT2", "causal", 36, 1280, 738e6, "GPT2LMHeadModel", True,
                  input_format="protgpt2", note=_PROTGPT2_NOTE),
        ModelCard("hugohrban/progen2-small", "ProGen2", "causal", 12, 1024, 151e6, "CodeGenForCausalLM "
                                                                                   "(converted)",
                  True, input_format="progen2", note=_PROGEN_NOTE),
        ModelCard("hugohrban/progen2-medium", "ProGen2", "causal", 27, 1536, 764e6, "CodeGenForCausalLM "
                                                                                    "(converted)",
                  True, input_format="progen2", note=_PROGEN_NOTE),
        ModelCard("hugohrban/progen2-base", "ProGen2", "causal", 27, 1536, 764e6, "CodeGenForCausalLM "
                                                                                  "(converted)",
                  True, input_format="progen2", note=_PROGEN_NOTE),
        ModelCard("hugohrban/progen2-large", "ProGen2", "causal", 32, 2560, 2.7e9, "CodeGenForCausalLM "
                                                                                   "(converted)",
                  True, input_format="progen2", note=_PROGEN_NOTE),
        ModelCard("airkingbd/dplm_150m", "DPLM", "diffusion", 30, 640, 150e6, "EsmForMaskedLM "
            "(converted)", True,
                  note=_DPLM_NOTE),
        ModelCard("airkingbd/dplm_650m", "DPLM", "diffusion", 33, 1280, 650e6, "EsmForMaskedLM "
            "(converted)", True,
                  note=_DPLM_NOTE),
        ModelCard("airkingbd/dplm_3b", "DPLM", "diffusion", 36, 2560, 3e9, "EsmForMaskedLM (converted)", True,
                  note=_DPLM_NOTE),
        ModelCard("westlake-repl/SaProt_35M_AF2", "SaProt", "masked", 12, 480, 35e6, "EsmForMaskedLM", True,
                  input_format="saprot", note=_SAPROT_NOTE),
        ModelCard("westlake-repl/SaProt_650M_AF2", "SaProt", "masked", 33, 1280, 650e6, "EsmForMaskedLM",
                  True, input_format="saprot", note=_SAPROT_NOTE),
        ModelCard("Rostlab/prot_bert", "ProtBERT", "masked", 30, 1024, 420e6, "BertForMaskedLM", True,
                  input_format="spaced",
                  note="post-LN: the residual decomposition is not defined and is reported as such"),
        ModelCard("biohub/ESMC-300M", "ESM-C", "masked", 30, 960, 300e6, "EsmcForMaskedLM", True,
                  note=_ESMC_NOTE),
        ModelCard("biohub/ESMC-6B", "ESM-C", "masked", 80, 2560, 6e9, "EsmcForMaskedLM", True,
                  note=_ESMC_NOTE + "; ~24 GB in float32, use bfloat16 on a large GPU"),
        ModelCard("EvolutionaryScale/esmc-300m-2024-12", "ESM-C", "masked", 30, 960, 300e6, "esm "
            "package", False,
                  _ESMC_WHY),
        ModelCard("EvolutionaryScale/esmc-600m-2024-12", "ESM-C", "masked", 36, 1152, 600e6, "esm "
            "package", False,
                  _ESMC_WHY),
    ]
}
# fmt: on


@dataclass(frozen=True)
class TinyRecipe:
    """Shape and training length of one built-in trained tiny ESM."""

    num_layers: int
    width: int
    num_heads: int
    steps: int
    batch_size: int = 32
    learning_rate: float = 2e-3


BUILTINS: dict[str, TinyRecipe] = {
    # Seconds on one CPU core: enough training to beat the unigram baseline clearly.
    "builtin:esm-designed-4x64": TinyRecipe(
        num_layers=4, width=64, num_heads=4, steps=200, batch_size=16, learning_rate=3e-3
    ),
    # The family preset ``family_smoke`` probes 2x64, 4x64 and 8x64: one width and recipe, three depths
    # (seconds).
    "builtin:esm-designed-2x64": TinyRecipe(
        num_layers=2, width=64, num_heads=4, steps=200, batch_size=16, learning_rate=3e-3
    ),
    "builtin:esm-designed-8x64": TinyRecipe(
        num_layers=8, width=64, num_heads=4, steps=200, batch_size=16, learning_rate=3e-3
    ),
    # A few minutes on one CPU core: deeper and wider, trained long enough to go past the per-site profile.
    "builtin:esm-designed-8x128": TinyRecipe(
        num_layers=8, width=128, num_heads=8, steps=600, learning_rate=2e-3
    ),
}


#: Seconds training each built-in takes on the reference machine (``kb.evidence.estimates``: the 2-core
#: machine without contention): its first-use stage (``DepthProbe.first_use``), paid once per cache folder.
TRAIN_SECONDS: dict[str, float] = {
    # 4x64: about 3,000 times the speed probe, timed between two probes in fresh processes under loads of
    # 4-20 (benchmarks/bench_costs.py; 5 rounds, 2,529-3,215), times the probe's reference 0.011 s; 2x64 and
    # 8x64 as they took against 4x64 in benchmarks/bench_estimates.py (0.47x and 1.55-1.9x, idle and loaded)
    "builtin:esm-designed-2x64": 15.5,
    "builtin:esm-designed-4x64": 33.0,
    "builtin:esm-designed-8x64": 56.0,
    "builtin:esm-designed-8x128": 500.0,  # three times the steps, twice the batch, twice the width of 8x64
}


def builtin_folder(name: str, seed: int, cache: Path) -> Path:
    """Where the built-in ``name`` trained with ``seed`` is kept under ``cache``: keyed by its recipe and the
    corpus's hash, so a changed recipe or corpus trains anew."""
    from analyzers.depth.data import DESIGNED_FASTA, file_sha256

    key = hashlib.sha256(json.dumps([asdict(BUILTINS[name]), seed, file_sha256(DESIGNED_FASTA), 2]).encode())
    return Path(cache) / f"{name.split(':', 1)[1]}-seed{seed}-{key.hexdigest()[:12]}"


def is_trained(folder: Path) -> bool:
    """Whether a built-in's folder holds a finished training (its ``training.json`` is written last)."""
    return (folder / "training.json").is_file()


def describe(name: str) -> str:
    """One line for result notes: what the built-in model is."""
    recipe = BUILTINS[name]
    return (
        f"{name} is an ESM-2-shaped masked LM ({recipe.num_layers} layers, width {recipe.width}) trained "
        f"here for {recipe.steps} steps on the shipped designed sequences (not natural proteins): a small "
        f"stand-in for a PLM, "
        "not ESM-2"
    )


def models_dir(cache_dir: Path) -> Path:
    """Where ``kb models import`` stores model folders: ``<cache>/models``."""
    return Path(cache_dir) / "models"


def _registry_path(cache_dir: Path) -> Path:
    return models_dir(cache_dir) / "registry.json"


def imported_models(cache_dir: Path | None) -> dict[str, dict[str, Any]]:
    """Imported models by name: ``{"path", "architecture", "source", "weights_hash", "imported_at", ...}``;
    none without a cache folder."""
    if cache_dir is None:
        return {}
    path = _registry_path(cache_dir)
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{path}: corrupt model registry ({error}); fix or delete it and re-import"
        ) from error
    return data if isinstance(data, dict) else {}


def register_imported(cache_dir: Path, name: str, entry: dict[str, Any]) -> None:
    """Add or replace one imported model in the registry (atomic write)."""
    registry = imported_models(cache_dir)
    registry[name] = {**entry, "imported_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
    path = _registry_path(cache_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(registry, indent=2, sort_keys=True))
