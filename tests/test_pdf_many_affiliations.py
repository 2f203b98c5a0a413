"""Round 11's third wave (life-science articles with many institutions per article): author-block layouts
stated in general and tested on constructed page-1 segments, each on the layout of the real article it was
found on (tests/test_real_pdfs.py reads that article) and on two layouts of other templates the corpus does not
hold (other marks, other wording, another break)."""

from __future__ import annotations

import pytest

from kb.papers.pdf_authors import block_authors
from kb.papers.pdf_layout import describe
from kb.papers.pdf_names import join_wrapped
from kb.papers.pdf_page import PdfArticle, Segment


def _at(text: str, y: float, size: float, x0: float, x1: float, marked: str = "") -> Segment:
    """A page-1 segment with its box; superscripts between the mark brackets in ``marked``."""
    return Segment(text, size, x0, x1, y, marked)


def _line(marked: str, y: float, size: float = 12.0) -> Segment:
    """A line of the author block with its superscripts between the mark brackets, its box as wide as its
    text."""
    text = marked
    while "⟨" in text:
        start = text.index("⟨")
        text = text[:start] + text[text.index("⟩", start) + 1:]
    return Segment(text, size, 56, 56 + 5 * len(text), y, marked)


# -- a name the measure broke where its initials stand --------------------------------------------------------

@pytest.mark.parametrize(("first", "second", "broken"), [
    # NAR (telomere-alt-nar): the given name ends the line, its initial and surname open the next
    ("Michael Lee⟨1⟩, Erdahl T. Teber⟨2⟩, Ann-Marie Patch⟨4⟩, Rebecca",
     "A. Dagg⟨5⟩, Loretta M. S. Lau⟨5⟩, Jonathan W. Arthur⟨2⟩,", "Rebecca A. Dagg"),
    # three initials on the next line, raised symbols after the names
    ("Michael Lee⟨1⟩, Erdahl T. Teber⟨2⟩, Ann-Marie Patch⟨4⟩, Maria",
     "J. K. L. Smith⟨5,†⟩, Loretta M. S. Lau⟨5⟩, Jonathan W. Arthur⟨2⟩,", "Maria J. K. L. Smith"),
    # two initials after a hyphenated given name, Cell's 'and' before the last name
    ("Michael Lee⟨1⟩, Erdahl T. Teber⟨2⟩, Ann-Marie Patch⟨4⟩, Jean-Luc",
     "M. S. Dagg⟨5⟩, Loretta Lau⟨5⟩ and Jonathan W. Arthur⟨2⟩", "Jean-Luc M. S. Dagg"),
])
def test_a_name_broken_where_its_initials_stand_is_one_name(first: str, second: str, broken: str) -> None:
    """A long byline wraps where the measure ends, inside a name: its given name ends one line and its
    initials and surname open the next ('Rebecca' / 'A. Dagg⁵'). The first line is no list of names alone (a
    given name is no name), so without the join every name of it was lost. A place over names is not joined."""
    block = [_line(first, 654), _line(second, 638), _line("Nicola Waddell⟨4⟩ and Hilda A. Pickett⟨1,*⟩", 622),
             _line("⟨1⟩Telomere Unit, Alpha Medical Research Institute, Westmead", 600, 10),
             _line("⟨2⟩Bioinformatics Unit, Alpha Medical Research Institute, Westmead", 588, 10),
             _line("⟨4⟩Genomics Group, Beta Institute, Herston", 576, 10),
             _line("⟨5⟩Cancer Research Unit, Alpha Medical Research Institute, Westmead", 564, 10)]
    authors = dict(block_authors(block))
    assert list(authors)[:4] == ["Michael Lee", "Erdahl T. Teber", "Ann-Marie Patch", broken]
    assert authors[broken] == "Cancer Research Unit, Alpha Medical Research Institute, Westmead"
    assert authors["Hilda A. Pickett"] == "Telomere Unit, Alpha Medical Research Institute, Westmead"
    # A place closing a line ('New York, NY') over a line of names is no broken name: the lines stay apart.
    assert len(join_wrapped([_line("Alpha Labs, New York, NY", 654), _line("Bob Jones, Carol King", 638)])) == 2


# -- an author block longer than its line count in segments ---------------------------------------------------

def _byline(rows: list[list[tuple[str, str]]], top: float, raise_by: float = 6.8) -> list[Segment]:
    """A byline whose every name and every raised mark after it the extractor gives as a segment of its own
    (Elsevier's ScienceDirect journals: 'Zepeng Mu' / 'a' / ', Zhuoning Zou' / 'a' / ','), row by row."""
    segments = []
    for row, names in enumerate(rows):
        y, x = top - 13 * row, 33.0
        for at, (name, mark) in enumerate(names):
            text = name if at == 0 else f", {name}"
            segments.append(_at(text, y, 10.8, x, x + 5 * len(text)))
            x += 5 * len(text) + 3
            segments.append(_at(mark, y + raise_by, 7.8, x, x + 4 * len(mark)))
            x += 4 * len(mark) + 1
        if row < len(rows) - 1:
            segments.append(_at(",", y, 10.8, x, x + 2))
    return segments


_SURNAMES = ["Mu", "Zou", "Yang", "Wang", "Xu", "Huang", "Cai", "Liu", "Mo", "Dang", "Li", "Jiang", "Tan",
             "Hu", "Wei", "Lou", "Yu", "Sun"]


@pytest.mark.parametrize(("marks", "blocks"), [
    # KeAi (tetracycline-ecoli-ssb): raised letters, the letter of each address on the line above it
    (["a"] * 14 + ["b", "b", "c", "d, e"], [("a", "Alpha University"), ("b", "Beta Institute"),
                                          ("c", "Gamma Laboratory"), ("d", "Delta Institute")]),
    # raised numbers, more names to a row
    (["1"] * 10 + ["2"] * 8, [("1", "Alpha University"), ("2", "Beta Institute")]),
    # raised symbols after letters, a corresponding author's '*'
    (["a"] * 16 + ["b, *", "b"], [("a", "Alpha University"), ("b", "Beta Institute")]),
])
def test_an_author_block_is_read_for_its_lines_however_many_segments_they_are(
        marks: list[str], blocks: list[tuple[str, str]]) -> None:
    """The author block is read for so many lines at most where no abstract heading ends it: lines, not the
    segments the extractor cut them into. A byline of 18 names over four lines, each name and each raised mark
    a segment of its own, is 40 segments: counted as segments, the last names and every address were lost."""
    names = [(f"{given} {surname}", mark) for given, surname, mark in
             zip(["Zepeng", "Zhuoning", "Ye", "Wenbo", "Yue", "Jianyi", "Ruiling", "Boyi", "Yajin", "Yiqun",
                  "Yongming", "Yueren", "Qingyang", "Cheng", "Sha", "Chunbo", "Yang", "Jiangyun"],
                 _SURNAMES, marks, strict=True)]
    rows = [names[at:at + 6] for at in range(0, len(names), 6)]
    segments = [_at("Engineered bacteria that sense and degrade an antibiotic", 600, 14, 33, 400),
                *_byline(rows, 580)]
    y = 520.0
    for key, institution in blocks:
        segments += [_at(key, y + 4, 4.7, 33, 35), _at(f"{institution}, Beijing, 100049, China", y, 6.5, 37, 300)]
        y -= 8.6
    article = PdfArticle(pages=["Engineered bacteria that sense and degrade an antibiotic\n..."])
    describe(article, segments)
    assert [name for name, _ in article.authors] == [name for name, _ in names]
    institutions = dict(blocks)
    for (name, affiliation), (_, mark) in zip(article.authors, names, strict=True):
        assert affiliation is not None and affiliation.startswith(institutions[mark[0]]), (name, affiliation)


# -- numbered blocks run on in a paragraph, a number typed after the address before it ------------------------

_NAMES = _line("Peter Wilf⟨1⟩, Scott L. Wing⟨2⟩, Herbert W. Meyer⟨3⟩, Diane M. Erwin⟨8⟩, Maria A. Gandolfo⟨9⟩, "
               "Shusheng Hu⟨12⟩", 506, 11.3)


@pytest.mark.parametrize(("lines", "want"), [
    # Pensoft (fossil-leaves-phytokeys): the numbers set apart by a no-break space, after the country
    (["1\u00a0Department of Geosciences, Pennsylvania State University,",
      "University Park, PA 16802, USA 2\u00a0Department of Paleobiology, Smithsonian Institution, Washington, DC",
      "20013, USA 3\u00a0Florissant Fossil Beds National Monument, National Park Service, Florissant, CO 80816, "
      "USA 8\u00a0University", "of California-Berkeley, Museum of Paleontology, Berkeley, CA 94720, USA 9\u00a0LH "
      "Bailey Hortorium, Cornell University, Ithaca, NY, 14853, USA 12\u00a0Division of Paleobotany, Yale "
      "University, New Haven, CT", "Citation: Wilf P, Wing SL, Meyer HW, Erwin DM, Gandolfo MA, Hu S (2021)"],
     {"Peter Wilf": "Pennsylvania State University", "Scott L. Wing": "Smithsonian Institution",
      "Herbert W. Meyer": "Florissant Fossil Beds National Monument", "Diane M. Erwin":
      "University of California-Berkeley", "Maria A. Gandolfo": "Cornell University",
      "Shusheng Hu": "Yale University"}),
    # plain spaces, a region closing the address before the number, a block's line opening with its country
    (["1 School of Biology, University of Alpha, Alphaville 4001, Queensland 2 Beta Museum of",
      "Natural History, Betatown, New South Wales 3 Gamma Institute, Gammaville 2000,",
      "Australia 8 Delta University, Deltaville 1234, Victoria 9 Epsilon College,", "Epsilontown, Tasmania 12 "
      "Zeta Hospital, Zetaville 5000, South Australia"],
     {"Peter Wilf": "University of Alpha", "Scott L. Wing": "Beta Museum of Natural History",
      "Herbert W. Meyer": "Gamma Institute", "Diane M. Erwin": "Delta University",
      "Maria A. Gandolfo": "Epsilon College", "Shusheng Hu": "Zeta Hospital"}),
    # a number in a place's name is no mark: 'Route 2' runs on below the numbers opened before it
    (["1 Alpha University, Alphaville 10115, Germany 2 Beta Institute, Betastadt 20095, Germany 3 Gamma",
      "Centre, Route 2 Building, Gammaburg 30159, Germany 8 Delta University, Deltaburg 40210, Germany 9 Epsilon",
      "College, Epsilonburg 50667, Germany 12 Zeta Clinic, Zetaburg 60311, Germany"],
     {"Peter Wilf": "Alpha University", "Scott L. Wing": "Beta Institute", "Herbert W. Meyer": "Gamma Centre",
      "Diane M. Erwin": "Delta University", "Maria A. Gandolfo": "Epsilon College", "Shusheng Hu": "Zeta Clinic"}),
])
def test_numbered_blocks_run_on_after_the_address_before_them(lines: list[str], want: dict[str, str]) -> None:
    """A paragraph of affiliation blocks whose numbers are typed in the text's size after the last word of the
    block before, no separator between ('..., PA 16802, USA 2 Department of Paleobiology, Smithsonian
    Institution, ...', Pensoft): each number a name carries opens its block, on every line, where it follows an
    address's last part (a country, a region) and runs on from the numbers before it on the line. A line with
    an address holding such marks is read block by block (before, it was cut at its first address, the blocks
    after lost), the text before its first mark going on with the block above; a journal's line saying how to
    cite the article is nobody's affiliation."""
    block = [_NAMES, *(_line(line, 440 - 12 * i, 9.0) for i, line in enumerate(lines))]
    authors = dict(block_authors(block))
    for name, institution in want.items():
        assert authors[name] is not None and institution in authors[name], (name, authors[name])
    assert not any("Citation" in (a or "") or "Route" in (a or "") and "Gamma" not in a for a in authors.values())
    # (a company whose name opens with the word is an institution: only the label with its colon is the
    # journal's line)
    company = [_line("Ada Lovelace⟨1⟩", 506, 11.3), _line("⟨1⟩Citation Technologies Inc., Alphaville", 440, 9.0)]
    assert block_authors(company) == [("Ada Lovelace", "Citation Technologies Inc., Alphaville")]


# -- a side column left of the title ------------------------------------------------------------------------

def _side_column(lines: list[str], top: float) -> list[Segment]:
    """A side column's lines, set small at the page's left edge from level with the title down."""
    return [_at(line, top - 9.5 * i, 7.0, 57, 57 + 3.2 * len(line)) for i, line in enumerate(lines)]


@pytest.mark.parametrize("side", [
    # Frontiers (sheep-lameness-fvets): its editors and reviewers with their institutions, then the contacts
    ["OPEN ACCESS", "EDITED BY", "Tony Waterhouse,", "Scotland’s Rural College,", "United Kingdom", "REVIEWED BY",
     "Carrie S. Wilson,", "Agricultural Research Service (USDA),", "United States", "Hamideh Keshavarzi,",
     "Agriculture and Food, Commonwealth"],
    # an article's record down the margin: the editor, the dates and a corresponding author
    ["RESEARCH ARTICLE", "Editor: Alice Smith,", "University of Alpha", "Received: 12 May 2020",
     "Accepted: 3 June 2020", "*For correspondence:", "Bob Jones"],
    # the column's names first, without labels, each over its institution
    ["Alice Smith", "University of Alpha", "Bob Jones", "Beta Institute", "Carol King", "Gamma College"],
])
def test_a_side_column_left_of_the_title_is_no_author_block(side: list[str]) -> None:
    """Frontiers sets its title, names and addresses in a right column and a side column at the page's left
    (OPEN ACCESS, EDITED BY, REVIEWED BY, with names and institutions) from level with the title down: the side
    column's lines come first in the text order and stand under the title's top, but end left of the title's
    lines; they are never the author block, whatever they hold. (Before, the reviewers were the authors.)"""
    title = [_at("Social behaviour and", 725, 20.9, 223, 422), _at("transmission of lameness in a", 700, 20.9, 223,
                                                                   504), _at("flock of ewes and lambs", 675.5, 20.9,
                                                                             223, 454)]
    names = [_at("Katharine E. Lewis, Emily Price, Darren P. Croft", 642, 11, 223, 480,
                 "Katharine E. Lewis⟨1⟩, Emily Price⟨2⟩, Darren P. Croft⟨2⟩"),
             _at("School of Life Sciences, University of Warwick, Coventry, United Kingdom, Centre for Research", 628,
                 7, 223, 535, "⟨1⟩School of Life Sciences, University of Warwick, Coventry, United Kingdom, "
                              "⟨2⟩Centre for Research"),
             _at("in Animal Behaviour, University of Exeter, Exeter, United Kingdom", 619, 7, 223, 470)]
    article = PdfArticle(pages=["Social behaviour and\ntransmission of lameness in a\nflock of ewes and lambs\n..."])
    describe(article, [*_side_column(side, 700), *title, *names])
    assert [name for name, _ in article.authors] == ["Katharine E. Lewis", "Emily Price", "Darren P. Croft"]
    assert [(a or "").split(", ")[1] for _, a in article.authors] == [
        "University of Warwick", "University of Exeter", "University of Exeter"]
    # An arXiv stamp up the margin level with the title, or a line's number, is no side column: the left cell
    # of an author grid under a short title, ending left of it, stays in the block.
    stamp = _at("arXiv:2101.01234v1 [q-bio.BM] 4 Jan 2021", 640, 20, 10, 30)
    grid = [_at("A Short Title", 700, 17, 240, 370), _at("1", 700, 7, 20, 24), _at("Ada Lovelace", 660, 11, 90, 170),
            _at("Alan Turing", 660, 11, 260, 330), _at("Grace Hopper", 660, 11, 420, 500),
            _at("University of Alpha", 648, 10, 90, 185), _at("Beta Institute", 648, 10, 260, 330),
            _at("Gamma College", 648, 10, 420, 500)]
    article = PdfArticle(pages=["A Short Title\nAda Lovelace Alan Turing Grace Hopper\n..."])
    describe(article, [stamp, *grid])
    assert [name for name, _ in article.authors] == ["Ada Lovelace", "Alan Turing", "Grace Hopper"]


# -- a symbol typed between a name's raised marks ------------------------------------------------------------

@pytest.mark.parametrize(("line", "first"), [
    # Frontiers (sheep-lameness-fvets): the corresponding author's '*' typed between the raised '1' and '†'
    ("Katharine E. Lewis⟨1⟩* ⟨†⟩, Emily Price⟨2⟩", "Katharine E. Lewis"),
    # a double dagger typed between two superscripts, the names joined by 'and'
    ("Alice Smith⟨1⟩‡⟨§⟩ and Emily Price⟨2⟩", "Alice Smith"),
    # two numbers in the first superscript, a typed '*' before a raised '#'
    ("Ada Lovelace⟨1,3⟩*⟨#⟩, Emily Price⟨2⟩", "Ada Lovelace"),
])
def test_a_symbol_typed_between_raised_marks_keeps_the_marks_before_it(line: str, first: str) -> None:
    """A name's marks are one run though a symbol between them is typed on the line, not raised ('Lewis¹*†'):
    the number before it is the name's too, and links the name to its block (before, only the marks after the
    typed symbol were read, and the name had no affiliation)."""
    block = [_line(line, 640, 11), _line("⟨1⟩School of Life Sciences, University of Warwick", 620, 7),
             _line("⟨2⟩Department of Zoology, University of Exeter", 610, 7)]
    assert block_authors(block) == [(first, "School of Life Sciences, University of Warwick"),
                                    ("Emily Price", "Department of Zoology, University of Exeter")]


# -- an institution's name running on into its postcode ------------------------------------------------------

@pytest.mark.parametrize(("address", "institution"), [
    # KeAi (tetracycline-ecoli-ssb): a year where a postcode stands, the letter on the line above
    ("University of Chinese Academy of Sciences Team for iGEM 2016, Beijing, 100049, China",
     "University of Chinese Academy of Sciences Team for iGEM"),
    # a Nordic address: the postcode after the institution's name, no comma between
    ("Karolinska Institutet 171 77 Stockholm, Sweden", "Karolinska Institutet"),
    # a German one, the city after the postcode
    ("Universität Hamburg 20146 Hamburg, Germany", "Universität Hamburg"),
])
def test_an_institution_running_on_into_its_postcode_is_named_by_the_words_before_it(
        address: str, institution: str) -> None:
    """An affiliation's first part runs on from the institution's name into its postcode where no comma
    parts them ('Karolinska Institutet 171 77 Stockholm'): the first part is an address part, so the block
    was dropped and its names had no affiliation. The institution is the words before the number, where they
    name one; a street ('12 Main Street') or a room ('Room 123') names none."""
    block = [_line("Ada Lovelace⟨a⟩, Alan Turing⟨b⟩", 640, 11),
             _at("a", 624, 4.7, 33, 35), _at(address, 620, 6.5, 37, 300),
             _at("b", 615, 4.7, 33, 35), _at("Beta Institute, Betatown, 12345, Germany", 611, 6.5, 37, 300)]
    assert block_authors(block) == [("Ada Lovelace", institution), ("Alan Turing", "Beta Institute, Betatown")]
    streets = [_line("Ada Lovelace⟨a⟩", 640, 11), _at("a", 624, 4.7, 33, 35),
               _at("12 Main Street, Alphaville 12345", 620, 6.5, 37, 300)]
    assert block_authors(streets) == [("Ada Lovelace", None)]
