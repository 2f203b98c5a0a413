"""Grounding many quotes against a large source: ``kb.notes.grounding.check_note`` against the way it used to match.

    .venv/bin/python benchmarks/bench_grounding.py --source-mb 4 --quotes 2000 --repeats 3

The source is English-like text of random words with page breaks (as ``kb add`` stores a PDF's text); the note
has ``--quotes`` claims, half quoting a passage of the source (on its page), half a passage it does not
contain. The earlier matching normalized the whole source once per quote and once per quote per page, so
it costs minutes here: it is timed on ``--old-sample`` quotes and scaled to all of them. Both are timed
interleaved, ``--repeats`` times; medians and their ratio are printed. Goal: the 2,000 quotes in < 10 s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kb.notes.files import read_note
from kb.notes.grounding import PAGE_BREAK, Grounding, check_note, normalize_text


def make_source(rng: random.Random, size: int, pages: int) -> str:
    """Random sentences of a 20,000-word vocabulary, about ``size`` characters over ``pages`` pages."""
    vocabulary = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 10))) for _ in range(20_000)]
    per_page = size // pages
    out = []
    for _ in range(pages):
        page, length = [], 0
        while length < per_page:
            sentence = " ".join(rng.choices(vocabulary, k=rng.randint(6, 20))).capitalize() + ".\n"
            page.append(sentence)
            length += len(sentence)
        out.append("".join(page))
    return PAGE_BREAK.join(out)


def make_quotes(rng: random.Random, source: str, count: int) -> list[str]:
    """Half passages of the source (8-15 words), half the same made absent by a word no source has."""
    words = source.replace(PAGE_BREAK, " ").split()
    quotes = []
    for i in range(count):
        start = rng.randrange(len(words) - 20)
        passage = words[start:start + rng.randint(8, 15)]
        if i % 2:
            passage.insert(len(passage) // 2, "absentword")
        quotes.append(" ".join(passage))
    return quotes


def old_grounding(quote: str, source_text: str) -> tuple[bool, list[int]]:
    """The earlier matching: the source normalized again for every quote, and every page for every quote."""
    found = normalize_text(quote) in normalize_text(source_text)
    pages = source_text.split(PAGE_BREAK)
    on = [i for i, page in enumerate(pages, 1) if normalize_text(quote) in normalize_text(page)] if found else []
    return found, on


def write_note(folder: Path, quotes: list[str]) -> Path:
    claims = "".join(f'  - id: c{i}\n    statement: "claim {i}"\n    source: {{quote: "{q}"}}\n'
                     for i, q in enumerate(quotes))
    path = folder / "big.md"
    path.write_text(f'---\npaper_id: "bench:1"\ntitle: "Bench"\nsource_file: "source.txt"\nclaims:\n{claims}'
                    "---\nBody.\n", encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source-mb", type=float, default=4.0, help="Source text size in MB.")
    parser.add_argument("--pages", type=int, default=40, help="Pages of the source.")
    parser.add_argument("--quotes", type=int, default=2000, help="Claims with a quote.")
    parser.add_argument("--old-sample", type=int, default=4, help="Quotes the earlier matching is timed on.")
    parser.add_argument("--repeats", type=int, default=3, help="Interleaved repeats of each.")
    args = parser.parse_args()
    rng = random.Random(0)
    source = make_source(rng, int(args.source_mb * 1_000_000), args.pages)
    quotes = make_quotes(rng, source, args.quotes)
    with tempfile.TemporaryDirectory(prefix="kb-bench-grounding-") as tmp:
        folder = Path(tmp)
        (folder / "source.txt").write_text(source, encoding="utf-8")
        note = read_note(write_note(folder, quotes), max_bytes=50_000_000)
        sample = quotes[:args.old_sample]
        old_times, new_times = [], []
        for _ in range(args.repeats):  # interleaved, so drift on a shared machine hits both alike
            start = time.perf_counter()
            old = [old_grounding(q, source) for q in sample]
            old_times.append((time.perf_counter() - start) * len(quotes) / len(sample))
            start = time.perf_counter()
            results = check_note(note, source)
            new_times.append(time.perf_counter() - start)
        grounded = sum(r.status is Grounding.grounded for r in results)
        agree = all((results[i].status is Grounding.grounded) == found for i, (found, _) in enumerate(old))
    old_median, new_median = statistics.median(old_times), statistics.median(new_times)
    print(f"source {len(source) / 1e6:.1f} MB over {args.pages} pages, {len(quotes)} quotes ({grounded} grounded); "
          f"earlier and current agree on the sample: {agree}")
    print(f"earlier matching: {old_median:8.1f} s (median of {args.repeats}, scaled from {len(sample)} quotes)")
    print(f"check_note:       {new_median:8.2f} s (median of {args.repeats}: "
          f"{', '.join(f'{t:.2f}' for t in new_times)})")
    print(f"speed-up: {old_median / new_median:.0f}x")


if __name__ == "__main__":
    main()
