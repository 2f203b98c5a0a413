"""Verdicts at a glance and adding a paper, in a real headless Chromium against a real ``kb app``.

(a) Add a paper from a PDF (made here with fpdf2) on the Add page, draft claims with a scripted chat model
standing in for the LLM (``tests/fixtures/fake_chat``), accept one, create the note and see it.
(b) Read the Library header's counts at ``/library``, a proxy claim's badge (its own colour), a run's
verdict on the Runs page, and a claim's plot full width. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from kb.core import KnowledgeBase
from kb.settings import Settings
from tests.helpers.app_env import PROXY_NOTE, ROOT, SOURCE_TEXT, noop_note
from tests.helpers.browser import Served, browser, idle, keyed, serve, shot, wait_css, wait_text  # noqa: F401

pytestmark = pytest.mark.browser

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402

FAKE_CHAT = ROOT / "tests" / "fixtures" / "fake_chat"
PAPER_TITLE = "Depth Budgets of Protein Language Models"
QUOTE = "The optimal depth is at least 24 layers for models with 650M parameters."
DRAFT = {"id": "optimal-depth-24", "statement": "At 650M parameters the optimal depth is at least 24 layers.",
         "kind": "quantitative", "quote": QUOTE, "analyzer": {"name": "noop", "params": {"value": 30}},
         "expect": {"metric": "value", "op": ">=", "value": 24}, "scale": {"parameters": 650000000}}


def app_env() -> dict[str, str]:
    env = {**os.environ, "KB_APP_WORKER": "false", "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    env.pop("KB_DATABASE_URL", None)
    env.pop("KB_CHAT_MODEL", None)
    return env


@pytest.fixture
def verified_app(tmp_path: Path) -> Iterator[Served]:
    """``kb app`` over the bundled notes, the noop note and a note verified into proxies, a run that could not
    execute, a supported claim and one without an analyzer (runs made before the app starts)."""
    papers, home = tmp_path / "papers", tmp_path / "home"
    shutil.copytree(ROOT / "papers", papers)
    (papers / "sources" / "noop.txt").write_text(SOURCE_TEXT, encoding="utf-8")
    (papers / "noop-note.md").write_text(noop_note(), encoding="utf-8")
    # The leaning-for claim draws a plot of its metric ('value'), to be shown full width.
    (papers / "proxies.md").write_text(PROXY_NOTE.replace("params: {value: 3}}", "params: {value: 3, plot: true}}", 1),
                                       encoding="utf-8")  # the first claim (leans-for) plots its metric
    kb = KnowledgeBase(Settings(papers=papers, home=home))
    kb.index()
    queued, _ = kb.verify(["proxies"])
    assert len(queued) == 4 and kb.work() == {"succeeded": 4}
    yield from serve(tmp_path, papers, home, app_env())


def header_counts(driver: WebDriver) -> dict[str, str]:
    """The Library header as a person reads it: each metric's label -> its value."""
    counts = {}
    for metric in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stMetric"]'):
        label = metric.find_element(By.CSS_SELECTOR, '[data-testid="stMetricLabel"]').text.strip()
        # An icon renders as the text of its ligature ('check_circle Supported'): the words follow it.
        name = re.sub(r"^[a-z_]+\s+", "", label)
        counts[name] = metric.find_element(By.CSS_SELECTOR, '[data-testid="stMetricValue"]').text.strip()
    return counts


def badge(driver: WebDriver, text: str) -> tuple[str, str]:
    """The colours (text, background) of the first badge that reads ``text``."""
    element = wait_text(driver, text)
    colours = driver.execute_script(
        "const s = getComputedStyle(arguments[0].closest('span[class]') || arguments[0]);"
        "return [s.color, s.backgroundColor];", element)
    return colours[0], colours[1]


@pytest.mark.slow  # suite time: over 10 s on 2 cores
def test_browser_verdicts_at_a_glance(verified_app: Served, browser: WebDriver) -> None:  # noqa: F811
    url = verified_app.url
    browser.get(url)  # the root opens the Library at its own address
    wait_text(browser, "Library")
    wait_css(browser, '[data-testid="stDataFrame"]')
    idle(browser)
    assert browser.current_url.rstrip("/").endswith("/library"), browser.current_url
    browser.get(f"{url}/library")  # and that address is a page, not 'page not found'
    wait_css(browser, '[data-testid="stDataFrame"]')
    idle(browser)
    assert "not found" not in browser.find_element(By.TAG_NAME, "body").text.lower()
    counts = header_counts(browser)
    shot(browser, "10-library-header")
    assert "Supported" in counts and "Consistent (proxy)" in counts, counts
    kb = KnowledgeBase(Settings(papers=verified_app.papers, home=verified_app.home))
    claims = [c for p in kb.list_papers() for c in kb.claims(p.id)]
    assert counts["Claims"] == str(len(claims))
    assert counts["Supported"] == "1" and counts["Consistent (proxy)"] == "1" and counts["At odds (proxy)"] == "1"
    assert counts["Not runnable"] == "1" and counts["Refuted"] == "0" and counts["Inconclusive"] == "0"
    assert counts["No analyzer"] == str(sum(c.analyzer is None for c in claims))
    assert counts["Not run"] == str(sum(c.analyzer is not None and not kb.evidence(c.key) for c in claims))
    assert {"Error", "Stale", "Ungrounded"} <= set(counts)

    # A proxy's badge: its own words and its own colour, apart from the other proxy's and from supported.
    browser.get(f"{url}/note?id=proxies")
    wait_text(browser, "Claims about big models")
    wait_css(browser, ".st-key-claim_unbound")
    idle(browser)
    leaning_for, leaning_against = badge(browser, "consistent (proxy)"), badge(browser, "at odds (proxy)")
    supported = badge(browser, "supported")
    assert len({leaning_for, leaning_against, supported}) == 3, (leaning_for, leaning_against, supported)
    shot(browser, "11-note-proxy-badges")

    # The claim's own plot, full width: a dialog nearly as wide as the window.
    keyed(browser, "art_proxies_leans-for_plot_0_wide", "button").click()
    dialog = wait_css(browser, '[role="dialog"]')
    image = wait_css(browser, '[role="dialog"] img')
    idle(browser)
    window = browser.execute_script("return window.innerWidth")
    assert dialog.size["width"] > 0.8 * window and image.size["width"] > 0.7 * window, (dialog.size, window)
    shot(browser, "13-plot-full-width")

    # A run's verdict on the Runs page; the run that could not execute says so, never 'succeeded'.
    runs = {r.claim_key: r for r in kb.runs()}
    browser.get(f"{url}/runs?run={runs['proxies#leans-against'].id}")
    wait_css(browser, ".st-key-run_details")
    idle(browser)
    details = browser.find_element(By.CSS_SELECTOR, ".st-key-run_details").text
    assert "at odds (proxy)" in details and "succeeded" in details
    shot(browser, "12-runs-verdict")
    browser.get(f"{url}/runs?run={runs['proxies#needs-gpu'].id}")
    wait_css(browser, ".st-key-run_details")
    idle(browser)
    details = browser.find_element(By.CSS_SELECTOR, ".st-key-run_details").text
    assert "not runnable" in details and "Not runnable here: needs a GPU" in details
    assert "succeeded" not in details
    shot(browser, "14-runs-not-runnable")


def make_pdf(path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.set_title(PAPER_TITLE)
    pdf.set_author("Ada Lovelace and Alan Turing")
    pdf.add_page()
    pdf.multi_cell(0, 6, f"{PAPER_TITLE}\n\nAbstract. We train masked protein language models of many depths. "
                         f"{QUOTE} Deeper models waste their later layers.")
    pdf.add_page()
    pdf.multi_cell(0, 6, "Results. Table 2 lists the perplexity of every depth.")
    pdf.output(str(path))


@pytest.fixture
def drafting_app(tmp_path: Path) -> Iterator[Served]:
    """``kb app`` over the bundled notes whose chat model is scripted to draft one claim from the PDF."""
    papers, home = tmp_path / "papers", tmp_path / "home"
    shutil.copytree(ROOT / "papers", papers)
    script = tmp_path / "chat.json"
    script.write_text(json.dumps([{"content": "", "tool_calls": [
        {"name": "DraftedClaims", "args": {"claims": [DRAFT]}, "id": "d1", "type": "tool_call"}]}]),
        encoding="utf-8")
    env = {**app_env(), "KB_TEST_CHAT_SCRIPT": str(script),
           "PYTHONPATH": os.pathsep.join(p for p in (str(FAKE_CHAT), str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    yield from serve(tmp_path, papers, home, env)


# slow (suite time): `kb add` of a PDF is tested through the CLI (test_paper_add.py), the drafter on real PDFs
# (test_drafter_corpus.py) and the browser's add form in test_browser_app.py
@pytest.mark.slow
def test_browser_add_paper_from_pdf_with_drafted_claims(drafting_app: Served, browser: WebDriver,  # noqa: F811
                                                        tmp_path: Path) -> None:
    url, papers = drafting_app.url, drafting_app.papers
    pdf = tmp_path / "depth-budgets.pdf"
    make_pdf(pdf)
    browser.get(f"{url}/edit")
    wait_text(browser, "Add a note")
    wait_css(browser, ".st-key-edit_save")
    idle(browser)
    upload = wait_css(browser, ".st-key-add_upload input[type=file]")
    upload.send_keys(str(pdf))
    wait_text(browser, "Filled in from the source")
    idle(browser)
    assert keyed(browser, "fm_title", "input").get_attribute("value") == PAPER_TITLE
    shot(browser, "20-add-from-pdf")

    expander = wait_text(browser, "Draft claims from the paper's text")
    expander.click()
    idle(browser)
    keyed(browser, "draft_go", "button").click()
    wait_text(browser, "1 claim(s) drafted by the chat-model agent")
    idle(browser)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})",
                           keyed(browser, "draft_accept", "button"))
    shot(browser, "21-drafted-claims")
    keyed(browser, "draft_accept", "button").click()
    wait_text(browser, "Added 1 drafted claim(s)")
    idle(browser)
    save = keyed(browser, "edit_save", "button")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", save)
    shot(browser, "21b-claim-added")
    save.click()
    idle(browser)
    shot(browser, "21c-after-save")
    wait_text(browser, "Created")
    wait_text(browser, PAPER_TITLE)
    wait_css(browser, ".st-key-claim_optimal-depth-24")
    idle(browser)
    shot(browser, "22-note-from-pdf")
    (created,) = [p for p in papers.glob("*.md") if PAPER_TITLE in p.read_text(encoding="utf-8")]
    text = created.read_text(encoding="utf-8")
    assert 'id: "optimal-depth-24"' in text and QUOTE in text and "source_file:" in text
    assert "name: \"noop\"" in text and "value: 30" in text  # the drafted binding, parameters and all
    body = browser.find_element(By.TAG_NAME, "body").text
    assert "At 650M parameters the optimal depth is at least 24 layers." in body
    assert "quote found in source" in body  # the stored PDF text backs the drafted quote
