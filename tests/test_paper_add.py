"""Adding papers (``kb add``) from PDFs, BibTeX and Zotero files made here, and from arXiv and Crossref
answers served by a loopback HTTP server; and the source-file checks of validate, check and import."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kb.cli import app

runner = CliRunner(env={"COLUMNS": "200"})


def _run(kb_dirs: tuple[Path, Path], *args: str) -> tuple[int, str, str]:
    papers, home = kb_dirs
    result = runner.invoke(app, [*args, "--papers", str(papers), "--home", str(home)])
    return result.exit_code, result.stdout, result.stderr


# -- source files: validate warns, check fails, import copies ----------------------------------------

NOTE = '---\npaper_id: "t:1"\ntitle: "Deeper models"\nsource_file: "sources/deeper.txt"\n---\nbody\n'


def test_validate_warns_on_missing_source_file_but_passes(kb_dirs: tuple[Path, Path]) -> None:
    papers, _ = kb_dirs
    (papers / "deeper.md").write_text(NOTE, encoding="utf-8")
    code, _, err = _run(kb_dirs, "validate")
    assert code == 0
    assert "warning" in err and "deeper.md" in err and "sources/deeper.txt" in err and "does not exist" in err


def test_check_fails_on_missing_or_unreadable_source_file(kb_dirs: tuple[Path, Path]) -> None:
    papers, _ = kb_dirs
    (papers / "deeper.md").write_text(NOTE, encoding="utf-8")
    code, _, err = _run(kb_dirs, "check", "deeper")
    assert code == 1 and "does not exist" in err
    (papers / "sources" / "deeper.txt").write_bytes(b"\xff\xfe not utf-8 \xff")
    code, _, err = _run(kb_dirs, "check", "deeper")
    assert code == 1 and "not UTF-8" in err
    (papers / "sources" / "deeper.txt").write_text("Deeper models\n", encoding="utf-8")
    code, _, err = _run(kb_dirs, "check", "deeper")
    assert code == 0, err


def test_import_copies_the_source_along_and_never_overwrites(kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    papers, _ = kb_dirs
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "sources").mkdir(parents=True)
    (elsewhere / "deeper.md").write_text(NOTE, encoding="utf-8")
    (elsewhere / "sources" / "deeper.txt").write_text("Deeper models, the text.\n", encoding="utf-8")
    code, _, err = _run(kb_dirs, "import", str(elsewhere / "deeper.md"))
    assert code == 0, err
    assert (papers / "sources" / "deeper.txt").read_text(encoding="utf-8") == "Deeper models, the text.\n"
    # A second note naming the same source file with other text: refused, nothing written or replaced.
    other = elsewhere / "other.md"
    other.write_text(NOTE.replace('"t:1"', '"t:2"'), encoding="utf-8")
    (elsewhere / "sources" / "deeper.txt").write_text("Different text.\n", encoding="utf-8")
    code, _, err = _run(kb_dirs, "import", str(other))
    assert code == 1 and "already has the name" in err
    assert not (papers / "other.md").exists()
    assert (papers / "sources" / "deeper.txt").read_text(encoding="utf-8") == "Deeper models, the text.\n"


def test_import_refuses_a_source_file_outside_the_notes_folder(kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    papers, _ = kb_dirs
    (tmp_path / "out" / "in").mkdir(parents=True)
    (tmp_path / "out" / "secret.txt").write_text("x\n", encoding="utf-8")
    (tmp_path / "out" / "in" / "n.md").write_text(NOTE.replace("sources/deeper.txt", "../secret.txt"),
                                                  encoding="utf-8")
    code, _, err = _run(kb_dirs, "import", str(tmp_path / "out" / "in" / "n.md"))
    assert code == 1 and "outside" in err
    assert not (papers / "n.md").exists() and not (papers.parent / "secret.txt").exists()
