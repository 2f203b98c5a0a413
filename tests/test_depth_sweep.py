"""depth.probe and depth.sweep through the registry, training, the width solver, the built-in trained tiny
ESMs, the sequence data (FASTA, designed corpus, masking, length batches, the streamed corpus), and the
sweep's verdict: convergence, the paired noise test, a planted optimum, checkpoint and resume."""

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
from analyzers.depth.data import DESIGNED_FASTA, Record, length_batches, read_fasta, split_records
from analyzers.depth.loading import load_model, weights_hash
from analyzers.depth.sweep import inefficiency_trend
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


def test_solve_shape_equalises_parameter_counts_across_depths_at_a_fixed_head_size() -> None:
    from transformers import EsmForMaskedLM

    budget, head_size = 120_000, 8
    counts = []
    for depth in (2, 4, 8, 12):
        width, intermediate = solve_shape(depth, budget, head_size)
        heads = width // head_size
        assert width % head_size == 0 and intermediate >= width
        model = EsmForMaskedLM(esm_config(depth, width, heads, intermediate))  # a real model, counted directly
        assert model.esm.encoder.layer[0].attention.self.attention_head_size == head_size
        counts.append(sum(p.numel() for p in model.parameters()))
        assert counts[-1] == count_parameters(depth, width, heads, intermediate)
    assert max(counts) / min(counts) - 1 < 0.01
    assert all(abs(c / budget - 1) < 0.01 for c in counts)
    assert solve_shape(2, budget, head_size)[0] > solve_shape(12, budget, head_size)[0]
    with pytest.raises(ValueError, match="even"):
        solve_shape(2, budget, 7)


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


@pytest.mark.analyzer("depth.probe")
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


def test_depth_sweep_paper_scale_says_why_it_cannot_run(tmp_path: Path, kb_home: Path) -> None:
    analyzer = registry.get("depth.sweep")
    ctx = RunContext(out_dir=tmp_path / "out", cache_dir=kb_home / "cache")
    with pytest.raises(NotRunnable, match="UniRef50 FASTA you provide"):
        analyzer.run(analyzer.params_for(scale="paper"), ctx)
    if torch.cuda.is_available():
        return
    (kb_home / "data").mkdir(parents=True)
    (kb_home / "data" / "uniref50.fasta").write_text(">a\nMKTAYIAKQR\n", encoding="utf-8")
    with pytest.raises(NotRunnable, match="CUDA asked for"):
        analyzer.run(analyzer.params_for(scale="paper"), ctx)


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


# -- the sweep's verdict --------------------------------------------------------------------------------------


def test_convergence_rule_needs_a_flat_validation_loss_and_accuracy_above_the_unigram_floor() -> None:
    from analyzers.depth.sweep import convergence, unigram_accuracy

    falling = [3.0 * 0.97**i for i in range(20)]  # 3 % per evaluation: 14 % over the last five
    flat = [3.0 * 0.97**i for i in range(14)] + [2.0, 1.999, 1.998, 1.999, 1.998, 1.997]
    converged, why, improvement = convergence(falling, 0.5, 0.1, window=5, tolerance=0.01)
    assert not converged and "still falling" in why and "14.13%" in why and "threshold 1.00%" in why
    assert improvement == pytest.approx(1 - 0.97**5)
    converged, why, improvement = convergence(flat, 0.3, 0.1, window=5, tolerance=0.01)
    assert converged and improvement == pytest.approx((2.0 - 1.997) / 2.0) and "flat" in why
    assert not convergence(flat, 0.11, 0.1)[0] and "unigram" in convergence(flat, 0.11, 0.1)[1]
    assert not convergence(flat, 0.3, 0.1, tolerance=0.0005)[0]  # a stricter threshold says no
    assert "too few" in convergence(flat[:4], 0.3, 0.1, window=5)[1]
    assert unigram_accuracy([Record("a", "a", "AAAB"), Record("b", "b", "AC")]) == pytest.approx(4 / 6)


def test_paired_z_is_the_paired_t_statistic() -> None:
    import numpy as np

    from analyzers.depth.sweep import paired_z
    from analyzers.depth.training import TokenScores

    rng = np.random.default_rng(0)
    best = rng.gamma(4.0, 5.0, 300)
    other = best + rng.normal(0.4, 2.0, 300)
    d = other - best
    expected = d.mean() / (d.std(ddof=1) / np.sqrt(len(d)))  # the textbook paired t, computed with numpy
    z = paired_z(TokenScores(best.tolist(), [0] * 300, [10] * 300), TokenScores(other.tolist(), [0] * 300, [10] * 300))
    assert z == pytest.approx(expected, rel=1e-9) and z > 2
    same = TokenScores(best.tolist(), [0] * 300, [10] * 300)
    noisy = TokenScores((best + rng.normal(0.0, 2.0, 300)).tolist(), [0] * 300, [10] * 300)
    assert abs(paired_z(same, noisy)) < 3


def _write_fasta(path: Path, sequences: list[str], tags: list[str] | None = None) -> Path:
    lines = []
    for index, sequence in enumerate(sequences):
        tag = f" split={tags[index]}" if tags else ""
        lines += [f">s{index}{tag}", sequence[:30]] + ([sequence[30:]] if len(sequence) > 30 else [])  # wrapped lines
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_streamed_batches_bucket_by_length_hold_out_validation_and_resume(tmp_path: Path) -> None:
    from analyzers.depth.stream import StreamedBatches, is_validation, validation_records

    generator = torch.Generator().manual_seed(3)
    letters = "ACDEFGHIKLMNPQRSTVWY"
    sequences = ["".join(letters[i] for i in torch.randint(0, 20, (int(n),), generator=generator))
                 for n in torch.randint(8, 60, (157,), generator=generator)]
    path = _write_fasta(tmp_path / "c.fasta", sequences)
    held_out = {s for s in sequences if is_validation(Record("x", "x", s), 0.2)}
    assert 10 < len(held_out) < 60
    assert {r.sequence for r in validation_records(path, 0.2, 1000)} == held_out
    assert len(validation_records(path, 0.2, 5)) == 5
    stream = StreamedBatches(path, batch_tokens=128, max_residues=50, val_fraction=0.2, seed=1, buffer_sequences=23)
    seen: list[str] = []
    batches = []
    while stream.position.epoch == 0 or not seen:
        batch = stream.next_batch()
        if stream.position.epoch > 0:
            break
        batches.append(batch)
        seen += [r.sequence for r in batch]
        longest = max(len(r.sequence) for r in batch)
        assert len(batch) * (longest + 2) <= 128  # padded tokens within the budget
    train = [s for s in sequences if s not in held_out]
    assert len(seen) == len(train)  # one epoch: every training record once (long ones cropped), no held-out one
    assert not any(s in held_out for s in seen if len(s) < 50)
    assert sorted(s for s in seen if len(s) < 50) == sorted(s for s in train if len(s) < 50)
    assert all(any(s in t for t in train if len(t) >= 50) for s in seen if len(s) == 50)  # cropped windows
    # Length bucketing keeps padding small: residues fill most of each batch's padded tokens.
    filled = sum(len(r.sequence) for b in batches for r in b) / sum(len(b) * max(len(r.sequence) for r in b)
                                                                    for b in batches)
    assert filled > 0.85
    # A stream restored from a saved position yields exactly the batches of an uninterrupted one.
    first = StreamedBatches(path, 128, 50, 0.2, seed=1, buffer_sequences=23)
    for _ in range(17):
        first.next_batch()
    state = json.loads(json.dumps(first.state()))
    expected = [[r.sequence for r in first.next_batch()] for _ in range(40)]
    resumed = StreamedBatches(path, 128, 50, 0.2, seed=1, buffer_sequences=23)
    resumed.load_state(state)
    assert [[r.sequence for r in resumed.next_batch()] for _ in range(40)] == expected
    with pytest.raises(ValueError, match="cannot hold one sequence"):
        StreamedBatches(path, 40, 50, 0.2).next_batch()


def _tokenizer(folder: Path):  # noqa: ANN202
    from transformers import EsmTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    save_esm_tokenizer(folder)
    return EsmTokenizer.from_pretrained(folder)


def test_accumulated_micro_batches_give_the_gradient_of_one_padded_batch(tmp_path: Path) -> None:
    """Two micro-batches of different lengths, accumulated, against one forward pass over both padded together
    (an independent computation); gradient checkpointing gives the same gradient again."""
    from transformers import EsmForMaskedLM

    from analyzers.depth.stream import StreamedBatches
    from analyzers.depth.training import MaskedLMTrainer, SweepTrainConfig

    tokenizer = _tokenizer(tmp_path)
    generator = torch.Generator().manual_seed(0)
    sequences = ["".join("ACDEFGHIKLMNPQRSTVWY"[i] for i in torch.randint(0, 20, (n,), generator=generator))
                 for n in (12, 14, 15, 30, 31, 33, 34)]
    path = _write_fasta(tmp_path / "c.fasta", sequences, ["train"] * len(sequences))

    def trainer(checkpointing: bool) -> MaskedLMTrainer:
        torch.manual_seed(0)
        model = EsmForMaskedLM(esm_config(2, 16, 2))
        if checkpointing:
            model.activation_checkpointing_enable({"use_reentrant": False})
        source = StreamedBatches(path, 72, 40, 0.1, seed=0, buffer_sequences=100)
        config = SweepTrainConfig(steps=10, learning_rate=0.0, warmup_steps=0, weight_decay=0.0, accumulation=2)
        return MaskedLMTrainer(model.train(), tokenizer, source, config)

    accumulated = trainer(False)
    masking = accumulated.masking.get_state()
    accumulated.train_step()
    grads = [p.grad.clone() for p in accumulated.model.parameters() if p.grad is not None]
    assert len(grads) > 10

    replay = trainer(False)
    replay.masking.set_state(masking)
    micro = [replay._micro_batch(replay.source.next_batch()) for _ in range(2)]
    assert micro[0][0].shape[1] != micro[1][0].shape[1]  # really two lengths
    width = max(m[0].shape[1] for m in micro)
    pad = tokenizer.pad_token_id

    def padded(tensor: torch.Tensor, value: int) -> torch.Tensor:
        return torch.nn.functional.pad(tensor, (0, width - tensor.shape[1]), value=value)

    inputs = torch.cat([padded(m[0], pad) for m in micro])
    attention = torch.cat([padded(m[1], 0) for m in micro])
    labels = torch.cat([padded(m[2], -100) for m in micro])
    replay.model.zero_grad()
    logits = replay.model(input_ids=inputs, attention_mask=attention).logits
    torch.nn.functional.cross_entropy(logits.transpose(1, 2), labels, ignore_index=-100).backward()
    torch.nn.utils.clip_grad_norm_(replay.model.parameters(), 1.0)
    for got, want in zip(grads, [p.grad for p in replay.model.parameters() if p.grad is not None], strict=True):
        assert torch.allclose(got, want, atol=1e-6, rtol=1e-4)

    checkpointed = trainer(True)
    checkpointed.train_step()
    for got, want in zip(grads, [p.grad for p in checkpointed.model.parameters() if p.grad is not None],
                         strict=True):
        assert torch.allclose(got, want, atol=1e-6, rtol=1e-4)


def test_training_memory_estimate_refuses_what_does_not_fit() -> None:
    from analyzers.depth.training import check_fits, training_memory_bytes

    # The paper's deepest model: 48 layers at ~650M parameters, head size 64, micro-batches of 64 x 1,024 tokens
    # (what the old preset padded every batch to).
    width, intermediate = solve_shape(48, 650e6, 64)
    parameters = count_parameters(48, width, width // 64, intermediate)
    plain = training_memory_bytes(48, width, intermediate, parameters, 65_536, False, "bfloat16")
    recomputed = training_memory_bytes(48, width, intermediate, parameters, 65_536, True, "bfloat16")
    assert plain["optimizer_states"] == 16 * parameters  # float32 weights, gradients and two AdamW moments
    assert recomputed["activations"] < plain["activations"] / 5
    h100 = 78 * 1024**3
    with pytest.raises(MemoryError, match="gradient_checkpointing=true"):
        check_fits(plain, h100, "48 layers")
    check_fits(recomputed, h100, "48 layers")  # the paper preset fits one H100 with checkpointing


def _sweep_params(**over: object) -> dict[str, object]:
    params: dict[str, object] = {
        "depths": [2, 3], "parameter_budget": 3_000, "head_size": 4, "batch_tokens": 704, "probe_sequences": 3,
        "max_val_sequences": 24, "evaluations": 6, "convergence_window": 2,
    }
    params.update(over)
    return params


@pytest.mark.analyzer("depth.sweep")
def test_an_undertrained_sweep_is_inconclusive_and_says_why(tmp_path: Path, kb_home: Path) -> None:
    from analyzers.base import result_record
    from kb.evidence.verdicts import evaluate, unresolved_reason
    from schemas import Claim, VerdictKind

    analyzer = registry.get("depth.sweep")
    params = analyzer.params_for(_sweep_params(tokens_per_parameter=3))
    out = tmp_path / "sweep"
    result = analyzer.run(params, RunContext(out_dir=out, cache_dir=kb_home / "cache"))
    assert result.depths == [2, 3] and result.scale.name == "custom"
    assert max(result.parameters_by_depth) / min(result.parameters_by_depth) - 1 < 0.02
    assert result.heads_by_depth == [w // 4 for w in result.widths_by_depth]
    for name in analyzer.metrics:
        # the fall and the rise need a depth between the shallowest and the deepest
        assert (getattr(result, name) is None) is (name == "perplexity_fall_and_rise"), name
    assert result.converged_by_depth == [False, False]
    curves = result.learning_curves_by_depth[0]
    assert len(curves["train_loss"]) == result.steps and curves["val_steps"][-1] == result.steps
    every = -(-result.steps // 6)  # evaluations every ceil(steps / 6) steps and at the last
    assert curves["val_steps"] == sorted({*range(every, result.steps + 1, every), result.steps})
    assert len(curves["val_loss"]) == len(curves["val_steps"]) and 2 < result.tokens_per_parameter_by_depth[0] < 4
    record = result_record(result)
    for metric in ("best_depth", "best_depth_is_interior", "val_perplexity_by_depth.0", "depth_inefficiency_trend"):
        why = unresolved_reason(record, metric) or ""
        assert "converged failed" in why and "2 layers: " in why, (metric, why)
    assert unresolved_reason(record, "parameters_by_depth.0") is None  # exact by construction
    claim = Claim.model_validate({
        "id": "optimal-depth", "statement": "The best depth is 2.", "kind": "quantitative",
        "analyzer": {"name": "depth.sweep"}, "expect": {"metric": "best_depth", "op": "==", "value": 2},
    })
    verdict = evaluate(claim, [record], result.scale)
    assert verdict.kind is VerdictKind.inconclusive and "not trained to convergence" in verdict.reason
    assert {"sweep_curves.png", "sweep_curves.svg", "curves.json", "sweep_perplexity.png"} <= set(result.artifacts)
    assert (out / "checkpoints" / "depth-03" / "model.safetensors").is_file()
    assert load_model(str(out / "checkpoints" / "depth-03")).adapter.num_layers == 3
    saved = json.loads((out / "sweep_metrics.json").read_text(encoding="utf-8"))
    assert saved["checks"]["best_depth"] == record["checks"]["best_depth"]
    assert saved["best_depth_z"] == result.best_depth_z
    assert analyzer.scale_name(analyzer.params_for(scale="smoke")) == "smoke"


def _family_corpus(path: Path, seed: int = 0) -> tuple[Path, dict[str, torch.Tensor]]:
    """Six families, each a fixed random distribution over the 20 residues (Dirichlet(0.15)); a sequence draws
    40-60 residues i.i.d. from its family's distribution. The best possible masked-token loss is known: the
    NLL of the true family distribution at the masked positions. Returns the file and each sequence's profile."""
    generator = torch.Generator().manual_seed(seed)
    profiles = torch._standard_gamma(torch.full((6, 20), 0.15), generator=generator)
    profiles = profiles / profiles.sum(1, keepdim=True)  # (families, residues)
    letters = "ACDEFGHIKLMNPQRSTVWY"
    sequences, truth = [], {}
    for _ in range(800):
        family = int(torch.randint(0, 6, (1,), generator=generator))
        length = int(torch.randint(40, 61, (1,), generator=generator))
        drawn = torch.multinomial(profiles[family], length, replacement=True, generator=generator).tolist()
        sequence = "".join(letters[k] for k in drawn)
        sequences.append(sequence)
        truth[sequence] = profiles[family]
    return _write_fasta(path, sequences), truth


@pytest.mark.slow
def test_a_converged_toy_sweep_finds_the_planted_optimum(tmp_path: Path, kb_home: Path) -> None:
    """The planted answer: at 2,000 parameters and head size 4, 2 layers get width 8 and 6 layers width 4. The
    corpus needs one attention layer (pool the sequence, recognise its family) and an output that can express
    six arbitrary distributions over 20 residues: logits of rank 5, beyond what a width-4 model's final
    LayerNorm leaves (3 dimensions), within a width-8 model's (7). So 2 layers can reach the Bayes floor (the
    true family distributions' NLL, computed here independently) and 6 layers cannot: the best depth is 2."""
    from analyzers.depth.batches import encode
    from analyzers.depth.stream import validation_records

    fasta, truth = _family_corpus(tmp_path / "families.fasta")
    analyzer = registry.get("depth.sweep")
    params = analyzer.params_for({
        "depths": [2, 6], "parameter_budget": 2_000, "head_size": 4, "tokens_per_parameter": 150,
        "batch_tokens": 640, "learning_rate": 0.03, "fasta": str(fasta), "max_val_sequences": 40, "evaluations": 8,
        "convergence_window": 3, "probe_sequences": 2,
    })
    result = analyzer.run(params, RunContext(out_dir=tmp_path / "out", cache_dir=kb_home / "cache"))
    assert result.widths_by_depth == [8, 4]
    assert result.converged_by_depth == [True, True], result.convergence_by_depth
    assert all(c.passed for c in result.checks["best_depth"].preconditions)
    # The Bayes floor on the same validation sequences and masked positions.
    val = validation_records(fasta, params.val_fraction, params.max_val_sequences)
    tokenizer = _tokenizer(tmp_path / "tok")
    batch = encode(val, tokenizer, mask_fraction=0.15, seed=params.seed)
    assert batch.masked is not None
    letters = tokenizer.convert_tokens_to_ids(list("ACDEFGHIKLMNPQRSTVWY"))
    index = {token: i for i, token in enumerate(letters)}
    nll = [-math.log(float(truth[record.sequence][index[int(batch.labels[row, position])]]))
           for row, record in enumerate(val) for position in batch.masked[row].nonzero().flatten().tolist()]
    floor = sum(nll) / len(nll)
    final_loss = [curve["val_loss"][-1] for curve in result.learning_curves_by_depth]
    assert final_loss[0] == pytest.approx(math.log(result.val_perplexity_by_depth[0]))
    assert floor - 0.02 < final_loss[0] < floor + 0.06  # 2 layers reach the floor
    assert final_loss[1] > floor + 0.1  # 6 layers cannot
    assert result.best_depth == 2 and result.best_depth_z is not None and result.best_depth_z >= 2


def test_an_interrupted_sweep_resumes_to_the_result_of_an_uninterrupted_one(tmp_path: Path, kb_home: Path) -> None:
    from analyzers.base import Cancelled

    analyzer = registry.get("depth.sweep")
    params = analyzer.params_for(_sweep_params(tokens_per_parameter=3, checkpoint_every=4))

    def run(out: Path, checkpoints: Path | None, stop_at: str | None = None) -> tuple[object, list[str], int]:
        messages: list[str] = []
        saved = [0]

        def progress(fraction: float, message: str) -> None:
            messages.append(message)
            if stop_at is not None and message.startswith(stop_at):
                raise RuntimeError("node lost")  # a preempted job: an exception in the middle of a depth

        ctx = RunContext(out_dir=out, cache_dir=kb_home / "cache", progress=progress, checkpoint_dir=checkpoints,
                         on_checkpoint=lambda: saved.__setitem__(0, saved[0] + 1))
        return analyzer.run(params, ctx), messages, saved[0]

    straight, _, _ = run(tmp_path / "straight", None)
    steps = straight.steps  # type: ignore[attr-defined]
    assert steps >= 10
    checkpoints = tmp_path / "checkpoints"
    with pytest.raises(RuntimeError, match="node lost"):
        run(tmp_path / "first", checkpoints, stop_at="3 layers: step 9/")  # after the checkpoint at step 8
    assert (checkpoints / "depth-02" / "done.json").is_file()  # the first depth finished and was kept
    saved_files = {p.suffix for p in checkpoints.rglob("*") if p.is_file()}
    assert saved_files <= {".json", ".safetensors", ".txt"}  # plain tensors and JSON, never a pickle
    state = json.loads((checkpoints / "depth-03" / "train_state.json").read_text(encoding="utf-8"))
    assert state["step"] == 8 and len(state["curves"]["train_loss"]) == 8
    # Cancelling (ctx.is_cancelled) stops at the next report too, and leaves the same kind of checkpoint.
    ctx = RunContext(out_dir=tmp_path / "cancelled", cache_dir=kb_home / "cache", checkpoint_dir=checkpoints,
                     is_cancelled=lambda: True)
    with pytest.raises(Cancelled):
        analyzer.run(params, ctx)
    resumed, messages, saved = run(tmp_path / "second", checkpoints)
    assert any("finished earlier" in m for m in messages) and any(f"resumed at step {state['step']}" in m
                                                                   for m in messages)
    assert not any(m.startswith("2 layers: step") for m in messages)  # depth 2 was not trained again
    assert saved >= 1
    dumped, expected = resumed.model_dump(), straight.model_dump()  # type: ignore[attr-defined]
    for key in ("provenance", "artifacts"):
        dumped.pop(key), expected.pop(key)
    assert dumped == expected  # the same curves, perplexities, probes and verdict
    assert (resumed.provenance["weights_hash_by_depth"]  # type: ignore[attr-defined]
            == straight.provenance["weights_hash_by_depth"])  # type: ignore[attr-defined]
