"""Library page render time at 10,000 notes, measured with AppTest: the first render of a new process,
cold (caches cleared, modules loaded) and warm (cached query results).

Generates notes with claims bound to the ``noop`` analyzer (values on both sides of the expectation,
so verdicts are supported, refuted and inconclusive), source texts with grounded and ungrounded
quotes, runs a fraction of the claims through the real worker, then edits some bindings so their
evidence goes stale. Then it renders the Library page (``app/main.py``) with
``streamlit.testing.v1.AppTest`` and prints the times. Goal: under 2 s.

    .venv/bin/python benchmarks/bench_app.py --n 10000 --verified 0.1

``--pages``: every page's time to content (AppTest: the page switched to and rendered) over the bundled notes
(each note's page, the Library, Runs, Compare, Tensions, Add / edit, Ask), then over ``--pages-n`` generated notes
(1,000 by default, built as above: claims, runs, stale evidence; a few note pages). Each page is measured in a new
process that first renders the app's first page, as a freshly started server does: its first visit ("cold": the
modules only it needs imported, caches cleared) and a rerun ("warm"):

    .venv/bin/python benchmarks/bench_app.py --pages --repeats 2 [--pages-n 1000] [--keep FOLDER]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_index import DECISIONS, TAGS, WORDS  # noqa: E402
from tests.noop_analyzer import register_for_subprocesses  # noqa: E402

register_for_subprocesses()  # the queue is measured with the test-only noop analyzer

STATUSES = ["inbox", "to_read", "reading", "analyzed", "reviewed"]
GOAL_SECONDS = 2.0


def make_note(i: int, rng: random.Random, with_source: bool) -> tuple[str, str | None]:
    """A note's text (1-4 claims bound to noop) and, for some notes, its source text."""
    title = " ".join(rng.choices(WORDS, k=6)).capitalize() + f" {i}"
    sentences = [" ".join(rng.choices(WORDS, k=12)).capitalize() + "." for _ in range(12)]
    tags = "".join(f'  - "{t}"\n' for t in rng.sample(TAGS, 3))
    claims = []
    for c in range(rng.randint(1, 4)):
        value = round(rng.uniform(0.5, 4.0), 2)
        quote = rng.choice(sentences)[:-1] if rng.random() < 0.9 else "a sentence the source never says"
        claims.append(
            f"  - id: claim-{c}\n"
            f'    statement: "The echoed value {value} is above two ({c})."\n'
            "    kind: quantitative\n"
            f'    source:\n      quote: "{quote}"\n'
            f"    analyzer:\n      name: noop\n      params:\n        value: {value}\n"
            '    expect:\n      metric: value\n      op: ">"\n      value: 2\n      inconclusive_band: 0.1\n'
        )
    source = f'source_file: "sources/note-{i:06d}.txt"\n' if with_source else ""
    text = (
        "---\n"
        f'paper_id: "bench:{i:06d}"\n'
        f'title: "{title}"\n'
        f"tags:\n{tags}"
        f"quality_score: {rng.randint(1, 5)}\n"
        f'decision: "{rng.choice(DECISIONS)}"\n'
        f'status: "{rng.choice(STATUSES)}"\n'
        f"publication:\n  year: {rng.randint(2015, 2026)}\n"
        f"{source}"
        "claims:\n" + "".join(claims) +
        "---\n\n"
        f"# {title}\n\n" + " ".join(sentences) + "\n"
    )
    return text, (" ".join(sentences) + "\n") if with_source else None


def build(folder: Path, n: int, verified: float, seed: int) -> dict[str, float]:
    """Write the notes, index them, verify a fraction of the claims, make some evidence stale."""
    from kb.core import KnowledgeBase
    from kb.settings import Settings

    rng = random.Random(seed)
    papers = folder / "papers"
    (papers / "sources").mkdir(parents=True)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    for i in range(n):
        text, source = make_note(i, rng, with_source=rng.random() < 0.5)
        (papers / f"note-{i:06d}.md").write_text(text, encoding="utf-8")
        if source is not None:
            (papers / "sources" / f"note-{i:06d}.txt").write_text(source, encoding="utf-8")
    timings["generate"] = time.perf_counter() - t0

    kb = KnowledgeBase(Settings(papers=papers, home=folder / "home"))
    t0 = time.perf_counter()
    kb.index()
    timings["index"] = time.perf_counter() - t0

    # At least one note verified, so that a small library has evidence (and some of it stale) too.
    chosen = sorted(rng.sample(range(n), min(n, max(1, int(n * verified)))))
    t0 = time.perf_counter()
    queued, skipped = kb.verify([f"note-{i:06d}" for i in chosen])
    counts = kb.work()
    timings["verify"] = time.perf_counter() - t0
    assert not skipped and counts.get("succeeded") == len(queued), (skipped[:3], counts)
    timings["runs"] = len(queued)

    # Change the binding of a tenth of the verified notes: their evidence becomes stale.
    for i in chosen[::10]:
        path = papers / f"note-{i:06d}.md"
        text = re.sub(r"(\n        value: )([0-9.]+)", lambda m: f"{m[1]}{float(m[2]) + 0.5:g}",
                      path.read_text(encoding="utf-8"), count=1)
        path.write_text(text, encoding="utf-8")
    kb.index()
    rows = kb.library()
    for state in ("supported", "refuted", "inconclusive", "stale", "unverified"):
        timings[f"{state} claims"] = sum(row.states[state] for row in rows)
    timings["ungrounded claims"] = sum(row.ungrounded for row in rows)
    assert timings["stale claims"] > 0, "editing bindings should have made evidence stale"
    kb.engine.dispose()
    return timings


def render_times(folder: Path, repeats: int) -> dict[str, list[float]]:
    """Library page render times (seconds) through AppTest: cold, warm, a filter, a search, page 2
    (when the library has one)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    os.environ.update(KB_PAPERS=str(folder / "papers"), KB_HOME=str(folder / "home"), KB_APP_WORKER="false")
    os.environ.pop("KB_DATABASE_URL", None)
    times: dict[str, list[float]] = {"import analyzers": [], "first (new process)": [], "cold": [], "warm": [],
                                     "filter (tag)": [], "search": [], "next page": []}
    # The library judges staleness against analyzer versions, so the first render imports every analyzer
    # package (torch, transformers): timed on its own, it is paid once per server process.
    from analyzers import registry

    t0 = time.perf_counter()
    registry.load_all()
    times["import analyzers"].append(time.perf_counter() - t0)
    for repeat in range(repeats + 1):
        st.cache_data.clear()
        st.cache_resource.clear()
        at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=120)
        t0 = time.perf_counter()
        at.run()
        # The very first render also imports Streamlit's element modules, the app and pandas, once.
        times["first (new process)" if repeat == 0 else "cold"].append(time.perf_counter() - t0)
        assert not at.exception, at.exception
        frame = at.dataframe[0].value
        assert len(frame) > 0
        _wait_for_index()
        t0 = time.perf_counter()
        at.run()
        times["warm"].append(time.perf_counter() - t0)
        at.selectbox(key="lib_tag").select_index(1)
        t0 = time.perf_counter()
        at.run()
        times["filter (tag)"].append(time.perf_counter() - t0)
        at.selectbox(key="lib_tag").select_index(0)
        at.text_input(key="lib_search").input("folding enzyme")
        t0 = time.perf_counter()
        at.run()
        times["search"].append(time.perf_counter() - t0)
        at.text_input(key="lib_search").input("")
        at.run()
        # The pager is drawn only over more notes than one page holds: a small library has no page 2.
        if any(pager.key == "lib_page" for pager in at.pagination):
            at.pagination(key="lib_page").select(2)
            t0 = time.perf_counter()
            at.run()
            times["next page"].append(time.perf_counter() - t0)
        assert not at.exception, at.exception
    return times


#: The app's pages besides each note's, with the query they open with.
PAGES = [("library", {}), ("runs", {}), ("compare", {}), ("tensions", {}), ("edit_note", {}), ("ask", {})]
#: Note pages timed in a generated library: the first, and a few spread over it.
GENERATED_NOTE_PAGES = 3


def page_child(folder: Path, page: str, note_id: str | None) -> None:
    """In a fresh process (a new app server): render the app once (its first page, the Library), then time the
    first visit of ``page`` ("cold": every module it needs that the Library did not is imported here, caches
    cleared) and a rerun ("warm"); prints them as JSON."""
    import json

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    os.environ.update(KB_PAPERS=str(folder / "papers"), KB_HOME=str(folder / "home"), KB_APP_WORKER="false")
    os.environ.pop("KB_DATABASE_URL", None)
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=300).run()
    _wait_for_index()
    st.cache_data.clear()
    if note_id is not None:
        at.query_params.update({"id": note_id})
    t0 = time.perf_counter()
    at.switch_page(f"views/{page}.py").run()
    cold = time.perf_counter() - t0
    assert not at.exception, (page, note_id, at.exception)
    t0 = time.perf_counter()
    at.run()
    print(json.dumps({"cold": cold, "warm": time.perf_counter() - t0}))


def page_times(folder: Path, notes: list[str], repeats: int) -> dict[str, dict[str, list[float]]]:
    """Time to content of every page and of the given notes' pages, each measured in its own new process
    (what a person opening that page first on a freshly started app waits for), ``repeats`` times."""
    import json

    times: dict[str, dict[str, list[float]]] = {}
    for page, note_id in [*((page, None) for page, _ in PAGES), *(("note", note) for note in notes)]:
        name = f"note {note_id}" if note_id is not None else page
        times[name] = {"cold": [], "warm": []}
        for _ in range(repeats):
            command = [sys.executable, __file__, "--page-child", page, "--keep", str(folder)]
            out = subprocess.run([*command, *(["--id", note_id] if note_id else [])], check=True,
                                 capture_output=True, text=True).stdout
            measured = json.loads(out.strip().splitlines()[-1])
            for kind in ("cold", "warm"):
                times[name][kind].append(measured[kind])
    return times


def bundled_library(folder: Path) -> list[str]:
    """The bundled notes copied into ``folder`` and indexed (a fresh home: nothing run); their ids."""
    import shutil

    from kb.core import KnowledgeBase
    from kb.settings import Settings

    shutil.copytree(ROOT / "papers", folder / "papers")
    kb = KnowledgeBase(Settings(papers=folder / "papers", home=folder / "home"))
    kb.index()
    notes = [row.id for row in kb.library()]
    kb.engine.dispose()
    return notes


def generated_library(folder: Path, n: int, verified: float, seed: int) -> list[str]:
    """``n`` generated notes (``build``, in another process; reused when ``folder`` has them), and the ids of
    the note pages to time: the first note and a few spread over the library."""
    if not (folder / "papers").is_dir():
        subprocess.run([sys.executable, __file__, "--build-only", "--keep", str(folder), "--n", str(n),
                        "--verified", str(verified), "--seed", str(seed)], check=True, capture_output=True)
    ids = sorted(path.stem for path in (folder / "papers").glob("*.md"))
    step = max(1, len(ids) // GENERATED_NOTE_PAGES)
    return ids[::step][:GENERATED_NOTE_PAGES]


def print_page_times(title: str, times: dict[str, dict[str, list[float]]]) -> None:
    print(f"{title} (load average {', '.join(f'{x:.2f}' for x in os.getloadavg())})")
    for name, kinds in times.items():
        cold, warm = statistics.median(kinds["cold"]), statistics.median(kinds["warm"])
        verdict = "OK" if max(cold, warm) < GOAL_SECONDS else "MISS"
        print(f"  {name:<56} cold {cold:7.2f} s  warm {warm:7.2f} s  (goal < {GOAL_SECONDS:g} s: {verdict})")


def pages_main(args: argparse.Namespace) -> None:
    """``--pages``: every page over the bundled notes, then over ``--pages-n`` generated ones."""
    with tempfile.TemporaryDirectory(prefix="kb-bench-pages-") as tmp:
        bundled = Path(tmp) / "bundled"
        notes = bundled_library(bundled)
        print_page_times("Bundled notes", page_times(bundled, notes, args.repeats))
        if args.pages_n:
            generated = args.keep or Path(tmp) / "generated"
            chosen = generated_library(generated, args.pages_n, args.verified, args.seed)
            count = len(list((generated / "papers").glob("*.md")))
            print_page_times(f"{count:,} generated notes", page_times(generated, chosen, args.repeats))


def _wait_for_index() -> None:
    """Let the app's background re-index (started by the cold render) finish before timing warm renders."""
    from app.state import index_keeper

    keeper = index_keeper()
    if keeper.thread is not None:
        keeper.thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="Notes to generate.")
    parser.add_argument("--verified", type=float, default=0.1, help="Fraction of notes whose claims are run.")
    parser.add_argument("--repeats", type=int, default=3, help="Cold/warm measurements (median reported).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, default=None, help="Build here and keep it (reused when present).")
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--page-child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--id", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--pages", action="store_true",
                        help="Every page's time to content over the bundled notes and over --pages-n generated ones.")
    parser.add_argument("--pages-n", type=int, default=1000, help="Generated notes for --pages (0: bundled only).")
    args = parser.parse_args()
    if args.page_child:
        page_child(args.keep, args.page_child, args.id)
        return
    if args.pages:
        pages_main(args)
        return
    if args.build_only:  # the child process: build, print the build times as name=value lines
        for name, value in build(args.keep, args.n, args.verified, args.seed).items():
            print(f"{name}={value}")
        return

    with tempfile.TemporaryDirectory(prefix="kb-bench-app-") as tmp:
        folder = args.keep or Path(tmp)
        built: dict[str, float] = {}
        if not (folder / "papers").is_dir():
            # Built in another process, so that this one starts cold, as a freshly started app server does.
            out = subprocess.run([sys.executable, __file__, "--build-only", "--keep", str(folder), "--n", str(args.n),
                                  "--verified", str(args.verified), "--seed", str(args.seed)],
                                 check=True, capture_output=True, text=True).stdout
            built = {k: float(v) for k, v in (line.split("=", 1) for line in out.splitlines() if "=" in line)}
        times = render_times(folder, args.repeats)

    for name, value in built.items():
        shown = f"{int(value):10d}" if name == "runs" or name.endswith("claims") else f"{value:10.2f} s"
        print(f"{'build ' + name:<26} {shown}")
    print(f"{'notes':<26} {args.n:10d}")
    for name, values in times.items():
        if not values:
            continue
        median = statistics.median(values)
        verdict = "OK" if median < GOAL_SECONDS else "MISS"
        if name == "import analyzers":
            print(f"{'once: import analyzers':<26} {median:10.3f} s  (torch, transformers; once per process)")
            continue
        print(f"{'render ' + name:<26} {median:10.3f} s  (min {min(values):.3f}, max {max(values):.3f}, "
              f"n={len(values)}; goal < {GOAL_SECONDS:g} s: {verdict})")
    cold, warm = statistics.median(times["cold"]), statistics.median(times["warm"])
    print(f"{'warm / cold':<26} {warm / cold:10.2f}")


if __name__ == "__main__":
    main()
