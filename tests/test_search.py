"""Search finds every substring of two or more characters of a note, in Chinese and in English, on SQLite
and PostgreSQL; English keeps its word ranking; tags match whatever their case."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from kb.core import KnowledgeBase
from kb.index.search import cjk_query, cjk_tokens
from kb.settings import Settings

SEED = "000_ce90e91fe3e899e8.txt"


def _seed_kb(seeds: Path, tmp_path: Path, db: str | None = None) -> KnowledgeBase:
    papers = tmp_path / "papers"
    papers.mkdir()
    shutil.copy(seeds / SEED, papers / "seed.md")
    (papers / "other.md").write_text('---\npaper_id: "t:other"\ntitle: "Language models of proteins"\n'
                                     'tags: [ESM2]\n---\n蛋白质折叠与结构预测。Protein structure prediction.\n',
                                     encoding="utf-8")
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home", database_url=db))
    assert not kb.index().errors
    return kb


def _recall(kb: KnowledgeBase, samples: int = 200) -> list[str]:
    text = kb.read("seed").body
    rng = random.Random(20261124)
    missed = []
    taken = 0
    while taken < samples:
        n = rng.randint(2, 4)
        start = rng.randrange(0, len(text) - n)
        query = text[start : start + n]
        if not any(ch.isalnum() for ch in query):
            continue  # nothing to search for in pure punctuation or spaces
        taken += 1
        if "seed" not in {hit.paper_id for hit in kb.search(query, limit=50)}:
            missed.append(query)
    return missed


def test_cjk_runs_become_overlapping_bigrams() -> None:
    assert cjk_tokens("PLM的梯度消失问题") == "PLM 的梯 梯度 度消 消失 失问 问题 题 "
    assert cjk_query("梯度消失") == '"梯度 度消 消失"'
    assert cjk_query("型") == '"型"*'


def test_every_substring_of_the_users_chinese_note_is_found(seeds: Path, tmp_path: Path) -> None:
    kb = _seed_kb(seeds, tmp_path)
    assert _recall(kb) == []
    for word in ("蛋白质语言模型", "梯度消失", "表达能力"):
        (hit,) = [h for h in kb.search(word) if h.paper_id == "seed"]
        assert f"[{word}]" in hit.snippet
    assert [h.paper_id for h in kb.search("蛋白质折叠")] == ["other"]
    assert kb.search("诅咒折叠") == []  # a phrase, not two bigrams found apart


def test_english_ranking_and_fragments(seeds: Path, tmp_path: Path) -> None:
    kb = _seed_kb(seeds, tmp_path)
    assert kb.search("proteins")[0].paper_id == "other"  # the title match ranks first, as before
    assert kb.search("ntrop")[0].paper_id == "seed"  # inside 'entropy': found by the substring fallback
    assert [h.paper_id for h in kb.search("(PLM)")] == ["seed"]  # punctuation: matched as typed


def test_tags_match_whatever_their_case(seeds: Path, tmp_path: Path) -> None:
    kb = _seed_kb(seeds, tmp_path)
    assert [p.id for p in kb.list_papers(tag="esm2")] == [p.id for p in kb.list_papers(tag="ESM2")] == ["other"]


@pytest.mark.postgres
def test_chinese_search_on_postgres(seeds: Path, tmp_path: Path, pg_database: str) -> None:
    kb = _seed_kb(seeds, tmp_path, pg_database)
    assert _recall(kb, samples=100) == []
    assert [p.id for p in kb.list_papers(tag="esm2")] == ["other"]


def test_an_index_made_before_the_cjk_table_is_filled_once(seeds: Path, tmp_path: Path) -> None:
    kb = _seed_kb(seeds, tmp_path)
    with kb.engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE paper_fts_cjk")
    from kb.index.opening import init_db

    init_db(kb.engine)
    assert "seed" in {h.paper_id for h in kb.search("梯度消失")}
