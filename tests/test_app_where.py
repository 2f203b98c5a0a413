"""The Library's saved query (issue 40): the filter box speaks `kb list --where`'s grammar (kb.evidence.where)
and the address bar keeps it (``?where=...``), so a view can be bookmarked."""

from __future__ import annotations

from tests.helpers.app_env import AppEnv, open_app


def _ids(at: object) -> list[str]:
    return sorted(at.dataframe(key="lib_table").value["id"])  # type: ignore[attr-defined]


def test_library_where_box_filters_and_keeps_the_query_in_the_url(app_env: AppEnv) -> None:
    at = open_app()
    everything = _ids(at)
    at.text_input(key="lib_where").input("quality_score>=4; decision=ACCEPT").run()
    assert not at.exception
    kept = _ids(at)
    assert kept and "noop-note" not in kept and len(kept) < len(everything)  # the noop note: quality 3, MAYBE
    assert at.query_params["where"] == "quality_score>=4; decision=ACCEPT"
    at.text_input(key="lib_where").input("").run()
    assert _ids(at) == everything and "where" not in at.query_params


def test_library_opened_from_a_bookmark_applies_its_where(app_env: AppEnv) -> None:
    at = open_app("library", where="tags=testing; publication.year<2025")  # dotted: a nested field, as a number
    assert at.text_input(key="lib_where").value == "tags=testing; publication.year<2025"
    assert _ids(at) == ["noop-note"]


def test_library_where_with_an_unknown_field_says_so_in_one_line(app_env: AppEnv) -> None:
    at = open_app()
    at.text_input(key="lib_where").input("qualty_score>=4").run()
    assert not at.exception and not at.dataframe
    (error,) = at.error
    text = error.value.replace("\\", "")  # markdown_text escapes '_'
    assert "qualty_score" in text and "did you mean `quality_score`?" in text
