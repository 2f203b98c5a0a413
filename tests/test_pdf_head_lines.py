"""The journal's name lines page 1's title is never taken from (kb/papers/pdf_layout.py): a line between the
two lines of an Elsevier masthead, and a line opening a footer line before a separator (PLOS ONE) or before a
volume and a comma (MDPI's 'Molecules 2017, 22, 1763'). Each page's masthead and footer lines are found once,
where each line asked about scanned the page again before: the answers are those of that per-line scan (written
out here) on random pages made of such lines."""

from __future__ import annotations

import random
import re

from kb.papers.pdf_layout import _footer_name, _masthead
from kb.papers.pdf_page import Segment

_MASTHEAD_LINES = ("Contents lists available at ScienceDirect", "journal homepage: www.elsevier.com/locate/bba")


def _masthead_by_scanning(seg: Segment, segments: list[Segment]) -> bool:
    pattern = re.compile(r"^Contents lists available at\b|^journal homepage\b", re.IGNORECASE)
    above = [s.y for s in segments if pattern.match(s.text) and s.y > seg.y]
    under = [s.y for s in segments if pattern.match(s.text) and s.y < seg.y]
    return bool(above and under) and min(above) - seg.y < 4 * seg.size and seg.y - max(under) < 4 * seg.size


def _footer_name_by_scanning(seg: Segment, segments: list[Segment]) -> bool:
    top = max(s.y for s in segments)
    name = re.escape(seg.text.strip())
    return any(other.y < 0.1 * top and other is not seg and (
        re.match(rf"{name}\s*[|•·]", other.text)
        or len(seg.text.split()) <= 3 and re.match(rf"{name}\s+\d{{1,4}},", other.text, re.IGNORECASE))
        for other in segments)


def _page(rng: random.Random) -> list[Segment]:
    """A page of 1-40 lines: masthead lines, journal names, footers naming them, prose; on shared baselines
    at times, and some in the bottom tenth."""
    texts = [*_MASTHEAD_LINES, "PLOS ONE", "PLOS ONE | https://doi.org/10.1371/x", "PLOS ONE·12", "Nature",
             "Nature  • 2021", "A title of an article", "Alice Smith", "BBA", " PLOS ONE ", "molecules",
             "Molecules 2017, 22, 1763; doi:10.3390/x"]
    page = []
    for _ in range(rng.randint(1, 40)):
        y = rng.choice([rng.uniform(0, 800), rng.uniform(0, 60), float(rng.randrange(0, 800, 20))])
        page.append(Segment(text=rng.choice(texts), size=rng.choice([8.0, 10.0, 20.0]), x0=0.0, x1=100.0, y=y))
    return page


def test_masthead_and_footer_name_answer_as_a_scan_per_line_does() -> None:
    rng = random.Random(39)
    said = {"masthead": 0, "footer": 0}
    for _ in range(400):
        page = _page(rng)
        masthead, footer_name = _masthead(page), _footer_name(page)
        for seg in page:
            assert masthead(seg) == _masthead_by_scanning(seg, page)
            assert footer_name(seg) == _footer_name_by_scanning(seg, page)
            said["masthead"] += masthead(seg)
            said["footer"] += footer_name(seg)
    assert said["masthead"] > 50 and said["footer"] > 50  # (both answers given often: the pages test both)


def test_masthead_names_the_line_between_its_two_lines() -> None:
    page = [Segment(_MASTHEAD_LINES[0], 8, 0, 100, 723.6), Segment("BBA - Biomembranes", 18, 0, 100, 700),
            Segment(_MASTHEAD_LINES[1], 8, 0, 100, 680), Segment("A title", 18, 0, 100, 600)]
    masthead = _masthead(page)
    assert [masthead(seg) for seg in page] == [False, True, False, False]
