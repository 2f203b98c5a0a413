"""The paper's PLM families through kb's loader, each on a tiny random model the test builds and saves in
its hub layout: ESM-C (``EsmcForMaskedLM``, scaled residual branches), DPLM (ESM-2 weights under
``EsmForDPLM``, probed at a noise level), ProGen2 (a ``ProGenForCausalLM`` checkpoint converted to
CodeGen), ProtGPT2 (the model card's input convention) and SaProt (3Di structure tokens, amino-acid
accuracy). The logit lens, the contributions and the skip heatmap are checked against independent
computations: float64 forwards written here from the checkpoint's own tensors (ESM-C, ProGen2) or the
transformers model re-run with the layer removed (DPLM, SaProt, ProtGPT2)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from torch import nn

from analyzers.base import NotRunnable
from analyzers.depth.batches import Batch, encode
from analyzers.depth.compute import probe_model
from analyzers.depth.data import Record, attach_structures
from analyzers.depth.loading import LoadedModel, load_model, progen_qkv_to_codegen, resolve_model
from analyzers.depth.probes import ProbeAccumulator, ProbeOptions, clean_pass, reshape_contributions
from analyzers.depth.skips import skip_probes
from analyzers.depth.tiny import (
    build_random_dplm,
    build_random_esmc,
    build_random_gpt2,
    build_random_progen2,
    build_random_saprot,
)

SEQUENCES = ("MKTAYIAKQRQISFVKSHFSRQ", "ACDEFGHIKLMNPQ", "GSHMLEDPVRRW")
Forward = Callable[[int | None], tuple[list[torch.Tensor], torch.Tensor]]  # skip -> (h_0..h_L, logits)


def _records(sequences: tuple[str, ...] = SEQUENCES) -> list[Record]:
    return [Record(f"r{i}", f"r{i}", s) for i, s in enumerate(sequences)]


def _probe(loaded: LoadedModel, batch: Batch, **options: object) -> dict:
    accumulator = ProbeAccumulator(loaded.adapter.num_layers, loaded.adapter.objective, loaded.adapter.pre_ln)
    probe_options = ProbeOptions(sublayer_skips=False, future=False, **options)  # type: ignore[arg-type]
    record = clean_pass(loaded.model, loaded.adapter, batch, accumulator, probe_options)
    skip_probes(loaded.model, loaded.adapter, record, batch, accumulator, probe_options)
    layers = accumulator.finish()
    reshape_contributions(layers)
    return layers


def _lens_kl(states: list[torch.Tensor], logits: torch.Tensor, lens: Callable[[torch.Tensor], torch.Tensor],
             where: torch.Tensor) -> list[float]:
    """KL(p_l || p_L) at ``where``, averaged, for every state ``h_l`` (an independent logit lens)."""
    final = logits.double().log_softmax(-1)
    out = []
    for hidden in states:
        log_lens = lens(hidden).double().log_softmax(-1)
        out.append(float((log_lens.exp() * (log_lens - final)).sum(-1)[where].mean()))
    return out


def _skip_row(forward: Forward, skipped: int, where: torch.Tensor) -> tuple[list[float], float]:
    """Heatmap row ``s`` (mean over sequences of the max over positions of ||D_l - D'_l|| / ||D_l||, l >= s)
    and the output effect (mean ||softmax(z) - softmax(z')||) of skipping layer ``skipped``, from two
    full forward passes."""
    clean_states, clean_logits = forward(None)
    states, logits = forward(skipped)
    row = []
    for layer in range(skipped, len(states) - 1):
        clean = clean_states[layer + 1] - clean_states[layer]
        changed = states[layer + 1] - states[layer]
        ratio = (clean - changed).norm(dim=-1) / clean.norm(dim=-1)
        row.append(float(ratio.masked_fill(~where, -1).amax(-1)[where.any(-1)].mean()))
    effect = (clean_logits.double().softmax(-1) - logits.double().softmax(-1)).norm(dim=-1)[where].mean()
    return row, float(effect)


def _check_skips(layers: dict, forward: Forward, where: torch.Tensor, rel: float = 1e-4) -> None:
    for skipped in range(layers["num_layers"]):
        row, effect = _skip_row(forward, skipped, where)
        assert layers["skip_heatmap"][skipped][skipped:] == pytest.approx(row, rel=rel, abs=1e-6)
        assert layers["skip_output_effect"][skipped] == pytest.approx(effect, rel=rel, abs=1e-7)
    assert max(layers["skip_output_effect"]) > 1e-3  # the checks above compared something that moves


# ---------------------------------------------------------------- ESM-C


def _layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, eps: float = 1e-5) -> torch.Tensor:
    centered = x - x.mean(-1, keepdim=True)
    out = centered / (centered.pow(2).mean(-1, keepdim=True) + eps).sqrt() * weight
    return out if bias is None else out + bias


def _esmc_forward(model: nn.Module, batch: Batch) -> tuple[Forward, Callable[[torch.Tensor], torch.Tensor]]:
    """ESM-C written out in float64 from the checkpoint's tensors: pre-LN blocks with QK-LayerNorm, rotary
    positions (rotate-half), SwiGLU MLP, each residual branch divided by sqrt(L / 36)."""
    weights = {k: v.double() for k, v in model.state_dict().items()}
    config = model.config
    num_layers, heads = config.num_hidden_layers, config.num_attention_heads
    width = config.hidden_size
    head_dim = width // heads
    scale = math.sqrt(num_layers / 36)
    ids, keep = batch.input_ids, batch.attention_mask.bool()
    length = ids.shape[1]
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    angles = torch.arange(length, dtype=torch.float64)[:, None] * inv_freq[None]
    cos, sin = torch.cat([angles, angles], -1).cos(), torch.cat([angles, angles], -1).sin()  # (seq, head_dim)

    def rotate(x: torch.Tensor) -> torch.Tensor:  # (batch, heads, seq, head_dim)
        half = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin

    def forward(skip: int | None) -> tuple[list[torch.Tensor], torch.Tensor]:
        hidden = weights["esmc.embed_tokens.weight"][ids]  # (batch, seq, width)
        states = [hidden]
        for index in range(num_layers):
            p = f"esmc.layers.{index}."
            if index != skip:
                x = _layer_norm(hidden, weights[p + "input_layernorm.weight"], weights[p + "input_layernorm.bias"])
                attn = p + "self_attn."
                q = _layer_norm(x @ weights[attn + "q_proj.weight"].T, weights[attn + "q_norm.weight"], None)
                k = _layer_norm(x @ weights[attn + "k_proj.weight"].T, weights[attn + "k_norm.weight"], None)
                v = x @ weights[p + "self_attn.v_proj.weight"].T

                def split(t: torch.Tensor) -> torch.Tensor:
                    return t.view(*t.shape[:2], heads, head_dim).transpose(1, 2)  # (batch, heads, seq, head_dim)

                scores = rotate(split(q)) @ rotate(split(k)).transpose(-1, -2) / math.sqrt(head_dim)
                scores = scores.masked_fill(~keep[:, None, None, :], float("-inf"))
                context = (scores.softmax(-1) @ split(v)).transpose(1, 2).reshape(hidden.shape)
                hidden = hidden + context @ weights[p + "self_attn.o_proj.weight"].T / scale
                y = _layer_norm(hidden, weights[p + "post_attention_layernorm.weight"],
                                weights[p + "post_attention_layernorm.bias"])
                gate = torch.nn.functional.silu(y @ weights[p + "mlp.gate_proj.weight"].T)
                mlp = (gate * (y @ weights[p + "mlp.up_proj.weight"].T)) @ weights[p + "mlp.down_proj.weight"].T
                hidden = hidden + mlp / scale
            states.append(hidden)
        return states, lens(states[-1])

    def lens(hidden: torch.Tensor) -> torch.Tensor:
        normed = _layer_norm(hidden, weights["esmc.norm.weight"], None)
        x = torch.nn.functional.gelu(normed @ weights["lm_head.dense.weight"].T + weights["lm_head.dense.bias"])
        x = _layer_norm(x, weights["lm_head.layer_norm.weight"], weights["lm_head.layer_norm.bias"])
        return x @ weights["lm_head.decoder.weight"].T + weights["lm_head.decoder.bias"]

    return forward, lens


def test_esmc_probes_match_float64_forward_with_residual_scaling_undone(tmp_path: Path) -> None:
    loaded = load_model(str(build_random_esmc(tmp_path / "esmc", num_layers=3, width=32, num_heads=4)))
    assert loaded.adapter.architecture == "EsmcForMaskedLM" and loaded.adapter.residual_scale == pytest.approx(
        math.sqrt(3 / 36))
    batch = encode(_records(), loaded.tokenizer, loaded.input_format, 0.15, seed=2)
    layers = _probe(loaded, batch)
    forward, lens = _esmc_forward(loaded.model, batch)
    states, logits = forward(None)
    with torch.no_grad():
        model_logits = loaded.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits
    assert torch.allclose(model_logits.double()[batch.real], logits[batch.real], atol=1e-4)
    assert layers["logit_lens_kl"] == pytest.approx(_lens_kl(states, logits, lens, batch.real), rel=1e-4, abs=1e-7)
    assert layers["logit_lens_kl_masked"] == pytest.approx(_lens_kl(states, logits, lens, batch.masked), rel=1e-4,
                                                           abs=1e-7)
    # ||a_l + m_l|| / ||h_l|| with a_l + m_l = h_{l+1} - h_l, the update the residual stream receives
    # (branch / scale): a probe that left the scale in would read 1 / sqrt(3/36) = 3.5x too high.
    for layer in range(3):
        h = states[layer]
        block = (states[layer + 1] - h).norm(dim=-1) / h.norm(dim=-1)
        defined = batch.real & (h.norm(dim=-1) > 1e-6)
        assert layers["contribution"]["block"][layer] == pytest.approx(float(block[defined].mean()), rel=1e-4)
    _check_skips(layers, forward, batch.real)


# ---------------------------------------------------------------- ProGen2


def _gelu_new(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x.pow(3))))


def _progen_forward(state: dict[str, torch.Tensor], config: dict, ids: torch.Tensor) -> tuple[Forward, Callable]:
    """ProGen2 as its own code computes it, in float64, from the checkpoint as saved (fused qkv rows in 8
    groups of [q | v | k], rotate-every-two rotary on the first ``rotary_dim`` dims of each head, GPT-J
    parallel attention and MLP, causal attention)."""
    weights = {k: v.double() for k, v in state.items() if v.is_floating_point()}
    width, heads, rotary = config["n_embd"], config["n_head"], config["rotary_dim"]
    head_dim, groups = width // heads, 8
    length = ids.shape[1]
    inv_freq = 1.0 / (10000 ** (torch.arange(0, rotary, 2, dtype=torch.float64) / rotary))
    angles = torch.arange(length, dtype=torch.float64)[:, None] * inv_freq[None]  # (seq, rotary / 2)
    sin, cos = angles.sin().repeat_interleave(2, -1), angles.cos().repeat_interleave(2, -1)  # (seq, rotary)

    def rotate(x: torch.Tensor) -> torch.Tensor:  # (batch, seq, heads, head_dim)
        part, rest = x[..., :rotary], x[..., rotary:]
        turned = torch.stack([-part[..., 1::2], part[..., ::2]], -1).flatten(-2)
        return torch.cat([part * cos[:, None] + turned * sin[:, None], rest], -1)

    causal = torch.ones(length, length, dtype=torch.bool).tril()

    def forward(skip: int | None) -> tuple[list[torch.Tensor], torch.Tensor]:
        hidden = weights["transformer.wte.weight"][ids]
        states = [hidden]
        for index in range(config["n_layer"]):
            p = f"transformer.h.{index}."
            if index != skip:
                x = _layer_norm(hidden, weights[p + "ln_1.weight"], weights[p + "ln_1.bias"])
                qkv = (x @ weights[p + "attn.qkv_proj.weight"].T).view(*x.shape[:2], groups, 3 * width // groups)
                q, v, k = qkv.split(width // groups, -1)  # each (batch, seq, groups, width / groups)
                q, k, v = (t.reshape(*x.shape[:2], heads, head_dim) for t in (q, k, v))
                q, k = rotate(q), rotate(k)
                scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(head_dim)
                scores = scores.masked_fill(~causal, float("-inf"))
                context = torch.einsum("bhqk,bkhd->bqhd", scores.softmax(-1), v).reshape(x.shape)
                attn = context @ weights[p + "attn.out_proj.weight"].T
                mlp = _gelu_new(x @ weights[p + "mlp.fc_in.weight"].T + weights[p + "mlp.fc_in.bias"])
                mlp = mlp @ weights[p + "mlp.fc_out.weight"].T + weights[p + "mlp.fc_out.bias"]
                hidden = hidden + attn + mlp
            states.append(hidden)
        return states, lens(states[-1])

    def lens(hidden: torch.Tensor) -> torch.Tensor:
        normed = _layer_norm(hidden, weights["transformer.ln_f.weight"], weights["transformer.ln_f.bias"])
        return normed @ weights["lm_head.weight"].T + weights["lm_head.bias"]

    return forward, lens


def test_progen_qkv_permutation_regroups_heads() -> None:
    width, groups_from = 16, 8
    rows = torch.arange(3 * width, dtype=torch.float64)[:, None].repeat(1, width)  # row r holds r
    converted = progen_qkv_to_codegen(rows, groups_from, 4)
    local_from, local_to = width // groups_from, width // 4
    # ProGen2 row of query unit u (0..width-1): group u // local_from, offset u % local_from, q first.
    for unit in range(width):
        for kind in range(3):  # q, v, k
            source = (unit // local_from) * 3 * local_from + kind * local_from + unit % local_from
            target = (unit // local_to) * 3 * local_to + kind * local_to + unit % local_to
            assert converted[target, 0] == source
    assert torch.equal(progen_qkv_to_codegen(rows, 4, 4), rows)


def test_progen2_checkpoint_converts_to_codegen_and_probes_match_progen_forward(tmp_path: Path) -> None:
    import json

    folder, state = build_random_progen2(tmp_path / "progen2", num_layers=3, width=64, num_heads=8, rotary_dim=4)
    loaded = load_model(str(folder))
    assert loaded.provenance["checkpoint_architecture"] == "ProGenForCausalLM"
    assert loaded.adapter.architecture == "CodeGenForCausalLM" and loaded.input_format == "progen2"
    batch = encode(_records(SEQUENCES[:1]), loaded.tokenizer, loaded.input_format)
    tokens = loaded.tokenizer.convert_ids_to_tokens(batch.input_ids[0])
    assert tokens[0] == "1" and tokens[-1] == "2" and int(batch.real.sum()) == len(SEQUENCES[0])
    layers = _probe(loaded, batch)
    forward, lens = _progen_forward(state, json.loads((folder / "config.json").read_text()), batch.input_ids)
    states, logits = forward(None)
    with torch.no_grad():
        model_logits = loaded.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits
    assert torch.allclose(model_logits.double(), logits, atol=1e-4)  # the conversion computes ProGen2
    assert layers["logit_lens_kl"] == pytest.approx(_lens_kl(states, logits, lens, batch.real), rel=1e-4, abs=1e-7)
    _check_skips(layers, forward, batch.real)
    # Unpermuted weights (CodeGen reading ProGen2's layout as is) give another model: the test can fail.
    wrong = load_model(str(folder)).model
    with torch.no_grad():
        for index in range(3):
            wrong.transformer.h[index].attn.qkv_proj.weight.copy_(state[f"transformer.h.{index}.attn.qkv_proj.weight"])
        assert not torch.allclose(wrong(input_ids=batch.input_ids).logits.double(), logits, atol=1e-3)


# ---------------------------------------------------------------- DPLM


def test_dplm_loads_as_esm_and_probes_at_the_noise_level(tmp_path: Path) -> None:
    from safetensors.torch import load_file
    from transformers import EsmConfig, EsmForMaskedLM

    folder = build_random_dplm(tmp_path / "dplm", num_layers=3, width=32, num_heads=4)
    loaded = load_model(str(folder))
    assert loaded.adapter.objective == "diffusion" and loaded.provenance["checkpoint_architecture"] == "EsmForDPLM"
    # Noise level 0.8: each residue masked with probability 0.8, as DPLM's q_sample does at step t = 400.
    many = [Record(f"s{i}", "", "".join("ACDEFGHIKLMNPQRSTVWY"[(7 * i + 3 * j) % 20] for j in range(40)))
            for i in range(40)]
    batch = encode(many, loaded.tokenizer, loaded.input_format, 0.8, seed=0)
    assert batch.masked is not None
    assert float(batch.masked.sum() / batch.real.sum()) == pytest.approx(0.8, abs=0.03)
    layers = probe_model(loaded, _records(), ProbeOptions(sublayer_skips=False), noise_level=0.8)
    assert "diffusion noise level 0.8 (step 400 of 500)" in layers["evaluation"]
    # An independent copy: the raw tensors read here, prefix removed, into a plain EsmForMaskedLM.
    reference = EsmForMaskedLM(EsmConfig.from_pretrained(folder)).eval()
    state = {k.removeprefix("net."): v for k, v in load_file(folder / "model.safetensors").items()}
    reference.load_state_dict(state, strict=False)
    reference.tie_weights()
    batch = encode(_records(), loaded.tokenizer, loaded.input_format, 0.8, seed=0)
    probed = _probe(loaded, batch)

    def forward(skip: int | None) -> tuple[list[torch.Tensor], torch.Tensor]:
        saved = reference.esm.encoder.layer
        if skip is not None:
            reference.esm.encoder.layer = nn.ModuleList([m for i, m in enumerate(saved) if i != skip])
        with torch.no_grad():
            out = reference(input_ids=batch.input_ids, attention_mask=batch.attention_mask, output_hidden_states=True)
        reference.esm.encoder.layer = saved
        return list(out.hidden_states[:-1]), out.logits  # layer inputs (the last entry is after the final norm)

    def lens(hidden: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return reference.lm_head(reference.esm.encoder.emb_layer_norm_after(hidden))

    states, logits = forward(None)
    assert batch.masked is not None
    assert probed["logit_lens_kl_masked"][:-1] == pytest.approx(_lens_kl(states, logits, lens, batch.masked),
                                                                rel=1e-4, abs=1e-7)
    assert probed["logit_lens_kl"][:-1] == pytest.approx(_lens_kl(states, logits, lens, batch.real), rel=1e-4,
                                                         abs=1e-7)
    for skipped in range(3):
        _, skipped_logits = forward(skipped)
        effect = (logits.softmax(-1) - skipped_logits.softmax(-1)).norm(dim=-1)[batch.real].mean()
        assert probed["skip_output_effect"][skipped] == pytest.approx(float(effect), rel=1e-4)
        accuracy = (skipped_logits[batch.masked].argmax(-1) == batch.labels[batch.masked]).double().mean()
        assert probed["deletion_accuracy"][skipped] == pytest.approx(float(accuracy))


# ---------------------------------------------------------------- SaProt


def test_saprot_structure_tokens_and_accuracy_summed_over_structure_letters(tmp_path: Path) -> None:
    loaded = load_model(str(build_random_saprot(tmp_path / "saprot", num_layers=2, width=32, num_heads=4)))
    assert loaded.input_format == "saprot" and loaded.adapter.residue_onehot is not None
    vocab = loaded.tokenizer.get_vocab()
    records = attach_structures([Record("a", "a", "AAAAAAAAAAAA")], {"a": "dddddvvvvv##"}, "structures.fasta")
    batch = encode(records, loaded.tokenizer, loaded.input_format, 0.3, seed=1)
    tokens = loaded.tokenizer.convert_ids_to_tokens(batch.input_ids[0])
    assert tokens[1:6] == ["Ad"] * 5 or "#d" in tokens[1:6]  # residue x 3Di tokens
    assert batch.masked is not None
    for position in batch.masked[0].nonzero().squeeze(1).tolist():  # residue hidden, 3Di letter kept
        letter = "dddddvvvvv##"[position - 1]
        assert tokens[position] == (f"#{letter}" if letter != "#" else "<mask>")
    # A planted head: every logit is its bias. 'A' spreads its probability over its 21 structure tokens,
    # 'C' puts more on one token than any single 'A' token: the token argmax says C, the sum says A.
    head = loaded.model.lm_head
    with torch.no_grad():
        head.decoder.weight.zero_()
        head.bias.fill_(-30.0)
        for token, index in vocab.items():
            if token.startswith("A") and len(token) == 2:
                head.bias[index] = 0.0
        head.bias[vocab["Cd"]] = math.log(5.0)
    layers = _probe(loaded, batch)
    assert layers["baseline_accuracy"] == 1.0  # summed over structure letters, every masked 'A' is right
    share_a = 21 / (21 + 5 + (len(vocab) - 22) * math.exp(-30))
    assert layers["baseline_nll"] == pytest.approx(-math.log(share_a), rel=1e-5)
    probed = probe_model(loaded, records, ProbeOptions(sublayer_skips=False), mask_fraction=0.3, seed=1)
    assert probed["baseline_accuracy"] == 1.0
    assert probed["baseline_perplexity"] == pytest.approx(1 / share_a, rel=1e-5)
    assert "over amino acids" in probed["evaluation"]
    with torch.no_grad():
        token_argmax = loaded.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits.argmax(-1)
    assert (token_argmax[batch.masked] == vocab["Cd"]).all()  # a per-token accuracy would have read 0
    with pytest.raises(ValueError, match="10 3Di letters for 12 residues"):
        attach_structures([Record("a", "a", "A" * 12)], {"a": "d" * 10}, "structures.fasta")


def test_saprot_deletion_accuracy_sums_structure_letters_of_the_model_without_the_layer(tmp_path: Path) -> None:
    loaded = load_model(str(build_random_saprot(tmp_path / "saprot", num_layers=3, width=32, num_heads=4, seed=3)))
    records = attach_structures(_records(SEQUENCES[:2]), {"r0": "d" * 22, "r1": "#" * 7 + "p" * 7}, "s.fasta")
    batch = encode(records, loaded.tokenizer, loaded.input_format, 0.4, seed=5)
    layers = _probe(loaded, batch)
    vocab = loaded.tokenizer.get_vocab()
    amino = "ACDEFGHIKLMNPQRSTVWY"
    assert batch.masked is not None
    for skipped in range(3):
        reduced = load_model(str(loaded.resolved.folder)).model
        reduced.esm.encoder.layer = nn.ModuleList([m for i, m in enumerate(reduced.esm.encoder.layer) if i != skipped])
        with torch.no_grad():
            probs = reduced(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits.softmax(-1)
        correct = []
        for b, position in batch.masked.nonzero().tolist():
            truth = loaded.tokenizer.convert_ids_to_tokens(int(batch.labels[b, position]))[0]
            summed = {a: sum(float(probs[b, position, i]) for t, i in vocab.items() if len(t) == 2 and t[0] == a)
                      for a in amino}
            correct.append(max(summed, key=summed.__getitem__) == truth)
        assert layers["deletion_accuracy"][skipped] == pytest.approx(sum(correct) / len(correct))


# ---------------------------------------------------------------- ProtGPT2


def test_protgpt2_input_starts_with_endoftext_and_breaks_lines_every_60_residues(tmp_path: Path) -> None:
    loaded = load_model(str(build_random_gpt2(tmp_path / "gpt2", num_layers=3, width=32, num_heads=4)))
    assert loaded.input_format == "protgpt2"
    long = "".join("ACDEFGHIKLMNPQRSTVWY"[(i * 7) % 20] for i in range(130))
    batch = encode([Record("long", "long", long)], loaded.tokenizer, loaded.input_format)
    tokens = loaded.tokenizer.convert_ids_to_tokens(batch.input_ids[0])
    assert tokens[0] == "<|endoftext|>" and tokens[61] == "\n" and tokens[122] == "\n" and len(tokens) == 133
    assert int(batch.real.sum()) == 130 and not batch.real[0, [0, 61, 122]].any()
    layers = _probe(loaded, batch)
    model = loaded.model

    def forward(skip: int | None) -> tuple[list[torch.Tensor], torch.Tensor]:
        saved = model.transformer.h
        if skip is not None:
            model.transformer.h = nn.ModuleList([m for i, m in enumerate(saved) if i != skip])
        with torch.no_grad():
            out = model(input_ids=batch.input_ids, output_hidden_states=True)
        model.transformer.h = saved
        return list(out.hidden_states), out.logits

    with torch.no_grad():
        states, logits = forward(None)
        lens_kl = _lens_kl(states[:-1], logits, lambda h: model.lm_head(model.transformer.ln_f(h)), batch.real)
    assert layers["logit_lens_kl"][:-1] == pytest.approx(lens_kl, rel=1e-4, abs=1e-7)
    for skipped in range(3):
        _, skipped_logits = forward(skipped)
        effect = (logits.softmax(-1) - skipped_logits.softmax(-1)).norm(dim=-1)[batch.real].mean()
        assert layers["skip_output_effect"][skipped] == pytest.approx(float(effect), rel=1e-4)


# ---------------------------------------------------------------- hub ids


@pytest.mark.parametrize("hub_id", ["biohub/ESMC-300M", "airkingbd/dplm_150m", "hugohrban/progen2-small",
                                    "westlake-repl/SaProt_35M_AF2", "nferruz/ProtGPT2"])
def test_family_hub_ids_fail_fast_offline_with_how_to_provide(hub_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(NotRunnable) as error:
        resolve_model(hub_id)
    message = str(error.value)
    assert "\n" not in message and f"kb models pull {hub_id}" in message and "HF_HUB_OFFLINE" in message
