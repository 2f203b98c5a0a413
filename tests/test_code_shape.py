"""The house rule "functions under 80 lines" (CONTRIBUTING.md, issue 34), checked over kb/ and analyzers/.

The Alembic migrations are frozen as written (a migration is never edited once released), so they are left out.
Lines under 110 characters in analyzers/ are ruff's check (analyzers/ruff.toml).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 80


def long_functions(source: str, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """Each function (nested ones included) longer than ``limit`` lines: its name and length."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                found.append((node.name, length))
    return found


def test_long_functions_measures_from_def_to_last_line() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES - 1))  # with its def: exactly the limit
    assert long_functions(f"def fits():\n{body}") == []
    assert long_functions(f"def too_long():\n{body}    y = 0\n") == [("too_long", MAX_LINES + 1)]
    nested = "def outer():\n    def inner():\n" + body.replace("    ", "        ") + "        y = 0\n"
    assert sorted(long_functions(nested)) == [("inner", MAX_LINES + 1), ("outer", MAX_LINES + 2)]


def test_functions_in_kb_and_analyzers_fit_in_80_lines() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}: {name} ({length} lines)"
        for folder in ("kb", "analyzers")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "migrations" not in path.parts
        for name, length in long_functions(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "split these where a name explains the part:\n" + "\n".join(offenders)
