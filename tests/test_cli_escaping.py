"""User text printed in the terminal is escaped: rich markup in a title, id, tag or snippet shows as typed."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kb.cli import app

runner = CliRunner()
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
    common = ["--papers", str(papers), "--home", str(home)]
    for args in (["index"], ["list"], ["show", "odd"], ["search", "mask"], ["validate", str(papers)]):
        result = runner.invoke(app, [*args, *common], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (args, result.output)
        assert result.exception is None, (args, result.exception)
        if args[0] in ("list", "show"):
            assert "[mask]" in result.output and "[/]" in result.output, (args, result.output)
    shown = runner.invoke(app, ["show", "odd", *common], env={"COLUMNS": "200"})
    assert "[bold]bold[/bold]" in shown.output and "[red]tag" in shown.output and "A [mask] statement" in shown.output
    found = runner.invoke(app, ["search", "mask", *common], env={"COLUMNS": "200"})
    assert "[mask]" in found.output and "1 hit(s) for 'mask'" in found.output
