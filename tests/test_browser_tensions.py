"""The Tensions page end to end in headless Chromium against ``kb app`` over the bundled notes: the bundled depth
tension with both quotes, settled from the page by one click (the click queues the deciding run, which the test
runs: not runnable without a GPU and UniRef50, and the tension then says so), and the note page's view of it.
Screenshots go to ``test-artifacts/`` (``tensions.png``, ``tensions-settled.png``, ``note-tension.png``)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from kb.core import KnowledgeBase
from kb.settings import Settings
from tests.helpers.app_env import ROOT
from tests.helpers.browser import (  # noqa: F401 - browser: a fixture
    Served,
    WebDriver,
    browser,
    idle,
    keyed,
    serve,
    shot,
    wait_text,
)

pytestmark = pytest.mark.browser


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """``kb app`` over a copy of the bundled notes, starting no worker: the test runs the queue itself."""
    papers, home = tmp_path / "papers", tmp_path / "home"
    shutil.copytree(ROOT / "papers", papers)
    env = {**os.environ, "KB_APP_WORKER": "false", "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    env.pop("KB_DATABASE_URL", None)
    env.pop("KB_CHAT_MODEL", None)
    yield from serve(tmp_path, papers, home, env)


@pytest.mark.slow  # suite time: over 10 s on 2 cores
def test_browser_tensions_page_settles_the_bundled_tension(served: Served,
                                                           browser: WebDriver) -> None:  # noqa: F811
    browser.get(f"{served.url}/tensions")
    wait_text(browser, "deeper is worse past 12 layers")
    idle(browser)
    wait_text(browser, "PLM (ESM-style) | 24-36")
    wait_text(browser, "open: no current evidence yet at 'paper'")
    assert shot(browser, "tensions").stat().st_size > 10_000
    keyed(browser, "settle_tension", "button").click()
    wait_text(browser, "to settle t-")
    # The deciding run is depth.sweep at the paper preset: not runnable here, and the tension then says why.
    kb = KnowledgeBase(Settings(papers=served.papers, home=served.home))
    assert [r.claim_key for r in kb.runs()] == ["siji-2026-analysis-note-arxiv-2502-00001#optimal-depth-24-36"]
    assert kb.work() == {"succeeded": 1}
    browser.get(f"{served.url}/tensions")
    wait_text(browser, "open: the deciding run is not runnable here")
    idle(browser)
    shot(browser, "tensions-settled")
    browser.get(f"{served.url}/note?id=reading-group-depth-shallow-plms")
    badge = wait_text(browser, "In tension with siji-2026-analysis-note-arxiv-2502-00001#optimal-depth-24-36")
    idle(browser)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", badge)
    shot(browser, "note-tension")
