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
