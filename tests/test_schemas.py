"""Schema behaviour: typed fields, kept unknown fields, clear errors, expectation shapes."""

from __future__ import annotations

import datetime as dt

import pytest
from pydantic import ValidationError

from schemas import Claim, Expectation, PaperNote


def test_papernote_keeps_unknown_fields_and_parses_dates() -> None:
    note = PaperNote.model_validate(
        {"paper_id": "a:1", "title": "T", "is_zheng_shuangjia_paper": False,
         "decision_date": "2026-02-28", "analysis_date": dt.date(2026, 3, 1)}
    )
    assert note.extra_fields == {"is_zheng_shuangjia_paper": False}
    assert note.decision_date == dt.date(2026, 2, 28)
    assert note.model_dump()["is_zheng_shuangjia_paper"] is False


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [("quality_score", "high", "quality_score"), ("quality_score", 9, "less than or equal to 5"),
     ("decision", "PERHAPS", "ACCEPT"), ("status", "done", "analyzed"), ("decision_date", "28/02/2026", "YYYY-MM-DD")],
)
def test_papernote_rejects_bad_values_with_clear_message(field: str, value: object, needle: str) -> None:
    with pytest.raises(ValidationError) as info:
        PaperNote.model_validate({"paper_id": "a:1", "title": "T", field: value})
    assert needle in str(info.value)


def test_papernote_rejects_duplicate_claim_ids() -> None:
    claim = {"id": "c1", "statement": "s"}
    with pytest.raises(ValidationError, match="duplicate claim id 'c1'"):
        PaperNote.model_validate({"paper_id": "a:1", "title": "T", "claims": [claim, claim]})


def test_claim_id_format_is_checked() -> None:
    with pytest.raises(ValidationError, match="claim id"):
        Claim.model_validate({"id": "Bad Id!", "statement": "s"})


@pytest.mark.parametrize(
    "payload",
    [{"metric": "m", "op": "between", "value": 3}, {"metric": "m", "op": "between", "value": [5, 1]},
     {"metric": "m", "op": "<", "value": [1, 2]}, {"metric": "m", "op": "approx", "value": 1.0}],
)
def test_expectation_shape_must_match_operator(payload: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Expectation.model_validate(payload)


def test_expectation_accepts_well_formed_predicates() -> None:
    assert Expectation.model_validate({"metric": "m", "op": "between", "value": [24, 36]}).value == [24, 36]
    assert Expectation.model_validate({"metric": "m", "op": "approx", "value": 8.2, "tolerance": 0.5}).tolerance == 0.5
