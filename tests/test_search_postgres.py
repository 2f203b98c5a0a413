"""A paper's source text is searched on PostgreSQL as on SQLite: through the real CLI, against a throw-away
PostgreSQL server, each hit with its page; the same queries give the same notes and pages on both
databases; an index made before the source pages were kept is filled by the next ``kb index``; a real PDF's
text is found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from kb.core import KnowledgeBase
from kb.settings import Settings
from tests.helpers.cli import run_kb

pytestmark = pytest.mark.postgres
ROOT = Path(__file__).resolve().parents[1]
LME4 = ROOT / "benchmarks" / "data" / "pdfs" / "lme4-lmer.pdf"
WIDE = {"COLUMNS": "200"}

# Four pages: words only on page 3, a hyphenated name on page 2, Chinese on page 4; the note's own text names
# 'depth', which its source repeats on page 1.
SOURCE = ("Introduction. We study depth in protein models.\f"
          "Methods. We fine-tune ESM-2 with restricted maximum likelihood.\f"
          "Results. The sleepstudy data fit with REML estimates; sleepstudy again.\f"
          "结论：梯度消失在深层模型中更明显。")
NOTE = ('---\npaper_id: "t:pg-source"\ntitle: "Paged source"\nsource_file: "sources/paged.txt"\n---\n'
        "A note about depth.\n")
OTHER = '---\npaper_id: "t:pg-other"\ntitle: "Other"\n---\nNothing of the source here.\n'
QUERIES = ("sleepstudy", "REML", "sleepst", "restricted likelihood", "ESM-2", "梯度消失", "depth",
           "nowhere-at-all")


def _library(root: Path) -> Path:
    papers = root / "papers"
    (papers / "sources").mkdir(parents=True)
    (papers / "sources" / "paged.txt").write_text(SOURCE, encoding="utf-8")
    (papers / "paged.md").write_text(NOTE, encoding="utf-8")
    (papers / "other.md").write_text(OTHER, encoding="utf-8")
    return papers


def _cli(papers: Path, home: Path, db: str | None, *args: str) -> str:
    extra = ["--db", db] if db else []
    result = run_kb(papers, home, *args, *extra, env=WIDE)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def _hits(papers: Path, home: Path, db: str | None, query: str) -> list[tuple[str, int | None]]:
    return [(h["id"], h["page"]) for h in json.loads(_cli(papers, home, db, "search", query, "--json"))]


def test_postgres_search_finds_source_pages_as_sqlite_does(pg_database: str, tmp_path: Path) -> None:
    papers = _library(tmp_path)
    _cli(papers, tmp_path / "pg-home", pg_database, "index")
    _cli(papers, tmp_path / "sqlite-home", None, "index")
    on_postgres = {q: _hits(papers, tmp_path / "pg-home", pg_database, q) for q in QUERIES}
    on_sqlite = {q: _hits(papers, tmp_path / "sqlite-home", None, q) for q in QUERIES}
    assert on_postgres == on_sqlite
    # What both should say, from the pages above: each word on its page, a prefix, the hyphenated name and
    # the Chinese run as written; a note matching in its own text comes without a page.
    assert on_postgres["sleepstudy"] == on_postgres["REML"] == on_postgres["sleepst"] == [("paged", 3)]
    assert on_postgres["restricted likelihood"] == on_postgres["ESM-2"] == [("paged", 2)]
    assert on_postgres["梯度消失"] == [("paged", 4)]
    assert on_postgres["depth"] == [("paged", None)] and on_postgres["nowhere-at-all"] == []
    (hit,) = json.loads(_cli(papers, tmp_path / "pg-home", pg_database, "search", "sleepstudy", "--json"))
    assert "[sleepstudy]" in hit["snippet"]
    assert "p. 3" in _cli(papers, tmp_path / "pg-home", pg_database, "search", "REML")


def test_postgres_source_pages_leave_with_the_note_and_follow_its_source(pg_database: str,
                                                                           tmp_path: Path) -> None:
    papers = _library(tmp_path)
    home = tmp_path / "home"
    _cli(papers, home, pg_database, "index")
    (papers / "sources" / "paged.txt").write_text("Only one page now, about mixed models.", encoding="utf-8")
    _cli(papers, home, pg_database, "index")
    assert _hits(papers, home, pg_database, "sleepstudy") == []
    assert _hits(papers, home, pg_database, "mixed") == [("paged", 1)]
    (papers / "paged.md").unlink()
    _cli(papers, home, pg_database, "index")
    assert _hits(papers, home, pg_database, "mixed") == []
    with create_engine(pg_database).connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM paper_fts_source")).scalar() == 0


def test_postgres_index_made_before_source_pages_is_filled_by_the_next_index(pg_database: str,
                                                                            tmp_path: Path) -> None:
    papers = _library(tmp_path)
    settings = Settings(papers=papers, home=tmp_path / "home", database_url=pg_database)
    KnowledgeBase(settings).index()
    engine = create_engine(pg_database)
    with engine.begin() as conn:  # what an index written by an older kb lacks
        conn.execute(text("DROP TABLE paper_fts_source"))
    engine.dispose()
    later = KnowledgeBase(settings)  # a new process: the table is created, the notes with a source re-read
    assert later.index().updated == ["paged"]
    assert [(h.paper_id, h.page) for h in later.search("sleepstudy")] == [("paged", 3)]


def test_postgres_source_text_is_cut_into_rows_a_word_index_can_hold(pg_database: str,
                                                                       tmp_path: Path) -> None:
    papers = _library(tmp_path)
    # One page of 3 MB without a page break (a long .txt): a tsvector holds at most 1 MB.
    page = " ".join(f"filler{i % 5000}" for i in range(300_000)) + " needleword"
    (papers / "sources" / "paged.txt").write_text(page + "\x00", encoding="utf-8")
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home", database_url=pg_database,
                                max_source_bytes=10_000_000))
    assert not kb.index().errors
    assert [(h.paper_id, h.page) for h in kb.search("needleword")] == [("paged", 1)]


@pytest.mark.skipif(not LME4.exists(), reason="the PDF corpus is missing: benchmarks/data/pdfs/")
def test_postgres_search_finds_words_inside_a_real_pdfs_text_with_the_page(pg_database: str,
                                                                            tmp_path: Path) -> None:
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    _cli(papers, home, pg_database, "add", str(LME4))
    source = next((papers / "sources").glob("*.txt")).read_text(encoding="utf-8")
    for word in ("sleepstudy", "Cholesky"):  # words of the full text only (the abstract is in the note's body)
        hits = json.loads(_cli(papers, home, pg_database, "search", word, "--json"))
        assert [h["id"] for h in hits] == ["fitting-linear-mixed-effects-models-using-lme4"]
        pages_with_word = [i for i, page in enumerate(source.split("\f"), 1) if word.lower() in page.lower()]
        assert hits[0]["page"] in pages_with_word and f"[{word}" in hits[0]["snippet"]
