"""A one-page article PDF made with fpdf2, for the tests of reading a paper and looking its identifiers up
(``kb add FILE.pdf`` and the app's upload): a header line, a large title, names over an institution, an
abstract and an introduction."""

from __future__ import annotations

from pathlib import Path

# The bioRxiv preprint the recorded lookups answer for (tests/fixtures/lookups/*10.1101_2020.12.15.422761*).
PREPRINT_DOI = "10.1101/2020.12.15.422761"
PREPRINT_TITLE = "Transformer protein language models are unsupervised structure learners"
BERKELEY = "University of California, Berkeley"


def make_article_pdf(path: Path, title: str, first_line: str, names: str, place: str) -> Path:
    """A one-page article: a header line, a large title, a line of names over an institution, an abstract."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    for style, size, height, text in [("", 8, 5, first_line), ("B", 17, 8, title), ("", 11, 6, names),
                                      ("", 9, 5, place), ("B", 10, 6, "Abstract")]:
        pdf.set_font("helvetica", style, size=size)
        pdf.multi_cell(0, height, text, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("helvetica", size=10)
    pdf.multi_cell(0, 5, "Unsupervised contact prediction is central to protein structure determination.\n\n"
                   + "1 Introduction\nAttention maps of protein language models capture contacts. " * 4)
    pdf.output(str(path))
    return path


def make_preprint_pdf(path: Path) -> Path:
    """The bioRxiv preprint's first page: its DOI in the header, three of its five authors over one place."""
    return make_article_pdf(path, PREPRINT_TITLE, f"bioRxiv preprint doi: https://doi.org/{PREPRINT_DOI}; this "
                            "version posted December 15, 2020.", "Roshan Rao, Joshua Meier and Alexander Rives",
                            BERKELEY)


def make_first_page_pdf(path: Path, title: str, names: str, place: str, *, header: tuple[str, ...] = (),
                        footer: tuple[str, ...] = (), stamp: str | None = None, title_size: int = 17) -> Path:
    """A template's first page: small header lines, a centred title over a line of names and an institution,
    an abstract and an introduction, small footer lines at the page's foot, and, as arXiv prints it, a stamp
    turned up the left margin."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_y(8)
    pdf.set_font("helvetica", size=8)
    for line in header:
        pdf.cell(0, 4, line, new_x="LMARGIN", new_y="NEXT")
    pdf.set_y(30)
    for style, size, height, text in [("B", title_size, 8, title), ("", 11, 6, names), ("", 9, 5, place),
                                      ("B", 10, 6, "Abstract")]:
        pdf.set_font("helvetica", style, size=size)
        pdf.multi_cell(0, height, text, align="C" if size > 10 else "L", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("helvetica", size=10)
    pdf.multi_cell(0, 5, "Protein language models learn contacts from sequences alone. " * 3
                   + "\n1 Introduction\n" + "Attention maps of protein language models capture contacts. " * 8)
    pdf.set_font("helvetica", size=7)
    pdf.set_y(-10 - 4 * len(footer))
    for line in footer:
        pdf.cell(0, 4, line, new_x="LMARGIN", new_y="NEXT")
    if stamp:
        pdf.set_font("times", size=20)
        with pdf.rotation(90, 12, 200):
            pdf.text(12, 200, stamp)
    pdf.output(str(path))
    return path


def make_manuscript_pdf(path: Path, title: str, names: str, places: tuple[str, ...], *, title_size: int = 12,
                        numbered: bool = True, header: str | None = None, title_align: str = "C") -> Path:
    """A manuscript's first page as a word processor sets a submission (bioRxiv's, medRxiv's, a journal's
    review copy): Times at 12 points, double-spaced, the title in bold (in the body's size or larger), centred
    names and places, and a line number in the left margin beside every line; a preprint server's stamp
    over it (``header``); the title centred or flush left (``title_align``: 'C' or 'L')."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_auto_page_break(False)
    pdf.add_page()
    number = 0

    def line(style: str, size: int, text: str, align: str) -> None:
        nonlocal number
        pdf.set_font("times", style, size=size)
        for row in pdf.multi_cell(0, 10, text, align=align, dry_run=True, output="LINES"):
            if numbered:
                number += 1
                pdf.set_font("helvetica", size=7)
                pdf.text(4, pdf.get_y() + 6, str(number))
                pdf.set_font("times", style, size=size)
            pdf.multi_cell(0, 10, row, align=align, new_x="LMARGIN", new_y="NEXT")

    if header:
        pdf.set_font("helvetica", size=7)
        pdf.set_y(5)
        pdf.cell(0, 4, header)
    pdf.set_y(20)
    line("B", title_size, title, title_align)
    line("", 12, names, "C")
    for place in places:
        line("", 12, place, "C")
    line("B", 12, "Abstract", "L")
    line("", 12, "Protein language models learn contacts from sequences alone. " * 4, "L")
    line("B", 12, "Introduction", "L")
    line("", 12, "Attention maps of protein language models capture contacts. " * 6, "L")
    pdf.output(str(path))
    return path
