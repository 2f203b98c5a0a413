"""The Runs table in a real headless Chromium at 1400 px (issue 40): every column in view with two metric columns
chosen, and a run's page with the curve it recorded. Screenshots: ``test-artifacts/runs-*.png``; AppTest covers
the columns, sorting and filtering in ``test_app_runs_table.py``."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from kb.core import KnowledgeBase
from kb.queue import store as queue_store
from kb.settings import Settings
from tests.helpers.app_env import ROOT, noop_note
from tests.helpers.browser import (  # noqa: F401 - browser: a fixture
    Served,
    at_width,
    browser,
    idle,
    serve,
    shot,
    sideways_scroll,
    wait_css,
    wait_text,
)

pytestmark = pytest.mark.browser

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402


@pytest.fixture
def runs_app(tmp_path: Path) -> Iterator[tuple[Served, str]]:
    """``kb app`` over the bundled notes and a noop note, with finished runs (one claim's, three more echoing
    values, one recording a 30-step curve); the id of the run with the curve."""
    papers, home = tmp_path / "papers", tmp_path / "home"
    shutil.copytree(ROOT / "papers", papers)
    (papers / "sources" / "noop.txt").write_text("We find that the echoed value is above two.\n", encoding="utf-8")
    (papers / "noop-note.md").write_text(noop_note(), encoding="utf-8")
    kb = KnowledgeBase(Settings(papers=papers, home=home))
    kb.verify(["noop-note"])
    for value, steps in ((1.5, 0), (4.0, 0), (2.5, 30)):
        queue_store.enqueue(kb.engine, "noop", {"value": value, "curve_steps": steps})
    kb.work()
    curve = next(r.id for r in kb.runs() if r.params.get("curve_steps") == 30)
    env = {**os.environ, "KB_APP_WORKER": "false", "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    env.pop("KB_DATABASE_URL", None)
    env.pop("KB_CHAT_MODEL", None)
    for served in serve(tmp_path, papers, home, env):
        yield served, curve


@pytest.mark.slow  # suite time: over 10 s on 2 cores
def test_browser_runs_table_fits_1400_with_metric_columns_and_a_curve(runs_app: tuple[Served, str],
                                                                      browser: WebDriver) -> None:  # noqa: F811
    served, curve = runs_app
    at_width(browser)
    browser.get(f"{served.url}/runs")
    wait_css(browser, '[data-testid="stDataFrame"]')
    idle(browser)
    headers = browser.execute_script(
        "return [...document.querySelectorAll('[data-testid=\"stDataFrame\"] table thead th')].map(h => h.innerText)")
    shot(browser, "runs-01-table-1400")
    assert "value" in headers and "Claim" in headers and "Took (s)" in headers, headers
    assert sideways_scroll(browser) == 0, headers  # every column in view at 1400 px

    browser.get(f"{served.url}/runs?run={curve}")
    try:
        wait_text(browser, "Curve")
        idle(browser)
        wait_css(browser, '[data-testid="stVegaLiteChart"]', seconds=90)
    finally:
        shot(browser, "runs-02-run-curve")
    chart = browser.find_element(By.CSS_SELECTOR, '[data-testid="stVegaLiteChart"]')
    browser.execute_script("arguments[0].scrollIntoView()", chart)
    shot(browser, "runs-03-run-curve-in-view")
