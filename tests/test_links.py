"""Links between notes ([[note-id]], [[note-id#claim-id]], [[note-id|label]]): read from bodies outside code,
resolved by ``kb show``, checked by ``kb validate``, and backlinks found through the index; the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kb.notes.links import Link, find_links
from tests.helpers.cli import run_kb

TARGET = "siji-2026-curse-of-depth-in-plms"
TITLE = "From Words to Amino Acids: Does the Curse of Depth Persist?"
STATEMENT = "Later layers of PLMs mainly refine the final output distribution instead of building new features."

LINKING = f"""---
paper_id: "test:links"
title: "A note that links"
---
# Links

The depth paper: [[{TARGET}]].
Its first claim, [[{TARGET}#late-layers-refine|the refinement claim]], and bare [[{TARGET}#late-layers-refine]].
Not links: `[[{TARGET}]]` in code, and

```markdown
[[in-a-fence]]
```

A note that is not there: [[no-such-note]], a claim that is not there: [[{TARGET}#no-such-claim]].
"""


@pytest.fixture
def linking(kb_dirs: tuple[Path, Path]) -> Path:
    path = kb_dirs[0] / "a-note-that-links.md"
    path.write_text(LINKING, encoding="utf-8")
    return path


def test_find_links_reads_targets_claims_labels_and_lines_outside_code() -> None:
    body = ("a [[x]] b [[y#c| Label ]]\n`[[code]]` ``s `[[span]]` s`` [[x#c]]\n~~~\n[[fence]]\n~~~~\n[[after]]\n"
            "```\n[[open")
    assert [(link.note_id, link.claim_id, link.label, link.line) for link in find_links(body)] == [
        ("x", None, None, 1), ("y", "c", "Label", 1), ("x", "c", None, 2), ("after", None, None, 6)]
    first = find_links(body)[0]
    assert body[first.start:first.end] == "[[x]]" and first == Link("x", None, None, 2, 7, 1)
    # An unclosed backtick is literal: the link after it is a link; an unclosed fence runs to the end.
    assert [link.target for link in find_links("one ` tick [[a#b]]\n```\n[[never]]")] == ["a#b"]


def test_show_resolves_links_to_titles_and_statements(kb_dirs: tuple[Path, Path], linking: Path) -> None:
    before = linking.read_bytes()
    result = run_kb(*kb_dirs, "show", "a-note-that-links", env={"COLUMNS": "400"})
    assert result.returncode == 0, result.stderr
    assert f"The depth paper: {TITLE} (→ {TARGET})." in result.stdout
    assert f"the refinement claim (→ {TARGET}#late-layers-refine)" in result.stdout
    assert f"bare {STATEMENT} (→ {TARGET}#late-layers-refine)." in result.stdout
    assert "[[no-such-note]] (unknown note)" in result.stdout
    assert f"[[{TARGET}#no-such-claim]] (unknown claim)" in result.stdout
    assert f"[[{TARGET}]] in code" in result.stdout and "[[in-a-fence]]" in result.stdout  # code as written
    shown = json.loads(run_kb(*kb_dirs, "show", "a-note-that-links", "--json").stdout)[0]
    assert [(link["target"], link["resolved"]) for link in shown["links"]] == [
        (TARGET, TITLE), (f"{TARGET}#late-layers-refine", STATEMENT), (f"{TARGET}#late-layers-refine", STATEMENT),
        ("no-such-note", None), (f"{TARGET}#no-such-claim", None)]
    assert shown["links"][1]["label"] == "the refinement claim" and shown["links"][0]["line"] == 7
    assert linking.read_bytes() == before  # links are read, never written


def test_show_lists_backlinks_from_bodies_never_from_code(kb_dirs: tuple[Path, Path], linking: Path) -> None:
    papers = kb_dirs[0]
    (papers / "a_b.md").write_text('---\npaper_id: "t:ab"\ntitle: "Underscore"\n---\nbody\n', encoding="utf-8")
    (papers / "mentions.md").write_text(f'---\npaper_id: "t:m"\ntitle: "Mentions"\n---\n`[[{TARGET}]]` and '
                                        f"[[{TARGET}-not]] and [[axb]] and [[a_b|underscored]]\n", encoding="utf-8")
    shown = json.loads(run_kb(*kb_dirs, "show", TARGET, "--json").stdout)[0]
    assert shown["backlinks"] == [
        {"note": "a-note-that-links", "title": "A note that links", "claim": None},
        {"note": "a-note-that-links", "title": "A note that links", "claim": "late-layers-refine"},
        {"note": "a-note-that-links", "title": "A note that links", "claim": "late-layers-refine"},
        {"note": "a-note-that-links", "title": "A note that links", "claim": "no-such-claim"}]
    underscored = json.loads(run_kb(*kb_dirs, "show", "a_b", "--json").stdout)[0]
    assert [b["note"] for b in underscored["backlinks"]] == ["mentions"]  # 'axb' is no link to 'a_b'
    text = run_kb(*kb_dirs, "show", TARGET, env={"COLUMNS": "400"}).stdout
    assert "Linked from (4)" in text and "A note that links a-note-that-links (claim late-layers-refine)" in text


def test_validate_warns_about_unknown_targets_with_file_and_line(kb_dirs: tuple[Path, Path], linking: Path) -> None:
    result = run_kb(*kb_dirs, "validate")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "[[" in line]
    assert warnings == [
        f"warning: {linking}:15: [[no-such-note]]: no note with id 'no-such-note' (links are resolved by note id: "
        "the file name without .md)",
        f"warning: {linking}:15: [[{TARGET}#no-such-claim]]: note '{TARGET}' has no claim 'no-such-claim' (links "
        "are resolved by note id: the file name without .md)"]
    strict = run_kb(*kb_dirs, "validate", "--strict")
    assert strict.returncode == 1 and "(--strict)" in strict.stderr
    # Validating the linking note alone still finds its targets in the notes folder.
    alone = run_kb(*kb_dirs, "validate", str(linking))
    assert alone.returncode == 0 and alone.stderr.count("warning:") == 2
    linking.write_text(LINKING.replace("[[no-such-note]]", "no link").replace("#no-such-claim", ""), encoding="utf-8")
    assert run_kb(*kb_dirs, "validate", "--strict").returncode == 0


def test_backlinks_on_postgres(kb_dirs: tuple[Path, Path], linking: Path, pg_database: str) -> None:
    papers = kb_dirs[0]
    (papers / "a_b.md").write_text('---\npaper_id: "t:ab"\ntitle: "Underscore"\n---\nbody\n', encoding="utf-8")
    (papers / "mentions.md").write_text('---\npaper_id: "t:m"\ntitle: "Mentions"\n---\n[[axb]] and [[a_b]]\n',
                                        encoding="utf-8")
    shown = json.loads(run_kb(*kb_dirs, "show", TARGET, "--json", "--db", pg_database).stdout)[0]
    assert [(b["note"], b["claim"]) for b in shown["backlinks"]] == [
        ("a-note-that-links", None), ("a-note-that-links", "late-layers-refine"),
        ("a-note-that-links", "late-layers-refine"), ("a-note-that-links", "no-such-claim")]
    linking_note = json.loads(run_kb(*kb_dirs, "show", "a-note-that-links", "--json", "--db", pg_database).stdout)[0]
    assert [link["resolved"] for link in linking_note["links"]] == [TITLE, STATEMENT, STATEMENT, None, None]
    underscored = json.loads(run_kb(*kb_dirs, "show", "a_b", "--json", "--db", pg_database).stdout)[0]
    assert [b["note"] for b in underscored["backlinks"]] == ["mentions"]
