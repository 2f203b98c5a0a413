"""Every writer of a note takes the note's own lock, whatever its KB home, and says so when it cannot write:
real ``kb`` processes racing on one note, counting what landed in the file, and the app's edit form
refusing to overwrite a version the user never saw."""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from kb.core import KnowledgeBase
from kb.notes import edits as note_edits
from kb.notes import locks as note_lock
from kb.notes.files import NoteChanged, find_notes
from kb.settings import Settings
from tests.helpers.cli import run_kb, run_kb_process

ROOT = Path(__file__).resolve().parents[1]

NOTE = textwrap.dedent("""\
    ---
    paper_id: "t:lock"
    title: "Lock me"   # a comment that must survive every edit
    source_file: "sources/lock.txt"
    ---
    Body.
    """)

# Explicit results the fallback drafter turns into claims (one per sentence).
SOURCE = " ".join(f"Model variant {n} reaches a contact precision of 0.{40 + n} on the held-out set."
                  for n in range(1, 9)) + "\n"


def field_names(prefix: str, count: int) -> list[str]:
    """Distinct new field names, no two alike: `kb set` refuses a new field one typo from an existing one."""
    return [f"{prefix}_{hashlib.sha256(str(n).encode()).hexdigest()[:12]}" for n in range(count)]


def kb_elsewhere(papers: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real ``kb`` CLI in its own process (its own KB home), as a user in another folder would start it:
    the writers racing on one note are processes, each with its own lock file handle."""
    return run_kb_process(papers, home, *args, cwd=papers.parent)


@pytest.fixture
def papers(tmp_path: Path) -> Path:
    papers = tmp_path / "papers"
    (papers / "sources").mkdir(parents=True)
    (papers / "n.md").write_text(NOTE, encoding="utf-8")
    (papers / "sources" / "lock.txt").write_text(SOURCE, encoding="utf-8")
    return papers


# `kb set` in a loop (the real CLI, run in this process: ``tests/helpers/cli.py``), in its own process and KB
# home. Both loops start together (each writes a ready file, then waits for the other's), after their imports
# and their index, so that their edits interleave rather than follow one another.
SET_CLI_LOOP = """
import sys, time
from pathlib import Path
from tests.helpers.cli import run_kb
papers, home, ready, other = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
assert run_kb(papers, home, "index").returncode == 0
ready.touch()
while not other.exists():
    time.sleep(0.005)
for name in sys.argv[5:]:
    result = run_kb(papers, home, "set", "n", f"{name}=1")
    if result.returncode != 0 or "updated" not in result.stdout:
        sys.exit(result.stderr or result.stdout)
"""


def test_set_from_two_kb_homes_loses_no_edit(papers: Path, tmp_path: Path) -> None:
    """Two processes in two KB homes (a CLI in one folder, the app started in another), each 12 ``kb set``
    edits of one note as fast as they go, started together: every edit is in the note. Without the note's own
    lock, 24 ``kb set`` processes 8 at a time lost 10-15 edits; two loops contend for all of their edits, and
    without it they are refused ("changed on disk") or lost."""
    homes = [tmp_path / "home-a", tmp_path / "home-b"]
    fields = field_names("edit", 24)
    ready = [tmp_path / "ready-a", tmp_path / "ready-b"]
    loops = [subprocess.Popen([sys.executable, "-c", SET_CLI_LOOP, str(papers), str(home), str(ready[i]),
                               str(ready[1 - i]), *fields[i::2]], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i, home in enumerate(homes)]
    for loop in loops:
        _, err = loop.communicate(timeout=300)
        assert loop.returncode == 0, err
    data = note_edits.frontmatter_data(KnowledgeBase(Settings(papers=papers, home=homes[0])).read("n"))
    assert sorted(k for k in data if k.startswith("edit_")) == sorted(fields)
    text = (papers / "n.md").read_text(encoding="utf-8")
    assert "# a comment that must survive every edit" in text and text.endswith("---\nBody.\n")


# A loop of edits as `kb set` makes them (``KnowledgeBase.set_fields``), in its own process and KB home, as
# fast as it can: it keeps writing for as long as the accepting process runs, so their writes interleave.
SET_LOOP = """
import sys
from pathlib import Path
from kb.core import KnowledgeBase
from kb.settings import Settings
papers, home, stop = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
kb = KnowledgeBase(Settings(papers=papers, home=home))
n = 0
while not stop.exists() or n < 3:
    kb.set_fields("n", {f"x_set_{n:03d}": 1})
    n += 1
print(n)
"""


def test_accept_all_beside_set_keeps_every_claim_and_field(papers: Path, tmp_path: Path) -> None:
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home-a"))
    drafted = run_kb(papers, kb.settings.home, "draft-claims", "n", "--fallback", "--json")
    assert drafted.returncode == 0, drafted.stderr
    assert drafted.stdout.count('"status": "drafted"') >= 6  # enough claims that a lost write would show
    stop, cli_fields = tmp_path / "stop", field_names("cli", 2)
    setter = subprocess.Popen([sys.executable, "-c", SET_LOOP, str(papers), str(tmp_path / "home-b"), str(stop)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with ThreadPoolExecutor(max_workers=3) as pool:  # and two `kb set` from a third home, at the same time
            cli = [pool.submit(kb_elsewhere, papers, tmp_path / "home-c", "set", "n", f"{name}=1")
                   for name in cli_fields]
            accepted = kb_elsewhere(papers, kb.settings.home, "draft-claims", "n", "--fallback", "--accept-all",
                                    "--json")
            cli_sets = [f.result() for f in cli]
    finally:
        stop.touch()
        out, err = setter.communicate(timeout=60)
    assert setter.returncode == 0, err
    assert accepted.returncode == 0, accepted.stderr
    assert all(r.returncode == 0 for r in cli_sets), [r.stderr for r in cli_sets]
    written = accepted.stdout.count('"status": "accepted"')
    note = kb.read("n")
    assert written >= 6 and len(note.meta.claims) == written
    data = note_edits.frontmatter_data(note)
    assert sorted(k for k in data if k.startswith("x_set_")) == [f"x_set_{n:03d}" for n in range(int(out))]
    assert set(cli_fields) <= set(data)


def test_a_held_lock_makes_a_writer_wait_then_refuse_with_one_line(papers: Path, tmp_path: Path) -> None:
    before = (papers / "n.md").read_bytes()
    lock = note_lock.lock_path(papers / "n.md")
    lock.parent.mkdir(exist_ok=True)
    with lock.open("a") as held:  # another writer, in the middle of its edit
        fcntl.flock(held, fcntl.LOCK_EX)
        env = {**os.environ, "KB_NOTE_LOCK_TIMEOUT": "0.5"}
        refused = run_kb_process(papers, tmp_path / "home", "set", "n", "analyst=Me", env=env, timeout=60)
    assert refused.returncode != 0 and "updated" not in refused.stdout
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "n.md" in lines[0] and "another kb process" in lines[0], refused.stderr
    assert (papers / "n.md").read_bytes() == before


def test_lock_files_are_shared_hidden_and_git_ignored(papers: Path, tmp_path: Path) -> None:
    link = tmp_path / "vault-link"
    link.symlink_to(papers)  # another path to the same notes: the same lock
    assert note_lock.lock_path(link / "n.md") == note_lock.lock_path(papers / "n.md")
    assert note_lock.lock_path(papers / "n.md").parent == papers / ".kb-locks"
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
    kb.set_fields("n", {"analyst": "Me"})
    assert [p.name for p in find_notes(papers)] == ["n.md"]
    assert [p.id for p in kb.list_papers()] == ["n"]
    subprocess.run(["git", "init", "-q", str(papers)], check=True)
    status = subprocess.run(["git", "-C", str(papers), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True, check=True).stdout
    assert ".kb-locks" not in status and "n.md" in status


def test_a_write_under_a_base_that_changed_is_refused(papers: Path, tmp_path: Path) -> None:
    kb = KnowledgeBase(Settings(papers=papers, home=tmp_path / "home"))
    opened = kb.read("n").content_hash
    KnowledgeBase(Settings(papers=papers, home=tmp_path / "other")).set_fields("n", {"analyst": "Jones"})
    with pytest.raises(NoteChanged, match="changed on disk since you opened it"):
        kb.set_fields("n", {"title": "Mine"}, expected_hash=opened)
    data = note_edits.frontmatter_data(kb.read("n"))
    assert data["analyst"] == "Jones" and data["title"] == "Lock me"


def test_two_kb_new_of_one_title_never_overwrite(papers: Path, tmp_path: Path) -> None:
    def create(n: int) -> subprocess.CompletedProcess[str]:
        return kb_elsewhere(papers, tmp_path / f"home-{n}", "new", "--title", "Same title", "--paper-id",
                            f"t:same-{n}")

    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(create, range(3)))
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    made = sorted(p.name for p in papers.glob("same-title*.md"))
    assert made == ["same-title-2.md", "same-title-3.md", "same-title.md"]
    ids = {KnowledgeBase(Settings(papers=papers, home=tmp_path / "h")).read(Path(m).stem).meta.paper_id
           for m in made}
    assert ids == {f"t:same-{n}" for n in range(3)}



def test_one_paper_added_from_two_kb_homes_at_once_makes_one_note(papers: Path, tmp_path: Path) -> None:
    # Each home's own index cannot see the other's new note: the folder's creation lock (with the index
    # brought up to date under it) is what keeps the paper_id unique.
    def create(n: int) -> subprocess.CompletedProcess[str]:
        return kb_elsewhere(papers, tmp_path / f"home-{n}", "new", "--title", f"Twin {n}", "--paper-id", "t:twin")

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(create, range(4)))
    made = [p for p in find_notes(papers) if "t:twin" in p.read_text(encoding="utf-8")]
    assert len(made) == 1, [p.name for p in made]
    refused = [r for r in results if r.returncode != 0]
    assert len(refused) == 3
    assert all("paper_id 't:twin' is already used" in r.stderr and len(r.stderr.strip().splitlines()) == 1
               for r in refused), [r.stderr for r in refused]


def test_kb_new_refuses_a_source_file_outside_the_vault_and_writes_nothing(papers: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("outside the vault", encoding="utf-8")
    template = tmp_path / "template.md"
    template.write_text('---\npaper_id: "t:out"\ntitle: "Out"\nsource_file: "../secret.txt"\n---\nBody.\n',
                        encoding="utf-8")
    def visible() -> list[str]:  # the lock folder .kb-locks/ may appear: it holds no note
        return sorted(p.name for p in papers.iterdir() if not p.name.startswith("."))

    before = visible()
    result = run_kb(papers, tmp_path / "home", "new", "--template", str(template))
    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1 and "source_file" in result.stderr, result.stderr
    assert "outside the vault" not in result.stdout + result.stderr
    assert visible() == before

# -- the app's edit form ---------------------------------------------------------------------------

def test_app_edit_form_refuses_a_stale_base_and_reloads(papers: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_PAPERS", str(papers))
    monkeypatch.setenv("KB_HOME", str(tmp_path / "app-home"))
    monkeypatch.setenv("KB_APP_WORKER", "false")
    monkeypatch.delenv("KB_DATABASE_URL", raising=False)
    monkeypatch.delenv("KB_CHAT_MODEL", raising=False)
    st.cache_resource.clear()
    st.cache_data.clear()
    KnowledgeBase(Settings(papers=papers, home=tmp_path / "app-home")).index()
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60).run()
    at.query_params.update(id="n")
    at.switch_page("views/edit_note.py").run()
    assert not at.exception and at.text_input(key="fm_analyst").value == ""

    # Someone else's edit lands from another KB home while the form is open.
    assert run_kb(papers, tmp_path / "cli-home", "set", "n", "analyst=Jones").returncode == 0
    at.text_input(key="fm_title").input("Mine").run()
    at.button(key="edit_save").click().run()
    assert any("changed on disk since you opened it" in e.value for e in at.error), [e.value for e in at.error]
    data = note_edits.frontmatter_data(KnowledgeBase(Settings(papers=papers, home=tmp_path / "h")).read("n"))
    assert data["analyst"] == "Jones" and data["title"] == "Lock me"

    at.button(key="edit_reload").click().run()
    assert at.text_input(key="fm_analyst").value == "Jones" and at.text_input(key="fm_title").value == "Lock me"
    at.text_input(key="fm_title").input("Mine").run()
    at.button(key="edit_save").click().run()
    assert not at.exception and not at.error
    data = note_edits.frontmatter_data(KnowledgeBase(Settings(papers=papers, home=tmp_path / "h")).read("n"))
    assert data["analyst"] == "Jones" and data["title"] == "Mine"

