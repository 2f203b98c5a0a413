"""Which files of a notes folder are notes: every ``*.md`` under it, hidden folders skipped.

Apart from ``kb.notes.files`` (which reads and writes them, and re-exports ``find_notes``) so that finding the
notes costs no import of the schemas or the YAML reader: ``kb list`` on a current index only stats them
(``kb.index.listing``).
"""

from __future__ import annotations

from pathlib import Path


def find_notes(papers_dir: Path) -> list[Path]:
    """All ``*.md`` files under ``papers_dir`` (recursively, hidden folders skipped), sorted."""
    papers_dir = Path(papers_dir)
    found = []
    for p in papers_dir.rglob("*.md"):
        rel = p.relative_to(papers_dir).parts
        if p.is_file() and not any(part.startswith(".") for part in rel):
            found.append(p)
    return sorted(found)
