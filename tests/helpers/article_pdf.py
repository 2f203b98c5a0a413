"""A one-page article PDF made with fpdf2, for the tests of reading a paper and looking its identifiers up
(``kb add FILE.pdf`` and the app's upload): a header line, a large title, names over an institution, an
abstract and an introduction."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

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


ManuscriptLine = tuple[str, float, str]  # (style: '', 'B', 'I'; size in points; text with '^{mark}' superscripts)
DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def make_manuscript_pdf(path: Path, lines: list[ManuscriptLine], *, line_numbers: bool = False,
                        spacing: float = 1.0, centred: int | tuple[int, ...] = 0, font: str = "helvetica",
                        sidebar: tuple[str, ...] = ()) -> Path:
    """A first page as a template or a word processor sets it, line by line: each line's style, size and text
    (a mark written '^{1}' is set as a superscript), the first ``centred`` lines (or the lines of these
    numbers) centred, the rest flush left;
    lines ``spacing`` times apart (2.0: a double-spaced manuscript) and, with ``line_numbers``, numbered in
    the left margin as bioRxiv and medRxiv submissions are. ``font`` 'dejavu' sets letters beyond Latin-1.
    ``sidebar``: small lines in a column left of the text (eLife's), the line numbers between it and the text."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_auto_page_break(False)
    pdf.add_page()
    family = font
    if font == "dejavu":
        for style in ("", "B", "I"):
            pdf.add_font("dejavu", style, str(DEJAVU))  # one face stands for all three: sizes tell them apart
    if sidebar:
        pdf.set_left_margin(40)
    pdf.set_font(family, "", 6)
    for i, note in enumerate(sidebar):
        pdf.set_xy(4, 60 + 4 * i)
        pdf.cell(25, 3, note)
    pdf.set_y(20)
    for number, (style, size, text) in enumerate(lines, start=1):
        height = size * 0.353 * 1.25 * spacing  # points to millimetres, a 1.25 leading, times the spacing
        y = pdf.get_y()
        if line_numbers:
            pdf.set_font(family, "", 8)
            pdf.set_xy(pdf.l_margin - 8, y)
            pdf.cell(6, height, str(number), align="R")
        pdf.set_font(family, style, size)
        pieces = [p for p in re.split(r"(\^\{[^}]*\})", text) if p]
        width = sum(pdf.get_string_width(p[2:-1]) * 0.7 if p.startswith("^{") else pdf.get_string_width(p)
                    for p in pieces)
        middle = number <= centred if isinstance(centred, int) else number in centred
        x = (pdf.w - width) / 2 if middle else pdf.l_margin
        pdf.set_xy(x, y)
        for piece in pieces:
            if piece.startswith("^{"):
                pdf.char_vpos = "SUP"
                pdf.write(height, piece[2:-1])
                pdf.char_vpos = "LINE"
            else:
                pdf.write(height, piece)
        pdf.set_xy(pdf.l_margin, y + height)
    pdf.output(str(path))
    return path


def page_one_segments(path: Path) -> list[Any]:
    """The segments kb's layout reader makes of page 1 of the PDF at ``path`` (read with pdfium)."""
    import pypdfium2 as pdfium

    from kb.papers.pdf_page import page_segments

    document = pdfium.PdfDocument(path)
    try:
        textpage = document[0].get_textpage()
        return page_segments(textpage, textpage.get_text_range(0, textpage.count_chars()))
    finally:
        document.close()
