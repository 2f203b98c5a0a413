"""The app at a glance in a real headless Chromium at 1400 px (issue 30), against ``kb app`` on a loopback port.

The Library fits the window (no sideways scroll) with whole titles; a claim's card says its scale the same
way on both sides, shows its plot at a readable size and the note's shared caveats once; and, while
``kb demo`` runs quick claims, the Library shows their verdicts arriving without a reload. Screenshots go to
``test-artifacts/glance-*.png``. AppTest covers the same rules in ``test_app_glance.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.app_env import ROOT
from tests.helpers.browser import (  # noqa: F401 - browser: a fixture
    ARTIFACTS,
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
from tests.helpers.cli import kb_command, run_kb_process
from tests.helpers.glance_notes import GLANCE_NOTE, SHARED, analyzer_env, quick_note

pytestmark = pytest.mark.browser

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402

QUICK_CLAIMS, QUICK_SECONDS = 3, 4.0  # each run outlasts the app's 3 s poll, so each verdict lands on its own


def app_env(worker: bool) -> dict[str, str]:
    env = {**analyzer_env(), "KB_APP_WORKER": "true" if worker else "false",
           "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    env.pop("KB_DATABASE_URL", None)
    env.pop("KB_CHAT_MODEL", None)
    return env


def library_rows(driver: WebDriver) -> dict[str, list[str]]:
    """The Library table as the grid holds it (its accessible copy of every cell): note cell -> the row's cells."""
    rows = driver.execute_script(
        "const t = document.querySelector('[data-testid=\"stDataFrame\"] table');"
        "if (!t) return [];"
        "return [...t.querySelectorAll('tbody tr')].map(r => [...r.querySelectorAll('td')].map(c => c.innerText));")
    return {cells[0]: cells for cells in rows if cells}


@pytest.fixture
def glance_app(tmp_path: Path) -> Iterator[Served]:
    """``kb app`` over the bundled notes and GLANCE_NOTE, its claims verified (through the real CLI) first."""
    papers, home = tmp_path / "papers", tmp_path / "home"
    shutil.copytree(ROOT / "papers", papers)
    (papers / "glance.md").write_text(GLANCE_NOTE, encoding="utf-8")
    env = app_env(worker=False)
    done = run_kb_process(papers, home, "verify", "glance", timeout=180, env=env, cwd=ROOT)  # its own analyzers
    assert done.returncode == 0, done.stdout + done.stderr
    yield from serve(tmp_path, papers, home, env)


@pytest.mark.slow  # suite time: over 10 s on 2 cores
def test_browser_library_at_1400_and_a_claim_card(glance_app: Served, browser: WebDriver) -> None:  # noqa: F811
    at_width(browser)
    browser.get(f"{glance_app.url}/library")
    wait_css(browser, '[data-testid="stDataFrame"]')
    idle(browser)
    assert sideways_scroll(browser) == 0  # every column in view at 1400 px
    rows = library_rows(browser)
    headers = browser.execute_script(
        "return [...document.querySelectorAll('[data-testid=\"stDataFrame\"] table thead th')].map(h => h.innerText)")
    assert headers[:3] == ["Note", "Claims", "Year"] and "Decision" in headers and "Tags" in headers, headers
    words = "From Words to Amino Acids: Does the Curse of Depth Persist?"
    same_title = sorted(note for note in rows if note.startswith(words))
    assert same_title == [f"{words} — siji-2026-analysis-note-arxiv-2502-00001",
                          f"{words} — siji-2026-curse-of-depth-in-plms"]  # whole, and told apart
    glance = rows["A note whose claims share their caveats — glance"]
    assert glance[1] == "4 claims · 3 supported · 1 not runnable"
    shot(browser, "glance-01-library-1400")

    browser.get(f"{glance_app.url}/note?id=glance")
    wait_css(browser, ".st-key-claim_big-model")
    image = wait_css(browser, ".st-key-claim_first img")
    idle(browser)
    card = browser.find_element(By.CSS_SELECTOR, ".st-key-claim_first")
    natural, shown = browser.execute_script("return [arguments[0].naturalWidth, arguments[0].clientWidth]", image)
    assert natural == 900 and shown >= min(natural, 0.9 * (card.size["width"] - 40)), (natural, shown, card.size)
    # Said once, beside the evidence's scale in one labelled field; never "not stated".
    big = browser.find_element(By.CSS_SELECTOR, ".st-key-claim_big-model").text
    assert big.count("650M parameters · UniRef50") == 1 and "not stated" not in big, big  # in its Scale field
    captions = [c.text for c in browser.find_elements(By.CSS_SELECTOR, '[data-testid="stCaptionContainer"]')]
    assert sum(SHARED[0] in c for c in captions) == 1, captions  # the shared caveats, once for the note
    caveats = browser.find_element(By.CSS_SELECTOR, ".st-key-note_caveats")
    browser.execute_script("arguments[0].scrollIntoView()", caveats)
    shot(browser, "glance-02-note-shared-caveats")
    ARTIFACTS.mkdir(exist_ok=True)
    card.screenshot(str(ARTIFACTS / "glance-03-claim-card-plot.png"))
    browser.find_element(By.CSS_SELECTOR, ".st-key-claim_big-model").screenshot(
        str(ARTIFACTS / "glance-04-claim-card-scale.png"))


@pytest.fixture
def demo_app(tmp_path: Path) -> Iterator[Served]:
    """``kb app`` over a note of quick claims, none verified yet; the app starts no worker (the demo runs them)."""
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    (papers / "quick.md").write_text(quick_note(QUICK_CLAIMS, QUICK_SECONDS), encoding="utf-8")
    yield from serve(tmp_path, papers, home, app_env(worker=False))


@pytest.mark.slow  # suite time: over 10 s on 2 cores
def test_browser_runs_arrive_while_the_demo_runs(demo_app: Served, browser: WebDriver) -> None:  # noqa: F811
    at_width(browser)
    browser.get(f"{demo_app.url}/library")
    wait_css(browser, '[data-testid="stDataFrame"]')
    idle(browser)
    row = "Quick claims, verified while you watch — quick"
    assert library_rows(browser)[row][1] == f"{QUICK_CLAIMS} claims · {QUICK_CLAIMS} not run"

    log = (demo_app.home.parent / "demo.log").open("w")
    demo = subprocess.Popen(kb_command(demo_app.papers, demo_app.home, "demo"), cwd=ROOT, env=app_env(worker=False),
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        seen: list[str] = []  # the row's claims cell, each time it changed, never reloading the page
        running_seen = False
        final = f"{QUICK_CLAIMS} claims · {QUICK_CLAIMS} supported"
        deadline = time.monotonic() + 180
        while not seen or seen[-1] != final:
            assert time.monotonic() < deadline, (seen, (demo_app.home.parent / "demo.log").read_text())
            cells = library_rows(browser).get(row)
            if cells and (not seen or cells[1] != seen[-1]):
                seen.append(cells[1])
                if len(seen) == 2:
                    shot(browser, "glance-05-demo-first-verdict")
            sidebar = browser.find_element(By.CSS_SELECTOR, '[data-testid="stSidebar"]').text
            running_seen = running_seen or "1 running" in sidebar
            time.sleep(0.3)
        assert demo.wait(timeout=60) == 0, (demo_app.home.parent / "demo.log").read_text()
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, 15)
            demo.wait(timeout=20)
        log.close()
    idle(browser)
    shot(browser, "glance-06-demo-done")
    assert running_seen  # the sidebar showed the demo's runs in flight
    assert seen[0] == f"{QUICK_CLAIMS} claims · {QUICK_CLAIMS} not run"
    # Verdicts one run at a time: a cell with some claims supported and the rest not yet run.
    assert any("supported" in s and "not run" in s for s in seen[1:-1]), seen
