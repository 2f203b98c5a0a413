"""Tables printed as text, as a PDF's text holds them: rows of a label and numbers under column names.

A paper prints its own results in such tables: a test's table (R's ``summary`` of a model or of simultaneous
tests: 'long - short == 0 1.1888 0.4432 2.682 0.0227 *' under 'Estimate Std. Error t value Pr(>|t|)') or a
comparison of fits ('logLik -17972 NA -12171 -12090 -12091' under the models' names). The deterministic
drafter (``kb.agents.fallback``) reads each such table as one unit and decides with its own rules which rows
are worked results; this module only reads the layout: which lines are rows, which line is their header, a
row's cells, the significance code R prints after a test's p-value, and the p-value itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A cell of a printed table: a number as R and papers print it (signed, with thousands separators, a decimal
# part, an exponent, a percent sign), a bound ('<2e-16', '< 2.2e-16' once joined) or a missing value.
_CELL = re.compile(r"^[<>≤≥]?[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:e[-+−]?\d+)?%?$")
_MISSING = ("NA", "NaN", "Inf", "-Inf")
# What R prints after a test's p-value: its significance code (legend: 'Signif. codes: 0 ‘***’ 0.001 ...').
_CODE = re.compile(r"^(?:\*{1,3}|\.)$")
# a row ends with a number, a missing value or a code
_ROW_END = re.compile(r"(?:\d%?|NA|NaN|Inf|\*|\s\.)\s*$")
_RELATIONS = ("==", "<=", ">=", "=", "<", ">")
MAX_LABEL_WORDS = 8  # a row's label names a term or a comparison ('long - short == 0'), not a sentence
MAX_HEADER_WORDS = 12


def _is_cell(token: str) -> bool:
    return token in _MISSING or (any(ch.isdigit() for ch in token) and bool(_CELL.match(token)))


@dataclass(frozen=True)
class TextRow:
    """One row of a table printed as text."""

    line: str  # as written (whitespace collapsed)
    label: str  # the words before its first number ('long - short == 0', 'logLik')
    cells: tuple[str, ...]  # its numbers as written ('1.1888', '<2e-16', 'NA')
    code: str  # the significance code printed after the last number ('', '.', '*', '**', '***')

    def p_value(self) -> float | None:
        """The p-value a test's row ends with, when printed exactly (None for a bound such as '<2e-16')."""
        last = self.cells[-1].replace("−", "-") if self.cells else ""
        try:
            value = float(last)
        except ValueError:
            return None
        return value if 0 <= value <= 1 else None


def parse_row(line: str) -> TextRow | None:
    """The row a line is (a label of a few words, then at least two numbers and nothing else but a
    significance code), or None: prose, a formula, a heading, a date ('February 10, 2023'), R's printed
    vectors ('[1] 1 2')."""
    if not _ROW_END.search(line):
        return None  # most lines of a paper: ruled out before they are taken apart
    tokens = re.sub(r"([<>≤≥])\s+(?=\d)", r"\1", " ".join(line.split())).split(" ")
    code = tokens.pop() if len(tokens) > 3 and _CODE.match(tokens[-1]) else ""
    first = next((i for i, token in enumerate(tokens) if _is_cell(token)), None)
    if first is not None and 0 < first < len(tokens) - 2 and tokens[first - 1] in _RELATIONS:
        first += 1  # the value a stated hypothesis compares with is part of the label ('long - short == 0')
    if first is None or first == 0 or first > MAX_LABEL_WORDS or tokens[0].startswith("["):
        return None
    cells = tokens[first:]
    if len(cells) < 2 or not all(_is_cell(cell) for cell in cells):
        return None
    label = " ".join(tokens[:first])
    if not re.search(r"[A-Za-z]", label) or label.endswith((",", ".", ";")):
        return None
    return TextRow(" ".join(line.split()), label, tuple(cells), code)


def is_header(line: str) -> bool:
    """Whether a line can name the columns of the rows under it: a few names (no token of digits without a
    word, such as a row of standard errors '(0.088) (0.200)'), not a sentence or a lead-in ('Linear
    Hypotheses:')."""
    tokens = line.split()
    return 0 < len(tokens) <= MAX_HEADER_WORDS and not line.rstrip().endswith((".", ":", ",", ";")) \
        and not any(re.search(r"\d", token) and not re.search(r"[A-Za-z]{2}", token) for token in tokens)


def most_significant(rows: list[TextRow]) -> TextRow | None:
    """The row of a test's table whose test rejects most clearly: the smallest exactly printed p-value among
    the rows R marks with a significance code (None when no row has one)."""
    marked = [(p, i) for i, row in enumerate(rows) if row.code and (p := row.p_value()) is not None]
    return rows[min(marked)[1]] if marked else None
