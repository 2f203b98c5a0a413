"""Round 10's author layouts, stated in general and tested on constructed page-1 segments: each rule on the
layout of the real article it was found on (tests/test_real_pdfs.py reads that article) and on layouts of other
templates the corpus does not hold (other marks, other wording, another order)."""

from __future__ import annotations

import pytest

from kb.papers.pdf_authors import block_authors, page_authors
from kb.papers.pdf_layout import describe
from kb.papers.pdf_names import ADDRESS, is_name_list, name_parts
from kb.papers.pdf_page import PdfArticle, Segment


def _at(text: str, y: float, size: float, x0: float, x1: float, marked: str = "", style: str = "") -> Segment:
    """A page-1 segment with its box; superscripts between the mark brackets in ``marked``."""
    return Segment(text, size, x0, x1, y, marked, style)


def _names(block: list[Segment]) -> list[str]:
    return [name for name, _ in block_authors(block)]


# -- a row of names set apart by space alone, each closed by its mark ------------------------------------------

def test_a_row_of_names_each_closed_by_its_raised_mark_is_a_list_of_names() -> None:
    """ICML (leep-icml) sets its names in a row with space between them and a raised number after each, on
    baselines that differ by a descender's depth: 'Cuong V. Nguyen¹  Tal Hassner²  Matthias Seeger¹  Cedric
    Archambeau¹'. Each mark stands where a list sets its comma: four names, not the last alone."""
    row = [("Cuong V. Nguyen", 138.0, 211.4, 639.3, "1"), ("Tal Hassner", 223.6, 274.1, 641.2, "2"),
           ("Matthias Seeger", 286.1, 354.8, 639.3, "1"), ("Cedric Archambeau", 367.1, 452.9, 641.2, "1")]
    block = []
    for name, x0, x1, y, mark in row:
        block += [_at(name, y, 10, x0, x1, style="bold"), _at(mark, 645.0, 7, x1 + 2, x1 + 4)]
    assert block_authors(block) == [("Cuong V. Nguyen", None), ("Tal Hassner", None), ("Matthias Seeger", None),
                                    ("Cedric Archambeau", None)]


def test_a_row_of_names_closed_by_marks_links_each_name_to_its_block() -> None:
    """One segment holding the row with its superscripts (NeurIPS: 'Jun Wang²*  Haozhao Wang¹*'), and other
    templates' marks: CVPR's symbols ('Alice Smith*  Bob Jones†' over '*University of Alpha  †Beta Labs'),
    letters ('Ada Lovelaceᵃ  Alan Turingᵇ  Grace Hopperᵃ')."""
    neurips = [_at("Jun Wang Haozhao Wang Ruixuan Li", 621, 10, 239, 429,
                   "Jun Wang⟨2∗⟩ Haozhao Wang⟨1∗⟩ Ruixuan Li⟨1∗⟩"),
               _at("School of Computer Science, Huazhong University of Science and Technology", 598, 10, 122, 502,
                   "⟨1⟩School of Computer Science, Huazhong University of Science and Technology"),
               _at("iWudao Tech", 588, 10, 286, 338, "⟨2⟩iWudao Tech")]
    assert block_authors(neurips) == [
        ("Jun Wang", "iWudao Tech"),
        ("Haozhao Wang", "School of Computer Science, Huazhong University of Science and Technology"),
        ("Ruixuan Li", "School of Computer Science, Huazhong University of Science and Technology")]
    cvpr = [_at("Alice Smith Bob Jones", 640, 12, 150, 450, "Alice Smith⟨*⟩ Bob Jones⟨†⟩"),
            _at("University of Alpha", 620, 11, 150, 280, "⟨*⟩University of Alpha"),
            _at("Beta Labs", 620, 11, 330, 450, "⟨†⟩Beta Labs")]
    assert block_authors(cvpr) == [("Alice Smith", "University of Alpha"), ("Bob Jones", "Beta Labs")]
    letters = [_at("Ada Lovelace Alan Turing Grace Hopper", 640, 12, 120, 480,
                   "Ada Lovelace⟨a⟩ Alan Turing⟨b⟩ Grace Hopper⟨a⟩"),
               _at("University of Alpha", 622, 10, 150, 300, "⟨a⟩University of Alpha"),
               _at("Gamma Institute", 610, 10, 150, 300, "⟨b⟩Gamma Institute")]
    assert block_authors(letters) == [("Ada Lovelace", "University of Alpha"), ("Alan Turing", "Gamma Institute"),
                                      ("Grace Hopper", "University of Alpha")]
    # A row of affiliation blocks opened by marks holds institutions, and words after a mark that name an
    # institution are no second name.
    blocks = [_at("Ada Lovelace", 640, 12, 150, 230, "Ada Lovelace⟨1,2⟩"),
              _at("University of Alpha Beta Labs", 622, 10, 120, 480, "⟨1⟩University of Alpha ⟨2⟩Beta Labs")]
    assert _names(blocks) == ["Ada Lovelace"]
    names = [_at("Ada Lovelace", 640, 12, 150, 230, "Ada Lovelace⟨1⟩"),
             _at("Gamma Delta Beta Labs", 622, 10, 120, 480, "Gamma Delta⟨1⟩ Beta Labs")]
    assert _names(names) == ["Ada Lovelace"]  # words after the mark that name an institution: no second name


def test_a_row_of_marked_names_in_another_weight_goes_on_with_the_names_above() -> None:
    """NeurIPS (d-separation-neurips) sets the first row of its author grid in bold and the next upright, every
    name closed by its mark: the upright row's names are the block's too. A line of names in another weight
    with no mark stays out ('Google Brain' upright under bold names), and so does an unmarked row under marked
    names."""
    grid = [_at("Wei Liu Jun Wang", 623, 10, 188, 300, "Wei Liu⟨1⟩ Jun Wang⟨2∗⟩", "bold"),
            _at("Zhiying Deng Yuankai Zhang", 609.5, 10, 213, 346, "Zhiying Deng⟨1⟩ Yuankai Zhang⟨1⟩"),
            _at("Huazhong University of Science and Technology", 598, 10, 122, 502,
                "⟨1⟩Huazhong University of Science and Technology"),
            _at("iWudao Tech", 588, 10, 286, 338, "⟨2⟩iWudao Tech")]
    hust = "Huazhong University of Science and Technology"
    assert block_authors(grid) == [("Wei Liu", hust), ("Jun Wang", "iWudao Tech"), ("Zhiying Deng", hust),
                                   ("Yuankai Zhang", hust)]
    iclr = [_at("Ada Lovelace Alan Turing", 640, 10, 150, 400, "Ada Lovelace⟨*⟩ Alan Turing⟨†⟩", "bold"),
            _at("Grace Hopper", 628, 10, 220, 300, "Grace Hopper⟨†⟩"),
            _at("University of Alpha", 616, 10, 180, 320, "⟨*⟩University of Alpha"),
            _at("Beta Labs", 604, 10, 220, 300, "⟨†⟩Beta Labs")]
    assert _names(iclr) == ["Ada Lovelace", "Alan Turing", "Grace Hopper"]
    brain = [_at("Ashish Vaswani", 640, 10, 150, 230, "Ashish Vaswani⟨*⟩", "bold"),
             _at("Google Brain", 628, 10, 150, 230)]
    assert _names(brain) == ["Ashish Vaswani"]
    unmarked = [_at("Ada Lovelace", 640, 10, 150, 230, "Ada Lovelace⟨1⟩", "bold"),
                _at("Alan Turing", 628, 10, 150, 230)]
    assert _names(unmarked) == ["Ada Lovelace"]


# -- marks after a name's comma -------------------------------------------------------------------------------

def test_symbols_after_a_names_superscript_are_its_marks_not_the_next_names() -> None:
    """Science (fast-folding-science) raises a number after the comma and sets the symbols after it on the
    line: 'Kresten Lindorff-Larsen,¹*† Stefano Piana,¹*† Ron O. Dror,¹ David E. Shaw¹,²†'. A name never opens
    with a mark: the symbols close the name before. So in other journals' orders: APS's 'Alice Smith,¹ †
    Bob Jones²', a symbol alone after the comma ('Dingwen Tao,∗ Sheng Di,†')."""
    science = _at("Kresten Lindorff-Larsen, *† Stefano Piana, *† Ron O. Dror, David E. Shaw†", 677, 9, 37, 326,
                  "Kresten Lindorff-Larsen,⟨1⟩ *† Stefano Piana,⟨1⟩ *† Ron O. Dror,⟨1⟩ David E. Shaw⟨1,2⟩†")
    assert name_parts(science) == [("Kresten Lindorff-Larsen", ["1", "*", "†"]), ("Stefano Piana", ["1", "*", "†"]),
                                   ("Ron O. Dror", ["1"]), ("David E. Shaw", ["1", "2"])]
    aps = _at("Alice Smith, † Bob Jones", 600, 10, 100, 300, "Alice Smith,⟨1⟩ † Bob Jones⟨2⟩")
    assert name_parts(aps) == [("Alice Smith", ["1", "†"]), ("Bob Jones", ["2"])]
    symbols = _at("Dingwen Tao,∗ Sheng Di,†", 600, 10, 100, 300)
    assert name_parts(symbols) == [("Dingwen Tao", ["*"]), ("Sheng Di", ["†"])]


def test_a_number_mark_that_keys_no_block_is_its_digits_run_together() -> None:
    """STaR (star-reasoner) prints 'Yuhuai Wu*¹²' (a superscript '*12', no comma) over '¹Department of
    Computer Science, Stanford University' and '²Google Research': no block 12, so the marks are 1 and 2, and
    his affiliation is block 1's. So '¹³' over blocks 1, 2 and 3; a block 12 that exists is block 12."""
    star = [_at("Eric Zelikman , Yuhuai Wu, Noah D. Goodman", 619, 10, 194, 414,
                "Eric Zelikman⟨∗1⟩ , Yuhuai Wu⟨∗12⟩, Noah D. Goodman⟨1⟩"),
            _at("Department of Computer Science, Stanford University", 606, 10, 200, 416,
                "⟨1⟩Department of Computer Science, Stanford University"),
            _at("Google Research", 595, 10, 275, 343, "⟨2⟩Google Research")]
    stanford = "Department of Computer Science, Stanford University"
    assert block_authors(star) == [("Eric Zelikman", stanford), ("Yuhuai Wu", stanford),
                                   ("Noah D. Goodman", stanford)]
    three = [_at("Ada Lovelace, Alan Turing", 640, 12, 150, 400, "Ada Lovelace⟨31⟩, Alan Turing⟨2⟩"),
             _at("University of Alpha", 622, 10, 150, 300, "⟨1⟩University of Alpha"),
             _at("Beta Labs", 610, 10, 150, 300, "⟨2⟩Beta Labs"), _at("Gamma College", 598, 10, 150, 300,
                                                                        "⟨3⟩Gamma College")]
    assert block_authors(three) == [("Ada Lovelace", "Gamma College"), ("Alan Turing", "Beta Labs")]
    twelve = [_at("Ada Lovelace", 640, 12, 150, 400, "Ada Lovelace⟨12⟩"),
              _at("University of Alpha", 622, 10, 150, 300, "⟨1⟩University of Alpha"),
              _at("Beta Labs", 610, 10, 150, 300, "⟨2⟩Beta Labs"),
              _at("Twelfth Institute", 598, 10, 150, 300, "⟨12⟩Twelfth Institute")]
    assert block_authors(twelve) == [("Ada Lovelace", "Twelfth Institute")]


# -- a title's words are no name's ----------------------------------------------------------------------------

def test_a_title_line_capitalised_as_a_title_is_no_line_of_names() -> None:
    """A title's second line or subtitle under its first, in the names' place, capitalises its words as names
    do ('Bootstrapping Reasoning With Reasoning', star-reasoner; 'Under Functional Constraint',
    protein-structure-evolution): a capitalised preposition, article or conjunction is in no name. Names with
    their particles, and names whose words merely begin so ('Forrest', 'Theodore', 'Andrews'), are names."""
    for title in ("Bootstrapping Reasoning With Reasoning", "Under Functional Constraint",
                  "Learning From Noisy Labels", "Towards Robust Models", "The Protein Universe",
                  "Deep Learning For Proteins"):
        assert not is_name_list(title), title
    for names in ("Laurens van der Maaten", "Forrest Theodore Andrews", "Ivan Rosa e Silva, Ana dos Santos",
                  "Fromm Underwood and Ofelia Withers"):
        assert is_name_list(names), names


def test_page_authors_a_titles_second_line_over_the_names_is_no_author() -> None:
    """MDPI's 2011 page (protein-structure-evolution): the title's second line, 'Under Functional Constraint',
    then the names with their stars set apart, the address, and the corresponding author's note: three
    authors at the address, the note nobody's affiliation."""
    block = [_at("Under Functional Constraint", 617, 18, 50, 274, style="bold"),
             _at("Jessica Siltberg-Liberles *, Johan A. Grahnen and David A. Liberles *", 585, 12, 50, 409,
                 style="bold"),
             _at("Department of Molecular Biology, University of Wyoming, Laramie, WY 82071, USA;", 556, 12, 50, 472),
             _at("E-Mail: jgrahnen@uwyo.edu", 539, 12, 50, 190),
             _at("* Author to whom correspondence should be addressed; E-Mails: jliberle@uwyo.edu", 510, 12, 50, 510)]
    wyoming = "Department of Molecular Biology, University of Wyoming, Laramie"
    assert page_authors(block, "") == [("Jessica Siltberg-Liberles", wyoming), ("Johan A. Grahnen", wyoming),
                                       ("David A. Liberles", wyoming)]


def test_a_note_on_the_authors_under_their_address_is_no_affiliation() -> None:
    """Under names without marks, a note on the authors is nobody's affiliation, in other wordings too
    ('† These authors contributed equally', '‡ Deceased')."""
    for note in ("† These authors contributed equally to this work", "‡ Deceased 3 March 2020",
                 "* Correspondence: ada@alpha.edu"):
        block = [_at("Ada Lovelace and Alan Turing", 640, 12, 150, 350), _at("Beta Labs", 622, 10, 200, 300),
                 _at(note, 610, 10, 150, 450)]
        assert block_authors(block) == [("Ada Lovelace", "Beta Labs"), ("Alan Turing", "Beta Labs")], note


# -- a name with its contact and its institution on one line --------------------------------------------------

def test_a_line_giving_a_name_its_contact_and_its_institution() -> None:
    """SciPy's proceedings (nitime-scipy) set each author on a line of their own: 'Ariel Rokem
    (arokem@berkeley.edu) – University of California, Berkeley, Berkeley, CA USA', name and e-mail upright, the
    institution in italic (so the lines' styles differ). The contact in brackets is no part of the name, the
    dash set apart separates name and institution as a comma does. So with an e-mail in angle brackets and an
    em dash, and with a comma."""
    scipy = [_at("Ariel Rokem (arokem@berkeley.edu) – University of California, Berkeley, Berkeley, CA USA",
                 747.5, 10, 74, 456, style="italic"),
             _at("Michael Trumpis (mtrumpis@berkeley.edu) – University of California, Berkeley, Berkeley, CA USA",
                 735.6, 10, 74, 484, style="italic"),
             _at("Fernando Pérez (Fernando.Perez@berkeley.edu) – University of California, Berkeley, Berkeley, CA "
                 "USA", 723.6, 10, 74, 508)]
    berkeley = "University of California, Berkeley, Berkeley, CA USA"
    assert block_authors(scipy) == [("Ariel Rokem", berkeley), ("Michael Trumpis", berkeley),
                                    ("Fernando Pérez", berkeley)]
    angle = [_at("Jane Doe <jane@alpha.org> — Beta Labs, Springfield", 640, 10, 74, 400),
             _at("John Roe (roe@gamma.edu), Gamma College, Shelbyville", 628, 10, 74, 400)]
    assert block_authors(angle) == [("Jane Doe", "Beta Labs, Springfield"), ("John Roe", "Gamma College, Shelbyville")]
    # only names before the dash make it a separator: an institution's parts keep theirs
    block = [_at("Ada Lovelace", 640, 12, 150, 230), _at("University of Alpha – Beta Campus", 622, 10, 120, 400)]
    assert block_authors(block) == [("Ada Lovelace", "University of Alpha – Beta Campus")]


# -- the lines under the title drawn after the body -----------------------------------------------------------

_TWO_COLUMNS = [_at("Introduction", 643, 12, 58, 123, style="bold"),
                _at("CORFUNC is the CCP13 program suite for correlation", 628, 10, 58, 288),
                _at("function analysis. Fundamentally, a correlation function describes how the density", 604, 10,
                    58, 288),
                _at("Small-Angle Neutron Scattering (SANS). Examples of", 642.5, 10, 308, 538),
                _at("the sort of colloidal system for which this type of analysis is routinely conducted", 606.5,
                    10, 308, 538)]


def test_describe_a_title_block_drawn_after_the_body_is_read_top_to_bottom() -> None:
    """Fibre Diffraction Review (corfunc-fdr) draws the body's two columns first and the title, names and
    address last: the names under the title, across both columns, are the author block. So in a Word-made
    page that draws its names and address after the body under a heading set flush left."""
    page = ("New Functionality in CORFUNC\nStephen King and Damian Flannery\nISIS Facility, Rutherford Appleton "
            "Laboratory, Chilton, OX11 0QX, UK\nIntroduction\nCORFUNC is the CCP13 program suite")
    fdr = [*_TWO_COLUMNS, _at("New Functionality in CORFUNC", 731, 14, 198, 397, style="bold"),
           _at("Stephen King and Damian Flannery", 706, 12, 211, 384),
           _at("ISIS Facility, Rutherford Appleton Laboratory, Chilton, OX11 0QX, UK", 683.5, 10, 152, 444)]
    article = PdfArticle(pages=[page])
    describe(article, fdr)
    isis = "ISIS Facility, Rutherford Appleton Laboratory, Chilton"
    assert article.authors == [("Stephen King", isis), ("Damian Flannery", isis)]
    word = [*_TWO_COLUMNS, _at("A Study of Things", 731, 16, 200, 400),
            _at("Ada Lovelace, Alan Turing", 706, 12, 230, 380),
            _at("Department of Statistics, University of Alpha", 690, 10, 180, 430)]
    article = PdfArticle(pages=["A Study of Things\nAda Lovelace, Alan Turing\nDepartment of Statistics\nText"])
    describe(article, word)
    assert [name for name, _ in article.authors] == ["Ada Lovelace", "Alan Turing"]
    # A right column drawn after the names and starting higher stays clear of the page's middle (the
    # Communications of the ACM, unix-timesharing): the text order stands, its first words are no names.
    segments = [_at("The UNIX Time-Sharing System", 640, 24, 77, 242),
                _at("Dennis M. Ritchie and Ken Thompson", 612, 14, 77, 293),
                _at("Since", 629, 10, 351, 373), _at("PDP-11", 629, 10, 379, 405),
                _at("became operational in February", 627, 10, 437, 571),
                _at("1971, about 40 installations have been put into service; they", 615, 10, 334, 571),
                _at("Bell Laboratories", 598, 14, 77, 174),
                _at("are generally smaller than the system described here. Most", 602, 10, 334, 572)]
    article = PdfArticle(pages=["The UNIX Time-Sharing System\nDennis M. Ritchie and Ken Thompson\nBell "
                                "Laboratories\nSince PDP-11 became operational"])
    describe(article, segments)
    assert [name for name, _ in article.authors] == ["Dennis M. Ritchie", "Ken Thompson"]


def test_a_british_postcode_is_an_address_part() -> None:
    """'Chilton, OX11 0QX, UK' (and 'Cambridge CB2 1TN', 'London E1 4NS'): an address, no institution's
    name; capitals and digits in other places are not ('COVID 19', 'CCP13')."""
    for part in ("OX11 0QX", "Cambridge CB2 1TN", "London E1 4NS", "EC1A 1BB"):
        assert ADDRESS.search(part), part
    for text in ("CCP13 program suite", "ISIS Facility", "Rutherford Appleton Laboratory"):
        assert not ADDRESS.search(text), text


# -- a line of names in the title's size ----------------------------------------------------------------------

def test_describe_a_line_of_names_in_the_titles_size_ends_the_title() -> None:
    """IEEE's ICASSP template (quantum-affinity-arxiv) sets the names in the title's 12 points, italic under
    the bold title, each with its mark; LaTeX's article class at one size (dialog-tex) sets 'Michael J.
    Downes' under the title in its size and face. A line of names set apart from the title by more than its
    line spacing, with a name's initial, a mark or another face, is the author block's first line, not the
    title's last. So for bold names under an upright title without initials (another template's order)."""
    body = [_at("The field of drug discovery hinges on the accurate prediction of binding affinity", 545 - 12 * i,
                10, 54, 298) for i in range(12)]
    icassp = [_at("A HYBRID QUANTUM-CLASSICAL FUSION NEURAL NETWORK TO IMPROVE", 684, 12, 84, 529, style="bold"),
              _at("PROTEIN-LIGAND BINDING AFFINITY PREDICTIONS", 672, 12, 84, 530, style="bold"),
              _at("S. Banerjee", 649.3, 12, 108, 163, "S. Banerjee⟨1⟩", "italic"),
              _at(", S. Roy", 650.3, 12, 168, 231, ", S. Roy⟨1⟩", "italic"),
              _at("and C. Johnson", 637.6, 12, 361, 435, "and C. Johnson⟨2⋆⟩", "italic"),
              _at("Purdue University, The Data Mine, USA", 616.3, 10, 227, 393, "⟨1⟩Purdue University, The Data "
                  "Mine, USA"),
              _at("Ingenii Inc., New York, USA", 602.3, 10, 252, 370, "⟨2⟩Ingenii Inc., New York, USA"),
              _at("ABSTRACT", 565.3, 10, 150, 203, style="bold"), *body]
    article = PdfArticle(pages=["A HYBRID QUANTUM-CLASSICAL FUSION NEURAL NETWORK TO IMPROVE\nPROTEIN-LIGAND "
                                "BINDING AFFINITY PREDICTIONS\nABSTRACT\nThe field of drug discovery hinges."])
    describe(article, icassp)
    assert article.title == ("A HYBRID QUANTUM-CLASSICAL FUSION NEURAL NETWORK TO IMPROVE PROTEIN-LIGAND BINDING "
                             "AFFINITY PREDICTIONS")
    purdue = "Purdue University, The Data Mine, USA"
    assert article.authors == [("S. Banerjee", purdue), ("S. Roy", purdue),
                               ("C. Johnson", "Ingenii Inc., New York, USA")]
    one_size = [_at("Carrying on Dialog with TEX", 683.8, 12, 86.6, 236.4),
                _at("Michael J. Downes", 657.3, 12, 113.8, 208.8),
                _at("November 1994; reprocessed January 2013", 631.6, 12, 53.5, 268.9), *body]
    article = PdfArticle(pages=["Carrying on Dialog with TEX\nMichael J. Downes\nNovember 1994\nThe field."])
    describe(article, one_size)
    assert (article.title, article.authors) == ("Carrying on Dialog with TEX", [("Michael J. Downes", None)])
    bold_names = [_at("Learning to Fold Proteins", 684, 14, 150, 450),
                  _at("Ada Lovelace and Alan Turing", 656, 14, 180, 420, style="bold"), *body]
    article = PdfArticle(pages=["Learning to Fold Proteins\nAda Lovelace and Alan Turing\nThe field."])
    describe(article, bold_names)
    assert (article.title, [n for n, _ in article.authors]) == ("Learning to Fold Proteins",
                                                                ["Ada Lovelace", "Alan Turing"])
    # A title's line in title case that reads like names, in the title's face, without initials or marks,
    # stays the title's, however far under the line above it.
    two_lines = [_at("Attention Networks for", 684, 14, 150, 450),
                 _at("Deep Residual Learning", 660, 14, 150, 450), *body]
    article = PdfArticle(pages=["Attention Networks for\nDeep Residual Learning\nThe field."])
    describe(article, two_lines)
    assert article.title == "Attention Networks for Deep Residual Learning"


# -- the title in the first of two columns, the body beside it ------------------------------------------------

_RIGHT_COLUMN = ["you want to make changes or just look at the implementation, the source code and support",
                 "available at http://github.com/olpa/tex/ in the", "directory cals. The package is small and",
                 "the rest of this section shows how it is used in a document of the usual kind"]


def test_describe_the_byline_under_a_title_in_the_first_column_is_read_in_that_column() -> None:
    """TUGboat (cals-tugboat) sets the title and 'Oleg Parashchenko' in the left column, the right column's
    prose level with them and under them: the right column's lines are the body's, wherever a reading by rows
    puts them ('available at http://...' between the title and the name ended the block before the name).
    So under a section heading instead of an abstract's (babelbib-tugboat's order), and with two names and an
    institution in a magazine's larger title."""
    right = [_at(line, 694.2 - 12 * i, 10, 314, 539) for i, line in enumerate(_RIGHT_COLUMN)]
    left = [_at("Tables are one of the most complicated parts of any typesetting system", 639 - 12 * i, 10, 72, 296)
            for i in range(8)]
    cals = [_at("The cals package: Multipage tables", 702.9, 12, 72, 247, style="bold"),
            _at("with decorations", 692.8, 12, 72, 154, style="bold"), *right,
            _at("Oleg Parashchenko", 674.9, 10, 92.5, 174.2), _at("Abstract", 657, 10, 72, 115), *left]
    article = PdfArticle(pages=["The cals package: Multipage tables\nwith decorations\nOleg Parashchenko\nAbstract\n"
                                "Tables are one of the most complicated parts of any typesetting system\n2 Use"])
    describe(article, cals)
    assert article.authors == [("Oleg Parashchenko", None)]
    section = [_at("Multilingual Bibliographies: Using and", 753, 12, 72, 268, style="bold"),
               _at("extending the babelbib package", 741, 12, 72, 225, style="bold"),
               *(_at(line, 748.5 - 12 * i, 10, 345, 537) for i, line in enumerate(_RIGHT_COLUMN)),
               _at("Harald Harders", 727, 10, 92, 159), _at("1 Introduction", 707, 10, 72, 152), *left]
    article = PdfArticle(pages=["Multilingual Bibliographies\nHarald Harders\n1 Introduction\nText"])
    describe(article, section)
    assert [name for name, _ in article.authors] == ["Harald Harders"]
    magazine = [_at("Folding Proteins Fast", 700, 18, 40, 250, style="bold"), *right,
                _at("Ada Lovelace and Alan Turing", 676, 10, 40, 200),
                _at("Department of Statistics, University of Alpha", 664, 10, 40, 260), *left]
    article = PdfArticle(pages=["Folding Proteins Fast\nAda Lovelace and Alan Turing\nDepartment of Statistics\nText"])
    describe(article, magazine)
    assert article.authors == [("Ada Lovelace", "Department of Statistics, University of Alpha"),
                               ("Alan Turing", "Department of Statistics, University of Alpha")]
    # Beside the title only a page number or a logo, no prose: no column, and names right of the page's middle
    # stay the block's.
    logo = [_at("Folding Proteins Fast", 700, 18, 40, 250, style="bold"), _at("OPEN ACCESS", 700, 9, 480, 540),
            _at("Ada Lovelace", 676, 10, 40, 120, "Ada Lovelace⟨1⟩"), _at("Alan Turing", 676, 10, 400, 480,
                                                                            "Alan Turing⟨1⟩"),
            _at("University of Alpha", 664, 10, 200, 320, "⟨1⟩University of Alpha"), *left]
    article = PdfArticle(pages=["Folding Proteins Fast\nAda Lovelace Alan Turing\nUniversity of Alpha\nText"])
    describe(article, logo)
    assert [name for name, _ in article.authors] == ["Ada Lovelace", "Alan Turing"]


# -- affiliations in page 1's footnote, opened by the names' marks ----------------------------------------------

# ICML's page 1 (leep-icml): the two columns of the body under the abstract's heading, in the body's 10 points.
_ICML_BODY = [_at("We introduce a new measure to evaluate the transferability of representations learned", 575 - 12 * i,
                  10, 75, 271) for i in range(30)] + [
             _at("choose good source models for a given target task (Achille et al., 2019), which", 605 - 12 * i, 10,
                 308, 541) for i in range(40)]
_ICML_PROCEEDINGS = [_at("Proceedings of the 37", 95, 9, 55, 138, style="italic"), _at("th", 101, 6, 139, 145),
                     _at("International Conference on Machine", 95, 9, 149, 289, style="italic"),
                     _at("Learning, Online, PMLR 119, 2020. Copyright 2020 by the author(s).", 75, 9, 55, 290)]


def _icml_page(names: list[tuple[str, str]], footnote: list[Segment]) -> PdfArticle:
    """An ICML page 1 read by ``describe``: the title, a row of names each closed by its raised mark
    (``names``: the name and its mark), the abstract's heading, the body, and ``footnote`` at the foot of the
    left column over the proceedings' lines."""
    row: list[Segment] = []
    x = 138.0
    for name, mark in names:
        width = 6.0 * len(name)
        row += [_at(name, 639.3, 10, x, x + width, style="bold"), _at(mark, 645, 7, x + width + 2, x + width + 4)]
        x += width + 14
    segments = [_at("LEEP: A New Measure to Evaluate Transferability of Learned Representations", 688, 14.3, 56, 541,
                    style="bold"), *row, _at("Abstract", 607, 12, 150, 195, style="bold"), *_ICML_BODY,
                *footnote, *_ICML_PROCEEDINGS]
    article = PdfArticle(pages=["LEEP: A New Measure to Evaluate Transferability of Learned Representations\n"
                                "Abstract\nWe introduce a new measure to evaluate the transferability."])
    describe(article, segments)
    return article


def test_describe_the_footnote_a_names_mark_opens_is_its_affiliation() -> None:
    """ICML (leep-icml) prints its institutions only in page 1's footnote, no institution's word in them:
    'Cuong V. Nguyen¹  Tal Hassner²  Matthias Seeger¹  Cedric Archambeau¹' over '¹Amazon Web Services ²Facebook
    AI (Work done before joining Facebook). Correspondence to: ...' in the footnote's smaller type, the raised
    '2' apart from its block's text. The block each name's mark opens is its affiliation, up to the aside and
    the correspondence note, and the proceedings' line under it is no part of it."""
    footnote = [_at("Amazon Web Services", 137, 8.9, 71, 151, "⟨1⟩Amazon Web Services"), _at("2", 141, 6, 154, 156),
                _at("Facebook AI (Work done before joining Facebook). Correspondence to: Cuong V. Nguyen "
                    "<nguycuo@amazon.com>.", 116, 9, 157, 291)]
    article = _icml_page([("Cuong V. Nguyen", "1"), ("Tal Hassner", "2"), ("Matthias Seeger", "1"),
                          ("Cedric Archambeau", "1")], footnote)
    assert article.authors == [("Cuong V. Nguyen", "Amazon Web Services"), ("Tal Hassner", "Facebook AI"),
                               ("Matthias Seeger", "Amazon Web Services"),
                               ("Cedric Archambeau", "Amazon Web Services")]


def test_describe_footnote_affiliations_in_other_templates_marks_and_orders() -> None:
    """The same class in other templates: symbols instead of numbers on one line (a CVPR workshop: '∗DeepMind
    †Meta AI'); a NeurIPS preprint's '∗Equal contribution' note first, the names' other marks then leading
    to a company and a university with its address; AISTATS's blocks one a line, a wrapped block going on
    after its comma."""
    symbols = _icml_page([("Ada Lovelace", "∗"), ("Alan Turing", "†")],
                         [_at("DeepMind Meta AI", 137, 9, 71, 200, "∗DeepMind †Meta AI")])
    assert symbols.authors == [("Ada Lovelace", "DeepMind"), ("Alan Turing", "Meta AI")]
    neurips = _icml_page([("Ada Lovelace", "∗,1"), ("Alan Turing", "∗,2"), ("Grace Hopper", "2")],
                         [_at("Equal contribution.", 140, 9, 71, 151, "⟨∗⟩Equal contribution."),
                          _at("Google Research, Mountain View, CA 94043 Department of Statistics, University of "
                              "Alpha, 12 Main Street", 128, 9, 71, 291, "⟨1⟩Google Research, Mountain View, CA "
                              "94043 ⟨2⟩Department of Statistics, University of Alpha, 12 Main Street")])
    alpha = "Department of Statistics, University of Alpha"
    assert neurips.authors == [("Ada Lovelace", "Google Research, Mountain View"), ("Alan Turing", alpha),
                               ("Grace Hopper", alpha)]
    aistats = _icml_page([("Ada Lovelace", "1"), ("Alan Turing", "2")],
                         [_at("Microsoft Research New England,", 140, 9, 71, 291,
                              "⟨1⟩Microsoft Research New England,"),
                          _at("Cambridge, MA", 130, 9, 71, 160),
                          _at("Max Planck Institute for Intelligent Systems", 120, 9, 71, 291,
                              "⟨2⟩Max Planck Institute for Intelligent Systems")])
    assert aistats.authors == [("Ada Lovelace", "Microsoft Research New England, Cambridge, MA"),
                               ("Alan Turing", "Max Planck Institute for Intelligent Systems")]


@pytest.mark.parametrize("star", ["* 1", "*1", "∗ 1", "1 *"])
def test_describe_an_equal_contribution_symbol_beside_a_names_number_is_one_mark(star: str) -> None:
    """ICML (aurora-icml) sets the equal-contribution star before the number with a space: 'Nathan Jay * 1
    Noga H. Rotman * 2 P. Brighten Godfrey 1', over the footnote '*Equal contribution ¹University of Illinois
    ... ²Hebrew University of Jerusalem'. The raised '* 1' is one mark of two keys: the note passed over, the
    number leads to the institution. (Two numbers with a space between them are no one mark.)"""
    article = _icml_page([("Ada Lovelace", star), ("Alan Turing", star.replace("1", "2")), ("Grace Hopper", "1")],
                         [_at("Equal contribution", 150, 9, 71, 151, "⟨*⟩Equal contribution"),
                          _at("University of Alpha", 140, 9, 71, 151, "⟨1⟩University of Alpha"),
                          _at("Beta Labs. Correspondence to: Ada Lovelace <ada@alpha.org>.", 130, 9, 71, 291,
                              "⟨2⟩Beta Labs. Correspondence to: Ada Lovelace <ada@alpha.org>.")])
    assert article.authors == [("Ada Lovelace", "University of Alpha"), ("Alan Turing", "Beta Labs"),
                               ("Grace Hopper", "University of Alpha")]


@pytest.mark.parametrize(("end", "place", "institution"), [
    ("University of", "Massachusetts, Amherst, MA 01003-9264, USA", "University of Massachusetts"),
    ("Universidade de", "São Paulo, 05508-090 São Paulo, Brazil", "Universidade de São Paulo"),
    ("Department of Computer Science &", "Engineering, 1234 Main Street, Boston, MA 02115", "Department of "
     "Computer Science & Engineering"),
])
def test_an_institution_broken_after_its_open_word_ends_on_the_address_line(end: str, place: str,
                                                                            institution: str) -> None:
    """Bioinformatics (model-search-bioinformatics): 'T J Brunette and Oliver Brock*' over 'Bioinformatics
    Research Laboratory, Department of Computer Science, University of' / 'Massachusetts, Amherst, MA
    01003-9264, USA'. The address line is left out of an author block, but the line above ends open: its first
    part ends the institution's name. An address line under a closed one stays out."""
    names = _at("T J Brunette and Oliver Brock", 853, 13, 297, 480, "T J Brunette and Oliver Brock⟨∗⟩")
    block = [names, _at(f"Bioinformatics Research Laboratory, {end}", 828, 10, 297, 560), _at(place, 816, 10, 297, 500)]
    [(_, first), (_, second)] = block_authors(block)
    assert first == second and first.endswith(institution) and place.split(",")[1] not in first
    closed = [names, _at("Bioinformatics Research Laboratory, Boston College", 828, 10, 297, 560),
              _at("Massachusetts, Amherst, MA 01003-9264, USA", 816, 10, 297, 500)]
    assert block_authors(closed)[0][1] == "Bioinformatics Research Laboratory, Boston College"


def test_describe_a_footnote_that_does_not_place_every_name_places_none() -> None:
    """A footnote is read by the names' marks only where it reads as their institutions, for every name: a
    mark leading to a sentence (a body footnote's '¹We thank the reviewers ...'), to contacts only or to a note,
    a name whose mark opens no block, or blocks in the body's size or above the page's lowest third, give no
    one an affiliation."""
    names = [("Ada Lovelace", "1"), ("Alan Turing", "2")]
    beta = _at("Beta Labs", 120, 9, 71, 151, "⟨2⟩Beta Labs")
    for first in (_at("We thank the reviewers for their comments on the draft", 137, 9, 71, 291,
                      "⟨1⟩We thank the reviewers for their comments on the draft"),
                  _at("ada@alpha.org", 137, 9, 71, 151, "⟨1⟩ada@alpha.org"),
                  _at("Work done while at Google", 137, 9, 71, 151, "⟨1⟩Work done while at Google"),
                  _at("Correspondence to: Ada Lovelace", 137, 9, 71, 151, "⟨1⟩Correspondence to: Ada Lovelace"),
                  _at("Equal Contribution", 137, 9, 71, 151, "⟨1⟩Equal Contribution")):
        article = _icml_page(names, [first, beta])
        assert article.authors == [("Ada Lovelace", None), ("Alan Turing", None)], first.text
    assert _icml_page(names, [beta]).authors == [("Ada Lovelace", None), ("Alan Turing", None)]
    body_size = [_at("Alpha Corp", 137, 10, 71, 151, "⟨1⟩Alpha Corp"), _at("Beta Labs", 120, 10, 71, 151,
                                                                          "⟨2⟩Beta Labs")]
    assert _icml_page(names, body_size).authors == [("Ada Lovelace", None), ("Alan Turing", None)]
    high = [_at("Alpha Corp", 500, 9, 71, 151, "⟨1⟩Alpha Corp"), _at("Beta Labs", 490, 9, 71, 151, "⟨2⟩Beta Labs")]
    assert _icml_page(names, high).authors == [("Ada Lovelace", None), ("Alan Turing", None)]


# -- a signature at the article's end: the name, the address, contacts --------------------------------------------

def _signed(names: list[str], end: str) -> list[tuple[str, str | None]]:
    """The authors of a TUGboat article with page 1's byline (``names``) and the last page's text (``end``)."""
    left = [_at("Tables are one of the most complicated parts of any typesetting system", 639 - 12 * i, 10, 72, 296)
            for i in range(20)]
    segments = [_at("The cals package: Multipage tables", 702.9, 12, 72, 247, style="bold"),
                _at(" and ".join(names), 674.9, 10, 92.5, 250), _at("Abstract", 657, 10, 72, 115), *left]
    article = PdfArticle(pages=["The cals package: Multipage tables\n" + " and ".join(names) + "\nAbstract\nTables",
                                end])
    describe(article, segments)
    return article.authors


def test_describe_a_signature_with_the_street_on_the_institutions_line_and_a_spelt_e_mail() -> None:
    """TUGboat (cals-tugboat) signs an article at its end: the diamond (a control code where cmsy's glyph has
    no Unicode map), the name, the company and its street on one line, the town, the e-mail spelt out, the web
    address: 'bitplant.de GmbH, Fabrikstr. 15'. The institution is the line's text before the street."""
    end = ("be extracted to a separate CTAN package.\n\x05 Oleg Parashchenko\nbitplant.de GmbH, Fabrikstr. 15\n"
           "89520 Heidenheim, Germany\nolpa (at) uucode dot com\nhttp://uucode.com/\nReferences\n[1] OASIS.")
    assert _signed(["Oleg Parashchenko"], end) == [("Oleg Parashchenko", "bitplant.de GmbH")]


def test_describe_signatures_closed_by_a_spelt_e_mail_alone_and_in_other_orders() -> None:
    """Other signatures of the class: a unit and its university, the street after the university's comma,
    closed by an e-mail spelt in brackets with no web address after it ('jane [at] alpha [dot] edu'); two
    signatures one under the other, each opened by the diamond, the second a company ('Beta Labs Ltd, Unit 5,
    Mill Road') closed by 'name at host dot org'. A block of a private address, no institution, is none."""
    two = ("the end of the article.\n⋄ Jane Roe\nDepartment of Computing\nUniversity of Alpha, 12 Main Street\n"
           "Alpha City\njane [at] alpha [dot] edu\n⋄ John Doe\nBeta Labs Ltd, Unit 5, Mill Road\nBeta Town\n"
           "john at betalabs dot org\nReferences")
    assert _signed(["Jane Roe", "John Doe"], two) == [
        ("Jane Roe", "Department of Computing, University of Alpha"), ("John Doe", "Beta Labs Ltd")]
    private = ("the end of the article.\n\x05 Jane Roe\n18912 8th Ave. SW\nNormandy Park, WA 98166\n"
               "jane (at) earthlink dot net\nReferences")
    assert _signed(["Jane Roe"], private) == [("Jane Roe", None)]
    unclosed = "the end of the article.\n\x05 Jane Roe\nUniversity of Alpha, 12 Main Street\nAlpha City\nReferences"
    assert _signed(["Jane Roe"], unclosed) == [("Jane Roe", None)]


# -- round 10, second wave: numbered affiliations the author block does not read as marked blocks -------------

def _marked_names(*names: tuple[str, str]) -> Segment:
    """One line of names, each with its superscript marks (``names``: name and marks)."""
    text = ", ".join(name for name, _ in names)
    return _at(text, 600, 11, 57, 500, ", ".join(f"{name}⟨{marks}⟩" for name, marks in names))


def test_page_authors_numbered_lines_in_the_texts_size_under_the_names_are_their_affiliations() -> None:
    """The PLOS template sets its addresses on numbered lines, the numbers not raised ('1 Modal’X, UPL, Univ
    Paris Nanterre, F-92000 Nanterre, France'), under names with raised marks (lotus-driver-genes-preprint):
    the numbers, running 1, 2, ... on from under the names and exactly those the names carry, say these are
    the affiliations, whatever their words ('Google Brain', 'Inria'); each name gets its first number's
    line up to its first address part."""
    lotus = _marked_names(("Olivier Collier", "1,*"), ("Véronique Stoven", "2,3,4"),
                          ("Jean-Philippe Vert", "5,2,†"))
    page = ("LOTUS: a Single- and Multitask Machine Learning\nAlgorithm for the Prediction of Cancer Driver Genes\n"
            "Olivier Collier1,*, Véronique Stoven2,3,4, Jean-Philippe Vert5,2,†\n"
            "1 Modal’X, UPL, Univ Paris Nanterre, F-92000 Nanterre, France\n"
            "2 MINES ParisTech, PSL Research University, CBIO-Centre for Computational Biology,\n"
            "F-75006 Paris, France\n3 Institut Curie, F-75248 Paris Cedex 5, France\n"
            "4 INSERM U900, F-75248 Paris Cedex 5, France\n5 Google Brain, F-75009 Paris, France\n"
            "∗ olivier.collier@parisnanterre.fr, †\njpvert@google.com\nAbstract\n"
            "Cancer driver genes, i.e., oncogenes and tumor suppressor genes, are involved in the")
    assert page_authors([lotus], page) == [
        ("Olivier Collier", "Modal’X, UPL, Univ Paris Nanterre"),
        ("Véronique Stoven", "MINES ParisTech, PSL Research University, CBIO-Centre for Computational Biology"),
        ("Jean-Philippe Vert", "Google Brain")]
    # Two names, a company and an institute named by no institution's word, a line wrapped onto the next one.
    two = _marked_names(("Ada Lovelace", "2"), ("Alan Turing", "1,2"))
    page = ("Folding Proteins Fast\nAda Lovelace2, Alan Turing1,2\n1 DeepMind, 6 Pancras Square, London N1C 4AG,\n"
            "United Kingdom\n2 Inria, 75012 Paris, France\nAbstract\nProteins fold fast.")
    assert page_authors([two], page) == [("Ada Lovelace", "Inria"), ("Alan Turing", "DeepMind")]
    # A blank line between the names and the numbered lines, and a third name sharing the first line.
    three = _marked_names(("Ada Lovelace", "1"), ("Alan Turing", "2"), ("Grace Hopper", "1"))
    page = ("Folding Proteins Fast\nAda Lovelace1, Alan Turing2 and Grace Hopper1\n\n1 Google Brain, 8002 Zürich,\n"
            "Switzerland\n2 Meta AI, 770 Broadway, New York, NY 10003\nAbstract\nProteins fold fast.")
    assert page_authors([three], page) == [("Ada Lovelace", "Google Brain"), ("Alan Turing", "Meta AI"),
                                           ("Grace Hopper", "Google Brain")]
    # Numbered section headings after the abstract's prose, and numbered lines that are not the names'
    # numbers (a third is carried, two lines are printed), are no affiliations.
    page = ("Folding Proteins Fast\nAda Lovelace1, Alan Turing2 and Grace Hopper1\nAbstract\nWe show that the "
            "proteins of the cell fold in a matter of microseconds and\n1 Introduction\n2 Methods")
    assert page_authors([three], page) == [("Ada Lovelace", None), ("Alan Turing", None), ("Grace Hopper", None)]
    carried = _marked_names(("Ada Lovelace", "1"), ("Alan Turing", "3"))
    page = "Folding Proteins Fast\nAda Lovelace1 and Alan Turing3\n1 Google Brain, Zürich\n2 Meta AI, New York\n"
    assert page_authors([carried], page) == [("Ada Lovelace", None), ("Alan Turing", None)]


def test_page_authors_the_corresponding_authors_numbered_blocks_under_the_correspondence_note() -> None:
    """BMC prints only the corresponding author's numbered addresses on page 1, under the correspondence
    note, the first number raised at the end of the e-mail's line ('* Correspondence: mroygagn@uottawa.ca 2'
    / 'Centre de recherche, ...' / '5' / 'School of ...', genlib-bmcbioinf): each name gets the first block
    one of its numbers opens; a name none of whose numbers is printed there gets none here (the end's
    'Author details' give it one), rather than every name getting the whole column."""
    names = _marked_names(("Héloïse Gauvin", "1,2"), ("Eve-Marie Lavoie", "3"), ("Damian Labuda", "2,4"),
                          ("Marie-Hélène Roy-Gagnon", "2,5*"))
    page = ("GENLIB: an R package for the analysis of genealogical data\n"
            "Héloïse Gauvin1,2, Eve-Marie Lavoie3, Damian Labuda2,4, Marie-Hélène Roy-Gagnon2,5*\n"
            "Abstract\nBackground: Founder populations have an important role in the study of genetic diseases.\n"
            "* Correspondence: mroygagn@uottawa.ca 2\n"
            "Centre de recherche, Centre hospitalier universitaire Sainte-Justine, Montréal,\nQuébec, Canada\n5\n"
            "School of Epidemiology, Public Health and Preventive Medicine, Faculty of\n"
            "Medicine, University of Ottawa, 600 Peter Morand Cres, Room 101E, Ottawa,\nON K1G 5Z3, Canada\n"
            "Full list of author information is available at the end of the article")
    sainte_justine = "Centre de recherche, Centre hospitalier universitaire Sainte-Justine"
    assert [(n, a and a.split(", Montréal")[0]) for n, a in page_authors([names], page)] == [
        ("Héloïse Gauvin", sainte_justine), ("Eve-Marie Lavoie", None), ("Damian Labuda", sainte_justine),
        ("Marie-Hélène Roy-Gagnon", sainte_justine)]
    # SpringerOpen: the e-mail on a line of its own, the number on the next; the corresponding author's first
    # number is not printed, its second is.
    two = _marked_names(("Ada Lovelace", "1"), ("Alan Turing", "2,3*"))
    page = ("Folding proteins fast\nAda Lovelace1 and Alan Turing2,3*\n*Correspondence:\nturing@alpha.edu\n3\n"
            "Department of Physics, University of Alpha, Alphaville 12345, Utopia\n"
            "Full list of author information is available at the end of the article")
    assert page_authors([two], page) == [("Ada Lovelace", None),
                                         ("Alan Turing", "Department of Physics, University of Alpha")]
    # Two corresponding authors' e-mails on one line, one block that two names share.
    three = _marked_names(("Ada Lovelace", "1*"), ("Alan Turing", "2"), ("Grace Hopper", "1*"))
    page = ("Folding proteins fast\nAda Lovelace1*, Alan Turing2 and Grace Hopper1*\n"
            "*Correspondence: ada@beta.org; grace@beta.org 1\nInstitute of Beta, 12 Beta Road, Betatown, Utopia\n"
            "Full list of author information is available at the end of the article")
    assert page_authors([three], page) == [("Ada Lovelace", "Institute of Beta"), ("Alan Turing", None),
                                           ("Grace Hopper", "Institute of Beta")]
    # A name's numbers are read in its order: its first printed block, not the lowest number's.
    order = _marked_names(("Ada Lovelace", "3,2*"), ("Alan Turing", "1"))
    page = ("Folding proteins fast\nAda Lovelace3,2* and Alan Turing1\n*Correspondence: ada@beta.org 2\n"
            "Institute of Beta, 12 Beta Road, Betatown, Utopia\n3\nGamma University, 3 Gamma Street, Gammaville\n"
            "Full list of author information is available at the end of the article")
    assert page_authors([order], page) == [("Ada Lovelace", "Gamma University"), ("Alan Turing", None)]


def test_a_raised_list_of_marks_closed_by_a_symbol_with_no_comma_is_the_names_marks() -> None:
    """OUP's current Bioinformatics template raises each name's marks after a space, the corresponding
    author's '∗' closing its numbers with no comma ('Bede Constantinides 1,2∗ and Derrick W Crook 1,2,3',
    hostile-bioinformatics-preprint): the raised '1,2∗' is the first name's marks, as '1,2,3' is the second's,
    and both names get address 1. So too Nature's '1*' and letters closed by a dagger ('a,b†')."""
    oup = [_at("Bede Constantinides", 667.3, 12, 63.7, 181.2), _at("1,2∗", 670.3, 9, 184.3, 200.7),
           _at("and Derrick W Crook", 667.3, 12, 205.6, 322.9), _at("1,2,3", 670.3, 9, 325.6, 344.6),
           _at("Nuffield Department of Medicine, University of Oxford, Oxford, UK", 645, 9, 67, 400,
               "⟨1⟩Nuffield Department of Medicine, University of Oxford, Oxford, UK"),
           _at("Health Protection Research Unit, University of Oxford, Oxford, UK", 634, 9, 67, 400,
               "⟨2⟩Health Protection Research Unit, University of Oxford, Oxford, UK")]
    nuffield = "Nuffield Department of Medicine, University of Oxford, Oxford, UK"
    assert block_authors(oup) == [("Bede Constantinides", nuffield), ("Derrick W Crook", nuffield)]
    nature = [_at("Ada Lovelace", 640, 12, 100, 180), _at("1*", 644, 8, 181, 186),
              _at("and Alan Turing", 640, 12, 190, 280), _at("2", 644, 8, 281, 284),
              _at("University of Alpha", 620, 9, 100, 250, "⟨1⟩University of Alpha"),
              _at("Beta Institute", 610, 9, 100, 250, "⟨2⟩Beta Institute")]
    assert block_authors(nature) == [("Ada Lovelace", "University of Alpha"), ("Alan Turing", "Beta Institute")]
    letters = [_at("Ada Lovelace", 640, 12, 100, 180), _at("a,b†", 644, 8, 181, 192),
               _at("and Alan Turing", 640, 12, 196, 286), _at("b", 644, 8, 287, 290),
               _at("University of Alpha", 620, 9, 100, 250, "⟨a⟩University of Alpha"),
               _at("Beta Institute", 610, 9, 100, 250, "⟨b⟩Beta Institute")]
    assert block_authors(letters) == [("Ada Lovelace", "University of Alpha"), ("Alan Turing", "Beta Institute")]


# -- round 10 second wave: institutions in the byline's order on one line (the Annals) ------------------------

def _by_line(byline: str, institutions: str) -> list[tuple[str, str | None]]:
    block = [_at(byline, 634.1, 9.96, 173.3, 450.6), _at(institutions, 615.9, 9.96, 134.8, 492.9)]
    return page_authors(block, f"{byline}\n{institutions}")


def test_institutions_listed_in_the_bylines_order_go_to_their_names() -> None:
    """nonreversible-sampler-aoap (The Annals of Applied Probability): one line of institutions in byline
    order, a list as the names are; before, each name took the whole line."""
    assert _by_line("By Persi Diaconis, Susan Holmes and Radford M. Neal",
                    "Stanford University, Stanford University and INRA and University of Toronto") == [
        ("Persi Diaconis", "Stanford University"), ("Susan Holmes", "Stanford University and INRA"),
        ("Radford M. Neal", "University of Toronto")]


def test_institutions_in_the_bylines_order_in_other_lists() -> None:
    """Two names, and four, with their institutions listed alike (the Annals of Statistics, Bernoulli)."""
    assert _by_line("By Ada Lovelace and Alan Turing", "University of London and University of Manchester") == [
        ("Ada Lovelace", "University of London"), ("Alan Turing", "University of Manchester")]
    assert _by_line("By Ada Lovelace, Alan Turing, Grace Hopper and Mary Somerville",
                    "Stanford University, Harvard University, Institut Pasteur and University of Toronto") == [
        ("Ada Lovelace", "Stanford University"), ("Alan Turing", "Harvard University"),
        ("Grace Hopper", "Institut Pasteur"), ("Mary Somerville", "University of Toronto")]


def test_one_address_under_the_names_stays_every_names() -> None:
    """(the rule's other side) an address with 'and' in a department's name is one place for both names."""
    line = "Department of Physics and Astronomy, University College London"
    assert [a for _, a in _by_line("By Ada Lovelace and Alan Turing", line)] == [line, line]


# -- round 10 second wave: Springer's names joined by a middle dot over rows ----------------------------------

def test_names_joined_by_a_middle_dot_go_on_over_the_rows() -> None:
    """spacetime-acoustics-qsmf (Quantum Studies, Springer): 'Lucas Burns · Tatsuya Daniel ·' over 'Stephon
    Alexander · Justin Dressel'; before, the first row, closed by its dot, was dropped."""
    assert _names([_at("Lucas Burns · Tatsuya Daniel ·", 586.5, 10, 50, 250, style="bold"),
                   _at("Stephon Alexander · Justin Dressel", 574.0, 10, 50, 250, style="bold")]) == [
        "Lucas Burns", "Tatsuya Daniel", "Stephon Alexander", "Justin Dressel"]


def test_names_joined_by_a_middle_dot_in_other_breaks() -> None:
    """Three rows each closed by the dot; and the dot opening the next row instead."""
    assert _names([_at("Ada Lovelace · Alan Turing ·", 600, 10, 50, 250),
                   _at("Grace Hopper · Mary Somerville ·", 588, 10, 50, 250),
                   _at("Emmy Noether", 576, 10, 50, 150)]) == [
        "Ada Lovelace", "Alan Turing", "Grace Hopper", "Mary Somerville", "Emmy Noether"]
    assert _names([_at("Ada Lovelace · Alan Turing", 600, 10, 50, 250),
                   _at("· Grace Hopper · Mary Somerville", 588, 10, 50, 250)]) == [
        "Ada Lovelace", "Alan Turing", "Grace Hopper", "Mary Somerville"]


# -- round 11's third wave: a line of e-mail addresses between the names and their institution ------------------

_BROKER_NAMES = "Bernhard Kerbl, Michael Kenzel, Joerg H. Mueller, Dieter Schmalstieg, Markus Steinberger"


def _over_a_mail_line(mails: str) -> PdfArticle:
    segments = [_at("The Broker Queue: A Fast, Linearizable FIFO Queue for", 692.9, 17, 89, 522, style="bold"),
                _at("Fine-Granular Work Distribution on the GPU", 676.3, 17, 130, 482, style="bold"),
                _at(_BROKER_NAMES, 651.0, 12, 86, 526),
                _at(mails, 639.5, 10, 96, 515),
                _at("Graz University of Technology", 627.6, 10, 244, 369),
                _at("ABSTRACT", 609.9, 11, 53, 112, style="bold"),
                _at("Harnessing the power of massively parallel devices like the graphics processing unit (GPU)",
                    598.0, 9, 53, 295)]
    page = "\n".join(s.text for s in segments)
    article = PdfArticle(pages=[page])
    describe(article, segments)
    return article


@pytest.mark.parametrize("mails", [
    # broker-queue-ics
    "{bernhard.kerbl | michael.kenzel | joerg.mueller | dieter.schmalstieg | markus.steinberger}@icg.tugraz.at",
    "{bernhard.kerbl, michael.kenzel, joerg.mueller, dieter.schmalstieg, markus.steinberger}@tugraz.at",
    "kerbl@icg.tugraz.at, kenzel@icg.tugraz.at, mueller@icg.tugraz.at, schmalstieg@icg.tugraz.at",
])
def test_a_line_of_e_mail_addresses_under_the_names_does_not_end_the_author_block(mails: str) -> None:
    """acmart (broker-queue-ics, ICS 2018) sets the names, then their e-mails grouped in braces before the shared
    domain and split by bars, then the one institution: the e-mails' parts are in lower case, but the line is
    contacts, not prose, so the institution under it is every name's. So with the group split by commas, and with
    a line of whole addresses."""
    article = _over_a_mail_line(mails)
    assert article.authors == [(name, "Graz University of Technology") for name in _BROKER_NAMES.split(", ")]


def test_a_sentence_with_an_e_mail_address_in_it_is_still_prose() -> None:
    """(the e-mail rule's other side) without its addresses a sentence keeps its own words and is prose; a line
    of addresses alone is none."""
    from kb.papers.pdf_names import ADDRESSES, is_prose

    assert is_prose(ADDRESSES.sub(" ", "correspondence and requests for materials should be addressed to the first "
                                       "author at ada.lovelace@alpha.edu"))
    assert not is_prose(ADDRESSES.sub(" ", "{ada.lovelace | alan.turing | grace.hopper | john.von.neumann}@alpha.edu"))


# -- round 11's third wave: a scan's OCR layer under an old proceedings paper's title ------------------------------

_WISCONSIN = [_at("Computer Sciences Department", 675.1, 10.9, 237.1, 385.3),
              _at("University of Wisconsin", 661.3, 10.9, 257.1, 368.2)]


@pytest.mark.parametrize(("given", "rest", "gap", "name"), [
    # serial-histograms-vldb: VLDB 1993 scanned, the given name 13 points from the rest in 11-point type
    ("Yannis", "E. Ioannidis", 12.8, "Yannis E. Ioannidis"),
    ("Michael", "J. Franklin", 15.0, "Michael J. Franklin"),
    ("Jennifer", "Widom", 13.5, "Jennifer Widom"),
])
def test_a_given_name_an_ocr_layer_set_apart_from_the_rest_of_the_name_is_joined_to_it(
        given: str, rest: str, gap: float, name: str) -> None:
    """An OCR layer boxes each word: a given name alone on the name's baseline, more than a space but less
    than two sizes from the rest of the name, is that name's (alone it is no name, and was dropped)."""
    block = [_at(given, 690.6, 10.9, 259.6, 289.8), _at(rest, 690.6, 10.9, 289.8 + gap, 360.0), *_WISCONSIN]
    assert _names(block) == [name]


def test_two_names_side_by_side_stay_two() -> None:
    """(the given-name rule's other side) a whole name beside another, however near, is two authors."""
    block = [_at("Ada Lovelace", 690.6, 10.9, 200.0, 260.0), _at("Alan Turing", 690.6, 10.9, 275.0, 330.0),
             *_WISCONSIN]
    assert _names(block) == ["Ada Lovelace", "Alan Turing"]


@pytest.mark.parametrize(("line", "name"), [
    ("Yannis E. Ioannidis’", "Yannis E. Ioannidis"),  # serial-histograms-vldb: the footnote's star read as '’'
    ("Jim Gray′", "Jim Gray"),
    ("Patrick O’Neil’", "Patrick O’Neil"),  # a quote inside a name is its own
])
def test_a_closing_quote_after_a_name_is_a_misread_mark(line: str, name: str) -> None:
    """A name never ends in a closing quote or a prime: after a name, one is a footnote's mark an OCR layer
    misread."""
    assert _names([_at(line, 690.6, 10.9, 259.6, 359.6), *_WISCONSIN]) == [name]


@pytest.mark.parametrize(("code", "names", "blocks", "expected"), [
    # rum-conjecture-edbt: the fourth symbol after 'Mark Callaghan' and before 'Facebook, Inc.' given as '\x05'
    ("\x05", [("Anastasia Ailamaki", "‡"), ("Mark Callaghan", "\x05")],
     [("‡", "EPFL, Lausanne"), ("\x05", "Facebook, Inc.")],
     [("Anastasia Ailamaki", "EPFL, Lausanne"), ("Mark Callaghan", "Facebook, Inc.")]),
    ("\x03", [("Ada Lovelace", "\x03"), ("Alan Turing", "†"), ("Grace Hopper", "\x03")],
     [("†", "Beta Labs"), ("\x03", "University of Alpha")],
     [("Ada Lovelace", "University of Alpha"), ("Alan Turing", "Beta Labs"), ("Grace Hopper", "University of Alpha")]),
    ("\x02", [("Ada Lovelace", "\x02"), ("Alan Turing", "\x01")],
     [("\x01", "Gamma Institute"), ("\x02", "University of Alpha")],
     [("Ada Lovelace", "University of Alpha"), ("Alan Turing", "Gamma Institute")]),
])
def test_a_mark_the_extractor_gives_as_a_control_code_links_the_name_to_its_block(
        code: str, names: list[tuple[str, str]], blocks: list[tuple[str, str]],
        expected: list[tuple[str, str]]) -> None:
    """A symbol mark whose glyph the font leaves unmapped may come out as a control code: the same code after a
    name and before an institution is one mark, as a mapped symbol is."""
    block = [_at(name, 666.3, 12, 100 + 120 * i, 200 + 120 * i, marked=f"{name}⟨{mark}⟩")
             for i, (name, mark) in enumerate(names)]
    block += [_at(text, 619.6, 10, 100 + 120 * i, 200 + 120 * i, marked=f"⟨{mark}⟩{text}")
              for i, (mark, text) in enumerate(blocks)]
    assert code in "".join(mark for _, mark in names)
    assert block_authors(block) == expected


# -- round 11 (third wave): the authors' addresses over Econometrica's 'Manuscript received' line --------------

_ENDING = ("In this equilibrium, prices follow Brownian motion and all private information is incorporated\n"
           "into prices by the end of trading.\n")
_RECEIVED = "Manuscript received January 1984; revision received December, 1984.\nREFERENCES\n[1] BAGEHOT, W."


@pytest.mark.parametrize(("addresses", "authors", "institutions"), [
    # kyle-insider-econometrica: one author's university alone over the line
    ("Princeton University\n", ["Albert S. Kyle"], ["Princeton University"]),
    # two authors' blocks joined by 'and', each with its street
    ("Dept. of Economics, Harvard University, Cambridge, MA 02138, U.S.A.\nand\nDept. of Economics, "
     "Massachusetts Institute of Technology, Cambridge, MA 02139, U.S.A.\n", ["Ada Lovelace", "Alan Turing"],
     ["Harvard University", "Massachusetts Institute of Technology"]),
    # one author's block over two lines
    ("Cowles Foundation, Yale University,\nBox 2125 Yale Station, New Haven, CT 06520, U.S.A.\n", ["Ada Lovelace"],
     ["Yale University"]),
])
def test_fill_from_the_end_addresses_over_manuscript_received(addresses: str, authors: list[str],
                                                              institutions: list[str]) -> None:
    """Econometrica prints its authors' addresses only at the end of the text, over 'Manuscript received ...':
    one block per author in byline order, joined by 'and' (before, no affiliation was read)."""
    from kb.papers.pdf_affiliations import fill_from_the_end

    article = PdfArticle(pages=["CONTINUOUS AUCTIONS\nBY ALBERT S. KYLE", _ENDING + addresses + _RECEIVED],
                         authors=[(name, None) for name in authors])
    fill_from_the_end(article)
    assert len(article.authors) == len(institutions)
    assert all(want in (got or "") for (_, got), want in zip(article.authors, institutions, strict=True))


@pytest.mark.parametrize(("addresses", "on_page_one"), [
    ("", False),  # the text's last sentence directly over the line: no address
    ("Princeton University\n", False),  # one block for two authors: not sure whose
    ("Princeton University\nand\nStanford University\n", True),  # IEEE's page-1 footnote, not the text's end
])
def test_fill_from_the_end_no_address_over_manuscript_received_for_each_author(addresses: str,
                                                                               on_page_one: bool) -> None:
    """The rule's other side: no block, fewer blocks than authors, or a 'Manuscript received' line on page 1
    (IEEE's footnote) gives no affiliation."""
    from kb.papers.pdf_affiliations import fill_from_the_end

    pages = ([f"A TITLE\n{_ENDING}{addresses}{_RECEIVED}", "The body goes on."] if on_page_one
             else ["A TITLE", _ENDING + addresses + _RECEIVED])
    article = PdfArticle(pages=pages, authors=[("Ada Lovelace", None), ("Alan Turing", None)])
    fill_from_the_end(article)
    assert article.authors == [("Ada Lovelace", None), ("Alan Turing", None)]


# -- round 11 (third wave): a footnote's numbers on lines of their own over their addresses (SAGE) ------------

_SAGE_BODY = ("Medical datasets are often imbalanced, i.e. the number of positive and negative cases is not equal.\n"
              "Stroke is one of the leading causes of death worldwide.\n")


@pytest.mark.parametrize(("names", "foot", "expected"), [
    # class-imbalance-smmr: SAGE's foot of page 1, the first address naming its institute only by initials
    ((("Olga Lyashevska", "1,2"), ("Fiona Malone", "1"), ("Jens Fiehler", "3")),
     "1\nEnterprise Ireland Medical and Engineering Technologies Gateway, GMIT, Galway, Ireland\n2\nMarine and "
     "Freshwater Research Centre, GMIT, Galway, Ireland\n3\nDepartment of Diagnostic and Interventional "
     "Neuroradiology, University Medical Center Hamburg-Eppendorf, Hamburg, Germany\nCorresponding author:\n"
     "Olga Lyashevska, Enterprise Ireland Medical and Engineering Technologies Gateway, GMIT, Dublin Road",
     ["Enterprise Ireland Medical and Engineering Technologies Gateway, GMIT", "Enterprise Ireland Medical and "
      "Engineering Technologies Gateway, GMIT", "Department of Diagnostic and Interventional Neuroradiology"]),
    # two companies named by no institution's word, with streets
    ((("Ada Lovelace", "2"), ("Alan Turing", "1")),
     "1\nDeepMind, 6 Pancras Square, London N1C 4AG, UK\n2\nMeta AI, 770 Broadway, New York, NY 10003, USA\n",
     ["Meta AI", "DeepMind"]),
    # three names over two addresses, the corresponding author's note after them
    ((("Ada Lovelace", "1"), ("Alan Turing", "2"), ("Grace Hopper", "1")),
     "1\nGoogle Brain, Zürich, Switzerland\n2\nInria Paris, 75012 Paris, France\nCorresponding author:\n"
     "Ada Lovelace, Google Brain, Zürich\n", ["Google Brain", "Inria Paris", "Google Brain"]),
])
def test_page_authors_a_footnotes_numbers_on_lines_of_their_own(names: tuple[tuple[str, str], ...], foot: str,
                                                                expected: list[str]) -> None:
    """SAGE's journals set each address's number raised on a line of its own over it at the foot of page 1:
    the numbers, running 1, 2, ... and exactly those the names carry, say these are the affiliations whatever
    their words (before, every name got the block over the correspondence note: address 3)."""
    line = _marked_names(*names)
    page = f"Class imbalance in gradient boosting\n{line.text}\nAbstract\nImbalance.\n{_SAGE_BODY}{foot}"
    authors = page_authors([line], page)
    assert [name for name, _ in authors] == [name for name, _ in names]
    assert all(want in (got or "") for (_, got), want in zip(authors, expected, strict=True))
    # (no name gets another's address: the Hamburg department only the names carrying its number)
    assert all(("Neuroradiology" in want) == ("Hamburg" in (got or ""))
               for (_, got), want in zip(authors, expected, strict=True))


def test_page_authors_numbers_alone_that_are_not_the_names_give_nothing() -> None:
    """The rule's other side: numbered lines on their own that are not exactly the names' numbers (a list of
    steps) give no affiliation."""
    line = _marked_names(("Ada Lovelace", "1"), ("Alan Turing", "2"))
    page = (f"A Title\n{line.text}\nAbstract\nText.\n{_SAGE_BODY}1\nCollect the data, Galway\n2\nFit the model\n"
            "3\nReport the results\n")
    assert page_authors([line], page) == [("Ada Lovelace", None), ("Alan Turing", None)]


# -- round 11 (third wave): a numbered note that names a position only ---------------------------------------

@pytest.mark.parametrize("note", [
    "Research Adviser.",  # bwb-stability-cfdsc
    "Professor",
    "Senior Research Fellow.",
])
def test_block_authors_a_note_naming_a_position_only_is_no_affiliation(note: str) -> None:
    """A numbered note under the names that gives the author's position and no place of work ('2 Research
    Adviser.', as AIAA-style conference papers number them) is no affiliation (before, 'Research Adviser.' was
    stored as the second author's); the first note, a position with its institution, stays the first's."""
    block = [_at("Paul F. Roysdon and Mahmood Khalid", 621, 12, 217, 408, "Paul F. Roysdon⟨1⟩ and Mahmood Khalid⟨2⟩"),
             _at("Graduate Researcher, Department of Aeronautics and Aerospace, Von Karman Institute for Fluid "
                 "Dynamics,", 587.6, 10, 104, 534, "⟨1⟩Graduate Researcher, Department of Aeronautics and "
                 "Aerospace, Von Karman Institute for Fluid Dynamics,", "italic"),
             _at("Chaussee de Waterloo 72, B-1640 Rhode-St-Genese, Belgium.", 575.7, 10, 196, 442, style="italic"),
             _at(note, 565.6, 10, 284, 354, f"⟨2⟩{note}", "italic")]
    authors = block_authors(block)
    assert [name for name, _ in authors] == ["Paul F. Roysdon", "Mahmood Khalid"]
    assert "Von Karman Institute for Fluid Dynamics" in (authors[0][1] or "") and authors[1][1] is None


def test_block_authors_a_position_with_its_institution_stays_an_affiliation() -> None:
    """The rule's other side: a note naming a position and its place of work ('Research Adviser, National
    Research Council Canada') is the author's affiliation."""
    block = [_at("Paul F. Roysdon and Mahmood Khalid", 621, 12, 217, 408, "Paul F. Roysdon⟨1⟩ and Mahmood Khalid⟨2⟩"),
             _at("Von Karman Institute for Fluid Dynamics", 587.6, 10, 104, 534,
                 "⟨1⟩Von Karman Institute for Fluid Dynamics"),
             _at("Research Adviser, National Research Council Canada", 565.6, 10, 284, 354,
                 "⟨2⟩Research Adviser, National Research Council Canada")]
    assert "National Research Council Canada" in (block_authors(block)[1][1] or "")


# -- round 11 (third wave): one mark closing a row of names (ifacconf) ---------------------------------------

_UCR = "University of California, Riverside"


def _ifac_block(rows: list[tuple[list[str], str]], blocks: list[tuple[str, str]]) -> list[Segment]:
    """ifacconf's author block: each row's names as bold segments apart, its mark raised after the last; each
    address's mark raised on its own before its italic line (gps-ins-outlier-ifac's boxes)."""
    block: list[Segment] = []
    for i, (names, mark) in enumerate(rows):
        x, y = 209.9, 683.0 - 14 * i
        for name in names:  # (the names 19.6 pt apart, as on the real page)
            block.append(_at(name, y, 9.96, x, x + 5 * len(name), style="bold"))
            x += 5 * len(name) + 19.6
        if mark:
            block.append(_at(mark, y + 5.8, 6.97, x - 17, x - 14))
    for i, (mark, institution) in enumerate(blocks):
        y = 660.0 - 12 * i
        block += [_at(mark, y + 5.9, 6.97, 183.8, 186.6), _at(f"{institution}, CA 92521 USA", y, 9.96, 191.4, 413.7,
                                                              style="italic")]
    return block


@pytest.mark.parametrize(("rows", "blocks", "expected"), [
    # gps-ins-outlier-ifac: two names, the mark after the last, one address
    ([(["Paul F. Roysdon", "Jay A. Farrell"], "∗")], [("∗", _UCR)], [_UCR, _UCR]),
    # three names over one address
    ([(["Ada Lovelace", "Alan Turing", "Grace Hopper"], "∗")], [("∗", "University of Alpha")],
     ["University of Alpha"] * 3),
    # two rows, each closed by its own mark
    ([(["Ada Lovelace", "Alan Turing"], "∗"), (["Grace Hopper", "Edsger Dijkstra"], "†")],
     [("∗", "University of Alpha"), ("†", "Beta Institute of Technology")],
     ["University of Alpha", "University of Alpha", "Beta Institute of Technology", "Beta Institute of Technology"]),
])
def test_block_authors_one_mark_closing_a_row_of_names_is_the_rows(rows: list[tuple[list[str], str]],
                                                                  blocks: list[tuple[str, str]],
                                                                  expected: list[str]) -> None:
    """ifacconf sets one mark after the last of the names that share an address ('Paul F. Roysdon   Jay A.
    Farrell ∗' over '∗ University of California, Riverside'): the names before it on its row take its block
    (before, the first name had none)."""
    authors = block_authors(_ifac_block(rows, blocks))
    assert len(authors) == len(expected)
    assert all(want in (got or "") for (_, got), want in zip(authors, expected, strict=True))


def test_block_authors_a_note_mark_after_the_last_name_is_shared_by_nobody() -> None:
    """The rule's other side: a mark after the last name leading to a note ('∗ Corresponding author') gives the
    names before it nothing."""
    block = _ifac_block([(["Ada Lovelace", "Alan Turing"], "∗")], [])
    block += [_at("∗", 665.9, 6.97, 183.8, 186.6), _at("Corresponding author", 660, 9.96, 191.4, 300, style="italic")]
    assert [affiliation for _, affiliation in block_authors(block)] == [None, None]


@pytest.mark.parametrize(("note", "names", "expected"), [
    # gqc-ldpc-ieee-tit: IEEE's footnote, an author who has moved, a word broken at the line's end
    ("Roxana Smarandache is with the Department of Mathematics, University of Notre Dame, Notre Dame, IN 46556 "
     "USA (e-mail: r@nd.edu).\nAnthony Gómez-Fonseca was with the Department of Mathematics, Uni-\nversity of "
     "Notre Dame, Notre Dame, IN 46556 USA. He is now with the Department of Mathematics and Statistics, "
     "University of South Florida, Tampa, FL 33620 USA (e-mail: a@usf.edu).",
     ["Roxana Smarandache", "Anthony Gómez-Fonseca"],
     {"Roxana Smarandache": "Department of Mathematics, University of Notre Dame, Notre Dame",
      "Anthony Gómez-Fonseca": "Department of Mathematics, University of Notre Dame, Notre Dame"}),
    # two authors who were at a place together
    ("A. Lovelace and A. Turing were with Bell Laboratories, Murray Hill, NJ 07974 USA. They are now with "
     "Alpha Labs.", ["Ada Lovelace", "Alan Turing"],
     {"Ada Lovelace": "Bell Laboratories, Murray Hill", "Alan Turing": "Bell Laboratories, Murray Hill"}),
    # the first place stated wins over the one after it
    ("Ada Lovelace was at the University of Alpha; she is now at Beta Labs.", ["Ada Lovelace"],
     {"Ada Lovelace": "University of Alpha"}),
])
def test_stated_affiliations_an_author_who_was_with_a_place(note: str, names: list[str],
                                                           expected: dict[str, str]) -> None:
    """An IEEE footnote's 'X was with A. He is now with B': the first place linked to the name is A (before,
    'was' stated nothing); a word broken over the line's end is read whole ('Uni-' / 'versity')."""
    from kb.papers.pdf_affiliations import _stated_affiliations

    assert _stated_affiliations(note, names) == expected


@pytest.mark.parametrize(("page", "place"), [
    # restart-belief-ieee-lcomm: IEEE Letters' one shared footnote
    ("The authors are with the Department of Electrical, Electronic, and Information Engineering “Guglielmo "
     "Marconi” and CNIT/WiLab, University of Bologna, 40136 Bologna, Italy (e-mail: a@unibo.it).",
     "Department of Electrical, Electronic, and Information Engineering “Guglielmo Marconi” and CNIT/WiLab, "
     "University of Bologna"),
    ("Both authors are with Alpha University, Alphaville, AL 12345 USA.", "Alpha University, Alphaville"),
    ("The authors are affiliated with the Beta Institute; this work was funded by ANR.", "Beta Institute"),
    # the rule's other side: 'The authors thank ...' states no place
    ("The authors thank the Gamma Foundation for its support.", None),
])
def test_fill_from_the_end_the_authors_are_with_one_place(page: str, place: str | None) -> None:
    """'The authors are with ...' (IEEE Letters), 'Both authors are with ...': the statement's place is every
    author's, as 'All authors are with ...' was (before, these forms gave none)."""
    from kb.papers.pdf_affiliations import fill_from_the_end

    article = PdfArticle(pages=[page], authors=[("Ada Lovelace", None), ("Alan Turing", None)])
    fill_from_the_end(article)
    assert article.authors == [("Ada Lovelace", place), ("Alan Turing", place)]


# -- round 11 fourth wave: life-science journals' author blocks -------------------------------------------------

def test_block_authors_a_mark_typed_after_a_surname_in_capitals_closes_it() -> None:
    """Portland Press (ace-inhibitors-clinsci) prints surnames in capitals and types some marks in the text
    after them ('Rajni K. SHARMA†¹, Geoffrey MASUYER‡'), the addresses opening with the same symbols: each
    name takes its symbol's address. Other layouts of the class: a byline all in capitals with its symbols
    ('JOHN SMITH*, MARY JONES† AND ANNA LEE‡'), and a number typed after a surname in capitals ('Anna
    KOWALSKA1, Piotr NOWAK2') over numbered addresses."""
    portland = [_at("Ross G. DOUGLAS, Rajni K. SHARMA†, Geoffrey MASUYER‡, Lizelle LUBBE, Ismael ZAMORA§,",
                    602.9, 9.5, 73.2, 477.8, "Ross G. DOUGLAS⟨∗1⟩, Rajni K. SHARMA†⟨1⟩, Geoffrey MASUYER‡, "
                    "Lizelle LUBBE⟨∗⟩, Ismael ZAMORA§,"),
                _at("K. Ravi ACHARYA‡, Kelly CHIBALE† and Edward D. STURROCK", 591.6, 9.5, 73.2, 331.1,
                    "K. Ravi ACHARYA‡, Kelly CHIBALE† and Edward D. STURROCK⟨∗⟩"),
                _at("Institute of Infectious Disease and Molecular Medicine, University of Cape Town, Observatory",
                    572.2, 7, 76.1, 511.3, "⟨∗⟩Institute of Infectious Disease and Molecular Medicine, University "
                    "of Cape Town, Observatory"),
                _at("†Department of Chemistry, University of Cape Town, Rondebosch, Cape Town 7701,", 555.2, 7,
                    72.9, 511.0),
                _at("South Africa", 547.9, 7, 72.7, 108.9),
                _at("‡Department of Biology and Biochemistry, University of Bath, Claverton Down, Bath BA2 7AY, U.K.",
                    538.2, 7, 72.9, 370.1),
                _at("§Lead Molecular Design, Sant Cugat del Vallès, Barcelona, Spain", 529.6, 7, 72.9, 359.8)]
    found = dict(block_authors(portland))
    assert list(found) == ["Ross G. DOUGLAS", "Rajni K. SHARMA", "Geoffrey MASUYER", "Lizelle LUBBE",
                           "Ismael ZAMORA", "K. Ravi ACHARYA", "Kelly CHIBALE", "Edward D. STURROCK"]
    assert "University of Cape Town" in (found["Rajni K. SHARMA"] or "")
    assert "University of Bath" in (found["Geoffrey MASUYER"] or "")
    assert "University of Bath" in (found["K. Ravi ACHARYA"] or "")
    assert (found["Ismael ZAMORA"] or "").startswith("Lead Molecular Design")
    capitals = [_at("JOHN SMITH*, MARY JONES† AND ANNA LEE‡", 640, 11, 150, 450),
                _at("*University of Alpha, Alpha City", 622, 9, 150, 400),
                _at("†Beta Institute of Technology, Beta Town", 612, 9, 150, 400),
                _at("‡Gamma Research Centre, Gamma Village", 602, 9, 150, 400)]
    assert block_authors(capitals) == [("John Smith", "University of Alpha, Alpha City"),
                                       ("Mary Jones", "Beta Institute of Technology, Beta Town"),
                                       ("Anna Lee", "Gamma Research Centre, Gamma Village")]
    numbered = [_at("Anna KOWALSKA1, Piotr NOWAK2", 640, 11, 150, 450),
                _at("1Faculty of Biology, University of Warsaw", 622, 9, 150, 400),
                _at("2Institute of Biochemistry and Biophysics, Polish Academy of Sciences", 612, 9, 150, 400)]
    assert block_authors(numbered) == [("Anna KOWALSKA", "Faculty of Biology, University of Warsaw"),
                                       ("Piotr NOWAK",
                                        "Institute of Biochemistry and Biophysics, Polish Academy of Sciences")]


def test_block_authors_addresses_numbered_with_a_point_run_on_in_a_paragraph() -> None:
    """PLOS ONE's 2014 layout (fanged-frog-plosone) numbers its addresses '1.', '2.', '3.' in the text's own
    size and runs them on in one paragraph, the measure breaking it after a number ('..., Canada, 3.' over
    'Museum of Vertebrate Zoology ...'): each number opens its block, the one closing a line the next line's.
    Other layouts of the class: one address a line, numbered with a point as a word processor types a list
    ('1. Department of Botany, University of Alpha'), and blocks run on with semicolons ('1. University of
    Alpha; 2. Beta Institute;' / '3. Gamma Hospital')."""
    plos = [_at("Djoko T. Iskandar , Ben J. Evans , Jimmy A. McGuire", 587.5, 10, 197.0, 467.0,
                "Djoko T. Iskandar⟨1⟩, Ben J. Evans⟨2⟩, Jimmy A. McGuire⟨3*⟩"),
            _at("1. School of Life Sciences and Technology, Institut Teknologi Bandung, Bandung, Indonesia, 2. "
                "Center for", 570.0, 8, 196.9, 570.0),
            _at("Environmental Genomics, Department of Biology, McMaster University, Hamilton, Ontario, Canada, 3.",
                560.0, 8, 196.9, 553.5),
            _at("Museum of Vertebrate Zoology and Department of Integrative Biology, University of California, "
                "Berkeley,", 550.1, 8, 196.9, 562.2),
            _at("California, United States of America", 540.7, 8, 196.7, 322.5)]
    found = block_authors(plos)
    assert [name for name, _ in found] == ["Djoko T. Iskandar", "Ben J. Evans", "Jimmy A. McGuire"]
    assert (found[0][1] or "").startswith("School of Life Sciences and Technology, Institut Teknologi Bandung")
    assert (found[1][1] or "").startswith("Center for Environmental Genomics, Department of Biology, McMaster")
    assert (found[2][1] or "").startswith("Museum of Vertebrate Zoology and Department of Integrative Biology, "
                                          "University of California, Berkeley")
    listed = [_at("Maria Rossi , Paolo Bianchi", 640, 11, 150, 400, "Maria Rossi⟨1⟩, Paolo Bianchi⟨2⟩"),
              _at("1. Department of Botany, University of Alpha", 622, 10, 150, 400),
              _at("2. Beta Institute of Plant Genetics", 610, 10, 150, 400)]
    assert block_authors(listed) == [("Maria Rossi", "Department of Botany, University of Alpha"),
                                     ("Paolo Bianchi", "Beta Institute of Plant Genetics")]
    semicolons = [_at("Ana Silva , Rui Costa , Joao Sousa", 640, 11, 150, 450,
                      "Ana Silva⟨1⟩, Rui Costa⟨2⟩, Joao Sousa⟨3⟩"),
                  _at("1. University of Alpha; 2. Beta Institute of Marine Research; 3.", 622, 9, 150, 450),
                  _at("Gamma Hospital", 612, 9, 150, 250)]
    assert block_authors(semicolons) == [("Ana Silva", "University of Alpha"),
                                         ("Rui Costa", "Beta Institute of Marine Research"),
                                         ("Joao Sousa", "Gamma Hospital")]


def test_block_authors_an_institution_broken_at_a_paragraph_line_end_is_put_back_together() -> None:
    """OUP's DNA Research (teak-genome-dnares) runs its numbered addresses on in one paragraph, each number
    raised after the block before it, and the measure breaks a name between two of its words ('...,
    University of Agricultural' over 'Sciences, College of Forestry, ...'; 'Genotypic Technology Private'
    over 'Limited, Bengaluru, ...'): the words up to the next comma finish the name. Other layouts of the
    class: PNAS's lettered blocks ('..., Alpha, AL 35401;' 'ᵇ' 'Department of Chemistry, Gamma State' over
    'University, Gamma City, GA 30301'), and a raised number after a point ('... Alpha, UK.' '²' 'Max Planck
    Institute for Evolutionary' over 'Anthropology, Leipzig, Germany.')."""
    dnares = [_at("Ramesh Vasudeva , Swathi Balakrishnan , Balaji Rajashekar", 557.6, 12, 63.8, 448.2,
                  "Ramesh Vasudeva⟨2⟩ , Swathi Balakrishnan⟨3⟩ , Balaji Rajashekar⟨4,5⟩"),
              _at("Nadu 641 002, India,", 479.8, 9, 63.9, 135.2),
              _at("2", 485.0, 6.4, 137.9, 140.5),
              _at("Forest Genetics and Biotechnology Division, Kerala Forest Research Institute, Peechi,", 479.2, 9,
                  141.4, 450.1),
              _at("Thrissur, Kerala 680 653, India,", 467.8, 9, 63.2, 172.8),
              _at("3", 472.9, 6.4, 175.4, 178.1),
              _at("Department of Forest Biology and Tree Improvement, University of Agricultural", 467.3, 9, 179.1,
                  462.1),
              _at("Sciences, College of Forestry, Sirsi, Uttara Kannada, Karnataka 581401, India,", 455.2, 9, 63.6,
                  341.4),
              _at("4", 461.0, 6.4, 344.1, 346.8),
              _at("Genotypic Technology Private", 455.2, 9, 347.6, 454.9),
              _at("Limited, Bengaluru, Karnataka 560094, India, and", 443.2, 9, 63.8, 237.6),
              _at("5", 448.9, 6.4, 240.8, 243.2),
              _at("Institute of Computer Science, University of Tartu, Estonia", 443.2, 9, 244.4, 452.1)]
    found = dict(block_authors(dnares))
    assert "University of Agricultural Sciences" in (found["Swathi Balakrishnan"] or "")
    assert found["Balaji Rajashekar"] == "Genotypic Technology Private Limited"
    assert (found["Ramesh Vasudeva"] or "").startswith("Forest Genetics and Biotechnology Division, Kerala")
    pnas = [_at("Ann Lee , Bo Chen", 640, 12, 60, 300, "Ann Lee⟨a⟩ , Bo Chen⟨b⟩"),
            _at("a", 624, 6, 60, 63),
            _at("Department of Biology, University of Alpha, Alpha, AL 35401;", 620, 8, 64, 300),
            _at("b", 624, 6, 303, 306),
            _at("Department of Chemistry, Gamma State", 620, 8, 307, 450),
            _at("University, Gamma City, GA 30301", 610, 8, 60, 200)]
    assert dict(block_authors(pnas))["Bo Chen"] == "Department of Chemistry, Gamma State University"
    nature = [_at("Eva Klein , Jan Novak", 640, 12, 60, 300, "Eva Klein⟨1⟩ , Jan Novak⟨2⟩"),
              _at("1", 624, 6, 60, 63),
              _at("Department of Zoology, University of Alpha, Alpha, UK.", 620, 8, 64, 280),
              _at("2", 624, 6, 283, 286),
              _at("Max Planck Institute for Evolutionary", 620, 8, 287, 450),
              _at("Anthropology, Leipzig, Germany.", 610, 8, 60, 200)]
    assert (dict(block_authors(nature))["Jan Novak"] or "").startswith(
        "Max Planck Institute for Evolutionary Anthropology")


def test_block_authors_names_set_apart_by_vertical_bars_are_a_list() -> None:
    """Wiley's current journal template (wildlife-forensics-animgen, Animal Genetics; Protein Science and
    Proteins use it) sets its names in rows with a vertical bar between them, each bar a segment of its own or
    glued to the name before or after it ('| Kyle M. Ewart¹,²', 'Irene Kuiper⁶ |'): every name is one, the bars
    none. Other layouts of the class: one line holding the bars ('Alice Smith¹ | Bob Jones² | Carol White¹'),
    and a row closing with a bar over the next ('Ana Lima¹ | Rui Melo² |' / 'Eva Rocha³')."""
    wiley = [_at("Greta J. Frankham", 595.9, 12, 46.2, 142.0, "Greta J. Frankham⟨1⟩"),
             _at("|", 593.6, 12, 168.9, 169.7),
             _at("Rob Ogden", 593.6, 12, 181.8, 237.5, "Rob Ogden⟨2,3⟩"),
             _at("|", 593.6, 12, 271.9, 272.7),
             _at("Barry W. Baker", 593.6, 12, 284.7, 364.3, "Barry W. Baker⟨4⟩"),
             _at("| Kyle M. Ewart", 593.6, 12, 391.0, 476.8, "| Kyle M. Ewart⟨1,2⟩"),
             _at("|", 593.6, 12, 510.2, 511.0),
             _at("Rebecca N. Johnson", 577.9, 12, 45.9, 146.8, "Rebecca N. Johnson⟨5⟩"),
             _at("|", 575.6, 12, 173.9, 174.7),
             _at("Irene Kuiper |", 575.6, 12, 186.7, 266.4, "Irene Kuiper⟨6⟩ |"),
             _at("Christina D. Lindquist |", 575.6, 12, 278.8, 408.4, "Christina D. Lindquist⟨7⟩ |"),
             _at("M. Katherine Moore", 559.9, 12, 45.8, 149.3, "M. Katherine Moore⟨8⟩")]
    assert _names(wiley) == ["Greta J. Frankham", "Rob Ogden", "Barry W. Baker", "Kyle M. Ewart",
                             "Rebecca N. Johnson", "Irene Kuiper", "Christina D. Lindquist", "M. Katherine Moore"]
    one_line = [_at("Alice Smith | Bob Jones | Carol White", 640, 12, 60, 400,
                    "Alice Smith⟨1⟩ | Bob Jones⟨2⟩ | Carol White⟨1⟩"),
                _at("University of Alpha", 620, 9, 60, 200, "⟨1⟩University of Alpha"),
                _at("Beta Institute", 610, 9, 60, 200, "⟨2⟩Beta Institute")]
    assert block_authors(one_line) == [("Alice Smith", "University of Alpha"), ("Bob Jones", "Beta Institute"),
                                       ("Carol White", "University of Alpha")]
    two_rows = [_at("Ana Lima | Rui Melo |", 640, 12, 60, 400, "Ana Lima⟨1⟩ | Rui Melo⟨2⟩ |"),
                _at("Eva Rocha", 625, 12, 60, 150, "Eva Rocha⟨3⟩")]
    assert _names(two_rows) == ["Ana Lima", "Rui Melo", "Eva Rocha"]


def test_block_authors_a_superscript_opening_a_segment_closes_the_name_left_of_it() -> None:
    """MDPI's old layout (wheat-volatiles-metabolites) sets the last names of a row as two segments, the
    second opening with the marks of the first's last name, a typed '*' after the superscript: 'Pietro A.
    Siciliano ³, Francesco P. Fanizzi' '²,* and Antonio F. Logrieco⁴,*'. The marks and the separator after
    them close Fanizzi's name: the rest goes on with the names, no affiliation block. Other layouts of the
    class: a typed dagger after the superscript ('Bob Jones' '²†, Carol White¹'), and a typed section sign
    with 'and' after it ('Dan Grey' '²§ and Eve Black³')."""
    mdpi = [_at("Pietro A. Siciliano , Francesco P. Fanizzi", 578.4, 12, 50.0, 261.1,
                "Pietro A. Siciliano ⟨3⟩, Francesco P. Fanizzi", "bold"),
            _at("* and Antonio F. Logrieco", 577.9, 12, 270.9, 418.9, "⟨2,⟩* and Antonio F. Logrieco⟨4,*⟩",
                "bold"),
            _at("2", 522.1, 8, 49.8, 53.3),
            _at("Di.S.Te.B.A., University of Salento, Prov.le Lecce-Monteroni, 73100 Lecce, Italy;", 515.1, 12,
                64.3, 460.6),
            _at("3", 488.1, 8, 50.0, 53.0),
            _at("C.N.R. Institute for Microelectronics and Microsystems (IMM), Lecce,", 481.1, 12, 64.5, 545.6),
            _at("4", 454.2, 8, 49.8, 53.4),
            _at("C.N.R. Institute of Sciences of Food Production (ISPA), Via Amendola 122/O, 70125 Bari, Italy",
                447.1, 12, 64.5, 528.2)]
    found = block_authors(mdpi)
    assert [name for name, _ in found] == ["Pietro A. Siciliano", "Francesco P. Fanizzi", "Antonio F. Logrieco"]
    assert "University of Salento" in (found[1][1] or "")
    assert "Institute of Sciences of Food Production" in (found[2][1] or "")
    symbol = [_at("Alice Smith , Bob Jones", 640, 12, 60, 200, "Alice Smith⟨1⟩, Bob Jones"),
              _at("†, Carol White", 640, 12, 210, 320, "⟨2⟩†, Carol White⟨1⟩"),
              _at("University of Alpha", 620, 9, 60, 200, "⟨1⟩University of Alpha"),
              _at("Beta Institute", 610, 9, 60, 200, "⟨2⟩Beta Institute")]
    assert block_authors(symbol) == [("Alice Smith", "University of Alpha"), ("Bob Jones", "Beta Institute"),
                                     ("Carol White", "University of Alpha")]
    plain_and = [_at("Dan Grey", 640, 12, 60, 110),
                 _at("§ and Eve Black", 640, 12, 120, 220, "⟨2⟩§ and Eve Black⟨3⟩"),
                 _at("Gamma University", 620, 9, 60, 200, "⟨2⟩Gamma University"),
                 _at("Delta Hospital", 610, 9, 60, 200, "⟨3⟩Delta Hospital")]
    assert block_authors(plain_and) == [("Dan Grey", "Gamma University"), ("Eve Black", "Delta Hospital")]


def test_a_byline_whose_ieee_grades_are_set_in_italic_is_one_line_of_names() -> None:
    """IEEE Transactions (gaussian-qml-iva-tsp): 'Amir Weiss' upright, then ', Student Member, IEEE, Sher Ali
    Cheema, Student Member, IEEE, Martin Haardt, Fellow, IEEE,' (the grades italic, so the piece reads italic)
    over 'and Arie Yeredor, Senior Member, IEEE'. The grades are no names and no affiliation; a piece in
    another face without them is not the byline's."""
    block = [_at("Amir Weiss", 635, 11, 44, 100),
             _at(", Student Member, IEEE, Sher Ali Cheema , Student Member, IEEE, Martin Haardt , Fellow, IEEE,",
                 633, 11, 106, 560, style="italic"),
             _at("and Arie Yeredor , Senior Member, IEEE", 620, 11, 206, 400, style="italic")]
    assert _names(block) == ["Amir Weiss", "Sher Ali Cheema", "Martin Haardt", "Arie Yeredor"]
    plain = [_at("Amir Weiss", 635, 11, 44, 100), _at("Google Research, Mountain View", 620, 11, 44, 300, "italic")]
    assert block_authors(plain) == [("Amir Weiss", "Google Research, Mountain View")]


@pytest.mark.parametrize("place", ["Tel-Aviv University", "Tel Aviv University"])
def test_a_city_named_tel_is_no_telephone(place: str) -> None:
    """'Tel' is a telephone's label only before its number, its other label or the line's end: 'School of
    Electrical Engineering, Tel-Aviv University, Tel-Aviv 69978, Israel' names the university
    (gaussian-qml-iva-tsp), 'Tel: +972 3 640 8111' is an address part."""
    assert not ADDRESS.search(place)
    assert all(ADDRESS.search(t) for t in ("Tel: +972 3 640 8111", "Tel./Fax: +1 555", "Tel.", "Telephone 555-1234"))


def test_a_names_marks_after_an_orcid_icon_open_the_next_piece_of_its_line() -> None:
    """OUP (mungesumstats-bioinformatics): 'Alan E. Murphy' then, 2.5 sizes on (the ORCID icon between),
    '¹,²*, Brian M. Schilder' '¹,²' 'and Nathan G. Skene¹,²*' on baselines a point apart: the marks opening the
    second piece close the first name, so the row is one line of three names, each linked to its blocks."""
    block = [_at("Alan E. Murphy", 566, 12, 63, 150),
             _at("*, Brian M. Schilder", 567, 12, 180, 289, marked="⟨1,2⟩*, Brian M. Schilder"),
             _at("1,2", 573, 8.5, 306, 318), _at("and Nathan G. Skene*", 568, 12, 321, 459,
                                                  marked="and Nathan G. Skene⟨1,2⟩*"),
             _at("UK Dementia Research Institute at Imperial College London, London W12 0BZ, UK and", 546, 9, 67,
                 393, marked="⟨1⟩UK Dementia Research Institute at Imperial College London, London W12 0BZ, UK and"),
             _at("Department of Brain Sciences, Imperial College London", 546, 9, 401, 549,
                 marked="⟨2⟩Department of Brain Sciences, Imperial College London")]
    ukdri = "UK Dementia Research Institute at Imperial College London"
    assert block_authors(block) == [("Alan E. Murphy", ukdri), ("Brian M. Schilder", ukdri),
                                    ("Nathan G. Skene", ukdri)]


def test_nature_portfolios_footnote_numbers_glued_to_their_blocks_and_an_envelope_after_a_mark() -> None:
    """Communications Medicine (lockdown-surveys-commsmed): 'Andreas Koher¹, Frederik Jørgensen²,
    Michael Bang Petersen² & Sune Lehmann¹,³✉', the last mark raised a quarter of the line's size with the
    corresponding author's envelope after it, over the page's footnote '1DTU Compute, Technical University of
    Denmark, Lyngby, Denmark. 2Department of Political Science, Aarhus University, ...', each number glued to
    its block."""
    block = [_at("Andreas Koher", 585, 11, 44, 112, marked="Andreas Koher⟨1⟩"),
             _at(", Frederik Jørgensen", 583, 11, 116, 207),
             _at(", Michael Bang Petersen", 583, 11, 225, 336, marked="⟨2⟩, Michael Bang Petersen"),
             _at("2", 589, 8.8, 349, 353), _at("& Sune Lehmann", 585, 11, 358, 435), _at("1,3✉", 588, 11, 448, 466)]
    page = ("Epidemic modelling\nAndreas Koher1, Frederik Jørgensen2, Michael Bang Petersen2 & Sune Lehmann1,3✉\n"
            "Abstract\nBackground Surveys.\n1DTU Compute, Technical University of Denmark, Lyngby, Denmark. "
            "2Department of Political Science, Aarhus University, Aarhus, Denmark. 3 Center for\nSocial Data "
            "Science, University of Copenhagen, Copenhagen, Denmark. ✉email: sljo@dtu.dk\n")
    authors = dict(page_authors(block, page))
    assert "Technical University of Denmark" in (authors["Andreas Koher"] or "")
    assert "Aarhus University" in (authors["Michael Bang Petersen"] or "")
    assert "Technical University of Denmark" in (authors["Sune Lehmann"] or "")


def test_a_block_broken_mid_phrase_goes_on_in_the_next_lines_words_whatever_column_they_stand_in() -> None:
    """OUP's run-on blocks set side by side (biogem-bioinformatics): '¹³Silicon Life Sciences, Minneapolis,
    USA;' '¹⁴Department of Biochemistry and' on one row over 'Molecular Biology, University of Melbourne,
    Australia;' '¹⁵Laboratory of Genome Database, ...'. Block 14 broke off at 'and': the next line's words are
    its, not those of block 13 above them. A block closed by its separator leaves the next line to its column."""
    names = _at("Trevor J Wennblom, Ben J Woodcroft, Toshiaki Katayama", 620, 12, 46, 500,
                marked="Trevor J Wennblom⟨13⟩, Ben J Woodcroft⟨14⟩, Toshiaki Katayama⟨15⟩")
    rows = [_at("Silicon Life Sciences, Minneapolis, USA;", 513, 10, 130, 307,
                marked="⟨13⟩Silicon Life Sciences, Minneapolis, USA;"),
            _at("Department of Biochemistry and", 513, 10, 320, 462, marked="⟨14⟩Department of Biochemistry and"),
            _at("Molecular Biology, University of Melbourne, Australia;", 501, 10, 46, 279),
            _at("Laboratory of Genome Database, University of Tokyo, Japan", 501, 10, 292, 473,
                marked="⟨15⟩Laboratory of Genome Database, University of Tokyo, Japan")]
    found = dict(block_authors([names, *rows]))
    assert found["Trevor J Wennblom"] == "Silicon Life Sciences, Minneapolis, USA"
    assert found["Ben J Woodcroft"].startswith("Department of Biochemistry and Molecular Biology, University of "
                                               "Melbourne")


def test_a_row_of_names_shares_the_one_column_of_lines_under_it() -> None:
    """ICLR 2015 (nmt-align-translate-iclr): 'Dzmitry Bahdanau' over 'Jacobs University Bremen, Germany', then
    the row 'KyungHyun Cho   Yoshua Bengio*' over 'Université de Montréal', set under Cho alone. Bengio's
    line is his row's (before, his footnote's 'CIFAR Senior Fellow' was taken). Guards: a name with lines keeps
    them, lines side by side are a block per column, and lines naming no institution are no one's."""
    block = [_at("Dzmitry Bahdanau", 646, 10, 114, 190), _at("Jacobs University Bremen, Germany", 635, 10, 114, 260),
             _at("KyungHyun Cho", 606, 10, 114, 180), _at("Yoshua Bengio", 606, 10, 204, 262,
                                                           marked="Yoshua Bengio⟨∗⟩"),
             _at("Université de Montréal", 597, 10, 114, 210)]
    assert block_authors(block) == [("Dzmitry Bahdanau", "Jacobs University Bremen, Germany"),
                                    ("KyungHyun Cho", "Université de Montréal"),
                                    ("Yoshua Bengio", "Université de Montréal")]
    side_by_side = [*block[:4], _at("Université de Montréal", 597, 10, 114, 190), _at("CIFAR", 597, 10, 204, 240)]
    assert dict(block_authors(side_by_side))["Yoshua Bengio"] == "CIFAR"
    no_institution = [*block[:4], _at("Montréal, Québec, Canada", 597, 10, 114, 210)]
    assert dict(block_authors(no_institution))["Yoshua Bengio"] is None


def test_describe_a_footnote_naming_a_position_is_no_affiliation() -> None:
    """A name's mark leading to its position ('∗CIFAR Senior Fellow', 'Senior Research Scientist') names no
    institution: the footnote places no one by it."""
    for position in ("CIFAR Senior Fellow", "Senior Research Scientist"):
        article = _icml_page([("Ada Lovelace", "∗"), ("Alan Turing", "†")],
                             [_at(f"{position} Beta Labs", 137, 9, 71, 200, f"∗{position} †Beta Labs")])
        assert dict(article.authors)["Ada Lovelace"] is None


@pytest.mark.parametrize("line", ["(Lecture at the physical-mathematical faculty, Royal Academy of Sciences)",
                                  "X Version 11, Release 7.7", "[Draft of the department's report]"])
def test_an_aside_or_a_software_release_under_a_name_is_no_affiliation(line: str) -> None:
    """A translator's note in brackets under a name (markov-onegin-cup: '(Lecture at the
    physical-mathematical faculty, Royal Academy of Sciences, ...') or a manual's release line
    (x-protocol-security: 'X Version 11, Release 7.7') is no institution: kb leaves the affiliation empty
    rather than store it. An institution under the name stays."""
    name = _at("A. A. Markov", 640, 12, 200, 300)
    assert page_authors([name, _at(line, 625, 10, 150, 400)], "") == [("A. A. Markov", None)]
    assert page_authors([name, _at("Royal Academy of Sciences, St. Petersburg", 625, 10, 150, 400)], "") == [
        ("A. A. Markov", "Royal Academy of Sciences, St. Petersburg")]

