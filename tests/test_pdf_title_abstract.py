"""Round 10's title and abstract rules (kb/papers/pdf_layout.py, pdf_abstract.py, pdf_page.py's font styles),
each on a constructed page: the real layout it was made from (the real articles are checked in
tests/test_real_pdfs.py) and variants of other templates the corpus does not hold. A journal's logo by its ISSN or
web address; a byline set in the title's size; a subtitle under a title that ends closed; a title told by its
weight alone over a name flush left; an unheaded abstract closed by the drop capital that opens the body."""

from __future__ import annotations

import pytest

from kb.papers.pdf_abstract import is_cover
from kb.papers.pdf_layout import cover_names, describe
from kb.papers.pdf_page import (
    _BOLD_NAME,
    _ITALIC_NAME,
    PdfArticle,
    Segment,
    _spelled_segments,
    clean_text,
    hyphenated_joins,
    own_hyphens,
)


def _at(text: str, y: float, size: float, x0: float, x1: float, style: str = "", font: str = "") -> Segment:
    return Segment(text, size, x0, x1, y, style=style, font=font)


def _described(segments: list[Segment], page: str = "") -> PdfArticle:
    article = PdfArticle(pages=[page or "\n".join(s.text for s in sorted(segments, key=lambda s: -s.y))])
    describe(article, segments)
    return article


_BODY = "the body of the article runs on in its columns with words of every kind in it"


def _body(top: float, size: float = 10.0, x0: float = 50.0, x1: float = 300.0, lines: int = 20) -> list[Segment]:
    return [_at(_BODY, top - 1.2 * size * i, size, x0, x1) for i in range(lines)]


# -- a journal's logo by its ISSN or its publisher's web address --------------------------------------------

def test_title_a_journals_logo_over_its_issn_and_web_address_is_no_title() -> None:
    """MDPI's 2011 template (Genes): the journal's name 'genes' in 36 pt italic at the top right over 'ISSN
    2073-4425' and 'www.mdpi.com/journal/genes', larger than the 18-pt title (before, 'genes' was taken)."""
    segments = [_at("Genes 2011, 2, 748-762; doi:10.3390/genes2040748", 778.8, 12, 50, 300),
                _at("genes", 711.7, 36, 459.7, 544.8, "italic"),
                _at("ISSN 2073-4425", 700.3, 12, 464, 545, "bold"),
                _at("www.mdpi.com/journal/genes", 684.4, 12, 400.3, 544.9),
                _at("Review", 669.8, 12, 49.4, 84.1, "italic"),
                _at("The Evolution of Protein Structures and Structural Ensembles", 638, 18, 50.3, 529.1, "bold"),
                _at("Under Functional Constraint", 617.4, 18, 50.1, 273.5, "bold"),
                _at("Jessica Siltberg-Liberles, Johan A. Grahnen and David A. Liberles", 584.7, 12, 49.8, 408.7,
                    "bold"),
                _at("Department of Molecular Biology, University of Wyoming, Laramie, WY 82071, USA", 556, 12, 50, 471),
                *_body(400, 12, 78, 517)]
    article = _described(segments)
    assert article.title == ("The Evolution of Protein Structures and Structural Ensembles Under Functional "
                             "Constraint")


@pytest.mark.parametrize(("logo", "address"), [
    # Elsevier's platform logo under its line (Current Opinion, the 2000s journals), larger than the title
    (_at("ScienceDirect", 739.3, 16.8, 199.1, 298.7), _at("Available online at www.sciencedirect.com", 762.2, 9.1,
                                                          160.6, 335.8)),
    # Taylor & Francis's cover: the journal's name over 'ISSN: ... (Print) ... (Online) Journal homepage: ...'
    (_at("Molecular Physics", 740, 18, 220, 390),
     _at("ISSN: 0026-8976 (Print) 1362-3028 (Online) Journal homepage: https://www.tandfonline.com/loi/tmph20",
         720, 8, 60, 540)),
    # a journal's eISSN under its name in the header's right corner
    (_at("Bioinformatics and Biology Insights", 745, 17, 330, 560), _at("EISSN 1177-9322", 730, 8, 470, 560)),
])
def test_title_a_logo_by_an_issn_or_a_publishers_address_in_other_templates(logo: Segment, address: Segment) -> None:
    segments = [logo, address, _at("Structure-based protein design with deep learning", 662.2, 16.3, 47.4, 442.1),
                _at("Sergey Ovchinnikov and Po-Ssu Huang", 644.4, 12, 47.5, 327.3), *_body(560)]
    assert _described(segments).title == "Structure-based protein design with deep learning"


def test_title_a_title_apart_from_a_web_address_stays_the_title() -> None:
    """A project's address under the names, three title sizes and more under the title, or beside it across
    the page, leaves the title whole."""
    segments = [_at("Protein Language Models at Scale", 700, 17, 150, 460),
                _at("Ada Lovelace and Alan Turing", 660, 12, 220, 390),
                _at("www.example.org/plm", 645, 10, 250, 360),
                _at("www.journal.example", 700, 8, 480, 560), *_body(560)]
    assert _described(segments).title == "Protein Language Models at Scale"


# -- a byline set in the title's size -----------------------------------------------------------------------

def test_title_ends_at_a_byline_in_its_size_and_another_style() -> None:
    """The IEEE signal-processing template (ICASSP): the title in bold capitals and the names in italic, both
    12 pt, the names over two rows split at their commas (before, the names were the title's last lines)."""
    segments = [_at("A HYBRID QUANTUM-CLASSICAL FUSION NEURAL NETWORK TO IMPROVE", 684, 12, 84.2, 529, "bold"),
                _at("PROTEIN-LIGAND BINDING AFFINITY PREDICTIONS FOR DRUG DISCOVERY", 672, 12, 83.5, 530.5, "bold"),
                _at("S. Banerjee", 649.3, 12, 108.2, 162.7, "italic"),
                _at(", S. He Yuxun", 650.3, 12, 167.8, 231.2, "italic"),
                _at(", S. Konakanchi", 650.3, 12, 236.2, 311.1, "italic"),
                _at("L. Domingo", 635.4, 12, 165.9, 222.7, "italic"),
                _at("and C. Johnson", 637.6, 12, 360.9, 434.8, "italic"),
                _at("Purdue University, The Data Mine, USA", 616.3, 10, 226.6, 393.3),
                _at("ABSTRACT", 565.3, 10, 149.7, 203, "bold"), *_body(545, 10, 54, 298)]
    article = _described(segments)
    assert article.title == ("A HYBRID QUANTUM-CLASSICAL FUSION NEURAL NETWORK TO IMPROVE PROTEIN-LIGAND BINDING "
                             "AFFINITY PREDICTIONS FOR DRUG DISCOVERY")


@pytest.mark.parametrize("byline", [
    # the article class with its title and byline in one size: the name two sizes and more under the title,
    # the date and the first heading under it in that size too
    [_at("Michael J. Downes", 657.3, 12, 113.8, 208.8),
     _at("November 1994; reprocessed January 2013", 631.6, 12, 53.5, 268.9),
     _at("Contents", 595, 12, 30.6, 81.9, "bold")],
    # a Word manuscript: title and names both 14-pt bold, the names set off by a blank line
    [_at("Ada Lovelace, Charles Babbage and Mary Somerville", 655, 12, 90, 260, "bold")],
    # names in small capitals' size-mate, upright under an italic title (a humanities journal's style)
    [_at("Ada Lovelace and Charles Babbage", 668, 12, 100, 240)],
])
def test_title_a_byline_in_the_titles_size_is_no_title_line(byline: list[Segment]) -> None:
    style = "italic" if byline[0].y == 668 else ""
    segments = [_at("Carrying on Dialog with TeX", 683.8, 12, 86.6, 236.4, style), *byline,
                *_body(560, 10, 30, 290)]
    assert _described(segments).title == "Carrying on Dialog with TeX"


def test_title_a_second_line_that_reads_as_names_at_the_titles_leading_stays_the_titles() -> None:
    """'Under Functional Constraint' reads as a name; at the title's leading, in its style, it is its line."""
    segments = [_at("The Evolution of Protein Structures and Structural Ensembles", 638, 18, 50, 529, "bold"),
                _at("Under Functional Constraint", 617.4, 18, 50, 273, "bold"),
                _at("Jessica Siltberg-Liberles and David A. Liberles", 584.7, 12, 50, 408), *_body(500)]
    assert _described(segments).title.endswith("Structural Ensembles Under Functional Constraint")  # type: ignore[union-attr]


# -- a subtitle under a title that ends closed ---------------------------------------------------------------

def test_title_a_subtitle_under_a_closed_title_over_the_byline_is_the_titles() -> None:
    """EMBO Reports' Science & Society essays: 'AI revolutions in biology' (28 pt) over the subtitle 'The joys
    and perils of AlphaFold' (12 pt, italic in a font whose name does not say so) over the names (12 pt,
    upright); joined as a citation joins them, with a colon (before, the title was the first line alone)."""
    segments = [_at("Science & Society", 715.3, 15.9, 42.7, 161.6),
                _at("AI revolutions in biology", 654.8, 27.9, 42.5, 331.3, font="AdvOTf1351f0c"),
                _at("The joys and perils of AlphaFold", 631.3, 12, 43.5, 195.6, font="AdvOT5199123b"),
                _at("Anastassis Perrakis", 603.5, 12, 42.5, 135.5, font="AdvOTa293a443"),
                _at("& Titia K Sixma*", 603.5, 12, 152.5, 232.9, font="AdvOTa293a443"),
                *_body(500, 8.3, 42, 204)]
    article = _described(segments)
    assert article.title == "AI revolutions in biology: The joys and perils of AlphaFold"
    assert [name for name, _ in article.authors] == ["Anastassis Perrakis", "Titia K Sixma"]


def test_title_a_subtitle_in_capitals_in_the_titles_weight_over_smaller_names() -> None:
    """A NeurIPS-style preprint: 'STaR: Self-Taught Reasoner' (17 pt bold) over 'Bootstrapping Reasoning With
    Reasoning' (14 pt bold, read as names) over the bold names in the body's size. The title has its colon:
    the lines are joined as printed."""
    segments = [_at("STaR: Self-Taught Reasoner", 679, 17.2, 202.2, 410.6, "bold"),
                _at("Bootstrapping Reasoning With Reasoning", 659.7, 14.3, 177.8, 434.2, "bold"),
                _at("Eric Zelikman", 619.6, 10, 193.9, 255.3, "bold"),
                _at(", Yuhuai Wu, Noah D. Goodman", 617.9, 10, 264.4, 413.7, "bold"),
                _at("Department of Computer Science, Stanford University", 606.1, 10, 199.9, 416.5),
                _at("Abstract", 559.7, 12, 283.9, 328.2, "bold"), *_body(540, 10, 144, 468)]
    assert _described(segments).title == "STaR: Self-Taught Reasoner Bootstrapping Reasoning With Reasoning"


@pytest.mark.parametrize(("title", "subtitle", "names", "joined"), [
    # LNCS's \subtitle: 14-pt bold title, 12-pt bold subtitle, 10-pt names
    (_at("Proof Assistants in Practice", 700, 14.3, 180, 430, "bold"),
     _at("Lessons from Ten Years of Formalised Mathematics", 682, 12, 150, 460, "bold"),
     [_at("Ada Lovelace and Alan Turing", 655, 10, 230, 380)],
     "Proof Assistants in Practice: Lessons from Ten Years of Formalised Mathematics"),
    # acmart's \subtitle in medium weight under the bold title, over 11-pt names
    (_at("Fast Protein Search", 700, 14.4, 200, 410, "bold"),
     _at("Lessons from a decade of learned indexes", 683, 12, 190, 420),
     [_at("Grace Hopper", 660, 11, 150, 230), _at("Edsger W. Dijkstra", 660, 11, 330, 430)],
     "Fast Protein Search: Lessons from a decade of learned indexes"),
])
def test_title_a_subtitle_under_a_closed_title_in_other_templates(title: Segment, subtitle: Segment,
                                                                  names: list[Segment], joined: str) -> None:
    segments = [title, subtitle, *names, *_body(560)]
    assert _described(segments).title == joined


@pytest.mark.parametrize("lines", [
    # the article class: the byline (12 pt) over an institution that reads as a name, in its size
    [_at("Ada Lovelace", 660, 12, 250, 330), _at("Google Research", 645, 12, 245, 335)],
    # IEEEtran's conference style: an upright 24-pt title, 11-pt names over italic 10-pt units read as names
    [_at("Ada Lovelace", 665, 11, 120, 200), _at("Machine Intelligence Group", 652, 10, 100, 220, "italic")],
    # R News: a line in the byline's size, style and font over 'by A' may be the byline's own: not taken
    [_at("The Interface to libsvm in package e1071", 675, 12, 189, 403, "bold", "SFRM1200"),
     _at("by David Meyer", 655, 12, 256, 337, "bold", "SFRM1200")],
])
def test_title_a_byline_larger_than_the_body_is_no_subtitle(lines: list[Segment]) -> None:
    segments = [_at("Protein Language Models at Scale", 690, 17.3, 150, 460), *lines, *_body(560)]
    assert _described(segments).title == "Protein Language Models at Scale"


# -- a title told by its weight alone, over a name flush left ----------------------------------------------

def test_title_in_bold_in_the_body_size_over_an_indented_name_in_a_column() -> None:
    """TUGboat (ltugboat): the title in bold at the head of the left column, in the body's size, over the
    author's name indented in upright type; the right column's lines run beside them (before, no title was
    found, and no abstract with it)."""
    left = [_at("TUGboat, Volume 32 (2011), No. 2", 735.5, 10, 72.4, 226),
            _at("The cals package: Multipage tables", 702.9, 10, 72, 246.8, "bold"),
            _at("with decorations", 692.8, 10, 71.8, 154.2, "bold"),
            _at("Oleg Parashchenko", 674.9, 10, 92.5, 174.2),
            _at("Abstract", 657, 10, 72.4, 115.2, "bold"),
            _at("Tables are one of the most complicated parts of any", 639.1, 10, 72, 296.1),
            _at("typesetting or publishing system, and LaTeX is no", 627.1, 10, 72.2, 295.8)]
    right = [_at("you want to make changes or just look at the implementation, the", 694.2 - 12 * i, 10, 315, 540)
             for i in range(30)]
    page = ("TUGboat, Volume 32 (2011), No. 2\nThe cals package: Multipage tables\nwith decorations\nOleg "
            "Parashchenko\nAbstract\nTables are one of the most complicated parts of any\ntypesetting or "
            "publishing system, and LaTeX is no\n1 Introduction\n")
    article = _described([*left, *right, *_body(600, 10, 72, 296, 30)], page)
    assert article.title == "The cals package: Multipage tables with decorations"
    assert (article.abstract or "").startswith("Tables are one of the most complicated parts of any")


@pytest.mark.parametrize("name", [
    _at("Ada Lovelace and Charles Babbage", 676, 12, 72, 260),  # a Word manuscript's names, flush left
    _at("Ada Lovelace", 676, 12, 300, 380),  # right-aligned under a flush-right bold title
])
def test_title_in_bold_over_plain_names_in_other_layouts(name: Segment) -> None:
    x0 = 72 if name.x0 == 72 else 200
    segments = [_at("Difference Engines and the Analytical Method", 700, 12, x0, 380, "bold"),
                _at("in Nineteenth-Century Computing", 688, 12, x0, 380, "bold"), name,
                *_body(640, 12, 72, 540, 30)]
    assert _described(segments).title == "Difference Engines and the Analytical Method in Nineteenth-Century Computing"


@pytest.mark.parametrize(("font", "style"), [
    ("SFBX1000", "bold"), ("SFSX1000", "bold"), ("ECBX1200", "bold"), ("SFXC1000", "bold"), ("CMSSBX10", "bold"),
    ("SFTI1000", "italic"), ("SFSL1000", "italic"), ("ECTI0900", "italic"), ("SFBI1000", "italic"),
    ("SFRM1000", ""), ("SFTT1000", ""), ("SFSS1000", ""), ("ECRM1000", ""), ("SFCC1000", ""),
])
def test_font_style_tex_t1_fonts_by_their_names(font: str, style: str) -> None:
    """cm-super's and the EC fonts' Type 1 names say their series and shape as Computer Modern's do ('SFBX1000'
    bold extended, 'SFTI1000' text italic); TUGboat's titles are set in them (before, all read upright)."""
    told = "italic" if _ITALIC_NAME.search(font) else "bold" if _BOLD_NAME.search(font) else ""
    assert told == style


# -- an unheaded abstract closed by the drop capital that opens the body --------------------------------------

_SUMMARY = ["An outstanding challenge in the field of molecular biology has been to understand the process",
            "by which proteins fold into their characteristic three-dimensional structures. Here, we report the",
            "results of atomic-level molecular dynamics simulations, over periods ranging between 100 ms",
            "and 1 ms, that reveal a set of common principles underlying the folding of 12 structurally diverse",
            "proteins, in an order highly correlated with their propensity to form in the unfolded state."]
_COLUMN = ["folding is a process of molecular", "self-assembly during which a disordered",
           "polypeptide chain collapses to form a compact", "and well-defined three-dimensional structure."]


def _science(third_column: bool = True, size: float = 9.0, capital: bool = True,
             body_right: float = 202) -> tuple[list[Segment], str]:
    segments = [_at("How Fast-Folding Proteins Fold", 695.1, 21.9, 37.5, 317.1),
                _at("Kresten Lindorff-Larsen, Stefano Piana, Ron O. Dror, David E. Shaw", 677, 9, 36.7, 325.6)]
    segments += [_at(line, 655.8 - 10.5 * i, size, 36.1, 375) for i, line in enumerate(_SUMMARY)]
    if capital:
        segments.append(_at("P", 570, 38.9, 36.6, 56.2))
    segments += [_at(line, 590 - 10.5 * i, 9, 57.9, body_right) for i, line in enumerate(_COLUMN)]
    segments += [_at(line, 480 - 10.5 * i, 9, 36, body_right) for i, line in enumerate(_COLUMN * 6)]
    beside = [_at("pertain to this variant, rather than the Engrailed", 700 - 10.5 * i, 9, 392, 558)
              for i in range(12)] if third_column else []
    page = "\n".join([s.text for s in segments[:2]] + _SUMMARY + ["Protein"] + _COLUMN * 7 + [s.text for s in beside])
    return segments + beside, page


def test_abstract_across_the_page_over_a_drop_capital_with_a_column_beside_it() -> None:
    """A Science Report: the summary in the body's size across two of three columns, no heading; a drop
    capital opens the body under it and the third column runs up beside it (before, no abstract: nothing set
    it apart in size, measure or style)."""
    segments, page = _science()
    article = _described(segments, page)
    assert article.abstract == " ".join(" ".join(_SUMMARY).split())


@pytest.mark.parametrize(("third_column", "size", "body_right"), [
    (False, 9.0, 202),  # a Science Research Article: two columns under the summary, none beside it
    (False, 9.0, 560),  # a magazine feature's standfirst over one wide column opening with a drop capital
    (True, 9.5, 202),  # a standfirst half a point larger (Scientific American), a column beside it
])
def test_abstract_over_a_drop_capital_in_other_layouts(third_column: bool, size: float, body_right: float) -> None:
    segments, page = _science(third_column, size, body_right=body_right)
    assert (_described(segments, page).abstract or "").endswith("their propensity to form in the unfolded state.")


def test_abstract_no_drop_capital_no_unheaded_abstract_in_the_bodys_size() -> None:
    """Without the capital, the same paragraph in the body's size may be the body's first: none is taken."""
    segments, page = _science(capital=False)
    assert _described(segments, page).abstract is None


def _nature(order: str = "body first", style: str = "bold", body_style: str = "",
            above: list[Segment] | None = None) -> list[Segment]:
    """Nature's Article (alphago-nature): the title and names, the bold summary across the page over the
    body's two upright columns, in the body's size; the PDF draws the summary after the columns."""
    head = [_at("Mastering the game of Go with deep neural networks and tree search", 640, 21.9, 46, 544),
            _at("David Silver, Aja Huang, Chris J. Maddison, Arthur Guez, Laurent Sifre", 610, 9.3, 46, 544)]
    summary = [_at(line, 532 - 10.5 * i, 9.3, 46, 544, style) for i, line in enumerate(_SUMMARY)]
    body = [_at(_BODY, 420 - 10.5 * i, 9.3, x0, x0 + 250, body_style) for x0 in (46, 301) for i in range(25)]
    return head + (above or []) + (body + summary if order == "body first" else summary + body)


@pytest.mark.parametrize(("order", "style"), [("body first", "bold"), ("summary first", "bold"),
                                               ("body first", "italic")])
def test_abstract_a_paragraph_in_another_style_under_the_names_wherever_the_text_order_draws_it(
        order: str, style: str) -> None:
    """Nature (alphago-nature): the bold summary under the names, drawn after the body's columns, so that
    the text order put the body under the names (before, no abstract); PNAS (salvinorin-kor-pnas): a bold
    abstract under the 'Edited by' line. The topmost paragraph under the author block set in a style the
    upright body is not set in, three lines or more in its column, is the abstract, read top to bottom."""
    assert _described(_nature(order, style)).abstract == " ".join(" ".join(_SUMMARY).split())
    edited = [_at("Edited by Erminio Costa, University of Illinois, Chicago, IL, and approved June 28, 2002", 580,
                  7, 46, 448)]
    assert _described(_nature(order, style, above=edited)).abstract == " ".join(" ".join(_SUMMARY).split())


def test_abstract_a_styled_paragraph_is_none_where_the_body_is_so_or_prose_stands_above_it() -> None:
    """The guards: a body set in bold throughout gives no bold paragraph its place; an upright paragraph of
    prose above the bold one is the page's first (the bold one may be a box)."""
    assert _described(_nature(body_style="bold")).abstract is None
    prose = [_at("We thank the many people who helped with this work over the years, and the reviewers.", 580,
                 9.3, 46, 544)]
    assert _described(_nature(above=prose)).abstract is None


def test_abstract_a_drop_capital_directly_under_the_names_leaves_no_abstract() -> None:
    """EMBO Reports' essays: the drop capital stands right under the byline; no paragraph above it."""
    segments = [_at("AI revolutions in biology", 655, 28, 42, 331), _at("Anastassis Perrakis & Titia K Sixma*",
                                                                        604, 12, 42, 233),
                _at("L", 538, 44, 43, 58), _at("ast December, the artificial intelligence", 558, 8.3, 62, 204),
                *_body(500, 8.3, 42, 204)]
    assert _described(segments).abstract is None


def test_title_a_line_under_an_open_end_in_another_style_goes_on_with_the_title() -> None:
    """The Journal of Cryptology (1988): 'The Dining Cryptographers Problem:' in bold over 'Unconditional Sender
    and Recipient Untraceability' in bold italic, within half a point of its size; the second line reads as
    names, but after the colon it is the title's."""
    segments = [_at("The Dining Cryptographers Problem:", 536.7, 14.26, 160.3, 377, "bold"),
                _at("Unconditional Sender and Recipient Untraceability", 520.7, 13.81, 123, 414.4, "italic"),
                _at("David Chaum", 499.3, 9.1, 238.7, 296.5), *_body(460, 9.1, 95, 440)]
    assert _described(segments).title == ("The Dining Cryptographers Problem: Unconditional Sender and Recipient "
                                          "Untraceability")


def test_title_a_mark_raised_off_the_names_row_is_no_subtitle() -> None:
    """Bioinformatics (OUP): the last name's marks '1,*' set in the names' size (in a font of marks) and raised
    off their row stand between the title and the names as a row of their own: no subtitle."""
    segments = [_at("Synergizing CRISPR/Cas9 off-target predictions", 624.9, 18, 63.7, 468.7),
                _at("for ensemble insights and practical applications", 601.9, 18, 63.2, 470),
                _at("Shixiong Zhang", 579.1, 12, 63.5, 145.1, font="Helvetica"),
                _at(", Xiangtao Li, Qiuzhen Lin and Ka-Chun Wong", 579.1, 12, 166, 440.3, font="Helvetica"),
                _at("1,*", 585.2, 12, 457.9, 470.3, font="CMSY10"), *_body(540, 8.5, 63, 477)]
    assert _described(segments).title == ("Synergizing CRISPR/Cas9 off-target predictions for ensemble insights and "
                                          "practical applications")


@pytest.mark.parametrize("line", [
    _at("Code: www.plm-example.org", 672, 10, 230, 380),  # a project's address, labelled, under the title
    _at("Project page at www.plm-example.org and data", 672, 10, 150, 460),
])
def test_title_a_projects_web_address_under_the_title_is_no_journals(line: Segment) -> None:
    segments = [_at("Protein Language Models at Scale", 690, 17, 150, 460), line,
                _at("Ada Lovelace and Alan Turing", 650, 12, 220, 390), *_body(560)]
    assert _described(segments).title == "Protein Language Models at Scale"


@pytest.mark.parametrize("line", [
    _at("March 12, 2021", 675, 12, 250, 340),  # a date under the title, over the names
    _at("Running title: Language models at scale", 675, 12, 180, 430),  # a labelled note
])
def test_title_a_date_or_a_labelled_note_over_the_byline_is_no_subtitle(line: Segment) -> None:
    segments = [_at("Protein Language Models at Scale", 700, 17, 150, 460), line,
                _at("Ada Lovelace and Alan Turing", 655, 11, 220, 390), *_body(560)]
    assert _described(segments).title == "Protein Language Models at Scale"


# -- round 10 second wave: a rubric set in the title's size above it -------------------------------------------

_ONEGIN = ("An Example of Statistical Investigation of the Text Eugene Onegin Concerning the Connection of "
           "Samples in Chains")


@pytest.mark.parametrize(("rubric", "title", "gap"), [
    # markov-onegin-cup: Science in Context's series, 15.9 pt like the title, 27.9 pt above it (its rows 18.4)
    ("Classical Text in Translation", ["An Example of Statistical Investigation of the Text Eugene",
                                       "Onegin Concerning the Connection of Samples in Chains"], 27.9),
    # a journal's series of reprinted classics in the title's type
    ("Classic Papers Revisited", ["Protein Language Models Learn the Contacts",
                                  "of Their Families Without Supervision"], 30.0),
    # a section's name over a three-row title
    ("Past Masters of Probability", ["What Attention Maps Say", "About the Structure", "of Proteins"], 26.0),
])
def test_title_a_rubric_in_the_titles_size_above_it_is_no_title_line(rubric: str, title: list[str],
                                                                      gap: float) -> None:
    """A short row further above the title than the title's rows stand apart is a rubric, not the title's."""
    top = 605.5
    rows = [_at(rubric, top, 15.9, 60.6, 235.1)]
    rows += [_at(line, top - gap - 18.4 * i, 15.9, 60, 423) for i, line in enumerate(title)]
    segments = [*rows, _at("A. A. Markov", rows[-1].y - 35, 12.9, 59.7, 128.9, "italic"),
                *_body(430, 11, 60, 430)]
    assert _described(segments).title == " ".join(title)


def test_title_a_short_first_row_at_the_titles_leading_stays_the_titles() -> None:
    """(the rubric rule's other side) a short first row at the title's own leading is its first line."""
    segments = [_at("Spacetime Geometry", 605.5, 15.9, 60.6, 235.1),
                _at("of Acoustics and Electromagnetism in", 587.1, 15.9, 60, 423),
                _at("Matter-Wave Interferometers", 568.7, 15.9, 60, 423),
                _at("Lucas Burns", 530, 12.9, 59.7, 128.9, "italic"), *_body(430, 11, 60, 430)]
    assert _described(segments).title == ("Spacetime Geometry of Acoustics and Electromagnetism in Matter-Wave "
                                          "Interferometers")


# -- round 10 second wave: a title in capitals as wide as the text block, in the body's size ------------------

@pytest.mark.parametrize(("title", "byline"), [
    # nonreversible-sampler-aoap: The Annals of Applied Probability (2000)
    (["ANALYSIS OF A NONREVERSIBLE MARKOV CHAIN SAMPLER"], "By Persi Diaconis, Susan Holmes and Radford M. Neal"),
    # two rows in capitals, the first as wide as the block (the Annals of Statistics' style)
    (["ON THE CONVERGENCE OF MARKOV CHAIN SAMPLERS WITH NONREVERSIBLE TRANSITION",
      "KERNELS AND THE DIFFUSIVE BEHAVIOUR OF RANDOM WALKS"],
     "By Persi Diaconis and Susan Holmes"),
    # one name (Statistical Science's style)
    (["A CONVERSATION ABOUT NONREVERSIBLE MARKOV CHAIN SAMPLING METHODS"], "By Radford M. Neal"),
])
def test_title_in_capitals_as_wide_as_the_block_over_a_by_byline(title: list[str], byline: str) -> None:
    """A title in capitals in the body's size, centred and as wide as the text block but for a few points,
    over a centred 'By' byline: the title (before, a line that wide was taken for prose and none was read)."""
    segments = [_at("The Annals of Applied Probability", 685.5, 6.0, 135.0, 229.4, "italic"),
                _at("2000, Vol. 10, No. 3, 726–752", 678.6, 6.0, 135.0, 215.7)]
    # the first row as wide as the block but for a few points (141.1 to 486.9), the next centred on it
    segments += [_at(line, 659.7 - 12 * i, 9.96, 141.1 if i == 0 else 314 - 3.3 * len(line),
                     486.9 if i == 0 else 314 + 3.3 * len(line)) for i, line in enumerate(title)]
    y = segments[-1].y - 25.6
    segments += [_at(byline, y, 9.96, 173.3, 450.6),
                 _at("Stanford University, Stanford University and INRA and University of Toronto", y - 18, 9.96,
                     134.8, 492.9),
                 *[_at("We analyze the convergence to stationarity of a simple nonreversible chain", y - 34 - 9 * i,
                       7.97, 176.8, 451.5) for i in range(5)],
                 *_body(y - 100, 9.96, 135.3, 493.2)]
    assert _described(segments).title == " ".join(title)


# -- round 11's third wave: a title line whose words an OCR layer set on baselines a few points apart ----------

@pytest.mark.parametrize(("words", "title"), [
    # serial-histograms-vldb: VLDB 1993 scanned, each word on its own baseline, 'of Serial' 3 points higher
    ([("of Serial", 718.5, 284.7, 341.4), ("Universality", 715.2, 181.4, 254.1), ("Histograms", 715.1, 358.3, 429.0)],
     "Universality of Serial Histograms"),
    # a skewed scan: the line's words climb from left to right
    ([("Histograms", 719.0, 358.3, 429.0), ("of Serial", 717.4, 284.7, 341.4), ("Universality", 715.2, 181.4, 254.1)],
     "Universality of Serial Histograms"),
    # two lines, the second's words a point apart: each line read left to right, the first over the second
    ([("Query Optimization", 742.1, 200.0, 340.0), ("Robust", 741.0, 150.0, 195.0),
      ("in", 721.1, 150.0, 160.0), ("Relational", 723.4, 165.0, 230.0), ("Databases", 722.3, 235.0, 305.0)],
     "Robust Query Optimization in Relational Databases"),
])
def test_title_words_of_one_line_a_few_points_apart_are_read_left_to_right(
        words: list[tuple[str, float, float, float]], title: str) -> None:
    """An OCR layer boxes each word on its own baseline: the words of a title line within a third of the
    title's size of each other are one line, read left to right, not top to bottom."""
    segments = [*(_at(text, y, 15.7, x0, x1) for text, y, x0, x1 in words),
                _at("Yannis E. Ioannidis", 690.6, 10.9, 259.6, 359.6),
                _at("University of Wisconsin", 661.3, 10.9, 257.1, 368.2),
                _at("Abstract", 600.5, 13.1, 80.8, 125.3), *_body(588.0, 9.3)]
    assert _described(segments).title == title


# -- round 11 (third wave): marks under the title, a journal's header over its volume line, letter-spaced and
# small-capital headings, an archive's cover sheet ------------------------------------------------------------

def _elsevier_names(mark: str, x0: float = 124.3) -> list[Segment]:
    """Spatial Statistics (2016): 11-pt names after commas, each name's raised letter marks (9 pt) a little
    above their row, the first name's on a line of its own in the text's order."""
    return [_at("Olga Lyashevska", 436.9, 11, 40.3, 122.2), _at(mark, 442.7, 9, x0, x0 + 4 * len(mark)),
            _at(", Dick J. Brus", 436.9, 11, 135.6, 196.4), _at(", Jaap van der Meer", 436.9, 11, 204, 299.8)]


@pytest.mark.parametrize("mark", [
    "a,∗",  # grid-spacing-spasta: the first name's letter and the corresponding author's star
    "a,b",  # two letters (PNAS's and Cell's lettered addresses)
    "b,c",  # the letters of a second and third address
])
def test_title_a_names_raised_letter_marks_are_no_subtitle(mark: str) -> None:
    """A title ending in a line that a lower-case line would go on with ('and zero-inflation'), over names whose
    raised letter marks stand a little above their row: the marks start in lower case but are no subtitle's line
    (before, 'a,' ended the title: '... and zero-inflation a,')."""
    segments = [_at("Grid-spacing and the quality of abundance maps", 494.5, 14, 40.4, 350),
                _at("for species that show spatial autocorrelation", 477.3, 14, 40.5, 324.7),
                _at("and zero-inflation", 462.9, 14, 40.3, 155.2), *_elsevier_names(mark),
                _at("Department of Marine Ecology, NIOZ Royal Netherlands Institute for Sea Research", 423.5, 6.6,
                    43.7, 341.6, "italic"), *_body(360, 7.5, 40, 422)]
    assert _described(segments).title == ("Grid-spacing and the quality of abundance maps for species that show "
                                          "spatial autocorrelation and zero-inflation")


def test_title_a_lower_case_line_of_words_under_the_title_still_goes_on_with_it() -> None:
    """The rule's other side: a line of words in lower case under the title is its subtitle's ('in R' too)."""
    segments = [_at("Mixed models for repeated measures", 494.5, 14, 40.4, 350),
                _at("in R", 477.3, 12, 40.5, 70), *_elsevier_names("a,∗"), *_body(360, 7.5, 40, 422)]
    assert _described(segments).title == "Mixed models for repeated measures in R"


@pytest.mark.parametrize(("header", "title"), [
    # spectral-norm-jipam: JIPAM's name over two lines, its address and the volume line, all above the title
    ([("Journal of Inequalities in Pure and", 764.8, 14.3), ("Applied Mathematics", 750.8, 14.3),
      ("http://jipam.vu.edu.au/", 730.1, 12.0), ("Volume 6, Issue 4, Article 124, 2005", 706.6, 10.9)],
     "LOWER BOUNDS FOR THE SPECTRAL NORM"),
    # the Electronic Journal of Statistics' header: its name over its volume and DOI lines
    ([("Electronic Journal of Statistics", 760, 15), ("Vol. 4 (2010) 1–20", 742, 9),
      ("DOI: 10.1214/09-EJS521", 731, 9)],
     "Sparse recovery under weak moment assumptions"),
    # a society's journal on one line over its volume line, in a size larger than the title's
    ([("Proceedings of the Edinburgh Mathematical Society", 760, 14), ("Volume 48, Number 2, 2005", 744, 10)],
     "On the spectral radius of nonnegative matrices"),
])
def test_title_a_journals_header_stacked_over_its_volume_line_is_no_title(header: list[tuple[str, float, float]],
                                                                          title: str) -> None:
    """The lines stacked over a journal's volume line, each within a few of its sizes of the line under it, are
    the journal's header however large it is set (before, JIPAM's 'Applied Mathematics http://jipam.vu.edu.au/'
    was the title)."""
    segments = [_at(text, y, size, 300 - 3 * len(text), 300 + 3 * len(text)) for text, y, size in header]
    segments += [_at(title, 663, 12, 165.7, 431.8, "bold"),
                 _at("JORMA K. MERIKOSKI AND RAVINDER KUMAR", 645.1, 10, 189, 408.6),
                 _at("UNIVERSITY OF TAMPERE, FINLAND", 616.9, 10, 199.2, 398.2), *_body(440, 10.9, 72, 525)]
    assert _described(segments).title == title


@pytest.mark.parametrize("volume_y", [
    640,  # more than a few of the title's sizes under it
    688,  # directly under it, with no line larger than the body under the volume line: a note, not a header
])
def test_title_a_title_over_a_volume_line_stays_the_title(volume_y: float) -> None:
    """The rule's other side: a title over a volume line is no header where it stands well above it, or where no
    title is set under the volume line."""
    segments = [_at("On the spectral radius of nonnegative matrices", 700, 16, 120, 480, "bold"),
                _at("Appeared in Volume 48, Number 2, 2005", volume_y, 10, 240, 360),
                _at("Ada Lovelace and Alan Turing", 620, 11, 220, 380), *_body(560, 10.9, 72, 525)]
    assert _described(segments).title == "On the spectral radius of nonnegative matrices"


_SPACED_ABSTRACT = "The effect of grid-spacing on the quality of species abundance maps is explored for species."


@pytest.mark.parametrize(("info", "head"), [
    (["a r t i c l e", "i n f o"], "a b s t r a c t"),  # grid-spacing-spasta: Elsevier's lower-case heads
    (["A R T I C L E  I N F O"], "A B S T R A C T"),  # Elsevier's later template, in capitals
    ([], "S U M M A R Y"),  # a letter-spaced summary heading over its text alone
])
def test_abstract_under_a_letter_spaced_heading(info: list[str], head: str) -> None:
    """Boxes' heads set letter-spaced ('a r t i c l e  i n f o' over the dates and keywords, 'a b s t r a c t'
    over the abstract): they end the author block, and the abstract is the text under its heading, without it
    (before, the abstract opened 'a b s t r a c t The effect ...', and the info column's lines were an
    address)."""
    segments = [_at("Grid-spacing and the quality of abundance maps", 494.5, 14, 40.4, 350),
                _at("Olga Lyashevska and Jaap van der Meer", 436.9, 11, 40.3, 300),
                _at("NIOZ Royal Netherlands Institute for Sea Research, Den Burg, Texel", 423.5, 6.6, 43.7, 341.6,
                    "italic")]
    segments += [_at(text, 377.5, 9.3, 39.8 + 65 * i, 93.1 + 65 * i) for i, text in enumerate(info)]
    segments += [_at("Article history:", 357.1, 6.6, 39.5, 82.4, "italic")] if info else []
    segments += [_at(head, 377.6, 10, 195.8, 261.1), _at(_SPACED_ABSTRACT, 356, 7.5, 195.6, 422),
                 _at("1. Introduction", 179.1, 8.3, 40.5, 102.1, "bold"), *_body(150, 8.3, 40, 422, 8)]
    page = "\n".join(["Grid-spacing and the quality of abundance maps", "Olga Lyashevska and Jaap van der Meer",
                      "NIOZ Royal Netherlands Institute for Sea Research, Den Burg, Texel", " ".join(info),
                      *(["Article history:"] if info else []), head, _SPACED_ABSTRACT, "1. Introduction", _BODY])
    article = _described(segments, page)
    assert article.abstract == _SPACED_ABSTRACT
    assert article.authors == [("Olga Lyashevska", "NIOZ Royal Netherlands Institute for Sea Research, Den Burg, "
                                                    "Texel"), ("Jaap van der Meer", "NIOZ Royal Netherlands "
                                                                                    "Institute for Sea Research, "
                                                                                    "Den Burg, Texel")]


_NORM_ABSTRACT = "Let A be a complex m × n matrix. We find simple and good lower bounds for its spectral norm."


@pytest.mark.parametrize(("heading", "marked"), [
    ("ABSTRACT", "A⟨BSTRACT⟩"),  # spectral-norm-jipam: JIPAM's run-in heading in small capitals
    ("SUMMARY", "S⟨UMMARY⟩"),  # a summary so headed
    ("ABSTRACT", "A⟨BSTRACT⟩:"),  # closed by a colon
])
def test_abstract_a_run_in_small_capital_heading_read_as_a_mark(heading: str, marked: str) -> None:
    """A run-in heading in small capitals whose smaller capitals the extractor took for a raised mark (the
    segment's text 'A. Let A be ...', marked 'A⟨BSTRACT⟩. Let A be ...'; the page's text has 'ABSTRACT.'): the
    abstract's heading, which ends the author block (before, the block ran on to the abstract's lines and none
    was read)."""
    stop = marked[-1] if marked.endswith(":") else "."
    segments = [_at("LOWER BOUNDS FOR THE SPECTRAL NORM", 663, 12, 165.7, 431.8, "bold"),
                _at("JORMA K. MERIKOSKI AND RAVINDER KUMAR", 645.1, 10, 189, 408.6),
                _at("UNIVERSITY OF TAMPERE, FINLAND", 616.9, 10, 199.2, 398.2),
                _at("DAYALBAGH EDUCATIONAL INSTITUTE", 571.6, 10, 215.7, 381.9),
                _at("Received 20 December, 2004; accepted 01 September, 2005", 508, 10.9, 168.5, 428.8, "italic"),
                Segment(f"{heading[0]}{stop} {_NORM_ABSTRACT}", 10, 108.3, 489.3, 439.7,
                        marked=f"{marked.rstrip(':')}{stop} {_NORM_ABSTRACT}"),
                _at("Key words and phrases: Spectral norm, Singular values.", 388.9, 9, 72.1, 274.3),
                _at("1. INTRODUCTION", 327.6, 12, 250.5, 347.9, "bold"), *_body(300, 10.9, 72, 525, 12)]
    page = "\n".join(["LOWER BOUNDS FOR THE SPECTRAL NORM", "JORMA K. MERIKOSKI AND RAVINDER KUMAR",
                      "UNIVERSITY OF TAMPERE, FINLAND", "DAYALBAGH EDUCATIONAL INSTITUTE",
                      "Received 20 December, 2004; accepted 01 September, 2005",
                      f"{heading}{stop} {_NORM_ABSTRACT}", "Key words and phrases: Spectral norm, Singular values.",
                      "1. INTRODUCTION", _BODY])
    assert _described(segments, page).abstract == _NORM_ABSTRACT


_ARTICLE_PAGE = ("Econometrica, Vol. 53, No. 6 (November, 1985)\nCONTINUOUS AUCTIONS AND INSIDER TRADING\n"
                 "BY ALBERT S. KYLEI\nA dynamic model of insider trading with sequential auctions, structured to\n"
                 "resemble a sequential equilibrium, is used to examine the informational content of prices.\n"
                 "1. INTRODUCTION\nHow QUICKLY IS NEW PRIVATE INFORMATION about the underlying value of a")


@pytest.mark.parametrize("cover", [
    # kyle-insider-econometrica: JSTOR's cover sheet
    "Continuous Auctions and Insider Trading\nAuthor(s): Albert S. Kyle\nSource: Econometrica , Nov., 1985, Vol. "
    "53, No. 6 (Nov., 1985), pp. 1315-1335\nPublished by: The Econometric Society\nStable URL: "
    "https://www.jstor.org/stable/1913210\nJSTOR is a not-for-profit service that helps scholars",
    # Taylor & Francis's cover sheet
    "Quantitative Finance\nISSN: 1469-7688 (Print) 1469-7696 (Online) Journal homepage: "
    "https://www.tandfonline.com/loi/rquf20\nEmpirical properties of asset returns\nRama Cont\nTo cite this "
    "article: Rama Cont (2001) Empirical properties of asset returns, Quantitative Finance, 1:2, 223-236\nTo link "
    "to this article: https://doi.org/10.1080/713665670\nPublished online: 09 Dec 2010.",
    # JSTOR's sheet of a two-author article, its labels indented
    "On the Theory of Infinitely Repeated Games\n  Author(s): Stephen A. Ross and Joseph E. Stiglitz\n  Source: "
    "The Review of Economic Studies , Jan., 1971, Vol. 38, No. 1\n  Stable URL: https://www.jstor.org/stable/2296",
])
def test_cover_an_archives_cover_sheet_before_an_unheaded_abstract(cover: str) -> None:
    """Page 1 with two or more of a digital archive's labelled lines ('Author(s):', 'Source:', 'Stable URL:', 'To
    cite this article:', ...) is a cover sheet, though the article's page 2 has no 'Abstract' heading (before,
    page 1 was read as the article: the cover's lines ran together into the title)."""
    assert is_cover([cover, _ARTICLE_PAGE])


def test_cover_an_articles_own_labelled_lines_make_no_cover_sheet() -> None:
    """The rule's other side: an article's page 1 with labelled lines of its own ('Source: World Bank' under a
    table, a journal's 'Published online:' and 'Published by:') is no cover sheet."""
    page = ("A Study of Growth\nAda Lovelace\nPublished online: 12 May 2020\nPublished by: Alpha Press\n"
            "Table 1: Growth by country\nSource: World Bank (2019)\nText.")
    assert not is_cover([page, _ARTICLE_PAGE])


@pytest.mark.parametrize(("page", "cover", "spelled"), [
    # kyle-insider-econometrica: the footnote mark '1' read as 'I' by the OCR, the name in title case
    ([("Albert S. Kylei", None)], "Author(s): Albert S. Kyle", ["Albert S. Kyle"]),
    # two names, a digit and a star glued to them
    ([("Stephen A. Ross2", None), ("Joseph E. Stiglitz*", "Princeton University")],
     "Author(s): Stephen A. Ross and Joseph E. Stiglitz", ["Stephen A. Ross", "Joseph E. Stiglitz"]),
    # no name read on the article's page: the cover's
    ([], "Author(s): Albert S. Kyle, Kerry Back", ["Albert S. Kyle", "Kerry Back"]),
])
def test_cover_names_spelled_as_the_cover_sheet_spells_them(page: list[tuple[str, str | None]], cover: str,
                                                            spelled: list[str]) -> None:
    """The article page's names as the cover sheet before it spells them, where a footnote mark the text layer
    glued to a name is all that differs (before, 'Albert S. Kylei'); affiliations stay the page's."""
    named = cover_names(page, [f"A Title\n{cover}\nSource: Econometrica , 1985"])
    assert [name for name, _ in named] == spelled
    assert [affiliation for _, affiliation in named] == [affiliation for _, affiliation in page] or not page


def test_cover_names_another_name_stays_as_the_page_prints_it() -> None:
    """The rule's other side: a page's name that is not the cover's, but for a glued mark, is left as printed
    ('Albert S. Kyleson' is no 'Albert S. Kyle' with a mark)."""
    page = [("Albert S. Kyleson", None), ("Ada Lovelace", None)]
    assert cover_names(page, ["Author(s): Albert S. Kyle"]) == page
    assert cover_names(page, ["A cover sheet that names nobody"]) == page


@pytest.mark.parametrize("cover", [
    # clinic-simulation-jors: ResearchGate's cover over a 1999 article with an unheaded abstract
    "See discussions, stats, and author profiles for this publication at: https://www.researchgate.net/publication/"
    "200656908\nApplication of Discrete-Event Simulation in Health Care Clinics: A Survey\nArticle in Journal of "
    "the Operational Research Society · February 1999\nDOI: 10.1057/palgrave.jors.2600669\nCITATIONS READS\n692 "
    "6,046\n3 authors, including:\nSheldon H Jacobson\nUniversity of Illinois, Urbana-Champaign\nAll content "
    "following this page was uploaded by Sheldon H Jacobson on 09 February 2015.\nThe user has requested "
    "enhancement of the downloaded file.",
    # a conference paper's cover, its sentences indented
    "  See discussions, stats, and author profiles for this publication at: https://www.researchgate.net/publication/"
    "327854170\nProcess Mining and Simulation\nConference Paper · July 2018\n  All content following this page was "
    "uploaded by Ada Lovelace on 27 September 2018.",
    # a chapter's cover, a line between the sentences
    "See discussions, stats, and author profiles for this publication at: https://www.researchgate.net/publication/1"
    "\nA Chapter\nChapter · January 2015\nSome of the authors of this publication are also working on these related "
    "projects:\nAll content following this page was uploaded by Alan Turing on 01 March 2016.",
])
def test_cover_researchgates_cover_page_before_an_unheaded_abstract(cover: str) -> None:
    """ResearchGate's cover page ('See discussions, stats, and author profiles for this publication at: ...',
    'All content following this page was uploaded by ...') is a cover sheet, though the article's page 2 has no
    'Abstract' heading (before, page 1 was read as the article: no names, no abstract)."""
    assert is_cover([cover, _ARTICLE_PAGE])


# -- round 11 (fourth wave): a draft's circulation notice in the title block ----------------------------------

def _notice_page(block: list[Segment]) -> PdfArticle:
    """A page 1 with a one-line title over ``block`` (names, dates, notices, addresses) and the body."""
    return _described([_at("Swedish Labour Market Flows", 657, 17.2, 202, 410), *block, *_body(480, 10, 72, 540)])


def test_authors_a_drafts_circulation_notice_is_no_affiliation() -> None:
    """A working paper (labour-flows-working-paper): two names on one line over the date and a bold
    'Preliminary and incomplete - please do not cite', the institute only in the marks' footnotes. The notice
    says what readers may do with the text; it was every name's affiliation before."""
    article = _notice_page([_at("Hannes Malmberg", 618.9, 12, 170.3, 262.6),
                            _at("Niels-Jakob Harbo Hansen", 621.1, 12, 306.5, 441.9),
                            _at("February 18, 2016", 593.4, 12, 260.4, 351.5),
                            _at("Preliminary and incomplete - please do not cite", 560.1, 14.3, 137.9, 474,
                                "bold")])
    assert [name for name, _ in article.authors] == ["Hannes Malmberg", "Niels-Jakob Harbo Hansen"]
    assert all("cite" not in (affiliation or "") for _, affiliation in article.authors)


@pytest.mark.parametrize("notice", ["PRELIMINARY DRAFT: PLEASE DO NOT CIRCULATE",
                                    "Comments welcome. Not for quotation without the authors' permission."])
def test_authors_a_circulation_notice_between_the_names_and_their_address_leaves_the_address(notice: str) -> None:
    """The same notice in other working papers' layouts: in capitals between a name and its address (an NBER-
    style draft), or as 'Comments welcome. Not for quotation ...' there (a department's series): the address
    under it stays the name's affiliation, the notice no part of it."""
    article = _notice_page([_at("Ada Lovelace", 620, 12, 240, 330),
                            _at(notice, 600, 10, 150, 460),
                            _at("Department of Economics, Stockholm University", 585, 10, 170, 440)])
    assert article.authors == [("Ada Lovelace", "Department of Economics, Stockholm University")]


# -- round 11 (fourth wave): a word broken at its own hyphen across a line's end --------------------------------

@pytest.mark.parametrize(("texts", "spelled"), [
    # ICAD (phaserings-icad): the abstract's 'touch-' / 'screen', the paper writing 'touch-screen' throughout
    (["the use of dynamic touch\ufffescreen instruments", "a touch-screen ensemble", "touch-screen apps"],
     "touch-screen"),
    # a statistics paper writing 'non-linear' on its lines
    (["a non\ufffelinear model of the data", "the non-linear term", "non-linear least squares"], "non-linear"),
    # a machine-learning preprint's 'self-supervised'
    (["we pretrain a self\ufffesupervised encoder", "self-supervised learning"], "self-supervised"),
])
def test_text_a_word_broken_at_its_own_hyphen_keeps_it(texts: list[str], spelled: str) -> None:
    """pdfium joins a word a line's end broke, dropping the hyphen; where the document writes the word with
    its hyphen on one line more often than closed up, the hyphen was the word's own and stays (before,
    ICAD's abstract read 'touchscreen' where the paper writes 'touch-screen')."""
    assert spelled in own_hyphens(texts, hyphenated_joins(texts))[0]


def test_layout_page_ones_lines_spell_a_broken_word_as_the_document_does() -> None:
    """PLOS (astrocyte-bandits-pcbi): the title's 'contextually-' / 'guided', joined by pdfium into one line's
    'contextuallyguided', where the paper writes 'contextually-guided' on its lines: page 1's lines (the
    title's source) are spelled as the pages' text is. A word no line end broke, or one the document writes
    closed up, stays as it is."""
    texts = ["Astrocytes as a mechanism for contextually\ufffeguided network dynamics and function\n"
             "the perform\ufffeers", "contextually-guided control", "contextually-guided dynamics"]
    compounds = hyphenated_joins(texts)
    assert compounds == {"contextuallyguided": "contextually-guided"}
    line = _at("Astrocytes as a mechanism for contextuallyguided network dynamics", 641, 18, 200, 560)
    other = _at("the performers of contextuallyguidedness", 100, 10, 50, 300)
    assert [s.text for s in _spelled_segments([line, other], compounds)] == [
        "Astrocytes as a mechanism for contextually-guided network dynamics",
        "the performers of contextuallyguidedness"]


@pytest.mark.parametrize(("logo", "size"), [("PLOS COMPUTATIONAL BIOLOGY", 17.6), ("BMC Genomics", 24.0),
                                            ("Nucleic Acids Research", 20.0)])
def test_title_a_journals_name_over_the_title_is_its_logo(logo: str, size: float) -> None:
    """PLOS's logo 'PLOS COMPUTATIONAL BIOLOGY' set in the title's size over it (astrocyte-bandits-pcbi, before
    read as the title's first words), BMC's 'BMC Genomics' set larger under 'BioMed Central' (posa-bmc-genomics,
    before read as the title): a line that is a journal's whole name, nothing of its size above it, is the
    journal's logo. A title line under a larger one that names a journal stays the title's."""
    segments = [_at("BioMed Central", 741, 9.5, 450, 540), _at(logo, 738, size, 36, 400, "bold"),
                _at("POSA: Perl Objects for DNA Sequencing Data Analysis", 673, 17.9, 56, 500, "bold"),
                _at("Jan A Aerts, Bart J Jungerius and Martien AM Groenen", 655, 12, 56, 400),
                _at("Abstract", 600, 12, 56, 120, "bold"), *_body(580)]
    assert _described(segments).title == "POSA: Perl Objects for DNA Sequencing Data Analysis"
    titled = [_at("A Study of", 700, 24, 56, 300), _at("Nucleic Acids Research", 676, 24, 56, 300),
              _at("Jan A Aerts and Bart J Jungerius", 655, 12, 56, 400), _at("Abstract", 600, 12, 56, 120, "bold"),
              *_body(580)]
    assert _described(titled).title == "A Study of Nucleic Acids Research"


def test_text_a_word_the_measure_broke_is_joined() -> None:
    """The other side: a word written closed up elsewhere, or never with a hyphen, is joined ('perform-' /
    'ers'; 'co-' / 'operation' in a paper writing 'cooperation' more often than 'co-operation')."""
    texts = ["the perform\ufffeers and their co\ufffeoperation", "cooperation and cooperation", "co-operation"]
    assert own_hyphens(texts, hyphenated_joins(texts))[0] == "the perform\ufffeers and their co\ufffeoperation"
    assert clean_text(own_hyphens(texts, hyphenated_joins(texts))[0]) == "the performers and their cooperation"
