"""Executors are registered plug-ins fed one JobConfig: a throw-away executor named in KB_EXECUTOR_MODULES is
found by the real CLI, the app and the docs with nothing else changed; Ray's and Slurm's run bodies write
where the config says, as a local worker does."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from kb.core import KnowledgeBase
from kb.queue import executors
from kb.queue import store as queue_store
from kb.queue.executors import JobConfig
from kb.settings import Settings, SlurmSettings
from tests.helpers.cli import run_kb_process

ROOT = Path(__file__).resolve().parents[1]
# tests/throwaway_executor.py, named only through the registry's environment variable (never imported here).
MODULE, NAME, LOG = "tests.throwaway_executor", "throwaway-test", "throwaway-executor.jsonl"
NOTE = """---
paper_id: "t:exec"
title: "Executor note"
claims:
  - id: echo
    statement: "The value is above two."
    analyzer: {name: noop, params: {value: 3}}
    expect: {metric: value, op: ">", value: 2}
---
Body.
"""


@pytest.fixture
def throwaway(monkeypatch: pytest.MonkeyPatch) -> str:
    """The throw-away executor, named in KB_EXECUTOR_MODULES for this process and every process it starts."""
    monkeypatch.setenv(executors.MODULES_VARIABLE, MODULE)
    return NAME


@pytest.fixture
def papers(tmp_path: Path) -> Path:
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "exec-note.md").write_text(NOTE, encoding="utf-8")
    return folder


def kb_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The ``kb`` CLI in its own process: the executors it offers are read from KB_EXECUTOR_MODULES at import."""
    return run_kb_process(None, None, *args, env={**os.environ, **(env or {})}, cwd=ROOT)


def calls(home: Path) -> list[dict[str, object]]:
    log = home / LOG
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_executors_a_throwaway_executor_runs_kb_verify_through_the_real_cli(
        throwaway: str, papers: Path, tmp_path: Path) -> None:
    home, store = tmp_path / "home", tmp_path / "store"
    assert throwaway in kb_cli("verify", "--help", env={"COLUMNS": "300"}).stdout
    done = kb_cli("verify", "exec-note", "--executor", throwaway, "--papers", str(papers), "--home", str(home),
                  "--artifact-store", str(store), "--offline")
    assert done.returncode == 0, done.stderr
    (call,) = calls(home)
    config = call["config"]
    assert call["call"] == "run" and isinstance(config, dict)
    # The one JobConfig: the flags of this command reached the executor.
    assert config["offline"] is True and config["artifact_store"] == str(store)
    assert config["home"] == str(home.resolve())
    (evidence,) = KnowledgeBase(Settings(papers=papers, home=home)).evidence("exec-note#echo")
    assert evidence.verdict is not None and evidence.verdict.kind.value == "supported"
    assert all((store / key).is_file() for key in evidence.artifacts), "files went to the configured store"

    unknown = kb_cli("verify", "exec-note", "--executor", "nope", "--papers", str(papers), "--home", str(home))
    assert unknown.returncode == 2 and throwaway in unknown.stderr and "'nope' is unknown" in unknown.stderr


def test_executors_slurm_refuses_a_sqlite_index_before_queueing(papers: Path, tmp_path: Path) -> None:
    done = kb_cli("verify", "exec-note", "--executor", "slurm", "--papers", str(papers), "--home",
                  str(tmp_path / "home"))
    assert done.returncode == 2 and "PostgreSQL" in done.stderr
    assert KnowledgeBase(Settings(papers=papers, home=tmp_path / "home")).runs() == []


def test_executors_the_app_lists_and_submits_to_a_throwaway_executor(
        throwaway: str, papers: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    for key, value in {"KB_PAPERS": papers, "KB_HOME": home, "KB_APP_WORKER": "false"}.items():
        monkeypatch.setenv(key, str(value))
    monkeypatch.delenv("KB_DATABASE_URL", raising=False)
    KnowledgeBase(Settings(papers=papers, home=home)).index()
    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60).run()
    at.query_params["id"] = "exec-note"
    at.switch_page("views/note.py").run()
    assert not at.exception, at.exception
    run_on = at.segmented_control(key="reverify_executor")
    assert "Throwaway" in run_on.options and {"This machine", "Ray", "Slurm"} <= set(run_on.options)
    run_on.set_value("Throwaway").run()
    at.button(key="reverify_note").click().run()
    assert not at.exception, at.exception
    (call,) = calls(home)
    (record,) = KnowledgeBase(Settings(papers=papers, home=home)).runs()
    assert call["call"] == "submit" and call["run_ids"] == [record.id] and record.executor == throwaway
    assert any("Throwaway" in s.value for s in at.success)


def test_executors_the_readme_table_is_the_registry_s(throwaway: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = readme.split("<!-- executors:begin -->\n", 1)[1].split("\n<!-- executors:end -->", 1)[0]
    generated = executors.markdown_table()  # with the throw-away executor registered
    assert f"| `{throwaway}` |" in generated
    built_in = "\n".join(line for line in generated.splitlines() if f"`{throwaway}`" not in line)
    assert shown == built_in, "regenerate the README's table with kb.queue.executors.markdown_table()"


def test_executors_ray_and_slurm_run_bodies_write_to_the_configured_store(papers: Path, tmp_path: Path) -> None:
    from kb.queue import slurm
    from kb.queue.executors.ray import execute_one

    store = tmp_path / "store"
    settings = Settings(papers=papers, home=tmp_path / "home", artifact_store=str(store), offline=True,
                        slurm=SlurmSettings(job_home=str(tmp_path / "node")))
    kb = KnowledgeBase(settings)
    kb.index()
    config = JobConfig.from_settings(settings)
    assert kb.job_config == config and config.offline and config.artifact_store == str(store)
    ray_run = queue_store.enqueue(kb.engine, "noop", {"value": 5.0}, executor="ray")
    slurm_run = queue_store.enqueue(kb.engine, "noop", {"value": 6.0}, executor="slurm")
    # The bodies of a Ray task and of a Slurm job, here: what travels to the other machine is the config.
    assert execute_one(config, ray_run.id) == "succeeded"
    assert slurm.run_job(config, slurm_run.id) == "succeeded"
    for run_id in (ray_run.id, slurm_run.id):
        (record, _) = next((e, r) for e, r in kb.analyzer_evidence("noop") if e.run_id == run_id)
        assert record.artifacts and all((store / key).is_file() for key in record.artifacts)
    assert not (kb.settings.home / "evidence").exists(), "nothing was written into the KB home instead"


def test_executors_kb_langevin_run_gets_offline_from_the_settings(tmp_path: Path) -> None:
    done = kb_cli("langevin", "run", "--scale", "smoke", "--pdb-id", "1ubq", "--out", str(tmp_path / "out"),
                  env={"KB_OFFLINE": "1", "KB_HOME": str(tmp_path / "home")})
    assert done.returncode == 1 and "offline (KB_OFFLINE): cannot download 1UBQ" in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()
