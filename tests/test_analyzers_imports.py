"""The analyzers' modules import without circles and without another module's private names (issue 34).

Checked on the import graph import-linter itself builds (``grimp``), every import counted, those inside
functions too: a circle hidden in a function-level import is still a circle. Each check is also run on a
throw-away package that breaks it, so that it can fail."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]


def import_circles(package: str) -> set[str]:
    """Every import a -> b of ``package``'s modules where b also reaches a, as 'a -> b -> ... -> a'."""
    graph = grimp.build_graph(package, include_external_packages=False)
    circles = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back:
                circles.add(" -> ".join((module, *back)))
    return circles


def private_imports(folder: Path, package: str) -> list[str]:
    """'file: module.name' for each ``from <package>... import _name`` under ``folder``."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(package):
                found += [f"{path.name}: {node.module}.{alias.name}" for alias in node.names
                          if alias.name.startswith("_") and not alias.name.startswith("__")]
    return found


def test_analyzers_import_graph_has_no_circle() -> None:
    circles = import_circles("analyzers")
    assert not circles, "import circles:\n" + "\n".join(sorted(circles))


def test_analyzers_import_no_private_name_of_another_module() -> None:
    found = private_imports(ROOT / "analyzers", "analyzers")
    assert not found, "private names imported across modules:\n" + "\n".join(found)


def test_the_checks_find_a_circle_and_a_private_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "tangled"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from tangled.b import _helper\n")
    (package / "b.py").write_text("def _helper() -> None:\n    from tangled import a  # noqa: F401\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_circles("tangled") == {"tangled.a -> tangled.b -> tangled.a", "tangled.b -> tangled.a -> tangled.b"}
    assert private_imports(package, "tangled") == ["a.py: tangled.b._helper"]
