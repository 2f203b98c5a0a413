"""A shared vault (a git clone, a synced folder) cannot make kb write outside it, take over a note's id, or
lose an edit to a rename: real symlinks (dangling ones too), FIFOs, a planted second file claiming an id,
and a note renamed at each step of an edit in turn."""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from analyzers.files import replace_unmoved
from kb.core import KnowledgeBase
from kb.notes import locks as note_lock
from kb.notes.edits import frontmatter_data
from kb.notes.files import NoteChanged, NoteError, find_notes, read_note, save_note
from kb.settings import Settings
from tests.helpers.cli import run_kb

NOTE = textwrap.dedent("""\
    ---
    paper_id: "t:vault"
    title: "Vault note"   # kept byte for byte
    ---
    Body.
    """)


LOCK_WAIT = {"KB_NOTE_LOCK_TIMEOUT": "5"}  # a lock kb cannot take is given up in seconds, not minutes


def kb_cli(papers: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real ``kb`` command line, in this process (``tests/helpers/cli.py``)."""
    return run_kb(papers, home, *args, env=LOCK_WAIT)


def one_line_refusal(result: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The single stderr line of a refused command, checked to name each of ``needles``."""
    assert result.returncode != 0, result.stdout
    assert "updated" not in result.stdout and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def papers(tmp_path: Path) -> Path:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "n.md").write_text(NOTE, encoding="utf-8")
    return papers


def _lock_name(papers: Path) -> str:
    return note_lock.lock_path(papers / "n.md").name


def test_lock_folder_that_is_a_symlink_is_refused_and_nothing_is_created_at_its_target(
        papers: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (papers / ".kb-locks").symlink_to(outside)
    result = kb_cli(papers, tmp_path / "home", "set", "n", "analyst=Me")
    one_line_refusal(result, "n.md", ".kb-locks", "symbolic link")
    assert list(outside.iterdir()) == []
    assert (papers / "n.md").read_text(encoding="utf-8") == NOTE


def test_lock_folder_that_is_a_dangling_symlink_creates_no_folder(papers: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "locks"
    (papers / ".kb-locks").symlink_to(target)
    one_line_refusal(kb_cli(papers, tmp_path / "home", "set", "n", "analyst=Me"), "symbolic link")
    assert not os.path.lexists(target) and not (tmp_path / "elsewhere").exists()
    assert (papers / "n.md").read_text(encoding="utf-8") == NOTE


@pytest.mark.parametrize("kind", ["dangling-link", "link-to-file", "link-to-dev-null", "fifo", "folder"])
def test_a_lock_file_that_is_not_a_plain_file_is_refused(papers: Path, tmp_path: Path, kind: str) -> None:
    locks = papers / ".kb-locks"
    locks.mkdir()
    lock = locks / _lock_name(papers)
    victim = tmp_path / "victim"
    if kind == "dangling-link":
        lock.symlink_to(victim)
    elif kind == "link-to-file":
        victim.write_text("keep me\n")
        lock.symlink_to(victim)
    elif kind == "link-to-dev-null":
        lock.symlink_to("/dev/null")
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    result = kb_cli(papers, tmp_path / "home", "set", "n", "analyst=Me")
    expected = {"fifo": "a FIFO", "folder": "a folder"}.get(kind, "a symbolic link")
    one_line_refusal(result, "n.md", lock.name, expected)
    if kind == "dangling-link":
        assert not os.path.lexists(victim)
    if kind == "link-to-file":
        assert victim.read_text() == "keep me\n"
    assert (papers / "n.md").read_text(encoding="utf-8") == NOTE


def test_a_planted_gitignore_link_in_the_lock_folder_is_never_written_through(papers: Path, tmp_path: Path) -> None:
    locks = papers / ".kb-locks"
    locks.mkdir()
    (locks / ".gitignore").symlink_to(tmp_path / "planted")
    result = kb_cli(papers, tmp_path / "home", "set", "n", "analyst=Me")
    assert result.returncode == 0, result.stderr
    assert not os.path.lexists(tmp_path / "planted")
    assert frontmatter_data(read_note(papers / "n.md"))["analyst"] == "Me"


def test_a_sources_folder_that_is_a_symlink_takes_no_source_text(papers: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (papers / "sources").symlink_to(outside)
    bib = tmp_path / "p.bib"
    bib.write_text("@article{a, title={Planted Sources}, author={Doe, Jane}, year={2024}, "
                   "abstract={Some abstract text.}}\n")
    result = kb_cli(papers, tmp_path / "home", "add", str(bib))
    assert result.returncode != 0
    assert "symbolic link" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert list(outside.iterdir()) == []


def _contested(papers: Path, tmp_path: Path) -> KnowledgeBase:
    """The genuine ``n.md`` indexed, then a planted ``0/n.md`` (which sorts first) with the same id."""
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
    kb.index()
    (papers / "0").mkdir()
    (papers / "0" / "n.md").write_text(NOTE.replace("Vault note", "Impostor"), encoding="utf-8")
    return kb


def test_a_second_file_claiming_an_indexed_id_is_refused_naming_both(papers: Path, tmp_path: Path) -> None:
    kb = _contested(papers, tmp_path)
    result = kb_cli(papers, tmp_path / "home", "index")
    assert "0/n.md" in result.stderr and "is already used by" in result.stderr
    refusal = next(line for line in result.stderr.splitlines() if "0/n.md" in line)
    assert str(papers / "n.md") in refusal, refusal
    paper = kb.get_paper("n") if hasattr(kb, "get_paper") else None
    listed = {p.id: p for p in kb.list_papers()}
    assert Path(listed["n"].path) == papers / "n.md" and listed["n"].title == "Vault note"
    assert paper is None or paper.title == "Vault note"
    assert kb.read("n").meta.title == "Vault note"  # reads follow the index, not the sort order


def test_kb_set_refuses_a_contested_id_and_writes_neither_file(papers: Path, tmp_path: Path) -> None:
    _contested(papers, tmp_path)
    before = {p: p.read_bytes() for p in find_notes(papers)}
    result = kb_cli(papers, tmp_path / "home", "set", "n", "analyst=Me")
    one_line_refusal(result, str(papers / "n.md"), str(papers / "0" / "n.md"), "renamed or removed")
    assert {p: p.read_bytes() for p in find_notes(papers)} == before


def test_an_unindexed_newcomer_with_an_indexed_paper_id_is_the_one_refused(papers: Path, tmp_path: Path) -> None:
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
    kb.index()
    (papers / "a-first.md").write_text(NOTE.replace("Vault note", "Impostor"), encoding="utf-8")
    report = kb.index()
    assert [e.path.name for e in report.errors] == ["a-first.md"]
    assert "n.md" in str(report.errors[0])
    assert [p.id for p in kb.list_papers()] == ["n"]


def test_replace_unmoved_writes_the_file_read_or_nothing(tmp_path: Path) -> None:
    path = tmp_path / "f.md"
    path.write_bytes(b"old\n")
    st = path.stat()
    inode = (st.st_dev, st.st_ino)
    (tmp_path / "moved").mkdir()
    os.rename(path, tmp_path / "moved" / "f.md")
    assert not replace_unmoved(path, b"new\n", inode) and not path.exists()  # moved: nothing written
    os.rename(tmp_path / "moved" / "f.md", path)
    assert replace_unmoved(path, b"new\n", inode) and path.read_bytes() == b"new\n"
    assert not replace_unmoved(path, b"newer\n", inode)  # the file read is gone: replaced by the first write
    assert path.read_bytes() == b"new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.md", "moved"]  # no temporary file left


def test_save_note_refuses_a_note_moved_after_it_was_read(papers: Path, tmp_path: Path) -> None:
    note = read_note(papers / "n.md")
    os.rename(papers / "n.md", papers / "m.md")
    (papers / "n.md").write_text(NOTE, encoding="utf-8")  # same bytes, another file: still refused
    with pytest.raises(NoteChanged, match="moved, removed or replaced"):
        save_note(note, base=note.raw, inode=note.inode)
    assert (papers / "n.md").read_text(encoding="utf-8") == NOTE


def _field_names(prefix: str, count: int) -> list[str]:
    """Distinct new field names no typo apart (``kb set`` refuses a new field one typo from another)."""
    return [f"{prefix}_{hashlib.sha256(f'{prefix}{n}'.encode()).hexdigest()[:10]}" for n in range(count)]


# Python's audit hooks cannot be removed: one, installed by the first test that needs it, calls whatever
# handler a test sets here (none between tests: it returns at once).
_AUDIT_HANDLER: list[Callable[[str, tuple[Any, ...]], None] | None] = [None]
_AUDIT_INSTALLED: list[bool] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    handler = _AUDIT_HANDLER[0]
    if handler is not None:
        handler(event, args)


def _names_a_path_in(folder: str, args: tuple[Any, ...]) -> bool:
    return any(isinstance(a, str | bytes | os.PathLike) and folder in os.fsdecode(a) for a in args)


def _raced_at_step(papers: Path, step: int, edit: Callable[[], bool],
                   race: Callable[[], None]) -> tuple[bool, bool]:
    """Run ``edit`` with ``race`` run just before the ``step``-th of its file-system steps in the notes folder:
    each audit event naming a path in it (a scan, an open, the temporary file, its mode and owner, its
    removal) and each ``flock``. Whether ``race`` ran (not when the edit has fewer steps), and what ``edit``
    returned."""
    if not _AUDIT_INSTALLED:
        sys.addaudithook(_audit)
        _AUDIT_INSTALLED.append(True)
    seen, ran, thread, folder = [0], [False], threading.get_ident(), str(papers)

    def handler(event: str, args: tuple[Any, ...]) -> None:
        if ran[0] or threading.get_ident() != thread:
            return  # the race's own steps are not counted
        if event == "fcntl.flock" or _names_a_path_in(folder, args):
            seen[0] += 1
            if seen[0] == step:
                ran[0] = True
                race()

    _AUDIT_HANDLER[0] = handler
    try:
        result = edit()
    finally:
        _AUDIT_HANDLER[0] = None
    return ran[0], result


def test_an_edit_raced_by_a_rename_at_each_of_its_steps_lands_in_the_note_or_is_refused(
        papers: Path, tmp_path: Path) -> None:
    """A note moved between two folders (a sync client, ``git mv``) at each step of an edit in turn: before
    every scan, open, lock, write of the temporary file, change of its mode and the swap. Moved away; and
    moved away, edited there from another KB home (its own lock: the note's folder changed) and moved back.
    Every edit that returned is in the one note left (the other home's too); the others refused with a
    ``NoteError`` (one line in the CLI). Each step is hit on purpose, where a rename loop timed against two
    ``kb set`` processes hit a machine-dependent few of them (~100 s under load)."""
    (papers / "moved").mkdir()
    places = [papers / "n.md", papers / "moved" / "n.md"]
    mine = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
    other = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home-other"))
    names = iter(_field_names("x", 400))
    outcomes: dict[str, list[bool]] = {"moved": [], "moved, edited, moved back": []}
    landed: list[str] = []

    def move() -> None:
        here = next(p for p in places if p.exists())
        os.rename(here, places[1 - places.index(here)])

    def move_edit_move_back() -> None:
        move()
        name = next(names)
        other.set_fields("n", {name: "w"}, reindex=False)  # raises if refused: nothing else moves meanwhile
        landed.append(name)
        move()

    def edit(name: str) -> bool:
        try:
            mine.set_fields("n", {name: "v"}, new_fields=False, reindex=False)
        except NoteError as exc:
            assert "\n" not in str(exc), exc
            return False
        landed.append(name)
        return True

    for kind, race in (("moved", move), ("moved, edited, moved back", move_edit_move_back)):
        for step in range(1, 200):
            ran, updated = _raced_at_step(papers, step, functools.partial(edit, next(names)), race)
            outcomes[kind].append(updated)
            notes = find_notes(papers)
            assert [p.relative_to(papers) for p in notes] in ([Path("n.md")], [Path("moved/n.md")])
            text = notes[0].read_text(encoding="utf-8")
            data = frontmatter_data(read_note(notes[0]))
            assert [n for n in landed if n not in data] == [], (kind, step)
            assert data["title"] == "Vault note" and "# kept byte for byte" in text
            notes[0].write_text(NOTE, encoding="utf-8")  # each step starts from the small note
            landed.clear()
            if not ran:
                break
        assert len(outcomes[kind]) > 10, outcomes  # every step of an edit was raced, the last run unraced
    for kind, seen in outcomes.items():  # power both ways: some raced edits land, some are refused
        assert True in seen and False in seen, (kind, seen)


def test_app_edit_form_refuses_a_contested_id(papers: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("KB_PAPERS", str(papers))
    monkeypatch.setenv("KB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KB_APP_WORKER", "false")
    monkeypatch.delenv("KB_DATABASE_URL", raising=False)
    monkeypatch.delenv("KB_CHAT_MODEL", raising=False)
    st.cache_resource.clear()
    st.cache_data.clear()
    _contested(papers, tmp_path)
    before = {p: p.read_bytes() for p in find_notes(papers)}
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app" / "main.py"), default_timeout=60).run()
    at.query_params.update(id="n")
    at.switch_page("views/edit_note.py").run()
    assert not at.exception
    assert at.text_input(key="fm_title").value == "Vault note"  # the indexed note, not the planted one
    at.text_input(key="fm_title").input("Mine").run()
    at.button(key="edit_save").click().run()
    errors = [e.value for e in at.error]
    assert any("is claimed by" in e and "renamed or removed" in e for e in errors), errors
    assert {p: p.read_bytes() for p in find_notes(papers)} == before
