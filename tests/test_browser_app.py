"""End to end in a real headless Chromium against ``kb app`` on a loopback port (Selenium + chromedriver).

Opens the library, opens a note by clicking its row, adds a note through the form, re-verifies a
claim and waits for the verdict that the app's background worker produces. A screenshot of each
page goes to ``test-artifacts/``. Skips, saying why, where Chromium or chromedriver is missing.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kb.core import KnowledgeBase
from kb.queue import daemon
from kb.settings import Settings
from tests.helpers.app_env import ROOT, SOURCE_TEXT, noop_note
from tests.helpers.browser import (  # noqa: F401 - browser: a fixture
    Served,
    WebDriver,
    browser,
    idle,
    keyed,
    serve,
    shot,
    wait_css,
    wait_text,
)

pytestmark = pytest.mark.browser

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """``kb app`` serving a copy of the bundled notes plus a noop note."""
    papers, home = tmp_path / "papers", tmp_path / "home"
    shutil.copytree(ROOT / "papers", papers)
    (papers / "sources" / "noop.txt").write_text(SOURCE_TEXT, encoding="utf-8")
    (papers / "noop-note.md").write_text(noop_note(), encoding="utf-8")
    env = {**os.environ, "KB_APP_WORKER": "true", "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    env.pop("KB_DATABASE_URL", None)
    env.pop("KB_CHAT_MODEL", None)
    yield from serve(tmp_path, papers, home, env)


@pytest.mark.slow  # suite time: over 10 s on 2 cores
def test_browser_library_note_add_verify(served: Served, browser: WebDriver) -> None:  # noqa: F811
    url, papers = served.url, served.papers
    browser.get(url)
    wait_text(browser, "Library")
    grid = wait_css(browser, '[data-testid="stDataFrame"]')
    idle(browser)
    shot(browser, "01-library")

    # Open the first row (noop-note, ids sorted) by clicking its row marker in the grid.
    rect = browser.execute_script("return arguments[0].getBoundingClientRect().toJSON()", grid)
    browser.execute_script(
        "const e = document.elementFromPoint(arguments[0], arguments[1]);"
        "for (const t of ['pointerdown','mousedown','pointerup','mouseup','click'])"
        " e.dispatchEvent(new MouseEvent(t, {bubbles: true, clientX: arguments[0], clientY: arguments[1]}));",
        rect["x"] + 18, rect["y"] + 36 + 17)
    wait_text(browser, "Noop test note")
    wait_css(browser, ".st-key-claim_value-above-two")  # the claims render last
    idle(browser)
    assert "/note?id=noop-note" in browser.current_url
    shot(browser, "02-note")

    # Re-verify the whole note; the background worker runs it and the verdict lands without a reload.
    keyed(browser, "reverify_note", "button").click()
    wait_text(browser, "· expects", seconds=120)  # the verdict's line: observed value against the expectation
    wait_text(browser, "supported")
    idle(browser)
    shot(browser, "03-note-verified")

    # Add a note through the form.
    browser.get(f"{url}/edit")
    wait_text(browser, "Add a note")
    wait_css(browser, ".st-key-edit_save")
    idle(browser)
    title = keyed(browser, "fm_title", "input")
    title.send_keys("Browser added paper", Keys.TAB)
    idle(browser)
    paper_id = keyed(browser, "fm_paper_id", "input")
    paper_id.send_keys("test:browser", Keys.TAB)
    idle(browser)
    quality = keyed(browser, "fm_quality_score", "input")
    quality.send_keys("9", Keys.TAB)
    wait_text(browser, "less than or equal to 5")  # the schema's message, next to the field
    idle(browser)
    shot(browser, "04-add-note-invalid")
    quality.send_keys(Keys.BACKSPACE, "4", Keys.TAB)
    idle(browser)
    assert not browser.find_elements(By.XPATH, "//*[contains(text(), 'less than or equal to 5')]")
    body = keyed(browser, "fm_body", "textarea")
    body.send_keys("## Summary\n\nWritten in a real browser.")
    keyed(browser, "fm_venue", "input").click()  # blur the text area: it commits its value
    idle(browser)
    shot(browser, "05-add-note")
    keyed(browser, "edit_save", "button").click()
    wait_text(browser, "Created")
    wait_text(browser, "This note makes no claims yet")
    idle(browser)
    created = papers / "browser-added-paper.md"
    text = created.read_text(encoding="utf-8")
    assert "Written in a real browser." in text and "quality_score: 4" in text
    shot(browser, "06-note-created")

    # Each page is shot once its last part is on screen.
    for name, path, marker in (("07-runs", "runs", "Select a run"), ("08-compare", "compare", "per-layer evidence"),
                               ("09-ask", "ask", "Everything else in kb works without a model")):
        browser.get(f"{url}/{path}")
        wait_text(browser, marker)
        idle(browser)
        shot(browser, name)

    # The app goes away (server stopped); its worker stays and still runs what is queued.
    os.killpg(served.process.pid, 15)
    served.process.wait(timeout=20)
    assert daemon.find_worker(served.home) is not None
    kb = KnowledgeBase(Settings(papers=papers, home=served.home))
    (queued,), _ = kb.verify(["noop-note#value-above-two"])
    deadline = time.monotonic() + 60
    while kb.get_run(queued.id).status.value != "succeeded":
        assert time.monotonic() < deadline, "the worker did not run a run queued after the app stopped"
        time.sleep(0.3)
