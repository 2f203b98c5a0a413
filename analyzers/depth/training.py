"""Masked-LM training and evaluation of ESM-2-shaped models (``EsmForMaskedLM``), and the width solver
that keeps parameter counts equal across depths.

Training follows ESM-2's recipe at small scale: 15 % of residues selected per sequence, of which 80 %
become ``<mask>``, 10 % a random amino acid and 10 % stay; loss on the selected positions; AdamW with
linear warm-up and cosine decay; gradient clipping. Evaluation masks a fixed, seeded 15 % of each
held-out sequence (all of them ``<mask>``) and reports perplexity ``exp(mean NLL)`` and accuracy there.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from analyzers.depth.batches import encode
from analyzers.depth.data import AMINO_ACIDS, Record
from analyzers.files import atomic_write_bytes

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
        raise ValueError(
            f"width {width} must be a multiple of 2 x {num_heads} heads (rotary needs an even head size)"
        )
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


def solve_shape(num_layers: int, budget: float, head_size: int) -> tuple[int, int]:
    """``(width, intermediate)`` whose ``EsmForMaskedLM`` parameter count matches ``budget`` at this depth,
    with ``width // head_size`` heads of ``head_size`` each.

    The head size is fixed and the width follows, so that depth is not confounded with head size (a fixed
    head count would give head sizes from 150 to 54 across ESM-2-like depths). The width is the multiple of
    ``head_size`` (even: rotary embeddings rotate pairs) whose count with the usual 4x FFN is closest to
    the budget (bisection: the count grows with width); the FFN width is then adjusted, since the count is
    linear in it (``num_layers * (2 * width + 1)`` per unit), to land on the budget, so that counts agree
    across depths to well under 1 %.
    """
    if head_size < 2 or head_size % 2:
        raise ValueError(f"head_size {head_size} must be even (rotary embeddings rotate pairs of dimensions)")

    def count(units: int) -> int:
        return count_parameters(num_layers, units * head_size, units)

    low, high = 1, 1
    while count(high) < budget:
        high *= 2
    while high - low > 1:
        middle = (low + high) // 2
        if count(middle) < budget:
            low = middle
        else:
            high = middle
    units = min((low, high), key=lambda k: abs(count(k) - budget))
    width = units * head_size
    per_unit = num_layers * (2 * width + 1)
    intermediate = 4 * width + round((budget - count_parameters(num_layers, width, units)) / per_unit)
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
            # 80 % mask, 10 % random letter, 10 % unchanged
            action = torch.rand(ids.shape, generator=generator)
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
                report(
                    (step + 1) / config.steps, f"step {step + 1}/{config.steps} loss {float(losses[-1]):.3f}"
                )
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
            batch = encode(
                records[start : start + batch_size], tokenizer, mask_fraction=mask_fraction, seed=seed
            )
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


# -- the depth sweep's trainer: token budget, accumulation, checkpointing, bf16, resumable
# ---------------------


@dataclass
class SweepTrainConfig:
    """Optimisation settings of one depth of the sweep (the step count follows from the token budget)."""

    steps: int
    learning_rate: float = 2e-3
    warmup_steps: int = 10
    weight_decay: float = 0.01
    mask_fraction: float = 0.15
    accumulation: int = 1  # micro-batches per optimiser step
    eval_every: int = 0  # steps between validation evaluations (0: only at the end)
    checkpoint_every: int = 0  # steps between resumable checkpoints (0: none within a depth)
    gradient_checkpointing: bool = False  # recompute each layer's activations in the backward pass
    seed: int = 0
    device: str = "cpu"
    dtype: str = "float32"  # "bfloat16": autocast on CUDA, weights and optimizer state stay float32


@dataclass
class Curves:
    """Learning curves of one depth: training loss per step, validation loss at ``val_steps``."""

    train_loss: list[float] = field(default_factory=list)
    val_steps: list[int] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    tokens_seen: int = 0  # residues in the training batches so far

    def as_dict(self) -> dict[str, Any]:
        """Plain data (JSON)."""
        return {"train_loss": self.train_loss, "val_steps": self.val_steps, "val_loss": self.val_loss,
                "tokens_seen": self.tokens_seen}


@dataclass
class TokenScores:
    """Per-sequence sums over the masked positions of a fixed validation set (the same positions for every
    model, so two models can be compared sequence by sequence)."""

    nll_sums: list[float]  # one per sequence
    correct: list[int]
    counts: list[int]

    @property
    def loss(self) -> float:
        """Mean NLL per masked token."""
        return sum(self.nll_sums) / sum(self.counts)

    @property
    def perplexity(self) -> float:
        """``exp`` of the mean NLL per masked token."""
        return math.exp(self.loss)

    @property
    def accuracy(self) -> float:
        """Share of masked tokens whose argmax is the true residue."""
        return sum(self.correct) / sum(self.counts)


@torch.no_grad()
def masked_token_scores(
    model: nn.Module,
    tokenizer: Any,
    records: list[Record],
    batch_size: int = 32,
    seed: int = 0,
    mask_fraction: float = 0.15,
    device: str = "cpu",
    max_residues: int = 1022,
) -> TokenScores:
    """NLL and correct predictions per sequence at a fixed seeded ``mask_fraction`` of residues (all of them
    ``<mask>``); the same positions as ``evaluate_masked_lm``."""
    was_training = model.training
    model.eval()
    nll_sums: list[float] = []
    correct: list[int] = []
    counts: list[int] = []
    records = [Record(r.name, r.header, r.sequence[:max_residues]) for r in records]
    for start in range(0, len(records), batch_size):
        batch = encode(records[start : start + batch_size], tokenizer, mask_fraction=mask_fraction, seed=seed)
        batch = batch.to(device)
        assert batch.masked is not None
        # (b, s, V)
        logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits.float()
        # (b, s)
        nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), batch.labels, reduction="none")
        hits = logits.argmax(-1) == batch.labels  # (b, s)
        masked = batch.masked
        nll_sums += (nll * masked).sum(1).double().cpu().tolist()
        correct += (hits & masked).sum(1).cpu().tolist()
        counts += masked.sum(1).cpu().tolist()
    model.train(was_training)
    if not counts or sum(counts) == 0:
        raise ValueError("no masked position to evaluate")
    return TokenScores(nll_sums, correct, counts)


def training_memory_bytes(
    num_layers: int, width: int, intermediate: int, parameters: int, micro_batch_tokens: int,
    gradient_checkpointing: bool, dtype: str,
) -> dict[str, float]:
    """A conservative estimate of peak GPU memory for training one model, by part (bytes).

    Weights, gradients and AdamW's two moments are float32: 16 bytes per parameter. Activations follow
    Korthikanti et al. (2022, "Reducing activation recomputation") for a pre-LN layer with fused (flash /
    SDPA) attention and no dropout: per token about ``16 d + 4 f`` bytes in 16-bit (the layer norms, Q/K/V,
    attention output, and the FFN's input, pre- and post-activation), doubled in float32; with gradient
    checkpointing only each layer's float32 input is kept, plus one layer's activations being recomputed.
    Logits over the 33-letter vocabulary are small. A 1.5x margin covers the allocator and temporaries.
    """
    element = 2 if dtype in ("bfloat16", "float16") else 4
    per_token_layer = (16 * width + 4 * intermediate) * element / 2
    if gradient_checkpointing:
        activations = micro_batch_tokens * (num_layers * 4 * width + per_token_layer)
    else:
        activations = micro_batch_tokens * num_layers * per_token_layer
    logits = micro_batch_tokens * len(ESM_VOCAB) * 4 * 3
    states = 16.0 * parameters
    total = 1.5 * (states + activations + logits)
    return {"optimizer_states": states, "activations": activations, "logits": logits, "total": total}


def check_fits(estimate: dict[str, float], available: float, what: str) -> None:
    """``MemoryError`` with what to change when the ``estimate`` exceeds ``available`` bytes."""
    if estimate["total"] <= available:
        return
    gib = 1024**3
    raise MemoryError(
        f"{what} needs about {estimate['total'] / gib:.1f} GiB (weights + gradients + AdamW "
        f"{estimate['optimizer_states'] / gib:.1f} GiB, activations {estimate['activations'] / gib:.1f} GiB, "
        f"with a 1.5x margin) but {available / gib:.1f} GiB are free: lower batch_tokens and raise "
        f"accumulation "
        "(same tokens per step), set gradient_checkpointing=true, use dtype=bfloat16, or a larger GPU"
    )


def _lr_factor(step: int, warmup_steps: int, steps: int) -> float:
    """Linear warm-up, then cosine decay to zero at ``steps``."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    progress = (step - warmup_steps) / max(1, steps - warmup_steps)
    return 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))


class MaskedLMTrainer:
    """Trains one ``EsmForMaskedLM`` on a ``StreamedBatches`` source for ``config.steps`` optimiser steps,
    recording learning curves, and saves / restores its complete state (weights, AdamW moments, scheduler,
    random generators, data position, curves) as plain tensors and JSON, so an interrupted run resumes to
    the same result as an uninterrupted one.

    Masking follows ESM-2: 15 % of residues selected, 80 % of those become ``<mask>``, 10 % a random amino
    acid, 10 % stay; loss on the selected positions, normalised over all micro-batches of a step, so
    ``accumulation`` micro-batches give the gradient of one batch holding all of them.
    """

    STATE = "train_state.json"

    def __init__(
        self, model: Any, tokenizer: Any, source: Any, config: SweepTrainConfig,
        validate: Callable[[nn.Module], float] | None = None,
    ) -> None:
        self.model, self.tokenizer, self.source, self.config, self.validate = (
            model,
            tokenizer,
            source,
            config,
            validate,
        )
        model.to(config.device)
        self.optimizer = torch.optim.AdamW(
            model.parameters(), lr=config.learning_rate, betas=(0.9, 0.98), weight_decay=config.weight_decay
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda step: _lr_factor(step, config.warmup_steps, config.steps)
        )
        self.masking = torch.Generator().manual_seed(config.seed + 1)
        self.letters = torch.tensor(tokenizer.convert_tokens_to_ids(list(AMINO_ACIDS)))
        self.step = 0
        self.curves = Curves()

    # -- state
    # --------------------------------------------------------------------------------------------------

    def save(self, folder: Path) -> None:
        """Write the full state into ``folder``: ``state-<step>.safetensors`` (tensors) and then ``STATE``
        (JSON naming it), each atomically; older tensor files are removed after."""
        from safetensors.torch import save

        folder.mkdir(parents=True, exist_ok=True)
        tensors = {
            f"model.{k}": v.detach().to("cpu", copy=True).contiguous()
            for k, v in self.model.state_dict().items()
        }  # copies: tied weights may not share memory here
        optimizer = self.optimizer.state_dict()
        for index, state in optimizer["state"].items():
            for key, value in state.items():
                tensors[f"optimizer.{index}.{key}"] = torch.as_tensor(value).detach().to("cpu", copy=True)
        tensors["rng.torch"] = torch.get_rng_state()
        tensors["rng.masking"] = self.masking.get_state()
        if self.config.device.startswith("cuda"):
            tensors["rng.cuda"] = torch.cuda.get_rng_state(self.config.device)
        name = f"state-{self.step:09d}.safetensors"
        atomic_write_bytes(folder / name, save(tensors))
        meta = {
            "tensors": name,
            "step": self.step,
            "curves": self.curves.as_dict(),
            "source": self.source.state(),
            "scheduler": self.scheduler.state_dict(),
            "param_groups": optimizer["param_groups"],
        }
        atomic_write_bytes(folder / self.STATE, json.dumps(meta).encode("utf-8"))
        for old in folder.glob("state-*.safetensors"):
            if old.name != name:
                old.unlink(missing_ok=True)

    def load(self, folder: Path) -> bool:
        """Restore the state saved in ``folder``; False when there is none. Tensors are read by safetensors
        (never unpickled)."""
        from safetensors.torch import load_file

        meta_path = folder / self.STATE
        if not meta_path.is_file():
            return False
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        tensors = load_file(folder / meta["tensors"])
        model_state = {k.removeprefix("model."): v for k, v in tensors.items() if k.startswith("model.")}
        self.model.load_state_dict(model_state, strict=True)
        state: dict[int, dict[str, torch.Tensor]] = {}
        for key, value in tensors.items():
            if key.startswith("optimizer."):
                _, index, name = key.split(".", 2)
                state.setdefault(int(index), {})[name] = value
        self.optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
        self.scheduler.load_state_dict(meta["scheduler"])
        torch.set_rng_state(tensors["rng.torch"])
        self.masking.set_state(tensors["rng.masking"])
        if "rng.cuda" in tensors and self.config.device.startswith("cuda"):
            torch.cuda.set_rng_state(tensors["rng.cuda"], self.config.device)
        self.source.load_state(meta["source"])
        self.step = int(meta["step"])
        self.curves = Curves(**meta["curves"])
        return True

    # -- training
    # ------------------------------------------------------------------------------------------------

    def _micro_batch(self, records: list[Record]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
        """``(inputs, attention_mask, labels, residues)`` of one micro-batch with ESM-2 masking."""
        batch = encode(records, self.tokenizer)
        ids, real = batch.input_ids, batch.real  # (batch, seq)
        selected = (torch.rand(ids.shape, generator=self.masking) < self.config.mask_fraction) & real
        # 80 % mask, 10 % random letter, 10 % unchanged
        action = torch.rand(ids.shape, generator=self.masking)
        random_letters = self.letters[torch.randint(0, len(self.letters), ids.shape, generator=self.masking)]
        inputs = torch.where(selected & (action < 0.8), self.tokenizer.mask_token_id, ids)
        inputs = torch.where(selected & (action >= 0.8) & (action < 0.9), random_letters, inputs)
        labels = ids.masked_fill(~selected, -100)
        return inputs, batch.attention_mask, labels, int(real.sum())

    def train_step(self) -> float:
        """One optimiser step over ``accumulation`` micro-batches; the step's mean loss per selected token."""
        config, device = self.config, self.config.device
        micro = [self._micro_batch(self.source.next_batch()) for _ in range(config.accumulation)]
        selected = sum(int((labels != -100).sum()) for _, _, labels, _ in micro)
        autocast = device.startswith("cuda") and config.dtype != "float32"
        amp_dtype = torch.bfloat16 if config.dtype == "bfloat16" else torch.float16
        self.optimizer.zero_grad(set_to_none=True)
        total = torch.zeros((), device=device)
        for inputs, attention, labels, residues in micro:
            with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=autocast):
                logits = self.model(input_ids=inputs.to(device), attention_mask=attention.to(device)).logits
            # Summed here and divided by the step's selected count: micro-batches add up to the full batch.
            loss = torch.nn.functional.cross_entropy(
                logits.float().transpose(1, 2), labels.to(device), ignore_index=-100, reduction="sum"
            ) / max(1, selected)
            loss.backward()
            total += loss.detach()
            self.curves.tokens_seen += residues
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        self.scheduler.step()
        self.step += 1
        return float(total)

    def run(
        self,
        report: Callable[[float, str], None] = lambda fraction, message: None,
        checkpoint: Callable[[], None] | None = None,
    ) -> Curves:
        """Train from the current step to ``config.steps``, evaluating every ``eval_every`` steps and calling
        ``checkpoint`` every ``checkpoint_every`` steps; returns the curves. ``report`` may raise to stop."""
        config = self.config
        if config.gradient_checkpointing:
            self.model.activation_checkpointing_enable({"use_reentrant": False})
        every = max(1, config.steps // 50)
        self.model.train()
        with _fast(self.model, config.device):
            while self.step < config.steps:
                self.curves.train_loss.append(self.train_step())
                last = self.step == config.steps
                if self.validate is not None and (
                    last or (config.eval_every and self.step % config.eval_every == 0)
                ):
                    self.curves.val_steps.append(self.step)
                    self.curves.val_loss.append(self.validate(self.model))
                    self.model.train()
                if (
                    checkpoint is not None
                    and config.checkpoint_every
                    and self.step % config.checkpoint_every == 0
                ):
                    checkpoint()
                if self.step % every == 0 or last:
                    report(self.step / config.steps,
                           f"step {self.step}/{config.steps} loss {self.curves.train_loss[-1]:.3f}")
        if config.gradient_checkpointing:
            self.model.activation_checkpointing_disable()
        self.model.eval()
        return self.curves
