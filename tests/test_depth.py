"""Tests of the depth probes on tiny random models built here (no hub access)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch

from analyzers import registry
from analyzers.base import NotRunnable, RunContext
from analyzers.depth.data import read_fasta
from analyzers.depth.models import adapter_for, build_tiny_esm, load_model
from analyzers.depth.probes import effective_rank, probe_batch, stable_rank


@pytest.fixture(scope="module")
def esm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_esm(tmp_path_factory.mktemp("esm") / "tiny", num_layers=4, hidden=32, seed=0)


def _batch(tokenizer, sequences=("ACDEFGHIKLMN", "PQRSTVWYAC")):
    enc = tokenizer(list(sequences), return_tensors="pt", padding=True)
    ids, attention = enc["input_ids"], enc["attention_mask"]
    real = attention.bool() & ~torch.isin(ids, torch.tensor(tokenizer.all_special_ids))
    return ids, attention, real


def test_probe_zeroed_layer_has_zero_contribution_and_skip_effect(esm_dir: Path) -> None:
    model, tokenizer = load_model(str(esm_dir))
    layer = model.esm.encoder.layer[1]
    with torch.no_grad():
        for dense in (layer.attention.output.dense, layer.output.dense):
            dense.weight.zero_()
            dense.bias.zero_()
    result = probe_batch(model, adapter_for(model), *_batch(tokenizer))
    assert result["contribution"]["attn"][1] == pytest.approx(0, abs=1e-7)
    assert result["contribution"]["mlp"][1] == pytest.approx(0, abs=1e-7)
    assert result["contribution"]["block"][1] == pytest.approx(0, abs=1e-7)
    assert result["skip_output_effect"][1] == pytest.approx(0, abs=1e-6)
    assert result["contribution"]["block"][0] > 0.01


def test_probe_logit_lens_last_layer_kl_is_zero(esm_dir: Path) -> None:
    model, tokenizer = load_model(str(esm_dir))
    result = probe_batch(model, adapter_for(model), *_batch(tokenizer), with_skips=False)
    assert len(result["logit_lens_kl"]) == 5
    assert result["logit_lens_kl"][-1] == pytest.approx(0, abs=1e-6)
    assert result["logit_lens_top1"][-1] == 1.0
    assert result["logit_lens_kl"][0] > 0


def test_probe_skip_effect_matches_model_without_layer(esm_dir: Path) -> None:
    model, tokenizer = load_model(str(esm_dir))
    ids, attention, real = _batch(tokenizer)
    result = probe_batch(model, adapter_for(model), ids, attention, real)
    skipped = 2
    with torch.no_grad():
        full = model(input_ids=ids, attention_mask=attention).logits.softmax(-1)
        reduced, _ = load_model(str(esm_dir))
        kept = [layer for i, layer in enumerate(reduced.esm.encoder.layer) if i != skipped]
        reduced.esm.encoder.layer = torch.nn.ModuleList(kept)
        without = reduced(input_ids=ids, attention_mask=attention).logits.softmax(-1)
    expected = (full - without).norm(dim=-1)[real].mean()
    assert result["skip_output_effect"][skipped] == pytest.approx(float(expected), rel=1e-4)
    assert result["skip_heatmap"][skipped][skipped] == pytest.approx(1.0)


def test_effective_rank_of_rank_k_matrix_is_k() -> None:
    q, _ = torch.linalg.qr(torch.randn(20, 20, generator=torch.Generator().manual_seed(0)))
    k = 3
    matrix = q[:, :k] @ (2.0 * torch.eye(k)) @ q[:k, :]  # k equal singular values
    assert effective_rank(matrix) == pytest.approx(k, rel=1e-6)
    assert stable_rank(matrix) == pytest.approx(k, rel=1e-6)


def test_fasta_errors_and_filters(tmp_path: Path) -> None:
    empty = tmp_path / "empty.fasta"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(ValueError, match="empty"):
        read_fasta(empty)
    bad = tmp_path / "bad.fasta"
    bad.write_text(">good\nACDE\n>broken\nAC1E\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken.*'1'"):
        read_fasta(bad)
    ok = tmp_path / "ok.fasta"
    ok.write_text(">a\nACDE\n>b\nACDE\n>c\nAC\nDEFGHIK\n>d\nA\n", encoding="utf-8")
    assert read_fasta(ok, min_length=2, max_length=8) == [("a", "ACDE")]
    assert [name for name, _ in read_fasta(ok, min_length=2)] == ["a", "c"]


def test_probe_bert_reports_post_ln(tmp_path: Path) -> None:
    from transformers import BertConfig, BertForMaskedLM

    config = BertConfig(vocab_size=40, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    BertForMaskedLM(config).save_pretrained(tmp_path)
    model = BertForMaskedLM.from_pretrained(tmp_path, attn_implementation="eager").eval()
    adapter = adapter_for(model)
    assert not adapter.pre_ln
    ids = torch.randint(5, 40, (2, 7), generator=torch.Generator().manual_seed(0))
    result = probe_batch(model, adapter, ids, torch.ones_like(ids), torch.ones_like(ids).bool(), with_skips=False)
    assert result["contribution"] == "post-LN: residual decomposition not defined"


def test_probe_gpt2_contributions_add_up(tmp_path: Path) -> None:
    from transformers import GPT2Config, GPT2LMHeadModel

    GPT2LMHeadModel(GPT2Config(vocab_size=30, n_embd=32, n_layer=2, n_head=2, n_positions=32)).save_pretrained(tmp_path)
    model = GPT2LMHeadModel.from_pretrained(tmp_path, attn_implementation="eager").eval()
    ids = torch.randint(0, 30, (2, 6), generator=torch.Generator().manual_seed(0))
    result = probe_batch(model, adapter_for(model), ids, torch.ones_like(ids), torch.ones_like(ids).bool())
    assert result["logit_lens_kl"][-1] == pytest.approx(0, abs=1e-6)
    assert result["skip_heatmap"][0][0] == pytest.approx(1.0)  # h_1 := h_0 removes the whole update
    assert len(result["attention_entropy"]) == 2


def test_adapter_unsupported_architecture_names_supported() -> None:
    with pytest.raises(ValueError, match="EsmForMaskedLM"):
        adapter_for(torch.nn.Linear(2, 2))


def test_depth_probe_registered_runs_at_smoke_scale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_HOME", str(tmp_path / "home"))
    analyzer = registry.get("depth.probe")
    params = analyzer.params_for({"max_sequences": 2}, scale="smoke")
    seen: list[float] = []
    result = analyzer.run(params, RunContext(out_dir=tmp_path / "out", progress=lambda f, m: seen.append(f)))
    metrics = json.loads((tmp_path / "out" / "depth_metrics.json").read_text(encoding="utf-8"))
    assert "late_half_kl_drop_fraction" in metrics and len(metrics["layers"]["logit_lens_kl"]) == 5
    assert all(value is not None for value in metrics["layers"]["logit_lens_kl_masked"])  # 15% masked, read there
    assert any(name.endswith(".png") for name in result.artifacts)
    assert all((tmp_path / "out" / name).exists() for name in result.artifacts)
    assert result.provenance["weights_sha256"] and result.provenance["data_sha256"]
    assert result.num_layers == 4 and seen[-1] == 1.0
    assert any("random" in note for note in result.notes)


def test_depth_probe_cuda_absent_is_not_runnable(tmp_path: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    analyzer = registry.get("depth.probe")
    with pytest.raises(NotRunnable, match="CUDA asked for but not available"):
        analyzer.run(analyzer.params_for({"device": "cuda"}), RunContext(out_dir=tmp_path))


def test_load_model_unknown_hub_id_fails_fast_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.monotonic()
    with pytest.raises(NotRunnable, match="not available offline: download with `huggingface-cli download"):
        load_model("nobody-here/no-such-plm-xyz")
    assert time.monotonic() - start < 10
