"""The depth probes at true model size on one GPU, without weights: random-init models of the real
configurations (ESM-2 650M and 3B, ProtGPT2, ESM-C 600M; the configs are written here, nothing comes
from the hub) in bfloat16, each measured on one batch of random residue sequences:

- one plain bf16 forward (SDPA attention: what inference costs) and one with eager attention;
- the no-skip probe set (one instrumented eager pass: logit lens, contributions, angular distances,
  ranks, attention entropy), as a multiple of the plain forward, with the host syncs of one pass (counted
  by op with ``analyzers.depth.syncs``, and on CUDA as the driver sees them) and, alone, its per-sequence
  singular values (``sequence_spectra``: one float64 ``eigvalsh`` per state and sequence, looped over the
  batch inside cuSOLVER for matrices over 32 x 32);
- the skip heatmap (whole-layer, attention-only and MLP-only skips of every layer, plus the causal
  future effect; prefix reuse, replays in SDPA attention since no attention map is read there);
- one training step of the masked LMs through ``analyzers.depth.training.train_masked_lm`` (bf16
  autocast, float32 weights and AdamW state: what the depth sweep runs), skipped for the causal one;

printing time, its ratio to the plain forward, tokens/s and the peak GPU memory of each stage.
Random weights change no timing or memory; they make every probe value meaningless, so none is printed.

Run on a GPU machine (about 3 minutes on one H100, well under the 10 allowed):
    python benchmarks/gpu_depth.py [--models esm2_650m,esm2_3b,protgpt2,esmc_600m] [--batch 8] [--length 510]
Without CUDA it says so in one line and exits 0. ``--device cpu --tiny`` runs the same code path on
tiny configurations of the same families (the test suite does, so the script cannot rot).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from analyzers.depth.adapters import adapter_for
from analyzers.depth.batches import encode
from analyzers.depth.data import AMINO_ACIDS, Record
from analyzers.depth.loading import LoadedModel, ResolvedModel, input_format_for
from analyzers.depth.probes import ProbeAccumulator, ProbeOptions, clean_pass, sequence_spectra
from analyzers.depth.skips import skip_probes
from analyzers.depth.syncs import HostSyncCounter
from analyzers.depth.training import TrainConfig, esm_config, save_esm_tokenizer, train_masked_lm
from analyzers.ticks import plain as plain_number


@dataclass(frozen=True)
class Shape:
    """One model configuration: family, layers, width, heads, FFN width."""

    family: str  # "esm2", "protgpt2" or "esmc"
    num_layers: int
    width: int
    num_heads: int
    intermediate: int
    note: str


# The published configurations (config.json of each hub checkpoint), written out so no hub is needed.
REAL = {
    "esm2_650m": Shape("esm2", 33, 1280, 20, 5120, "facebook/esm2_t33_650M_UR50D"),
    "esm2_3b": Shape("esm2", 36, 2560, 40, 10240, "facebook/esm2_t36_3B_UR50D"),
    "protgpt2": Shape("protgpt2", 36, 1280, 20, 5120, "nferruz/ProtGPT2 (GPT-2 large shape, 50,257 BPE tokens)"),
    "esmc_600m": Shape("esmc", 36, 1152, 18, 3072, "ESM-C 600M (SwiGLU 3072, residual scale sqrt(36/36))"),
}
# The same families at a size a CPU test runs in seconds.
TINY = {
    "esm2_650m": Shape("esm2", 3, 32, 4, 64, "tiny ESM-2"),
    "esm2_3b": Shape("esm2", 4, 32, 4, 64, "tiny ESM-2"),
    "protgpt2": Shape("protgpt2", 3, 32, 4, 128, "tiny GPT-2 (50,257-token vocabulary kept)"),
    "esmc_600m": Shape("esmc", 3, 32, 4, 96, "tiny ESM-C"),
}


def build(shape: Shape, device: str, dtype: torch.dtype, folder: Path) -> LoadedModel:
    """A randomly initialised model of ``shape`` on ``device`` in ``dtype`` with eager attention, its
    tokenizer and adapter, as ``load_model`` would hand them to the probes."""
    from transformers import (
        EsmcConfig,
        EsmcForMaskedLM,
        EsmcTokenizer,
        EsmForMaskedLM,
        EsmTokenizer,
        GPT2Config,
        GPT2LMHeadModel,
    )

    model: nn.Module
    tokenizer: Any
    with torch.device(device):
        if shape.family == "esm2":
            config = esm_config(shape.num_layers, shape.width, shape.num_heads, shape.intermediate)
            save_esm_tokenizer(folder)
            tokenizer = EsmTokenizer.from_pretrained(folder)
            model = EsmForMaskedLM._from_config(config, dtype=dtype)
        elif shape.family == "esmc":
            config = EsmcConfig(
                vocab_size=64, hidden_size=shape.width, intermediate_size=shape.intermediate,
                num_hidden_layers=shape.num_layers, num_attention_heads=shape.num_heads, max_position_embeddings=2048,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
            )
            tokenizer = EsmcTokenizer()
            model = EsmcForMaskedLM._from_config(config, dtype=dtype)
        else:
            from analyzers.depth.tiny import residue_gpt2_tokenizer

            config = GPT2Config(vocab_size=50257, n_positions=1024, n_embd=shape.width, n_layer=shape.num_layers,
                                n_head=shape.num_heads, n_inner=shape.intermediate, bos_token_id=0, eos_token_id=0)
            tokenizer = residue_gpt2_tokenizer()
            model = GPT2LMHeadModel._from_config(config, dtype=dtype)
    model.set_attn_implementation("eager")  # type: ignore[operator]
    model.eval()
    architecture = type(model).__name__
    resolved = ResolvedModel(f"random:{shape.note}", folder, "random")
    return LoadedModel(model, tokenizer, adapter_for(model), resolved, input_format_for(tokenizer, architecture))


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def measure(fn: Callable[[], object], device: str, repeats: int) -> tuple[float, float]:
    """Median seconds of ``repeats`` runs after one warm-up, and the peak memory (GiB) of the runs."""
    fn()
    times = []
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    for _ in range(repeats):
        sync(device)
        start = time.perf_counter()
        fn()
        sync(device)  # the only syncs: the probes themselves wait for the device only when they finish
        times.append(time.perf_counter() - start)
    peak = torch.cuda.max_memory_allocated() / 2**30 if device.startswith("cuda") else float("nan")
    return statistics.median(times), peak


def count_syncs(fn: Callable[[], object], device: str) -> str:
    """The host syncs of one call of ``fn``: counted by op (any device) and, on CUDA, those the driver reports
    through ``torch.cuda.set_sync_debug_mode`` (one warning each)."""
    with HostSyncCounter() as counted, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if device.startswith("cuda"):
            torch.cuda.set_sync_debug_mode("warn")
        try:
            fn()
            sync(device)
        finally:
            if device.startswith("cuda"):
                torch.cuda.set_sync_debug_mode("default")
    by_op = ", ".join(f"{name} {count}" for name, count in counted.counts.most_common())
    seen = sum("synchroniz" in str(w.message) for w in caught)
    cuda = f"; {seen} seen by CUDA" if device.startswith("cuda") else ""
    return f"{counted.total} counted ({by_op or 'none'}){cuda}"


def run_model(name: str, shape: Shape, args: argparse.Namespace, dtype: torch.dtype) -> None:
    device = args.device
    generator = torch.Generator().manual_seed(0)
    records = [
        Record(f"s{i}", f"s{i}", "".join(AMINO_ACIDS[j] for j in torch.randint(0, 20, (args.length,),
                                                                              generator=generator).tolist()))
        for i in range(args.batch)
    ]
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        loaded = build(shape, device, dtype, Path(folder))
        build_s = time.perf_counter() - started
        model, adapter = loaded.model, loaded.adapter
        masking = 0.15 if adapter.objective != "causal" else 0.0
        batch = encode(records, loaded.tokenizer, loaded.input_format, masking, seed=0).to(device)
        tokens = int(batch.attention_mask.sum())
        params = sum(p.numel() for p in model.parameters())
        print(f"\n{name}: {shape.note}; {shape.num_layers} layers x {shape.width}, {params / 1e6:.0f}M parameters, "
              f"{dtype}, {device}; batch {batch.size} x {batch.input_ids.shape[1]} tokens ({tokens} real); "
              f"built in {build_s:.1f} s", flush=True)

        @torch.no_grad()
        def plain() -> object:
            return model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits


        options = ProbeOptions()
        state: dict[str, Any] = {}

        def probes() -> object:
            accumulator = ProbeAccumulator(adapter.num_layers, adapter.objective, adapter.pre_ln)
            state["record"] = clean_pass(model, adapter, batch, accumulator, options)
            state["accumulator"] = accumulator
            return state["record"]

        def skips() -> object:
            skip_probes(model, adapter, state["record"], batch, state["accumulator"], options)
            return None

        rows: list[tuple[str, float, float]] = []
        model.set_attn_implementation("sdpa")  # type: ignore[operator]
        plain_s, plain_peak = measure(plain, device, args.repeats)
        model.set_attn_implementation("eager")  # type: ignore[operator]
        rows.append(("plain forward, SDPA attention", plain_s, plain_peak))
        rows.append(("plain forward, eager attention", *measure(plain, device, args.repeats)))
        rows.append(("probe set (one instrumented eager pass)", *measure(probes, device, args.repeats)))
        plain_syncs, probe_syncs = count_syncs(plain, device), count_syncs(probes, device)
        rows.append(("  its per-sequence spectra alone (float64)",
                     *measure(lambda: sequence_spectra(state["record"].states, batch.real), device, args.repeats)))
        variants = adapter.num_layers * (3 + (adapter.objective == "causal"))
        rows.append((f"skip heatmap ({variants} variants, prefix reuse)", *measure(skips, device, args.repeats)))
        state.clear()
        if adapter.objective != "causal":
            config = TrainConfig(steps=1, batch_size=args.train_batch, learning_rate=1e-4, warmup_steps=0,
                                 max_residues=args.length, device=device,
                                 dtype="bfloat16" if dtype == torch.bfloat16 else "float32")
            model.float()  # the sweep trains float32 weights under bf16 autocast

            def train() -> object:
                return train_masked_lm(model, loaded.tokenizer, records, config)

            train_s, train_peak = measure(train, device, 1)
            train_tokens = args.train_batch * (args.length + 2)
            rows.append((f"one training step (batch {args.train_batch}, AdamW)", train_s, train_peak))
        else:
            train_tokens = 0
        for label, seconds, peak in rows:
            per_s = (train_tokens if label.startswith("one training") else tokens) / seconds
            memory = f"{peak:6.1f} GiB" if peak == peak else "   n/a"
            # (in four significant digits: a stage of 0.04 ms, or 0.004 of a forward slowed by a busy machine,
            # is no '0.0 ms' or '0.00x')
            print(f"  {label:<46} {plain_number(seconds * 1e3):>9} ms  {plain_number(seconds / plain_s):>6}x plain  "
                  f"{per_s:12,.0f} tokens/s  peak {memory}", flush=True)
        print(f"  host syncs: plain forward {plain_syncs}; probe pass {probe_syncs}", flush=True)
        state.clear()
        gc.collect()
        if device.startswith("cuda"):
            torch.cuda.empty_cache()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(REAL), help=f"comma-separated, from {', '.join(REAL)}")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tiny", action="store_true", help="tiny configurations of the same families")
    parser.add_argument("--batch", type=int, default=8, help="sequences per probed batch")
    parser.add_argument("--length", type=int, default=510, help="residues per sequence (510 + 2 = 512 tokens)")
    parser.add_argument("--train-batch", type=int, default=4, help="sequences in the training step")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per stage (median)")
    args = parser.parse_args(argv)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("no CUDA GPU on this machine: nothing measured (--device cpu --tiny runs the code path on tiny models)")
        return 0
    if args.device == "cpu" and not args.tiny:
        print("refusing full-size models on the CPU (minutes per forward): use --tiny, or a GPU")
        return 2
    shapes = TINY if args.tiny else REAL
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in shapes]
    if unknown:
        print(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(shapes)}")
        return 2
    dtype = torch.bfloat16 if args.device.startswith("cuda") else torch.float32
    if args.device.startswith("cuda"):
        print(f"GPU: {torch.cuda.get_device_name(args.device)}; torch {torch.__version__}")
    started = time.perf_counter()
    for name in names:
        run_model(name, shapes[name], args, dtype)
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
