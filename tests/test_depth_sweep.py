"""depth.probe and depth.sweep through the registry, training, the width solver, the built-in trained tiny
ESMs, and the sequence data (FASTA, designed corpus, masking, length batches)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from analyzers import registry
from analyzers.base import NotRunnable, RunContext
from analyzers.depth import tiny
from analyzers.depth.batches import check_lengths, encode
from analyzers.depth.compute import inefficiency_trend
from analyzers.depth.data import DESIGNED_FASTA, Record, length_batches, read_fasta, split_records
from analyzers.depth.loading import load_model, weights_hash
from analyzers.depth.training import (
    TrainConfig,
    count_parameters,
    esm_config,
    evaluate_masked_lm,
    save_esm_tokenizer,
    solve_shape,
    train_masked_lm,
)


@pytest.fixture(autouse=True)
def kb_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path / "home"


@pytest.fixture
def quick_builtin(monkeypatch: pytest.MonkeyPatch) -> str:
    """The smoke built-in with a 3-step recipe, so tests exercise training and caching in a second."""
    name = tiny.BUILTINS and "builtin:esm-designed-4x64"
    monkeypatch.setitem(tiny.BUILTINS, name, tiny.TinyRecipe(num_layers=2, width=16, num_heads=2, steps=3))
    return name


def test_solve_shape_equalises_parameter_counts_across_depths() -> None:
    budget, heads = 120_000, 4
    counts = []
    for depth in (2, 4, 8, 12):
        width, intermediate = solve_shape(depth, budget, heads)
        assert width % (2 * heads) == 0 and intermediate >= width
        from transformers import EsmForMaskedLM

        model = EsmForMaskedLM(esm_config(depth, width, heads, intermediate))  # a real model, counted directly
        counts.append(sum(p.numel() for p in model.parameters()))
        assert counts[-1] == count_parameters(depth, width, heads, intermediate)
    assert max(counts) / min(counts) - 1 < 0.01
    assert all(abs(c / budget - 1) < 0.01 for c in counts)
    assert solve_shape(2, budget, heads)[0] > solve_shape(12, budget, heads)[0]


def test_inefficiency_trend_is_minus_the_log_slope() -> None:
    depths = [2, 4, 8, 16]
    assert inefficiency_trend(depths, [0.8 * 0.5**i for i in range(4)]) == pytest.approx(math.log(2))
    assert inefficiency_trend(depths, [0.3, 0.3, 0.3, 0.3]) == pytest.approx(0.0)
    assert inefficiency_trend(depths, [0.1, 0.2, None, 0.8]) == pytest.approx(-math.log(2))
    assert inefficiency_trend(depths, [None, None, 0.2, None]) is None


def test_train_masked_lm_learns_the_designed_corpus(tmp_path: Path) -> None:
    from transformers import EsmForMaskedLM, EsmTokenizer

    save_esm_tokenizer(tmp_path)
    tokenizer = EsmTokenizer.from_pretrained(tmp_path)
    train, val = split_records(read_fasta(DESIGNED_FASTA))
    torch.manual_seed(0)
    model = EsmForMaskedLM(esm_config(2, 32, 2))
    before, _ = evaluate_masked_lm(model, tokenizer, val[:64])
    seen: list[float] = []
    losses = train_masked_lm(model, tokenizer, train, TrainConfig(steps=40, batch_size=16, warmup_steps=5),
                             lambda fraction, message: seen.append(fraction))
    after, accuracy = evaluate_masked_lm(model, tokenizer, val[:64])
    assert after < 0.6 * before and after < 18  # the uniform guess over 20 residues is 20
    assert sum(losses[-5:]) < sum(losses[:5]) and seen[-1] == 1.0 and accuracy > 0.1


def test_trained_tiny_esm_is_cached_and_deterministic(quick_builtin: str, tmp_path: Path) -> None:
    first = tiny.trained_tiny_esm(quick_builtin, seed=1, cache=tmp_path / "a")
    stamp = (first / "training.json").stat().st_mtime_ns
    assert tiny.trained_tiny_esm(quick_builtin, seed=1, cache=tmp_path / "a") == first
    assert (first / "training.json").stat().st_mtime_ns == stamp  # not retrained
    second = tiny.trained_tiny_esm(quick_builtin, seed=1, cache=tmp_path / "b")
    assert weights_hash(first) == weights_hash(second)
    training = json.loads((first / "training.json").read_text(encoding="utf-8"))
    assert training["val_perplexity"] > 1 and training["corpus"] == "designed.fasta"
    assert [p.name for p in (tmp_path / "a").iterdir()] == [first.name]  # no staging folder left


def test_depth_probe_registered_runs_on_a_built_in_trained_model(quick_builtin: str, tmp_path: Path) -> None:
    analyzer = registry.get("depth.probe")
    params = analyzer.params_for(scale="smoke")
    seen: list[float] = []
    result = analyzer.run(params, RunContext(out_dir=tmp_path / "out", progress=lambda f, m: seen.append(f)))
    metrics = json.loads((tmp_path / "out" / "depth_metrics.json").read_text(encoding="utf-8"))
    assert metrics["late_half_kl_drop_fraction"] == result.late_half_kl_drop_fraction
    assert len(metrics["layers"]["logit_lens_kl"]) == 3 and len(metrics["layers"]["deletion_perplexity"]) == 2
    assert all(v is not None for v in metrics["layers"]["logit_lens_kl_masked"])
    assert result.scale.name == "smoke" and result.scale.parameters and seen[-1] == 1.0
    assert all((tmp_path / "out" / name).is_file() for name in result.artifacts)
    assert {"skip_heatmap.svg", "deletion.png", "attention_entropy.png"} <= set(result.artifacts)
    provenance = result.provenance
    assert provenance["weights_hash"] and provenance["data_hash"] and provenance["model_id"] == quick_builtin
    assert provenance["training"]["recipe"]["steps"] == 3
    assert any("trained here" in note for note in result.notes)
    assert any("not natural proteins" in note for note in result.notes)


def test_depth_probe_cuda_absent_is_not_runnable(tmp_path: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    analyzer = registry.get("depth.probe")
    with pytest.raises(NotRunnable, match="CUDA asked for"):
        analyzer.run(analyzer.params_for(scale="paper"), RunContext(out_dir=tmp_path))


def test_depth_sweep_registered_tiny_scale_yields_its_metrics(tmp_path: Path) -> None:
    analyzer = registry.get("depth.sweep")
    params = analyzer.params_for({
        "depths": [3, 2], "parameter_budget": 8_000, "num_heads": 2, "steps": 4, "batch_size": 8,
        "probe_sequences": 3, "max_val_sequences": 12,
    })
    out = tmp_path / "sweep"
    result = analyzer.run(params, RunContext(out_dir=out))
    assert result.depths == [2, 3] and result.best_depth in (2, 3)
    best = result.depths[result.val_perplexity_by_depth.index(min(result.val_perplexity_by_depth))]
    assert result.best_depth == best and result.best_depth_is_interior is False  # two depths: no interior
    assert max(result.parameters_by_depth) / min(result.parameters_by_depth) - 1 < 0.02
    for name in analyzer.metrics:
        assert getattr(result, name) is not None, name
    assert len(result.val_perplexity_by_depth) == 2 and all(p > 1 for p in result.val_perplexity_by_depth)
    assert isinstance(result.depth_inefficiency_trend, float) and result.scale.name == "custom"
    assert {"sweep_perplexity.png", "sweep_probes.svg", "sweep_comparison.png"} <= set(result.artifacts)
    checkpoint = out / "checkpoints" / "depth-03"
    assert (checkpoint / "model.safetensors").is_file()
    assert load_model(str(checkpoint)).adapter.num_layers == 3
    saved = json.loads((out / "sweep_metrics.json").read_text(encoding="utf-8"))
    assert saved["depth_inefficiency_trend"] == pytest.approx(result.depth_inefficiency_trend)
    assert analyzer.scale_name(analyzer.params_for(scale="smoke")) == "smoke"
    # Four steps train nothing: the sweep says so, and a claim on its best depth cannot be settled by it.
    assert result.converged_by_depth == [False, False] and "too few" in result.convergence_by_depth[0]
    assert "not trained to convergence" in result.untestable["best_depth"]


def test_depth_sweep_paper_scale_says_why_it_cannot_run(tmp_path: Path, kb_home: Path) -> None:
    analyzer = registry.get("depth.sweep")
    with pytest.raises(NotRunnable, match="UniRef50 FASTA you provide"):
        analyzer.run(analyzer.params_for(scale="paper"), RunContext(out_dir=tmp_path))
    if torch.cuda.is_available():
        return
    (kb_home / "data").mkdir(parents=True)
    (kb_home / "data" / "uniref50.fasta").write_text(">a\nMKTAYIAKQR\n", encoding="utf-8")
    with pytest.raises(NotRunnable, match="CUDA asked for"):
        analyzer.run(analyzer.params_for(scale="paper"), RunContext(out_dir=tmp_path))


def test_fasta_errors_comments_and_filters(tmp_path: Path) -> None:
    empty = tmp_path / "empty.fasta"
    empty.write_text("; only a comment\n\n", encoding="utf-8")
    with pytest.raises(ValueError, match="empty FASTA"):
        read_fasta(empty)
    bad = tmp_path / "bad.fasta"
    bad.write_text(">good\nACDE\n>broken\nAC1E\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 4 \(record 'broken'\) has invalid letter\(s\) '1'"):
        read_fasta(bad)
    with pytest.raises(FileNotFoundError, match="not found"):
        read_fasta(tmp_path / "missing.fasta")
    ok = tmp_path / "ok.fasta"
    ok.write_text("; a comment\n>a x=1\nACDE\n>b\nacde\n>c\nAC\nDEFGHIK\n>d\nA\n", encoding="utf-8")
    assert [r.name for r in read_fasta(ok, min_length=2, max_length=8)] == ["a"]
    assert [r.sequence for r in read_fasta(ok, min_length=2)] == ["ACDE", "ACDEFGHIK"]


def test_designed_corpus_is_documented_split_and_small() -> None:
    text = DESIGNED_FASTA.read_text(encoding="utf-8")
    assert text.startswith("; DESIGNED sequences, NOT natural proteins and NOT UniProt data")
    assert DESIGNED_FASTA.stat().st_size < 1_000_000
    records = read_fasta(DESIGNED_FASTA)
    train, val = split_records(records)
    assert len(records) > 1000 and len(val) >= 100 and len(train) + len(val) == len(records)
    families = {r.header.split("family=")[1].split()[0] for r in records}
    assert len(families) >= 3
    assert {r.header.split("chain=")[1].split()[0] for r in val}.isdisjoint(
        {r.header.split("chain=")[1].split()[0] for r in train if r.split == "train"} - {"09"}
    )


def test_split_without_tags_is_deterministic_by_sequence() -> None:
    records = [Record(f"r{i}", f"r{i}", "ACDEFGHIKL"[i % 10:] + "M" * i) for i in range(200)]
    train, val = split_records(records, 0.2)
    assert 20 < len(val) < 60 and len(train) + len(val) == 200
    assert split_records(list(reversed(records)), 0.2)[1] == list(reversed(val))


def test_length_batches_sort_by_length_longest_first() -> None:
    records = [Record(str(n), str(n), "A" * n) for n in (5, 30, 12, 31, 7)]
    batches = length_batches(records, 2)
    assert [[len(r.sequence) for r in b] for b in batches] == [[31, 30], [12, 7], [5]]


def test_masks_are_seeded_per_sequence_not_per_batch(tmp_path: Path) -> None:
    from transformers import EsmTokenizer

    save_esm_tokenizer(tmp_path)
    tokenizer = EsmTokenizer.from_pretrained(tmp_path)
    long = Record("l", "l", "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQFEVVHSLAKWKRQTLGQHDFSA")
    short = Record("s", "s", "ACDEFGHIKLMNPQRSTVWY")
    together = encode([long, short], tokenizer, mask_fraction=0.15, seed=7)
    alone = encode([short], tokenizer, mask_fraction=0.15, seed=7)
    assert together.masked is not None and alone.masked is not None
    width = alone.masked.shape[1]
    assert torch.equal(together.masked[1, :width], alone.masked[0])
    assert together.masked[0].sum() >= 1 and together.masked[1].sum() >= 1
    assert 0.05 < float(together.masked[0].sum()) / len(long.sequence) < 0.3
    assert int(together.input_ids[together.masked].unique()) == tokenizer.mask_token_id
    assert torch.equal(together.labels[~together.masked], together.input_ids[~together.masked])
    with pytest.raises(ValueError, match="record 'l' .* is longer than tiny"):
        check_lengths([short, long], tokenizer, "plain", 50, "tiny")


def test_convergence_rule_needs_a_flat_loss_and_accuracy_above_the_unigram_floor() -> None:
    from analyzers.depth.compute import convergence, unigram_accuracy
    from analyzers.depth.data import Record

    falling = [3.0 - 0.01 * i for i in range(100)]
    flat = [3.0 - 0.01 * i for i in range(50)] + [2.5 + 0.001 * ((-1) ** i) for i in range(50)]
    assert convergence(falling, 0.5, 0.1) == (False, convergence(falling, 0.5, 0.1)[1])
    assert "still falling" in convergence(falling, 0.5, 0.1)[1]
    assert not convergence(flat, 0.11, 0.1)[0] and "unigram" in convergence(flat, 0.11, 0.1)[1]
    assert convergence(flat, 0.3, 0.1)[0]
    assert unigram_accuracy([Record("a", "a", "AAAB"), Record("b", "b", "AC")]) == pytest.approx(4 / 6)
