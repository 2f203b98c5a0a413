"""Cold estimates (issue 40): loading a heavy library is a first-use stage of the first run in a process that
needs it, and a first-use stage once paid here is estimated by its median here, not its declared time."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import pytest
from sqlmodel import Session

from analyzers import progress, registry
from analyzers.progress import MAIN_STAGE, first_use_stage, loading_stage
from kb.evidence import estimates
from kb.evidence.estimates import estimate, missing_libraries, own_seconds
from kb.index.database import Run, utcnow
from schemas import RunStatus
from tests.helpers.queue_kb import queue_kb


@pytest.fixture
def tiny_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A library module this process has not loaded, declared as the ``noop`` analyzer's (reference: 2 s)."""
    module = f"kb_test_library_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text("LOADED = True\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(progress.LIBRARIES, "tiny", (module, 2.0))
    monkeypatch.setattr(type(registry.get("noop")), "libraries", ("tiny",))
    return module


def test_the_first_run_in_a_process_loads_its_libraries_as_a_first_use_stage(
        tmp_path: Path, tiny_library: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # the speed pinned (the probe is measured again each minute and the load here changes): what is tested is
    # the stage it scales
    monkeypatch.setattr(estimates, "machine_slowness", lambda: 3.0)
    kb = queue_kb(tmp_path)
    noop = registry.get("noop")
    assert missing_libraries(noop) == ["tiny"]
    queued, _ = kb.verify()
    planned = kb.run_estimates[queued[0].id]
    stage = loading_stage("tiny")
    # the plan counts the load, its declared 2 s scaled by the measured speed, apart from the run's own time
    assert planned.stages[0] == (stage, 2.0 * 3.0)
    assert planned.stages[-1] == (MAIN_STAGE, None)  # (a custom preset: its own time not known yet)
    kb.work(once=True)
    assert tiny_library in sys.modules and missing_libraries(noop) == []
    run = kb.get_run(queued[0].id)
    assert run is not None and run.status is RunStatus.succeeded and run.actual_seconds is not None
    assert set(run.stages) == {stage, MAIN_STAGE}
    assert abs(sum(run.stages.values()) - run.actual_seconds) < 1e-6
    with Session(kb.engine) as session:
        stored = session.get(Run, run.id)
        assert stored is not None and own_seconds(stored) == pytest.approx(run.stages[MAIN_STAGE])
    # the next run in this process loads nothing: its estimate has no loading stage, and what the first took
    # here is what the next process's first run is told
    again = estimate(kb.engine, noop, noop.params_for({"value": 3}))
    assert [name for name, _ in again.stages] == [MAIN_STAGE]
    cold = estimate(kb.engine, noop, noop.params_for({"value": 3}), loading=["tiny"])
    assert cold.stages[0] == (stage, run.stages[stage])


def test_a_first_use_stage_paid_here_is_estimated_by_its_median_here(tmp_path: Path) -> None:
    kb = queue_kb(tmp_path)
    probe = registry.get("depth.probe")
    params = probe.params_for(scale="smoke")
    training = first_use_stage("training builtin:esm-designed-4x64")
    took = [30.0, 90.0, 50.0]
    with Session(kb.engine) as session:
        for seconds, status in [(s, RunStatus.succeeded) for s in took] + [(999.0, RunStatus.failed)]:
            session.add(Run(analyzer="depth.probe", params_json=json.dumps({"max_sequences": 3}),
                            status=status.value, finished_at=utcnow(), actual_seconds=seconds + 5.0,
                            stages_json=json.dumps({training: seconds, MAIN_STAGE: 5.0})))
        session.commit()
    found = estimate(kb.engine, probe, params, cache_dir=tmp_path / "cache", loading=())
    assert found.stages[0] == (training, statistics.median(took))  # a failed run's stage is no measurement
