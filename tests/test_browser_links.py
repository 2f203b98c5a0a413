"""Links between notes and the citation download in a real headless Chromium at 1400 px, against ``kb app`` on
a loopback port: a note's body links to another note and to a claim card, the target lists its backlinks,
and the Library's BibTeX button downloads the file ``kb export`` writes. Screenshots go to
``test-artifacts/links-*.png``. AppTest covers the same in ``test_app_links.py`` and ``test_app_citations.py``.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.app_env import ROOT, noop_note
from tests.helpers.browser import (  # noqa: F401 - browser: a fixture
    Served,
    browser,
    idle,
    keyed,
    serve,
    shot,
    wait_css,
    wait_text,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402

TARGET = "siji-2026-curse-of-depth-in-plms"
BODY = (f"Builds on [[{TARGET}]]; its claim [[{TARGET}#late-layers-refine|that late layers only refine]] is the "
        "one to check. A typo stays visible: [[siji-2026]].\n")


@pytest.fixture
def linked_app(tmp_path: Path) -> Iterator[Served]:
    """``kb app`` over the bundled notes and a note whose body links to the depth paper and one of its claims."""
    papers, home = tmp_path / "papers", tmp_path / "home"
    shutil.copytree(ROOT / "papers", papers)
    (papers / "sources" / "noop.txt").write_text("the echoed value is above two\n", encoding="utf-8")
    (papers / "linking.md").write_text(noop_note(title="A note that links", body=BODY), encoding="utf-8")
    env = {**os.environ, "KB_APP_WORKER": "false", "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    env.pop("KB_DATABASE_URL", None)
    env.pop("KB_CHAT_MODEL", None)
    yield from serve(tmp_path, papers, home, env)


def at_width(driver: WebDriver, width: int = 1400, height: int = 1100) -> None:
    driver.set_window_size(width, height)
    inner = driver.execute_script("return window.innerWidth")
    driver.set_window_size(2 * width - inner, height)


def test_browser_note_links_backlinks_and_citation_download(linked_app: Served, browser: WebDriver,  # noqa: F811
                                                            tmp_path: Path) -> None:
    at_width(browser)
    browser.get(f"{linked_app.url}/note?id=linking")
    wait_text(browser, "A note that links")
    idle(browser)
    next(tab for tab in browser.find_elements(By.XPATH, "//*[@role='tab']") if tab.text.strip() == "Note").click()
    link = wait_css(browser, f"a[href*='note?id={TARGET}&claim=late-layers-refine']")
    assert "that late layers only refine" in link.text
    to_note = browser.find_element(By.CSS_SELECTOR, f"a[href$='note?id={TARGET}']")
    assert to_note.text.endswith("From Words to Amino Acids: Does the Curse of Depth Persist?")
    assert "[[siji-2026]] (unknown note)" in browser.find_element(By.TAG_NAME, "body").text
    shot(browser, "links-01-note-body")

    browser.get(link.get_attribute("href"))  # where the claim link leads: the target note, the card marked
    wait_css(browser, ".st-key-note_backlinks")
    idle(browser)
    backlinks = keyed(browser, "note_backlinks", "a")
    assert backlinks.text.endswith("A note that links (on late-layers-refine)")
    card = browser.find_element(By.CSS_SELECTOR, ".st-key-claim_late-layers-refine")
    assert "the claim the link named" in card.text
    shot(browser, "links-02-target-backlinks")

    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    browser.get(f"{linked_app.url}/library")
    button = keyed(browser, "lib_export_bibtex", "button")
    idle(browser)
    shot(browser, "links-03-library-download")
    button.click()
    deadline = time.monotonic() + 60
    while not (downloads / "kb-citations.bib").is_file() and time.monotonic() < deadline:
        time.sleep(0.2)
    text = (downloads / "kb-citations.bib").read_text(encoding="utf-8")
    assert text.count("\n@") + text.startswith("@") == len(list(linked_app.papers.glob("*.md")))
    assert "@misc{siji2026words,\n" in text  # the bundled paper's key: the analysis note took 'siji2026' first
