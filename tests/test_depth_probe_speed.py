"""The vectorised depth probe set (issue 28: near a plain forward on a GPU) against the per-layer, per-state
implementation it replaced (``tests/helpers/depth_probes_reference.py``), on tiny real models built here:
every accumulated measurement and every per-sequence row agrees, and one instrumented pass reads the
device from the host a fixed number of times, whatever the model's depth."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from analyzers.depth.batches import Batch, encode
from analyzers.depth.data import Record
from analyzers.depth.loading import LoadedModel, load_model
from analyzers.depth.probes import (
    ProbeAccumulator,
    ProbeOptions,
    clean_pass,
    ranks_from_eigenvalues,
    sequence_spectra,
)
from analyzers.depth.syncs import HostSyncCounter
from analyzers.depth.tiny import build_random_esm, build_random_esmc, build_random_gpt2, build_random_saprot
from tests.helpers import depth_probes_reference as reference
from tests.helpers.benchmarks import load_benchmark
from tests.helpers.tolerance import rank_rtol, sum_rtol

# Unequal lengths, so that padding is present in every batch; two batches, so that sums accumulate.
BATCHES = (("MKTAYIAKQRQISFVKSHFSRQ", "ACDEFGHIKLMNPQ", "GSHMLEDPVRRW"), ("MSTNPKPQRKTKRNTNRRPQDVKFPGG", "WYV"))
# Relative tolerance per measurement. The logit lens runs several states through the head in one float32
# product (the reference one state at a time), and the reference summed angular distances in float32 (now
# float64), so those agree to float32 precision. Ranks come from eigenvalues of float64 Gram matrices, whose
# solver's rounding depends on the CPU and LAPACK build and is amplified by the matrices' conditioning: their
# tolerance is derived from the reference's own spectra (tests/helpers/tolerance.py). The other float64 work
# (contribution sums, entropies) sums at most a few thousand same-signed terms per entry.
FLOAT32 = ("logit_lens", "lens_nll", "angular_distance")
RANKS = ("sequence_erank", "sequence_stable_rank", "erank", "stable_rank")
# a rank over a rank: twice the error
RANK_RATIOS = ("sequence_erank_relative", "sequence_stable_rank_relative", "stable_rank_retention")
FLOAT64_SUM_TERMS = 4096
BUILDERS: dict[str, Callable[[Path], Path]] = {
    "esm2": lambda folder: build_random_esm(folder, num_layers=4, width=32, num_heads=4, seed=0),
    "esm2_narrow": lambda folder: build_random_esm(folder, num_layers=3, width=16, num_heads=4, seed=2),  # seq > dim
    "gpt2": lambda folder: build_random_gpt2(folder, num_layers=3, width=32, num_heads=4, seed=1),
    "esmc": lambda folder: build_random_esmc(folder, num_layers=3, width=32, num_heads=4, seed=3),
    "saprot": lambda folder: build_random_saprot(folder, num_layers=2, width=32, num_heads=4, seed=4),
}


def _batch(loaded: LoadedModel, sequences: tuple[str, ...]) -> Batch:
    records = [Record(f"r{i}", f"r{i}", s) for i, s in enumerate(sequences)]
    fraction = 0.15 if loaded.adapter.objective == "masked" else 0.0
    return encode(records, loaded.tokenizer, loaded.input_format, fraction, seed=3)


def _accumulate(loaded: LoadedModel, clean_pass_of: Callable[..., Any], accumulator: Any) -> tuple[Any, list[Any]]:
    records = []
    for sequences in BATCHES:
        batch = _batch(loaded, sequences)
        record = clean_pass_of(loaded.model, loaded.adapter, batch, accumulator, ProbeOptions(skips=False))
        records.append((record, batch.real))
    return accumulator, records


def _tolerances(accumulator: Any, records: list[Any]) -> dict[str, float]:
    """Relative tolerance per kind of measurement, the ranks' derived from the reference's own spectra."""
    ranks = rank_rtol(torch.linalg.eigvalsh(accumulator.grams.double()))
    for record, real in records:
        spectra = sequence_spectra(record.states, real)  # (batch, states, side), ascending
        for index, length in enumerate(real.sum(-1).tolist()):
            # A sequence's padding rows are zero: its matrix has rank min(length, dim), and the eigenvalues
            # beyond it are exact zeros of the structure that neither solver reads as more than round-off
            # of the zero rows (entr(0) = 0), so the bound is taken over the ones the tokens make.
            nonzero = min(length, record.states[0].shape[-1])
            ranks = max(ranks, rank_rtol(spectra[index, :, -nonzero:]))
    return {"float32": 1e-5, "rank": ranks, "rank ratio": 2 * ranks, "float64": sum_rtol(FLOAT64_SUM_TERMS)}


def _close(name: str, new: Any, old: Any, tolerances: dict[str, float]) -> None:
    if name.startswith(FLOAT32):
        rel = tolerances["float32"]
    elif name.startswith(RANK_RATIOS):
        rel = tolerances["rank ratio"]
    elif name.startswith(RANKS):
        rel = tolerances["rank"]
    else:
        rel = tolerances["float64"]
    new_t, old_t = torch.as_tensor(new, dtype=torch.float64), torch.as_tensor(old, dtype=torch.float64)
    assert new_t.shape == old_t.shape, name
    assert torch.equal(new_t.isnan(), old_t.isnan()), name
    finite = old_t.isfinite()
    assert torch.equal(new_t[~finite].nan_to_num(), old_t[~finite].nan_to_num()), name  # -inf maxima, NaN means
    assert torch.allclose(new_t[finite], old_t[finite], rtol=rel, atol=rel * 1e-3), (name, rel)


@pytest.mark.parametrize("family", list(BUILDERS))
def test_clean_pass_equals_the_per_layer_reference(family: str, tmp_path: Path) -> None:
    torch.manual_seed(0)
    loaded = load_model(str(BUILDERS[family](tmp_path / family)))
    adapter = loaded.adapter
    new, _ = _accumulate(loaded, clean_pass,
                         ProbeAccumulator(adapter.num_layers, adapter.objective, adapter.pre_ln))
    old, records = _accumulate(loaded, reference.clean_pass,
                               reference.ProbeAccumulator(adapter.num_layers, adapter.objective, adapter.pre_ln))
    tolerances = _tolerances(old, records)
    # The bound is normwise, so it is loose for the spectra's exact zeros (repeated tokens in the embedding
    # state); a real error (a token, a state or the padding taken wrongly) moves a rank by 1e-2 or more, which
    # a tolerance this size still tells.
    assert tolerances["rank"] < 1e-3, tolerances
    new_layers, old_layers = new.finish(), old.finish()
    assert set(new_layers) == set(old_layers)
    assert "attention_entropy" in new_layers and "sequence_erank" in new.row_parts
    for name, value in old_layers.items():
        if isinstance(value, (str, bool, int)) or name == "notes":
            assert new_layers[name] == value, name
        else:
            _close(name, new_layers[name], value, tolerances)
    new_rows, old_rows = new.rows(), old.rows()
    assert set(new_rows) == set(old_rows)
    for name, (sums, counts) in old_rows.items():
        _close(name, new_rows[name][0], sums, tolerances)
        _close(f"{name} counts", new_rows[name][1], counts, tolerances)


def _syncs_per_pass(folder: Path, num_layers: int) -> tuple[HostSyncCounter, HostSyncCounter]:
    """Host reads of one plain forward and of one instrumented pass of a tiny ESM-2 of ``num_layers``."""
    loaded = load_model(str(build_random_esm(folder, num_layers=num_layers, width=32, num_heads=4, seed=0)))
    adapter = loaded.adapter
    accumulator = ProbeAccumulator(adapter.num_layers, adapter.objective, adapter.pre_ln)
    batch = _batch(loaded, BATCHES[0])
    with HostSyncCounter() as plain, torch.no_grad():
        loaded.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask)
    with HostSyncCounter() as probed:
        clean_pass(loaded.model, adapter, batch, accumulator, ProbeOptions(skips=False))
    return plain, probed


def test_clean_pass_reads_the_device_once_more_than_a_plain_forward_whatever_the_depth(tmp_path: Path) -> None:
    (plain, shallow), (_, deep) = _syncs_per_pass(tmp_path / "two", 2), _syncs_per_pass(tmp_path / "six", 6)
    assert dict(shallow.counts) == dict(deep.counts)
    # The one read the probes add: the rank solver's error codes, for every state and sequence at once (the
    # model's own padding-mask check is the plain forward's).
    assert shallow.counts - plain.counts == {"aten._linalg_eigh": 1}
    assert shallow.total == plain.total + 1


def test_host_sync_counter_counts_item_nonzero_and_host_copies() -> None:
    values = torch.arange(6.0)
    with HostSyncCounter() as syncs:
        float(values.sum())
        values[values > 2].sum()
        values.tolist()
        (values * 2).cpu()
    assert syncs.counts["aten._local_scalar_dense"] == 1
    assert syncs.counts["aten.index (boolean mask)"] == 1
    assert syncs.counts["Tensor.tolist"] == 1 and syncs.counts["Tensor.cpu"] == 1
    assert syncs.total == 4


def test_ranks_from_eigenvalues_match_the_svd_of_each_matrix() -> None:
    generator = torch.Generator().manual_seed(0)
    matrices = torch.randn(3, 7, 20, 12, dtype=torch.float64, generator=generator)  # (batch, states, tokens, dim)
    squared = torch.linalg.eigvalsh(matrices.mT @ matrices)
    stable, erank = ranks_from_eigenvalues(squared)
    rel = rank_rtol(squared)  # the eigensolver's error, amplified by each matrix's conditioning
    for index in range(3):
        for state in range(7):
            singular = torch.linalg.svdvals(matrices[index, state])
            p = singular / singular.sum()
            assert float(erank[index, state]) == pytest.approx(math.exp(float(-(p * p.log()).sum())), rel=rel)
            assert float(stable[index, state]) == pytest.approx(float((singular**2).sum() / singular[0] ** 2), rel=rel)


def test_bench_depth_runs_through_and_its_four_heatmaps_agree(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``benchmarks/bench_depth.py`` at a tiny size, in this process: it prints every timing and its agreement
    line, where kb's prefix-reuse heatmap and output effect equal the naive passes' and both nnsight versions'
    (the tallies' per-sequence sums averaged as nnsight averages; they once were not, and the script stopped
    before its report)."""
    bench = load_benchmark("bench_depth")
    monkeypatch.setattr("sys.argv", ["bench_depth.py", "--layers", "3", "--width", "32", "--heads", "2",
                                     "--sequences", "2", "--length", "20", "--repeats", "1"])  # fmt: skip
    bench.main()
    said = capsys.readouterr().out
    agreement = said[said.index("agreement:"):]
    differences = [float(x) for x in re.findall(r"\d\.\d+e[-+]\d+", agreement)]
    assert len(differences) == 4 and max(differences) < 1e-5, agreement
    assert "skip heatmap, nnsight with .skip() reuse" in said and "[implementation only: same algorithm]" in said
