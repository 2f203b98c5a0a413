"""A claim crosses from the note to its verdict through the index (issue 34): the note is validated when it is
indexed, and after that the claim is read back from the index once in each process that needs it, the one
that queues its run and the worker that judges it, and never parsed again inside either."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from kb.index import indexing
from kb.queue import store as queue_store
from schemas import Claim, RunStatus
from tests.helpers.queue_kb import queue_kb


def test_a_claim_is_read_once_where_it_is_queued_and_once_where_it_is_judged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kb = queue_kb(tmp_path)
    reads: collections.Counter[str] = collections.Counter()
    parse = Claim.model_validate_json

    def counted(text: str | bytes, **kwargs: object) -> Claim:
        reads[phase] += 1
        return parse(text, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(indexing.Claim, "model_validate_json", counted)
    phase = "queue"
    queued, _ = kb.verify(["q#echo-big"])
    phase = "judge"
    kb.work(once=True)
    run = queue_store.get_run(kb.engine, queued[0].id)
    assert run is not None and run.status == RunStatus.succeeded.value
    assert kb.run_verdicts([run.id])[run.id] is not None  # judged
    assert reads == {"queue": 1, "judge": 1}
