"""The Runs page as MLflow's run table (issue 40): chosen metric columns, sorting and filtering by a metric, a run's
estimate against its actual time, and the curve a run recorded; a foreground ``kb demo`` is not called a
background worker."""

from __future__ import annotations

import os
import socket
import sys

import pytest

from kb.queue import daemon
from kb.queue import store as queue_store
from tests.helpers.app_env import AppEnv, open_app


@pytest.fixture
def runs_env(app_env: AppEnv) -> AppEnv:
    """Three finished noop runs echoing 1, 5 and 3, the last with a per-step series of 20 steps."""
    kb = app_env.kb
    for value, steps in ((1.0, 0), (5.0, 0), (3.0, 20)):
        queue_store.enqueue(kb.engine, "noop", {"value": value, "curve_steps": steps})
    kb.work()
    return app_env


def test_runs_page_shows_metric_columns_sorts_and_filters_by_a_metric(runs_env: AppEnv) -> None:
    at = open_app("runs")
    assert at.multiselect(key="runs_metrics").value == ["value"]  # the metric the runs hold, shown by default
    table = at.dataframe(key="runs_table_0").value
    assert sorted(table["value"].tolist()) == [1.0, 3.0, 5.0]
    at.selectbox(key="runs_sort").set_value("value").run()
    assert at.dataframe(key="runs_table_0").value["value"].tolist() == [5.0, 3.0, 1.0]
    at.toggle(key="runs_descending").set_value(False).run()
    assert at.dataframe(key="runs_table_0").value["value"].tolist() == [1.0, 3.0, 5.0]
    at.text_input(key="runs_condition").input("value >= 3").run()
    assert at.dataframe(key="runs_table_0").value["value"].tolist() == [3.0, 5.0]
    at.text_input(key="runs_condition").input("value >>").run()
    assert any("is not a metric filter" in w.value for w in at.warning)
    at.multiselect(key="runs_metrics").set_value([]).run()
    assert "value" not in at.dataframe(key="runs_table_0").value.columns


def test_a_runs_page_plots_its_curve_and_says_its_estimate_and_time(runs_env: AppEnv) -> None:
    kb = runs_env.kb
    with_curve = next(r for r in kb.runs() if r.params.get("curve_steps") == 20)
    at = open_app("runs", run=with_curve.id)
    assert not at.exception
    assert at.selectbox(key=f"run_curve_{with_curve.id}").value == "loss_by_step"
    chart = at.get("vega_lite_chart")
    assert chart, "the run's curve is plotted"
    spec = chart[0].proto.spec
    assert '"title": "step"' in spec and '"format": "~g"' in spec  # plain numbers on the axes
    captions = " ".join(c.value for c in at.caption)
    assert "took " in captions and ("estimated" in captions or "no estimate" in captions)


def test_a_foreground_demo_is_not_called_a_background_worker(runs_env: AppEnv) -> None:
    # What `kb demo` records while it works the queue in a terminal (daemon.registered_worker)
    info = daemon.WorkerInfo(pid=os.getpid(), host=socket.gethostname(), started_at="2026-01-01T00:00:00+00:00",
                             log_path=daemon.log_path(runs_env.home),
                             command=[sys.executable, "-m", "kb.cli", "demo"], foreground=True)
    assert daemon.command_name(info.command) == "kb demo"
    assert "survive closing the tab" not in info.words() and "`kb demo`" in info.words()
    with daemon.registered_worker(runs_env.home):
        at = open_app("runs")
    shown = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "Worker running in a terminal" in shown and "Background worker" not in shown
    assert "survive closing the tab" not in shown
