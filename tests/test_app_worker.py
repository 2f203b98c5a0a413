"""The app with its background worker process, the Compare page and the Ask page.

Runs queued from the app are executed by a real ``kb worker --forever`` process the app starts
(``kb.queue.daemon``); the worker outlives the AppTest session that started it. Compare reads real
evidence produced by a small per-layer analyzer registered for the test; Ask runs the real LangChain
agent over the real database with a scripted fake chat model standing in for the LLM.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from langchain_core.messages import AIMessage
from pydantic import Field
from sqlmodel import Session

from analyzers import registry
from analyzers.base import Analyzer, AnalyzerParams, AnalyzerResult, RunContext
from kb.index.database import Run
from kb.queue import daemon
from kb.queue import store as queue_store
from kb.settings import Settings
from schemas.run import EvidenceScale
from tests.helpers.app_env import AppEnv, badges, make_env, open_app
from tests.helpers.chat import call, scripted
from tests.helpers.cli import kb_command

WAIT_SECONDS = 90


@pytest.fixture
def worker_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppEnv]:
    """A knowledge base whose app starts background workers (stopped after the test)."""
    env = make_env(tmp_path, monkeypatch, worker=True)
    yield env
    daemon.stop_worker(env.home)
    st.cache_resource.clear()
    st.cache_data.clear()


def wait_for(condition: Any, what: str, seconds: float = WAIT_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


def worker_of(env: AppEnv, run_id: str) -> str | None:
    with Session(env.kb.engine) as session:
        row = session.get(Run, run_id)
        return row.worker_id if row else None


# -- the background worker ----------------------------------------------------------------------

def test_note_reverify_is_run_by_the_background_worker_which_outlives_the_session(worker_env: AppEnv) -> None:
    kb = worker_env.kb
    at = open_app("note", id="noop-note")
    at.button(key="reverify_noop-note#value-above-two").click().run()
    info = daemon.find_worker(worker_env.home)
    assert info is not None, "re-verifying started a worker"
    assert os.getsid(info.pid) != os.getsid(0), "the worker runs in its own session, detached from the app"

    def verdict_shown() -> bool:
        at.run()  # what the page's polling fragment does every second
        return any(b.startswith(":green-badge[") and b.endswith("supported]") for b in badges(at))

    wait_for(verdict_shown, "the verdict on the note page")
    (run,) = kb.runs()
    assert run.status.value == "succeeded" and worker_of(worker_env, run.id) == f"{info.host}:{info.pid}"
    assert kb.evidence("noop-note#value-above-two")[0].verdict.kind.value == "supported"

    st.cache_resource.clear()  # the app's handles are gone; the worker is not
    assert daemon.pid_alive(info.pid) and daemon.find_worker(worker_env.home) == info
    (again,), _ = kb.verify(["noop-note#value-above-two"])
    wait_for(lambda: kb.get_run(again.id).status.value == "succeeded", "a run queued after the session ended")
    assert worker_of(worker_env, again.id) == f"{info.host}:{info.pid}"


def test_app_restart_starts_a_worker_for_runs_left_in_the_queue(worker_env: AppEnv) -> None:
    kb = worker_env.kb
    (queued,), _ = kb.verify(["noop-note#value-above-two"])  # queued while no app and no worker ran
    assert daemon.find_worker(worker_env.home) is None
    open_app()  # a freshly started app finds the waiting run
    assert daemon.find_worker(worker_env.home) is not None
    wait_for(lambda: kb.get_run(queued.id).status.value == "succeeded", "the waiting run")


def test_live_progress_then_cancel_from_the_runs_page(worker_env: AppEnv) -> None:
    kb = worker_env.kb
    (worker_env.papers / "slow.md").write_text(
        "---\npaper_id: \"test:slow\"\ntitle: \"Slow note\"\nclaims:\n  - id: slow\n    statement: \"Slow.\"\n"
        "    analyzer:\n      name: noop\n      params: {steps: 400, step_seconds: 0.05}\n---\n", encoding="utf-8")
    kb.index()
    at = open_app("note", id="slow")
    at.button(key="reverify_slow#slow").click().run()
    (run,) = kb.runs()
    wait_for(lambda: kb.get_run(run.id).progress > 0.02, "progress from the worker")
    at.run()
    bars = [p for p in at.get("progress")]
    assert bars, "the note page shows the run's progress"
    at.switch_page("views/runs.py")
    at.query_params["run"] = run.id
    at.run()
    at.button(key="run_cancel").click().run()
    wait_for(lambda: kb.get_run(run.id).status.value == "cancelled", "the cancellation")
    assert not kb.evidence("slow#slow")


def test_background_ensure_is_idempotent_and_stop_ends_it(tmp_path: Path) -> None:
    settings = Settings(papers=tmp_path / "papers", home=tmp_path / "home")
    (tmp_path / "papers").mkdir()
    first, started = daemon.ensure_worker(settings)
    try:
        assert started
        again, started_again = daemon.ensure_worker(settings)
        assert again == first and not started_again
        assert "starting:" in daemon.log_tail(settings.home)
    finally:
        assert daemon.stop_worker(settings.home)
    assert daemon.find_worker(settings.home) is None and not daemon.pid_alive(first.pid)
    assert not daemon.stop_worker(settings.home)



def test_a_foreground_worker_is_the_homes_worker_so_the_app_starts_no_second(tmp_path: Path) -> None:
    # `kb demo` and `kb worker` work the queue in the foreground; the app, opened meanwhile, must see them
    # (two workers would run two analyzers at once on the same cores).
    settings = Settings(papers=tmp_path / "papers", home=tmp_path / "home")
    (tmp_path / "papers").mkdir()
    env = {**os.environ, "KB_PAPERS": str(settings.papers), "KB_HOME": str(settings.home)}
    foreground = subprocess.Popen(kb_command(None, None, "worker", "--forever"), env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: daemon.find_worker(settings.home) is not None, "the foreground worker's record", 60)
        found = daemon.find_worker(settings.home)
        assert found is not None and found.pid == foreground.pid
        again, started = daemon.ensure_worker(settings)  # what the app does when runs wait
        assert not started and again.pid == foreground.pid
    finally:
        foreground.send_signal(signal.SIGINT)
        foreground.wait(timeout=30)
    assert daemon.find_worker(settings.home) is None and not daemon.pidfile_path(settings.home).exists()

def test_background_ignores_dead_and_recycled_pids(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    record = ('{{"pid": {pid}, "host": "{host}", "started_at": "x", "log_path": "x", '
              '"command": ["python", "-m", "kb.cli", "worker", "--forever"]}}')
    import socket

    daemon.pidfile_path(home).write_text(record.format(pid=dead.pid, host=socket.gethostname()))
    assert daemon.find_worker(home) is None
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])  # alive, not a worker
    try:
        daemon.pidfile_path(home).write_text(record.format(pid=other.pid, host=socket.gethostname()))
        assert daemon.find_worker(home) is None
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()


# -- Compare ------------------------------------------------------------------------------------

class LayersParams(AnalyzerParams):
    """A stand-in 'model' with a given depth."""

    model: str = Field(default="tiny", description="Model name (labels the curve).")
    num_layers: int = Field(default=4, ge=2, description="Layers of the model.")


class LayersResult(AnalyzerResult):
    """A per-layer KL that halves every layer, and a scalar."""

    layers: dict[str, list[float]] = Field(description="Per-layer lists.")
    final_kl: float = Field(description="KL at the last layer.")


class LayersProbe(Analyzer[LayersParams, LayersResult]):
    """Per-layer lists of a known shape, for the Compare page."""

    name = "test.layers"
    summary = "Per-layer KL of a stand-in model: 2 ** -layer."
    Params = LayersParams
    Result = LayersResult
    metrics = {"final_kl": "KL at the last layer"}

    def run(self, params: LayersParams, ctx: RunContext) -> LayersResult:
        kl = [2.0 ** -layer for layer in range(params.num_layers)]
        return LayersResult(layers={"kl": kl, "entropy": [math.log(2)] * params.num_layers}, final_kl=kl[-1],
                            scale=EvidenceScale(name="smoke"))


@pytest.fixture
def layers_analyzer() -> Iterator[None]:
    registry.register(LayersProbe)
    yield
    registry._REGISTRY.pop(LayersProbe.name, None)


def test_compare_overlays_per_layer_metric_of_several_models(app_env_compare: AppEnv) -> None:
    at = open_app("compare")
    at.selectbox(key="cmp_analyzer").set_value("test.layers").run()
    assert at.multiselect(key="cmp_metrics").value == ["layers.kl"]  # KL-like paths first
    assert set(at.multiselect(key="cmp_metrics").options) >= {"layers.kl (3 runs)", "layers.entropy (3 runs)"}
    assert at.selectbox(key="cmp_label").value == "model and scale"  # curves named by what tells runs apart
    summary = next(f for f in (d.value for d in at.dataframe) if "curve" in f.columns)
    summary = summary.set_index(summary["curve"].str.split(" · ").str[0])  # 'esm2-large · smoke (...)': the model
    assert summary["layers"].to_dict() == {"esm2-small": 4, "esm2-medium": 6, "esm2-large": 12}
    assert summary.loc["esm2-large", "last"] == pytest.approx(2.0 ** -11)
    at.selectbox(key="cmp_label").set_value("model").run()  # or by the parameter that varies between runs
    summary = next(f for f in (d.value for d in at.dataframe) if "curve" in f.columns).set_index("curve")
    assert summary["layers"].to_dict() == {"esm2-small": 4, "esm2-medium": 6, "esm2-large": 12}
    charts = at.get("vega_lite_chart")
    assert charts and "relative depth" in charts[0].proto.spec
    at.segmented_control(key="cmp_x").set_value("layer").run()
    assert '"layer"' in at.get("vega_lite_chart")[0].proto.spec


@pytest.fixture
def app_env_compare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layers_analyzer: None) -> Iterator[AppEnv]:
    env = make_env(tmp_path, monkeypatch)
    kb = env.kb
    for model, depth in (("esm2-small", 4), ("esm2-medium", 6), ("esm2-large", 12)):
        queue_store.enqueue(kb.engine, "test.layers", {"model": model, "num_layers": depth, "device": "cpu", "seed": 0})
    assert kb.work() == {"succeeded": 3}
    yield env
    st.cache_resource.clear()
    st.cache_data.clear()


def test_compare_without_evidence_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_env(tmp_path, monkeypatch)
    at = open_app("compare")
    assert any("No per-layer evidence yet" in i.value for i in at.info)


# -- Ask ----------------------------------------------------------------------------------------

def test_ask_answers_with_citation_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = make_env(tmp_path, monkeypatch)
    kb = env.kb
    kb.verify(["noop-note"])
    kb.work()
    (run,) = kb.runs()
    model = scripted(
        call("search_notes", {"query": "noop"}, "c1"),
        call("read_note", {"note_id": "noop-note"}, "c3"),
        call("read_evidence", {"claim_key": "noop-note#value-above-two"}, "c2"),
        AIMessage(content="The noop note's claim is **supported**: the regenerated value is 3 (> 2)."),
    )
    from kb.agents import config

    monkeypatch.setattr(config, "chat_model", lambda spec=None: model)
    at = open_app("ask")
    at.chat_input(key="ask_input").set_value("Is the noop claim supported?").run()
    assert not at.exception
    messages = at.chat_message
    assert [m.name for m in messages] == ["user", "assistant"]
    assert "**supported**" in messages[1].markdown[0].value
    links = {(link.value, link.proto.query_string) for link in at.get("page_link")}
    assert ("noop-note", "id=noop-note") in links
    assert ("noop-note#value-above-two", "id=noop-note") in links
    assert (f"run {run.id[:8]}", f"run={run.id}") in links
    assert at.session_state["chat"][1]["citations"]


def test_background_worker_starts_in_the_checkout_root_where_no_kb_package_shadows_the_standard_library() -> None:
    # Started from ``kb/`` (as it once was), ``python -m`` put that folder first on the worker's import path and
    # ``kb/queue`` hid the standard library's ``queue`` from every analyzer that imports it.
    assert (daemon.ROOT / "pyproject.toml").is_file()
    shadowing = [name for name in ("queue", "json", "logging", "typing") if (daemon.ROOT / name).exists()]
    assert not shadowing
    probe = subprocess.run([sys.executable, "-c", "import queue; print(queue.__file__)"], cwd=daemon.ROOT,
                           capture_output=True, text=True, check=True)
    assert "/kb/" not in probe.stdout
