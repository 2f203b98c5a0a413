"""User text printed in the terminal is escaped: rich markup in a title, id, tag or snippet shows as typed."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_kb

WIDE = {"COLUMNS": "200"}
NOTE = """---
paper_id: "t:[/]odd"
title: "The [mask] token and [/] and [bold]bold[/bold] in a title"
tags: ["[red]tag"]
claims:
  - id: c
    statement: "A [mask] statement"
---
The [mask] token is predicted from context.
"""


def test_markup_in_notes_is_shown_as_typed(tmp_path: Path) -> None:
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    (papers / "odd.md").write_text(NOTE, encoding="utf-8")
    for args in (["index"], ["list"], ["show", "odd"], ["search", "mask"], ["validate", str(papers)]):
        result = run_kb(papers, home, *args, env=WIDE)
        assert result.returncode == 0 and "Traceback" not in result.stderr, (args, result.stdout, result.stderr)
        if args[0] in ("list", "show"):
            assert "[mask]" in result.stdout and "[/]" in result.stdout, (args, result.stdout)
    shown = run_kb(papers, home, "show", "odd", env=WIDE).stdout
    assert "[bold]bold[/bold]" in shown and "[red]tag" in shown and "A [mask] statement" in shown
    found = run_kb(papers, home, "search", "mask", env=WIDE).stdout
    assert "[mask]" in found and "1 hit(s) for 'mask'" in found
