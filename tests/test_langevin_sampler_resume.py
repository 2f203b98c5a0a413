"""A Langevin run killed on one node resumes on another from the run's checkpoint folder (issue 17): the
sampler writes its checkpoints there (plain tensors, atomically), announces each with ``ctx.checkpoint_saved``,
and a rerun with a copy of that folder and nothing else shared ends with the uninterrupted run's result."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from analyzers.base import Cancelled, RunContext
from analyzers.langevin.store import load_plain
from analyzers.registry import get


# per-weight masses resume through the same checkpoint code as noise-covariance ones (slow: suite time)
@pytest.mark.parametrize("mass_rule", [pytest.param("per-weight", marks=pytest.mark.slow), "noise-covariance"])
def test_langevin_sampler_resumes_from_the_checkpoint_folder_on_another_node(tmp_path: Path, mass_rule: str) -> None:
    analyzer = get("langevin.sweep")
    overrides = {"include_ffn": False, "temperatures": [1e-4, 1e-3], "checkpoint_every": 20, "max_train_steps": 200,
                 "ot_max_steps": 10, "num_sequences": 120, "train_size": 60, "val_size": 10, "test_size": 40,
                 "design_burn_in_sweeps": 10, "mass_rule": mass_rule}  # fmt: skip
    if mass_rule == "noise-covariance":  # cool enough that the constraint's guard leaves r where directions need it
        overrides["temperatures"] = [1e-6, 1e-5]
    params = analyzer.params_for(overrides, scale="smoke")
    whole = analyzer.run(params, RunContext(tmp_path / "whole", cache_dir=tmp_path / "cache-whole"))

    # Node 1: killed at the progress report after its third checkpoint (the first temperature finished,
    # the second at step 20 of 40). Every checkpoint file is complete when it is announced.
    folder = tmp_path / "node1-checkpoints"
    announced: list[list[str]] = []

    def saved() -> None:
        files = sorted(p.name for p in folder.rglob("*") if p.is_file())
        assert all(".part-" not in name for name in files)  # nothing half-written in the folder
        announced.append(files)

    killed = RunContext(tmp_path / "out1", cache_dir=tmp_path / "node1-cache", checkpoint_dir=folder,
                        on_checkpoint=saved, is_cancelled=lambda: len(announced) >= 3)  # fmt: skip
    with pytest.raises(Cancelled):
        analyzer.run(params, killed)
    assert len(announced) == 3 and (tmp_path / "node1-cache" / "langevin").is_dir()  # the context's cache
    states = [load_plain(path) for path in sorted((folder / "langevin-samples").glob("*.pt"))]
    assert sorted((s["done"], s["sampler"]["steps_done"]) for s in states) == [(False, 20), (True, 40)]
    if mass_rule == "noise-covariance":  # a chain in progress keeps its low-rank mass; a finished one drops it
        in_progress = next(s for s in states if not s["done"])
        assert in_progress["sampler"]["mass_directions"].shape[0] > 0
        assert all("mass_directions" not in s["sampler"] for s in states if s["done"])
        assert all(g["mass_rank"] > 0 for g in in_progress["records"]["mass_guard"])

    # Node 2: only the checkpoint folder travels (the artifact store copies it); a fresh cache.
    shutil.copytree(folder, tmp_path / "node2-checkpoints")
    resumed = analyzer.run(params, RunContext(tmp_path / "out2", cache_dir=tmp_path / "node2-cache",
                                              checkpoint_dir=tmp_path / "node2-checkpoints"))  # fmt: skip
    assert resumed.test_error_by_temperature == whole.test_error_by_temperature
    assert resumed.mean_loss_by_temperature == whole.mean_loss_by_temperature
    assert resumed.specific_heat_by_temperature == whole.specific_heat_by_temperature
    for a, b in zip(resumed.thermostat_by_temperature["transformer"], whole.thermostat_by_temperature["transformer"],
                    strict=True):  # fmt: skip
        assert a["kinetic_temperature_directions"] == b["kinetic_temperature_directions"]
    assert [c["rhat"] for c in resumed.convergence_by_temperature["transformer"]] == [
        c["rhat"] for c in whole.convergence_by_temperature["transformer"]
    ]
    # finished samples also land in the cache, where the other analyzers of the experiment reuse them
    assert len(list((tmp_path / "node2-cache" / "langevin" / "samples").glob("*.pt"))) == 2
