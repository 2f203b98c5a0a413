"""End to end in a real headless Chromium against ``kb app`` on a loopback port (Selenium + chromedriver).

Opens the library, opens a note by clicking its row, adds a note through the form, re-verifies a
claim and waits for the verdict that the app's background worker produces. A screenshot of each
page goes to ``test-artifacts/``. Skips, saying why, where Chromium or chromedriver is missing.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kb.core import KnowledgeBase
from kb.queue import daemon
from kb.settings import Settings
from tests.test_app import ROOT, SOURCE_TEXT, noop_note

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ARTIFACTS = ROOT / "test-artifacts"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1500,1300", "--disable-dev-shm-usage"]

if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
    pytest.skip(f"needs Debian's chromium and chromium-driver ({CHROMIUM}, {CHROMEDRIVER} not found): "
                "apt-get install -y chromium chromium-driver", allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (the dev extras)")

from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.remote.webelement import WebElement  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    """A running ``kb app``."""

    url: str
    papers: Path
    home: Path
    process: subprocess.Popen[bytes]


def serve(tmp_path: Path, papers: Path, home: Path, env: dict[str, str]) -> Iterator[Served]:
    """Run ``kb app`` on a free port over ``papers`` and ``home`` until the generator is closed."""
    port = free_port()
    log = (tmp_path / "app.log").open("wb")
    app = subprocess.Popen([sys.executable, "-m", "kb.cli", "app", "--port", str(port), "--papers", str(papers),
                            "--home", str(home)], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert app.poll() is None, (tmp_path / "app.log").read_text()
                time.sleep(0.2)
        yield Served(f"http://127.0.0.1:{port}", papers, home, app)
    finally:
        if app.poll() is None:
            os.killpg(app.pid, 15)
            app.wait(timeout=20)
        log.close()
        daemon.stop_worker(home)


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


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [*FLAGS, f"--user-data-dir={tempfile.mkdtemp(prefix='kb-chromium-')}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def idle(driver: WebDriver, seconds: float = 60) -> None:
    """Wait until the script run is over (Streamlit's 'running' widget gone for half a second)."""
    time.sleep(0.4)
    deadline = time.monotonic() + seconds
    quiet_since = None
    while time.monotonic() < deadline:
        if driver.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]'):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > 0.5:
            return
        time.sleep(0.1)
    raise AssertionError("the app kept running")


def wait_text(driver: WebDriver, text: str, seconds: float = 60) -> WebElement:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = driver.find_elements(By.XPATH, f"//*[contains(normalize-space(text()), {text!r})]")
        if found:
            return found[0]
        time.sleep(0.2)
    raise AssertionError(f"{text!r} did not appear on {driver.current_url}")


def wait_css(driver: WebDriver, css: str, seconds: float = 60) -> WebElement:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = driver.find_elements(By.CSS_SELECTOR, css)
        if found:
            return found[0]
        time.sleep(0.2)
    raise AssertionError(f"{css!r} did not appear on {driver.current_url}")


def shot(driver: WebDriver, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return path


def keyed(driver: WebDriver, key: str, css: str) -> WebElement:
    """The element inside the container Streamlit marks with a widget's key (class st-key-<key>)."""
    return wait_css(driver, f".st-key-{key} {css}")


def test_browser_library_note_add_verify(served: Served, browser: WebDriver) -> None:
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
    wait_text(browser, "Regenerated (observed)", seconds=120)
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
