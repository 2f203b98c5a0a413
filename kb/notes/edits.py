"""Edits of a note that change only what they must: fields, appended claims, and nothing else.

``kb.notes.files`` reads, validates and writes notes; this module computes edited versions of them, line by
line, so that everything the user wrote outside the edit keeps its bytes:

* ``set_fields`` rewrites only the lines of the top-level fields it changes (dotted keys reach into
  mappings: ``publication.year``); key order, comments, quoting and unknown fields stay as they were;
* a list field (``claims``, ``authors``, ``tags``) is edited item by item: unchanged items keep their
  bytes (quoting, comments, flow maps), changed ones are rewritten, new ones appended; a list written
  inline is rewritten as a whole, which still touches only that field's lines;
* ``append_claims`` adds claims at the end of the ``claims:`` block that way;
* ``frontmatter_data`` gives the frontmatter as plain data exactly as written (for editors).

Every function returns a validated ``Note``; nothing is written to disk (``kb.notes.files.save_note`` does).
"""

from __future__ import annotations

import copy
import datetime as dt
import difflib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.scalarstring import PlainScalarString, ScalarString

from analyzers.files import unique_name
from kb.notes.files import (
    Note,
    NoteError,
    ParsedYaml,
    dump_yaml,
    forget_yaml,
    parse_note,
    parse_yaml,
    plain_data,
    split_note,
)
from schemas.claim import Claim
from schemas.note import PaperNote

# A top-level key starts in column 0; indented lines, comments and '- ' items belong to the key above.
_TOP_KEY = re.compile(
    r"""^(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|"""
    r"""(?P<plain>[^\s#'"\-?:|>!&*%@`{}\[\],][^#]*?))[ \t]*:(?:[ \t]|\r?\n|$)"""
)
# A double-quoted scalar after 'key:' or '- ' tells us the user's quoting style.
_DQ_SCALAR = re.compile(r"""(?:^[ \t]*|:[ \t]+|-[ \t]+)\"""", re.MULTILINE)




def _top_spans(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Top-level key -> (first line, end line) in the frontmatter, trailing blanks/comments excluded."""
    starts: list[tuple[str, int]] = []
    for i, line in enumerate(lines):
        m = _TOP_KEY.match(line)
        if m:
            key = m.group("dq") if m.group("dq") is not None else m.group("sq")
            starts.append((key if key is not None else m.group("plain"), i))
    spans: dict[str, tuple[int, int]] = {}
    for n, (key, start) in enumerate(starts):
        end = starts[n + 1][1] if n + 1 < len(starts) else len(lines)
        # Blank and comment lines before the next key stay where they are (they belong to no value).
        while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1
        spans[key] = (start, end)
    return spans


def _set_path(container: Any, parts: list[str], value: Any, path: Path, dotted: str) -> Any:
    """Return ``container`` with ``parts`` set to ``value`` (dicts created as needed)."""
    if not parts:
        return value
    head, rest = parts[0], parts[1:]
    if isinstance(container, list):
        if not head.isdigit() or int(head) >= len(container):
            raise NoteError(path, f"no list item {head!r} in '{dotted}'", field=dotted)
        container[int(head)] = _set_path(container[int(head)], rest, value, path, dotted)
        return container
    if container is None:
        container = {}
    if not isinstance(container, dict):
        raise NoteError(path, f"'{dotted}' goes through a value that is not a mapping", field=dotted)
    container[head] = _set_path(container.get(head), rest, value, path, dotted)
    return container


def _resolve_ids(data: Any, parts: list[str]) -> list[str]:
    """Dotted parts with list items named by id turned into indexes: claims.late-layers.expect ->
    claims.2.expect."""
    resolved, node = [], data
    for part in parts:
        if isinstance(node, list) and not part.isdigit():
            ids = [i for i, item in enumerate(node) if isinstance(item, dict) and str(item.get("id")) == part]
            if ids:
                part = str(ids[0])
        resolved.append(part)
        node = _child(node, part)
    return resolved


def _child(node: Any, part: str) -> Any:
    """One step down a dotted path: a mapping's key or a list's index; None where there is none."""
    if isinstance(node, dict):
        return node.get(part)
    if isinstance(node, list) and part.isdigit() and int(part) < len(node):
        return node[int(part)]
    return None


def _scalar_node(parsed: ParsedYaml, parts: list[str]) -> ScalarNode | None:
    """The YAML scalar node at a dotted path of the frontmatter, or None (absent, or not a scalar)."""
    node: Node | None = parsed.root
    for part in parts:
        if isinstance(node, MappingNode):
            node = next((v for k, v in node.value if isinstance(k, ScalarNode) and k.value == part), None)
        elif isinstance(node, SequenceNode) and part.isdigit() and int(part) < len(node.value):
            node = node.value[int(part)]
        else:
            return None
    return node if isinstance(node, ScalarNode) and not node.anchor else None


def _render_scalar(value: Any, old: ScalarNode, in_flow: bool) -> str | None:
    """``value`` written as a YAML scalar in the old value's quoting where it can be; None if not a scalar."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if not isinstance(value, str):
        return None
    if old.style == "'" and "\n" not in value:
        return "'" + value.replace("'", "''") + "'"
    if old.style is None and _plain_is_safe(value, in_flow):
        return value
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def _plain_is_safe(value: str, in_flow: bool) -> bool:
    """Whether ``value`` written plain reads back as the same string."""
    if not value or value != value.strip() or "\n" in value or (in_flow and any(c in value for c in ",[]{}")):
        return False
    try:
        return YAML(typ="safe", pure=True).load(value) == value
    except YAMLError:
        return False


def _replace_scalar(parsed: ParsedYaml, parts: list[str], value: Any, path: Path) -> str | None:
    """The frontmatter with one existing scalar's bytes replaced by ``value``; None when that is not possible.

    Everything else (comments on the same and other lines, flow maps, number and date styles) keeps its bytes.
    The edited text is parsed once, to check it reads back as ``value``; that parse is the one the note's
    validation then uses (``parse_yaml`` keeps it).
    """
    fm, node = parsed.text, _scalar_node(parsed, parts)
    if node is None or node.start_mark is None or node.end_mark is None:
        return None
    rendered = _render_scalar(value, node, in_flow=_in_flow(fm, node.start_mark.index))
    if rendered is None:
        return None
    start, end = node.start_mark.index, node.end_mark.index
    edited = fm[:start] + rendered + fm[end:]
    data = plain_data(parse_yaml(edited, path).data)
    current: Any = data
    for part in parts:
        current = _child(current, part)
    return edited if current == value or str(current) == str(value) and isinstance(value, dt.date) else None


def _in_flow(fm: str, index: int) -> bool:
    """Whether position ``index`` sits inside a flow collection ('{...}' or '[...]') on its line."""
    line_start = fm.rfind("\n", 0, index) + 1
    before = fm[line_start:index]
    return before.count("{") > before.count("}") or before.count("[") > before.count("]")


def coerce_value(note: Note, dotted: str, raw: str) -> Any:
    """A value typed on the command line, as the field wants it: text for a text field, exactly as typed
    (``title=From Words to Amino Acids: ...``, ``analyst=Smith # 2nd reader``); YAML otherwise ('5',
    'true', '[a, b]'), and the text itself when it is not valid YAML."""
    data = frontmatter_data(note)
    parts = _resolve_ids(data, dotted.split("."))
    current: Any = data
    for part in parts:
        current = _child(current, part)
    info = PaperNote.model_fields.get(parts[0]) if len(parts) == 1 else None
    if isinstance(current, str) or (
        current is None and info is not None and info.annotation in (str, str | None)
    ):
        return raw
    if not raw.strip():
        return None
    try:
        return YAML(typ="safe", pure=True).load(raw)
    except YAMLError:
        return raw


def _set_one(fm: str, key: str, value: Any, newline: str, path: Path) -> str:
    """The frontmatter with one (dotted) field set; parsed once here (``parse_yaml``: the note's read, or the
    previous change's check, already did), and its result once, to check it or to validate it."""
    parsed = parse_yaml(fm, path)
    data = parsed.data
    parts = _resolve_ids(plain_data(data), key.split("."))
    in_place = _replace_scalar(parsed, parts, value, path)
    if in_place is not None:
        return in_place
    top = parts[0]
    current = plain_data(data.get(top)) if isinstance(data, dict) else None
    new_value = _set_path(copy.deepcopy(current), parts[1:], value, path, key)
    lines = fm.splitlines(keepends=True)
    spans = _top_spans(lines)
    if top in spans and isinstance(current, list) and isinstance(new_value, list) and new_value:
        edited = _edit_list_in_place(lines, spans[top], current, new_value, newline)
        if edited is not None and plain_data(parse_yaml(edited, path).data).get(top) == new_value:
            return edited
    if top in spans:
        start, end = spans[top]
        old = "".join(lines[start:end])
        # Keep the quoting of the block being replaced; quote a bare old value only if it was quoted.
        quote = bool(_DQ_SCALAR.search(old.split(":", 1)[1] if ":" in old else old))
    else:
        if isinstance(data, dict) and top in data:
            raise NoteError(path, f"cannot locate the line of '{top}' to edit it", field=key)
        start = end = len(lines)
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += newline  # pragma: no cover - a fence line always follows, so this is rare
        quote = bool(_DQ_SCALAR.search(fm))  # new keys follow the file's dominant style
    block = dump_yaml({top: new_value}, quote=quote)
    if newline != "\n":
        block = block.replace("\n", newline)
    return "".join(lines[:start]) + block + "".join(lines[end:])


def set_fields(note: Note, changes: dict[str, object]) -> Note:
    """Return a new Note with ``changes`` applied (keys may be dotted: 'publication.year').

    Only the lines of the changed top-level fields are rewritten; key order, comments, quoting, unknown
    fields and the body stay byte-identical. The result is validated; nothing is written to disk.
    """
    parts = split_note(note.raw, note.path)
    fm = parts.frontmatter
    for key, value in changes.items():
        if not key or any(not p for p in key.split(".")):
            raise NoteError(note.path, f"bad field name {key!r}", field=key)
        fm = _set_one(fm, key, value, parts.newline, note.path)
    raw = parts.join(fm)
    try:
        edited = parse_note(raw, note.path)
    except NoteError as exc:
        names = ", ".join(f"'{k}'" for k in changes)
        raise NoteError(
            note.path,
            f"change to {names} rejected, note left unchanged: {exc.message}",
            line=exc.line,
            field=exc.field or next(iter(changes), None),
        ) from None
    if fm != parts.frontmatter:
        forget_yaml(parts.frontmatter)
    return edited


# -- lists edited item by item, and claims ---------------------------------------------------------

DUMPED_INDENT = 2  # kb.notes.files dumps sequence items as '  - ' (offset 2)


def claim_fields(claim: Claim) -> dict[str, Any]:
    """A claim as the plain mapping written into a note (no empty or default-valued fields)."""
    data = claim.model_dump(mode="json", exclude_none=True)
    if data.get("expect", {}).get("inconclusive_band") == 0:
        del data["expect"]["inconclusive_band"]
    if data.get("analyzer", {}).get("params") == {} and data["analyzer"].get("scale"):
        del data["analyzer"]["params"]
    parameters = data.get("scale", {}).get("parameters")
    if isinstance(parameters, float) and parameters.is_integer():
        data["scale"]["parameters"] = int(parameters)  # '650000000', as notes write it
    return data


def unique_ids(claims: Iterable[Claim], taken: Iterable[str]) -> list[Claim]:
    """The claims with ids made unique among ``taken`` and each other ('id', 'id-2', ...)."""
    seen = set(taken)
    unique = []
    for claim in claims:
        ident = unique_name(claim.id, seen, max_length=64)
        seen.add(ident)
        unique.append(claim if ident == claim.id else claim.model_copy(update={"id": ident}))
    return unique


def _reindent(block: str, indent: int) -> str:
    shift = indent - DUMPED_INDENT
    lines = block.splitlines(keepends=True)
    if shift >= 0:
        return "".join(" " * shift + line if line.strip() else line for line in lines)
    return "".join(line[-shift:] if line[:-shift].strip() == "" else line for line in lines)


def _edit_list_in_place(lines: list[str], span: tuple[int, int], old: list[Any], new: list[Any],
                        newline: str) -> str | None:
    """The frontmatter with a block-style list changed item by item, or None when that is not possible.

    Items are matched by value (a diff of the two lists): unchanged items keep their bytes (quoting,
    comments, flow maps), removed ones are dropped, new ones written in the block's indent and quoting,
    and an edited item is rewritten with the quoting of its unchanged values kept. A list written
    inline (``tags: [a, b]``) or one whose items cannot be told apart returns None.
    """
    start, end = span
    found = _list_items(lines, start, end)
    if found is None or len(found[1]) != len(old):
        return None
    indent, items = found
    block = "".join(lines[start:end])
    quote = bool(_DQ_SCALAR.search(block.split(":", 1)[1]))
    bounds = [*items, end]
    old_lines = [lines[bounds[i]:bounds[i + 1]] for i in range(len(old))]
    out = lines[start:items[0]]  # the key line and any comment before the first item
    _merge_items(out, old_lines, old, new, _ItemStyle(indent, quote, newline))
    tail = lines[end:]
    if out and tail and not out[-1].endswith(("\n", "\r")):
        out[-1] += newline
    return "".join(lines[:start] + out + tail)


def _list_items(lines: list[str], start: int, end: int) -> tuple[int, list[int]] | None:
    """The indent of a block-style list's items and the line of each (lines ``start`` to ``end``, the key
    first); None for a list written inline (``tags: [a, b]``) or one with no items."""
    if lines[start].split(":", 1)[1].split("#", 1)[0].strip():
        return None  # 'key: [...]' written inline
    dashes = [
        i for i in range(start + 1, end) if lines[i].lstrip().startswith("- ") or lines[i].strip() == "-"
    ]
    if not dashes:
        return None
    indent = len(lines[dashes[0]]) - len(lines[dashes[0]].lstrip())
    return indent, [i for i in dashes if len(lines[i]) - len(lines[i].lstrip()) == indent]


@dataclass(frozen=True)
class _ItemStyle:
    """How a block list writes its items: their indent, whether its strings are double-quoted, the newline."""

    indent: int
    quote: bool
    newline: str


def _merge_items(out: list[str], old_lines: list[list[str]], old: list[Any], new: list[Any],
                 style: _ItemStyle) -> None:  # fmt: skip
    """Append to ``out`` the lines of the ``new`` items: an unchanged item's old lines, a new or edited one
    written in the block's style (an edited item keeps the quoting of its unchanged values)."""

    def emit(item: Any, like: list[str] | None) -> None:
        if out and not out[-1].endswith(("\n", "\r")):
            out[-1] += style.newline
        if like is not None:  # an edited item: its unchanged values keep their quoting
            item = _restyle(item, _styled_item(like, style.indent), style.quote)
        dumped = _reindent(dump_yaml({"item": [item]}, quote=style.quote).split("\n", 1)[1], style.indent)
        out.append(dumped.replace("\n", style.newline) if style.newline != "\n" else dumped)

    # Match items by value, so that removing or inserting one does not rewrite those after it.
    def key(item: Any) -> str:
        return json.dumps(item, sort_keys=True, default=str)

    matcher = difflib.SequenceMatcher(a=[key(x) for x in old], b=[key(x) for x in new], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out += [line for item_lines in old_lines[i1:i2] for line in item_lines]
        elif tag in ("replace", "insert"):
            for k, item in enumerate(new[j1:j2]):
                emit(item, old_lines[i1 + k] if tag == "replace" and i1 + k < i2 else None)


def _styled_item(item_lines: list[str], indent: int) -> Any:
    """One list item's value as ruamel loads it with quotes preserved (strings keep their style)."""
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    text = "".join(line[indent:] if line[:indent].strip() == "" else line for line in item_lines)
    try:
        loaded = yaml.load(text)
    except YAMLError:
        return None
    return loaded[0] if isinstance(loaded, list) and loaded else None


def _restyle(new: Any, old: Any, quote: bool) -> Any:
    """``new`` with the string styles of ``old`` kept wherever a string is unchanged."""
    if isinstance(new, dict) and isinstance(old, dict):
        return {key: _restyle(value, old[key], quote) if key in old else value for key, value in new.items()}
    if isinstance(new, list) and isinstance(old, list):
        return [_restyle(value, old[i], quote) if i < len(old) else value for i, value in enumerate(new)]
    if isinstance(new, str) and isinstance(old, str) and new == str(old):
        return old if isinstance(old, ScalarString) else PlainScalarString(old)
    return new


def append_claims(note: Note, claims: list[Claim]) -> Note:
    """The note with ``claims`` appended to its ``claims:`` block (ids must already be unique); not written.

    The existing claims keep their bytes; a note without claims gets a new ``claims:`` block.
    """
    current = frontmatter_data(note).get("claims") or []
    return set_fields(note, {"claims": [*current, *(claim_fields(c) for c in claims)]})


def frontmatter_data(note: Note) -> dict[str, Any]:
    """The note's frontmatter as plain data, as written: key order, ints as ints, explicit nulls."""
    data = plain_data(parse_yaml(note.frontmatter_text, note.path).data)
    return data if isinstance(data, dict) else {}
