"""How texts are folded to be compared, in a module of its own: a claim's quote against its source
(``kb.notes.grounding``), and kb add's PDF reader matching a page's lines to an abstract
(``kb.papers.pdf_roles``, in its child process, which must not import the notes' models:
``kb.notes.grounding`` imports pydantic, a third of a second at every PDF's read)."""

from __future__ import annotations

import re
import unicodedata

_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-")
_QUOTES = {ord(c): "'" for c in "\u2018\u2019\u201b\u2032"} | {
    ord(c): '"' for c in "\u201c\u201d\u201f\u2033"
}
_LETTER_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")


def normalize_text(text: str) -> str:
    """Fold a text into the form quotes are compared in (case, Unicode, dashes, whitespace, hyphenation)."""
    text = unicodedata.normalize("NFKC", text).translate(_DASHES).translate(_QUOTES)
    text = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)  # 'pro-\ntein' -> 'protein'
    text = re.sub(r"\s*-\s*", "-", text)  # 'first – order' and 'first-order' compare equal
    # A hyphen between two letters is optional: a word broken at a line's end reaches a quote with or without
    # it, whichever the PDF viewer or kb's reading kept ('non-parametric' and 'nonparametric' compare equal).
    text = _LETTER_HYPHEN.sub("", text)
    return re.sub(r"\s+", " ", text).strip().casefold()
