"""``benchmarks/gpu_check.sh``, the one GPU check of issue 28, in its CPU fallback: the same four parts (depth
probes, Langevin benchmark, the sweep through the analyzer registry, the GPU-marked tests) at tiny sizes, each
under its own timeout, into one report folder whose summary.md has a row per part; so the script a GPU session
runs once cannot rot where no GPU is. It runs on the node's packages alone (``tests/helpers/gpu_node``), so a
package the node lacks fails here as it would there."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cli import run_kb
from tests.helpers.gpu_node import node_python, node_site

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # suite time: over 10 s on 2 cores
def test_gpu_check_cpu_fallback_writes_one_report_with_every_part(tmp_path: Path) -> None:
    report = tmp_path / "gpu-report"
    site, python = node_site(tmp_path / "site"), node_python(tmp_path / "bin")
    environment = {**os.environ, "PYTHON": str(python), "PYTHONPATH": str(site), "OUT": str(tmp_path)}
    environment.pop("KB_ANALYZER_MODULES", None)  # the tests' no-op analyzer is not on the node
    done = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh"), "--cpu", str(report)], cwd=tmp_path,
                          env=environment, capture_output=True, text=True, timeout=400)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr + (report / "summary.md").read_text()
    summary = (report / "summary.md").read_text()
    for part in ("gpu_depth", "bench_langevin", "langevin_sweep_small", "gpu_tests"):
        assert f"| {part} | ok |" in summary, summary
        assert (report / f"{part}.txt").stat().st_size > 0
    # the three Langevin figures side by side: one chain, batched, batched + graph (n/a on the CPU)
    assert "one chain at a time" in summary and "batched + graph" in summary and "n/a (CPU)" in summary
    # both models' chains stepped per group and in one call (one graph on CUDA)
    assert "one call (eager)" in summary and "one graph" in summary and "one call / per group" in summary
    assert "analyzer loop" in summary and "chain-steps/s" in summary  # the analyzer's own loop beside them
    assert "in all" in summary and "sampling  from" in summary  # the sweep's time per stage
    assert "mode: cpu" in (report / "environment.txt").read_text()


def test_gpu_check_reports_a_failing_part_and_exits_non_zero(tmp_path: Path) -> None:
    """A part that fails is a row that says so, and the script's exit status is not 0 (a python that is not
    there fails every part)."""
    report = tmp_path / "gpu-report"
    environment = {**os.environ, "PYTHON": str(tmp_path / "no-python")}
    done = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh"), "--cpu", str(report)], cwd=tmp_path,
                          env=environment, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode != 0
    summary = (report / "summary.md").read_text()
    assert "| gpu_depth | failed (exit 127) |" in summary, summary


@pytest.mark.slow  # suite time: ~2 minutes on 2 cores
def test_gpu_claims_cpu_fallback_verifies_and_bundles_each_claim_on_the_nodes_packages(tmp_path: Path) -> None:
    """`benchmarks/gpu_claims.sh --cpu`: `kb verify` of the Langevin claims bound to `small` (tiny sizes), then a
    bundle per claim that another KB home imports; at most 8 files in the report (what the device tool brings
    back)."""
    report = tmp_path / "claims"
    site, python = node_site(tmp_path / "site"), node_python(tmp_path / "bin")
    environment = {**os.environ, "PYTHON": str(python), "PYTHONPATH": str(site), "KB_HOME": str(tmp_path / "gpu")}
    environment.pop("KB_ANALYZER_MODULES", None)
    done = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_claims.sh"), "--cpu", str(report)], cwd=tmp_path,
                          env=environment, capture_output=True, text=True, timeout=600)  # fmt: skip
    summary = (report / "summary.md").read_text()
    assert done.returncode == 0, done.stdout + done.stderr + summary
    assert len(list(report.iterdir())) <= 8 and (report / "log.txt").stat().st_size > 0
    assert "| verify | ok |" in summary
    for claim in ("generalization-min-intermediate-t", "attention-predicts-contacts-at-higher-t"):
        assert f"#{claim}" in summary and "state:" in summary
        imported = run_kb(ROOT / "papers", tmp_path / "home", "evidence", "import",
                          str(report / f"evidence-{claim}.tar.gz"))  # fmt: skip
        assert imported.returncode == 0 and "imported 1 run(s)" in imported.stdout, imported.stdout + imported.stderr
