"""Opening a shared note makes the browser fetch nothing the note names: in a real headless Chromium against
``kb app``, the Note and Tensions pages of two notes whose every field holds Markdown images, links, raw HTML
and bare URLs pointing at a loopback server make no request to it, and the page has no image or link to it.
Skips, saying why, where Chromium or chromedriver is missing."""

from __future__ import annotations

import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kb.evidence.tensions import tension_id
from tests.helpers.app_env import ROOT
from tests.helpers.browser import Served, browser, idle, serve, shot, wait_text  # noqa: F401
from tests.helpers.hostile_note import hostile_note

pytestmark = pytest.mark.browser

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402


class _Tracker(http.server.BaseHTTPRequestHandler):
    """Counts every request it is sent: the note's URLs point here."""

    seen: list[str] = []

    def do_GET(self) -> None:
        _Tracker.seen.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
        return


@pytest.fixture
def tracker() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Tracker)
    _Tracker.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture
def hostile(tmp_path: Path, tracker: str) -> Iterator[Served]:
    papers, home = tmp_path / "papers", tmp_path / "home"
    shutil.copytree(ROOT / "papers", papers)
    for name, op, value in (("hostile-a", ">", 2), ("hostile-b", "<", 1)):
        (papers / f"{name}.md").write_text(hostile_note(f"t:{name}", op, value).replace("127.0.0.1:9", tracker),
                                           encoding="utf-8")
    env = {**os.environ, "KB_APP_WORKER": "false", "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    env.pop("KB_DATABASE_URL", None)
    env.pop("KB_CHAT_MODEL", None)
    yield from serve(tmp_path, papers, home, env)


def test_browser_fetches_nothing_a_note_names(hostile: Served, browser: WebDriver, tracker: str) -> None:  # noqa: F811
    tension = tension_id("hostile-a#c", "hostile-b#c")
    for page, shown in (("note?id=hostile-a", "t:hostile-a"), ("note?id=hostile-b", "t:hostile-b"),
                        (f"tensions?id={tension}", tension)):
        browser.get(f"{hostile.url}/{page}")
        wait_text(browser, shown)
        idle(browser)
        for tab in browser.find_elements(By.XPATH, "//*[@role='tab']"):  # every tab of the Note page
            tab.click()
            idle(browser)
        shot(browser, f"user-text-{page.split('?')[0]}")
        assert not [e for e in browser.find_elements(By.TAG_NAME, "img") if tracker in (e.get_attribute("src") or "")]
        assert not [e for e in browser.find_elements(By.TAG_NAME, "a") if tracker in (e.get_attribute("href") or "")]
        assert not browser.find_elements(By.XPATH, "//script[contains(., 'alert(1)')]")
        assert "www.track.example" in browser.page_source  # the notes' text is there, shown as text
        assert ":material/verified: :smile: :streamlit:" in browser.find_element(By.TAG_NAME, "body").text
        assert not browser.find_elements(By.CSS_SELECTOR, "[aria-label='verified icon']")
        assert "\U0001f604" not in browser.page_source  # :smile:'s emoji
    assert _Tracker.seen == [], _Tracker.seen
