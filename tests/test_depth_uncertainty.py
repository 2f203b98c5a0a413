"""Standard errors of the ``depth.probe`` metrics and the new per-sequence metrics (issue 26), against an
independent computation: each sequence run on its own through a tiny real ESM model built here, its per-sequence
quantity computed by hand (transformers' own outputs, numpy SVD), and the delete-one jackknife written out."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from analyzers.base import result_record
from analyzers.depth.batches import encode
from analyzers.depth.compute import family_result, probe_checks, probe_model, summarize
from analyzers.depth.data import Record
from analyzers.depth.loading import LoadedModel, load_model
from analyzers.depth.probes import ProbeOptions
from analyzers.depth.spec import DepthProbe, DepthProbeResult
from analyzers.depth.sweep import deepest_rise
from analyzers.depth.tiny import build_random_esm
from analyzers.depth.training import TokenScores
from analyzers.depth.uncertainty import family_trend, probe_estimates
from schemas import EvidenceScale

SEQUENCES = ("MKTAYIAKQRQISFVKSHFSRQ", "ACDEFGHIKLMNPQ", "GSHMLEDPVRRW", "MSTNPKPQRKTKRNTNRRPQDVKFPGG",
             "MQIFVKTLTGKTITLEV", "PEPTIDESEQWENCE")
MASK, SEED = 0.3, 3


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> LoadedModel:
    folder = build_random_esm(tmp_path_factory.mktemp("esm") / "tiny", num_layers=4, width=32, num_heads=4, seed=0)
    loaded = load_model(str(folder))
    with torch.no_grad():  # sharpen the random attention, whose entropy would otherwise be ~1 everywhere
        for index, layer in enumerate(loaded.model.esm.encoder.layer):
            layer.attention.self.query.weight.mul_(2.0 + 2 * index)
            layer.attention.self.key.weight.mul_(2.0 + 2 * index)
    return loaded


@pytest.fixture(scope="module")
def probed(loaded: LoadedModel) -> tuple[dict, dict]:
    records = [Record(f"r{i}", f"r{i}", s) for i, s in enumerate(SEQUENCES)]
    layers = probe_model(loaded, records, ProbeOptions(sublayer_skips=False), batch_size=4, mask_fraction=MASK,
                         seed=SEED)
    estimates = probe_estimates(layers.pop("per_sequence"), loaded.adapter.num_layers)
    return layers, estimates


def jackknife_ratio(sums: np.ndarray, counts: np.ndarray, transform=lambda x: x) -> tuple[float, float]:  # noqa: ANN001
    """Delete-one jackknife of transform(sum / count), written out."""
    n = len(sums)
    left = np.array([transform((sums.sum() - sums[i]) / (counts.sum() - counts[i])) for i in range(n)])
    return transform(sums.sum() / counts.sum()), math.sqrt((n - 1) / n * ((left - left.mean()) ** 2).sum())


@pytest.fixture(scope="module")
def runs(loaded: LoadedModel) -> list[dict]:
    return per_sequence(loaded)


def per_sequence(loaded: LoadedModel) -> list[dict]:
    """Each sequence alone: its masked positions, states h_0..h_L (h_L before the final norm), logits and
    attention probabilities, from transformers' own outputs."""
    model, out = loaded.model, []
    for index, sequence in enumerate(SEQUENCES):
        batch = encode([Record(f"r{index}", f"r{index}", sequence)], loaded.tokenizer, loaded.input_format, MASK,
                       seed=SEED)
        captured: list[torch.Tensor] = []
        def keep(_module: torch.nn.Module, _args: tuple, output: torch.Tensor | tuple,
                 into: list[torch.Tensor] = captured) -> None:
            into.append(output[0] if isinstance(output, tuple) else output)

        hook = model.esm.encoder.layer[-1].register_forward_hook(keep)
        with torch.no_grad():
            result = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, output_hidden_states=True,
                           output_attentions=True)
        hook.remove()
        states = [*result.hidden_states[:-1], captured[0]]
        out.append({"batch": batch, "states": states, "logits": result.logits, "attentions": result.attentions})
    return out


def test_baseline_accuracy_and_lens_perplexity_errors_match_a_hand_jackknife(
        loaded: LoadedModel, probed: tuple[dict, dict], runs: list[dict]) -> None:
    layers, estimates = probed
    correct, counts = [], []
    nll = np.zeros((len(runs), len(runs[0]["states"])))
    for i, run in enumerate(runs):
        batch, masked = run["batch"], run["batch"].masked
        predicted = run["logits"].argmax(-1)
        correct.append(float((predicted == batch.labels)[masked].sum()))
        counts.append(float(masked.sum()))
        for layer, hidden in enumerate(run["states"]):
            with torch.no_grad():
                lens = loaded.model.lm_head(loaded.model.esm.encoder.emb_layer_norm_after(hidden)).log_softmax(-1)
            nll[i, layer] = -float(lens.gather(-1, batch.labels[..., None]).squeeze(-1)[masked].sum())
    value, error = jackknife_ratio(np.array(correct), np.array(counts))
    assert estimates["baseline_accuracy"][0] == pytest.approx(value, rel=1e-6) == layers["baseline_accuracy"]
    assert estimates["baseline_accuracy"][1] == pytest.approx(error, rel=1e-6) and error > 0
    for layer in range(nll.shape[1]):
        value, error = jackknife_ratio(nll[:, layer], np.array(counts), np.exp)
        assert estimates["lens_perplexity_by_layer"][0][layer] == pytest.approx(value, rel=1e-5)
        assert estimates["lens_perplexity_by_layer"][1][layer] == pytest.approx(error, rel=1e-4)
    # read at the last state, the lens is the model itself
    assert estimates["lens_perplexity_by_layer"][0][-1] == pytest.approx(layers["baseline_perplexity"], rel=1e-6)


def test_stable_rank_retention_and_rank_collapse_match_numpy_svd_per_sequence(probed: tuple[dict, dict],
                                                                              runs: list[dict]) -> None:
    _, estimates = probed
    retention, slopes, stable_slopes = [], [], []
    for run in runs:
        real = run["batch"].real[0]
        singular = [np.linalg.svd(h[0][real].double().numpy(), compute_uv=False) for h in run["states"]]
        stable = np.array([float((s**2).sum() / (s**2).max()) for s in singular])
        erank = np.array([math.exp(-(p := s / s.sum())[p > 0].dot(np.log(p[p > 0]))) for s in singular])
        retention.append(stable[-1] / stable[0])
        depth = np.linspace(0, 1, len(erank))
        slopes.append(np.polyfit(depth, erank / erank[0], 1)[0])
        stable_slopes.append(np.polyfit(depth, stable / stable[0], 1)[0])
    for name, values in (("stable_rank_retention", retention), ("rank_collapse_slope", slopes),
                         ("stable_rank_collapse_slope", stable_slopes)):
        value, error = estimates[name]
        assert value == pytest.approx(np.mean(values), rel=1e-6)
        assert error == pytest.approx(np.std(values, ddof=1) / math.sqrt(len(values)), rel=1e-5)


def test_attention_entropy_by_layer_and_slope_match_output_attentions(probed: tuple[dict, dict],
                                                                       runs: list[dict]) -> None:
    _, estimates = probed
    num_layers = len(runs[0]["attentions"])
    sums = np.zeros((len(runs), num_layers, 4))
    counts = np.zeros((len(runs), 1, 1))
    for i, run in enumerate(runs):
        batch = run["batch"]
        keys = batch.attention_mask.float().sum(-1, keepdim=True).expand_as(batch.attention_mask.float())
        usable = batch.real & (keys >= 2)
        for layer, probs in enumerate(run["attentions"]):  # (1, heads, seq, seq)
            entropy = -(probs * probs.clamp_min(1e-30).log()).sum(-1) / keys.clamp_min(2).log()[:, None, :]
            sums[i, layer] = entropy[0][:, usable[0]].sum(-1).numpy()
        counts[i] = float(usable.sum())

    def by_layer(total: np.ndarray, count: np.ndarray) -> np.ndarray:
        return (total / count).mean(-1)  # mean over heads of each head's token mean

    n = len(runs)
    left = np.array([by_layer(sums.sum(0) - sums[i], counts.sum(0) - counts[i]) for i in range(n)])
    full = by_layer(sums.sum(0), counts.sum(0))
    errors = np.sqrt((n - 1) / n * ((left - left.mean(0)) ** 2).sum(0))
    assert estimates["attention_entropy_by_layer"][0] == pytest.approx(full.tolist(), rel=1e-5)
    assert estimates["attention_entropy_by_layer"][1] == pytest.approx(errors.tolist(), rel=1e-3)
    x = np.linspace(0, 1, num_layers)
    slopes = np.array([np.polyfit(x, row, 1)[0] for row in left])
    assert estimates["attention_entropy_depth_slope"][0] == pytest.approx(np.polyfit(x, full, 1)[0], rel=1e-5)
    assert estimates["attention_entropy_depth_slope"][1] == pytest.approx(
        math.sqrt((n - 1) / n * ((slopes - slopes.mean()) ** 2).sum()), rel=1e-3)


def test_jackknife_values_equal_the_pooled_summary_and_every_scalar_gets_an_error(probed: tuple[dict, dict]) -> None:
    layers, estimates = probed
    summary = summarize(layers)
    for name in ("late_half_kl_drop_fraction", "late_half_kl_drop_fraction_masked", "late_to_early_skip_effect_ratio",
                 "mean_skip_output_effect_late_half", "early_half_effect_on_later_layers",
                 "attention_entropy_last_over_first", "max_deletion_perplexity_increase",
                 "mean_deletion_accuracy_drop_late_half", "baseline_perplexity"):
        assert estimates[name][0] == pytest.approx(summary[name], rel=1e-6, abs=1e-12), name
        assert math.isfinite(estimates[name][1]) and estimates[name][1] > 0, name
    n = len(SEQUENCES)
    checks = probe_checks(0.5, 0.05, estimates, n)  # a random model learned nothing: the accuracy is given here
    assert checks["late_half_kl_drop_fraction"].stderr == pytest.approx(estimates["late_half_kl_drop_fraction"][1])
    assert checks["lens_perplexity_by_layer.2"].stderr == pytest.approx(estimates["lens_perplexity_by_layer"][1][2])
    assert checks["stable_rank_ratio"].stderr is None  # pooled over every token at once: no error bar
    assert checks["late_half_kl_drop_fraction"].preconditions[0].passed is True  # 0.5 beats 0.05 by t(n - 1) SE
    assert probe_checks(0.06, 0.05, estimates, n)["late_half_kl_drop_fraction"].preconditions[0].passed is False
    # without the count of sequences the margin has no t quantile: unresolved, not passed (issue 35)
    assert probe_checks(0.5, 0.05, estimates)["late_half_kl_drop_fraction"].preconditions[0].passed is None


def test_the_dependence_ratio_is_late_over_early_layers_mean_dependence_on_earlier_ones(
        probed: tuple[dict, dict]) -> None:
    # written out from the definition over the pooled heatmap (skipped layer s x affected layer l): each target
    # layer's mean over the layers before it, then the late half's mean over the early half's (layer 0 has none)
    layers, estimates = probed
    heat = np.array(layers["skip_heatmap"], dtype=float)
    count = heat.shape[0]

    def dependence(targets: range) -> float:
        return float(np.mean([np.mean([heat[s][target] for s in range(target)]) for target in targets if target]))

    expected = dependence(range(count // 2, count)) / dependence(range(count // 2))
    value, error = estimates["late_to_early_dependence_ratio"]
    assert value == pytest.approx(expected, rel=1e-6)
    assert math.isfinite(error) and error > 0


def test_family_trend_matches_numpy_weighted_least_squares() -> None:
    layers, ratios, errors = [6, 12, 30, 33], [0.5, 0.35, 0.2, 0.21], [0.02, 0.03, 0.01, 0.015]
    trend, stderr = family_trend(layers, ratios, errors)
    x, y = np.log2(layers), np.log(ratios)
    sigma = np.array(errors) / np.array(ratios)
    coefficients, covariance = np.polyfit(x, y, 1, w=1 / sigma, cov="unscaled")
    _, scaled = np.polyfit(x, y, 1, w=1 / sigma, cov=True)  # covariance scaled by the residuals
    assert trend == pytest.approx(-coefficients[0], rel=1e-9)
    assert stderr == pytest.approx(max(math.sqrt(covariance[0, 0]), math.sqrt(scaled[0, 0])), rel=1e-9)
    assert family_trend([6, 12], [0.5, None], [0.02, 0.01]) == (None, None)  # one usable model: no trend


def test_family_result_inherits_each_checkpoints_learned_precondition() -> None:
    def one(model: str, num_layers: int, ratio: float, learned: bool) -> DepthProbeResult:
        accuracy = 0.4 if learned else 0.1
        checks = probe_checks(accuracy, 0.2, {"late_to_early_skip_effect_ratio": (ratio, 0.01),
                                              "late_half_kl_drop_fraction": (0.5, 0.02),
                                              "baseline_accuracy": (accuracy, 0.01)}, 40)
        unset = dict.fromkeys(DepthProbe.metrics)
        unset.pop("late_to_early_skip_effect_ratio_by_model")
        return DepthProbeResult(**{**unset, "late_to_early_skip_effect_ratio": ratio,
                                   "late_half_kl_drop_fraction": 0.5}, model=model, num_layers=num_layers, layers={},
                                checks=checks, scale=EvidenceScale(name="custom", parameters=num_layers * 1e6))

    from kb.evidence.verdicts import evaluate
    from schemas import Claim, VerdictKind

    claim = Claim.model_validate({"id": "t", "statement": "s", "expect": {"metric": "depth_inefficiency_trend",
                                                                           "op": ">", "value": 0}})
    steady = result_record(family_result([one("a", 2, 0.4, True), one("b", 4, 0.2, True), one("c", 8, 0.1, True)]))
    assert steady["num_layers_by_model"] == [2, 4, 8]
    assert steady["depth_inefficiency_trend"] == pytest.approx(math.log(2))
    assert evaluate(claim, [steady]).kind is VerdictKind.supported
    untrained = result_record(family_result([one("a", 2, 0.4, True), one("b", 4, 0.2, False),
                                             one("c", 8, 0.1, True)]))
    verdict = evaluate(claim, [untrained])
    assert verdict.kind is VerdictKind.inconclusive and "did not learn" in verdict.reason


def test_deepest_rise_is_a_paired_jackknife_over_validation_sequences() -> None:
    rng = np.random.default_rng(0)
    counts = rng.integers(5, 15, size=20)
    shallow = rng.normal(2.0, 0.2, size=20) * counts
    deep = shallow + rng.normal(0.05, 0.05, size=20) * counts  # the same sequences, a little worse
    rise, error = deepest_rise([TokenScores(list(shallow), [0] * 20, list(counts)),
                                TokenScores(list(deep), [0] * 20, list(counts))])
    n, total = len(counts), counts.sum()
    left = np.array([math.exp((deep.sum() - deep[i]) / (total - counts[i]))
                     - math.exp((shallow.sum() - shallow[i]) / (total - counts[i])) for i in range(n)])
    assert rise == pytest.approx(math.exp(deep.sum() / total) - math.exp(shallow.sum() / total), rel=1e-9)
    assert error == pytest.approx(math.sqrt((n - 1) / n * ((left - left.mean()) ** 2).sum()), rel=1e-9)


def test_the_per_sequence_rows_do_not_depend_on_the_batch_size(loaded: LoadedModel) -> None:
    records = [Record(f"r{i}", f"r{i}", s) for i, s in enumerate(SEQUENCES)]
    options = ProbeOptions(sublayer_skips=False)
    one = probe_model(loaded, records, options, batch_size=1, mask_fraction=MASK, seed=SEED)
    four = probe_model(loaded, records, options, batch_size=4, mask_fraction=MASK, seed=SEED)
    first = probe_estimates(one.pop("per_sequence"), 4)
    second = probe_estimates(four.pop("per_sequence"), 4)
    for name in ("late_half_kl_drop_fraction", "stable_rank_retention", "baseline_perplexity"):
        assert first[name][0] == pytest.approx(second[name][0], rel=1e-4)
        assert first[name][1] == pytest.approx(second[name][1], rel=1e-3)
