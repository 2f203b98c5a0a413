"""Where a knowledge base lives when nothing says otherwise: the notes folder, the KB home and the SQLite
index under it. The settings model (``kb.settings.Settings``) takes its defaults from here; ``kb list`` on a
current index resolves its locations here without loading the model (pydantic-settings is a large part of a
start-up: ``benchmarks/bench_startup.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_PAPERS = Path("papers")  # the notes folder, relative to where kb runs
DEFAULT_HOME = Path(".kb")  # the KB home: index, evidence, caches
INDEX_FILE = "index.sqlite"  # the SQLite index inside the KB home, unless a database URL is set

# The settings these locations come from, as the model reads them from the environment (KB_ prefix).
_FIELDS = ("papers", "home", "database_url")


def index_file(home: Path) -> Path:
    """The SQLite index of the KB home ``home`` (absolute)."""
    return (home / INDEX_FILE).resolve()


def plain_locations(papers: Path | None, home: Path | None, db: str | None) -> tuple[Path, Path] | None:
    """The notes folder and SQLite index file the settings model would give for these options (None: unset),
    where the options alone decide them: each given, or left to its default with no environment variable of
    its name in any case (``kb_home``) or empty, which only the model reads. None when they do not decide (a
    database URL, such a variable): then ask the model."""
    if db is not None:
        return None
    named = {key.lower() for key in os.environ}
    given = {"papers": papers, "home": home}
    if any(f"kb_{field}" in named and given.get(field) is None for field in _FIELDS):
        return None
    return (papers if papers is not None else DEFAULT_PAPERS,
            index_file(home if home is not None else DEFAULT_HOME))
