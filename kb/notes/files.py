"""Read, validate, edit and write paper notes (Markdown files with YAML frontmatter).

A note is ``---`` / YAML / ``---`` / Markdown body. This module is the only place that touches note
files, and it keeps them exactly as the user wrote them:

* the bytes read are kept (``Note.raw``), so loading and saving an unchanged note is byte-identical
  (BOM, CRLF, comments, quoting and unknown fields included);
* edits (``kb.notes.edits``) change only the lines of the fields they change, nothing else;
* every write is atomic (temporary file in the same folder + ``os.replace``) and new files never
  overwrite existing ones;
* every problem is a ``NoteError`` that names the file, the line and the field, and says what is
  expected;
* a frontmatter text is parsed once in a process (``parse_yaml``): an edit's reads, its node walk, its
  check and the index reading the result back share that parse (shared, so read-only).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import sys
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from enum import Enum
from io import StringIO
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, ScalarString

from analyzers.files import atomic_write_bytes, replace_unmoved, write_unique
from kb.notes.folder import find_notes
from kb.settings import NoteLimits
from schemas.note import PaperNote

__all__ = [
    "Note",
    "NoteChanged",
    "NoteError",
    "ParsedYaml",
    "create_note",
    "dump_yaml",
    "field_line",
    "find_notes",
    "forget_yaml",
    "import_note",
    "load_yaml",
    "parse_note",
    "parse_yaml",
    "plain_data",
    "read_note",
    "render_new_note",
    "save_note",
    "slugify",
    "split_note",
    "validate_paths",
]

BOM = b"\xef\xbb\xbf"
_FENCE = "---"
class NoteError(Exception):
    """Bad note: carries path, line (1-based, optional), field (optional) and a hint of what to do."""

    def __init__(
        self, path: Path | str, message: str, *, line: int | None = None, field: str | None = None
    ) -> None:
        self.path = Path(path)
        self.message = message
        self.line = line
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        where = str(self.path) if self.line is None else f"{self.path}:{self.line}"
        what = f"field '{self.field}': {self.message}" if self.field else self.message
        return f"{where}: {what}"


class NoteChanged(NoteError):
    """The note on disk is no longer the version an edit was based on; nothing was written (reload, redo)."""


@dataclass
class Note:
    """One parsed, validated note; ``raw`` is the source of truth for writing."""

    path: Path
    raw: bytes
    meta: PaperNote
    body: str
    frontmatter_text: str
    # (st_dev, st_ino) of the file the bytes were read from: a write goes to that file or nowhere.
    inode: tuple[int, int] | None = None

    @property
    def id(self) -> str:
        """The note's id: its file name without extension."""
        return self.path.stem

    @property
    def content_hash(self) -> str:
        """sha256 of the exact bytes, for change detection."""
        return hashlib.sha256(self.raw).hexdigest()


# --------------------------------------------------------------------------------------------------
# Parsing


@dataclass
class _Split:
    """A note's text cut into its parts; ``opening + frontmatter + closing + body == text``."""

    bom: bool
    opening: str
    frontmatter: str
    closing: str
    body: str

    def join(self, frontmatter: str | None = None) -> bytes:
        fm = self.frontmatter if frontmatter is None else frontmatter
        text = self.opening + fm + self.closing + self.body
        return (BOM if self.bom else b"") + text.encode("utf-8")

    @property
    def newline(self) -> str:
        return "\r\n" if self.opening.endswith("\r\n") else "\n"


_UTF16_BOMS = {b"\xff\xfe": "UTF-16 little-endian", b"\xfe\xff": "UTF-16 big-endian"}


def _decode(raw: bytes, path: Path) -> tuple[bool, str]:
    for mark, name in _UTF16_BOMS.items():
        if raw.startswith(mark):
            raise NoteError(
                path,
                f"the file is {name} text (it starts with the byte-order mark 0x{mark.hex()}); "
                "kb reads UTF-8: re-save it as UTF-8",
                line=1,
            )
    if raw[:64].count(b"\x00") >= 8:
        raise NoteError(
            path,
            "the file has NUL bytes between its characters, as UTF-16 text does; kb reads UTF-8: "
            "re-save it as UTF-8",
            line=1,
        )
    bom = raw.startswith(BOM)
    data = raw[len(BOM) :] if bom else raw
    try:
        return bom, data.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(BOM) if bom else 0)
        line = raw[:offset].count(b"\n") + 1
        raise NoteError(
            path,
            f"not valid UTF-8 at byte offset {offset} (byte 0x{raw[offset]:02x}); "
            "expected a UTF-8 text file: re-save it as UTF-8",
            line=line,
        ) from None


def split_note(raw: bytes, path: Path) -> _Split:
    bom, text = _decode(raw, path)
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != _FENCE:
        raise NoteError(
            path, "missing opening '---': a note must start with a '---' line, then YAML, then '---'", line=1
        )
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n").rstrip() == _FENCE:
            return _Split(
                bom=bom,
                opening=lines[0],
                frontmatter="".join(lines[1:i]),
                closing=lines[i],
                body="".join(lines[i + 1 :]),
            )
    raise NoteError(
        path,
        "missing closing '---': the YAML frontmatter must end with a line containing only '---'",
        line=len(lines) + 1,
    )


# A note's frontmatter is a few hundred values; these bounds stop a YAML alias bomb ("billion laughs": a
# 513-byte file that expands to millions of values) and pathological nesting before anything is built.
MAX_YAML_VALUES = 100_000
MAX_YAML_DEPTH = 64


def _check_expansion(root: Node | None, path: Path) -> None:
    """Refuse YAML whose aliases add more than ``MAX_YAML_VALUES`` values to those written out, that nests
    past ``MAX_YAML_DEPTH``, or that holds an integer too long for Python to read (a 5,000-digit number).

    Only what aliases add counts: a long note written out in full (10,000 claims) is no bomb. Sizes are
    memoized per node, so an alias bomb costs as much to check as it has nodes, not as it expands.
    """
    if root is not None:
        _ExpansionCheck(path, _distinct_nodes(root)).size(root, 0, ())


class _ExpansionCheck:
    """One walk of ``_check_expansion``: each node's expanded size, memoized, and the nodes being sized (a
    node met again while open is a recursive alias)."""

    def __init__(self, path: Path, written: int) -> None:
        self.path = path
        self.written = written
        self.sizes: dict[int, int] = {}
        self.open_nodes: set[int] = set()
        self.max_digits = sys.get_int_max_str_digits()  # 0: no limit

    def size(self, node: Node, depth: int, loc: tuple[Any, ...]) -> int:
        """How many values ``node`` expands to (itself included), refusing a bomb as soon as it shows."""
        line = node.start_mark.line + 2 if node.start_mark is not None else None
        if depth > MAX_YAML_DEPTH:
            raise NoteError(
                self.path,
                f"the YAML nests more than {MAX_YAML_DEPTH} levels deep; a note's frontmatter "
                "is flat 'key: value' lines with a few nested lists",
                line=line,
            )
        key = id(node)
        if key in self.sizes:
            return self.sizes[key]
        if key in self.open_nodes:
            raise NoteError(
                self.path, "a YAML alias refers to itself (a recursive structure); remove the alias",
                line=line,
            )
        self.open_nodes.add(key)
        if node.tag == "tag:yaml.org,2002:int":
            self.check_digits(node, loc, line)
        total = 1
        for child_loc, child in _children(node, loc):
            total += self.size(child, depth + 1, child_loc)
            if total - self.written > MAX_YAML_VALUES:
                raise NoteError(
                    self.path, f"the YAML expands to more than {MAX_YAML_VALUES:,} values through its "
                    "aliases (&name / *name); write the values out instead", line=line,
                )
        self.open_nodes.discard(key)
        self.sizes[key] = total
        return total

    def check_digits(self, node: Node, loc: tuple[Any, ...], line: int | None) -> None:
        """Refuse a decimal integer longer than Python reads (hexadecimal, octal and binary have no limit)."""
        if not self.max_digits or isinstance(node, MappingNode | SequenceNode):
            return
        digits = sum(char.isdigit() for char in str(node.value))
        if digits > self.max_digits and not str(node.value).lstrip("+-").startswith(("0x", "0o", "0b")):
            raise NoteError(
                self.path,
                f"a number of {digits:,} digits, more than the {self.max_digits:,} kb reads; "
                "put it in quotes to keep it as text",
                line=line,
                field=".".join(map(str, loc)) or None,
            )


def _children(node: Node, loc: tuple[Any, ...]) -> list[tuple[tuple[Any, ...], Node]]:
    """A node's child nodes, each with its location: a mapping's keys (at the mapping's location) and
    values (at the key's), a sequence's items (at their index)."""
    if isinstance(node, MappingNode):
        children: list[tuple[tuple[Any, ...], Node]] = []
        for name, value in node.value:
            children += [
                (loc, name),
                ((*loc, str(name.value) if isinstance(name, ScalarNode) else "?"), value),
            ]
        return children
    if isinstance(node, SequenceNode):
        return [((*loc, i), child) for i, child in enumerate(node.value)]
    return []


def _distinct_nodes(root: Node | None) -> int:
    """How many values the YAML writes out (each alias's target counted once)."""
    seen: set[int] = set()
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            stack.extend(child for pair in node.value for child in pair)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
    return len(seen)


_DATE_VALUE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:(?:[Tt]|[ \t]+)(\d{1,2}):(\d{1,2})(?::(\d{1,2}))?)?")


def _impossible_date(text: str) -> tuple[int | None, str | None]:
    """The file line and the field (dotted, ``publication.date``) of the first unquoted date or time that does
    not exist (2026-02-30, 2026-01-01T25:61:00), or (None, None); read from the composed YAML nodes, which
    hold each value's place."""
    try:
        root = YAML(typ="rt").compose(text)
    except Exception:  # noqa: BLE001 - only a hint for a message about to be raised
        return None, None
    stack: list[tuple[tuple[Any, ...], Node]] = [((), root)] if root is not None else []
    while stack:
        loc, node = stack.pop()
        if isinstance(node, MappingNode):
            stack.extend(((*loc, str(key.value)), value) for key, value in reversed(node.value))
        elif isinstance(node, SequenceNode):
            stack.extend(((*loc, i), value) for i, value in reversed(list(enumerate(node.value))))
        elif node.tag == "tag:yaml.org,2002:timestamp" and (match := _DATE_VALUE.match(str(node.value))):
            try:
                dt.date(*(int(x) for x in match.groups()[:3]))
                hour, minute, second = (int(x or 0) for x in match.groups()[3:])
                dt.time(hour, minute, second)  # T25:61:00 does not exist
            except ValueError:
                line = node.start_mark.line + 2 if node.start_mark is not None else None
                return line, ".".join(str(part) for part in loc) or None
    return None, None


def _nesting_too_deep(text: str) -> bool:
    """Whether flow collections (``[[[...`` or ``{{{...``) nest past ``MAX_YAML_DEPTH``, found by one scan of
    the text before the YAML parser, which would recurse once per level, is asked to."""
    depth, quote = 0, ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "[{":
            depth += 1
            if depth > MAX_YAML_DEPTH:
                return True
        elif char in "]}":
            depth = max(0, depth - 1)
    return False


def _compose(text: str, path: Path) -> tuple[Node | None, Any]:
    """The frontmatter's YAML composed into nodes, checked (expansion, depth, number sizes) and built into
    round-trip data; raises ``NoteError``."""
    # Round-trip mode keeps line/column info (.lc) for error messages and never builds arbitrary
    # Python objects (unknown tags come back as TaggedScalar etc.).
    yaml = YAML(typ="rt")
    if _nesting_too_deep(text):
        raise NoteError(
            path,
            f"the YAML nests more than {MAX_YAML_DEPTH} levels deep; a note's frontmatter is "
            "flat 'key: value' lines with a few nested lists",
        )
    try:
        root = yaml.compose(text)
        _check_expansion(root, path)
        # Built from the nodes just checked: parsing the text a second time would double the cost of a long
        # note.
        return root, (yaml.constructor.construct_document(root) if root is not None else None)
    except RecursionError:
        raise NoteError(
            path,
            f"the YAML nests more than {MAX_YAML_DEPTH} levels deep; a note's frontmatter is "
            "flat 'key: value' lines with a few nested lists",
        ) from None
    except ValueError as exc:  # values YAML parses but Python cannot hold, e.g. the date 2026-02-30
        line, field = _impossible_date(text)
        raise NoteError(
            path,
            f"invalid value: {exc} (a date and time must exist, e.g. 2026-02-28T23:59:00; put "
            "it in quotes to keep it as text)",
            line=line,
            field=field,
        ) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        # +2: the mark is 0-based inside the frontmatter, and line 1 of the file is the '---' fence.
        line = mark.line + 2 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        raise NoteError(
            path, f"malformed YAML: {problem} (expected valid YAML 'key: value' lines)", line=line
        ) from None
    except YAMLError as exc:
        raise NoteError(path, f"malformed YAML: {exc}") from None


@dataclass(frozen=True, eq=False)
class ParsedYaml:
    """A frontmatter parsed once: its composed nodes (where each value sits in ``text``, for byte-minimal
    edits) and the round-trip data built from them. Shared by every reader of the same text (``parse_yaml``):
    read it, never modify it (``plain_data`` makes a copy to change)."""

    text: str
    root: Node | None
    data: Any


class _ParseCache:
    """Parses kept by text, least recently used dropped first, bounded by the text they hold."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self._kept: OrderedDict[tuple[str, int, int, int], ParsedYaml] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()  # the app's sessions read notes from several threads

    def get(self, key: tuple[str, int, int, int]) -> ParsedYaml | None:
        with self._lock:
            hit = self._kept.get(key)
            if hit is not None:
                self._kept.move_to_end(key)
            return hit

    def put(self, key: tuple[str, int, int, int], parsed: ParsedYaml) -> None:
        if len(key[0]) > self.max_chars // 8:
            return  # one long note must not push out every other
        with self._lock:
            if key not in self._kept:
                self._kept[key] = parsed
                self._chars += len(key[0])
            while self._chars > self.max_chars:
                self._chars -= len(self._kept.popitem(last=False)[0][0])

    def forget(self, key: tuple[str, int, int, int]) -> None:
        with self._lock:
            if self._kept.pop(key, None) is not None:
                self._chars -= len(key[0])


# Parsing the frontmatter is nearly all the cost of reading a note (ruamel's parser is pure Python), and one
# edit reads the same text several times: the command's own read, the re-read under the note's lock, the
# field-name check, the edit, the index reading the result back. Kept by text (and the limits the checks
# apply), a parse is made once for all of them: a hit is the same parse by construction. Only successes are
# kept. Bounded by text, since the nodes take ~80 times the text's memory: 2M characters, ~160 MB at most.
PARSE_CACHE = _ParseCache(max_chars=2_000_000)


def parse_yaml(text: str, path: Path) -> ParsedYaml:
    """The frontmatter ``text`` parsed and checked as ``load_yaml`` does, shared with every other reader of
    the same text in this process (read-only: see ``ParsedYaml``); raises ``NoteError`` naming ``path``."""
    key = _parse_key(text)
    parsed = PARSE_CACHE.get(key)
    if parsed is None:
        parsed = ParsedYaml(text, *_compose(text, path))
        PARSE_CACHE.put(key, parsed)
    return parsed


def forget_yaml(text: str) -> None:
    """Drop the parse of a frontmatter an edit has replaced (the file no longer holds it), so a bulk edit
    (the first export keying every note) keeps the parses the index reads back next, not the old ones."""
    PARSE_CACHE.forget(_parse_key(text))


def _parse_key(text: str) -> tuple[str, int, int, int]:
    """What a parse depends on: the text, and the limits its checks apply."""
    return text, MAX_YAML_VALUES, MAX_YAML_DEPTH, sys.get_int_max_str_digits()


def load_yaml(text: str, path: Path) -> Any:
    """The frontmatter ``text`` as round-trip data of the caller's own (a fresh parse, free to modify);
    raises ``NoteError`` naming ``path``."""
    return _compose(text, path)[1]


def plain_data(value: Any) -> Any:
    """ruamel round-trip objects -> plain Python, so pydantic and comparisons see ordinary types."""
    if isinstance(value, dict):
        return {str(k): plain_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_data(v) for v in value]
    if isinstance(value, TaggedScalar):
        return value.value
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return value


def _line_of(data: Any, loc: tuple[Any, ...]) -> int | None:
    """Best-effort 1-based file line of a field path, from ruamel's line info."""
    line: int | None = None
    node = data
    for part in loc:
        try:
            if isinstance(node, CommentedMap):
                key = part if part in node else str(part)
                line = node.lc.key(key)[0] + 2
                node = node[key]
            elif isinstance(node, CommentedSeq) and isinstance(part, int):
                line = node.lc.item(part)[0] + 2
                node = node[part]
            else:
                break
        except (KeyError, IndexError, TypeError, AttributeError):
            break
    return line


def field_line(note: Note, *loc: str | int) -> int | None:
    """1-based file line of a frontmatter field of a parsed note, e.g. ``field_line(note, "source_file")``."""
    return _line_of(parse_yaml(note.frontmatter_text, note.path).data, loc)


def _expected(field: str) -> str:
    """The schema's description of a top-level field, as the 'what is expected' hint."""
    info = PaperNote.model_fields.get(field)
    if info is not None and info.description:
        return f" (expected: {info.description})"
    return ""


def _check_claim_ids(data: Any, path: Path) -> None:
    # Checked here rather than left to the model validator so the error points at the duplicate's line.
    claims = data.get("claims") if isinstance(data, dict) else None
    if not isinstance(claims, list):
        return
    seen: dict[str, int] = {}
    for i, claim in enumerate(claims):
        if not isinstance(claim, dict) or not isinstance(claim.get("id"), str):
            continue
        cid = str(claim["id"])
        if cid in seen:
            raise NoteError(
                path,
                f"duplicate claim id {cid!r} (first used by claims.{seen[cid]}); "
                "expected claim ids unique within a note",
                line=_line_of(data, ("claims", i, "id")),
                field=f"claims.{i}.id",
            )
        seen[cid] = i


def _unencodable_text(data: Any) -> tuple[Any, ...] | None:
    """The path of the first key or string that cannot be written as UTF-8 (lone surrogates), or None."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    while stack:
        loc, value = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return loc
        elif isinstance(value, dict):
            for key, child in value.items():
                if not str(key).isascii():
                    try:
                        str(key).encode("utf-8")
                    except UnicodeEncodeError:
                        return (*loc, key)
                stack.append(((*loc, key), child))
        elif isinstance(value, list):
            stack.extend(((*loc, i), child) for i, child in enumerate(value))
    return None


_PLAIN = (str, int, float, bool, type(None), dt.date)  # dt.datetime is a dt.date
_TAGGED: dict[type, str] = {bytes: "a !!binary value (bytes)", AbstractSet: "a !!set"}


def _not_plain_data(data: Any) -> tuple[tuple[Any, ...], str] | None:
    """The place and kind of the first value YAML tags made into something other than plain data (``!!binary``
    bytes, a ``!!set``), which the index cannot store as JSON nor a terminal show as text; None when all is
    plain."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    while stack:
        loc, value = stack.pop()
        if isinstance(value, dict):
            stack.extend(((*loc, key), child) for key, child in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend(((*loc, i), child) for i, child in reversed(list(enumerate(value))))
        elif not isinstance(value, _PLAIN):
            kind = next((name for base, name in _TAGGED.items() if isinstance(value, base)), None)
            return loc, kind or f"a YAML value of type {type(value).__name__}"
    return None


def _validate(data: Any, path: Path, limits: NoteLimits | None = None) -> PaperNote:
    if data is None:
        data = CommentedMap()  # empty frontmatter: let the schema name the missing fields
    if not isinstance(data, dict):
        raise NoteError(
            path,
            f"frontmatter is a YAML {type(plain_data(data)).__name__}, expected a mapping of 'key: "
            "value' lines",
            line=2,
        )
    _check_claim_ids(data, path)
    plain = plain_data(data)
    unencodable = _unencodable_text(plain)
    if unencodable is not None:
        name = ".".join(str(p) for p in unencodable)
        raise NoteError(
            path,
            "text that is not valid Unicode (a lone surrogate such as \\ud800, which no file "
            "or database can store); remove the escape",
            line=_line_of(data, unencodable),
            field=name,
        )
    odd = _not_plain_data(plain)
    if odd is not None:
        loc, what = odd
        raise NoteError(
            path,
            f"{what}: a note's frontmatter holds text, numbers, dates, true/false, lists and "
            "mappings, which kb can store and show; write the value as one of those",
            line=_line_of(data, loc),
            field=".".join(str(p) for p in loc) or None,
        )
    try:
        meta = PaperNote.model_validate(plain)
    except ValidationError as exc:
        errors = exc.errors()
        parts = []
        for err in errors:
            loc = tuple(err["loc"])
            name = ".".join(str(p) for p in loc)
            msg = err["msg"] + (_expected(str(loc[0])) if loc else "")
            parts.append((loc, name, msg))
        loc, name, msg = parts[0]
        if len(parts) > 1:
            msg += "; also " + "; ".join(f"field '{n}': {m}" if n else m for _, n, m in parts[1:])
        raise NoteError(path, msg, line=_line_of(data, loc) if loc else None, field=name or None) from None
    _check_bindings(meta, data, path, limits)
    return meta


def _check_bindings(meta: PaperNote, data: Any, path: Path, limits: NoteLimits | None) -> None:
    """Each claim's analyzer binding against the registry (``kb.notes.bindings``): the first problem,
    located."""
    from kb.notes.bindings import binding_problems

    for i, claim in enumerate(meta.claims):
        problems = binding_problems(claim, limits=limits)
        if problems:
            field, message = problems[0]
            loc = ("claims", i, *(int(p) if p.isdigit() else p for p in field.split(".")))
            if len(problems) > 1:
                message += "; also " + "; ".join(f"field 'claims.{i}.{f}': {m}" for f, m in problems[1:])
            raise NoteError(path, message, line=_line_of(data, loc), field=f"claims.{i}.{field}")


def parse_note(raw: bytes, path: Path, *, limits: NoteLimits | None = None) -> Note:
    """Parse and validate a note from its bytes; raises ``NoteError`` on any problem. ``limits``: what a note
    may ask of this machine (the operator's settings; default ``NoteLimits()``).

    Whatever goes wrong inside one note is a ``NoteError`` on that note, never another exception: one bad
    note must not stop a listing, an index or a demo of all the others.
    """
    path = Path(path)
    parts = split_note(raw, path)
    try:
        try:
            data = parse_yaml(parts.frontmatter, path).data
        except NoteError as exc:
            if exc.message.startswith("malformed YAML"):
                # The first '---' after the opening one closes the frontmatter. When the real closing line was
                # forgotten, that is a '---' rule in the body, and the YAML error is only a symptom: say so.
                closing = 2 + parts.frontmatter.count("\n")
                exc.message += (f"; the frontmatter was read up to the '---' on line {closing}: if it ends "
                                "earlier, add the missing closing '---' line there")
            raise
        meta = _validate(data, path, limits)
    except NoteError:
        raise
    except RecursionError:
        raise NoteError(path, "the frontmatter nests too deeply to read") from None
    except Exception as exc:  # noqa: BLE001 - isolation: any failure is this note's problem, with its reason
        raise NoteError(path, f"cannot read the frontmatter: {type(exc).__name__}: {exc}") from None
    return Note(path=path, raw=raw, meta=meta, body=parts.body, frontmatter_text=parts.frontmatter)


def read_note(path: Path, *, max_bytes: int = 5_000_000, limits: NoteLimits | None = None) -> Note:
    """Read and validate one note file; refuses files larger than ``max_bytes``."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise NoteError(
                path, f"file is {size} bytes, over the limit of {max_bytes} bytes (max_note_bytes)"
            )
        with path.open("rb") as fh:
            opened = os.fstat(fh.fileno())
            raw = fh.read(max_bytes + 1)  # +1: catches a file that grew after stat
    except OSError as exc:
        raise NoteError(path, f"cannot read file: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise NoteError(path, f"file is over the limit of {max_bytes} bytes (max_note_bytes)")
    return replace(parse_note(raw, path, limits=limits), inode=(opened.st_dev, opened.st_ino))


# --------------------------------------------------------------------------------------------------
# Writing


def save_note(note: Note, *, base: bytes | None = None, inode: tuple[int, int] | None = None) -> None:
    """Write ``note.raw`` to ``note.path`` atomically (the bytes are written exactly as they are).

    ``base``: the bytes the edit was computed from, read under the note's lock (``kb.notes.locks``). The write
    is refused when the file no longer holds them (a program that ignores kb's lock, such as a text editor,
    saved it meanwhile), and the file is read back afterwards, so success is never reported for bytes that
    did not land. ``inode``: the file they were read from (``Note.inode``); the write replaces that very
    file or nothing (``replace_unmoved``), so a note renamed or moved meanwhile (a save-as, ``git mv``, a
    sync client) is refused rather than written as a second copy under its old name.
    """
    if base is not None and _current_bytes(note.path) != base:
        raise NoteChanged(note.path, "changed on disk while this edit was being made (by a program that does "
                          "not take kb's note lock): nothing was written; apply the change again")
    if inode is not None:
        if not replace_unmoved(note.path, note.raw, inode):
            raise NoteChanged(note.path, "the note was moved, removed or replaced while this edit was being "
                              "made: nothing was written; find the note again (kb list) and apply the change")
        return  # the swap itself checked that it replaced the file read: reading back could see a later move
    atomic_write_bytes(note.path, note.raw)
    if base is not None and _current_bytes(note.path) != note.raw:
        raise NoteChanged(note.path, "the edit did not land: another program wrote the note at the same "
                          "moment; check the note and apply the change again")


def _current_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


# Chinese, Japanese and Korean letters (Han with extension A and compatibility ideographs, kana, Hangul):
# written without spaces between words, so file names keep them and search indexes them by character pairs.
CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_CHAR = re.compile(f"[{CJK_CLASS}]")


def slugify(title: str) -> str:
    """A safe file-name slug of ``title``: lower-case ASCII letters and digits (accents dropped) and CJK
    characters as written (a Chinese title stays readable), dashes between, at most 80 chars, never empty."""
    kept = []
    for char in unicodedata.normalize("NFKC", title):
        if _CJK_CHAR.match(char):
            kept.append(char)
        else:
            kept.append(
                unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode("ascii").lower() or "-"
            )
    slug = re.sub(f"[^a-z0-9{CJK_CLASS}]+", "-", "".join(kept)).strip("-")
    if len(slug) > 80:
        # Cut at a word boundary when there is one, so names stay readable.
        cut = slug[:80]
        slug = (cut.rsplit("-", 1)[0] if "-" in cut[40:] else cut).strip("-")
    return slug or "note"


def render_new_note(meta: dict[str, Any], body: str) -> bytes:
    """Bytes of a brand-new note in the seed's style (double-quoted strings, 2-space indents)."""
    fm = dump_yaml(dict(meta), quote=True) if meta else ""
    if body and not body.startswith("\n"):
        body = "\n" + body  # the seed leaves a blank line after the closing fence
    if body and not body.endswith("\n"):
        body += "\n"
    return f"---\n{fm}---\n{body}".encode()


def create_note(papers_dir: Path, meta: dict[str, Any], body: str, *, max_bytes: int = 5_000_000,
                limits: NoteLimits | None = None, check: Callable[[Note], None] | None = None) -> Note:
    """Validate ``meta``, then write a new note named after its title; never overwrites a file.

    The bytes about to be written are checked as ``read_note`` will read them (size, then parse), so a
    note kb writes is always one kb reads. ``check`` sees the parsed note (at ``new-note.md`` in the
    folder) before anything is written and refuses it by raising ``NoteError``.
    """
    papers_dir = Path(papers_dir)
    probe_path = papers_dir / "new-note.md"
    try:
        raw = render_new_note(meta, body)
    except UnicodeEncodeError:
        raise NoteError(probe_path, "text that is not valid Unicode (a lone surrogate such as \\ud800); "
                        "remove it") from None
    if len(raw) > max_bytes:
        raise NoteError(probe_path, f"the note would be {len(raw):,} bytes, over the limit of {max_bytes:,} "
                        "bytes (max_note_bytes) that kb reads; shorten its longest fields")
    probe = parse_note(raw, probe_path, limits=limits)  # validate before anything touches the disk
    if check is not None:
        check(probe)
    target = write_unique(papers_dir, slugify(probe.meta.title), ".md", raw)
    return replace(probe, path=target)  # the same bytes: no second parse of a long note


def import_note(src: Path, papers_dir: Path) -> Note:
    """Validate ``src`` and copy its bytes unchanged into ``papers_dir``; never overwrites a file."""
    note = read_note(Path(src))
    target = write_unique(Path(papers_dir), Path(src).stem, Path(src).suffix or ".md", note.raw)
    return parse_note(note.raw, target)


# --------------------------------------------------------------------------------------------------
# Rendering YAML in the user's layout


def _prepare(value: Any, quote: bool) -> Any:
    """Plain Python / pydantic values -> ruamel objects, double-quoting strings when the file does.

    Strings that already carry a style (ruamel's ``ScalarString``s, e.g. kept from the old text of an
    edited item) keep it.
    """
    if isinstance(value, ScalarString):
        return value
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", exclude_unset=True)
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, dict):
        out = CommentedMap()
        for k, v in value.items():
            out[str(k)] = _prepare(v, quote)
        return out
    if isinstance(value, list | tuple):
        return CommentedSeq(_prepare(v, quote) for v in value)
    if isinstance(value, str):
        return DoubleQuotedScalarString(value) if quote else str(value)
    if isinstance(value, dt.date) and quote:
        return DoubleQuotedScalarString(value.isoformat())
    return value


def dump_yaml(mapping: dict[str, Any], *, quote: bool) -> str:
    yaml = YAML(typ="rt")
    # The seed's layout: mappings indented 2, sequence items '  - ' (offset 2).
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096  # never fold long titles or quotes across lines
    yaml.allow_unicode = True
    yaml.default_flow_style = False
    # ruamel writes None as an empty value; the seed spells it 'null'.
    yaml.representer.add_representer(
        type(None), lambda rep, _: rep.represent_scalar("tag:yaml.org,2002:null", "null")
    )
    stream = StringIO()
    yaml.dump(_prepare(mapping, quote), stream)
    return stream.getvalue()


# --------------------------------------------------------------------------------------------------
# Finding and checking many notes


def validate_paths(paths: list[Path], *, max_bytes: int = 5_000_000) -> tuple[list[Note], list[NoteError]]:
    """Read and validate files and folders of notes; also reports paper_ids used by two files.

    The duplicate is reported on the later file (in sorted order), naming the earlier one.
    """
    files: list[Path] = []
    seen_files: set[Path] = set()
    for p in paths:
        p = Path(p)
        for f in find_notes(p) if p.is_dir() else [p]:
            key = f.resolve()
            if key not in seen_files:
                seen_files.add(key)
                files.append(f)
    notes: list[Note] = []
    errors: list[NoteError] = []
    by_id: dict[str, Path] = {}
    for f in files:
        try:
            note = read_note(f, max_bytes=max_bytes)
        except NoteError as exc:
            errors.append(exc)
            continue
        pid = note.meta.paper_id
        if pid in by_id:
            parts = split_note(note.raw, f)
            line = _line_of(parse_yaml(parts.frontmatter, f).data, ("paper_id",))
            errors.append(
                NoteError(
                    f,
                    f"duplicate paper_id {pid!r}: already used by {by_id[pid]}; expected one note per paper",
                    line=line,
                    field="paper_id",
                )
            )
            continue
        by_id[pid] = f
        notes.append(note)
    return notes, errors
