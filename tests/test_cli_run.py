"""``kb run ANALYZER``: any registered analyzer, once, on a preset and ``--set`` overrides."""

from __future__ import annotations

import json
from pathlib import Path

from analyzers.overrides import split_pairs, typed_overrides
from tests.helpers.cli import run_kb


def test_run_writes_metrics_and_reports_the_value(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_kb(None, None, "run", "noop", "--set", "value=2.5", "--set", "steps=4", "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert printed["metrics"]["value"] == 2.5
    assert json.loads((out / "metrics.json").read_text())["value"] == 2.5
    assert (out / "log.txt").exists() or printed["metrics"]["artifacts"] is not None


def test_run_rejects_unknown_parameters_and_analyzers(tmp_path: Path) -> None:
    bad_key = run_kb(None, None, "run", "noop", "--set", "bogus=1", "--out", str(tmp_path / "a"))
    assert bad_key.returncode == 2 and "unknown parameter 'bogus'" in bad_key.stderr and "value" in bad_key.stderr
    bad_name = run_kb(None, None, "run", "no-such-analyzer")
    assert bad_name.returncode == 2 and "no analyzer" in bad_name.stderr
    bad_value = run_kb(None, None, "run", "noop", "--set", "steps=many", "--out", str(tmp_path / "b"))
    assert bad_value.returncode == 2 and "steps" in bad_value.stderr


def test_run_says_why_an_analyzer_cannot_run_here(tmp_path: Path) -> None:
    result = run_kb(None, None, "run", "noop", "--set", "not_runnable=no weights offline", "--out", str(tmp_path))
    assert result.returncode == 3 and "no weights offline" in result.stderr


def test_overrides_parse_yaml_values_but_keep_text_as_typed() -> None:
    from analyzers import registry

    pairs = split_pairs(["value=1e-3", "steps=12", "fail=true", "not_runnable=12"])
    parsed = typed_overrides(pairs, registry.get("noop").Params)
    assert parsed == {"value": 0.001, "steps": 12, "fail": True, "not_runnable": "12"}
