"""Depth probes against independent computations on tiny ESM / GPT-2 / BERT models built, saved and
loaded here (no hub access)."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import pytest
import torch
from torch import nn

from analyzers.depth.adapters import UnsupportedArchitecture, adapter_for
from analyzers.depth.batches import Batch, encode
from analyzers.depth.compute import probe_model
from analyzers.depth.data import Record
from analyzers.depth.loading import LoadedModel, load_model
from analyzers.depth.probes import (
    ProbeAccumulator,
    ProbeOptions,
    clean_pass,
    effective_rank,
    effective_rank_from_gram,
    reshape_contributions,
    stable_rank,
)
from analyzers.depth.skips import future_start, skip_probes
from analyzers.depth.tiny import build_random_esm, build_random_gpt2
from tests.helpers.tolerance import rank_rtol

SEQUENCES = ("MKTAYIAKQRQISFVKSHFSRQ", "ACDEFGHIKLMNPQ", "GSHMLEDPVRRW")


@pytest.fixture(scope="module")
def esm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_random_esm(tmp_path_factory.mktemp("esm") / "tiny", num_layers=4, width=32, num_heads=4, seed=0)


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_random_gpt2(tmp_path_factory.mktemp("gpt2") / "tiny", num_layers=4, width=32, num_heads=4, seed=1)


def _records(sequences: tuple[str, ...] = SEQUENCES) -> list[Record]:
    return [Record(f"r{i}", f"r{i}", s) for i, s in enumerate(sequences)]


def _batch(loaded: LoadedModel, sequences: tuple[str, ...] = SEQUENCES) -> Batch:
    fraction = 0.15 if loaded.adapter.objective == "masked" else 0.0
    return encode(_records(sequences), loaded.tokenizer, loaded.input_format, fraction, seed=3)


def _probe(loaded: LoadedModel, batch: Batch, naive: bool = False, **options: object) -> dict:
    accumulator = ProbeAccumulator(loaded.adapter.num_layers, loaded.adapter.objective, loaded.adapter.pre_ln)
    probe_options = ProbeOptions(**options)  # type: ignore[arg-type]
    record = clean_pass(loaded.model, loaded.adapter, batch, accumulator, probe_options)
    if probe_options.skips:
        skip_probes(loaded.model, loaded.adapter, record, batch, accumulator, probe_options, naive=naive)
    layers = accumulator.finish()
    reshape_contributions(layers)
    return layers


def _hidden_states(model: nn.Module, batch: Batch) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Residual states h_0..h_{L-1} from transformers' own output_hidden_states, and the logits."""
    with torch.no_grad():
        out = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, output_hidden_states=True)
    return list(out.hidden_states[:-1]), out.logits


def _without_layer(folder: Path, skipped: int) -> nn.Module:
    reduced = load_model(str(folder)).model
    kept = [layer for i, layer in enumerate(reduced.esm.encoder.layer) if i != skipped]
    reduced.esm.encoder.layer = nn.ModuleList(kept)
    return reduced


def test_probe_zeroed_layer_has_zero_contribution_and_skip_effect(esm_dir: Path) -> None:
    loaded = load_model(str(esm_dir))
    layer = loaded.model.esm.encoder.layer[1]
    with torch.no_grad():
        for dense in (layer.attention.output.dense, layer.output.dense):
            dense.weight.zero_()
            dense.bias.zero_()
    layers = _probe(loaded, _batch(loaded))
    for key in ("attn", "mlp", "block"):
        assert layers["contribution"][key][1] == pytest.approx(0, abs=1e-7)
        assert layers["contribution"][key][0] > 0.01
    assert layers["skip_output_effect"][1] == pytest.approx(0, abs=1e-6)
    assert layers["skip_heatmap"][1][2:] == pytest.approx([0, 0], abs=1e-5)
    assert layers["deletion_accuracy"][1] == pytest.approx(layers["baseline_accuracy"])
    assert layers["skip_output_effect"][0] > 1e-4


def test_probe_logit_lens_matches_manual_lens_and_is_exact_at_the_last_layer(esm_dir: Path) -> None:
    loaded = load_model(str(esm_dir))
    batch = _batch(loaded)
    layers = _probe(loaded, batch, skips=False, top_k=3)
    assert len(layers["logit_lens_kl"]) == 5
    assert layers["logit_lens_kl"][-1] == pytest.approx(0, abs=1e-6)
    assert layers["logit_lens_top1"][-1] == 1.0 and layers["logit_lens_topk"][-1] == 1.0
    states, logits = _hidden_states(loaded.model, batch)
    log_final = logits.log_softmax(-1)
    model = loaded.model
    for index, hidden in enumerate(states):
        with torch.no_grad():
            lens = model.lm_head(model.esm.encoder.emb_layer_norm_after(hidden)).log_softmax(-1)
        kl = torch.nn.functional.kl_div(log_final, lens, log_target=True, reduction="none").sum(-1)  # KL(lens||final)
        assert layers["logit_lens_kl"][index] == pytest.approx(float(kl[batch.real].mean()), rel=1e-4)
        assert layers["logit_lens_kl_masked"][index] == pytest.approx(float(kl[batch.masked].mean()), rel=1e-4)
        top_lens, top_final = lens.topk(3, -1).indices, logits.topk(3, -1).indices
        overlap = torch.tensor([[len(set(a.tolist()) & set(b.tolist())) / 3 for a, b in zip(x, y, strict=True)]
                                for x, y in zip(top_lens, top_final, strict=True)])
        assert layers["logit_lens_topk"][index] == pytest.approx(float(overlap[batch.real].mean()), rel=1e-5)


def test_probe_angular_distance_all_pairs_matches_hidden_states(esm_dir: Path) -> None:
    loaded = load_model(str(esm_dir))
    batch = _batch(loaded)
    layers = _probe(loaded, batch, skips=False)
    states, _ = _hidden_states(loaded.model, batch)  # h_0 .. h_{L-1}
    assert batch.masked is not None and (states[0][batch.masked].norm(dim=-1) == 0).all()  # ESM token dropout
    for i in range(len(states)):
        for j in (i, min(i + 2, len(states) - 1)):
            cosine = torch.nn.functional.cosine_similarity(states[i], states[j], dim=-1).clamp(-1, 1)
            defined = batch.real & (states[i].norm(dim=-1) > 0) & (states[j].norm(dim=-1) > 0)
            expected = float((torch.arccos(cosine) / math.pi)[defined].mean())
            assert layers["angular_distance"][i][j] == pytest.approx(expected, abs=2e-4)
    assert layers["angular_distance"][0][4] > layers["angular_distance"][0][1] > 0


def test_probe_contributions_match_manual_decomposition(esm_dir: Path) -> None:
    loaded = load_model(str(esm_dir))
    batch = _batch(loaded)
    layers = _probe(loaded, batch, skips=False)
    states, _ = _hidden_states(loaded.model, batch)
    captured: dict[str, torch.Tensor] = {}
    layer = loaded.model.esm.encoder.layer[0]
    handles = [layer.attention.output.dense.register_forward_hook(lambda m, i, o: captured.update(a=o)),
               layer.output.dense.register_forward_hook(lambda m, i, o: captured.update(m=o))]
    with torch.no_grad():
        loaded.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask)
    for handle in handles:
        handle.remove()
    h, a, m = states[0], captured["a"], captured["m"]
    assert torch.allclose(h + a + m, states[1], atol=1e-5)  # h_1 = h_0 + a_0 + m_0
    defined = batch.real & (h.norm(dim=-1) > 0)  # masked tokens have h_0 = 0 (token dropout): ratio undefined
    expected = (a.norm(dim=-1) / h.norm(dim=-1))[defined].mean()
    assert layers["contribution"]["attn"][0] == pytest.approx(float(expected), rel=1e-4)
    expected_mlp = (m.norm(dim=-1) / (h + a).norm(dim=-1))[batch.real].mean()
    assert layers["contribution"]["mlp"][0] == pytest.approx(float(expected_mlp), rel=1e-4)
    assert all(math.isfinite(v) and v < 1e3 for v in layers["contribution"]["block_max"])


def test_effective_rank_of_rank_k_matrix_is_k() -> None:
    q, _ = torch.linalg.qr(torch.randn(20, 20, generator=torch.Generator().manual_seed(0), dtype=torch.float64))
    k = 3
    matrix = q[:, :k] @ (2.0 * torch.eye(k, dtype=torch.float64)) @ q[:k, :]  # k equal singular values
    assert effective_rank(matrix) == pytest.approx(k, rel=1e-6)
    assert stable_rank(matrix) == pytest.approx(k, rel=1e-6)
    skewed = q[:, :2] @ torch.diag(torch.tensor([3.0, 1.0], dtype=torch.float64)) @ q[:2, :]
    p = torch.tensor([0.75, 0.25])
    assert effective_rank(skewed) == pytest.approx(float(torch.exp(-(p * p.log()).sum())), rel=1e-6)
    assert stable_rank(skewed) == pytest.approx((9 + 1) / 9, rel=1e-6)


def test_effective_rank_accumulated_over_batches_equals_svd_of_all_tokens() -> None:
    generator = torch.Generator().manual_seed(1)
    first, second = torch.randn(30, 8, generator=generator), torch.randn(17, 8, generator=generator) * 3
    gram = first.double().T @ first.double() + second.double().T @ second.double()
    singular = torch.linalg.svdvals(torch.cat([first, second]).double())
    p = singular / singular.sum()
    rel = rank_rtol(torch.linalg.eigvalsh(gram))  # the Gram's solver error, amplified by its conditioning
    assert effective_rank_from_gram(gram) == pytest.approx(float(torch.exp(-(p * p.log()).sum())), rel=rel)


def test_probe_attention_entropy_matches_output_attentions(esm_dir: Path, gpt2_dir: Path) -> None:
    for folder in (esm_dir, gpt2_dir):
        loaded = load_model(str(folder))
        batch = _batch(loaded)
        layers = _probe(loaded, batch, skips=False)
        with torch.no_grad():
            out = loaded.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, output_attentions=True)
        causal = loaded.adapter.objective == "causal"
        for index, probs in enumerate(out.attentions):  # (batch, heads, seq, seq)
            entropy = -(probs * probs.clamp_min(1e-30).log()).sum(-1)
            mask = batch.attention_mask.float()
            keys = mask.cumsum(-1) if causal else mask.sum(-1, keepdim=True).expand_as(mask)
            usable = batch.real & (keys >= 2)
            normalised = entropy / keys.clamp_min(2).log()[:, None, :]
            expected = normalised.permute(1, 0, 2)[:, usable].mean(-1)  # (heads,)
            assert layers["attention_entropy"][index] == pytest.approx(expected.tolist(), rel=1e-4)


def test_probe_skip_effects_equal_running_the_model_without_the_layer(esm_dir: Path) -> None:
    loaded = load_model(str(esm_dir))
    batch = _batch(loaded)
    layers = _probe(loaded, batch)
    skipped = 1
    states, logits = _hidden_states(loaded.model, batch)
    reduced_states, reduced_logits = _hidden_states(_without_layer(esm_dir, skipped), batch)
    expected = (logits.softmax(-1) - reduced_logits.softmax(-1)).norm(dim=-1)[batch.real].mean()
    assert layers["skip_output_effect"][skipped] == pytest.approx(float(expected), rel=1e-4)
    assert layers["skip_heatmap"][skipped][skipped] == pytest.approx(1.0)
    assert math.isnan(layers["skip_heatmap"][skipped][0])
    # Layer l of the full model is layer l-1 of the reduced one; compare updates D_l for l = s+1 .. L-2.
    for layer in range(skipped + 1, len(states) - 1):
        clean = states[layer + 1] - states[layer]
        perturbed = reduced_states[layer] - reduced_states[layer - 1]
        ratio = (clean - perturbed).norm(dim=-1) / clean.norm(dim=-1)
        expected_row = float(ratio.masked_fill(~batch.real, -1).amax(-1).mean())
        assert layers["skip_heatmap"][skipped][layer] == pytest.approx(expected_row, rel=1e-4)


def test_probe_layer_deletion_equals_model_rebuilt_without_the_layer(esm_dir: Path, gpt2_dir: Path) -> None:
    loaded = load_model(str(esm_dir))
    batch = _batch(loaded)
    layers = _probe(loaded, batch, sublayer_skips=False)
    for skipped in range(loaded.adapter.num_layers):
        _, logits = _hidden_states(_without_layer(esm_dir, skipped), batch)
        assert batch.masked is not None
        predicted, truth = logits[batch.masked], batch.labels[batch.masked]
        accuracy = float((predicted.argmax(-1) == truth).float().mean())
        nll = float(torch.nn.functional.cross_entropy(predicted, truth))
        assert layers["deletion_accuracy"][skipped] == pytest.approx(accuracy)
        assert layers["deletion_nll"][skipped] == pytest.approx(nll, rel=1e-4)
    gpt2 = load_model(str(gpt2_dir))
    batch = _batch(gpt2, SEQUENCES[:1])
    layers = _probe(gpt2, batch, sublayer_skips=False, future=False)
    reduced = load_model(str(gpt2_dir)).model
    reduced.transformer.h = nn.ModuleList([b for i, b in enumerate(reduced.transformer.h) if i != 2])
    with torch.no_grad():
        logits = reduced(input_ids=batch.input_ids, use_cache=False).logits[0, :-1]
    # Next-residue pairs only: the '<|endoftext|>' start (ProtGPT2's convention) predicts no residue pair.
    pairs = batch.real[0, :-1] & batch.real[0, 1:]
    assert batch.input_ids[0, 0] == gpt2.tokenizer.convert_tokens_to_ids("<|endoftext|>") and not pairs[0]
    logits, truth = logits[pairs], batch.input_ids[0, 1:][pairs]
    assert layers["deletion_accuracy"][2] == pytest.approx(float((logits.argmax(-1) == truth).float().mean()))
    assert layers["deletion_nll"][2] == pytest.approx(float(torch.nn.functional.cross_entropy(logits, truth)), rel=1e-4)


def test_probe_sublayer_skip_equals_zeroing_the_output_projection(esm_dir: Path, gpt2_dir: Path) -> None:
    for folder, projections in (
        (esm_dir, {"attn": lambda m: m.esm.encoder.layer[1].attention.output.dense,
                   "mlp": lambda m: m.esm.encoder.layer[1].output.dense}),
        (gpt2_dir, {"attn": lambda m: m.transformer.h[1].attn.c_proj, "mlp": lambda m: m.transformer.h[1].mlp.c_proj}),
    ):
        loaded = load_model(str(folder))
        batch = _batch(loaded)
        layers = _probe(loaded, batch, future=False)
        states, logits = _hidden_states(loaded.model, batch)
        for kind, projection in projections.items():
            zeroed = load_model(str(folder)).model
            with torch.no_grad():
                projection(zeroed).weight.zero_()
                projection(zeroed).bias.zero_()
            zeroed_states, zeroed_logits = _hidden_states(zeroed, batch)
            effect = (logits.softmax(-1) - zeroed_logits.softmax(-1)).norm(dim=-1)[batch.real].mean()
            assert layers[f"skip_{kind}_output_effect"][1] == pytest.approx(float(effect), rel=1e-4)
            layer = 2
            clean = states[layer + 1] - states[layer]
            changed = zeroed_states[layer + 1] - zeroed_states[layer]
            ratio = ((clean - changed).norm(dim=-1) / clean.norm(dim=-1)).masked_fill(~batch.real, -1).amax(-1)
            assert layers[f"skip_{kind}_heatmap"][1][layer] == pytest.approx(float(ratio.mean()), rel=1e-4)


def test_probe_future_effect_matches_manual_gpt2_forward(gpt2_dir: Path) -> None:
    loaded = load_model(str(gpt2_dir))
    model = loaded.model
    batch = _batch(loaded, SEQUENCES[:1])
    skipped = 1
    layers = _probe(loaded, batch, sublayer_skips=False, future_fraction=0.5)
    ids = batch.input_ids
    length = ids.shape[1]
    t = int(future_start(batch, 0.5)[0, 0])
    # '<|endoftext|>' starts the sequence (ProtGPT2's card): t is the first residue plus half the residues
    assert t == 1 + (length - 1) // 2
    causal = torch.full((length, length), float("-inf")).triu(1)[None, None]

    def forward(skip: int | None) -> tuple[list[torch.Tensor], torch.Tensor]:
        hidden = model.transformer.wte(ids) + model.transformer.wpe(torch.arange(length))[None]
        states = [hidden]
        for index, block in enumerate(model.transformer.h):
            out = block(hidden, attention_mask=causal)
            if index == skip:
                out = torch.where((torch.arange(length) < t)[None, :, None], hidden, out)
            hidden = out
            states.append(hidden)
        return states, model.lm_head(model.transformer.ln_f(hidden))

    with torch.no_grad():
        clean, clean_logits = forward(None)
        perturbed, perturbed_logits = forward(skipped)
        reference = model(input_ids=ids, use_cache=False).logits
    assert torch.allclose(clean_logits, reference, atol=1e-5)
    future = torch.arange(length) >= t
    for layer in range(skipped, len(model.transformer.h)):
        d_clean = clean[layer + 1] - clean[layer]
        d_perturbed = perturbed[layer + 1] - perturbed[layer]
        ratio = (d_clean - d_perturbed).norm(dim=-1) / d_clean.norm(dim=-1)
        assert layers["future_heatmap"][skipped][layer] == pytest.approx(float(ratio[0, future].max()), rel=1e-4)
    effect = (clean_logits.softmax(-1) - perturbed_logits.softmax(-1)).norm(dim=-1)[0, future].mean()
    assert layers["future_output_effect"][skipped] == pytest.approx(float(effect), rel=1e-4)
    assert layers["future_heatmap"][skipped][skipped] == pytest.approx(0.0, abs=1e-6)  # measured only at >= t


@functools.cache
def _naive_probe(folder: Path) -> dict:
    """The naive full passes of the model in ``folder``, on ``_batch``: the reference both replay settings are
    compared with, computed once per model (it does not depend on the replay setting)."""
    loaded = load_model(str(folder))
    return _probe(loaded, _batch(loaded), naive=True)


@pytest.mark.parametrize("which", ["esm", "gpt2"])
@pytest.mark.parametrize("replay_tokens", [0, 10_000])
def test_probe_prefix_reuse_equals_naive_full_passes(
    which: str, replay_tokens: int, esm_dir: Path, gpt2_dir: Path
) -> None:
    folder = esm_dir if which == "esm" else gpt2_dir
    loaded = load_model(str(folder))
    batch = _batch(loaded)  # three lengths: padding inside the batch
    fast = _probe(loaded, batch, replay_tokens=replay_tokens)
    slow = _naive_probe(folder)
    compared = [k for k in fast if k.startswith(("skip", "future", "deletion"))]
    assert len(compared) >= (12 if which == "gpt2" else 11)
    for key in compared:
        assert torch.allclose(
            torch.tensor(fast[key], dtype=torch.float64), torch.tensor(slow[key], dtype=torch.float64),
            rtol=1e-4, atol=1e-6, equal_nan=True,
        ), key


def test_probe_results_do_not_depend_on_batch_size(esm_dir: Path) -> None:
    loaded = load_model(str(esm_dir))
    options = ProbeOptions()
    one = probe_model(loaded, _records(), options, batch_size=1, seed=5)
    three = probe_model(loaded, _records(), options, batch_size=3, seed=5)
    for key in ("logit_lens_kl_masked", "erank", "skip_output_effect", "deletion_perplexity", "attention_entropy_mean"):
        assert torch.allclose(torch.tensor(one[key]), torch.tensor(three[key]), rtol=1e-4), key


def test_probe_bert_reports_post_ln_and_runs_layer_probes(tmp_path: Path) -> None:
    from transformers import BertConfig, BertForMaskedLM

    from analyzers.depth.training import save_esm_tokenizer

    save_esm_tokenizer(tmp_path)  # any vocabulary works for the probes
    config = BertConfig(vocab_size=33, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, architectures=["BertForMaskedLM"])
    torch.manual_seed(0)
    BertForMaskedLM(config).save_pretrained(tmp_path)
    loaded = load_model(str(tmp_path))
    assert not loaded.adapter.pre_ln
    ids = torch.randint(4, 24, (2, 7), generator=torch.Generator().manual_seed(0))
    batch = Batch(ids, torch.ones_like(ids), torch.ones_like(ids).bool(), ids.clone(), None)
    layers = _probe(loaded, batch)
    assert layers["contribution"] == "post-LN: residual decomposition not defined"
    assert "skip_attn_heatmap" not in layers and len(layers["skip_heatmap"]) == 2
    assert layers["logit_lens_kl"][-1] == pytest.approx(0, abs=1e-6)


def test_adapter_unsupported_architecture_names_supported() -> None:
    supported = "EsmForMaskedLM, EsmcForMaskedLM, GPT2LMHeadModel, CodeGenForCausalLM, BertForMaskedLM"
    with pytest.raises(UnsupportedArchitecture, match=supported):
        adapter_for(torch.nn.Linear(2, 2))


def test_logit_lens_in_row_chunks_equals_whole_batch(esm_dir: Path) -> None:
    from analyzers.depth.instrument import CleanPass
    from analyzers.depth.probes import logit_lens

    loaded = load_model(str(esm_dir))
    batch = _batch(loaded)
    passer = CleanPass(loaded.adapter, record_calls=False)
    with torch.no_grad(), passer.active() as record:
        record.logits = loaded.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits
    results = []
    for max_elements in (1, 1 << 26):  # one sequence at a time, and the whole batch
        accumulator = ProbeAccumulator(4, "masked", True)
        with torch.no_grad():
            logit_lens(accumulator, loaded.adapter, record, batch, 5, max_elements)
        results.append(accumulator.finish())
    for key in ("logit_lens_kl", "logit_lens_topk_masked", "logit_lens_top1"):
        assert results[0][key] == pytest.approx(results[1][key], rel=1e-6)
