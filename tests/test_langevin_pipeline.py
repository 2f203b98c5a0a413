"""End-to-end tests of the Langevin analyzers at the smoke scale: the registry, the shared cache, resuming
a killed sampling run, worker processes, the CUDA guard, and the `kb langevin` commands with bad input."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from analyzers.base import Cancelled, NotRunnable, RunContext
from analyzers.langevin.chain_runs import run_temperature, run_temperatures
from analyzers.langevin.chain_tasks import SamplingSettings, TemperatureTask
from analyzers.langevin.data import make_splits
from analyzers.langevin.model import ModelConfig, build_model
from analyzers.langevin.spec import DEFAULT_LADDER
from analyzers.registry import get
from kb.evidence.subjects import structures
from kb.evidence.verdicts import unresolved_reason
from tests.helpers.cli import run_kb


@pytest.fixture(scope="module")
def work_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the module: the analyzers share designed data and trained weights through it."""
    return tmp_path_factory.mktemp("langevin-work")


@pytest.mark.analyzer("langevin.sweep", "langevin.contacts", "langevin.similarity")
@pytest.mark.slow  # suite time: over 10 s on 2 cores
def test_langevin_analyzers_smoke_through_registry_share_the_cache(work_dir: Path, tmp_path: Path) -> None:
    sweep = get("langevin.sweep")
    result = sweep.run(sweep.params_for({"work_dir": str(work_dir)}, scale="smoke"), RunContext(tmp_path / "sweep"))
    assert result.scale.name == "smoke" and len(result.temperatures) == 3
    for artifact in result.artifacts:
        assert (tmp_path / "sweep" / artifact).is_file(), artifact
    assert structures(result.provenance["structure_source"]) == {"1ubi"}
    assert result.max_norm_drift < 1e-8 * result.trained["transformer"]["es"]["squared_norm"]
    assert all(0 <= e <= 1 for e in result.test_error_by_temperature)
    assert set(result.specific_heat_by_temperature) == {"transformer", "ffn"}
    equilibrated = result.equilibrated_by_temperature
    if sum(a and b for a, b in zip(equilibrated["ffn"], equilibrated["transformer"], strict=True)) < 3:
        assert math.isnan(result.specific_heat_peak_ratio_ffn_over_transformer)  # never from drifting losses
    assert isinstance(result.test_error_min_is_interior, bool)
    es_errors = result.reference_test_errors["transformer"]["ES"]
    assert len(es_errors) == 3 and len(result.reference_test_errors["ffn"]["OT"]) == 3  # three seeds: error bars
    assert es_errors[0] == result.trained["transformer"]["es"]["test_error"]  # the first reference is sampled
    written = json.loads((tmp_path / "sweep" / "metrics.json").read_text())
    # the smoke transformer predicts the most frequent residue at every temperature: nothing it says is vouched for
    why = unresolved_reason(written, "test_error_min_is_interior") or ""
    assert "did not learn beyond the majority-residue baseline" in why, why
    assert set(written["checks"]) >= set(sweep.metrics)  # a check per metric it fills
    assert written["test_error_by_temperature"] == result.test_error_by_temperature
    thermostat = written["thermostat_by_temperature"]["transformer"]
    shares = {row["r_used"] for row in thermostat}
    assert len(shares) == 1 and 0 < shares.pop() <= 0.5  # one minibatch share for every temperature
    assert len(thermostat) == len(result.temperatures)
    for row in thermostat:
        assert len(row["kinetic_temperature_directions"]) == 3 and row["noise_amplification"][0] >= 1
        assert row["thermalized_every_direction"] == ("off T" not in row["direction_states"])
        assert row["kinetic_units"] == 2 and row["state"] == "unresolved"  # smoke: 2 blocks, under 3 units
    flags = [row["state"] == "at T" for row in thermostat]
    assert written["thermalized_by_temperature"]["transformer"] == flags  # at T: resolved and within 20 %
    for name, rows in written["convergence_by_temperature"].items():
        # one start (ES): the split of one chain; a temperature with R-hat >= 1.1 is not equilibrated
        assert all(row["chains"] == 1 and row["draws_per_chain"] >= 4 for row in rows)
        for row, equilibrated in zip(rows, written["equilibrated_by_temperature"][name], strict=True):
            assert row["rhat"] < 1.1 or not equilibrated

    similarity = get("langevin.similarity")
    similar = similarity.run(
        similarity.params_for({"work_dir": str(work_dir)}, scale="smoke"), RunContext(tmp_path / "similarity")
    )
    assert "training:transformer" in similar.provenance["reused_from_cache"]  # nothing trained twice
    assert any("sampling:6/6" in item for item in similar.provenance["reused_from_cache"])
    layers = similar.mean_q_by_layer["transformer"]
    assert "blocks.0.norm1.weight" in layers and all(-1 <= q <= 1 for q in layers.values())

    contacts = get("langevin.contacts")
    found = contacts.run(contacts.params_for({"work_dir": str(work_dir)}, scale="smoke"), RunContext(tmp_path / "c"))
    assert all(0 <= p <= 1 for p in found.p_at_l_by_temperature + found.tolerance_precision_by_temperature)
    for p_at_l, test in zip(found.p_at_l_by_temperature, found.chance_by_temperature, strict=True):
        chance = test["p_at_l"]
        assert chance["precision"] == pytest.approx(p_at_l) and 0 < chance["p_value"] <= 1 and 0 < chance["chance"] < 1
    best_p = found.chance_by_temperature[int(np.argmax(found.p_at_l_by_temperature))]["p_at_l"]["p_value"]
    significant = best_p * len(found.temperatures) < 0.05
    chance = [c for c in found.checks["best_p_at_l_temperature_over_best_error_temperature"].preconditions
              if c.name == "beats chance"]
    assert chance[0].passed == significant
    assert set(found.trained_scores) == {"ES", "OT"} and set(found.trained_chance) == {"ES", "OT"}
    assert "|i-j| >= 1" in found.rule and "Delta=1" in found.rule
    assert np.load(tmp_path / "c" / "mean_attention.npy").shape == (3, 1, 76, 76)


@pytest.mark.analyzer("langevin.design")
def test_langevin_design_analyzer_reports_exact_composition(tmp_path: Path) -> None:
    analyzer = get("langevin.design")
    fast = {"num_sequences": 90, "design_temperatures": list(DEFAULT_LADDER), "design_burn_in_sweeps": 40}
    result = analyzer.run(analyzer.params_for(fast), RunContext(tmp_path))
    assert result.composition_exact and result.num_sequences == 90
    assert (tmp_path / "designed.fasta").read_text().count(">") == 90
    assert 0 < result.mean_pairwise_identity < 1 and result.sequences_per_second > 0
    assert 0 < result.site_entropy < math.log(20) and isinstance(result.samples_equilibrated, bool)
    assert "1UBI" in result.scale.data


def _task(tmp_path: Path, name: str, temperature: float = 1e-4, steps: int = 30) -> TemperatureTask:
    sequences = np.random.default_rng(0).integers(0, 20, size=(80, 86))
    splits = make_splits(sequences, (40, 10, 30), seed=0)
    config = ModelConfig(embed_dim=8, hidden_dim=16)
    torch.manual_seed(0)
    state = build_model(config).state_dict()
    settings = SamplingSettings(steps=steps, batch_size=16, variance_batches=3, variance_every=10, snapshot_every=5,
                                weights_every=5, checkpoint_every=10)  # fmt: skip
    return TemperatureTask(name, temperature, config, state, splits, settings, 0, "cpu", tmp_path / f"{name}.pt")


def test_langevin_resume_after_a_kill_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    whole = run_temperature(_task(tmp_path, "whole"))
    killed = _task(tmp_path, "killed")

    def die_after_checkpoint(done: int, total: int) -> None:
        if done == 15:  # after the checkpoint at step 10, before the one at step 20
            raise Cancelled("killed")

    with pytest.raises(Cancelled):
        run_temperature(killed, die_after_checkpoint)
    assert torch.load(killed.checkpoint, weights_only=True)["sampler"]["steps_done"] == 10
    resumed = run_temperature(killed)
    assert np.array_equal(resumed["losses"], whole["losses"])
    assert resumed["snapshots"] == whole["snapshots"]
    assert all(torch.equal(a, b) for a, b in zip(resumed["weights"], whole["weights"], strict=True))
    assert torch.equal(resumed["attention_sum"], whole["attention_sum"])
    assert run_temperature(killed)["losses"] is not None  # a finished task returns its stored records


# slow (suite time): CPU worker processes run the same per-temperature code the sequential and batched tests check
@pytest.mark.slow
def test_langevin_worker_processes_match_the_sequential_run(tmp_path: Path) -> None:
    tasks = [_task(tmp_path / "parallel", f"t{k}", temperature) for k, temperature in enumerate((1e-4, 1e-3))]
    messages: list[str] = []
    parallel = run_temperatures(tasks, workers=2, report=lambda fraction, message: messages.append(message))
    sequential = [run_temperature(_task(tmp_path / "sequential", f"t{k}", t)) for k, t in enumerate((1e-4, 1e-3))]
    for a, b in zip(parallel, sequential, strict=True):
        assert a["temperature"] == b["temperature"]
        assert np.allclose(a["losses"], b["losses"], rtol=1e-4)
    assert any("step" in m for m in messages)


def test_langevin_cuda_without_gpu_is_not_runnable(tmp_path: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("CUDA is present")
    analyzer = get("langevin.sweep")
    with pytest.raises(NotRunnable, match="CUDA"):
        analyzer.run(analyzer.params_for({"device": "cuda", "work_dir": str(tmp_path)}), RunContext(tmp_path))
    paper = analyzer.params_for({"work_dir": str(tmp_path)}, scale="paper")  # the paper's sizes, meant for a GPU
    assert (paper.device, paper.embed_dim, paper.num_layers, paper.num_sequences) == ("cuda", 64, 4, 12000)
    with pytest.raises(NotRunnable):
        analyzer.run(paper, RunContext(tmp_path))


# -- the kb langevin commands -----------------------------------------------------------------------------


def test_cli_langevin_models_lists_table_a1_with_exact_counts() -> None:
    result = run_kb(None, None, "langevin", "models", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["T4-d64"]["parameters"] == 168853 and rows["T1-d26"]["parameters"] == 8107
    assert all(round(row["parameters"] / 1000) == row["paper_thousands"] for row in rows.values())


def test_cli_langevin_run_smoke_writes_everything(work_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run_kb(None, None, "langevin", "run", "--scale", "smoke", "--out", str(out), "--work-dir", str(work_dir))
    assert result.returncode == 0, result.stdout + result.stderr
    # not a terminal (a log): plain lines from the start (tests/test_progress_bars.py: when), not only the
    # bar's last drawing at the end
    assert re.search(r"^ +0\.0% +\d+ s  starting$", result.stdout, flags=re.M), result.stdout
    for name in ("metrics.json", "provenance.json", "sweep.png", "similarity.png", "attention_vs_contacts.png",
                 "precision_vs_temperature.png", "designed.fasta"):  # fmt: skip
        assert (out / name).is_file(), name
    metrics = json.loads((out / "metrics.json").read_text())
    assert {"sweep", "contacts", "similarity"} <= set(metrics)
    assert not list(tmp_path.glob(".run.*"))  # no staging folder left behind
    again = run_kb(None, None, "langevin", "run", "--out", str(out), "--work-dir", str(work_dir))
    assert again.returncode == 1 and "exists" in (again.stdout + again.stderr)  # earlier output kept

    # External sequences round-trip: the run's own designed set, fed back, is the same data (same hashes, so
    # the cached training and sampling are reused) and says where it came from.
    fed = tmp_path / "fed"
    result = run_kb(None, None, "langevin", "run", "--scale", "smoke", "--out", str(fed), "--work-dir",
                                str(work_dir), "--sequences", str(out / "designed.fasta"))  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    first, second = (json.loads((folder / "provenance.json").read_text()) for folder in (out, fed))
    assert second["sequences_hash"] == first["sequences_hash"] and second["data_hash"] == first["data_hash"]
    assert "training:transformer" in second["reused_from_cache"]
    assert "external sequences from designed.fasta" in json.loads((fed / "metrics.json").read_text())["sweep"][
        "scale"]["data"]  # fmt: skip
    short = tmp_path / "short.txt"
    short.write_text("ACDEFGHIKL\n")
    result = run_kb(None, None, "langevin", "run", "--out", str(tmp_path / "bad"), "--work-dir", str(work_dir),
                                "--sequences", str(short))  # fmt: skip
    assert result.returncode == 1 and "short.txt: record line 1: 10 residues" in (result.stdout + result.stderr)
    assert "but PDB 1UBI" in (result.stdout + result.stderr)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--structure", "missing.pdb"], "not found"),
        (["--temperatures", "1e-4,0"], "temperatures must be > 0"),
        (["--set", "sequence=ACDE"], "shorter than the contact map"),
        (["--scale", "huge"], "no scale"),
    ],
)
def test_cli_langevin_run_bad_input_fails_cleanly(tmp_path: Path, arguments: list[str], message: str) -> None:
    out = tmp_path / "out"
    result = run_kb(None, None, "langevin", "run", "--out", str(out), "--work-dir", str(tmp_path / "w"), *arguments)
    assert result.returncode == 1, result.stdout + result.stderr
    assert message in (result.stdout + result.stderr)
    assert not out.exists() and not list(tmp_path.glob(".out.*"))


def test_cli_langevin_run_chain_not_found_and_unsatisfiable_constraint(work_dir: Path, tmp_path: Path) -> None:
    pdb = tmp_path / "one.pdb"
    pdb.write_text("ATOM      1  CA  ALA A   1       0.000   0.000   0.000  1.00  0.00           C\nEND\n")
    out = tmp_path / "out"
    result = run_kb(None, None, "langevin", "run", "--out", str(out), "--structure", str(pdb), "--chain", "Q")
    assert result.returncode == 1 and "chain 'Q' not found" in (result.stdout + result.stderr) and not out.exists()
    # A huge temperature with the step guard off: SHAKE has no real root (negative discriminant).
    result = run_kb(None, None, "langevin", "run", "--out", str(out), "--work-dir", str(work_dir), "--temperatures",
                                "30", "--set", "max_step_ratio=1e9", "--set", "include_ffn=false")  # fmt: skip
    assert result.returncode == 1 and "negative discriminant" in result.stderr, result.stdout + result.stderr
    assert not out.exists()


@pytest.mark.slow  # ~55 s of tempering burn-in; the design itself is tested in test_langevin.py
def test_cli_langevin_design_writes_fasta(tmp_path: Path) -> None:
    out = tmp_path / "seqs.fasta"
    result = run_kb(None, None, "langevin", "design", "--n", "60", "--out", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    assert out.read_text().count(">") == 60 and "identity" in (result.stdout + result.stderr)
    assert run_kb(None, None, "langevin", "design", "--n", "60", "--out", str(out)).returncode == 1


def test_ot_start_is_scaled_onto_the_es_sphere() -> None:
    """The constrained sampler's sphere is the ES norm: an OT start is scaled onto it (every trainable weight by
    one factor), so chains from ES and OT sample one distribution and R-hat can compare them."""
    from analyzers.langevin.pipeline import onto_sphere

    config = ModelConfig(embed_dim=8, hidden_dim=16)
    torch.manual_seed(0)
    es, ot = build_model(config).state_dict(), {k: 3.0 * v for k, v in build_model(config).state_dict().items()}

    def norm(state: dict[str, torch.Tensor]) -> float:  # what the sampler moves, summed independently
        model = build_model(config)
        model.load_state_dict(state)
        flat = torch.cat([p.detach().reshape(-1).double() for p in model.parameters()])
        return float(flat @ flat)

    moved = onto_sphere(ot, config, es)
    assert norm(moved) == pytest.approx(norm(es), rel=1e-6)  # float32 weights
    names = {name for name, _ in build_model(config).named_parameters()}
    ratios = {float((moved[k] / ot[k]).nan_to_num(0).abs().max()) for k in names if ot[k].abs().sum() > 0}
    assert max(ratios) == pytest.approx(min(ratios), rel=1e-6) and max(ratios) < 1  # one factor, scaled down
    buffers = set(ot) - names
    assert all(torch.equal(moved[k], ot[k]) for k in buffers)


def test_relaxed_start_lies_lower_on_the_es_sphere_and_is_cached(work_dir: Path) -> None:
    """A relaxed start (train.relax_on_sphere) keeps the ES norm, has a lower training loss than the start it came
    from, is what the chain starts from, and is reused from the cache by the next run."""
    from analyzers.langevin.pipeline import run_experiment
    from analyzers.langevin.spec import LangevinParams
    from analyzers.langevin.train import squared_norm

    params = LangevinParams(work_dir=str(work_dir), include_ffn=False, temperatures=[1e-4], sample_from=["ES", "OT"],
                            relax_starts=["OT"], relax_steps=100, relax_lr=0.02, sampling_steps=10, snapshot_every=5,
                            energy_every=5, checkpoint_every=5, weights_every=5)  # fmt: skip
    experiment = run_experiment(params, lambda fraction, message: None)
    run = experiment.models["transformer"]
    trace = run.relaxation["OT"]
    assert set(run.relaxation) == {"OT"} and trace[0]["step"] == 0 and trace[-1]["step"] == 100
    assert trace[-1]["train_loss"] < trace[0]["train_loss"] - 0.03  # it relaxed (a 100-step run: by ~0.07)
    assert experiment.provenance["relaxed_starts"] == {"transformer": {"OT": trace}}
    es = build_model(run.config)
    es.load_state_dict(run.training.es_state)
    assert run.records["OT"][0]["start_norm"] == pytest.approx(squared_norm(es), rel=1e-5)  # on the ES sphere
    # the chain began from the relaxed weights: its first energy is near the relaxed loss, not the OT weights'
    first_energy = sorted(run.records["OT"][0]["energies"])[0][1]
    assert abs(first_energy - trace[-1]["train_loss"]) < abs(first_energy - trace[0]["train_loss"])
    again = run_experiment(params, lambda fraction, message: None)
    assert "relaxed:transformer@OT" in again.provenance["reused_from_cache"]
    assert again.models["transformer"].relaxation["OT"] == trace


@pytest.mark.parametrize(("field", "value"), [("relax_starts", ["ES", "late"]), ("sample_from", []),
                                              ("sample_from", ["OT", "XX"])])  # fmt: skip
def test_langevin_starts_are_checked_by_name(field: str, value: list[str]) -> None:
    from pydantic import ValidationError

    from analyzers.langevin.spec import LangevinParams

    with pytest.raises(ValidationError, match=f"{field} takes ES and/or OT"):
        LangevinParams(**{field: value})
    assert LangevinParams(relax_starts=[]).relax_starts == []  # no relaxed start: the paper's starts
