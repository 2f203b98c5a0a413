"""Per-field accuracy of ``kb add FILE.pdf`` over the real-article corpus, and the time per page.

Each PDF under ``benchmarks/data/pdfs/`` has a truth file (``<name>.truth.json``, written by reading the
PDF) with the title, authors with affiliations, year, venue, DOI or arXiv id and the opening of the
abstract. A field is right when (after case, accents, dashes and whitespace are folded):

- title: equal; authors: the same names in the same order; affiliations: each author's extracted
  affiliation contains the truth's institution (or both have none);
- year, venue, doi, arxiv_id: equal (both empty counts as right: the PDF does not state it);
- abstract: the extracted abstract starts with the truth's opening words;
- ligatures: the stored text holds no ligature code point and no word a dropped ligature broke.

    .venv/bin/python benchmarks/bench_add.py            # table per article, then per field
    .venv/bin/python benchmarks/bench_add.py --json     # the same as JSON
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kb.papers.add import PaperRecord, read_pdf  # noqa: E402

CORPUS = ROOT / "benchmarks" / "data" / "pdfs"
FIELDS = ("title", "authors", "affiliations", "year", "venue", "doi", "arxiv_id", "abstract", "ligatures")
# Words a ligature dropped by the extractor leaves behind (fi, fl, ff gone): never words of these papers.
BROKEN_WORDS = re.compile(r"\b(?:modied|uctuation|signicance|unied|rst|dened|eect|eects|coecients?|"
                          r"speci(?:ed|c)|dierent|eciency|exible)\b")


def fold(text: str | None) -> str:
    """Case, accents (also TeX's spacing ones), dashes and whitespace folded, for comparing."""
    text = unicodedata.normalize("NFKD", text or "")
    text = "".join(c for c in text if not unicodedata.combining(c) and c not in "¨´`^~˜")
    text = re.sub(r"[\u2010-\u2015\u2212]", "-", text)
    return " ".join(text.split()).casefold()


def score(record: PaperRecord, truth: dict[str, Any], abstract: str | None) -> dict[str, bool]:
    """Which fields of the record are right against the truth (see the module docstring)."""
    names = [fold(n) for n, _ in record.authors]
    truth_names = [fold(a["name"]) for a in truth["authors"]]
    institutions = {fold(a["affiliation"]) for a in truth["authors"] if a["affiliation"]}

    def right(got: str | None, want: str | None) -> bool:  # want's institution, and no other author's
        if not want:
            return not got
        others = {i for i in institutions if i not in fold(want) and fold(want) not in i}
        return fold(want) in fold(got) and not any(i in fold(got) for i in others)

    affiliations = len(record.authors) == len(truth["authors"]) and all(
        right(got, want["affiliation"]) for (_, got), want in zip(record.authors, truth["authors"], strict=True))
    return {
        "title": fold(record.title) == fold(truth["title"]),
        "authors": names == truth_names,
        "affiliations": affiliations,
        "year": record.year == truth["year"],
        "venue": fold(record.venue) == fold(truth["venue"]),
        "doi": fold(record.doi) == fold(truth["doi"]),
        "arxiv_id": record.arxiv_id == truth["arxiv_id"],
        "abstract": fold(abstract).startswith(fold(truth["abstract"])),
        "ligatures": not re.search("[\ufb00-\ufb06]", record.text) and not BROKEN_WORDS.search(record.text),
    }


def run() -> tuple[list[dict[str, Any]], float]:
    """Score every article of the corpus; the rows and the seconds per page."""
    from kb.papers.pdf_layout import read_article

    rows, seconds, pages = [], 0.0, 0
    for truth_file in sorted(CORPUS.glob("*.truth.json")):
        truth = json.loads(truth_file.read_text(encoding="utf-8"))
        pdf = truth_file.with_name(truth_file.name.removesuffix(".truth.json") + ".pdf")
        start = time.perf_counter()
        record = read_pdf(pdf)
        seconds += time.perf_counter() - start
        article = read_article(pdf)  # the abstract is not part of a note: read it from the article itself
        pages += record.text.count("\f") + 1
        rows.append({"article": pdf.stem, "pages": record.text.count("\f") + 1,
                     **score(record, truth, article.abstract)})
    return rows, seconds / max(pages, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    args = parser.parse_args()
    rows, per_page = run()
    totals = {f: sum(r[f] for r in rows) for f in FIELDS}
    if args.json:
        print(json.dumps({"articles": rows, "per_field": totals, "n": len(rows), "seconds_per_page": per_page}))
        return
    short = {"affiliations": "affil", "arxiv_id": "arxiv", "abstract": "abstr", "ligatures": "ligat"}
    header = ["article".ljust(24), "pages", *(short.get(f, f) for f in FIELDS)]
    print(" ".join(header))
    for row in rows:
        cells = [row["article"].ljust(24), str(row["pages"]).rjust(5)]
        cells += [("ok" if row[f] else "--").center(len(short.get(f, f))) for f in FIELDS]
        print(" ".join(cells))
    print(" ".join(["right of " + str(len(rows)).ljust(15), " " * 5,
                    *(str(totals[f]).center(len(short.get(f, f))) for f in FIELDS)]))
    print(f"time per page: {per_page * 1000:.1f} ms (text, layout of page 1 and metadata)")


if __name__ == "__main__":
    main()
