"""Start-up: ``kb --help``, ``kb list`` and ``kb add`` (a BibTeX file, no drafting) import none of the heavy
libraries only some commands need (torch, transformers, streamlit, langchain), and ``kb --help`` not even the
index's (SQLAlchemy, Alembic): run in a fresh process, each command's new ``sys.modules`` are checked
afterwards. ``benchmarks/bench_startup.py`` measures the time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "transformers", "streamlit", "langchain", "langchain_core", "langchain_community")
# The index's libraries: `kb --help` opens no index, so it loads neither (half its start-up, measured).
INDEX_LIBRARIES = ("sqlalchemy", "alembic")

# Runs each command as the `kb` script does (kb.cli.main, exit by SystemExit), one after another in one process:
# a module a command imports stays in sys.modules, so each command is charged with what appeared during it.
SCRIPT = """
import json, sys
heavy = set(sys.argv[1].split(","))
found = {}
for args in json.loads(sys.argv[2]):
    before = set(sys.modules)
    sys.argv = ["kb", *args]
    try:
        import kb.cli
        kb.cli.main()
    except SystemExit as exc:
        assert exc.code in (0, None), (args, exc.code)
    new = {name.split(".")[0] for name in set(sys.modules) - before}
    found[args[0]] = sorted(new & heavy)
print(json.dumps(found))
"""


def test_help_list_and_add_import_no_heavy_library(tmp_path: Path) -> None:
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    bib = tmp_path / "one.bib"
    bib.write_text("@article{a, title = {Depth of PLMs}, author = {Smith, Ann}, year = {2025}}\n", encoding="utf-8")
    where = ["--papers", str(papers), "--home", str(home)]
    commands = [["--help"], ["list", *where], ["add", str(bib), *where]]
    done = subprocess.run([sys.executable, "-c", SCRIPT, ",".join(HEAVY + INDEX_LIBRARIES), json.dumps(commands)],
                          cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["--help"] == []
    assert set(found["list"]) <= set(INDEX_LIBRARIES) and found["add"] == []  # list opens the index: only those
    assert (papers / "depth-of-plms.md").exists()  # the add ran, so its imports were counted
