"""What a bare GPU node gets: everything the GPU code imports is in the node's image or among the wheels kb
carries there, and the tree the device tool sends fits its 64 MiB once the PDF corpus is set aside.

A GPU slot is 15 minutes. A package missing there fails a run at its end (ArviZ's R-hat, after all the
sampling), and a tree over the limit is refused before anything runs: both cost the slot, and neither shows on
a machine that has every package. So these run on that machine, as far as imports go (``tests/helpers/gpu_node``).
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

from tests.helpers.gpu_node import ROOT, canonical, node_packages, node_python, node_site, on_the_node, wheel_pins

PROJECT = {"kb", "analyzers", "schemas", "app", "benchmarks", "tests"}
# What a GPU node runs: the analyzers and the scripts benchmarks/gpu_check.sh starts.
GPU_CODE = [*sorted((ROOT / "analyzers").rglob("*.py")), *sorted((ROOT / "benchmarks").glob("gpu_*.py")),
            ROOT / "benchmarks" / "bench_langevin.py"]  # fmt: skip


def imported_tops(path: Path) -> set[str]:
    """The top-level modules a file imports anywhere in it (inside functions too: those run at a run's end)."""
    tops = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            tops |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops.add(node.module.split(".")[0])
    return tops - PROJECT - set(sys.stdlib_module_names)


def test_every_package_the_gpu_code_imports_is_in_the_image_or_carried() -> None:
    providers = metadata.packages_distributions()
    missing = {}
    for path in GPU_CODE:
        for top in imported_tops(path):
            dists = {canonical(name) for name in providers.get(top, [top])}
            if not dists & on_the_node():
                missing[top] = path.relative_to(ROOT).as_posix()
    assert not missing, f"add these to benchmarks/gpu_wheels.txt (with what they need): {missing}"


def test_the_wheels_meet_kbs_lower_bounds_and_bring_what_they_need() -> None:
    """Each pin meets pyproject.toml's lower bound; each pinned wheel's own requirements (as installed here at
    that version) are in the image or carried, at a version the pins satisfy: the wheels go in with --no-deps."""
    bounds = {canonical(Requirement(text).name): Requirement(text).specifier
              for text in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
    pins = wheel_pins()
    for name, version in pins.items():
        assert version in bounds.get(name, version), f"{name}=={version} is below pyproject's {bounds[name]}"
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        if dist.version != version:
            continue
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
                continue
            needed = canonical(requirement.name)
            assert needed in on_the_node(), f"{name} needs {needed}: add it to benchmarks/gpu_wheels.txt"
            if needed in pins:
                assert pins[needed] in requirement.specifier, f"{name} needs {requirement}, pinned {pins[needed]}"
    assert not set(pins) & node_packages() - {"transformers"}, "a wheel the image has (pin only a newer one)"


def test_kb_verify_and_export_run_on_the_nodes_packages_alone(tmp_path: Path) -> None:
    """`kb verify` queuing a Langevin claim for CUDA (the index built from the bundled notes on the way), then
    `kb evidence export`, in one Python that sees only the node's packages: each command imports what it needs
    as it runs."""
    site, python = node_site(tmp_path / "site"), node_python(tmp_path / "bin")
    environment = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{ROOT}", "KB_HOME": str(tmp_path / "home"),
                   "KB_PAPERS": str(ROOT / "papers"), "KB_OFFLINE": "1"}  # fmt: skip
    environment.pop("KB_ANALYZER_MODULES", None)  # the tests' no-op analyzer is not on the node
    claim = "sampling-intermediate-temperatures-langevin#generalization-min-intermediate-t"
    commands = [["verify", claim, "--queue-only", "--device", "cuda"],
                ["evidence", "export", "--all", "-o", str(tmp_path / "bundle")]]  # fmt: skip
    script = (f"from kb.cli import app\nfor args in {commands!r}:\n    try:\n        app(args)\n"
              "    except SystemExit as stop:\n        print('exit', stop.code, flush=True)\n")
    done = subprocess.run([str(python), "-c", script], env=environment, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    output = done.stdout + done.stderr
    assert "No module named" not in output and done.returncode == 0, output
    queued, exported = [line for line in done.stdout.splitlines() if line.startswith("exit ")]
    assert queued == "exit 0" and "queued" in done.stdout.lower(), output
    assert exported in ("exit 0", "exit 1"), output  # nothing ran yet: an empty export may say so and stop


# The wheels measure 25.3 MiB for Python 3.12 (benchmarks/make_gpu_wheels.sh, 2026-11-29); the device tool takes
# 64 MiB in all, so the rest of the tree that travels keeps to half of it.
TREE_BUDGET = 32 * 1024 * 1024


def test_the_tree_a_device_call_sends_leaves_room_for_the_wheels_without_the_corpus() -> None:
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    paths = [ROOT / name for name in tracked.decode().split("\0") if name]
    sent = sum(path.stat().st_size for path in paths
               if path.is_file() and not path.is_relative_to(ROOT / "benchmarks" / "data" / "pdfs"))  # fmt: skip
    assert sent <= TREE_BUDGET, f"{sent / 2**20:.1f} MiB travel besides the corpus: keep data out of the tree"


def test_device_tree_sets_the_corpus_aside_for_a_call_and_puts_it_back(tmp_path: Path) -> None:
    """`lighten` takes the corpus out of git's index and ignores it (the files stay), so `size` no longer
    counts it; `restore` gives back the index and the exclude file exactly; a second `restore` changes
    nothing."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, text=True, check=True).stdout

    def tree(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "benchmarks/device_tree.sh", *args], cwd=tmp_path, capture_output=True,
                              text=True)  # fmt: skip

    git("init", "-q")
    (tmp_path / "benchmarks" / "data" / "pdfs").mkdir(parents=True)
    (tmp_path / "benchmarks" / "device_tree.sh").write_bytes((ROOT / "benchmarks" / "device_tree.sh").read_bytes())
    (tmp_path / "benchmarks" / "data" / "pdfs" / "a.pdf").write_bytes(b"%PDF" + bytes(300_000))
    (tmp_path / "code.py").write_text("print('kept')\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "corpus")
    exclude = tmp_path / ".git" / "info" / "exclude"
    before = exclude.read_text()
    assert "0.3 MiB of 64 MiB" in tree("size").stdout

    assert tree("lighten").returncode == 0
    assert "a.pdf" not in git("ls-files") and "code.py" in git("ls-files")
    assert "??" not in git("status", "--porcelain", "--untracked-files=all")  # not untracked: ignored
    assert (tmp_path / "benchmarks" / "data" / "pdfs" / "a.pdf").is_file()
    assert "0.0 MiB of 64 MiB" in tree("size").stdout

    for _ in range(2):
        assert tree("restore").returncode == 0
        assert git("status", "--porcelain") == "" and exclude.read_text() == before
