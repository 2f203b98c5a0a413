"""The deterministic claim drafter: quantitative claims from the explicit numbers and tables of a text, and,
in a paper's full text from a PDF, findings stated in words.

No model is involved, so it works offline and gives the same draft every time. It reads the text as
a careful reader would skim it for results:

- the text is cut into units: prose sentences (also Chinese ones, ending in 。！？), Markdown list
  items, and table rows (each row remembers its table's header); headings, code blocks, reference
  lists, URLs, lines of code and its output ('R> fit <- lm(...)') and bare section numbers are skipped,
  and so are a reference list (from its heading to an appendix or the authors' addresses), lines that
  are not prose (what a PDF leaves of a displayed equation, a plot's axis, printed output), headings a
  PDF does not set off by blank lines and, in a paged text (pages separated by form feeds, as `kb add`
  stores a PDF), running heads and page numbers;
- a unit can state a claim when it is a complete prose statement: not a fragment, not cut short by an
  equation, not a caption, not the paper talking about itself (its plan, versions, funding);
- a unit is a candidate when it states a quantity: a number with a unit or a percentage, a decimal,
  a model size (650M, 15B), or a number in a comparison, range or approximation ('between 0.4 and
  0.6', 'from X to Y', 'around 0', '≈ 24'); numbers that only point somewhere (Table 3, Fig. 4,
  Section 4.2, [25], years, dates, versions, identifiers such as ESM-2 or CASP14) do not count;
- set-up is not a finding: a sentence about training or hardware whose every quantity is a budget
  (steps, epochs, days, GPUs, batch size, model sizes), a list of the values a study ran at ('6, 12,
  24, 36, 48 layers') with no result word, a table caption, a reading-list entry ('Noci et al.
  (2023) - ...'), and the rows of a table whose header names only configuration (epochs, steps,
  learning rate, ...) and no result column (accuracy, P@L, perplexity, ...) are skipped. The cues
  are English and Chinese, the languages of the project's notes;
- in a paper's full text (paged, as `kb add` stores a PDF) a quantity is drafted only as a **worked result**
  (``classify``, ``worked_result``): a test's printed result ('S0 = 1.55, p-value = 0.016', with the test's
  title), or a statement whose number comes with a test, an estimate or a measurement ('a median downtime of
  287ms', '2.7 times faster'; money, '1-9x' and 'twice as fast' count too). Ruled out: other works' results (a
  sentence citing a work and saying nothing of the authors' own), definitions and set-up (a value set, chosen,
  assumed or defaulted; a confidence or significance level; 'This graph shows'), and the tail of a sentence
  cut by code or a page. A statement without a number is drafted (as a qualitative claim) when it states a
  finding in words: a comparison ('much faster', 'outperforms', 'very similar'), what results show ('indicate
  that', 'it can be seen'), significance, an improvement, under the same exclusions. Elsewhere (notes,
  abstracts, Markdown) these cues cost more precision than they add recall; ``benchmarks/bench_drafter.py``
  measures both kinds of text, and the worked results of the real-article corpus's tuning and held-out halves;
- a table printed as text in a paper's full text (rows of a label and numbers under a line of column names,
  read by ``kb.agents.text_tables``) is one unit; ``table_results`` drafts its worked rows: the hypothesis of
  a table of tests rejected most clearly, and rows naming a fitted model's statistic ('logLik');
- in a paged text every unit, and so every draft, names the PDF page its quote starts on (``source.page``);
- every draft's notes say why it was drafted ('drafted because it states a worked result: a test result with
  its number').

Each claim quotes its unit verbatim (whitespace collapsed), so it is grounded by construction. It
binds no analyzer and writes no expectation (it cannot know which metric a number refers to, and an
accepted binding would queue runs): when an analyzer shares words with the quote (its name, summary
and metric descriptions, read from the registry, never from a list kept here), the claim's notes
suggest it, with its metrics and scales.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from analyzers.files import unique_name
from kb.agents import text_tables
from kb.notes.grounding import PAGE_BREAK
from schemas.claim import ClaimKind, ClaimScale

# -- cutting a text into units -----------------------------------------------------------------

_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+(?:\[[ xX]\]\s+)?(?P<body>.+)$")
_REFERENCE = re.compile(r"^\s*[-*]?\s*\[\d+\]")
_SECTION_NUMBER = re.compile(r"^(?:[IVX]+|[A-Z]|\d+)(?:\.\d+)*\.?\s+\S|^(?:Appendix|Abstract|References)\b")
_TERMINAL = re.compile(r"[.!?:;。！？：；)\]\"”]$")
_URL = re.compile(r"(?:https?://|www\.)\S+|\b[\w.-]+\.(?:com|org|io|net)/\S*")
# Words after which a period does not end a sentence ('Fig. 4', 'et al. (2021)', 'cf. Table A1').
_ABBREVIATIONS = {
    "fig", "figs", "eq", "eqs", "sect", "sec", "ref", "refs", "cf", "e.g", "i.e", "al", "vs", "approx", "no",
    "vol", "pp", "tab", "app", "ca", "resp", "st", "dr", "mr", "ms", "prof", "etc", "incl",
}
# Lines of code and its printed output in a paper (R's prompt '> ' or 'R> ' and continuation '+ ', an
# assignment '<-', a matrix row '[1,]'): never a finding, and their numbers would read as results.
_CODE_LINE = re.compile(r"^(?:R?>|\+)\s|<-|^\s*\[\d*,\d*\]|^\s*\[\d+\]\s")
# A unit that is only a section number ('1.1.', '2.3'), what is left of a numbered heading.
_BARE_NUMBER = re.compile(r"^[\d.\s]+$")
# A sentence ends at '.', '!' or '?' before a capital (not at the dots of an ellipsis: 'i = 1, . . . , n').
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'”’)]*\s+(?=[^\sa-z.,])|(?<=[。！？])")
# A paper's reference list runs from its heading to the end, an appendix or the authors' addresses.
_REFERENCES_HEADING = re.compile(
    r"^(?:[\dIVX]+\.?\s+)?(?:References|Bibliography|Literature Cited|参考文献)$", re.IGNORECASE
)
_AFTER_REFERENCES = re.compile(r"^(?:Appendix\b|Affiliations?:?$|Supplementary\b|"
                               r"[A-H]\.(?:\d+\.?)?\s+[A-Z][\w-]*(?: [^,.]*)?$)")  # not 'A. Zeileis.'
_NUMBERED_HEADING = re.compile(r"^\d+(?:\.\d+)*\.?\s+[A-Z]")
_CAPTION_START = re.compile(r"^(?:Table|Figure|Fig\.)\s*[A-Z]?\d+[a-z]?\s*:")
_CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")
# A word of prose ('results', 'Fig.', '(see', 'well-known,'), as opposed to a symbol, number or code token.
_PROSE_WORD = re.compile(r"^[(\"“‘'\[]*[A-Za-z][a-z]+(?:[-'’][A-Za-z]+)*[)\"”’'\].,;:!?]*$")


@dataclass(frozen=True)
class Unit:
    """A sentence, list item or table row of the text, as written (whitespace collapsed)."""

    # 'sentence', 'item', 'row', 'output' (a test's printed result) or 'table' (one printed as text)
    kind: str
    text: str
    header: tuple[str, ...] = ()  # the table's header cells, for rows
    page: int | None = None  # the PDF page the unit starts on (1-based), in a paged text


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def _sentences(paragraph: str) -> list[str]:
    """Split prose into sentences, not at abbreviations such as 'Fig.' or 'et al.'."""
    return [sentence for _, sentence in sentences_at(paragraph)]


def sentences_at(paragraph: str) -> list[tuple[int, str]]:
    """The sentences of a paragraph (whitespace collapsed), each with the offset it starts at in the paragraph
    (which tells the page a sentence of a paragraph running over a page break starts on)."""
    sentences, start = [], 0
    for boundary in _BOUNDARY.finditer(paragraph):
        before = paragraph[start:boundary.start()].rstrip("\"'”’)")
        last_word = re.findall(r"([\w.]+)\.$", before)
        if last_word and (last_word[0].lower() in _ABBREVIATIONS or re.fullmatch(r"[A-Z]", last_word[0])) \
                and not re.search(r"(?:\d|\bper)\s+sec\.$", before):  # '212 lines per sec.' ends a sentence
            continue
        sentences.append((start, paragraph[start:boundary.start()]))
        start = boundary.end()
    sentences.append((start, paragraph[start:]))
    return [(at, " ".join(s.split())) for at, s in sentences if s.strip() and not _BARE_NUMBER.match(s)]


def _is_heading(line: str) -> bool:
    """A line that titles what follows: no closing punctuation, and short or numbered like a section."""
    stripped = line.strip()
    return not _TERMINAL.search(stripped) and (
        len(stripped.split()) <= 8 or bool(_SECTION_NUMBER.match(stripped))
    )


def is_prose(line: str) -> bool:
    """Whether a line reads as prose rather than what a PDF leaves of an equation, a plot's axis or printed
    output ('K', 'log L = X N n=1', '-642.5451 (df=9)'): at least two in five of its tokens are words."""
    if _CJK.search(line):
        return True
    tokens = line.split()
    words = sum(bool(_PROSE_WORD.match(token)) for token in tokens)
    long_enough = len(tokens) > 2 or any(len(token) > 3 for token in tokens)
    return words >= 1 and 5 * words >= 2 * len(tokens) and long_enough


def _head_key(line: str) -> str:
    return " ".join(re.sub(r"\d+", " ", line).split())


def running_heads(pages: list[str]) -> set[str]:
    """The running heads and feet of a paged text (first or last lines that recur, page numbers aside, on
    at least three pages and a fifth of them): a journal's title line, the authors' names."""
    counts: dict[str, int] = {}
    for page in pages:
        lines = [line.strip() for line in page.strip().splitlines() if line.strip()]
        for key in {_head_key(line) for line in lines[:1] + lines[-1:]}:
            counts[key] = counts.get(key, 0) + 1
    return {key for key, count in counts.items() if key and count >= max(3, len(pages) // 5)}


def _without_head(line: str, heads: set[str]) -> str | None:
    """A page's first or last line without its running head or page number (None when nothing is left)."""
    if _BARE_NUMBER.match(line):
        return None
    key = _head_key(line)
    for head in heads:
        if key == head:
            return None
        words = head.split()
        if key.endswith(head):  # 'ReferencesRoger Koenker ... 25': keep what comes before, as written
            rest = line[:line.rfind(words[0])].strip()
            return rest if rest and not _BARE_NUMBER.match(rest) else None
        if key.startswith(head):
            rest = line[line.find(words[-1]) + len(words[-1]):].strip()
            return rest if rest and not _BARE_NUMBER.match(rest) else None
    return line


# A line of a statistical test's printed result, as R's print method for tests writes it: the statistic (and
# its degrees of freedom) with the p-value ('S0 = 1.5511, p-value = 0.01626', 'F = 3.2, df1 = 2, p-value <
# 2.2e-16').
_STAT = r"-?\d[\d.]*(?:e[-+]?\d+)?"
_TEST_LINE = re.compile(
    rf"^[^=<>]{{1,40}}=\s*{_STAT},(?:\s*[\w.]+\s*=\s*{_STAT},)*\s*p-value\s*[=<>]\s*{_STAT}$"
)
_TEST_TITLE = re.compile(r"^data:|\btest\b", re.IGNORECASE)


def test_output(lines: list[str], number: int) -> str | None:
    """The printed result of a statistical test whose statistic line is ``lines[number]``, with the test's
    title and 'data:' lines above it (so the quote says which test), whitespace collapsed; else None."""
    if not _TEST_LINE.match(lines[number].strip()):
        return None
    start = number
    for j in range(number - 1, max(-1, number - 5), -1):
        above = lines[j].strip()
        if above and not (_TEST_TITLE.search(above) and not _CODE_LINE.search(above)
                          and not _TERMINAL.search(above) and len(above.split()) <= 10):
            break
        start = j
    return " ".join(" ".join(lines[start:number + 1]).split())


class _Cutter:
    """Cuts a text into units line by line (``units``): the paragraph being read, the table being read, the
    page, and whether the lines are code or a reference list."""

    def __init__(self, paged: bool) -> None:
        self.found: list[Unit] = []
        # pages as `kb add` stores a PDF: units say their page, tables printed as text count
        self.paged = paged
        self.page: int | None = None
        self.paragraph: list[tuple[str, int | None]] = []  # its lines, each with its page
        self.header: tuple[str, ...] | None = None  # of the Markdown table being read
        self.table: list[str] = []  # the rows of a table printed as text (``kb.agents.text_tables``)
        self.table_header: list[str] = []  # and its header line
        self.in_code = self.in_references = False

    def flush(self) -> None:
        """End the paragraph (its sentences become units, each on the page it starts on) and the table."""
        if self.paragraph:
            starts = list(itertools.accumulate((len(line) + 1 for line, _ in self.paragraph[:-1]), initial=0))
            for at, sentence in sentences_at("\n".join(line for line, _ in self.paragraph)):
                page = self.paragraph[bisect_right(starts, at) - 1][1]  # of the line the sentence starts in
                self.found.append(Unit("sentence", sentence, page=page))
            self.paragraph.clear()
        if self.table:
            # header: the line of column names directly above the first row, when there is one
            self.found.append(Unit("table", "\n".join(self.table), tuple(self.table_header), self.page))
            self.table.clear()

    def table_row(self, stripped: str, above: str) -> bool:
        """Read a line as a row of a table printed as text (in a paged text), its header the line above."""
        if not self.paged or self.in_code or text_tables.parse_row(stripped) is None:
            return False
        if not self.table:
            header = text_tables.is_header(above) and text_tables.parse_row(above) is None
            if header and self.paragraph and self.paragraph[-1][0] == above:
                self.paragraph.pop()  # the column names were read as the end of the paragraph before
            self.flush()
            self.table_header = [above] if header else []
        self.table.append(stripped)
        return True

    def line(self, lines: list[str], number: int, stripped: str) -> None:
        """Read one line of a page (its running head already dropped)."""
        if stripped.startswith("```"):
            self.flush()
            self.in_code = not self.in_code
            return
        if _REFERENCES_HEADING.match(stripped):
            self.flush()
            self.in_references = True
            return
        if self.in_references:
            if not _AFTER_REFERENCES.match(stripped):
                return
            self.in_references = False
        block = None if self.in_code else test_output(lines, number)
        if block is not None:  # printed test output: not prose, but the paper's own worked result
            self.flush()
            self.found.append(Unit("output", block, page=self.page))
            return
        if self.table_row(stripped, lines[number - 1].strip() if number else ""):
            return
        if self.table:
            self.flush()
        self.text_line(stripped)

    def text_line(self, stripped: str) -> None:
        """Read a line that is no test output nor a row of a table printed as text."""
        is_row = stripped.startswith("|") and stripped.count("|") >= 2
        if not is_row:
            self.header = None
        if self.in_code or not stripped or stripped.startswith("#") or _REFERENCE.match(stripped) \
                or _CODE_LINE.search(stripped) or not (is_row or is_prose(stripped)):
            self.flush()
            return
        if is_row:
            self.flush()
            if self.header is None:
                self.header = tuple(_cells(stripped))
            elif not set(stripped) <= set("|-: "):
                self.found.append(Unit("row", stripped, self.header, self.page))
            return
        item = _LIST_ITEM.match(stripped)
        if item:
            self.flush()
            self.found.extend(Unit("item", s, page=self.page) for s in _sentences(item.group("body")))
        elif _is_heading(stripped) and (not self.paragraph or _TERMINAL.search(self.paragraph[-1][0])
                                        or _NUMBERED_HEADING.match(stripped)):
            self.flush()  # a heading between paragraphs that a PDF does not separate by blank lines
        else:
            if _CAPTION_START.match(stripped):
                self.flush()  # a caption is its own unit, not the end of the sentence before it
            self.paragraph.append((stripped, self.page))


def units(text: str) -> list[Unit]:
    """The sentences, list items and table rows of a text, in order (see the module docstring); in a paged
    text each unit says the page it starts on, and a table printed as text is one unit."""
    pages = text.split(PAGE_BREAK)
    cutter = _Cutter(paged=len(pages) > 1)
    heads = running_heads(pages) if len(pages) >= 3 else set()
    for page_number, page in enumerate(pages, start=1):
        cutter.page = page_number if len(pages) > 1 else None
        lines = page.splitlines()
        edges = {i for i, line in enumerate(lines) if line.strip()}
        edges = {min(edges), max(edges)} if edges else set()
        for number, line in enumerate(lines):
            stripped = line.strip()
            if number in edges and len(pages) > 1:
                kept = _without_head(stripped, heads)
                if kept != stripped:
                    cutter.flush()  # a sentence running on past a dropped head is no longer one quote
                    if kept is None:
                        continue
                    stripped = kept
            cutter.line(lines, number, stripped)
        if cutter.table:
            cutter.flush()  # a table ends with its page
    cutter.flush()
    return cutter.found


# -- quantities ----------------------------------------------------------------------------------

_NUM = r"\d+(?:,\d{3})*(?:\.\d+)?"
_NUMBER = re.compile(rf"(?<![\w.,/:\-])(?<![\w]-)(?P<num>{_NUM})(?P<after>\S*)")
# What may follow a number directly and still make it a quantity (not an identifier such as 2abd or A100).
_SUFFIX = re.compile(r"^(?:%|[KkMBG]|[x×]|层|倍|个|nm|Å|th|st|nd|rd|s)?(?:[^\w]|$)")
_SIZE = re.compile(
    rf"(?<![\w.])(?P<num>{_NUM})\s?(?P<unit>[MB]|million|billion)\b(?!\s+(?:sequences|tokens|steps))",
    re.IGNORECASE,
)
_UNIT_AFTER = re.compile(
    r"^\s*(?:%|percent\b|percentage points?\b|pp\b|[KMB]\b|×|x\b|-?fold\b|times\b|Å|nm\b|nats?\b|bits?\b|"
    r"layers?\b|blocks?\b|heads?\b|層|层|倍|parameters?\b|params\b|residues?\b|sequences?\b|tokens?\b|proteins?\b|"
    r"families\b|structures?\b|dimensions?\b|points?\b|seconds?\b|s\b|ms\b|minutes?\b|hours?\b|days?\b|GB\b|"
    r"(?:contact\s+)?heads?\b|models?\b)", re.IGNORECASE)
_CONTEXT_BEFORE = re.compile(
    r"(?:≈|~|∼|=|<|>|≤|≥|±|\b(?:around|about|approximately|roughly|towards?|close to|between|and|from|to|by|"
    r"at least|at most|up to|above|below|over|under|than|reaches?|reached|of|is|are|was|were|layers?|"
    r"blocks?|depth))\s*$", re.IGNORECASE)
_POINTER_BEFORE = re.compile(
    r"\b(?:fig|figs|figure|figures|table|tables|tab|section|sections|sect|sec|appendix|app|eq|eqs|equation|"
    r"chapter|version|v|ref|refs|step|steps|item|no|page|pages|pp|vol|§)\.?\s*\(?\s*$", re.IGNORECASE)
_YEAR = re.compile(r"^(?:19|20)\d\d$")
# A value given to a one-letter variable of a formula ('k = 1', 'φ = 1', 'i = 1, . . . , n'): notation.
_VARIABLE_BEFORE = re.compile(r"(?:^|[\s(,])[A-Za-zα-ωΑ-Ω](?:[a-z0-9′ˆ])?\s*[=≤≥<>≠∼]\s*[−-]?$")


@dataclass(frozen=True)
class Quantity:
    """A number stated as a quantity, and whether it is a budget (training, hardware, model size)."""

    number: str  # as written
    budget: bool


_BUDGET_AFTER = re.compile(
    r"^\S*\s*(?:[KMB]\b|million|billion|steps?|updates?|iterations?|epochs?|days?|hours?|"
    r"minutes?|seconds?|GPUs?|TPUs?|cores|GB|sequences?|tokens?|parameters?|params)\b",
    re.IGNORECASE,
)
_BUDGET_BEFORE = re.compile(r"\b(?:batch size|learning rate|lr|warm-?up|dropout(?: rate)?|seed|weight decay)"
                            r"(?: of)?\s*[=:]?\s*$", re.IGNORECASE)


def quantities(unit: str) -> list[Quantity]:
    """The numbers in a unit that state a quantity (see the module docstring)."""
    text = _URL.sub(" ", unit)
    text = re.sub(r"\[[\d,\s\-–]+\]", " ", text)  # citations [3, 14-16]
    text = re.sub(r"\b\d{4}-\d{2}(?:-\d{2})?\b", " ", text)  # dates 2022-05-01, 2023-10
    found = []
    for match in _NUMBER.finditer(text):
        number, after = match.group("num"), match.group("after")
        before = text[:match.start()]
        if not _SUFFIX.match(after) or re.match(r"^\.\d", after) or _POINTER_BEFORE.search(before) \
                or _VARIABLE_BEFORE.search(before):
            continue  # an identifier, a version like 1.0.2, a pointer to a table/figure/section, or 'k = 1'
        tail = text[match.end("num"):]
        has_unit = bool(_UNIT_AFTER.match(tail)) or bool(re.match(r"^(?:%|[KMB]|[x×]|层|倍)", after))
        if _YEAR.match(number) and not has_unit:
            continue
        if has_unit or "." in number or _CONTEXT_BEFORE.search(before):
            budget = bool(_BUDGET_AFTER.match(tail) or _BUDGET_BEFORE.search(before))
            found.append(Quantity(number, budget))
    return found


def row_values(unit: Unit) -> list[Quantity]:
    """The cells of a table row that hold a value (a number, possibly with a unit, range or '~')."""
    return [Quantity(cell, False) for cell in _cells(unit.text) if re.match(r"^[~≈<>≤≥±]?\s*\d", cell)]


def model_sizes(unit: str) -> list[float]:
    """Model sizes a unit names ('650M', '15B', '46 B parameters'), in parameters."""
    sizes = []
    for match in _SIZE.finditer(unit):
        scale = 1e6 if match.group("unit").lower() in ("m", "million") else 1e9
        sizes.append(float(match.group("num").replace(",", "")) * scale)
    return sizes


# -- what is set-up, not a finding ---------------------------------------------------------------

_SETUP = re.compile(r"\b(?:train(?:s|ed|ing)?|fine-tun\w*|batch size|learning rate|warm-?up|dropout|epochs?|"
                    r"optimi[sz]er|GPUs?|TPU\w*|A100|H100|V100|cores|hyperparameters?|took|wall-clock)\b|"
                    r"训练|微调|配置|设置|固定|控制变量", re.I)
_RESULT = re.compile(
    r"\b(?:improv\w*|increas\w*|decreas\w*|drops?|dropped|falls?|fell|rises?|rose|reach\w*|outperform\w*|"
    r"better|worse|faster|slower|higher|lower|gains?|saturat\w*|exceed\w*|achiev\w*|recover\w*|predict\w*|"
    r"accuracy|precision|recall|perplexity|correlation|spearman|pearson|auc|auroc|f1|rmsd|tm-score|lddt|"
    r"error|loss|kl|entropy|rank|diminish\w*|returns|optimal|best|worst|peaked?|ranges?|significant\w*)\b|"
    r"下降|上升|提升|降低|提高|最佳|最优|优于|达到|维持|减少|增加", re.IGNORECASE)
# 'Noci et al. (2023) - The Curse of Depth ...': an entry of a reading list, not a finding.
_BIBLIOGRAPHIC = re.compile(
    r"^[A-Z][\w'\-]+(?: (?:et al\.|and [A-Z][\w'\-]+))?,? \(?(?:19|20)\d\d[a-z]?\)?\W"
)
_ENUMERATION = re.compile(r"\d+(?:\s*,\s*\d+){2,}")
_CAPTION = re.compile(
    r"^(?:Table|Figure|Fig\.)\s*[A-Z]?\d+\w*[.:]?\s+(?:reports?|shows?|summari[sz]es|lists?|"
    r"presents?|gives?|compares?|describes?|depicts?|illustrates?)\b",
    re.IGNORECASE,
)
_CHANGE = re.compile(r"\b(?:improv\w*|increas\w*|decreas\w*|drops?|falls?|rises?|reach\w*|outperform\w*|"
                     r"better|worse|higher|lower|exceed\w*)\b", re.IGNORECASE)
_RESULT_HEADER = re.compile(r"P@L|top-?L|\b(?:acc\w*|precision|recall|perplexity|ppl|error|loss|auc\w*|f1|"
                            r"spearman|pearson|rho|ρ|rmsd|tm-score|lddt|kl|score|q3|q8|mcc)\b", re.IGNORECASE)
_HYPERPARAMETER_HEADER = re.compile(r"\b(?:epochs?|steps?|lr|learning rate|batch|warm-?up|dropout|seed|"
                                    r"weight decay|optimi[sz]er|schedule)\b", re.IGNORECASE)


def is_setup(unit: Unit, found: list[Quantity]) -> bool:
    """Set-up rather than a finding (see the module docstring)."""
    if unit.kind == "row":
        header = " ".join(unit.header)
        return bool(_HYPERPARAMETER_HEADER.search(header)) and not _RESULT_HEADER.search(header)
    if _BIBLIOGRAPHIC.match(unit.text) or (_CAPTION.match(unit.text) and not _CHANGE.search(unit.text)):
        return True
    if _SETUP.search(unit.text) and all(q.budget for q in found):
        return True  # it only states a budget: steps, epochs, hardware, time, model sizes
    return bool(_ENUMERATION.search(unit.text)) and not _RESULT.search(unit.text)  # the values a study ran at


# -- statements and findings -----------------------------------------------------------------------

# What a paper says about itself, not about its subject: its plan, its versions, its funding.
_BOILERPLATE = re.compile(
    r"\b(?:(?:is|are) organi[sz]ed as follows|the (?:remainder|rest) of (?:this|the) (?:paper|article)|"
    r"this (?:vignette|version) (?:corresponds|is|was|had)|"
    r"(?:was|is) (?:a )?(?:\(?slightly\)? )?modified version|"
    r"(?:was|were|have been) (?:originally )?published|"
    r"typeset on|(?:done|obtained|computed) (?:using|with) R\b|\bR (?:version )?\d+\.\d+|"
    r"(?:partially |partly )?supported by|\bgrants?\b|acknowledg|we (?:thank|are grateful)|"
    r"(?:the reader is|we) referred? to|in the following (?:sections?|pages)|we will show|"
    r"(?:will|shall) (?:then )?(?:be )?(?:explain|describ|discuss|present|give|introduc)|"
    r"(?:sub)?sections? \d[\d.]*(?:,? (?:and )?\d[\d.]*)* (?:describes?|presents?|gives?|discuss(?:es)?|"
    r"introduces?|illustrates?|explains?|extends?|covers?|provides?|shows?|concludes?))", re.IGNORECASE)
_FRAGMENT_START = re.compile(r"^[,;:.)\]}−–-]")


def is_statement(text: str) -> bool:
    """Whether a sentence or list item can state a claim: prose (not what is left of a formula or printed
    output), complete (a heading or an axis label has no closing punctuation), not a caption, not the paper
    talking about itself (its plan, versions, funding)."""
    if _CJK.search(text):
        return True
    if not is_prose(text) or _FRAGMENT_START.match(text) or _CAPTION_START.match(text):
        return False
    if not _TERMINAL.search(text) or re.search(r"\b(?:as|that|by|is|are|of|the)[,:]?$|,$", text):
        return False  # cut short by a displayed equation or code ('... can be expressed as'), or a heading
    return not _BOILERPLATE.search(text)


# A finding in words: a comparison, what the results show, a property or ability demonstrated. English cues
# only: the Chinese notes' findings in words are too terse to tell from their set-up by a word list.
_FINDING = re.compile(
    r"\b(?:(?:show|shows|showed|shown|indicate|indicates|indicated|suggest|suggests|suggested|confirm|"
    r"confirms|confirmed|reveal|reveals|revealed|demonstrate|demonstrates|demonstrated|highlight|highlights|"
    r"conclude|concluded|find|finds|found|observe|observed|see|seen)\s+(?:\w+\s+)?that|"
    r"it (?:can be seen|is (?:obvious|clear|evident))|"
    r"(?:much|considerably|significantly|substantially|slightly|clearly|far|somewhat|dramatically|greatly|"
    r"roughly|\d+(?:\.\d+)? times) (?:better|worse|faster|slower|higher|lower|larger|smaller|more|less|"
    r"easier|simpler)|"
    r"outperform\w*|superior|inferior|preferable|(?:an|no|the|modest|slight) (?:\w+ )?advantage|"
    r"penalt(?:y|ies)|(?:very|quite|rather|almost|essentially|virtually) (?:similar|identical|the same)|"
    r"similar (?:results|fits?)|the same (?:conclusions?|results|interpretations?|qualitative)|coincide|"
    r"in line with|consistent with|mirrors|close to (?:the|their) true|"
    r"(?:highly |clearly |statistically |non-?)significant(?:ly)?|not significant|evidence for|"
    r"improv(?:es|ed|ement)|deteriorat\w+|(?:severely |substantial )biase?d?|"
    r"simplif(?:y|ies)|lowers the barrier|reduces? the (?:complexity|barrier)|well[- ]separated|"
    r"perform(?:s|ed)? (?:quite |very |essentially |rather )?(?:well|better|worse|similarly|the same)|"
    r"converged (?:at|to) the correct|is (?:clearly |again )?(?:not )?appropriate)\b", re.IGNORECASE)


def is_finding(text: str) -> bool:
    """Whether a statement reports a finding in words (``_FINDING``), with enough words to say what of."""
    return bool(_FINDING.search(text)) and (bool(_CJK.search(text)) or len(text.split()) >= 6)


# -- worked results: the paper's own numbers, with their test or estimate ------------------------------

# Another work's result: a sentence citing a work ('Smith et al. (2019) found', 'as shown in [12]') and not
# saying that the authors themselves did anything ('we', 'our', 'this paper').
_CITATION = re.compile(
    r"\b[A-Z][\w'’-]+(?:,? (?:and|&) [A-Z][\w'’-]+| et al\.?)?,? \(?(?:19|20)\d\d[a-z]?\b\)?|"
    r"\[\d+(?:\s*[,–-]\s*\d+)*\]"
)
_OWN = re.compile(r"\b(?:we|our|us|this (?:paper|article|study|vignette|work))\b", re.IGNORECASE)
# A definition or set-up: a value given, chosen or assumed, not obtained.
_DEFINITION = re.compile(
    r"\b(?:is|are|was|were) (?:set|fixed|chosen|defined|denoted|initiali[sz]ed|assumed)\b|\bdefaults? to\b|"
    r"\bby default\b|\bwhere \w+ (?:is|are|denotes)\b|\bdenot(?:e|es|ed|ing)\b|\bargument\b|"
    r"\bwe (?:set|use|chose|choose|fix|select|assume|consider|considered)\b|\blet \w+ (?:be|denote)\b|"
    r"\bis defined\b|\bindicates? (?:statistical )?significance\b|\bshould\b|"
    r"^this (?:graph|figure|plot|table|diagram) (?:shows|depicts|illustrates|gives)\b", re.IGNORECASE)
# What makes a number a worked result: a test, an estimate, or a measured quantity or comparison.
_WORKED = (
    (
        "a test result",
        re.compile(
            r"\bp[- ]?values?\b|\bp\s*[=<>]|significan\w*|\b(?:test|tests|tested)\b|"
            r"\breject\w*|confidence (?:interval|level)|χ\s?2|chi-squared",
            re.IGNORECASE,
        ),
    ),
    (
        "an estimate",
        re.compile(
            r"\bestimat\w*|\bfitted\b|\b(?:mean|median|average)\b|standard (?:deviation|error)|"
            r"\bcoefficients?\b|log-?likelihood|\bcorrelation|\bratios?\b|\bproportion|"
            r"\bprobabilit(?:y|ies)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "a measured quantity or comparison",
        re.compile(
            r"\b(?:faster|slower|times|speed-?ups?|latenc(?:y|ies)|throughput|took|takes|seconds?|sec|ms|bytes|cycles|"
            r"percent|higher|lower|larger|smaller|fewer|improv\w*|reduc\w*|increas\w*|decreas\w*|outperform\w*|"
            r"better|worse|orders? of magnitude|accuracy|error|found|observed|measured|achiev\w*)\b|\d\s?%",
            re.IGNORECASE,
        ),
    ),
)


# Quantities the quantity rules do not read, but a result states: money, a time or size glued to its unit, a
# range of factors, 'twice as fast', 'N times faster', 'orders of magnitude'.
_LOOSE_QUANTITY = re.compile(
    r"\$\s?\d[\d,.]*|\d[\d,.]*\s?(?:ms|sec|µs|us|ns|KB|MB|GB|[x×])(?![\w])|\d+\s?[-–]\s?\d+\s?[×x%]|"
    r"\b(?:twice|thrice|half) as\b|\b(?:\w+|\d+) times "
    r"(?:as|more|less|faster|slower|longer|shorter|higher|lower|"
    r"larger|smaller)\b|\borders? of magnitude\b",
    re.IGNORECASE,
)
# A level chosen for an interval or test ('95% confidence intervals', 'its 5% critical value', '50%, 80% and
# 95% marginal confidence regions'): set-up, not a result.
_LEVEL = re.compile(r"(?:\d+(?:\.\d+)?\s?%(?:\s*(?:,|and)\s*)?)+\s*(?:(?!in\b|of\b)[\w-]+\s+){0,2}?"
                    r"(?:confidence|credible|prediction|critical|significance)\b", re.IGNORECASE)
_SUMMARISED = re.compile(r"\b(?:than|median|average|mean|faster|slower)\b", re.IGNORECASE)


def cited(text: str) -> bool:
    """Whether a sentence reports another work's result (it cites one and says nothing of the authors'
    own)."""
    return bool(_CITATION.search(text)) and not _OWN.search(text)


def worked_result(text: str) -> str | None:
    """Why a sentence holding a quantity is a worked result of the paper ('a test result', 'an estimate', 'a
    measured quantity or comparison'), or None: a cited work's result, a definition or set-up, or a number
    with none of these (a count in a description, a setting)."""
    if cited(text) or _DEFINITION.search(text):
        return None
    return next((why for why, cue in _WORKED if cue.search(text)), None)


# -- analyzers named by the registry's own words -------------------------------------------------

_STOP = {
    "the", "and", "for", "with", "from", "that", "this", "when", "each", "into", "their", "than", "made",
    "one", "two", "per", "its", "are", "was", "were", "has", "have", "can", "may", "not", "but", "all", "any",
    "via", "use", "used", "which", "what", "where", "then", "model", "models", "value", "values", "parameter",
    "parameters", "mean", "fraction", "true", "returns", "result", "results", "number", "half", "over",
    "protein", "plm", "plms",
}


def _words(text: str) -> set[str]:
    words = re.findall(r"[a-z][a-z0-9]+", text.lower().replace("_", " ").replace("-", " "))
    return {w.rstrip("s") if len(w) > 4 else w for w in words if len(w) > 2 and w not in _STOP}


def analyzer_vocabulary(analyzers: Mapping[str, Any]) -> dict[str, set[str]]:
    """Each analyzer's words: its name, summary, metric names and metric descriptions."""
    vocabulary = {}
    for name, cls in analyzers.items():
        metrics = getattr(cls, "metrics", {}) or {}
        text = " ".join([name, getattr(cls, "summary", ""), *metrics, *map(str, metrics.values())])
        vocabulary[name] = _words(text)
    return vocabulary


def suggest_analyzer(sentence: str, vocabulary: Mapping[str, set[str]]) -> str | None:
    """The analyzer sharing the most words (at least two) with the sentence, or None."""
    words = _words(sentence)
    best, best_overlap = None, 1
    for name, known in sorted(vocabulary.items()):
        overlap = len(words & known)
        if overlap > best_overlap:
            best, best_overlap = name, overlap
    return best


# -- the drafter -----------------------------------------------------------------------------------

_SLUG_STOP = {
    "the", "a", "an", "of", "and", "in", "on", "to", "with", "is", "are", "was", "were", "we", "for", "by",
    "at", "that", "this", "from", "as", "it", "its", "our",
}


def slug(text: str, taken: set[str]) -> str:
    """A claim id from the first content words of a text, unique among ``taken`` (which it joins)."""
    words = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _SLUG_STOP][:6]
    while len("-".join(words)) > 48 and len(words) > 1:
        words.pop()  # cut at a word, not inside one
    base = "-".join(words)[:48].strip("-") or "claim"
    ident = unique_name(base, taken)
    taken.add(ident)
    return ident


def _row_statement(unit: Unit) -> str:
    cells = _cells(unit.text)
    named = [(h, c) for h, c in zip(unit.header, cells, strict=False) if h and c]
    if len(named) == len([c for c in cells if c]) and named:
        return "; ".join(f"{h}: {c}" for h, c in named)
    return " | ".join(c for c in cells if c)


def classify(unit: Unit, paged: bool) -> tuple[ClaimKind, str] | None:
    """Whether a unit is drafted, as which kind, and why (the reason the draft's notes give). In a paper's
    full text (``paged``: pages as `kb add` stores a PDF) only worked results are drafted: printed test
    output, and statements whose quantity comes with a test, an estimate or a measurement (``worked_result``),
    not other works' results, definitions or set-up. Elsewhere (notes, abstracts, Markdown) any statement of a
    quantity that is not set-up, and table rows with a result column."""
    if unit.kind == "output":
        return ClaimKind.quantitative, "a test's printed result (its statistic and p-value)"
    if unit.kind != "row" and not is_statement(unit.text):
        return None
    found = row_values(unit) if unit.kind == "row" else quantities(unit.text)
    if unit.kind == "row" or not paged:
        if not found or is_setup(unit, found):
            return None
        return ClaimKind.quantitative, ("a row of a results table" if unit.kind == "row" else
                                        "a quantity (a number with a unit, a decimal, or a compared value)")
    # The end of a sentence cut by code, a display or a page ('leads to an estimate of 6.7'): its number is
    # rarely the result's, so it is not drafted as a worked result.
    fragment = unit.text[:1].islower()
    found = quantities(_LEVEL.sub(" ", unit.text))  # a confidence or significance level is chosen, not found
    why = worked_result(unit.text)
    # A measured time or size compared or summarised ('took longer than 10 seconds', 'a median of 287ms') is a
    # result even where a budget would be set-up; a number the quantity rules do not read ('1-9x', '$100,000',
    # 'twice as fast') counts when the sentence is a worked result.
    setup = bool(found) and is_setup(unit, found) and not _SUMMARISED.search(unit.text)
    if why is not None and (found or _LOOSE_QUANTITY.search(unit.text)) and not setup and not fragment:
        return ClaimKind.quantitative, f"a worked result: {why} with its number"
    if is_finding(unit.text) and not (cited(unit.text) or _DEFINITION.search(unit.text) or setup):
        return ClaimKind.qualitative, "a finding stated in words (no number to check)"
    return None


# A test's table: a column of p-values ('Pr(>|t|)', 'Pr(>Chisq)', 'p-value', 'P>|z|').
_P_COLUMN = re.compile(r"\bPr\s*\(\s*>|\bp[- ]?values?\b|\bP\s*>\s*\|", re.IGNORECASE)
# A row that states the hypothesis it tests, as R prints linear hypotheses ('long - short == 0').
_HYPOTHESIS = re.compile(r"\s(?:==|<=|>=)\s*[-−]?\d")
# A row label naming a statistic of a fitted model ('logLik', 'AIC', 'deviance'): an estimate the paper
# obtained, where a label naming a data set's average or count ('average # of terms') describes its data.
_FIT_STATISTIC = re.compile(r"\blog-?lik(?:elihood)?\b|\b(?:AIC|BIC|deviance|R-?squared|R2)\b", re.IGNORECASE)


def table_results(unit: Unit) -> list[tuple[str, str, str]]:
    """The worked results of a table printed as text (a ``units`` unit of kind 'table'), as (quote, statement,
    why). A table of tests of stated hypotheses (a p-value column, rows such as 'long - short == 0') gives the
    one row whose test rejects most clearly (``text_tables.most_significant``): the authors chose those
    hypotheses, and the table is read for its strongest result, not row by row. A model's table of
    coefficients gives none (every term is tested there, and the paper states its findings about them in
    prose). Another table under a line of column names gives the rows whose label names a statistic of a
    fitted model ('logLik'). A row's quote is its line, with the header line above it when it is the first
    row (so the quote says what its numbers are); its statement pairs the numbers with the column names when
    they line up."""
    header = unit.header[0] if unit.header else ""
    rows = [row for row in map(text_tables.parse_row, unit.text.split("\n")) if row is not None]
    # R's str() output ('$ coef : num [1:2] ...')
    rows = [row for row in rows if not row.label.startswith("$")]
    chosen: list[tuple[text_tables.TextRow, str]] = []
    if _P_COLUMN.search(header):
        best = text_tables.most_significant([row for row in rows if _HYPOTHESIS.search(row.label)])
        if best is not None:
            chosen = [(best, "a test result: the hypothesis of a printed test table rejected most clearly")]
    elif header:  # a row under no line of column names says too little to check (a typeset table's tail)
        chosen = [(row, "an estimate: a fitted model's statistic in a printed table") for row in rows
                  if _FIT_STATISTIC.search(row.label)]
    found = []
    for row, why in chosen:
        quote = f"{header} {row.line}" if header and row is rows[0] else row.line
        columns = header.split()
        said = "; ".join(f"{column} {cell}" for column, cell in zip(columns, row.cells, strict=True)) \
            if len(columns) == len(row.cells) else " ".join(row.cells) + (f" ({header})" if header else "")
        found.append((quote, f"{row.label}: {said}", why))
    return found


def _candidates(unit: Unit, paged: bool) -> list[tuple[str, str, ClaimKind, str]]:
    """What a unit drafts, as (quote, statement, kind, why): a table printed as text its worked rows, another
    unit itself when ``classify`` drafts it."""
    if unit.kind == "table":
        return [(quote, statement, ClaimKind.quantitative, why)
                for quote, statement, why in table_results(unit)]
    classified = classify(unit, paged)
    if classified is None:
        return []
    statement = _row_statement(unit) if unit.kind == "row" else unit.text
    return [(unit.text, statement, *classified)]


def fallback_claims(text: str, analyzers: Mapping[str, Any] | None = None,
                    taken: set[str] | None = None) -> list[dict[str, Any]]:
    """Draft claims (as ``DraftClaim`` fields) from the quantities of a text; see the module docstring. In a
    paged text each claim's source names the page its quote starts on."""
    vocabulary = analyzer_vocabulary(analyzers or {})
    scales = {name: sorted(getattr(cls, "scales", {}) or {}) for name, cls in (analyzers or {}).items()}
    taken = set(taken or ())
    drafted: list[dict[str, Any]] = []
    quotes: set[str] = set()
    # Findings in words only from a paper's full text as `kb add` stores a PDF (pages separated): there the
    # results are mostly stated in words. In notes, abstracts and Markdown (the labelled protein-model
    # passages) the word cues cost more precision than they add recall (benchmarks/bench_drafter.py).
    paged = PAGE_BREAK in text
    for unit in units(text):
        for quote, statement, kind, why in _candidates(unit, paged):
            if quote in quotes:
                continue
            quotes.add(quote)
            name = suggest_analyzer(" ".join([*unit.header, quote]), vocabulary)
            notes: list[str] = [f"drafted because it states {why}"]
            if name is not None:
                metrics = ", ".join(getattr(analyzers[name], "metrics", {}) or {}) if analyzers else ""
                notes.append(
                    f"{name} might test this (it shares words with the quote): to have it judged, bind "
                    f"it with an expectation on one of its metrics ({metrics}); scales: "
                    f"{', '.join(scales[name])}"
                )
            sizes = model_sizes(quote)
            drafted.append({
                "id": slug(statement, taken), "statement": statement, "kind": kind, "quote": quote,
                "section": "table" if unit.kind in ("row", "table") else None, "page": unit.page,
                "scale": ClaimScale(parameters=max(sizes)) if sizes else None, "notes": notes,
            })
    return drafted
