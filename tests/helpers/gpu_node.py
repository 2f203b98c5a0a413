"""A GPU node's Python, as far as imports go: the image's packages (``benchmarks/gpu_node_packages.txt``) and
the wheels kb carries there (``benchmarks/gpu_wheels.txt``), nothing else.

``node_site`` links, from this environment's site-packages, the files of exactly those distributions into one
folder; ``python -S`` with that folder on ``PYTHONPATH`` then imports what the node would have and fails on what
it would lack, as the node would: no network, no pip download, no import hook.
"""

from __future__ import annotations

import importlib.metadata as metadata
import re
import sys
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
NODE_PACKAGES = ROOT / "benchmarks" / "gpu_node_packages.txt"
WHEELS = ROOT / "benchmarks" / "gpu_wheels.txt"


def canonical(name: str) -> str:
    """A distribution's name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _lines(path: Path) -> list[str]:
    return [line.split("#")[0].strip() for line in path.read_text().splitlines() if line.split("#")[0].strip()]


def node_packages() -> set[str]:
    """The distributions of the node's image."""
    return {canonical(name) for line in _lines(NODE_PACKAGES) for name in line.split()}


def wheel_pins() -> dict[str, str]:
    """The wheels carried to the node: canonical name -> pinned version."""
    pins = {}
    for line in _lines(WHEELS):
        name, _, version = line.partition("==")
        pins[canonical(name)] = version
    return pins


def on_the_node() -> set[str]:
    """Every distribution importable there."""
    return node_packages() | set(wheel_pins())


def _image_closure() -> set[str]:
    """The image's distributions with what they need as installed here: the image is whole at its own versions
    (httpx2 for this environment's newer huggingface_hub, say), while the wheels go in with --no-deps, so theirs
    are not added."""
    found, todo = set(), list(node_packages())
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        try:
            requires = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            requirement = Requirement(text)
            if not requirement.marker or requirement.marker.evaluate({"extra": ""}):
                todo.append(canonical(requirement.name))
    return found


def node_site(folder: Path) -> Path:
    """A folder of links to the installed files of every distribution on the node that is installed here
    (the image's GPU-only ones are not, and kb does not import them)."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted = _image_closure() | set(wheel_pins())
    for dist in metadata.distributions():
        if canonical(dist.metadata["Name"]) not in wanted:
            continue
        tops = {Path(str(file)).parts[0] for file in dist.files or []}
        for top in tops - {"..", "__pycache__"}:
            source, link = Path(str(dist.locate_file(top))), folder / top
            if source.exists() and not link.exists():
                link.symlink_to(source)
    return folder


def node_python(folder: Path) -> Path:
    """A ``python`` in ``folder`` that starts this Python without its site-packages (``-S``): only
    ``PYTHONPATH`` adds any. A file, so that scripts that take ``$PYTHON`` can run it."""
    folder.mkdir(parents=True, exist_ok=True)
    python = folder / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    python.chmod(0o755)
    return python
