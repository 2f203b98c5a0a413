"""Tests of the incremental index, queries and full-text search (real SQLite in tmp_path)."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from kb.index import indexing as kb_index
from kb.index.database import make_engine
from kb.index.indexing import claims_for, get_paper, index_notes, list_papers, search
from kb.notes.files import NoteError


def note_text(
    paper_id: str,
    title: str,
    *,
    tags: list[str] | None = None,
    quality: int | None = 3,
    decision: str = "ACCEPT",
    year: int = 2024,
    status: str = "analyzed",
    body: str = "Some body text.",
    claims: str = "",
) -> str:
    tag_lines = "".join(f'  - "{t}"\n' for t in (tags or []))
    q = f"quality_score: {quality}\n" if quality is not None else ""
    fm = (
        f'paper_id: "{paper_id}"\ntitle: "{title}"\ntags:\n{tag_lines}'
        if tags
        else f'paper_id: "{paper_id}"\ntitle: "{title}"\ntags: []\n'
    )
    return (
        "---\n"
        + fm
        + q
        + f'decision: "{decision}"\nstatus: "{status}"\npublication:\n  year: {year}\n'
        + claims
        + "custom_flag: true\n"
        + "---\n\n"
        + body
        + "\n"
    )


CLAIMS = textwrap.dedent(
    """\
    claims:
      - id: optimal-depth
        statement: "Perplexity saturates beyond thirty-six transformer layers"
        kind: quantitative
        analyzer:
          name: depth.probe
      - id: trend
        statement: "Attention entropy collapses in deep models"
    """
)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def papers(tmp_path: Path) -> Path:
    folder = tmp_path / "papers"
    folder.mkdir()
    write(
        folder,
        "a-depth",
        note_text(
            "arxiv:1",
            "Curse of depth in protein language models",
            tags=["plm", "depth"],
            quality=5,
            year=2026,
            claims=CLAIMS,
            body="We study 深度 诅咒 in PLMs. Rank collapse appears.",
        ),
    )
    write(
        folder,
        "b-fold",
        note_text(
            "arxiv:2",
            "Folding with evolutionary scale",
            tags=["plm", "structure"],
            quality=3,
            year=2023,
            decision="MAYBE",
            body="Depth is mentioned here once. 蛋白质 结构.",
        ),
    )
    write(
        folder,
        "c-rna",
        note_text(
            "arxiv:3",
            "RNA models and depth",
            tags=["rna"],
            quality=1,
            year=2025,
            decision="REJECT",
            status="archived",
            body="Nothing about proteins.",
        ),
    )
    sub = folder / "sub"
    sub.mkdir()
    write(
        sub,
        "d-nested",
        note_text(
            "arxiv:4",
            "Nested note on sparse autoencoders",
            tags=["sae"],
            quality=None,
            year=2024,
            body="Interpretability of features.",
        ),
    )
    return folder


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    eng = make_engine(f"sqlite:///{tmp_path / 'kbhome' / 'index.sqlite'}")
    yield eng
    eng.dispose()


def _tagged(engine: Engine, *tags: str) -> dict[str, int]:
    """How many indexed papers carry each tag (the tag rows are kept in step with the notes)."""
    return {tag: len(list_papers(engine, tag=tag)) for tag in tags}


def test_cold_index_and_rows(engine: Engine, papers: Path) -> None:
    report = index_notes(engine, papers)
    assert sorted(report.added) == ["a-depth", "b-fold", "c-rna", "d-nested"]
    assert report.errors == [] and report.updated == [] and report.removed == []
    paper = get_paper(engine, "a-depth")
    assert paper is not None
    assert paper.paper_id == "arxiv:1" and paper.year == 2026 and paper.quality_score == 5
    assert paper.decision == "ACCEPT" and paper.status == "analyzed"
    assert '"custom_flag": true' in paper.meta_json
    claims = claims_for(engine, "a-depth")
    assert [c.key for c in claims] == ["a-depth#optimal-depth", "a-depth#trend"]
    assert claims[0].analyzer == "depth.probe" and claims[0].kind == "quantitative"
    assert claims[1].analyzer is None
    assert get_paper(engine, "missing") is None
    assert _tagged(engine, "plm", "depth", "structure", "rna", "sae") == {"plm": 2, "depth": 1, "structure": 1,
                                                                          "rna": 1, "sae": 1}


def test_incremental(engine: Engine, papers: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index_notes(engine, papers)
    parsed: list[Path] = []
    real = kb_index.read_note

    def counting(path: Path, **kw: Any) -> Any:
        parsed.append(path)
        return real(path, **kw)

    monkeypatch.setattr(kb_index, "read_note", counting)

    again = index_notes(engine, papers)
    assert sorted(again.unchanged) == ["a-depth", "b-fold", "c-rna", "d-nested"]
    assert again.added == again.updated == again.removed == [] and again.errors == []
    assert parsed == []

    # touched but same content: not reparsed, still unchanged
    path = papers / "b-fold.md"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    touched = index_notes(engine, papers)
    assert parsed == [] and "b-fold" in touched.unchanged

    # modified
    write(
        papers,
        "b-fold",
        note_text("arxiv:2", "Folding with evolutionary scale v2", tags=["plm"], body="Completely new zanzibar text."),
    )
    changed = index_notes(engine, papers)
    assert changed.updated == ["b-fold"] and changed.added == [] and len(changed.unchanged) == 3
    assert parsed == [papers / "b-fold.md"]
    assert [h.paper_id for h in search(engine, "zanzibar")] == ["b-fold"]
    assert _tagged(engine, "plm", "structure") == {"plm": 2, "structure": 0}

    # deleted
    (papers / "c-rna.md").unlink()
    gone = index_notes(engine, papers)
    assert gone.removed == ["c-rna"]
    assert get_paper(engine, "c-rna") is None
    assert search(engine, "RNA") == []
    assert _tagged(engine, "rna") == {"rna": 0}

    # invalid note added: others still indexed, error reported
    write(papers, "e-bad", "---\ntitle: no paper id\nquality_score: 9\n---\nbody\n")
    write(papers, "f-new", note_text("arxiv:6", "Fresh valid note", tags=["new"]))
    bad = index_notes(engine, papers)
    assert bad.added == ["f-new"]
    assert len(bad.errors) == 1 and isinstance(bad.errors[0], NoteError)
    assert "e-bad" in str(bad.errors[0].path)
    assert get_paper(engine, "e-bad") is None and get_paper(engine, "f-new") is not None
    assert len(list_papers(engine)) == 4


def test_note_becoming_invalid_leaves_index(engine: Engine, papers: Path) -> None:
    index_notes(engine, papers)
    write(papers, "a-depth", "---\npaper_id: [broken\n---\n")
    report = index_notes(engine, papers)
    assert len(report.errors) == 1 and "a-depth" in report.removed
    assert get_paper(engine, "a-depth") is None and claims_for(engine, "a-depth") == []
    assert all(h.paper_id != "a-depth" for h in search(engine, "curse"))


def test_duplicate_paper_id(engine: Engine, papers: Path) -> None:
    write(papers, "z-dup", note_text("arxiv:1", "Duplicate of the depth paper"))
    report = index_notes(engine, papers)
    assert "a-depth" in report.added and "z-dup" not in report.added
    assert len(report.errors) == 1
    err = report.errors[0]
    assert "arxiv:1" in str(err) and "z-dup" in str(err.path)
    assert get_paper(engine, "z-dup") is None
    # still reported on the next run; the first note stays
    again = index_notes(engine, papers)
    assert len(again.errors) == 1 and "a-depth" in again.unchanged


def test_filters_and_sort(engine: Engine, papers: Path) -> None:
    index_notes(engine, papers)

    def ids(**kw: Any) -> list[str]:
        return [p.id for p in list_papers(engine, **kw)]

    assert ids() == ["a-depth", "b-fold", "c-rna", "d-nested"]
    assert ids(tag="plm") == ["a-depth", "b-fold"]
    assert ids(decision="REJECT") == ["c-rna"]
    assert ids(decision="accept") == ["a-depth", "d-nested"]
    assert ids(status="archived") == ["c-rna"]
    assert ids(min_quality=3) == ["a-depth", "b-fold"]
    assert ids(year=2024) == ["d-nested"]
    assert ids(sort="year") == ["b-fold", "d-nested", "c-rna", "a-depth"]
    assert ids(sort="year", descending=True) == ["a-depth", "c-rna", "d-nested", "b-fold"]
    assert ids(sort="quality", descending=True) == ["a-depth", "b-fold", "c-rna", "d-nested"]
    assert ids(sort="title", limit=2) == ["a-depth", "b-fold"]
    assert ids(tag="plm", min_quality=4) == ["a-depth"]
    with pytest.raises(ValueError):
        list_papers(engine, sort="nope")  # type: ignore[arg-type]


def test_search(engine: Engine, papers: Path) -> None:
    index_notes(engine, papers)
    hits = search(engine, "depth")
    assert {h.paper_id for h in hits} >= {"a-depth", "b-fold", "c-rna"}
    assert hits[0].paper_id in {"a-depth", "c-rna"}  # title hits before the body-only hit
    assert hits[-1].paper_id == "b-fold"
    assert hits[0].score >= hits[-1].score
    # claim statement searchable
    assert [h.paper_id for h in search(engine, "perplexity saturates")] == ["a-depth"]
    # prefix on last term
    assert [h.paper_id for h in search(engine, "autoenc")] == ["d-nested"]
    # snippet highlights
    assert "[" in search(engine, "interpretability")[0].snippet
    # Chinese whole tokens
    assert [h.paper_id for h in search(engine, "诅咒")] == ["a-depth"]
    assert [h.paper_id for h in search(engine, "蛋白质")] == ["b-fold"]
    # hostile queries never raise
    for q in [
        '"',
        '"depth',
        "depth)",
        "(depth",
        "*",
        "depth*",
        "-depth",
        "depth -rna",
        "a AND OR NOT",
        "NEAR(depth rna)",
        "title:depth",
        "^depth",
        "",
        "   ",
        "'; DROP TABLE paper; --",
        "{x}",
    ]:
        search(engine, q)
    assert search(engine, "") == []
    assert search(engine, "depth", limit=1)[0].paper_id == hits[0].paper_id


def test_progress_and_missing_folder(engine: Engine, papers: Path, tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    index_notes(engine, papers, progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (4, 4) and len(calls) == 4
    report = index_notes(engine, tmp_path / "nowhere")
    assert len(report.removed) == 4 and list_papers(engine) == []


def test_max_note_bytes_setting_reaches_index_and_validate(tmp_path: Path) -> None:
    """A note over the operator's size limit is refused the same way by `kb index`, `kb validate` and `kb show`:
    never listed but unreadable."""
    from kb.core import KnowledgeBase
    from kb.settings import Settings

    folder = tmp_path / "papers"
    folder.mkdir()
    write(folder, "small", note_text("p-small", "Small"))
    write(folder, "big", note_text("p-big", "Big", body="x" * 2_000))
    kb = KnowledgeBase(Settings(papers=folder, home=tmp_path / "home", max_note_bytes=1_000))
    report = kb.index()
    assert [p.id for p in kb.list_papers()] == ["small"]
    assert any("max_note_bytes" in str(error) for error in report.errors)
    valid, errors = kb.validate()
    assert [n.path.name for n in valid] == ["small.md"]
    assert len(errors) == 1 and "max_note_bytes" in str(errors[0]) and errors[0].path.name == "big.md"
