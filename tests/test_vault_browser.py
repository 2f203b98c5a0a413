"""The vault is the boundary, in a real headless Chromium against ``kb app``: the Note page of a note whose
``source_file`` is a symlink out of the notes folder shows the refusal and none of the file, on any tab.
A screenshot goes to ``test-artifacts/``. Skips, saying why, where Chromium or chromedriver is missing.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.app_env import ROOT
from tests.helpers.browser import Served, browser, idle, serve, shot, wait_text  # noqa: F401
from tests.helpers.vault_cases import SECRET, SECRET_QUOTE, Case, bad_note

pytestmark = pytest.mark.browser

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402


@pytest.fixture
def leaky(tmp_path: Path) -> Iterator[Served]:
    """``kb app`` over the bundled notes and one whose source_file is a symlink to a file outside them."""
    papers, home = tmp_path / "papers", tmp_path / "home"
    shutil.copytree(ROOT / "papers", papers)
    (tmp_path / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    (papers / "sources" / "leak.txt").symlink_to(tmp_path / "secret.txt")
    note = bad_note(Case("leaky", "sources/leak.txt", SECRET_QUOTE))
    (papers / "leaky.md").write_text(note, encoding="utf-8")
    env = {**os.environ, "KB_APP_WORKER": "false", "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    env.pop("KB_DATABASE_URL", None)
    env.pop("KB_CHAT_MODEL", None)
    yield from serve(tmp_path, papers, home, env)


def test_browser_source_tab_shows_nothing_outside_the_vault(
        leaky: Served, browser: WebDriver) -> None:  # noqa: F811
    browser.get(f"{leaky.url}/note?id=leaky")
    wait_text(browser, "Vault case leaky")
    idle(browser)
    tab = browser.find_element(By.XPATH, "//*[@role='tab'][contains(., 'Source text')]")
    tab.click()
    wait_text(browser, "resolves outside the notes folder")
    idle(browser)
    shot(browser, "vault-01-source-tab-refused")
    page = browser.page_source
    assert "4417" not in page and "never leaves this file" not in page  # only in the file outside the vault
    assert "source_file" in page
