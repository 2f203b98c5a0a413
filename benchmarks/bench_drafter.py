"""Precision and recall of the deterministic (fallback) claim drafter: on real articles and on a labelled set.

**Real articles** (``benchmarks/data/pdfs/``): each PDF is read as ``kb add`` reads it
(``kb.papers.add.read_pdf``) and drafted from as ``kb draft-claims`` drafts without a chat model; the drafts
are compared with the result claims a person marked in ``<name>.claims.yaml`` (see a file's header for how).
Matching rule: normalize both quotes (``kb.notes.grounding.normalize_text``) and take their sets of words; a draft
stands for a marked claim when it holds at least ``COVER`` of the claim's words and at least ``ON_TOPIC`` of
its own words are the claim's (so a drafted paragraph that merely contains the claim does not count, nor
does a fragment of it). Drafts and claims are paired one to one (a maximum bipartite matching,
``kb.agents.eval_set.pair``). Precision is paired drafts over drafts, recall paired claims over claims. Each
article's line also counts the drafts that are headings, code or printed output, reference-list entries and
figure or table captions (rules of this benchmark, independent of the drafter's own filters), and the time
to extract and to draft.

**Labelled set** (``kb/agents/eval_data/labels.yaml``): passages from the project's protein-model seed
documents with their labelled claims (matching rule in ``kb.agents.eval_set``), per passage and as micro
averages over the tuning and the held-out passages.

**Worked results, tuning and held-out halves** (issue 39; ``<name>.results.yaml``, the split in
``<name>.truth.json``): the sentences (or lines of printed test output) in which an article reports a number it
obtained itself (an estimate, a test statistic or p-value, a measurement), marked by hand: on the held-out half
before the drafter was run on it, and no rule was changed while looking at its output. Each article's drafts
are scored against them with the same matching rule (a draft stands for a marked result when it quotes the same
sentence: at least ``COVER`` of the result's words, at least ``ON_TOPIC`` of its own words the result's, one to
one), so precision counts every draft that is not a worked result (a cited work's result, a definition, set-up,
a finding without a number) as a false positive. ``--model PROVIDER:NAME`` drafts with that chat model (the
agent, with the same review) instead of the deterministic drafter; the tests run it with a scripted model.

Each draft names the PDF page its quote starts on (the claim's ``source.page``); every report says how many of
the matched drafts name the marked claim's page.

Run: .venv/bin/python benchmarks/bench_drafter.py [--errors] [--json] [--results-only] [--split tuning|held-out]
     [--model PROVIDER:NAME] [--articles NAME,...]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kb.agents.drafter import draft  # noqa: E402
from kb.agents.eval_set import Score, evaluate, load_eval_set, pair, total  # noqa: E402
from kb.notes.grounding import normalize_text  # noqa: E402
from kb.papers.add import read_pdf  # noqa: E402
from schemas.claim import ClaimKind  # noqa: E402

CORPUS = ROOT / "benchmarks" / "data" / "pdfs"
CLAIMS, RESULTS = ".claims.yaml", ".results.yaml"  # the broader claims (tuning only); the worked results
SPLITS = ("tuning", "held-out")
COVER = 0.6  # share of a marked claim's words a draft must hold
ON_TOPIC = 0.4  # share of a draft's words that must be the marked claim's
JUNK = ("heading", "code", "reference", "caption")

# What a draft that is not prose looks like (this benchmark's own rules, to count the drafter's mistakes).
_SECTION = re.compile(r"^(?:[A-Z]|\d+)(?:\.\d+)*\.?(?:\s+[A-Z][\w-]*){0,8}\s*$|^[\d.\s]+$")
_CODE = re.compile(r"<-|^R?>\s|^\+\s|::|[{};]\s*$|\$\w|\w\(\w*\s*=\s|~\s*\w|\[\d*,\d*\]|^\s*\[\d+\]\s|"
                   r"\bStd\. Error\b|\bPr\(>|Signif\. codes|degrees of freedom|R-squared|Log-likelihood",
                   re.IGNORECASE)
_REFERENCE = re.compile(r"^\s*\[\d+\]|^[A-Z][\w'’-]+,? (?:[A-Z]{1,3}|[A-Z]\.(?: ?[A-Z]\.)*)"
                        r"(?:,| and| \(| et al)|^[A-Z][\w'’-]+ [A-Z]{1,3}, .*\(\d{4}[a-z]?\)|"
                        r"\bR package version\b|\bURL https?://|\bdoi:\s*10\.|\bJournal of\b.*\b\d+\(\d+\)")
_CAPTION = re.compile(r"^(?:Table|Figure|Fig\.)\s*[A-Z]?\d+[a-z]?\s*[:.]")


def category(quote: str) -> str | None:
    """Which kind of non-finding a drafted quote is ('heading', 'code', 'reference', 'caption'), or None."""
    text = " ".join(quote.split())
    if _CAPTION.match(text):
        return "caption"
    if _REFERENCE.search(text):
        return "reference"
    words = re.findall(r"[A-Za-z]{2,}", text)
    numbers = re.findall(r"-?\d[\d.,e-]*", text)
    if _CODE.search(text) or (len(numbers) >= 3 and len(numbers) >= len(words)):
        return "code"
    if _SECTION.match(text) or (len(words) <= 6 and not re.search(r"[.!?:;]$", text)):
        return "heading"
    return None


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", normalize_text(text)))


def stands_for(drafted: str, marked: str) -> bool:
    """Whether a drafted quote stands for a marked claim (the matching rule of the module docstring)."""
    drafted_words, marked_words = _words(drafted), _words(marked)
    shared = len(drafted_words & marked_words)
    return bool(marked_words and drafted_words) and shared >= COVER * len(marked_words) \
        and shared >= ON_TOPIC * len(drafted_words)


@dataclass(frozen=True)
class Marked:
    """A result claim a person marked in an article."""

    page: int
    kind: str
    quote: str


@dataclass
class Article:
    """One article's drafts against its marked claims."""

    name: str
    pages: int
    drafted: int
    marked: int
    matched: int
    marked_quantitative: int
    matched_quantitative: int
    junk: dict[str, int]
    extract_s: float
    draft_s: float
    rejected: int = 0  # drafted quotes the drafter's own review rejected (not verbatim, duplicates)
    drafted_quantitative: int = 0  # drafts with a number (the drafter's worked results, in a PDF's text)
    matched_quantitative_drafts: int = 0  # of those, the ones paired with a mark
    matched_on_page: int = 0  # paired drafts whose page (the claim's source.page) is the mark's
    false_positives: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.matched / self.drafted if self.drafted else 1.0

    @property
    def recall(self) -> float:
        return self.matched / self.marked if self.marked else 1.0


def load_marked(path: Path) -> list[Marked]:
    """The marked claims (``<name>.claims.yaml``) or worked results (``<name>.results.yaml``) of one article."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    marks = data["claims"] if "claims" in data else data["results"] or []
    return [Marked(page=int(c["page"]), kind=str(c["kind"]), quote=str(c["quote"])) for c in marks]


@lru_cache(maxsize=64)
def article_text(pdf: Path) -> tuple[str, float]:
    """The article's text as ``kb add`` stores it, and the seconds it took to extract (read once per run)."""
    start = time.perf_counter()
    text = read_pdf(pdf).text
    return text, time.perf_counter() - start


def split_of(pdf: Path) -> str:
    """The drafter's half of an article: its truth file's ``drafter_split``, else its ``split``.

    The layout's first held-out half was retired to tuning (its fields were read too often); the drafter's rules
    never looked at that half's output, so for the drafter it stays held out (``drafter_split``).
    """
    truth = json.loads(pdf.with_name(pdf.stem + ".truth.json").read_text(encoding="utf-8"))
    return str(truth.get("drafter_split", truth.get("split", "tuning")))


def score_article(pdf: Path, marks: str = CLAIMS, model: Any = None) -> Article:
    """Extract, draft (with ``model``, a LangChain chat model, when given) and score one article."""
    text, extract_s = article_text(pdf)
    extracted = time.perf_counter()
    result = draft(text, analyzers={}, model=model)
    quotes = [claim.quote for claim in result.claims]
    pages = [claim.page for claim in result.claims]
    numbered = {i for i, claim in enumerate(result.claims) if claim.kind == ClaimKind.quantitative}
    drafted = time.perf_counter()
    marked = load_marked(pdf.with_name(pdf.stem + marks))
    pairs = pair(quotes, marked, lambda quote, claim: stands_for(quote, claim.quote))
    kinds = [category(q) for q in quotes]
    return Article(
        name=pdf.stem, pages=text.count("\f") + 1, drafted=len(quotes), marked=len(marked),
        matched=len(pairs),
        marked_quantitative=sum(c.kind == "quantitative" for c in marked),
        matched_quantitative=sum(marked[i].kind == "quantitative" for i in pairs),
        junk={kind: kinds.count(kind) for kind in JUNK},
        extract_s=extract_s, draft_s=drafted - extracted, rejected=len(result.rejected),
        drafted_quantitative=len(numbered), matched_quantitative_drafts=len(numbered & set(pairs.values())),
        matched_on_page=sum(pages[d] == marked[i].page for i, d in pairs.items()),
        false_positives=[q for d, q in enumerate(quotes) if d not in set(pairs.values())],
        missed=[f"p{c.page}: {c.quote}" for i, c in enumerate(marked) if i not in pairs])


def run_corpus(names: list[str] | None = None, marks: str = CLAIMS, split: str | None = None,
               model: Any = None) -> list[Article]:
    """Score every article of the corpus that has marks of this kind (or those named, or those of one half)."""
    pdfs = sorted(CORPUS / (p.name.removesuffix(marks) + ".pdf") for p in CORPUS.glob(f"*{marks}"))
    return [score_article(pdf, marks, model) for pdf in pdfs
            if (names is None or pdf.stem in names) and (split is None or split_of(pdf) == split)]


def run_results(split: str, names: list[str] | None = None, model: Any = None) -> list[Article]:
    """The drafts of one half of the corpus scored against its worked results."""
    return run_corpus(names, RESULTS, split, model)


def overall(articles: list[Article]) -> dict[str, float]:
    """Micro-averaged precision and recall, and the summed counts."""
    drafted = sum(a.drafted for a in articles)
    marked = sum(a.marked for a in articles)
    matched = sum(a.matched for a in articles)
    quantitative = sum(a.marked_quantitative for a in articles)
    numbered = sum(a.drafted_quantitative for a in articles)
    numbered_hits = sum(a.matched_quantitative_drafts for a in articles)
    on_page = sum(a.matched_on_page for a in articles)
    return {"drafted": drafted, "marked": marked, "matched": matched,
            "page_agreement": on_page / matched if matched else 1.0,
            "drafted_quantitative": numbered,
            "precision_quantitative": numbered_hits / numbered if numbered else 1.0,
            "precision": matched / drafted if drafted else 1.0, "recall": matched / marked if marked else 1.0,
            "recall_quantitative": sum(a.matched_quantitative for a in articles) / quantitative
            if quantitative else 1.0,
            **{kind: sum(a.junk[kind] for a in articles) for kind in JUNK}}


def _short(text: str, width: int = 110) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _corpus_report(articles: list[Article], errors: bool) -> None:
    print(f"{'article':24s} {'pages':>5s} {'drafts':>6s} {'marked':>6s} {'hit':>4s} {'P':>5s} {'R':>5s} "
          f"{'head':>4s} {'code':>4s} {'refs':>4s} {'capt':>4s} {'extract':>8s} {'draft':>6s}")
    for a in articles:
        print(f"{a.name:24s} {a.pages:5d} {a.drafted:6d} {a.marked:6d} {a.matched:4d} {a.precision:5.2f} "
              f"{a.recall:5.2f} {a.junk['heading']:4d} {a.junk['code']:4d} {a.junk['reference']:4d} "
              f"{a.junk['caption']:4d} {a.extract_s * 1000:6.0f}ms {a.draft_s * 1000:4.0f}ms")
    o = overall(articles)
    print(f"{'all (micro)':24s} {sum(a.pages for a in articles):5d} {o['drafted']:6d} {o['marked']:6d} "
          f"{o['matched']:4d} {o['precision']:5.2f} {o['recall']:5.2f} {o['heading']:4d} {o['code']:4d} "
          f"{o['reference']:4d} {o['caption']:4d}")
    print(f"precision of the {o['drafted_quantitative']} drafts with a number (the drafter's worked results): "
          f"{o['precision_quantitative']:.2f}")
    on_page = sum(a.matched_on_page for a in articles)
    print(f"page: {on_page} of the {o['matched']} matched drafts name the marked claim's page "
          f"({o['page_agreement']:.2f})")
    quantitative = sum(a.marked_quantitative for a in articles)
    recall_quantitative = (f"recall on the {quantitative} quantitative claims: {o['recall_quantitative']:.2f}; "
                           if quantitative else "")
    print(f"rejected by the drafter's own review: {sum(a.rejected for a in articles)}; {recall_quantitative}"
          f"match: a draft holds >= {COVER:.0%} of a marked sentence's words and >= {ON_TOPIC:.0%} of its words "
          "are the sentence's, one to one")
    if errors:
        for a in articles:
            for quote in a.false_positives:
                print(f"FP {a.name} [{category(quote) or '-'}]: {_short(quote)}")
            for quote in a.missed:
                print(f"FN {a.name}: {_short(quote)}")


def _line(name: str, score: Score) -> str:
    return (f"{name:28s} {score.drafted:7d} {score.labels:6d} {score.quantitative_labels:5d} "
            f"{score.precision:5.2f} {score.recall:5.2f} {score.recall_quantitative:7.2f}")


def _eval_set_report(errors: bool) -> None:
    passages = load_eval_set()
    start = time.perf_counter()
    scores = evaluate(passages)
    elapsed = time.perf_counter() - start
    held_out = {p.name for p in passages if p.held_out}
    print(f"{'passage':28s} {'drafted':>7s} {'labels':>6s} {'quant':>5s} {'P':>5s} {'R':>5s} {'R_quant':>7s}")
    for name, score in scores.items():
        print(_line(name, score))
    print(_line("tuning set (micro)", total(s for n, s in scores.items() if n not in held_out)))
    print(_line("held-out set (micro)", total(s for n, s in scores.items() if n in held_out)))
    print(_line("all (micro)", total(scores.values())))
    print(f"fallback drafter on {len(passages)} passages ({sum(len(p.text) for p in passages):,} characters) "
          f"in {elapsed * 1000:.0f} ms")
    if errors:
        for name, score in scores.items():
            for quote in score.unmatched_drafted:
                print(f"FP {name}: {_short(quote)}")
            for quote in score.missed_labels:
                print(f"FN {name}: {_short(quote)}")


def _as_json(articles: list[Article]) -> dict[str, Any]:
    return {"articles": [asdict(a) | {"precision": a.precision, "recall": a.recall} for a in articles],
            "overall": overall(articles)}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--errors", action="store_true", help="List false positives and missed claims.")
    parser.add_argument("--json", action="store_true", help="Print the real-article results as JSON only.")
    parser.add_argument("--results-only", action="store_true",
                        help="Only the worked results of the tuning and held-out halves.")
    parser.add_argument("--model", help="Draft with this chat model (e.g. openai:gpt-4o-mini), not the rules.")
    parser.add_argument("--split", choices=SPLITS,
                        help="Only this half's worked results (tune on 'tuning' only).")
    parser.add_argument("--articles", type=lambda names: names.split(","), metavar="NAME,...",
                        help="Only these articles (names of their PDFs without .pdf; a quick run of the report).")
    args = parser.parse_args()
    model = None
    if args.model:
        from kb.agents.config import chat_model

        model = chat_model(args.model)
    halves = {split: run_results(split, args.articles, model) for split in SPLITS if args.split in (None, split)}
    articles = [] if args.results_only or args.split or model is not None else run_corpus(args.articles)
    if args.json:
        print(json.dumps({"claims": _as_json(articles), **{f"results_{split}": _as_json(found)
                                                           for split, found in halves.items()}}, indent=1))
        return
    drafter = f"the chat model {args.model}" if model is not None else "the deterministic drafter"
    for split, found in halves.items():
        print(f"Worked results, {split} half ({len(found)} articles, marked by hand), drafted by {drafter}:")
        _corpus_report(found, args.errors)
        print()
    if not articles:
        return
    print("Real articles (benchmarks/data/pdfs/, claims marked by hand):")
    _corpus_report(articles, args.errors)
    print("\nLabelled protein-model passages (kb/agents/eval_data/labels.yaml):")
    _eval_set_report(args.errors)


if __name__ == "__main__":
    main()
