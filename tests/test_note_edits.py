"""Edits keep every byte the user did not change, never lose a concurrent update, and keep the file's
mode and symlinks (real files, real processes)."""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kb.core import KnowledgeBase
from kb.notes import edits as note_edits
from kb.notes.files import NoteError
from kb.settings import Settings
from tests.helpers.cli import run_kb
from tests.helpers.parses import record_parses

NOTE = textwrap.dedent("""\
    ---
    paper_id: "t:edit"   # the id
    title: "Edit me"
    publication:
      # where it appeared
      venue: arXiv
      year: 2026  # preprint year
      size: 8.0e+6
      links: {pdf: "x.pdf", code: none}
    decision_date: 2026-01-15
    analyst: Smith
    claims:
      - id: late-layers-refine
        statement: "s"
        analyzer: {name: noop, params: {value: 3}}
        expect:
          metric: value   # the echo
          op: ">"
          value: 0.5
    ---
    Body.
    """)


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "n.md").write_text(NOTE, encoding="utf-8")
    (papers / "n.md").chmod(0o664)
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
    assert not kb.index().errors
    return kb


def _set(kb: KnowledgeBase, field: str, typed: str) -> list[str]:
    """Run one edit as `kb set` does (value as typed); return the changed lines as (-old, +new)."""
    before = (kb.papers_dir / "n.md").read_text(encoding="utf-8").splitlines()
    kb.set_fields("n", {field: note_edits.coerce_value(kb.read("n"), field, typed)})
    after = (kb.papers_dir / "n.md").read_text(encoding="utf-8").splitlines()
    return [d for d in difflib.ndiff(before, after) if d[:2] in ("- ", "+ ")]


@pytest.mark.parametrize(("field", "typed", "old", "new"), [
    ("publication.year", "2027", "  year: 2026  # preprint year", "  year: 2027  # preprint year"),
    ("analyst", "Smith # 2nd reader", "analyst: Smith", 'analyst: "Smith # 2nd reader"'),
    ("title", "From Words to Amino Acids: Does the Curse of Depth Persist?", 'title: "Edit me"',
     'title: "From Words to Amino Acids: Does the Curse of Depth Persist?"'),
    ("claims.late-layers-refine.expect.value", "0.6", "      value: 0.5", "      value: 0.6"),
    ("claims.0.analyzer.params.value", "4", "    analyzer: {name: noop, params: {value: 3}}",
     "    analyzer: {name: noop, params: {value: 4}}"),
    ("publication.venue", "bioRxiv", "  venue: arXiv", "  venue: bioRxiv"),
])
def test_an_edit_changes_only_the_value_it_edits(kb: KnowledgeBase, field: str, typed: str, old: str,
                                                new: str) -> None:
    assert _set(kb, field, typed) == [f"- {old}", f"+ {new}"]
    text = (kb.papers_dir / "n.md").read_text(encoding="utf-8")
    for kept in ("# where it appeared", "size: 8.0e+6", 'links: {pdf: "x.pdf", code: none}',
                 "decision_date: 2026-01-15", "# the echo", '"t:edit"   # the id'):
        assert kept in text


def test_an_edit_keeps_the_mode_and_edits_a_symlinked_note_at_its_target(kb: KnowledgeBase, tmp_path: Path) -> None:
    _set(kb, "publication.year", "2027")
    assert (kb.papers_dir / "n.md").stat().st_mode & 0o777 == 0o664
    kept = kb.papers_dir / ".kept"  # inside the notes folder (a hidden folder kb does not list)
    kept.mkdir()
    (kb.papers_dir / "n.md").rename(kept / "n.md")
    (kb.papers_dir / "n.md").symlink_to(kept / "n.md")
    kb.index()
    _set(kb, "publication.year", "2028")
    assert (kb.papers_dir / "n.md").is_symlink()
    assert "year: 2028" in (kept / "n.md").read_text(encoding="utf-8")


def test_a_note_linked_to_a_file_outside_the_vault_is_read_but_never_written(kb: KnowledgeBase,
                                                                            tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"  # a shared vault can carry a link to any file its reader may write
    elsewhere.mkdir()
    (kb.papers_dir / "n.md").rename(elsewhere / "n.md")
    (kb.papers_dir / "n.md").symlink_to(elsewhere / "n.md")
    before = (elsewhere / "n.md").read_bytes()
    kb.index()
    assert kb.read("n").meta.title  # read like any note
    with pytest.raises(NoteError, match="outside the notes folder .* does not write through it"):
        _set(kb, "publication.year", "2028")
    assert (elsewhere / "n.md").read_bytes() == before and (kb.papers_dir / "n.md").is_symlink()


def test_a_paper_id_another_note_uses_is_refused(kb: KnowledgeBase) -> None:
    (kb.papers_dir / "b.md").write_text('---\npaper_id: "t:b"\ntitle: "B"\n---\n', encoding="utf-8")
    kb.index()
    before = (kb.papers_dir / "n.md").read_bytes()
    with pytest.raises(NoteError, match="already used by note 'b'"):
        kb.set_fields("n", {"paper_id": "t:b"})
    assert (kb.papers_dir / "n.md").read_bytes() == before
    assert {p.id for p in kb.list_papers()} == {"n", "b"}


def test_an_editor_working_from_an_old_copy_is_told_it_changed_on_disk(kb: KnowledgeBase) -> None:
    opened = kb.read("n").content_hash
    kb.set_fields("n", {"analyst": "Jones"})  # someone else's edit lands first
    with pytest.raises(NoteError, match="changed on disk"):
        kb.set_fields("n", {"title": "Mine"}, expected_hash=opened)
    assert note_edits.frontmatter_data(kb.read("n"))["analyst"] == "Jones"


# Edits as fast as they go, in their own process; the two editors start together (each writes a ready file,
# then waits for the other's) after their imports, so that all their edits contend for the note.
EDITOR = """
import sys, time
from pathlib import Path
from kb.core import KnowledgeBase
from kb.settings import Settings
papers, home, who, n = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
ready, other = Path(sys.argv[5]), Path(sys.argv[6])
kb = KnowledgeBase(Settings(papers=papers, home=home))
ready.touch()
while not other.exists():
    time.sleep(0.005)
for i in range(n):
    kb.set_fields("n", {f"{who}_{i}": i}, reindex=False)  # the note's lock and write are the point, not the index
"""


def test_concurrent_edits_lose_nothing(kb: KnowledgeBase, tmp_path: Path) -> None:
    runs = 20  # each: started together, the two loops contend for all of their edits (50 did, staggered)
    ready = {"a": tmp_path / "ready-a", "b": tmp_path / "ready-b"}
    editors = [subprocess.Popen([sys.executable, "-c", EDITOR, str(kb.papers_dir), str(kb.settings.home), who,
                                 str(runs), str(ready[who]), str(ready["b" if who == "a" else "a"])],
                                stderr=subprocess.PIPE, text=True) for who in ("a", "b")]
    for editor in editors:
        _, err = editor.communicate(timeout=300)
        assert editor.returncode == 0, err
    fields = kb.read("n").meta.extra_fields
    missing = [f"{who}_{i}" for who in ("a", "b") for i in range(runs) if fields.get(f"{who}_{i}") != i]
    assert missing == [], f"{len(missing)} of {2 * runs} updates lost"
    assert os.stat(kb.papers_dir / "n.md").st_mode & 0o777 == 0o664


def test_an_edit_parses_the_note_once_and_each_result_once(kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    """Issue 40: ``kb set`` parsed a note's YAML about five times per field (the command's read, the read
    under the lock, the edit's own parse, its walk to the value, the result's check and its validation).
    Now the note once, and each change's result once: that parse checks the round trip and is the one the
    validation, the field-name check and the index then use."""
    path = kb.papers_dir / "n.md"
    # A text no earlier test in this process parsed (parses are shared by text).
    path.write_text(NOTE.replace("Edit me", f"Edit me {tmp_path.name}"), encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    parsed = record_parses(monkeypatch)
    result = run_kb(kb.papers_dir, kb.settings.home, "set", "n", "publication.year=2027")
    assert result.returncode == 0, result.stderr
    after = path.read_text(encoding="utf-8")
    assert after == before.replace("year: 2026  #", "year: 2027  #")
    assert parsed == [_fm(before), _fm(after)]

    parsed.clear()  # two fields, one of them new: the note once, then each change's result once
    result = run_kb(kb.papers_dir, kb.settings.home, "set", "n", "analyst=Jones", "reviewer=Ada")
    assert result.returncode == 0, result.stderr
    final = path.read_text(encoding="utf-8")
    assert final.count("\n") == after.count("\n") + 1 and "analyst: Jones\n" in final
    assert parsed == [_fm(after.replace("analyst: Smith", "analyst: Jones")), _fm(final)]


def _fm(text: str) -> str:
    """A note's frontmatter text, as it is parsed."""
    return text.split("---\n", 2)[1]
