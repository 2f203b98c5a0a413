"""The learned line labeller (kb/papers/pdf_roles.py): its inference against an independent computation, its
features on a constructed page, the rule by which it mends an abstract (with a hand-set model, so that the rule
is tested apart from the weights), the shipped model on a page of a common layout, and the shipped JSON against
its training script."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from kb.papers.pdf_page import PdfArticle, Segment
from kb.papers.pdf_roles import (
    DOUBTED,
    FEATURES,
    ROLE_MODEL,
    ROLES,
    RoleModel,
    abstract_opening,
    line_features,
    line_roles,
    mend_abstract,
    model_from,
    opening_chance,
)
from kb.settings import Settings
from tests.helpers.benchmarks import load_benchmark


def _at(text: str, y: float, size: float, x0: float = 72.0, x1: float = 540.0, style: str = "") -> Segment:
    return Segment(text, size, x0, x1, y, marked=text, style=style)


_PROSE = ("protein language models learn the grammar of sequences from millions of them and we show that their "
          "depth matters")


def _page() -> list[Segment]:
    """A common layout: a large title, a byline, an address, an 'Abstract' heading over its paragraph, a
    section heading and the body."""
    return [_at("Deep Protein Language Models Forget Their Inputs", 700, 17, 100, 510, "bold"),
            _at("Ada Lovelace, Alan Turing and Grace Hopper", 670, 11, 180, 430),
            _at("Department of Biology, University of Somewhere, 12345 Town, Country", 655, 9, 150, 460),
            _at("ada@somewhere.edu", 643, 9, 250, 360),
            _at("Abstract", 610, 10, 280, 330, "bold"),
            _at("Protein language models learn the grammar of sequences from millions of them, and we", 595, 9),
            _at("show that their depth matters: the last layers forget what the first ones learnt, and", 584, 9),
            _at("a probe of each layer says where. We give the numbers for three model families.", 573, 9),
            _at("1 Introduction", 545, 11, 72, 160, "bold"),
            *[_at(_PROSE, 530 - 11 * i, 10) for i in range(25)]]


def test_each_lines_probabilities_are_the_softmax_of_its_scores_computed_apart() -> None:
    rng = np.random.default_rng(7)
    weights = rng.normal(size=(len(ROLES), len(FEATURES)))
    intercepts = rng.normal(size=len(ROLES))
    model = RoleModel(tuple(map(tuple, weights.tolist())), tuple(intercepts.tolist()), 0.5)
    for row in line_features(_page()):
        scores = weights @ np.array(row) + intercepts
        expected = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
        got = model.probabilities(row)
        assert [got[r] for r in ROLES] == pytest.approx(expected.tolist(), rel=1e-9, abs=1e-12)
        assert math.fsum(got.values()) == pytest.approx(1.0)


def test_features_tell_a_title_a_byline_an_address_and_an_abstract_heading_apart() -> None:
    page = _page()
    rows = [dict(zip(FEATURES, row, strict=True)) for row in line_features(page)]
    title, byline, address, mail, heading, first = rows[:6]
    assert title["largest"] == 1.0 and title["size_rank"] == 0.0 and title["bold"] == 1.0
    assert sum(row["largest"] for row in rows) == 1.0
    assert byline["names"] == 1.0 and byline["prev_largest"] == 1.0 and title["next_names"] == 1.0
    assert address["institution"] == 1.0 and address["names"] == 0.0 and mail["email"] == 1.0
    assert heading["abstract_head"] == 1.0 and first["prev_abstract_head"] == 1.0
    assert first["size"] < 0 < title["size"] and rows[-1]["prose"] == 1.0 and first["from_top"] < rows[-1]["from_top"]


def _hand_set(abstract_on: str, threshold: float = 0.5) -> RoleModel:
    """A model that calls a line the abstract's where it has the feature ``abstract_on``, a byline's where it
    names people, and other elsewhere: the mending rule tested apart from any trained weights."""
    weights = [[0.0] * len(FEATURES) for _ in ROLES]
    weights[ROLES.index("abstract")][FEATURES.index(abstract_on)] = 12.0
    weights[ROLES.index("author")][FEATURES.index("names")] = 12.0
    return RoleModel(tuple(map(tuple, weights)), (4.0, -6.0, -6.0, -6.0, -6.0), threshold)


def _text(segments: list[Segment]) -> str:
    return "\n".join(s.text for s in segments)


def test_an_abstract_the_rules_read_from_a_byline_is_read_again_from_the_labelled_lines() -> None:
    page = _page()
    model = _hand_set("prev_abstract_head")  # the line under the heading: the abstract's first
    article = PdfArticle(pages=[_text(page)], abstract="Ada Lovelace, Alan Turing and Grace Hopper")
    roles = line_roles(page, model)
    assert opening_chance(page, roles, article.abstract or "") is not None
    assert (opening_chance(page, roles, article.abstract or "") or 1.0) < DOUBTED
    mend_abstract(article, page, _text(page), model)
    assert article.abstract is not None and article.abstract.startswith("Protein language models learn the")
    assert "1 Introduction" not in article.abstract  # read to its end as the rules read one
    assert article.read_by["abstract"].startswith("layout (learned line labeller, p=")


def test_the_rules_abstract_stays_where_the_labeller_does_not_doubt_it_or_finds_none() -> None:
    page = _page()
    rules = "Protein language models learn the grammar of sequences from millions of them, and we show"
    kept = PdfArticle(pages=[_text(page)], abstract=rules)
    mend_abstract(kept, page, _text(page), _hand_set("prose"))  # every prose line: the opening is not doubted
    assert kept.abstract == rules and not kept.read_by
    none = PdfArticle(pages=[_text(page)], abstract="Ada Lovelace, Alan Turing and Grace Hopper")
    mend_abstract(none, page, _text(page), _hand_set("prev_abstract_head", threshold=1.1))  # no line passes
    assert none.abstract == "Ada Lovelace, Alan Turing and Grace Hopper" and not none.read_by


def test_an_abstract_the_rules_left_empty_is_filled_and_its_reason_dropped() -> None:
    page = _page()
    article = PdfArticle(pages=[_text(page)], reasons={"abstract": "no 'Abstract' heading"})
    mend_abstract(article, page, _text(page), _hand_set("prev_abstract_head"))
    assert article.abstract and article.abstract.startswith("Protein language models")
    assert "abstract" not in article.reasons and "abstract" in article.read_by


def test_the_opening_walks_back_to_a_less_sure_first_line_and_past_a_bare_heading() -> None:
    page = _page()
    chances = [0.0] * len(page)
    chances[4], chances[5], chances[6] = 0.3, 0.3, 0.9  # heading, first line (under the threshold), second
    roles = [{r: (c if r == "abstract" else 1 - c) for r in ROLES} for c in chances]
    opening = abstract_opening(page, roles, 0.5)
    assert opening is not None and opening.words.startswith("Protein language models") and opening.chance == 0.9


def test_the_shipped_model_reads_a_common_layouts_title_byline_and_abstract() -> None:
    page = _page()
    called = [max(r, key=r.__getitem__) for r in line_roles(page)]
    assert called[0] == "title" and called[1] == "author"
    assert called[5:8] == ["abstract"] * 3 and called[-1] == "other"


def test_a_model_file_of_other_features_is_refused_with_what_to_do() -> None:
    data = json.loads(ROLE_MODEL.read_text(encoding="utf-8"))
    assert model_from(data).threshold == data["threshold"]
    with pytest.raises(ValueError, match="retrain it"):
        model_from({**data, "features": data["features"][:-1]})


def test_the_settings_default_is_the_one_the_model_file_records() -> None:
    data = json.loads(ROLE_MODEL.read_text(encoding="utf-8"))
    assert Settings.model_fields["learned_abstract"].default is data["default"]["on"]


@pytest.mark.slow  # ~4 min on 2 cores: every tuning article read, and the model fit 21 times
def test_the_shipped_model_is_what_its_training_script_makes_from_the_tuning_half() -> None:
    train = load_benchmark("train_role_model")
    shipped = json.loads(ROLE_MODEL.read_text(encoding="utf-8"))
    # its own training set: the tuning half grows after a training (held-out articles retired to it)
    assert train.same_model(train.train(train.tuning_articles(shipped["trained_on"]["names"])), shipped)
    moved = {**shipped, "weights": [[w + 0.01 for w in row] for row in shipped["weights"]]}
    assert not train.same_model(moved, shipped) and not train.same_model({**shipped, "threshold": 0.6}, shipped)


def test_the_shipped_model_was_trained_on_tuning_articles_only() -> None:
    """Its training set, by name, against the truth files' halves (no held-out or validation PDF is opened)."""
    corpus = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "pdfs"
    halves = {path.name.removesuffix(".truth.json"): json.loads(path.read_text(encoding="utf-8")).get("split", "tuning")
              for path in corpus.glob("*.truth.json")}
    trained = json.loads(ROLE_MODEL.read_text(encoding="utf-8"))["trained_on"]
    if not halves:
        pytest.skip("the PDF corpus is missing: benchmarks/data/pdfs/")
    assert len(trained["names"]) == trained["articles"] >= 299
    assert all(halves.get(name) == "tuning" for name in trained["names"])


def test_the_training_fit_is_the_penalised_multinomial_optimum_found_apart() -> None:
    """The script's fit (analytic gradient, L-BFGS) against the same objective written again here and
    minimised by another method with numerical gradients, on a small random design."""
    from scipy.optimize import minimize

    train = load_benchmark("train_role_model")
    rng = np.random.default_rng(3)
    features = rng.normal(size=(60, 3))
    labels = rng.integers(0, len(ROLES), size=60)
    weights, intercepts = train.fit(features, labels)
    k, d = len(ROLES), 3

    def objective(theta: np.ndarray) -> float:
        w, b = theta[:k * d].reshape(k, d), theta[k * d:]
        scores = features @ w.T + b
        log_norm = np.log(np.exp(scores).sum(axis=1))
        return float(-(scores[np.arange(60), labels] - log_norm).sum() + train.L2 / 2 * (w ** 2).sum())

    other = minimize(objective, np.zeros(k * d + k), method="Powell", options={"xtol": 1e-8, "ftol": 1e-12,
                                                                               "maxfev": 200_000})
    assert objective(np.concatenate([weights.ravel(), intercepts])) <= other.fun + 1e-6
    assert weights.ravel() == pytest.approx(other.x[:k * d], abs=1e-3)


CORPUS = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "pdfs"
INFOSYS = CORPUS / "process-discovery-infosys.pdf"  # Elsevier's boxes: no abstract heading the rules read


@pytest.mark.skipif(not INFOSYS.exists(), reason="the PDF corpus is missing: benchmarks/data/pdfs/")
def test_kb_add_with_the_setting_stores_the_labellers_abstract_and_says_to_check_it(
        kb_dirs: tuple[Path, Path]) -> None:
    from kb.notes.files import read_note
    from tests.helpers.cli import run_kb

    truth = json.loads(INFOSYS.with_name("process-discovery-infosys.truth.json").read_text(encoding="utf-8"))
    done = run_kb(*kb_dirs, "add", str(INFOSYS), "--json", env={"KB_LEARNED_ABSTRACT": "true", "KB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    note = read_note(Path(row["path"]))
    assert note.meta.field_sources["abstract"] == "layout-learned"
    assert truth["abstract"] in " ".join(note.body.split())
    assert "read by the layout (learned line labeller, p=" in done.stderr, done.stderr
    # without the setting (the default) the rules' reading alone: none here, and no word of a labeller
    from kb.papers.add import read_pdf

    plain = read_pdf(INFOSYS)
    assert plain.abstract is None and not plain.read_by and "abstract" in plain.unread


@pytest.mark.skipif(not INFOSYS.exists(), reason="the PDF corpus is missing: benchmarks/data/pdfs/")
def test_reading_with_the_labeller_imports_no_note_models() -> None:
    """The labeller folds text as quotes are (kb.notes.text_fold), in the PDF reader's child process, without
    the notes' models and settings (pydantic: a third of a second at every read)."""
    import subprocess
    import sys

    code = ("import json, sys; from pathlib import Path; from kb.papers.pdf_layout import read_article; "
            "from kb.papers.pdf_page import LearnedReaders; "
            "a = read_article(Path(sys.argv[1]), LearnedReaders(abstract=True)); "
            "print(json.dumps([a.read_by, sorted(sys.modules)]))")
    done = subprocess.run([sys.executable, "-c", code, str(INFOSYS)], capture_output=True, text=True, check=True)
    read_by, modules = json.loads(done.stdout)
    assert "abstract" in read_by  # (the labeller read this one: its folding ran)
    assert not {m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_settings", "sqlalchemy")}


def test_a_lines_style_is_the_same_in_every_process_where_its_letters_tie() -> None:
    """A segment's style and font are its letters' commonest; where two tie, the first met, whatever the
    process's hash seed (a set's order changed with it: the same PDF read a line italic in one run and upright
    in the next, and the labeller's features and the name-line rules with it)."""
    import os
    import subprocess
    import sys

    code = ("from kb.papers.pdf_page import _commonest; "
            "print(_commonest(['italic', '', '', 'italic']), _commonest(['', 'bold']), _commonest(['bold', '']))")
    said = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in range(8)}
    assert said == {"italic  bold\n"}
