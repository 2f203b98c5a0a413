"""``benchmarks/gpu_depth.py`` on tiny configurations on the CPU: the same code path the GPU run takes
(random-init models of each family, probe set, skip heatmap with SDPA replays, one training step), so
the script cannot rot on machines without a GPU; and its one-line answer where no GPU is present."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_depth.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_depth", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the script is executed
    spec.loader.exec_module(module)
    return module


def test_gpu_depth_tiny_cpu_runs_every_stage_of_every_family(capsys: pytest.CaptureFixture[str]) -> None:
    torch.set_num_threads(1)
    code = _script().main(["--device", "cpu", "--tiny", "--batch", "2", "--length", "12", "--train-batch", "2",
                           "--repeats", "1", "--models", "esm2_650m,protgpt2,esmc_600m"])
    out = capsys.readouterr().out
    assert code == 0, out
    for family in ("esm2_650m", "protgpt2", "esmc_600m"):
        assert f"\n{family}: " in out
    stages = re.findall(r"^  (.+?)\s+([\d.]+) ms\s+([\d.]+)x plain\s+([\d,]+) tokens/s", out, flags=re.MULTILINE)
    labels = [label for label, *_ in stages]
    assert labels.count("probe set (one instrumented eager pass)") == 3
    assert sum(label.startswith("skip heatmap") for label in labels) == 3
    assert sum(label.startswith("one training step") for label in labels) == 2  # masked LMs only
    assert all(float(ms) > 0 and float(ratio) > 0 for _, ms, ratio, _ in stages)
    assert "skip heatmap (12 variants" in out  # causal: layer, attention, MLP and future-effect skips


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_gpu_depth_without_cuda_says_so_in_one_line_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert _script().main([]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith("no CUDA GPU on this machine") and "\n" not in out
