"""The Langevin caches hold plain data only: a planted pickle is never executed, real data round-trips."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

from analyzers.langevin.chain_tasks import read_checkpoint
from analyzers.langevin.spec import LangevinParams
from analyzers.langevin.store import UnreadableCache, load_plain, save_plain


class _Payload:
    """Unpickling this creates the file named in ``marker``: the proof that code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, ...]]:
        return (os.system, (f"touch {self.marker}",))


def _plant(path: Path, marker: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"done": True, "records": _Payload(marker)}, path)  # torch.save pickles the payload


def test_store_planted_pickle_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    planted = tmp_path / "cache" / "sample" / "transformer@ES-T1e-05.pt"
    _plant(planted, marker)
    with pytest.raises(UnreadableCache):
        load_plain(planted)
    assert read_checkpoint(planted) is None  # a checkpoint that is not plain data: sampling restarts
    assert not marker.exists()
    # the unsafe loader would have run it: the test's payload is real
    torch.load(planted, weights_only=False)
    assert marker.exists()


def test_store_plain_data_round_trips(tmp_path: Path) -> None:
    records = {
        "losses": np.arange(5, dtype=np.float32), "energies": [(1, 0.5), (2, 0.25)], "weights": [torch.ones(3)],
        "attention_sum": None, "name": "transformer@ES", "nested": {"a": np.eye(2)}, "count": np.int64(3),
    }  # fmt: skip
    save_plain({"done": True, "records": records}, tmp_path / "c.pt")
    back = load_plain(tmp_path / "c.pt")["records"]
    assert isinstance(back["losses"], np.ndarray) and back["losses"].tolist() == [0, 1, 2, 3, 4]
    assert back["energies"] == [(1, 0.5), (2, 0.25)]
    assert torch.equal(back["weights"][0], torch.ones(3))
    assert np.array_equal(back["nested"]["a"], np.eye(2)) and back["count"] == 3 and back["attention_sum"] is None
    with open(tmp_path / "c.pt", "rb") as handle:  # a zip of tensors, no pickled classes of ours
        assert b"_Payload" not in handle.read()


def test_params_paths_are_operator_only() -> None:
    assert {"work_dir", "cache_dir", "structure_file"} <= LangevinParams.operator_only_fields()


def test_store_training_outcome_round_trips(tmp_path: Path) -> None:
    import dataclasses

    from analyzers.langevin.train import TrainingOutcome

    outcome = TrainingOutcome(
        es_state={"w": torch.randn(2, 3)}, ot_state={"w": torch.randn(2, 3)}, norm_target=1.5,
        ensemble_norms=[1.4, 1.6], es_step=10, ot_step=20, ot_saturated=True,
        trace=[{"step": 10.0, "loss": 2.0}], metrics={"es": {"test_error": 0.5}},
    )  # fmt: skip
    save_plain(dataclasses.asdict(outcome), tmp_path / "t.pt")
    back = TrainingOutcome(**load_plain(tmp_path / "t.pt"))
    assert torch.equal(back.es_state["w"], outcome.es_state["w"]) and back.metrics == outcome.metrics
    assert back.ensemble_norms == [1.4, 1.6] and back.ot_saturated
