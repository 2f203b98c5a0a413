"""Start-up: ``kb --help``, ``kb list`` and ``kb add`` (a BibTeX file, no drafting) import none of the heavy
libraries only some commands need (torch, transformers, streamlit, langchain), ``kb --help`` not even the
index's (SQLAlchemy, Alembic) nor any command's module, and ``kb list`` on a current SQLite index neither
(it reads the index with ``sqlite3``), yet prints what the full path prints: run in a fresh process, each
command's new ``sys.modules`` are checked afterwards. ``benchmarks/bench_startup.py`` measures the time."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

from analyzers import registry
from kb.cli import app, catalog
from kb.cli import listing as listing_cli
from tests.helpers.cli import run_kb

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "transformers", "streamlit", "langchain", "langchain_core", "langchain_community")
# The index's libraries: `kb --help` opens no index, so it loads neither (half its start-up, measured).
INDEX_LIBRARIES = ("sqlalchemy", "alembic")
# What `kb list` never needs (the queue, executors, bundles, tensions, estimates, the analyzer packages): kb.core
# imports them in the methods that use them.
NOT_FOR_LIST = ("kb.queue.bundles", "kb.queue.execution", "kb.queue.executors", "kb.queue.store",
                "kb.evidence.tensions", "kb.evidence.estimates", "analyzers.depth", "analyzers.langevin")

# Runs each command as the `kb` script does (kb.cli.main, exit by SystemExit), one after another in one process:
# a module a command imports stays in sys.modules, so each command is charged with what appeared during it.
SCRIPT = """
import json, sys
heavy = set(sys.argv[1].split(","))
found = {}
for name, args in json.loads(sys.argv[2]):
    before = set(sys.modules)
    sys.argv = ["kb", *args]
    try:
        import kb.cli
        kb.cli.main()
    except SystemExit as exc:
        assert exc.code in (0, None), (args, exc.code)
    new = set(sys.modules) - before
    found[name] = sorted({module.split(".")[0] for module in new} & heavy)
    found[name + " modules"] = sorted(module for module in new if module.startswith(("kb.", "analyzers.")))
print(json.dumps(found))
"""


def test_help_list_and_add_import_no_heavy_library(tmp_path: Path) -> None:
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    bib = tmp_path / "one.bib"
    bib.write_text("@article{a, title = {Depth of PLMs}, author = {Smith, Ann}, year = {2025}}\n", encoding="utf-8")
    where = ["--papers", str(papers), "--home", str(home)]
    assert run_kb(papers, home, "index").returncode == 0  # the index is current: `kb list` reads it as is
    # `kb runs` loads kb.cli.runs, whose `evidence` group gets `export` only from kb.cli.bundles: asked for after
    # it in one process, `kb evidence` must still have it
    commands = [["--help", ["--help"]], ["list", ["list", *where]], ["add --help", ["add", "--help"]],
                ["add", ["add", str(bib), *where]], ["runs", ["runs", *where]],
                ["evidence", ["evidence", "export", "--help"]]]
    done = subprocess.run([sys.executable, "-c", SCRIPT, ",".join(HEAVY + INDEX_LIBRARIES), json.dumps(commands)],
                          cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["--help"] == []
    assert found["list"] == []  # list reads the current index with sqlite3
    assert found["add"] == ["sqlalchemy"]  # add indexes the note it writes (the index at head: no Alembic)
    assert found["add --help"] == [] and [name for name in found["add --help modules"]
                                          if name.startswith(("kb.settings", "kb.notes.files", "kb.core"))] == []
    assert [name for name in found["list modules"] if name.startswith(NOT_FOR_LIST)] == []
    assert "kb.core" not in found["list modules"] and "kb.settings" not in found["list modules"]
    assert (papers / "depth-of-plms.md").exists()  # the add ran, so its imports were counted
    assert "--all" in done.stdout and found["runs"] == found["evidence"] == []  # export's own help


def test_list_on_a_current_index_prints_what_the_full_path_prints(
    kb_dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kb list` answers from a current SQLite index with sqlite3 (``kb.index.listing.current_listing``); the
    same command given the index's URL (``--db``) takes the full path (settings, SQLAlchemy, indexing): both
    must print the same table and JSON-free listing for every filter and sort."""
    papers, home = kb_dirs
    answers: list[bool] = []  # per fast-path call: did it answer (the index current)?

    def spy(*args: Any, **kwargs: Any) -> list[dict[str, Any]] | None:
        rows = real(*args, **kwargs)
        answers.append(rows is not None)
        return rows

    real = listing_cli.current_listing
    monkeypatch.setattr(listing_cli, "current_listing", spy)
    assert run_kb(papers, home, "index").returncode == 0
    url = f"sqlite:///{(home / 'index.sqlite').resolve()}"
    cases = [[], ["--tag", "LANGEVIN"], ["--sort", "year", "--desc"], ["--sort", "quality"], ["--min-quality", "3"],
             ["--year", "2026", "--sort", "title"], ["--decision", "accept"], ["--status", "no-such-status"]]
    for args in cases:
        fast = run_kb(papers, home, "list", *args, env={"COLUMNS": "200"})
        full = run_kb(papers, home, "list", *args, "--db", url, env={"COLUMNS": "200"})
        assert fast.returncode == full.returncode == 0, (args, fast.stderr, full.stderr)
        assert fast.stdout == full.stdout and fast.stderr == full.stderr == "", args
    assert answers == [True] * len(cases)  # each plain run was the fast path; each --db run did not ask it
    shown = run_kb(papers, home, "list", "--tag", "LANGEVIN", env={"COLUMNS": "200"}).stdout
    assert "1 note(s)" in shown and "sampling-intermediate-temperatures-langevin" in shown  # filters apply


# What `kb --help` must not load: the command modules, the packages under them and the analyzer packages.
NOT_FOR_HELP = ("pydantic", "pydantic_settings", "sqlalchemy", "rich.markdown_it", "kb.settings", "kb.display",
                "kb.notes", "kb.cli.common", "kb.cli.notes", "kb.cli.runs", "kb.cli.plugins", "analyzers.base",
                "analyzers.depth", "analyzers.langevin", "schemas")


def test_help_imports_no_command_module_and_lists_every_command(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != registry.MODULES_VARIABLE}  # no plug-in
    probe = ("import json, sys, runpy; sys.argv = ['kb', '--help']\n"
             "try: runpy.run_module('kb', run_name='__main__')\nexcept SystemExit: pass\n"
             "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env={**env, "COLUMNS": "200"},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    *page, modules_line = done.stdout.strip().splitlines()
    modules = set(json.loads(modules_line))
    assert sorted(name for name in modules if name.startswith(NOT_FOR_HELP)) == []
    listed = {line.split()[1] for line in page if line.startswith("│ ") and len(line.split()) > 2}
    assert set(catalog.COMMANDS) | {"probe", "models", "langevin"} <= listed  # the analyzers' commands too


def _first_paragraph(text: str | None) -> str:
    return " ".join(inspect.cleandoc(text or "").split("\n\n")[0].split())


def test_the_catalogue_is_every_command_with_its_own_help_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """`kb --help` lists the catalogue's lines (kb.cli.catalog, analyzers' commands.json) instead of importing
    the commands: each line must be its command's own help, and every command the modules add must be there."""
    catalog.load_everything()
    group = typer.main.get_group(app)  # built anew from what the modules and the hooks added
    monkeypatch.delenv(registry.MODULES_VARIABLE)  # the tests' noop module (which adds no command) aside
    declared = registry.declared_commands()
    assert declared is not None  # this checkout: the shipped packages say, no plug-in installed
    lines = {name: line for name, (_, line) in catalog.COMMANDS.items()} | declared
    real = {name: _first_paragraph(command.short_help or command.help) for name, command in group.commands.items()}
    assert {name: " ".join(line.split()) for name, line in lines.items()} == real, (
        "a command was added, renamed or its help changed: give it a line in kb/cli/catalog.py COMMANDS (an "
        "analyzer package's: its commands.json), the first paragraph of its help")
    for name, (modules, _) in catalog.COMMANDS.items():  # each names the module that defines it
        command = group.commands[name]
        parts = getattr(command, "commands", {}).values() or [command]  # a group: where its commands are
        defined_in = {part.callback.__module__ for part in parts}
        assert defined_in <= {f"kb.cli.{module}" for module in modules}, (name, defined_in)


def test_pdf_reader_child_imports_no_settings_or_note_models() -> None:
    """``kb add FILE.pdf`` reads the PDF in a fresh child process (kb.papers.pdf_child) on every add: reading a
    page (one scanned for journal names) imports neither pydantic nor kb's settings or note models
    (0.2 s of CPU at each read, when the PAGE_BREAK constant came from kb.notes.grounding)."""
    pdf = ROOT / "benchmarks" / "data" / "pdfs" / "fast-folding-science.pdf"
    code = ("import json, sys; from pathlib import Path; from kb.papers import pdf_child; "
            "from kb.papers.pdf_layout import read_article; from kb.papers.journals import lexicon; "
            "read_article(Path(sys.argv[1])); print(json.dumps([lexicon.cache_info().currsize, sorted(sys.modules)]))")
    done = subprocess.run([sys.executable, "-c", code, str(pdf)], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    lexicon_opened, modules = json.loads(done.stdout)
    assert lexicon_opened  # (the page was read, names looked up in the journal lexicon)
    assert not {m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_settings", "sqlalchemy")}
    assert not {m for m in modules if m.startswith(("kb.settings", "kb.notes.files", "kb.notes.grounding"))}
