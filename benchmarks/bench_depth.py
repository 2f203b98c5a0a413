"""Speed of the depth probes, measured in one run on one model and one batch:

1. the full no-skip probe set (one instrumented pass: logit lens, contributions, angular distances,
   ranks, attention entropy) against one plain forward pass with ``output_hidden_states=True``
   (goal: at most 1.5x);
2. the layer-skip heatmap (every layer skipped in turn; relative change of every later update and
   the output effect) computed four ways: kb's prefix reuse (``skips.replay_variants``), the naive L
   full passes with hooks (``skips.naive_variant``), nnsight written the way practitioners write it
   (after Csordas et al.'s code: trace the model, set a layer's output to its input, save the later
   layers' outputs: every variant re-runs the whole model), and nnsight WITH prefix reuse (the layers
   before the skipped one are not run: ``.skip()`` hands them their clean outputs from one clean trace).
   The four heatmaps are checked to agree.

What each ratio measures, printed on its line: kb against naive passes and against nnsight as written
mixes the algorithm (prefix reuse: about half the layer evaluations) with the implementation; kb
against nnsight with ``.skip()`` is the same algorithm, so it measures the implementation only
(batched replays and hooks against nnsight's tracing); nnsight as written against nnsight with
``.skip()`` is the same tool, so it measures the algorithm only. Times are medians of interleaved
repeats (each repeat runs every method once, so drifting machine load hits all alike).

The model is an ESM-2-shaped masked LM built and saved here (random weights: timing does not depend on
training), loaded back through ``loading.load_model`` (eager attention, as the probes need).

Run: .venv/bin/python benchmarks/bench_depth.py [--layers 16] [--width 320] [--heads 20]
     [--sequences 4] [--length 200] [--repeats 7] [--threads 1] [--device cpu]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import torch

from analyzers.depth.batches import Batch, encode
from analyzers.depth.data import AMINO_ACIDS, Record
from analyzers.depth.instrument import CleanPass
from analyzers.depth.loading import LoadedModel, load_model
from analyzers.depth.probes import ProbeAccumulator, ProbeOptions, clean_pass
from analyzers.depth.skips import SkipTally, Variant, naive_variant, replay_variants
from analyzers.depth.training import esm_config, save_esm_tokenizer


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed(fn: Callable[[], object], device: str) -> float:
    _sync(device)
    start = time.perf_counter()
    fn()
    _sync(device)
    return time.perf_counter() - start


def main() -> None:
    args = _arguments()
    torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore", message=".*submodule named 'output'.*")
    bench = _SkipBench.built(args)
    methods: dict[str, Callable[[], object]] = {
        "plain": bench.plain, "probes": bench.probes, "prefix": bench.prefix, "naive": bench.naive,
        "nnsight": bench.with_nnsight, "nnsight_reuse": bench.with_nnsight_reuse,
    }
    median, spread = _interleaved_medians(methods, args.repeats, args.device)
    _report(args, bench, median, spread, _agreement(bench))


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=16)
    parser.add_argument("--width", type=int, default=320)
    parser.add_argument("--heads", type=int, default=20)
    parser.add_argument("--sequences", type=int, default=4)
    parser.add_argument("--length", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: stable on a shared machine)")
    parser.add_argument("--device", default="cpu")
    return parser.parse_args()


class _SkipBench:
    """The model, the batch and the skip variants every method is timed on, and the methods themselves."""

    def __init__(self, loaded: LoadedModel, batch: Batch) -> None:
        from nnsight import NNsight

        self.model, self.adapter, self.batch = loaded.model, loaded.adapter, batch
        self.layers = self.adapter.num_layers
        self.options = ProbeOptions()
        self.variants = [Variant("layer", s) for s in range(self.layers)]
        self.traced = NNsight(self.model)

    @classmethod
    def built(cls, args: argparse.Namespace) -> _SkipBench:
        """An ESM-2-shaped masked LM with random weights, saved and loaded back as the probes load models,
        and a batch of random sequences, 15 % masked."""
        from transformers import EsmForMaskedLM

        with tempfile.TemporaryDirectory() as folder:
            torch.manual_seed(0)
            EsmForMaskedLM(esm_config(args.layers, args.width, args.heads)).save_pretrained(folder)
            save_esm_tokenizer(Path(folder))
            loaded = load_model(folder, device=args.device)
        generator = torch.Generator().manual_seed(0)
        letters = [torch.randint(0, 20, (args.length,), generator=generator) for _ in range(args.sequences)]
        records = [Record(f"s{i}", f"s{i}", "".join(AMINO_ACIDS[j] for j in ids)) for i, ids in enumerate(letters)]
        return cls(loaded, encode(records, loaded.tokenizer, mask_fraction=0.15, seed=0).to(args.device))

    @torch.no_grad()
    def plain(self) -> object:
        batch = self.batch
        return self.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, output_hidden_states=True)

    @torch.no_grad()
    def probes(self) -> object:
        accumulator = ProbeAccumulator(self.layers, self.adapter.objective, self.adapter.pre_ln)
        return clean_pass(self.model, self.adapter, self.batch, accumulator, ProbeOptions(skips=False))

    def reference(self) -> tuple[object, SkipTally]:
        passer = CleanPass(self.adapter)
        with torch.no_grad(), passer.active() as record:
            record.logits = self.model(input_ids=self.batch.input_ids, attention_mask=self.batch.attention_mask).logits
        return record, SkipTally(self.layers, self.batch, record, self.adapter, self.options)

    def prefix(self) -> SkipTally:
        record, tally = self.reference()
        replay_variants(self.model, self.adapter, record, self.batch, self.variants, tally)  # type: ignore[arg-type]
        return tally

    def naive(self) -> SkipTally:
        _, tally = self.reference()
        for variant in self.variants:
            naive_variant(self.model, self.adapter, self.batch, variant, tally)
        return tally

    @torch.no_grad()
    def with_nnsight(self) -> tuple[torch.Tensor, torch.Tensor]:
        batch, traced, layers = self.batch, self.traced, self.layers
        real = batch.real
        with traced.trace(input_ids=batch.input_ids, attention_mask=batch.attention_mask):
            clean_updates = list().save()
            for layer in traced.esm.encoder.layer:
                layer_input = layer.input
                clean_updates.append((layer.output - layer_input).detach().float())
            clean_probs = traced.output.logits.float().softmax(-1).save()
        heatmap = torch.full((layers, layers), float("nan"))
        output_effect = torch.zeros(layers)
        for skipped in range(layers):
            with traced.trace(input_ids=batch.input_ids, attention_mask=batch.attention_mask):
                updates = list().save()
                for index, layer in enumerate(traced.esm.encoder.layer):
                    layer_input = layer.input
                    if index == skipped:
                        layer.output = layer_input
                    if index >= skipped:
                        updates.append((layer.output - layer_input).detach().float())
                probs = traced.output.logits.float().softmax(-1).save()
            for offset, update in enumerate(updates):
                clean = clean_updates[skipped + offset]
                ratio = (clean - update).norm(dim=-1) / clean.norm(dim=-1).clamp_min(1e-12)
                heatmap[skipped, skipped + offset] = ratio.masked_fill(~real, float("-inf")).amax(-1).mean()
            output_effect[skipped] = (probs - clean_probs).norm(dim=-1)[real].mean()
        return heatmap, output_effect

    @torch.no_grad()
    def with_nnsight_reuse(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The same prefix reuse written in nnsight: one clean trace saves every layer's input and output;
        variant s hands layers < s their clean outputs with ``.skip()`` (they are not run), skips layer s
        with its clean input, and runs the suffix."""
        batch, traced, layers = self.batch, self.traced, self.layers
        real = batch.real
        with traced.trace(input_ids=batch.input_ids, attention_mask=batch.attention_mask):
            inputs, outputs = list().save(), list().save()
            for layer in traced.esm.encoder.layer:
                inputs.append(layer.input)
                outputs.append(layer.output)
            clean_probs = traced.output.logits.float().softmax(-1).save()
        clean_updates = [(out - inp).float() for inp, out in zip(inputs, outputs, strict=True)]
        heatmap = torch.full((layers, layers), float("nan"))
        output_effect = torch.zeros(layers)
        for skipped in range(layers):
            with traced.trace(input_ids=batch.input_ids, attention_mask=batch.attention_mask):
                updates = list().save()
                for index, layer in enumerate(traced.esm.encoder.layer):
                    if index < skipped:
                        layer.skip(outputs[index])
                    elif index == skipped:
                        layer.skip(inputs[index])
                    else:
                        layer_input = layer.input
                        updates.append((layer.output - layer_input).detach().float())
                probs = traced.output.logits.float().softmax(-1).save()
            heatmap[skipped, skipped] = 1.0  # D'_s = 0: ||D_s - 0|| / ||D_s||
            for offset, update in enumerate(updates, start=1):
                clean = clean_updates[skipped + offset]
                ratio = (clean - update).norm(dim=-1) / clean.norm(dim=-1).clamp_min(1e-12)
                heatmap[skipped, skipped + offset] = ratio.masked_fill(~real, float("-inf")).amax(-1).mean()
            output_effect[skipped] = (probs - clean_probs).norm(dim=-1)[real].mean()
        return heatmap, output_effect


def _interleaved_medians(
    methods: dict[str, Callable[[], object]], repeats: int, device: str
) -> tuple[dict[str, float], dict[str, float]]:
    """Each method's median time and its repeats' max-min spread over that median, after one warm-up run
    each (lazy imports, allocator)."""
    for fn in methods.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(repeats):  # interleaved, so drifting machine load hits every method alike
        for name, fn in methods.items():
            times[name].append(_timed(fn, device))
    median = {name: statistics.median(values) for name, values in times.items()}
    spread = {name: (max(values) - min(values)) / statistics.median(values) for name, values in times.items()}
    return median, spread


def _agreement(bench: _SkipBench) -> dict[str, float]:
    """Max |difference| of kb's prefix-reuse heatmap against the naive passes and both nnsight versions, and
    of its output effect against both nnsight versions."""
    fast, slow = bench.prefix(), bench.naive()
    nn_heatmap, nn_effect = bench.with_nnsight()
    reuse_heatmap, reuse_effect = bench.with_nnsight_reuse()
    # The tallies keep sums per sequence (their last axis); nnsight's maps average over the batch: the worst
    # position's ratio over sequences, and the output effect over every real position.
    fast_heatmap = (fast.heat_sum[0].sum(-1) / fast.heat_count[0].sum(-1)).cpu()
    slow_heatmap = (slow.heat_sum[0].sum(-1) / slow.heat_count[0].sum(-1)).cpu()
    fast_effect = (fast.out_sum[0].sum(-1) / fast.out_count[0].sum(-1)).cpu()
    return {
        "naive": float((fast_heatmap - slow_heatmap).nan_to_num().abs().max()),
        "nnsight": float((fast_heatmap.float() - nn_heatmap).nan_to_num().abs().max()),
        "reuse": float((fast_heatmap.float() - reuse_heatmap).nan_to_num().abs().max()),
        "effect": max(float((fast_effect.float() - nn_effect).abs().max()),
                      float((fast_effect.float() - reuse_effect).abs().max())),
    }


def _report(args: argparse.Namespace, bench: _SkipBench, median: dict[str, float], spread: dict[str, float],
            agree: dict[str, float]) -> None:  # fmt: skip
    layers, device = bench.layers, args.device
    params = sum(p.numel() for p in bench.model.parameters())
    print(f"model: ESM-2-shaped, {layers} layers, width {args.width}, {args.heads} heads, "
          f"{params / 1e6:.1f}M parameters, eager attention, {device}, {args.threads} thread(s)")
    print(f"data: {args.sequences} sequences x {args.length} residues; medians of {args.repeats} interleaved repeats "
          f"(max-min spread of a method's repeats: {max(spread.values()):.0%} of its median at most)")
    ms = {name: value * 1e3 for name, value in median.items()}
    print(f"plain forward (output_hidden_states):        {ms['plain']:9.1f} ms")
    print(f"full no-skip probe set (one pass):           {ms['probes']:9.1f} ms  "
          f"{ms['probes'] / ms['plain']:.2f}x a plain forward  [implementation: hooks + reductions; goal <= 1.5x]")
    print(f"skip heatmap, kb prefix reuse:               {ms['prefix']:9.1f} ms")
    print(f"skip heatmap, naive {layers} full passes:          {ms['naive']:9.1f} ms  "
          f"kb {ms['naive'] / ms['prefix']:.2f}x faster  [algorithm + implementation]")
    print(f"skip heatmap, nnsight as written (no reuse): {ms['nnsight']:9.1f} ms  "
          f"kb {ms['nnsight'] / ms['prefix']:.2f}x faster  [algorithm + implementation]")
    print(f"skip heatmap, nnsight with .skip() reuse:    {ms['nnsight_reuse']:9.1f} ms  "
          f"kb {ms['nnsight_reuse'] / ms['prefix']:.2f}x faster  [implementation only: same algorithm]")
    print(f"nnsight as written vs nnsight with .skip():  {ms['nnsight'] / ms['nnsight_reuse']:.2f}x  "
          "[algorithm only: same tool]")
    print(f"agreement: max |heatmap difference| kb vs naive {agree['naive']:.2e}, vs nnsight {agree['nnsight']:.2e}, "
          f"vs nnsight .skip() {agree['reuse']:.2e}; output effect vs both nnsight {agree['effect']:.2e}")


if __name__ == "__main__":
    main()
