"""Registry completeness: every analyzer is documented and tested, every CLI command is in the README;
registration stays cheap (no torch & co. until an analyzer runs); the base class names scale presets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, ClassVar

import pytest
import typer.main
from pydantic import Field

from analyzers import registry
from analyzers.base import Analyzer, AnalyzerParams, AnalyzerResult, RunContext, metrics_of
from kb.cli import app, catalog
from tests.helpers.cli import run_kb_process

ROOT = Path(__file__).resolve().parents[1]
# Imported only when an analyzer runs or a command needs them: each takes from tens of milliseconds
# (numpy) to seconds (torch), and every `kb` command and the app's first page load the registry.
HEAVY_FOR_CLI = ("torch", "transformers", "matplotlib", "scipy", "gemmi", "nnsight", "langchain")
HEAVY_FOR_REGISTRY = (*HEAVY_FOR_CLI, "numpy", "huggingface_hub", "safetensors", "tokenizers")


def _analyzer_markers() -> dict[str, list[str]]:
    """Analyzer name -> the tests marked ``@pytest.mark.analyzer(name, ...)`` (read from the test files' code)."""
    import ast

    marked: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                if (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                        and decorator.func.attr == "analyzer"):
                    for arg in decorator.args:
                        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                            marked.setdefault(arg.value, []).append(f"{path.name}::{node.name}")
    return marked


def test_registry_every_analyzer_is_typed_and_has_a_named_test() -> None:
    """As datasette does for its hooks: each registered analyzer has a test that says it runs it end to end
    (``@pytest.mark.analyzer(name)``), and no such marker names an analyzer that is not registered."""
    analyzers = registry.load_all()
    assert "noop" in analyzers
    marked = _analyzer_markers()
    # Only what the tree ships or the tests register through KB_ANALYZER_MODULES: other tests register
    # throw-away analyzers in this process to exercise the queue.
    shipped = {name: cls for name, cls in analyzers.items()
               if cls.__module__.startswith("analyzers.") or cls.__module__ == "tests.noop_analyzer"}
    for name, cls in shipped.items():
        assert issubclass(cls.Params, AnalyzerParams) and issubclass(cls.Result, AnalyzerResult), name
        assert cls.summary and cls.metrics, f"{name} must declare a summary and its metrics"
        assert cls.metrics == metrics_of(cls.Result) or set(cls.metrics) <= set(cls.Result.model_fields), name
        for metric in cls.metrics:
            assert metric.split(".")[0] in cls.Result.model_fields, f"{name}: metric {metric!r} is not in Result"
        assert marked.get(name), f"analyzer {name!r} has no test marked @pytest.mark.analyzer({name!r})"
    stale = sorted(set(marked) - set(analyzers) - {"throwaway"})
    assert not stale, f"tests are marked for analyzers that are not registered: {stale}"


def test_registry_unknown_name_lists_registered() -> None:
    with pytest.raises(KeyError, match="registered: .*noop"):
        registry.get("no.such.analyzer")


def test_bundled_claims_bind_registered_analyzers_or_are_reported() -> None:
    """Every analyzer a bundled note names is either registered or listed here as not yet built."""
    from kb.notes.files import find_notes, read_note

    names = {c.analyzer.name for p in find_notes(ROOT / "papers") for c in read_note(p).meta.claims if c.analyzer}
    assert names, "the bundled notes should bind claims to analyzers"
    missing = names - set(registry.load_all())
    assert missing <= {"depth.probe", "depth.sweep", "langevin.sweep", "langevin.contacts"}, missing


def test_cli_every_command_is_in_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    catalog.load_everything()  # a command's module loads when it runs: every module, so every command
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


_IMPORT_PROBE = """
import json, sys
import typer.main
from analyzers import registry
analyzers = registry.load_all()
after_registry = sorted(name.split(".")[0] for name in sys.modules)
import kb.cli
from kb.cli import catalog
catalog.load_everything()  # every command module (each loads when its command runs)
typer.main.get_command(kb.cli.app)
print(json.dumps({"analyzers": sorted(analyzers), "broken": registry.broken(), "after_registry": after_registry,
                  "after_cli": sorted(name.split(".")[0] for name in sys.modules)}))
"""


def test_registry_load_all_and_cli_import_no_heavy_module(tmp_path: Path) -> None:
    """A fresh interpreter: registering every analyzer and building the CLI imports none of the heavy libraries."""
    env = {**os.environ, "KB_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    completed = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    state = json.loads(completed.stdout.strip().splitlines()[-1])
    assert state["broken"] == {} and {"depth.probe", "depth.sweep", "langevin.sweep"} <= set(state["analyzers"])
    assert sorted(set(HEAVY_FOR_REGISTRY) & set(state["after_registry"])) == []
    assert sorted(set(HEAVY_FOR_CLI) & set(state["after_cli"])) == []


class _PresetParams(AnalyzerParams):
    size: int = Field(default=1, description="How big.")
    cache: str | None = Field(default=None, description="Where intermediate files go (does not change results).")


class _PresetResult(AnalyzerResult):
    size: int = Field(description="The size.")


class _Presets(Analyzer[_PresetParams, _PresetResult]):
    name = "test.presets"
    summary = "scale_name test double"
    Params = _PresetParams
    Result = _PresetResult
    metrics: ClassVar[dict[str, str]] = {"size": "the size"}
    scales: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": {}, "small": {"size": 10}, "same_as_small": {"size": 10}, "gpu": {"size": 10, "device": "cuda"},
    }

    def run(self, params: _PresetParams, ctx: RunContext) -> _PresetResult:
        raise NotImplementedError


class _PresetsIgnoringSetup(_Presets):
    scale_ignored_fields = frozenset({"device", "cache"})


def test_analyzer_scale_name_whatever_the_seed_else_custom() -> None:
    analyzer = _Presets()
    assert analyzer.scale_name(_PresetParams()) == "smoke"
    assert analyzer.scale_name(_PresetParams(size=10, seed=7)) == "small"  # the seed never changes the scale
    assert analyzer.scale_name(analyzer.params_for(scale="same_as_small")) == "small"  # first preset listed wins
    assert analyzer.scale_name(_PresetParams(size=10, device="cuda")) == "gpu"
    assert analyzer.scale_name(_PresetParams(size=3)) == "custom"
    assert analyzer.scale_name(_PresetParams(size=10, cache="/tmp/x")) == "custom"  # not ignored here


def test_analyzer_scale_name_ignores_the_declared_setup_fields() -> None:
    analyzer = _PresetsIgnoringSetup()
    assert analyzer.scale_name(_PresetParams(size=10, cache="/tmp/x", device="cuda:1", seed=3)) == "small"
    assert analyzer.scale_name(_PresetParams(size=3, cache="/tmp/x")) == "custom"


def test_registry_shipped_analyzers_scale_names() -> None:
    """depth.* compare every field but the seed; langevin.* also ignore device, folders and workers."""
    probe = registry.get("depth.probe")
    assert probe.scale_name(probe.params_for(scale="esm2_8m", params={"seed": 4})) == "esm2_8m"
    assert probe.scale_name(probe.params_for(scale="paper", params={"device": "cpu"})) == "custom"
    assert probe.scale_name(probe.params_for(scale="smoke", params={"max_sequences": 9})) == "custom"
    sweep = registry.get("depth.sweep")
    assert sweep.scale_name(sweep.params_for(scale="small", params={"seed": 2})) == "small"
    langevin = registry.get("langevin.sweep")
    setup = {"device": "cpu", "workers": 3, "work_dir": "/tmp/w", "cache_dir": "/tmp/c", "seed": 5}
    assert langevin.scale_name(langevin.params_for(setup, scale="paper")) == "paper"
    assert langevin.scale_name(langevin.params_for({"sampling_steps": 41})) == "custom"
    contacts = registry.get("langevin.contacts")
    assert contacts.scale_name(contacts.params_for(scale="small")) == "small"
    assert contacts.scale_name(contacts.params_for({"include_ffn": True}, scale="small")) == "custom"


def test_langevin_default_ladder_literal_is_the_rounded_geometric_ladder() -> None:
    """The ladder is written out (so the parameters need no numpy); it must equal its numpy definition."""
    import numpy as np

    from analyzers.langevin.spec import DEFAULT_LADDER

    geometric = tuple(float(t) for t in np.round(np.geomspace(2.0, 0.7, 8), 4))
    assert geometric == DEFAULT_LADDER


def test_langevin_small_and_paper_design_with_the_calibrated_protocol() -> None:
    """The calibration (ladder, burn-in, ticks, chains) is what lands the design near the authors' identity and
    entropy; a preset that drops it designs with the smoke scale's 40 burn-in sweeps (identity 0.09)."""
    from analyzers.langevin import spec

    calibrated = {"design_temperatures": list(spec.DEFAULT_LADDER), "design_burn_in_sweeps": spec.CALIBRATED_BURN_IN,
                  "design_sweeps_between": spec.CALIBRATED_SWEEPS_BETWEEN}
    per_chain = {}
    for scale, chains in (("small", spec.CALIBRATED_CHAINS), ("paper", spec.PAPER_DESIGN_CHAINS)):
        params = registry.get("langevin.sweep").params_for(scale=scale)
        assert {key: getattr(params, key) for key in calibrated} == calibrated, scale
        assert params.design_chains == chains, scale
        per_chain[scale] = params.num_sequences / chains
    # each chain sampled as briefly at either size: the glassy landscape makes a longer-sampled chain go deeper
    assert per_chain["paper"] == pytest.approx(per_chain["small"], rel=0.05)
    for scale, chains in (("smoke", spec.CALIBRATED_CHAINS), ("paper", spec.PAPER_DESIGN_CHAINS)):
        design = registry.get("langevin.design").params_for(scale=scale)
        assert (design.design_burn_in_sweeps, design.design_sweeps_between, design.num_chains) == (
            spec.CALIBRATED_BURN_IN, spec.CALIBRATED_SWEEPS_BETWEEN, chains)


THROWAWAY_SPEC = '''"""A throw-away analyzer written by a test: the package shape and nothing else."""

from __future__ import annotations

from analyzers.base import Analyzer, AnalyzerParams, AnalyzerResult, metric
from analyzers.registry import register


class Params(AnalyzerParams):
    """How much to double."""

    x: float = 2.0


class Result(AnalyzerResult):
    """The doubled value."""

    doubled: float = metric(description="twice the parameter x", exact=True)


@register
class Throwaway(Analyzer[Params, Result]):
    """Doubles x."""

    name = "NAME"
    summary = "Doubles a number (a test's throw-away analyzer)."
    Params = Params
    Result = Result
    compute = "analyzers.PACKAGE.compute:run"
    scales = {"smoke": {"x": 3.0}}
'''
THROWAWAY_COMPUTE = '''"""The throw-away analyzer's work."""

from __future__ import annotations

from typing import Any

from analyzers.PACKAGE.spec import Result
from schemas.run import EvidenceScale


def run(analyzer: Any, params: Any, ctx: Any) -> Result:
    return Result(scale=EvidenceScale(name=analyzer.scale_name(params)), doubled=2 * params.x)
'''


@pytest.fixture
def throwaway_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[str, Path]:
    """A new analyzer package under ``analyzers/`` of a checkout of its own; yields its analyzer's name and that
    checkout's root.

    The checkout links to this one's folders, with a real ``analyzers/`` folder of links to its packages beside
    the new one. Tests running at the same time in other processes (pytest-xdist) discover packages by listing
    this checkout's ``analyzers/``, so a package written there would be theirs too.
    """
    import analyzers

    package = f"throwaway_{uuid.uuid4().hex[:8]}"
    root = tmp_path / "checkout"
    root.mkdir()
    for name in ("kb", "schemas", "app", "tests"):
        (root / name).symlink_to(ROOT / name)
    (root / "analyzers").mkdir()
    for entry in (ROOT / "analyzers").iterdir():
        if entry.name != "__pycache__":
            (root / "analyzers" / entry.name).symlink_to(entry)
    folder = root / "analyzers" / package
    folder.mkdir()
    name = f"{package}.double"
    (folder / "__init__.py").write_text(f"from analyzers.{package} import spec  # noqa: F401\n")
    (folder / "spec.py").write_text(THROWAWAY_SPEC.replace("NAME", name).replace("PACKAGE", package))
    (folder / "compute.py").write_text(THROWAWAY_COMPUTE.replace("PACKAGE", package))
    # This process finds the package through the analyzers package's path, looks for packages again, and
    # forgets it when the test ends; a kb process started in the checkout finds it as a user's would.
    monkeypatch.setattr(analyzers, "__path__", [*analyzers.__path__, str(root / "analyzers")])
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_discovered", False)
    return name, root


def test_registry_a_new_analyzer_package_is_found_everywhere(throwaway_package: tuple[str, Path],
                                                             tmp_path: Path) -> None:
    """Adding one package under analyzers/ is all it takes: the CLI, `kb run`, the agents' tools and the app's
    claims editor find it, and no file outside the package changes."""
    from streamlit.testing.v1 import AppTest

    from kb.agents.tools import ToolBox
    from kb.core import KnowledgeBase
    from kb.settings import Settings

    name, checkout = throwaway_package
    before = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], capture_output=True,
                            text=True, cwd=ROOT, check=True).stdout.splitlines()
    # A kb process of its own, started after the package was written, discovers it as a user's would.
    listed_by_kb = run_kb_process(None, None, "analyzers", "--json", cwd=checkout)
    assert listed_by_kb.returncode == 0, listed_by_kb.stderr
    listed = json.loads(listed_by_kb.stdout)
    assert name in {row["id"] for row in listed}
    out = tmp_path / "out"
    done = run_kb_process(None, tmp_path / "home", "run", name, "--scale", "smoke", "--out", str(out),
                          cwd=checkout)
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "metrics.json").read_text())["doubled"] == 6.0

    kb = KnowledgeBase(Settings(papers=tmp_path / "papers", home=tmp_path / "home"))
    (tmp_path / "papers").mkdir()
    tools = json.loads(ToolBox(kb).list_analyzers())
    assert {"name": name, "metrics": {"doubled": "twice the parameter x"}}.items() <= next(
        t for t in tools if t["name"] == name).items()

    at = AppTest.from_file(str(ROOT / "app" / "views" / "edit_note.py"), default_timeout=60)
    os.environ["KB_PAPERS"], os.environ["KB_HOME"] = str(tmp_path / "papers"), str(tmp_path / "home")
    try:
        at.run()
        at.button(key="add_claim").click().run()
        assert not at.exception, at.exception
        uid = at.session_state["edit_claims"][-1]
        assert any(option.startswith(f"{name} — ") for option in at.selectbox(key=f"c_{uid}_analyzer").options)
    finally:
        del os.environ["KB_PAPERS"], os.environ["KB_HOME"]
    after = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], capture_output=True,
                           text=True, cwd=ROOT, check=True).stdout.splitlines()
    assert sorted(set(after) - set(before)) == [], "nothing in this checkout changes: the package is all it takes"
