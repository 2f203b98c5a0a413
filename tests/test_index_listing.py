"""`kb list` on a current index (``kb.index.listing``): it answers with sqlite3 only while the index is current
(the indexer's own rule), so an edited, new, moved or removed note, a changed source text or an unreadable note
sends it through the full path, which indexes and names what it could not read; its filters are one SQL rule
that SQLite (sqlite3 and SQLAlchemy) and PostgreSQL run alike; its locations are the settings model's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kb.cli import listing as listing_cli
from kb.core import KnowledgeBase, paper_summary
from kb.index.listing import current_listing
from kb.locations import plain_locations
from kb.settings import Settings
from tests.helpers.cli import run_kb

WIDE = {"COLUMNS": "200"}
# Notes with no year and no quality score: the sort puts empty values last on every backend.
BARE = '---\npaper_id: "t:{name}"\ntitle: "{title}"\n---\n'


@pytest.fixture
def fast_answers(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each `kb list` the test runs was answered by the fast path (False: the index was not current)."""
    answers: list[bool] = []
    real = listing_cli.current_listing

    def spy(*args: Any, **kwargs: Any) -> list[dict[str, Any]] | None:
        rows = real(*args, **kwargs)
        answers.append(rows is not None)
        return rows

    monkeypatch.setattr(listing_cli, "current_listing", spy)
    return answers


def _listed(papers: Path, home: Path, *args: str) -> str:
    done = run_kb(papers, home, "list", *args, env=WIDE)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_list_notices_an_edited_new_moved_touched_or_removed_note(kb_dirs: tuple[Path, Path],
                                                                  fast_answers: list[bool]) -> None:
    papers, home = kb_dirs
    assert "6 note(s)" in _listed(papers, home)  # the first list indexes (no index yet)
    assert "6 note(s)" in _listed(papers, home)
    assert fast_answers == [False, True]
    note = papers / "plm-bert-vs-gpt-comments.md"
    note.write_text(note.read_text(encoding="utf-8").replace("Reader discussion, part 2", "Edited title", 1),
                    encoding="utf-8")
    assert "Edited title" in _listed(papers, home) and "Edited title" in _listed(papers, home)
    (papers / "bare.md").write_text(BARE.format(name="bare", title="A new bare note"), encoding="utf-8")
    assert "A new bare note" in _listed(papers, home) and "7 note(s)" in _listed(papers, home)
    (papers / "sub").mkdir()
    (papers / "bare.md").rename(papers / "sub" / "bare.md")  # moved: same id, another path
    assert "7 note(s)" in _listed(papers, home)
    stat = note.stat()
    os.utime(note, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # touched, same bytes
    assert "Edited title" in _listed(papers, home)
    (papers / "sub" / "bare.md").unlink()
    shown = _listed(papers, home)
    assert "A new bare note" not in shown and "6 note(s)" in shown
    assert "6 note(s)" in _listed(papers, home)
    # each change was seen by the full path (False), and the index was current again right after it
    assert fast_answers == [False, True, False, True, False, True, False, False, False, True]


def test_list_names_an_unreadable_note_every_time_and_strict_exits_1(kb_dirs: tuple[Path, Path],
                                                                    fast_answers: list[bool]) -> None:
    papers, home = kb_dirs
    (papers / "broken.md").write_text("---\ntitle: [unclosed\n---\n", encoding="utf-8")
    for _ in range(2):  # the broken note has no row, so the index is never current for the fast path
        done = run_kb(papers, home, "list", env=WIDE)
        assert done.returncode == 0 and "6 note(s)" in done.stdout
        assert "could not read" in done.stderr and "broken.md" in done.stderr
    assert run_kb(papers, home, "list", "--strict").returncode == 1
    assert fast_answers == [False, False, False]
    (papers / "broken.md").unlink()
    assert run_kb(papers, home, "list", "--strict").returncode == 0


def test_a_changed_source_text_makes_the_index_stale(kb: KnowledgeBase) -> None:
    kb.index()
    database = Path(kb.settings.resolved_database_url.removeprefix("sqlite:///"))
    assert current_listing(database, kb.papers_dir) is not None
    source = kb.papers_dir / "sources" / "sampling-intermediate-temperatures-langevin.txt"
    stat = source.stat()
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # its claims must be re-checked
    assert current_listing(database, kb.papers_dir) is None
    assert "sampling-intermediate-temperatures-langevin" in kb.index().updated
    assert current_listing(database, kb.papers_dir) is not None


def test_an_index_at_another_schema_revision_is_not_read(kb: KnowledgeBase) -> None:
    kb.index()
    database = Path(kb.settings.resolved_database_url.removeprefix("sqlite:///"))
    with kb.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = 'from-a-newer-kb'")
    assert current_listing(database, kb.papers_dir) is None  # the full path says what to do with it
    assert current_listing(database.with_name("missing.sqlite"), kb.papers_dir) is None


FILTERS: list[dict[str, Any]] = [
    {}, {"tag": "LANGEVIN"}, {"tag": "Plm", "sort": "title"}, {"decision": "maybe"}, {"status": "analyzed"},
    {"min_quality": 3}, {"year": 2026}, {"sort": "year", "descending": True}, {"sort": "quality"},
    {"sort": "quality", "descending": True}, {"sort": "year"},
]


def _with_bare_notes(papers: Path) -> None:
    for name in ("bare-b", "bare-a"):
        (papers / f"{name}.md").write_text(BARE.format(name=name, title=name.upper()), encoding="utf-8")


def test_the_fast_listing_equals_the_full_path_on_sqlite(kb: KnowledgeBase) -> None:
    _with_bare_notes(kb.papers_dir)
    kb.index()
    database = Path(kb.settings.resolved_database_url.removeprefix("sqlite:///"))
    for filters in FILTERS:
        full = [paper_summary(p) for p in kb.list_papers(**filters)]
        assert current_listing(database, kb.papers_dir, **filters) == full, filters
    ids = [paper.id for paper in kb.list_papers(sort="year")]
    assert ids[-2:] == ["bare-a", "bare-b"]  # no year: last, ties by id
    assert [paper.id for paper in kb.list_papers(tag="LANGEVIN")] == ["sampling-intermediate-temperatures-langevin"]
    with pytest.raises(ValueError, match="sort must be one of"):
        current_listing(database, kb.papers_dir, sort="size")


@pytest.mark.postgres
def test_the_filter_rule_gives_the_same_rows_on_postgresql(pg_database: str, kb_dirs: tuple[Path, Path],
                                                         tmp_path: Path) -> None:
    papers, home = kb_dirs
    _with_bare_notes(papers)
    on_postgres = KnowledgeBase(Settings(papers=papers, home=home, database_url=pg_database))
    assert not on_postgres.index().errors
    on_sqlite = KnowledgeBase(Settings(papers=papers, home=tmp_path / "sqlite-home"))
    on_sqlite.index()
    database = Path(on_sqlite.settings.resolved_database_url.removeprefix("sqlite:///"))
    for filters in FILTERS:
        expected = current_listing(database, papers, **filters)
        assert expected is not None
        assert [paper_summary(p) for p in on_postgres.list_papers(**filters)] == expected, filters


def test_the_listing_finds_the_index_where_the_settings_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.lower() in {"kb_papers", "kb_home", "kb_database_url"}:
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    default = Settings()
    assert plain_locations(None, None, None) == (
        default.papers, Path(default.resolved_database_url.removeprefix("sqlite:///")))
    given = Settings(papers=tmp_path / "p", home=tmp_path / "h")
    assert plain_locations(tmp_path / "p", tmp_path / "h", None) == (
        given.papers, Path(given.resolved_database_url.removeprefix("sqlite:///")))
    assert plain_locations(None, None, "sqlite:///elsewhere.sqlite") is None  # a URL: the settings decide
    monkeypatch.setenv("kb_home", str(tmp_path / "lower"))  # read by the settings model, not by typer
    assert Settings().home == tmp_path / "lower" and plain_locations(None, None, None) is None
    assert plain_locations(None, tmp_path / "h", None) is not None  # an option wins over the variable
