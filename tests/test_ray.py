"""The Ray executor against a real local Ray instance: runs claimed through the same queue."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.queue import store as queue_store
from tests.helpers.queue_kb import queue_kb

pytestmark = pytest.mark.ray


def test_ray_executor_runs_queued_runs_once(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    kb = queue_kb(tmp_path)
    queued, _ = kb.verify(["q"], executor="ray")
    extra = queue_store.enqueue(kb.engine, "noop", {"value": 7.0}, executor="ray")
    ids = [queued[0].id, extra.id]
    statuses = kb.work_on_ray(ids, num_cpus=1)
    assert statuses == {ids[0]: "succeeded", ids[1]: "succeeded"}
    (ev,) = kb.evidence("q#echo-big")
    assert ev.verdict is not None and ev.verdict.kind.value == "supported"
    # A second submission of the same ids finds nothing left to claim.
    assert set(kb.work_on_ray(ids, num_cpus=1).values()) == {"skipped"}
