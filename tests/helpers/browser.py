"""A real headless Chromium (Selenium + chromedriver) against ``kb app`` on a loopback port, for the browser
tests: ``serve`` starts the app in its own process (the server is the point), ``browser`` is the driver fixture
(import it into the test module), ``idle``/``wait_text``/``wait_css``/``keyed`` wait for the page, ``shot`` saves
a screenshot to ``test-artifacts/``. Importing this module skips the importing test module, saying why, where
Chromium or chromedriver is missing.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kb.queue import daemon
from tests.helpers.app_env import ROOT
from tests.helpers.cli import kb_command

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
    app = subprocess.Popen(kb_command(papers, home, "app", "--port", str(port)), cwd=ROOT, env=env, stdout=log,
                           stderr=subprocess.STDOUT, start_new_session=True)
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


#: The window width the browser tests hold the app to (issues 30 and 40).
WIDTH = 1400


def at_width(driver: WebDriver, width: int = WIDTH, height: int = 1300) -> None:
    """Make the page itself (not the window around it) ``width`` px wide."""
    driver.set_window_size(width, height)
    inner = driver.execute_script("return window.innerWidth")
    driver.set_window_size(2 * width - inner, height)
    assert driver.execute_script("return window.innerWidth") == width


def sideways_scroll(driver: WebDriver) -> int:
    """How far the page's first data grid could scroll sideways (0: every column is in view)."""
    return int(driver.execute_script(
        "const s = document.querySelector('[data-testid=\"stDataFrame\"] .dvn-scroller');"
        "return s.scrollWidth - s.clientWidth;"))
