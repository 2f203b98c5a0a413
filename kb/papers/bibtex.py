"""BibTeX text and names, both ways: the one home of how kb reads a BibTeX field and writes one back.

``kb add FILE.bib`` (``kb.papers.add``) decodes fields with ``decode_text`` and names with ``read_name``;
``kb export --bibtex`` (``kb.papers.cite``) writes them with ``encode_text`` and ``bibtex_name``, so that an
exported entry read back gives the note the same fields.

A note keeps an author as the name printed on the paper ("Johannes Diderik van der Waals, Jr."), with the
family name beside it only when the name alone does not tell it ("Amir Mohammad Karimi Mamaghan": family
"Karimi Mamaghan"). ``split_name`` reads a printed name by BibTeX's own rule (the lower-case words before the
last word are the "von" particle; what follows a last comma is the "Jr" part).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# BibTeX's special characters and how a field writes them; everything else is written as UTF-8 (biber,
# biblatex and Zotero read it), so a name like "Höppe" stays readable in the file.
_ESCAPES = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
            "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_ESCAPE = re.compile("[" + re.escape("".join(_ESCAPES)) + "]")
# Escaped specials read back: held in private-use characters while the LaTeX decoder strips grouping braces.
_READ_BACK = [(r"\textbackslash{}", "\\"), (r"\textasciitilde{}", "~"), (r"\textasciicircum{}", "^"),
              (r"\textbackslash", "\\"), (r"\{", "{"), (r"\}", "}"), (r"\&", "&"), (r"\%", "%"), (r"\$", "$"),
              (r"\#", "#"), (r"\_", "_")]
_HOLD = {text: chr(0xE000 + n) for n, (_, text) in enumerate(_READ_BACK)}


def encode_text(value: str) -> str:
    """A field's text as BibTeX writes it: the special characters escaped, the rest kept as UTF-8."""
    return _ESCAPE.sub(lambda m: _ESCAPES[m.group()], value)


def decode_text(value: str) -> str:
    """A BibTeX field as plain text: LaTeX accents and escapes resolved ({\\"u} -> ü, \\& -> &), grouping
    braces and math dollars dropped ({ESM}-2 -> ESM-2), a tie (~) a space, runs of white space one space."""
    from bibtexparser.latexenc import latex_to_unicode

    for latex, text in _READ_BACK:
        value = value.replace(latex, _HOLD[text])
    value = latex_to_unicode(value) if "\\" in value else value
    value = re.sub(r"[{}$]", "", value).replace("~", " ")  # unescaped: grouping, math delimiters, a tie
    for text, held in _HOLD.items():
        value = value.replace(held, text)
    return re.sub(r"\s+", " ", value).strip()


@dataclass(frozen=True)
class NameParts:
    """An author's name in BibTeX's four parts (CSL-JSON: given, non-dropping-particle, family, suffix)."""

    given: str
    particle: str  # "van der", "de"
    family: str
    suffix: str  # "Jr.", "III"

    @property
    def printed(self) -> str:
        """The name as a paper prints it: 'Given particle Family, Suffix'."""
        name = " ".join(p for p in (self.given, self.particle, self.family) if p)
        return f"{name}, {self.suffix}" if self.suffix else name

    @property
    def full_family(self) -> str:
        """The family name with its particle ('van der Waals'): what a note's ``family`` field holds."""
        return " ".join(p for p in (self.particle, self.family) if p)


def _lower_word(word: str) -> bool:
    return word[:1].islower()


def split_name(name: str, family: str | None = None) -> NameParts:
    """A printed name in its parts; ``family`` (a note's ``family`` field, particle included) when given
    decides where the family name starts, otherwise the last word is the family name with the lower-case words
    before it as its particle."""
    rest, _, suffix = name.rpartition(",") if "," in name and "," not in (family or "") else ("", "", "")
    rest, suffix = (rest, suffix.strip()) if rest else (name, "")
    rest = rest.strip()
    if family and rest.endswith(family) and rest != family:
        given, words = rest[: -len(family)].strip(), family.split()
    elif family and rest == family:
        given, words = "", family.split()
    else:
        all_words = rest.split()
        cut = len(all_words) - 1
        while cut > 1 and _lower_word(all_words[cut - 1]):  # the first word is never the particle
            cut -= 1
        given, words = " ".join(all_words[:cut]), all_words[cut:]
    particle = []
    while len(words) > 1 and _lower_word(words[0]):
        particle.append(words.pop(0))
    return NameParts(given, " ".join(particle), " ".join(words), suffix)


def note_family(parts: NameParts) -> str | None:
    """The ``family`` a note must keep beside the printed name: None when ``split_name`` finds it unaided."""
    return None if split_name(parts.printed) == parts else parts.full_family


def read_name(bibtex: str) -> NameParts:
    """One name of a BibTeX ``author`` field ('van der Waals, Jr., Johannes', 'Ludwig van Beethoven')."""
    from bibtexparser.customization import InvalidName, splitname

    try:
        parts = splitname(bibtex.strip(), strict_mode=False)
    except InvalidName:
        return split_name(decode_text(bibtex))
    return NameParts(*(decode_text(" ".join(parts.get(key, []))) for key in ("first", "von", "last", "jr")))


def read_names(field: str) -> list[NameParts]:
    """The names of a BibTeX ``author`` field, split at each ' and ' outside braces ('{Barnes and Noble}' is
    one name); 'others' ('A and others') is not a person and is left out."""
    names, depth, start = [], 0, 0
    text = re.sub(r"\s+", " ", field)
    for match in re.finditer(r"[{}]|\s+and\s+", text, flags=re.IGNORECASE):
        token = match.group()
        depth += 1 if token == "{" else -1 if token == "}" else 0
        if token not in "{}" and depth == 0:
            names.append(text[start:match.start()])
            start = match.end()
    names.append(text[start:])
    return [read_name(n) for n in names if n.strip() and n.strip().lower() != "others"]


def bibtex_name(parts: NameParts) -> str:
    """A name as BibTeX reads it back into the same parts: 'von Last, Jr, First' (braces keep a multi-word
    family that the particle rule would split)."""
    family = encode_text(parts.family)
    if " " in parts.family or _lower_word(parts.family):
        family = "{" + family + "}"
    last = " ".join(p for p in (encode_text(parts.particle), family) if p)
    given = encode_text(parts.given)
    if parts.suffix:
        return f"{last}, {encode_text(parts.suffix)}, {given}"
    return f"{last}, {given}" if given else last
