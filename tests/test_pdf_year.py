"""The learned year fallback (kb/papers/pdf_year.py): its candidates and features on constructed pages, the
shipped model's file (its training set is drawn from the corpus' tuning half and nothing else; a retraining
reproduces it), and its place after the rules: it fills only a year they left empty, only when asked, and says so."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

from kb.papers.pdf_page import LearnedReaders, PdfArticle, Segment
from kb.papers.pdf_year import (
    FEATURES,
    YEAR_MODEL,
    YearModel,
    best_year,
    fill_year,
    model_from,
    shipped_model,
    year_candidates,
)
from tests.helpers.article_pdf import make_first_page_pdf
from tests.helpers.benchmarks import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "benchmarks" / "data" / "pdfs"
HEIGHT = 792.0  # a Letter page, in points


def _page(*lines: tuple[str, float, float]) -> list[tuple[list[Segment], float]]:
    """One page of (text, size, baseline height) lines, as ``read_pages`` gives page 1's layout."""
    return [([Segment(text, size, 72.0, 72.0 + 5 * len(text), y) for text, size, y in lines], HEIGHT)]


def _features_of(layouts: list[tuple[list[Segment], float]],
                 stamps: tuple[str, ...] = ()) -> dict[int, dict[str, float]]:
    """Each candidate year's features by name."""
    return {c.year: dict(zip(FEATURES, c.features, strict=True))
            for c in year_candidates(layouts, list(stamps), this_year=2026)}


def _years(layouts: list[tuple[list[Segment], float]], stamps: tuple[str, ...] = ()) -> list[int]:
    return [c.year for c in year_candidates(layouts, list(stamps), this_year=2026)]


def test_year_candidates_a_copyright_footer_beats_a_citation_in_the_prose() -> None:
    page = _page(("A Study of Things", 17, 700), ("Ada Lovelace", 11, 670),
                 ("as shown before (Smith, 2003), the method works on the whole data set and we", 10, 500),
                 ("© 2019 Elsevier Ltd. All rights reserved.", 8, 40))
    candidates = year_candidates(page, [], this_year=2026)
    by_year = {c.year: dict(zip(FEATURES, c.features, strict=True)) for c in candidates}
    assert by_year[2019]["copyright"] == 1.0 and by_year[2019]["margin"] == 1.0
    assert by_year[2003]["citation"] == 1.0 and by_year[2003]["parenthesised"] == 0.0  # '(Smith, 2003)'
    model = shipped_model()
    assert model.probability(candidates[1]) > model.probability(candidates[0])  # 2019 over 2003
    guess = best_year(candidates)
    assert guess is not None and guess.year == 2019


def test_year_candidates_a_year_inside_a_doi_url_or_number_is_none() -> None:
    page = _page(("doi:10.1016/j.jcp.2019.01.003", 8, 760), ("https://example.org/2018/paper.html", 8, 750),
                 ("arXiv:2003.01234 ada@2017.example.org", 8, 740), ("ISBN 1-2015-3 and 3.2014", 10, 400),
                 ("from 1990–2003 the series", 10, 380), ("in the year 1850 and 2999", 10, 360))
    assert _years(page) == []


def test_year_candidates_stop_at_the_reference_list() -> None:
    page = _page(("Title of the Paper", 17, 700), ("Published in the Journal of Things, 2012", 9, 60),
                 ("References", 12, 300), ("Smith J (2011) A title. Journal of Things 3, 1–2.", 9, 280))
    assert _years(page) == [2012]


def test_year_candidates_features_read_the_words_around_the_year() -> None:
    page = _page(("Proceedings of the Symposium, Vol. 3, No. 2, pp. 11–19, March 2014", 8, 770),
                 ("This draft was typeset on June 3, 2021.", 9, 60))
    stamp = "arXiv:1501.00001v1 [cs.LG] 1 Jan 2015"
    found = {c.year: dict(zip(FEATURES, c.features, strict=True))
             for c in year_candidates(page, [stamp], this_year=2026)}
    assert (found[2014]["meeting"], found[2014]["journal_numbers"], found[2014]["month_before"]) == (1, 1, 1)
    assert (found[2021]["draft"], found[2021]["full_date"], found[2021]["latest"]) == (1, 1, 1)
    assert found[2015]["arxiv"] == 1 and found[2015]["margin"] == 1  # a stamp is read as the margin's
    assert found[2014]["from_top"] < 0.05 < 0.9 < found[2021]["from_top"]


def test_year_candidates_a_month_is_no_citations_author() -> None:
    # a date's month, in any case, is no author: 'OCTOBER 2011' in a journal's footer was read as 'Smith 2011'
    page = _page(("SCIENCE VOL 334 28 OCTOBER 2011 517", 8, 30), ("Accepted: March 2019", 9, 50),
                 ("as Marshall 2003; and Mayer (2004) and Smith et al. (2005) showed, the method works on", 10, 400))
    found = _features_of(page)
    assert found[2011]["citation"] == found[2019]["citation"] == 0.0
    assert found[2011]["month_before"] == found[2019]["month_before"] == 1.0
    # a name that begins like a month ('Marshall', 'Mayer') is still an author's
    assert found[2003]["citation"] == found[2004]["citation"] == found[2005]["citation"] == 1.0


def test_year_candidates_a_citation_in_parentheses_is_no_citation_line() -> None:
    # '(2019)' after a journal's numbers is how a citation line prints the article's year; after an author's
    # name ('Hornik et al. (2013)') it is another work's: one cue each, never both
    page = _page(("Journal of Things 3 (2019), 11–19", 8, 770),
                 ("as the textcat package of Hornik et al. (2013) implements, and Genz (1999) showed", 10, 400))
    found = _features_of(page)
    assert (found[2019]["parenthesised"], found[2019]["citation"]) == (1.0, 0.0)
    assert (found[2013]["parenthesised"], found[2013]["citation"]) == (0.0, 1.0)
    assert (found[1999]["parenthesised"], found[1999]["citation"]) == (0.0, 1.0)


def test_year_candidates_a_cite_this_line_and_a_download_stamp() -> None:
    page = _page(("Cite This: J. Chem. Inf. Model. 2021, 61, 4827−4831", 8, 760),
                 ("Please cite this article as published in the Journal (Smith 2018).", 8, 740),
                 ("Downloaded via SOME UNIVERSITY on November 24, 2023 at 17:09:14 (UTC).", 7, 20),
                 ("Downloaded from https://academic.example.org/article by guest on 12 May 2024", 7, 10))
    found = _features_of(page)
    assert found[2021]["cite_as"] == found[2018]["cite_as"] == 1.0
    assert found[2021]["downloaded"] == found[2018]["downloaded"] == 0.0
    assert found[2023]["downloaded"] == found[2024]["downloaded"] == 1.0
    assert found[2023]["cite_as"] == found[2024]["cite_as"] == 0.0
    # a download stamp's date is the latest year printed, and yet the shipped model ranks it under the article's
    found_2021_first = year_candidates(_page(("Cite This: J. Chem. Inf. Model. 2021, 61, 4827−4831", 8, 760),
                                             ("Downloaded via SOME UNIVERSITY on November 24, 2023 at 17:09:14 "
                                              "(UTC).", 7, 20)), [], this_year=2026)
    guess = best_year(found_2021_first)
    assert guess is not None and guess.year == 2021


def test_year_model_probability_is_the_logistic_of_the_dot_product() -> None:
    model = YearModel(tuple(0.5 for _ in FEATURES), -1.0, 0.9)
    [candidate] = year_candidates(_page(("© 2019 The Authors", 8, 40)), [], this_year=2026)
    logit = -1.0 + 0.5 * sum(candidate.features)
    assert model.probability(candidate) == pytest.approx(1 / (1 + math.exp(-logit)), rel=1e-12)


def test_shipped_model_loads_with_this_modules_features_and_a_threshold() -> None:
    data = json.loads(YEAR_MODEL.read_text(encoding="utf-8"))
    model = shipped_model()
    assert data["features"] == list(FEATURES) and len(model.weights) == len(FEATURES)
    assert 0.5 <= model.threshold <= 1.0
    # the threshold was chosen so that the cross-validated fills are right at least 95 % of the time
    chosen = data["cross_validation"]["all_tuning_articles_as_if_rules_silent"]
    assert chosen["filled"] == 0 or chosen["precision"] >= data["target_precision"] == 0.95
    with pytest.raises(ValueError, match="features"):
        model_from({**data, "features": data["features"][::-1]})


@pytest.mark.skipif(not CORPUS.exists(), reason="the PDF corpus is missing: benchmarks/data/pdfs/")
def test_shipped_model_was_trained_on_the_tuning_half_and_no_held_out_article() -> None:
    tuning, held_out = set(), set()  # held_out: every article not in the tuning half (validation ones too)
    for truth_file in CORPUS.glob("*.truth.json"):
        truth = json.loads(truth_file.read_text(encoding="utf-8"))
        if truth.get("split") == "tuning":
            pdf = truth_file.with_name(truth_file.name.removesuffix(".truth.json") + ".pdf")
            tuning.add(hashlib.sha256(pdf.read_bytes()).hexdigest())
        else:  # a held-out or validation article's PDF is never opened: its truth file records its checksum
            held_out.add(truth["sha256"])
    trained = set(json.loads(YEAR_MODEL.read_text(encoding="utf-8"))["training_set"])
    # trained on the tuning half only (round 11: its 259 articles, round 10's retired held-out half and
    # validation batch among them); the half may grow after a training, a held-out article never enters it
    assert trained <= tuning and len(trained) >= 259
    assert not trained & held_out


def test_fit_reaches_the_minimum_an_independent_optimiser_finds() -> None:
    from scipy.optimize import minimize

    train_year_model = load_benchmark("train_year_model")
    rng = np.random.default_rng(7)
    features = rng.random((300, 5)).round(0)  # 0/1 features, as most of the model's are
    features[:, 4] = rng.random(300)  # and a continuous one
    labels = (rng.random(300) < 1 / (1 + np.exp(-(features @ [2.0, -1.0, 0.5, 0.0, 1.5] - 1.0)))).astype(float)
    weights, intercept = train_year_model.fit(features, labels)

    def objective(theta: np.ndarray) -> float:  # the same loss, written out again: log loss + L2 on the weights
        z = features @ theta[:5] + theta[5]
        return float(np.sum(np.log1p(np.exp(z)) - labels * z) + 0.5 * train_year_model.L2 * theta[:5] @ theta[:5])

    other = minimize(objective, np.zeros(6), method="Nelder-Mead",
                     options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 40000, "maxfev": 40000})
    assert weights == pytest.approx(other.x[:5], abs=1e-4) and intercept == pytest.approx(other.x[5], abs=1e-4)
    assert objective(np.append(weights, intercept)) <= other.fun + 1e-9  # Newton's is the lower of the two


def test_precision_interval_is_clopper_pearsons() -> None:
    interval = load_benchmark("train_year_model").precision_interval
    # all right in n: the exact lower bound solves p^n = 0.025; none right: the upper bound 1 - 0.025^(1/n)
    assert interval(36, 36)[0] == pytest.approx(0.025 ** (1 / 36), abs=1e-4) and interval(36, 36)[1] == 1.0
    assert interval(0, 5) == pytest.approx([0.0, 1 - 0.025 ** (1 / 5)], abs=1e-4)
    assert interval(35, 35)[0] < 0.9 <= interval(36, 36)[0]  # 36 fills, all right, are the fewest that pass 0.9
    # in general the interval's ends are beta quantiles (Clopper and Pearson's definition)
    from scipy.stats import beta

    for right, filled in ((2, 5), (86, 90), (9, 10)):
        assert interval(right, filled) == pytest.approx(
            [beta.ppf(0.025, right, filled - right + 1), beta.ppf(0.975, right + 1, filled - right)], abs=1e-4)
    assert interval(3, 0) is None


def test_the_default_follows_the_recorded_evidence() -> None:
    from kb.settings import Settings

    train_year_model = load_benchmark("train_year_model")
    data = json.loads(YEAR_MODEL.read_text(encoding="utf-8"))
    where_needed = data["cross_validation"]["articles_the_rules_left_empty"]
    lower = (where_needed["precision_95ci"] or [0.0])[0]
    assert where_needed["precision_95ci"] == train_year_model.precision_interval(where_needed["right"],
                                                                                 where_needed["filled"])
    assert data["default"]["lower_bound"] == lower
    assert data["default"]["on"] == (lower >= train_year_model.DEFAULT_LOWER_BOUND == 0.9)
    # the setting's default is what the evidence allows: a year kb is not sure of is left empty
    assert Settings.model_fields["learned_year"].default is data["default"]["on"]


@pytest.mark.slow  # reads the tuning PDFs and fits a model per article and one on them all (~90 s)
def test_shipped_model_is_reproduced_by_retraining() -> None:
    train_year_model = load_benchmark("train_year_model")
    shipped = json.loads(YEAR_MODEL.read_text(encoding="utf-8"))
    trained_on = set(shipped["training_set"])  # the tuning articles it was trained on (the half has grown)
    trained = train_year_model.train([a for a in train_year_model.tuning_articles() if a.sha256 in trained_on])
    assert trained["training_set"] == shipped["training_set"]
    assert trained["threshold"] == pytest.approx(shipped["threshold"], abs=1e-4)
    assert trained["weights"] == pytest.approx(shipped["weights"], abs=1e-4)
    assert trained["cross_validation"] == shipped["cross_validation"]
    assert trained["default"] == shipped["default"]


def test_fill_year_never_changes_a_year_the_rules_set() -> None:
    candidates = year_candidates(_page(("© 2019 Elsevier Ltd.", 8, 40)), [], this_year=2026)
    eager = YearModel(shipped_model().weights, shipped_model().intercept, threshold=0.0)  # fills anything
    ruled = PdfArticle(pages=["..."], year=2001)
    fill_year(ruled, candidates, eager)
    assert ruled.year == 2001 and not ruled.read_by
    empty = PdfArticle(pages=["..."])
    fill_year(empty, candidates, eager)
    assert empty.year == 2019 and empty.read_by["year"].startswith("layout (learned year ranker, p=0.")
    strict = YearModel(shipped_model().weights, shipped_model().intercept, threshold=1.0)  # fills nothing
    unsure = PdfArticle(pages=["..."])
    fill_year(unsure, candidates, strict)
    assert unsure.year is None and not unsure.read_by


def test_read_pdf_fills_the_year_the_rules_leave_empty_only_when_asked(tmp_path: Path) -> None:
    from kb.papers.add import read_pdf, unruled_notices
    from schemas.note import FieldSource

    # 'Accepted March 2019' states no publication a rule reads ('accepted in/at/by' does)
    pdf = make_first_page_pdf(tmp_path / "accepted.pdf", "Contacts from Attention Maps", "Ada Lovelace",
                              "University of Somewhere", footer=("Accepted March 2019",))
    plain = read_pdf(pdf)
    assert plain.year is None and "year" in plain.unread and not plain.read_by
    learned = read_pdf(pdf, LearnedReaders(year=True))
    assert learned.year == 2019 and "year" not in learned.unread
    assert learned.read_by["year"].startswith("layout (learned year ranker, p=")
    # told when the note is added, while the year is still the layout's; not once a lookup replaced it
    told = unruled_notices(learned)
    assert len(told) == 1 and told[0].startswith("year 2019 read by the layout (learned year ranker"), told
    learned.field_sources["year"] = FieldSource.CROSSREF
    assert unruled_notices(learned) == []
    # where a rule reads a year ('© 2017 Elsevier'), the fallback leaves it, whatever it would score
    ruled = make_first_page_pdf(tmp_path / "ruled.pdf", "Contacts from Attention Maps", "Ada Lovelace",
                                "University of Somewhere", footer=("Accepted March 2019", "© 2017 Elsevier Ltd."))
    assert read_pdf(ruled, LearnedReaders(year=True)).year == read_pdf(ruled).year == 2017


def test_kb_add_with_the_setting_stores_the_learned_year_and_says_to_check_it(
        kb_dirs: tuple[Path, Path], tmp_path: Path) -> None:
    from kb.notes.files import read_note
    from tests.helpers.cli import run_kb

    pdf = make_first_page_pdf(tmp_path / "accepted.pdf", "Contacts from Attention Maps", "Ada Lovelace",
                              "University of Somewhere", footer=("Accepted March 2019",))
    done = run_kb(*kb_dirs, "add", str(pdf), "--json", env={"KB_LEARNED_YEAR": "true", "KB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    note = read_note(Path(row["path"]))
    assert note.meta.year == 2019 and note.meta.field_sources["year"] == "layout-learned"
    assert "year 2019 read by the layout (learned year ranker, p=" in done.stderr, done.stderr
    # without the setting (the default) the year stays empty, and nothing is said of a ranker
    other = make_first_page_pdf(tmp_path / "other.pdf", "Attention Maps from Contacts", "Ada Lovelace",
                                "University of Somewhere", footer=("Accepted March 2019",))
    again = run_kb(*kb_dirs, "add", str(other), "--json", env={"KB_OFFLINE": "1"})
    assert again.returncode == 0, again.stderr
    (row,) = json.loads(again.stdout)
    assert read_note(Path(row["path"])).meta.year is None and "ranker" not in again.stderr
