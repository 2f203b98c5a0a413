"""The letter classes the author-block rules read names by (kb/papers/pdf_names.py), built at import in one
pass: the same classes as a pass per class over the characters builds them."""

from __future__ import annotations

import re
import unicodedata

from kb.papers import pdf_names


def _class_by_filtering(categories: set[str]) -> str:
    """A class's body as it was built before (one pass per class): every alphabetic character of the Basic
    Multilingual Plane in ``categories``, consecutive ones joined in ranges."""
    codes = [ord(c) for c in filter(str.isalpha, map(chr, range(0x10000))) if unicodedata.category(c) in categories]
    ranges: list[list[int]] = []
    for code in codes:
        if ranges and code == ranges[-1][1] + 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


def test_letter_classes_are_those_of_a_pass_per_class() -> None:
    assert _class_by_filtering({"Lu", "Lt"}) == pdf_names.UPPER
    assert _class_by_filtering({"Lo"}) == pdf_names._CASELESS


def test_letter_classes_hold_the_letters_they_name() -> None:
    """Each class matches exactly its categories' characters of the plane (a range's ends and a single
    character written right)."""
    upper, caseless = re.compile(f"[{pdf_names.UPPER}]"), re.compile(f"[{pdf_names._CASELESS}]")
    for code in range(0x10000):
        category = unicodedata.category(chr(code))
        assert bool(upper.fullmatch(chr(code))) == (category in ("Lu", "Lt")), hex(code)
        assert bool(caseless.fullmatch(chr(code))) == (category == "Lo"), hex(code)
    assert upper.fullmatch("Ú") and upper.fullmatch("ǅ") and not upper.fullmatch("a")
    assert caseless.fullmatch("山") and caseless.fullmatch("김") and not caseless.fullmatch("A")


def test_up_to_address_keeps_an_institutions_parts_before_its_address() -> None:
    """An institution ends at its first address part (a street, a postcode, contacts), a mark's text aside."""
    from kb.papers.pdf_names import up_to_address

    assert up_to_address(["Department of Physics", " University of Oxford", " Parks Road", " Oxford"]) == [
        "Department of Physics", " University of Oxford"]
    assert up_to_address(["MRC Unit", " University of Bristol", " Bristol BS8 2BN", " UK"]) == [
        "MRC Unit", " University of Bristol"]
    assert up_to_address(["⟨1⟩Google Research", " jane@google.com"]) == ["⟨1⟩Google Research"]
    assert up_to_address(["⟨12345⟩Beta Labs"]) == ["⟨12345⟩Beta Labs"]  # a mark's digits are no street number
    assert up_to_address(["12345 Main Street", " Alpha"]) == []
