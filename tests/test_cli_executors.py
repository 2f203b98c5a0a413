"""``kb executors``: the registered executors and the settings each needs, through the real CLI (in process,
``tests/helpers/cli.py``), including a lab's executor named only in KB_EXECUTOR_MODULES; each listed variable
is one that ``Settings`` reads."""

from __future__ import annotations

import json

import pytest

from kb.queue import executors
from kb.settings import Settings
from tests.helpers.cli import run_kb

WIDE = {"COLUMNS": "160"}


def _executors(*args: str) -> str:
    result = run_kb(None, None, "executors", *args, env=WIDE)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_executors_lists_each_executor_with_the_settings_it_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(executors.MODULES_VARIABLE, "tests.throwaway_executor")
    rows = {row["name"]: row for row in json.loads(_executors("--json"))}
    assert list(rows)[:3] == ["local", "ray", "slurm"] and "throwaway-test" in rows
    envs = {name: [need["env"] for need in row["settings"]] for name, row in rows.items()}
    assert envs["local"] == [] and envs["throwaway-test"] == [] and envs["ray"] == ["KB_RAY_ADDRESS"]
    # Slurm jobs run on other machines: the shared index and store, then each field of the slurm section.
    assert envs["slurm"] == ["KB_DATABASE_URL", "KB_ARTIFACT_STORE",
                             *(f"KB_SLURM__{field.upper()}" for field in Settings.model_fields["slurm"]
                               .annotation.model_fields)]  # type: ignore[union-attr]
    assert rows["slurm"]["needs_shared_database"] and rows["local"]["needs_worker"]
    assert rows["ray"]["settings"][0]["description"] == Settings.model_fields["ray_address"].description

    table = _executors()
    assert "4 executor(s)" in table and "throwaway-test" in table and "KB_SLURM__PARTITION" in table
    detail = _executors("slurm")
    assert "KB_SLURM__TIME_MINUTES (slurm.time_minutes)" in detail and "Time limit per job" in detail


def test_executors_listed_variables_are_the_ones_settings_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_SLURM__PARTITION", "gpu-queue")
    monkeypatch.setenv("KB_RAY_ADDRESS", "ray://head:10001")
    monkeypatch.setenv("KB_ARTIFACT_STORE", "s3://bucket/kb")
    settings = Settings()
    values = {"slurm.partition": settings.slurm.partition, "ray_address": settings.ray_address,
              "artifact_store": settings.artifact_store}
    listed = {need.env: need.name for cls in executors.load_all().values()
              for need in executors.needed_settings(cls)}
    assert {listed[env]: values[listed[env]] for env in ("KB_SLURM__PARTITION", "KB_RAY_ADDRESS",
                                                         "KB_ARTIFACT_STORE")} == {
        "slurm.partition": "gpu-queue", "ray_address": "ray://head:10001", "artifact_store": "s3://bucket/kb"}


def test_executors_unknown_name_is_one_line_and_exit_1() -> None:
    result = run_kb(None, None, "executors", "kubernetes", env=WIDE)
    assert result.returncode == 1
    assert "no executor 'kubernetes'; registered: local, ray, slurm" in result.stderr


def test_executor_naming_a_setting_kb_lacks_is_refused_at_registration() -> None:
    class Typo(executors.Executor):
        name, label, description = "typo-test", "Typo", "never registered"
        settings = ("slurm_partition",)

    with pytest.raises(ValueError, match="slurm_partition"):
        executors.register(Typo)
    assert "typo-test" not in executors.load_all()
