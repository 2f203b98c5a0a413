"""The time per stage a run commits to (issue 28: the paper preset prints it before it starts), from a few timed
steps of each stage on the device in use: every stage named, each estimate positive and growing with the steps
the parameters ask for."""

from __future__ import annotations

import torch

from analyzers.langevin import design, structure
from analyzers.langevin.estimate import estimate_stages, estimate_text
from analyzers.langevin.pipeline import model_configs
from analyzers.registry import get


def test_every_stage_gets_an_estimate_that_follows_its_step_count() -> None:
    torch.set_num_threads(1)
    analyzer = get("langevin.sweep")
    contact_map = structure.shipped_contact_map()
    composition = design.encode(contact_map.sequence)
    params = analyzer.params_for({"relax_starts": ["OT"], "sample_from": ["ES", "OT"], "estimate_stages": True},
                                 scale="smoke")  # fmt: skip
    configs = model_configs(params, contact_map.length)
    estimates = estimate_stages(params, contact_map.contacts, composition, configs, "cpu")
    assert list(estimates) == ["design", "training transformer", "relaxing transformer", "sampling transformer",
                               "training ffn", "relaxing ffn", "sampling ffn"]
    assert all(seconds > 0 for seconds in estimates.values())
    longer = analyzer.params_for({"relax_starts": ["OT"], "sample_from": ["ES", "OT"], "sampling_steps": 4000,
                                  "max_train_steps": 15000}, scale="smoke")  # 100x the sampling and training caps
    more = estimate_stages(longer, contact_map.contacts, composition, {"transformer": configs["transformer"]}, "cpu")
    assert more["sampling transformer"] > 10 * estimates["sampling transformer"]
    assert more["training transformer"] > 10 * estimates["training transformer"]
    text = estimate_text(estimates)
    assert text.startswith("estimated time per stage on this device: design ") and "training transformer <= " in text


def test_the_measured_time_of_each_stage_is_set_against_its_estimate() -> None:
    from analyzers.langevin.estimate import comparison_text, stage_comparison

    estimates = {"design": 40.0, "training transformer": 300.0, "relaxing transformer": 10.0,
                 "sampling transformer": 100.0, "sampling ffn": 50.0}  # fmt: skip
    measured = {"design": 50.0, "training transformer": 120.0, "relaxing transformer": 0.1, "sampling": 300.0}
    rows = stage_comparison(estimates, measured, ["relaxed:transformer@OT"])
    assert rows["design"] == {"estimated_s": 40.0, "measured_s": 50.0, "ratio": 1.25}
    assert rows["training transformer"]["ratio"] == 0.4
    assert rows["relaxing transformer"]["ratio"] is None  # read from the cache: no ratio to the work's estimate
    assert rows["sampling"] == {"estimated_s": 150.0, "measured_s": 300.0, "ratio": 2.0}  # every model's chains
    assert "sampling transformer" not in rows
    text = comparison_text(rows)
    assert text.startswith("measured time per stage against the estimate: design 50 s / 40 s (1.25x)")
    assert "training transformer 2 min / <= 5 min (0.40x)" in text
    assert "relaxing transformer 1 s / 10 s (reused)" in text
    assert "sampling 5 min / 2 min (2.00x)" in text
    # no estimate made (estimate_stages off): the times are kept, without ratios
    assert stage_comparison({}, measured, [])["design"] == {"estimated_s": None, "measured_s": 50.0, "ratio": None}
