"""A new user's first hour, through the real CLI: the demo answers quick claims first, says what it will run
and how long each run should take, and every running run reports at least every ``progress_interval``;
``.ci/setup`` says what it installs and what to run next; ``kb app`` works from the folder that holds the
clone; no ``--set`` value or key and no mistyped ``kb set`` field is dropped silently.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

from analyzers import registry
from kb.core import KnowledgeBase
from kb.evidence import estimates
from kb.settings import Settings
from tests.helpers.cli import kb_command, run_kb
from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[1]
KB = Path(sys.executable).with_name("kb")  # the console script a user runs (not `python -m`, which adds the cwd)

NOTE = textwrap.dedent("""\
    ---
    paper_id: "test:first-hour"
    title: "First hour"
    quality_score: 3
    claims:
      - id: slow-echo
        statement: "The slow run's value is above two."
        analyzer: {name: noop, scale: slow, params: {value: 3}}
        expect: {metric: value, op: ">", value: 2}
      - id: quick-echo
        statement: "The quick run's value is above two."
        analyzer: {name: noop, scale: smoke, params: {value: 4}}
        expect: {metric: value, op: ">", value: 2}
      - id: needs-a-gpu
        statement: "A run this machine cannot do."
        analyzer: {name: noop, params: {not_runnable: "needs a GPU"}}
        expect: {metric: value, op: ">", value: 2}
    ---

    A note whose first claim is slow on purpose.
    """)


@pytest.fixture
def first_hour(tmp_path: Path) -> tuple[Path, Path]:
    papers, home = tmp_path / "papers", tmp_path / "home"
    papers.mkdir()
    (papers / "first-hour.md").write_text(NOTE, encoding="utf-8")
    return papers, home


def test_demo_runs_quick_claims_first_with_estimates_and_reports_within_the_bound(
        first_hour: tuple[Path, Path]) -> None:
    papers, home = first_hour
    # The bound under test (30 s by default): above the worker's 2-second heartbeat, which carries the reports.
    interval = 3.0
    env = {**os.environ, "KB_PROGRESS_INTERVAL": str(interval), "COLUMNS": "160"}
    demo = subprocess.Popen(kb_command(papers, home, "demo"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert demo.stderr is not None and demo.stdout is not None
    lines: list[tuple[float, str]] = []
    printed: list[tuple[float, str]] = []  # stdout, read as it comes too (the verdicts as they land)
    reader = threading.Thread(target=lambda: printed.extend((time.monotonic(), line.rstrip("\n"))
                                                            for line in demo.stdout or []), daemon=True)
    reader.start()
    for line in demo.stderr:  # read as it comes: each line's arrival time is what a user sees
        lines.append((time.monotonic(), line.rstrip("\n")))
    reader.join(timeout=60)
    stdout = "\n".join(line for _, line in printed)
    assert demo.wait(timeout=120) == 0, "\n".join(text for _, text in lines) + stdout
    text = "\n".join(line for _, line in lines)

    # The plan, before anything runs: quick first, each run with its estimate and where it comes from.
    plan = text[text.index("quick ones first"):text.index("open the app now")]
    order = [claim for claim in re.findall(r"first-hour#([\w-]+)", plan)]
    assert order == ["needs-a-gpu", "quick-echo", "slow-echo"], plan
    assert "at once: not runnable here (needs a GPU)" in plan
    assert "'smoke' preset" in plan and "'slow' preset" in plan and "reference machine" in plan
    # The slow preset's 6 s on the reference machine times the speed the demo measured here.
    slow_row = next(line for line in plan.splitlines() if "slow-echo" in line)
    found = re.search(r"about (.+?) \('slow' preset, ([\d.]+)x the reference", slow_row)
    assert found, slow_row
    low, high = (estimates.duration_text(6.0 * (float(found.group(2)) + d)) for d in (-0.05, 0.05))
    assert found.group(1) in (low, high), slow_row
    assert "kb app" in text and "shows each verdict as it arrives" in text

    # The queue ran in that order: the quick claim's verdict was in before the slow run started.
    kb = KnowledgeBase(Settings(papers=papers, home=home))
    runs = {r.claim_key.split("#")[1]: r for r in kb.runs(limit=10) if r.claim_key}
    assert runs["quick-echo"].finished_at <= runs["slow-echo"].started_at  # type: ignore[operator]
    assert kb.claim_states()["first-hour#quick-echo"].state.value == "supported"

    # While the slow run ran (6 s or more), the display said what it was doing, with the time left, at least every
    # interval (plus a poll's slack): each line a newer step than the one before.
    slow_id = runs["slow-echo"].id[:8]
    running = [(at, line) for at, line in lines if line.startswith(slow_id) and " running " in line]
    assert len(running) >= 3, text
    gaps = [b[0] - a[0] for a, b in zip(running, running[1:], strict=False)]
    assert max(gaps) <= interval + 0.75, (gaps, running)
    steps = [int(m.group(1)) for _, line in running if (m := re.search(r"step (\d+)/60", line))]
    assert steps == sorted(steps) and len(set(steps)) >= 2, running
    # Every report of the analyzer's (all but the worker's own 'started', before its first heartbeat) says
    # the time left.
    reports = [line for _, line in running if "started" not in line]
    assert reports and all(re.search(r"about \d+ s left", line) for line in reports), reports
    # The quick claim's verdict line was printed as its run was judged, while the slow run still ran.
    quick_at = next(at for at, line in printed if line.startswith("first-hour#quick-echo: supported · 4"))
    assert quick_at < running[-1][0], (printed, running)

    # The slow run's own duration now estimates the next one (what a second demo would print).
    noop = registry.get("noop")
    again = estimates.estimate(kb.engine, noop, noop.params_for({"value": 3}, scale="slow"))
    # (the seconds the worker measured it working, stored with the run: within its started..finished span)
    took = runs["slow-echo"].actual_seconds
    span = (runs["slow-echo"].finished_at - runs["slow-echo"].started_at).total_seconds()  # type: ignore[operator]
    assert took is not None and 0 < took <= span + 0.01
    assert again.basis == "measured here, 1 run" and again.seconds == pytest.approx(took)


def test_setup_says_each_step_and_what_to_run_next(tmp_path: Path) -> None:
    # .ci/setup as written, with a stand-in python3 that records what it is asked to install.
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "setup", tmp_path / ".ci" / "setup")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = textwrap.dedent("""\
        #!/usr/bin/env bash
        if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then mkdir -p "$3/bin"; cp "$0" "$3/bin/python"; exit 0; fi
        if [ "$1" = "-c" ]; then echo 9.9; exit 0; fi
        if [ "$1" = "--version" ]; then echo "Python 3.11"; exit 0; fi
        echo "$*" >> "$(dirname "$0")/../../calls.txt"
        """)
    (bin_dir / "python3").write_text(fake)
    (bin_dir / "python3").chmod(0o755)
    result = subprocess.run(["bash", str(tmp_path / ".ci" / "setup")], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert result.returncode == 0, result.stderr
    said = [line for line in result.stdout.splitlines() if line.startswith("setup: ")]
    assert [line.split()[1] for line in said[:4]] == ["1/4", "2/4", "3/4", "4/4"], result.stdout
    assert "PyTorch" in said[2] and "kb and its dependencies" in said[3]
    assert result.stdout.rstrip().splitlines()[-1].startswith("next: .venv/bin/kb demo")
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert any("torch==" in call for call in calls) and any('-e .[dev]' in call for call in calls), calls


def _wait_for_port(process: subprocess.Popen[bytes], port: int, deadline: float) -> None:
    while True:
        assert process.poll() is None, "kb app exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            assert time.monotonic() < deadline, "the app did not start"
            time.sleep(0.3)


@pytest.mark.browser
@pytest.mark.slow  # suite time: over 10 s on 2 cores
def test_app_started_from_the_folder_holding_the_clone_serves_pages(tmp_path: Path) -> None:
    chromium, chromedriver = shutil.which("chromium") or "/usr/bin/chromium", shutil.which("chromedriver") or \
        "/usr/bin/chromedriver"
    if not (Path(chromium).is_file() and Path(chromedriver).is_file()):
        pytest.skip("needs Debian's chromium and chromium-driver")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    # The parent of a clone named 'kb': that folder would be the package 'kb' for a server importing from here.
    parent = tmp_path / "work"
    (parent / "kb").mkdir(parents=True)
    (parent / "kb" / "README.md").write_text("a clone\n")
    papers = parent / "papers"
    papers.mkdir()
    (papers / "first-hour.md").write_text(NOTE, encoding="utf-8")
    port = free_port()
    app = subprocess.Popen([str(KB), "app", "--port", str(port), "--papers", "papers", "--home", ".kb"], cwd=parent,
                           env={**os.environ, "KB_APP_WORKER": "false"}, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--user-data-dir={tempfile.mkdtemp(prefix='kb-chromium-')}"]:
        options.add_argument(flag)
    driver = None
    try:
        _wait_for_port(app, port, time.monotonic() + 60)
        driver = webdriver.Chrome(service=Service(chromedriver), options=options)
        driver.get(f"http://127.0.0.1:{port}/library")
        deadline = time.monotonic() + 60
        while "First hour" not in driver.page_source:
            assert "Error" not in driver.page_source or time.monotonic() < deadline
            assert time.monotonic() < deadline, driver.page_source[-2000:]
            time.sleep(0.5)
        assert "ImportError" not in driver.page_source and "ModuleNotFoundError" not in driver.page_source
    finally:
        if driver is not None:
            driver.quit()
        app.terminate()
        app.wait(timeout=30)


def test_verify_refuses_an_unknown_set_key_before_queueing(first_hour: tuple[Path, Path]) -> None:
    papers, home = first_hour
    result = run_kb(papers, home, "verify", "first-hour", "--set", "stpes=3")
    assert result.returncode == 2 and "queued" not in result.stdout
    (line,) = result.stderr.strip().splitlines()
    assert "stpes" in line and "did you mean steps?" in line and "allowed: " in line and "value" in line
    assert KnowledgeBase(Settings(papers=papers, home=home)).runs() == []


def test_verify_refuses_a_value_its_field_cannot_hold(first_hour: tuple[Path, Path]) -> None:
    papers, home = first_hour
    result = run_kb(papers, home, "verify", "first-hour", "--set", "steps=many")
    assert result.returncode == 2 and "queued" not in result.stdout
    (line,) = result.stderr.strip().splitlines()
    assert "steps=many" in line and "expects int" in line
    assert KnowledgeBase(Settings(papers=papers, home=home)).runs() == []
    # A good value reaches the runs of every analyzer that takes it.
    good = run_kb(papers, home, "verify", "first-hour#quick-echo", "--set", "value=5", "--queue-only")
    assert good.returncode == 0, good.stderr
    (run,) = KnowledgeBase(Settings(papers=papers, home=home)).runs()
    assert run.params["value"] == 5.0


def test_run_says_a_bad_value_in_one_line(tmp_path: Path) -> None:
    result = run_kb(None, None, "run", "depth.probe", "--set", "max_sequences=abc", "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "max_sequences=abc" in line and "expects int" in line


def test_set_refuses_a_typo_of_a_known_field_unless_new_field(first_hour: tuple[Path, Path]) -> None:
    papers, home = first_hour
    note = papers / "first-hour.md"
    before = note.read_bytes()
    refused = run_kb(papers, home, "set", "first-hour", "quality_scroe=5")
    assert refused.returncode == 1 and note.read_bytes() == before
    assert "did you mean `quality_score`? (use --new-field to add a new field)" in refused.stderr
    added = run_kb(papers, home, "set", "first-hour", "quality_scroe=5", "--new-field")
    assert added.returncode == 0, added.stderr
    assert "quality_scroe: 5" in note.read_text() and "quality_score: 3" in note.read_text()
    assert run_kb(papers, home, "set", "first-hour", "reading_notes=later").returncode == 0  # far from any field


@pytest.mark.parametrize("command", ["worker", "verify"])
def test_remote_worker_settings_are_options_with_their_variables(command: str) -> None:
    result = run_kb(None, None, command, "--help", env={"COLUMNS": "250", "TERM": "dumb"})
    assert result.returncode == 0
    for flag, variable in (("--artifact-store", "KB_ARTIFACT_STORE"), ("--offline", "KB_OFFLINE"),
                           ("--cache-dir", "KB_CACHE_DIR"), ("--db", "KB_DATABASE_URL")):
        line = next((line for line in result.stdout.splitlines() if flag in line), "")
        assert variable in line, (flag, result.stdout)


def test_worker_artifact_store_option_is_where_evidence_goes(first_hour: tuple[Path, Path], tmp_path: Path) -> None:
    papers, home = first_hour
    store = tmp_path / "shared-store"
    assert run_kb(papers, home, "verify", "first-hour#quick-echo", "--queue-only").returncode == 0
    worked = run_kb(papers, home, "worker", "--artifact-store", str(store))
    assert worked.returncode == 0, worked.stderr
    records = list(store.glob("evidence/*/*/kb-evidence.json")) or list(store.rglob("*.json"))
    assert records, list(store.rglob("*"))
    assert not (home / "evidence").exists() or not any((home / "evidence").rglob("value.txt"))
    assert json.loads(records[0].read_text())
