"""Pages import only what they show: a page whose content needs neither torch nor LangChain imports neither on
its first render (each takes seconds to import, more under load: the Note page of a CUDA-bound claim took 30 s
cold on a loaded machine when its card asked torch whether CUDA was there). Whether CUDA is there is read from
torch's build where that answers it (a CPU build has none), and from torch itself only where it does not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from analyzers.base import gpu_build_of, torch_gpu_build
from tests.helpers.app_env import APP_MAIN, ROOT, AppEnv

PROBE = """
import json, sys
from analyzers.base import cuda_available, torch_gpu_build
print(json.dumps([torch_gpu_build(), cuda_available(), "torch" in sys.modules]))
"""


def test_a_cpu_build_of_torch_is_told_without_importing_it() -> None:
    """The wheel's own version says which build it is ('2.13.0+cpu'); a CPU build is answered from its version
    file, torch left unimported (the slow test below checks the answer against torch itself)."""
    from importlib.metadata import version

    if not version("torch").endswith("+cpu"):
        pytest.skip("not a CPU build of torch")
    out = subprocess.run([sys.executable, "-c", PROBE], check=True, capture_output=True, text=True, cwd=ROOT)
    assert json.loads(out.stdout) == [False, False, False]


@pytest.mark.parametrize(("text", "gpu"), [
    ("from typing import Optional\ncuda: Optional[str] = None\nhip: Optional[str] = None\n", False),
    ("cuda = None\nhip = '6.2.41133'\n", True),
    ("cuda: Optional[str] = '12.4'\nhip = None\n", True),
    ("cuda = compute()\n", True),  # not a literal: torch is asked
    ("__version__ = '2.9.0'\n", True),  # says nothing of CUDA: torch is asked
    ("cuda = (\n", True),
])
def test_torchs_version_file_says_whether_the_build_has_a_gpu(tmp_path: Path, text: str, gpu: bool) -> None:
    (tmp_path / "version.py").write_text(text, encoding="utf-8")
    assert gpu_build_of(tmp_path / "version.py") is gpu
    assert gpu_build_of(tmp_path / "missing.py") is True
    assert torch_gpu_build() in (True, False)


PAGES = """
import json, sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=120).run()
assert not at.exception, at.exception
for page, query in [("tensions", {}), ("note", {"id": "reading-group-depth-shallow-plms"}), ("ask", {}),
                    ("edit_note", {})]:
    at.query_params.clear()
    at.query_params.update(query)
    at.switch_page(f"views/{page}.py").run()
    assert not at.exception, (page, at.exception)
    assert at.title, page
imported = sorted(m for m in ("torch", "langchain_core", "langchain", "transformers") if m in sys.modules)
from analyzers.base import cuda_available
import torch
print(json.dumps([imported, cuda_available(), torch.cuda.is_available()]))
"""


@pytest.mark.slow  # a new process rendering four pages: ~10 s idle, more under load
@pytest.mark.skipif(torch_gpu_build(), reason="a CUDA build of torch is asked whether CUDA is there")
def test_pages_that_show_stored_evidence_import_neither_torch_nor_langchain(app_env: AppEnv) -> None:
    out = subprocess.run([sys.executable, "-c", PAGES, str(APP_MAIN)], check=True, capture_output=True, text=True,
                         cwd=ROOT).stdout
    imported, ours, torchs = json.loads(out.strip().splitlines()[-1])
    assert imported == [] and ours == torchs
