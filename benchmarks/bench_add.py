"""Per-field accuracy of ``kb add FILE.pdf`` over the real-article corpus, and the time per page.

Each PDF under ``benchmarks/data/pdfs/`` has a truth file (``<name>.truth.json``, written by reading the
PDF) with the title, authors with affiliations, year, venue, DOI or arXiv id and the opening of the
abstract. A field is right when (after case, accents, dashes, quotes and whitespace are folded):

- title: equal; authors: the same names in the same order; affiliations: each author's extracted
  affiliation contains the truth's institution (or both have none);
- year, venue, doi, arxiv_id: equal (both empty counts as right: the PDF does not state it);
- abstract: the extracted abstract starts with the truth's opening words (none in the truth: none extracted);
- ligatures: the stored text holds no ligature code point and no word a dropped ligature broke.

Each truth file names its half (``split``: ``tuning`` or ``held-out``, dealt once, see the corpus README);
the totals are given per half, with the number of articles whole (every field right). A wrong field is
also told apart by how it is wrong: left empty (kb not sure) or filled with something else. A third value,
``validation``, marks a batch no rule was made from and kb has not read, kept to measure a round's rules once
before the held-out half is read: it is read only when asked for (``--half validation``, or its articles named
with ``--articles``), never by a plain run, so no floor or tuning run touches it.

    .venv/bin/python benchmarks/bench_add.py            # table per article, then per field and half
    .venv/bin/python benchmarks/bench_add.py --json     # the same as JSON
    .venv/bin/python benchmarks/bench_add.py --half tuning   # only the tuning half (while changing rules)
    .venv/bin/python benchmarks/bench_add.py --totals        # per field and half, no row per article
    .venv/bin/python benchmarks/bench_add.py --half tuning --articles zoo,warp   # only these (a quick check)
    .venv/bin/python benchmarks/bench_add.py --half validation --totals  # the validation batch, once a round
    .venv/bin/python benchmarks/bench_add.py --grobid http://localhost:8070 --totals   # GROBID's header over
                                                                                      # the layout's
    .venv/bin/python benchmarks/bench_add.py --half tuning --learned-year --totals  # with the year fallback
    .venv/bin/python benchmarks/bench_add.py --half tuning --learned-abstract --totals  # with the line labeller

``--learned-year`` reads as ``KB_LEARNED_YEAR=true`` does: where the rules leave the year empty, the learned year
ranker (kb/papers/pdf_year.py) may fill it; the totals then also say how many years it filled, how many of
those are right, and how many years the rules alone had right. ``--learned-abstract`` reads as
``KB_LEARNED_ABSTRACT=true`` does: the learned line labeller (kb/papers/pdf_roles.py) may mend abstracts; the
totals then say how many abstracts it read and how many of those are right.

``--grobid URL`` measures ``kb add``'s GROBID backend (``KB_GROBID_URL``, ``kb.papers.grobid``): each PDF is
uploaded to the GROBID service at URL and its header read over the layout rules' as ``kb add`` reads it
(answers cached in a temporary KB home for the run; ``KB_LOOKUP_TIMEOUT`` for a slow service); the rows say
which articles GROBID did not read, and why. It needs a running GROBID (``docker run --rm -p 8070:8070
lfoppiano/grobid:0.8.2``), which the machines this project is developed on cannot run: its numbers are not
in the corpus README, and tests/test_paper_grobid.py runs this path against a loopback GROBID.

While rules change, read only the tuning half (``--half tuning``); the held-out half is read to report, with
``--totals``, so that no article of it is looked at one by one.
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
from kb.papers.grobid import read_header  # noqa: E402
from kb.papers.pdf_page import LearnedReaders  # noqa: E402
from kb.settings import Settings  # noqa: E402

CORPUS = ROOT / "benchmarks" / "data" / "pdfs"
FIELDS = ("title", "authors", "affiliations", "year", "venue", "doi", "arxiv_id", "abstract", "ligatures")
# Words a ligature dropped by the extractor leaves behind (fi, fl, ff gone): never words of these papers.
BROKEN_WORDS = re.compile(r"\b(?:modied|uctuation|signicance|unied|rst|dened|eect|eects|coecients?|"
                          r"speci(?:ed|c)|dierent|eciency|exible)\b")


def fold(text: str | None) -> str:
    """Case, accents (also TeX's spacing ones), dashes, typographic quotes and whitespace folded, for
    comparing."""
    text = unicodedata.normalize("NFKD", text or "")
    text = "".join(c for c in text if not unicodedata.combining(c) and c not in "¨´`^~˜")
    text = re.sub(r"[\u2010-\u2015\u2212]", "-", text)
    text = re.sub(r"[\u2018\u2019\u201b\u2032]", "'", re.sub(r"[\u201c\u201d\u201f\u2033]", '"', text))
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
        "abstract": (fold(abstract).startswith(fold(truth["abstract"])) if truth["abstract"]
                     else not abstract),
        "ligatures": not re.search("[\ufb00-\ufb06]", record.text) and not BROKEN_WORDS.search(record.text),
    }


def _empty(record: PaperRecord, abstract: str | None) -> dict[str, bool]:
    """Which fields kb left empty (a field it was not sure of), to tell them from wrong values."""
    values = {"title": record.title, "authors": record.authors, "year": record.year, "venue": record.venue,
              "doi": record.doi, "arxiv_id": record.arxiv_id, "abstract": abstract}
    empty = {field: not value for field, value in values.items()}
    empty["affiliations"] = not any(affiliation for _, affiliation in record.authors)
    empty["ligatures"] = False
    return empty


SPLITS = ("tuning", "held-out", "validation")
# The halves a run reads when no half is named: the validation batch is read only when asked for, so that the
# floors (tests/test_real_pdfs.py) and every tuning run leave it unread until the round's rules are merged.
READ_BY_DEFAULT = ("tuning", "held-out")


def split_of(truth: dict[str, Any]) -> str:
    """The half a truth file names (the first articles' files name none: they are tuning articles)."""
    return str(truth.get("split", "tuning"))


def selected(half: str | None = None, articles: set[str] | None = None,
             corpus: Path = CORPUS) -> list[tuple[Path, dict[str, Any]]]:
    """The PDFs a run reads, with their truths, in name order: those of ``half`` (with no half, those of
    ``READ_BY_DEFAULT``, unless ``articles`` names others), and of them only those named in ``articles``."""
    chosen = []
    for truth_file in sorted(corpus.glob("*.truth.json")):
        truth = json.loads(truth_file.read_text(encoding="utf-8"))
        name = truth_file.name.removesuffix(".truth.json")
        split = split_of(truth)
        in_half = split == half if half is not None else (split in READ_BY_DEFAULT or bool(articles))
        if in_half and (not articles or name in articles):
            chosen.append((truth_file.with_name(f"{name}.pdf"), truth))
    return chosen


def run(half: str | None = None, grobid_url: str | None = None, articles: set[str] | None = None,
        learned: LearnedReaders | None = None) -> tuple[list[dict[str, Any]], float]:
    """Score the articles ``selected`` reads (the tuning and held-out halves, or one ``half``, or those named in
    ``articles``); the rows and the seconds per page. With ``grobid_url``, each header as ``kb add`` reads it
    with that GROBID service (each row's ``grobid``: None when GROBID read it, else the line saying why not)."""
    import tempfile

    learned = learned or LearnedReaders()
    rows, seconds, pages = [], 0.0, 0
    with tempfile.TemporaryDirectory(prefix="bench-add-") as home:
        settings = Settings(home=Path(home), grobid_url=grobid_url, lookups=True, offline=False)
        for pdf, truth in selected(half, articles):
            start = time.perf_counter()
            record = read_pdf(pdf, learned)
            if grobid_url:
                record = read_header(record, pdf, settings)
            seconds += time.perf_counter() - start
            # the abstract the record holds: the layout's, as kb add's PDF reader read it (each PDF is read
            # once), or GROBID's
            abstract = record.abstract
            pages += record.text.count("\f") + 1
            right = score(record, truth, abstract)
            empty = _empty(record, abstract)
            filled = "year" in record.read_by  # by the learned year ranker: the rules left it empty
            rows.append({"article": pdf.stem, "split": split_of(truth),
                         "pages": record.text.count("\f") + 1, **right,
                         **({"year_filled": filled,
                             "year_by_rules": (None if filled else record.year) == truth["year"]}
                            if learned.year else {}),
                         "abstract_by_labeller": "abstract" in record.read_by,
                         "left_empty": [f for f in FIELDS if not right[f] and empty[f]],
                         **({"grobid": next((n for n in record.notices if n.startswith("GROBID")), None)}
                            if grobid_url else {})})
    return rows, seconds / max(pages, 1)


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per field: right, wrong with a value, and left empty; and the articles whole (every field right)."""
    learned = [r for r in rows if "year_filled" in r]
    labelled = [r for r in rows if r.get("abstract_by_labeller")]
    return {"n": len(rows),
            "right": {f: sum(r[f] for r in rows) for f in FIELDS},
            "left_empty": {f: sum(f in r["left_empty"] for r in rows) for f in FIELDS},
            "whole": sum(all(r[f] for f in FIELDS) for r in rows),
            **({"learned_year": {"filled": sum(r["year_filled"] for r in learned),
                                 "filled_right": sum(r["year_filled"] and r["year"] for r in learned),
                                 "year_right_by_rules_alone": sum(r["year_by_rules"] for r in learned)}}
               if learned else {}),
            "abstract_by_labeller": {"read": len(labelled), "right": sum(r["abstract"] for r in labelled)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--half", choices=SPLITS, help="read only this half of the corpus "
                        "(validation: only with this or --articles)")
    parser.add_argument("--totals", action="store_true", help="per field and half only, no row per article")
    parser.add_argument("--grobid", metavar="URL", help="read each header with the GROBID service at URL "
                        "(uploads the PDFs to it), as kb add does with KB_GROBID_URL")
    parser.add_argument("--learned-year", action="store_true", help="let the learned year ranker fill the "
                        "years the rules leave empty, as KB_LEARNED_YEAR=true does")
    parser.add_argument("--learned-abstract", action="store_true", help="let the learned line labeller mend "
                        "abstracts, as KB_LEARNED_ABSTRACT=true does")
    parser.add_argument("--articles", type=lambda names: set(names.split(",")), metavar="NAME,...",
                        help="read only these articles (names of their PDFs without .pdf)")
    args = parser.parse_args()
    learned = LearnedReaders(year=args.learned_year, abstract=args.learned_abstract)
    rows, per_page = run(args.half, args.grobid, args.articles, learned)
    unread = [(r["article"], r["grobid"]) for r in rows if r.get("grobid")]
    # the halves read: the one named, else those read by default and any other an article named belongs to
    shown = [args.half] if args.half else [s for s in SPLITS if s in READ_BY_DEFAULT or
                                           any(r["split"] == s for r in rows)]
    halves = {split: totals([r for r in rows if r["split"] == split]) for split in shown}
    overall = totals(rows)  # before --totals drops the rows: "all" is over every article read
    if args.totals:
        rows = []
    if args.json:
        print(json.dumps({"articles": rows, "halves": halves, "all": overall, "seconds_per_page": per_page,
                          **({"grobid_url": args.grobid, "grobid_not_read": dict(unread)} if args.grobid else {})}))
        return
    for article, why in unread:  # GROBID's failures are the layout's numbers: say which
        print(f"{article}: {why}", file=sys.stderr)
    short = {"affiliations": "affil", "arxiv_id": "arxiv", "abstract": "abstr", "ligatures": "ligat"}
    width = {f: max(len(short.get(f, f)), 5) for f in FIELDS}
    heads = [short.get(f, f).center(width[f]) for f in FIELDS]
    print(" ".join(["article".ljust(30), "half".ljust(10), "pages", *heads]))
    for row in rows:
        cells = [row["article"].ljust(30), row["split"].ljust(10), str(row["pages"]).rjust(5)]
        cells += [("ok" if row[f] else "-" if f in row["left_empty"] else "XX").center(width[f]) for f in FIELDS]
        print(" ".join(cells))
    print("ok: right; XX: a wrong value; -: left empty (kb not sure)")
    for split, half in halves.items():
        n = half["n"]
        cells = [f"{split} ({n})".ljust(30), f"whole {half['whole']}".ljust(14)]
        cells += [f"{half['right'][f]}/{n}".center(width[f]) for f in FIELDS]
        print(" ".join(cells))
        cells = ["".ljust(30), "percent".ljust(14)]
        cells += [f"{100 * half['right'][f] / max(n, 1):.0f}%".center(width[f]) for f in FIELDS]
        print(" ".join(cells))
        if "learned_year" in half:
            learned = half["learned_year"]
            print(f"{'':30} learned year: filled {learned['filled']}, right {learned['filled_right']}; year right "
                  f"by the rules alone {learned['year_right_by_rules_alone']}/{n}")
        labelled = half["abstract_by_labeller"]
        if labelled["read"]:
            print(f"{'':30} abstracts read by the line labeller: {labelled['read']}, right {labelled['right']}")
    if args.grobid:
        print(f"GROBID ({args.grobid}) did not read {len(unread)} of the headers (each named on stderr)")
    print(f"time per page: {per_page * 1000:.1f} ms (text, layout of page 1 and metadata"
          f"{', GROBID' if args.grobid else ''})")


if __name__ == "__main__":
    main()
