"""Registry completeness: every analyzer is documented and tested, every CLI command is in the README."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer.main

from analyzers import registry
from analyzers.base import AnalyzerParams, AnalyzerResult
from kb.cli import app

ROOT = Path(__file__).resolve().parents[1]


def test_registry_every_analyzer_is_typed_and_tested() -> None:
    analyzers = registry.load_all()
    assert "noop" in analyzers
    tests_text = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").glob("test_*.py"))
    for name, cls in analyzers.items():
        assert issubclass(cls.Params, AnalyzerParams) and issubclass(cls.Result, AnalyzerResult), name
        assert cls.summary and cls.metrics, f"{name} must declare a summary and its metrics"
        assert set(cls.metrics) <= set(cls.Result.model_fields) | {m.split(".")[0] for m in cls.metrics}
        for metric in cls.metrics:
            assert metric.split(".")[0] in cls.Result.model_fields, f"{name}: metric {metric!r} is not in Result"
        assert f'"{name}"' in tests_text or f"'{name}'" in tests_text, f"analyzer {name!r} has no test"


def test_registry_unknown_name_lists_registered() -> None:
    with pytest.raises(KeyError, match="registered: .*noop"):
        registry.get("no.such.analyzer")


def test_bundled_claims_bind_registered_analyzers_or_are_reported() -> None:
    """Every analyzer a bundled note names is either registered or listed here as not yet built."""
    from kb.notes import find_notes, read_note

    names = {c.analyzer.name for p in find_notes(ROOT / "papers") for c in read_note(p).meta.claims if c.analyzer}
    assert names, "the bundled notes should bind claims to analyzers"
    missing = names - set(registry.load_all())
    assert missing <= {"depth.probe", "depth.sweep", "langevin.sweep", "langevin.contacts"}, missing


def test_cli_every_command_is_in_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    undocumented = [name for name in commands if f"`kb {name}" not in readme]
    assert undocumented == []


def test_registry_command_hooks_add_commands_to_a_typer_app() -> None:
    from typer.testing import CliRunner

    @registry.register_commands
    def add_hello(cli: typer.Typer) -> None:
        @cli.command("hello-test-hook")
        def hello() -> None:
            print("hello from a hook")

    try:
        target = typer.Typer()

        @target.command()
        def other() -> None:  # a second command, so typer keeps subcommand names
            pass

        for hook in registry.command_hooks():
            if hook is add_hello:
                hook(target)
        result = CliRunner().invoke(target, ["hello-test-hook"])
        assert result.exit_code == 0 and "hello from a hook" in result.output
    finally:
        registry._COMMAND_HOOKS.remove(add_hello)


def test_registry_every_shipped_analyzer_package_loads() -> None:
    assert registry.broken() == {}


def test_registry_a_broken_plugin_is_reported_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode() -> None:
        raise ImportError("needs a package that is not installed")

    monkeypatch.setattr(registry, "_BROKEN", {})
    with pytest.warns(RuntimeWarning, match="broken-plugin failed to load"):
        registry._load("broken-plugin", explode)
    assert "needs a package" in registry.broken()["broken-plugin"]
    with pytest.raises(KeyError, match="broken-plugin failed to load"):
        registry.get("from.the.broken.plugin")
