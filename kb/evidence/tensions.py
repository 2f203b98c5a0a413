"""Claims of different notes that cannot all hold, and what kb's evidence makes of them.

The one home of three rules every surface (``kb tensions``, ``kb show``, ``kb verify --tension``, the app's
Tensions and Note pages, the agents) asks:

**What a claim is about** (``about``): its quantity (``analyzer:metric`` from its binding, or the named
``quantity`` an unbound claim gives, with an optional unit), its subject (model family, objective, size, data)
and its condition (the scale preset that settles it, the budget it holds at). Fields a note leaves out default
from the binding and the claim's ``scale`` (``schemas.claim`` documents each), so most claims need no edit.

**Comparable** (``incomparable_reason`` is None): the same quantity (and unit, where both state one); every
subject field that both claims state agrees (text compared without case or extra spaces, sizes within a factor
of ``SIZE_FACTOR``); and their conditions overlap (the same preset where both name one, budgets whose ranges
intersect). A field only one claim states constrains nothing: the other claim is about every value of it.

**Tension** (``find``): two comparable claims of different notes such that

- their expectations cannot both hold: the values each accepts (``kb.evidence.verdicts.accepted``: an interval
  with open or closed ends, or one exact value) do not intersect (disjoint ranges, opposite directions, ``==``
  on different values): kind ``expectations``; or
- one current evidence record of either claim supports one and refutes the other, each judged by
  ``kb.evidence.verdicts.evaluate`` on that record's results: kind ``evidence``.

A tension's id is ``t-`` and 10 hex digits of the SHA-256 of its two claim keys in sorted order (claim A is
the first): stable while the keys are, whatever else the notes change.

**State** (``judge``): the deciding evidence is the newest current evidence of either claim at the settling
preset (``settle_plan``: the preset both claims name, or the one the bolder claim, the one accepting fewer
values, needs); evidence at any other preset decides nothing ("open: no evidence at 'paper'"), and only where
neither claim names a preset does the newest evidence at any scale decide. Both claims are judged on it by
``kb.evidence.verdicts.evaluate`` (never a second verdict rule): supported / refuted reads "settled for A",
refuted / supported "settled for B", refuted / refuted "both wrong", anything else "open: " and why (a proxy,
an interval straddling a threshold, a run not runnable here, no evidence yet).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property, lru_cache
from typing import Any

from sqlalchemy import select as sa_select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from kb.evidence.claim_states import (
    ClaimStatus,
    claim_state,
    group_results,
    label,
    latest_evidence,
    stale_reason,
    verdict_state,
)
from kb.evidence.subjects import About, about, subject_difference
from kb.evidence.verdicts import (
    Accepted,
    SeedValue,
    accepted,
    describe,
    evaluate,
    value_across_seeds,
    verdict_inputs,
)
from kb.index.database import ClaimRow, Evidence
from schemas import Claim, EvidenceScale, Verdict, VerdictKind


def _norm(text: str | None) -> str | None:
    # NFKC first: a fullwidth or other look-alike spelling of a quantity ('ｄｅｐｔｈ') is the same quantity.
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split()) if text is not None else None


#: How a reason names each field that two claims state differently ('different families (ESM-2 / ProGen2)').
_PLURALS = {"unit": "units", "family": "families", "objective": "objectives", "data": "data",
            "preset": "scale presets"}


def incomparable_reason(a: About, b: About) -> str | None:
    """Why two claims cannot be compared (the module's rule), or None when they can."""
    if a.quantity is None or b.quantity is None:
        return "a claim without a quantity (no analyzer metric, no named quantity) compares with nothing"
    if _norm(a.quantity) != _norm(b.quantity):
        return f"different quantities ({a.quantity} / {b.quantity})"
    for name in ("unit", "family", "objective", "data", "preset"):
        mine, theirs = getattr(a, name), getattr(b, name)
        if mine is not None and theirs is not None and _norm(mine) != _norm(theirs):
            what = _PLURALS[name]
            return f"different {what} ({mine} / {theirs})"
    different = subject_difference(a, b)
    if different is not None:
        return different
    if (
        a.budget is not None
        and b.budget is not None
        and (a.budget[1] < b.budget[0] or b.budget[1] < a.budget[0])
    ):
        return f"budgets that do not overlap ({_range(a.budget)} / {_range(b.budget)})"
    return None


def comparable(a: Claim, b: Claim) -> bool:
    """Whether two claims are about the same quantity of the same subject under overlapping conditions."""
    return incomparable_reason(about(a), about(b)) is None


def _range(values: tuple[float, float]) -> str:
    return f"{values[0]:.3g}" if values[0] == values[1] else f"[{values[0]:.3g}, {values[1]:.3g}]"


# -- claims as the index holds them -------------------------------------------------------------------------

@dataclass(frozen=True)
class ClaimRef:
    """One indexed claim with what it is about and the values its expectation accepts (None: it states
    none)."""

    key: str
    note_id: str
    claim: Claim
    about: About
    accepts: Accepted | None
    binding_hash: str | None = None

    @property
    def expects(self) -> str:
        """The expectation written out ('best_depth in [24, 36]'), or '' for a claim that states none."""
        return describe(self.claim.expect) if self.claim.expect is not None else ""

    @cached_property
    def verdict_inputs(self) -> tuple[str, float | None, str | None]:
        """What ``evaluate`` decides this claim's verdict kind on
        (``kb.evidence.verdicts.verdict_inputs``)."""
        return verdict_inputs(self.claim)

    @cached_property
    def width(self) -> float:
        """How many values the claim accepts (``Accepted.width``; infinite when it states no expectation):
        of a tension's two claims, the narrower is the bolder (``settle_plan``)."""
        return self.accepts.width() if self.accepts is not None else math.inf


def indexed_claims(engine: Engine) -> list[ClaimRef]:
    """Every indexed claim that names a quantity (its binding's metric, or a named one), in key order."""
    with Session(engine) as session:
        rows = session.execute(sa_select(col(ClaimRow.key), col(ClaimRow.paper_id), col(ClaimRow.claim_json),
                                         col(ClaimRow.binding_hash)).order_by(col(ClaimRow.key))).all()
    refs = []
    for key, note_id, text, binding in rows:
        claim, found, accepts = _parsed(text)
        if found.quantity is not None:
            refs.append(ClaimRef(key, note_id, claim, found, accepts, binding))
    return refs


@lru_cache(maxsize=200_000)
def _parsed(claim_json: str) -> tuple[Claim, About, Accepted | None]:
    """A claim as the index stores it, with what it is about and accepts: kept by its JSON between listings
    (the app lists on every render), so only claims that changed are parsed again. Callers must not mutate
    them."""
    claim = Claim.model_validate_json(claim_json)
    return claim, _interned(about(claim)), accepted(claim.expect) if claim.expect is not None else None


@lru_cache(maxsize=200_000)
def _interned(found: About) -> About:
    """The first ``About`` equal to ``found``: claims about the same subject share one object, so ``find``
    remembers whether two subjects compare by identity (``_Comparable``)."""
    return found


# -- evidence ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Deciding:
    """One current evidence record (one result per seed) that both claims of a tension are judged on."""

    claim_key: str  # the claim whose run made it
    run_id: str
    evidence_id: int
    results: list[dict[str, Any]]
    scale: EvidenceScale | None
    verdict: Verdict | None  # as stored for its own claim

    @property
    def preset(self) -> str | None:
        """The scale preset the evidence ran at, when known."""
        return self.scale.name if self.scale is not None else None


def current_evidence(engine: Engine, refs: Iterable[ClaimRef]) -> dict[str, tuple[Deciding, ClaimStatus]]:
    """The latest evidence of each claim that has current (not stale) evidence, with the claim's state."""
    by_key = {ref.key: ref for ref in refs}
    if not by_key:
        return {}
    with Session(engine) as session:
        latest = latest_evidence(session, list(by_key), with_verdict=True)
        current = {key: row for key, row in latest.items()
                   if stale_reason(row, by_key[key].binding_hash) is None and row.verdict_json}
        rows = session.execute(
            sa_select(
                col(Evidence.run_id), col(Evidence.id), col(Evidence.metrics_json), col(Evidence.group_id)
            ).where(col(Evidence.run_id).in_([row.run_id for row in current.values()]))
        ).all()
    stored = {run_id: (ident, metrics, group) for run_id, ident, metrics, group in rows}
    found = {}
    for key, row in current.items():
        ident, metrics, group = stored[row.run_id]
        results = group_results(engine, group)[0] if group else [json.loads(metrics)]
        verdict = Verdict.model_validate_json(row.verdict_json or "{}")
        status = claim_state(
            row, bound=by_key[key].claim.analyzer is not None, binding_hash=by_key[key].binding_hash
        )
        found[key] = (Deciding(key, row.run_id, int(ident), [r for r in results if r], verdict.evidence_scale,
                               verdict), status)
    return found


# -- tensions ------------------------------------------------------------------------------------------------

class Outcome(StrEnum):
    """How a tension stands (the module's state rule)."""

    settled_a = "settled_a"
    settled_b = "settled_b"
    both_wrong = "both_wrong"
    open = "open"


#: How every surface writes an outcome ("open" is followed by its reason).
OUTCOME_LABELS = {"settled_a": "settled for A", "settled_b": "settled for B", "both_wrong": "both wrong",
                  "open": "open"}


@dataclass(frozen=True, slots=True)  # slots: one object each, not two (see ``Tension``)
class TensionState:
    """A tension's outcome, in words, with the evidence that decided it and both verdicts on it."""

    outcome: Outcome
    text: str  # 'settled for A', 'both wrong', 'open: why'
    deciding: Deciding | None = None
    verdicts: tuple[Verdict, Verdict] | None = None


#: The state of a tension not judged yet (``find`` judges every tension it returns).
UNJUDGED = TensionState(Outcome.open, "open: not judged yet")


@dataclass(frozen=True, slots=True)
class SettlePlan:
    """What ``kb verify --tension`` queues: the claim whose binding runs, at which preset (or why nothing)."""

    claim_key: str | None
    preset: str | None
    why_not: str | None = None


#: Slots (no ``__dict__`` beside each object): a large library lists tens of thousands of tensions, and every
#: object the collector tracks made its full collections, over every object of the process, a third of the
#: listing's time.
@dataclass(slots=True)
class Tension:
    """Two comparable claims of different notes that cannot both hold (``kind``), and how the evidence
    stands."""

    id: str
    kind: str  # 'expectations' (no value satisfies both) or 'evidence' (one record splits them)
    a: ClaimRef
    b: ClaimRef
    split_by: str | None = None  # kind 'evidence': the run whose evidence splits the claims
    state: TensionState = UNJUDGED
    # each side's claim state (kb.evidence.claim_states)
    statuses: dict[str, ClaimStatus] = field(default_factory=dict)
    evidence: dict[str, Deciding] = field(default_factory=dict)  # each side's latest current evidence

    @property
    def quantity(self) -> str:
        """The quantity both claims are about."""
        return self.a.about.quantity or ""

    @property
    def why(self) -> str:
        """Why the two claims cannot both hold, in one line (written when shown: thousands are listed)."""
        if self.kind == "evidence":
            return f"the evidence of run {self.split_by} supports one claim and refutes the other"
        accepts_a = self.a.accepts.text() if self.a.accepts else "?"
        accepts_b = self.b.accepts.text() if self.b.accepts else "?"
        return f"A accepts {accepts_a}, B accepts {accepts_b}: no value satisfies both"

    def side(self, key: str) -> str:
        """'A' or 'B' for one of the tension's claim keys."""
        return "A" if key == self.a.key else "B"


def tension_id(key_a: str, key_b: str) -> str:
    """The stable id of the tension between two claims (order does not matter): the whole SHA-256, since a
    shortened one (40 bits) let a note be written whose tension collides with another's and hides it."""
    first, second = (key_a, key_b) if key_a <= key_b else (key_b, key_a)
    return "t-" + hashlib.sha256(f"{first}|{second}".encode()).hexdigest()


def _pair(x: ClaimRef, y: ClaimRef) -> tuple[ClaimRef, ClaimRef]:
    return (x, y) if x.key < y.key else (y, x)


#: Pairs of claims ``find`` examines in all before it stops (the setting ``max_tension_pairs``).
DEFAULT_MAX_PAIRS = 200_000


class Tensions(list["Tension"]):
    """The tensions found, and the quantities whose pairs were not all examined (the cap was reached)."""

    capped: list[str]
    max_pairs: int

    def message(self) -> str | None:
        """One line saying the listing is incomplete and why, or None when every pair was examined."""
        if not self.capped:
            return None
        return (
            f"stopped after examining {self.max_pairs:,} pairs of claims (setting max_tension_pairs, "
            f"KB_MAX_TENSION_PAIRS): the tensions on {', '.join(sorted(self.capped)[:5])} may be incomplete"
        )


class _Budget:
    """How many more pairs of claims ``find`` may examine."""

    def __init__(self, pairs: int) -> None:
        self.left = pairs

    def take(self) -> bool:
        self.left -= 1
        return self.left >= 0


def _disjoint_pairs(group: list[ClaimRef], budget: _Budget) -> Iterator[tuple[ClaimRef, ClaimRef]]:
    """Pairs of claims of different notes in the group whose accepted values do not intersect:
    output-sensitive (a sort and a bisect per claim), so a quantity thousands of notes claim does not cost a
    comparison per pair; each pair examined counts against ``budget``, and the enumeration stops when it is
    spent."""
    yield from _disjoint_ranges(group, budget)
    if budget.left >= 0:  # not spent on the ranges
        yield from _distinct_values(group, budget)


def _disjoint_ranges(group: list[ClaimRef], budget: _Budget) -> Iterator[tuple[ClaimRef, ClaimRef]]:
    """``_disjoint_pairs`` among the claims accepting a numeric range: the pairs whose ranges do not meet."""
    numeric = sorted((r for r in group if r.accepts is not None and r.accepts.value is None),
                     key=lambda r: r.accepts.low if r.accepts is not None else 0.0)
    lows = [r.accepts.low for r in numeric if r.accepts is not None]
    for ref in numeric:
        assert ref.accepts is not None
        # Only claims starting at or above this one's upper end can lie entirely above it.
        for other in numeric[bisect.bisect_left(lows, ref.accepts.high):]:
            if other.note_id == ref.note_id:
                continue
            if not budget.take():
                return
            if other is not ref and other.accepts is not None and not ref.accepts.intersects(other.accepts):
                yield ref, other


def _distinct_values(group: list[ClaimRef], budget: _Budget) -> Iterator[tuple[ClaimRef, ClaimRef]]:
    """``_disjoint_pairs`` among the claims accepting one exact value: the pairs of different values of one
    type."""
    exact = _by_exact_value(group)
    values = sorted(exact, key=str)
    for i, first in enumerate(values):
        for second in values[i + 1:]:
            if first[0] != second[0]:  # text against true/false cannot be told apart: no tension
                continue
            for x in exact[first]:
                for y in exact[second]:
                    if x.note_id == y.note_id:
                        continue
                    if not budget.take():
                        return
                    yield x, y


def _by_exact_value(group: list[ClaimRef]) -> dict[Any, list[ClaimRef]]:
    """The claims accepting one exact value, by (type name, value)."""
    exact: dict[Any, list[ClaimRef]] = defaultdict(list)
    for ref in group:
        if ref.accepts is not None and ref.accepts.value is not None:
            exact[(type(ref.accepts.value).__name__, ref.accepts.value)].append(ref)
    return exact


def _groups(refs: list[ClaimRef]) -> dict[str, list[ClaimRef]]:
    groups: dict[str, list[ClaimRef]] = defaultdict(list)
    for ref in refs:
        groups[_norm(ref.about.quantity) or ""].append(ref)
    return {q: members for q, members in groups.items() if len({m.note_id for m in members}) > 1}


class _Comparable:
    """Whether two claims compare (``incomparable_reason`` is None), asked once per pair of subjects in one
    listing: tens of thousands of pairs share a few hundred subjects (``_interned``), and the rule, which
    reads sizes and the structures a data description names, was most of the listing's time. Keyed by the
    subjects' identity, which the claims hold for as long as the listing lasts."""

    def __init__(self) -> None:
        self.known: dict[tuple[int, int], bool] = {}

    def __call__(self, x: ClaimRef, y: ClaimRef) -> bool:
        key = (id(x.about), id(y.about))
        found = self.known.get(key)
        if found is None:
            found = self.known[key] = incomparable_reason(x.about, y.about) is None
        return found


_Inputs = tuple[str, float | None, str | None]  # kb.evidence.verdicts.verdict_inputs


class _KindsOn:
    """The verdict kind of each claim judged on one evidence record (``evaluate``), each distinct
    ``verdict_inputs`` judged once: one record splitting a thousand claims that share an expectation is one
    evaluation, not a thousand (what made the Tensions page of a large library take seconds)."""

    def __init__(self, deciding: Deciding) -> None:
        self.deciding = deciding
        self.known: dict[_Inputs, VerdictKind] = {}

    def __call__(self, ref: ClaimRef) -> VerdictKind:
        inputs = ref.verdict_inputs
        kind = self.known.get(inputs)
        if kind is None:
            kind = self.known[inputs] = evaluate(ref.claim, self.deciding.results, self.deciding.scale).kind
        return kind


#: The verdict kind that splits a claim from one supported (refuted) on the same record.
_OPPOSITE = {VerdictKind.supported: VerdictKind.refuted, VerdictKind.refuted: VerdictKind.supported}


class _Pool:
    """The claims one evidence record may split from its own claim (those stating an expectation), grouped by
    ``verdict_inputs`` (claims of one group get one verdict kind on any record), with how many each note has:
    what ``_split_by_evidence`` needs to count a claim's pairs and visit only the ones its record splits."""

    def __init__(self, refs: list[ClaimRef]) -> None:
        self.refs = refs
        self.classes: dict[_Inputs, list[ClaimRef]] = defaultdict(list)
        self.per_note: Counter[str] = Counter()
        for ref in refs:
            if ref.claim.expect is not None:
                self.classes[ref.verdict_inputs].append(ref)
                self.per_note[ref.note_id] += 1
        self.with_expect = sum(self.per_note.values())

    def pairs_of(self, x: ClaimRef) -> int:
        """How many pairs ``x`` makes with the pool's claims of other notes (each counts against the
        budget)."""
        return self.with_expect - self.per_note[x.note_id]


def _split_by_evidence(x: ClaimRef, deciding: Deciding, pool: _Pool, budget: _Budget,
                       found: dict[str, Tension], comparable: _Comparable) -> None:
    """Add to ``found`` each claim of ``pool`` (of another note, comparable) that ``x``'s evidence judges the
    other way: one supported, the other refuted. Each of ``x``'s pairs counts against ``budget``; the verdict
    kinds come from ``_KindsOn`` (an evaluation per distinct expectation, not per pair). When the budget
    covers all of them, they are counted at once and only the groups of the opposite kind are visited; when it
    runs out among them, they are examined one by one in order, so the cap stops at the same pair either
    way."""
    if not deciding.results:
        return
    kinds = _KindsOn(deciding)
    opposite = _OPPOSITE.get(kinds(x))
    if opposite is None:  # neither supported nor refuted: no claim can be split from it, none is examined
        return
    if budget.left < pool.pairs_of(x):
        candidates = _one_by_one(x, pool, budget, kinds, opposite)
    else:
        budget.left -= pool.pairs_of(x)
        candidates = [y for members in pool.classes.values() if kinds(members[0]) is opposite for y in members
                      if y.note_id != x.note_id]
    for y in candidates:
        if not comparable(x, y):
            continue
        ident = tension_id(x.key, y.key)
        if ident not in found:
            a, b = _pair(x, y)
            found[ident] = Tension(ident, "evidence", a, b, split_by=f"{deciding.run_id[:12]} ({x.key})")


def _one_by_one(x: ClaimRef, pool: _Pool, budget: _Budget, kinds: _KindsOn,
                opposite: VerdictKind) -> list[ClaimRef]:
    """The claims of ``pool`` that ``x``'s record judges ``opposite``, among the pairs the budget still covers
    (in the pool's order, the order the cap has always counted them in)."""
    split = []
    for y in pool.refs:
        if y.note_id == x.note_id or y.claim.expect is None:
            continue
        if not budget.take():
            break
        if kinds(y) is opposite:
            split.append(y)
    return split


def find(engine: Engine, refs: list[ClaimRef] | None = None, *, max_pairs: int = DEFAULT_MAX_PAIRS,
         involving: Collection[str] | None = None) -> Tensions:
    """Every tension among the indexed claims (or ``refs``), each with its state, ordered by quantity and id.

    Only pairs of claims of different notes are examined, at most ``max_pairs`` of them in all: one note of
    thousands of claims on one quantity costs nothing, and many notes at once stop at the cap, which the
    result names (``Tensions.message``). ``involving``: only the tensions of these claim keys (a note's page),
    pairs of two other claims not examined."""
    refs = indexed_claims(engine) if refs is None else refs
    groups = _groups(refs)
    in_groups = [ref for members in groups.values() for ref in members]
    evidence = current_evidence(engine, in_groups)
    found: dict[str, Tension] = {}
    budget = _Budget(max_pairs)
    comparable = _Comparable()
    capped: list[str] = []
    for quantity, members in groups.items():
        mine = members if involving is None else [m for m in members if m.key in involving]
        if not mine:
            continue
        _add_expectation_tensions(members, budget, comparable, involving, found)
        deciders = [m for m in members if m.key in evidence]
        if deciders:
            everyone = _Pool(members)
            own = everyone if involving is None else _Pool(mine)  # a note's page: only pairs with its claims
            for x in deciders:
                pool = everyone if involving is None or x.key in involving else own
                _split_by_evidence(x, evidence[x.key][0], pool, budget, found, comparable)
        if budget.left < 0:
            capped.append(quantity)
            break
    tensions = Tensions(sorted(found.values(), key=lambda t: (t.quantity, t.id)))
    tensions.capped, tensions.max_pairs = capped, max_pairs
    _add_states(tensions, evidence)
    return tensions


def _add_expectation_tensions(
    members: list[ClaimRef], budget: _Budget, comparable: _Comparable, involving: Collection[str] | None,
    found: dict[str, Tension],
) -> None:
    """Into ``found``: the tensions of expectations among one quantity's claims (comparable claims of two
    notes whose accepted values do not meet; with ``involving``, only those with one of its claims)."""
    for x, y in _disjoint_pairs(members, budget):
        if x.note_id == y.note_id or not comparable(x, y):
            continue
        if involving is not None and x.key not in involving and y.key not in involving:
            continue
        a, b = _pair(x, y)
        ident = tension_id(a.key, b.key)
        found[ident] = Tension(ident, "expectations", a, b)


def _add_states(tensions: Tensions, evidence: dict[str, tuple[Deciding, ClaimStatus]]) -> None:
    """Each tension's claims' current evidence and statuses, then its state from them."""
    evaluator = _EvaluatedOnce()
    for tension in tensions:
        for ref in (tension.a, tension.b):
            if ref.key in evidence:
                tension.evidence[ref.key], tension.statuses[ref.key] = evidence[ref.key]
        tension.state = state_of(tension, evaluator)


def get(engine: Engine, ident: str) -> Tension | None:
    """One tension by id, with its state (None: no such tension among the indexed claims now)."""
    return next((t for t in find(engine) if t.id == ident), None)


def settle_plan(tension: Tension) -> SettlePlan:
    """The runs that decide a tension: the shared binding at the preset both claims name, or at the preset the
    bolder claim (the one accepting the narrower range; A on a tie) needs, run for a claim bound to it."""
    a, b = tension.a, tension.b
    # What a stable sort by width gives (A on a tie, and when a width is NaN), without a sort per tension.
    ranked = (b, a) if b.width < a.width else (a, b)
    bound = [r for r in ranked if r.claim.analyzer is not None]
    if not bound:
        return SettlePlan(
            None, None, "neither claim is bound to an analyzer, so kb cannot measure the quantity"
        )
    runner = bound[0]
    preset = ranked[0].about.preset or ranked[1].about.preset
    return SettlePlan(runner.key, preset)


#: How a claim is judged on a deciding record: ``kb.evidence.verdicts.evaluate`` on its results and scale.
Evaluator = Callable[[Claim, Deciding], Verdict]


def evaluate_on(claim: Claim, deciding: Deciding) -> Verdict:
    """``claim``'s verdict on one deciding record (``kb.evidence.verdicts.evaluate``, the one rule)."""
    return evaluate(claim, deciding.results, deciding.scale)


class _EvaluatedOnce:
    """``evaluate_on`` remembered per claim and record for one listing: ``find`` judges every tension it
    returns, tens of thousands in a large library, whose claims and deciding records recur; each pair is
    evaluated once. The verdicts are shared between tensions, so they are read, never changed."""

    def __init__(self) -> None:
        # Keyed by identity; the claim and the record are kept in the value, so no id is reused while it
        # lives.
        self.known: dict[tuple[int, int], tuple[Claim, Deciding, Verdict]] = {}

    def __call__(self, claim: Claim, deciding: Deciding) -> Verdict:
        key = (id(claim), id(deciding))
        hit = self.known.get(key)
        if hit is None:
            hit = self.known[key] = (claim, deciding, evaluate_on(claim, deciding))
        return hit[2]


def judge(a: Claim, b: Claim, deciding: Deciding, evaluator: Evaluator = evaluate_on) -> TensionState:
    """The state one evidence record gives a tension: both claims judged on it by
    ``kb.evidence.verdicts.evaluate`` (through ``evaluator``: ``find`` remembers each claim's verdict on each
    record)."""
    if deciding.verdict is not None and deciding.verdict.kind is VerdictKind.not_runnable:
        return TensionState(
            Outcome.open, f"open: the deciding run is not runnable here ({deciding.verdict.reason})", deciding
        )
    if not deciding.results:
        return TensionState(Outcome.open, "open: the deciding evidence holds no results", deciding)
    va, vb = evaluator(a, deciding), evaluator(b, deciding)
    kinds = (va.kind, vb.kind)
    supported, refuted = VerdictKind.supported, VerdictKind.refuted
    if kinds == (supported, refuted):
        outcome, text = Outcome.settled_a, OUTCOME_LABELS["settled_a"]
    elif kinds == (refuted, supported):
        outcome, text = Outcome.settled_b, OUTCOME_LABELS["settled_b"]
    elif kinds == (refuted, refuted):
        outcome, text = Outcome.both_wrong, OUTCOME_LABELS["both_wrong"]
    elif kinds == (supported, supported):
        outcome, text = (
            Outcome.open,
            "open: the evidence supports both claims, so it does not decide between them",
        )
    else:
        side, verdict = ("A", va) if va.kind not in (supported, refuted) else ("B", vb)
        state = verdict_state(verdict)
        outcome, text = (
            Outcome.open,
            f"open: {side} reads {label(state.value if state else verdict.kind.value)} "
            f"on the deciding evidence ({verdict.reason})",
        )
    return TensionState(outcome, text, deciding, (va, vb))


@lru_cache(maxsize=64)
def _open_because(why_not: str) -> TensionState:
    """The state of every tension kb cannot settle for one reason (``SettlePlan.why_not``): one shared object,
    not one per tension (tens of thousands between unbound claims; frozen, so sharing it is safe)."""
    return TensionState(Outcome.open, f"open: {why_not}")


def state_of(tension: Tension, evaluator: Evaluator = evaluate_on) -> TensionState:
    """A tension's state from its claims' current evidence (the module's rule; ``evaluator`` as
    ``judge``'s)."""
    plan = settle_plan(tension)
    if plan.why_not is not None:
        return _open_because(plan.why_not)
    candidates = sorted(tension.evidence.values(), key=lambda d: d.evidence_id, reverse=True)
    where = f" at '{plan.preset}'" if plan.preset else ""
    if not candidates:
        return TensionState(Outcome.open, f"open: no current evidence yet{where}; run `kb verify --tension "
                                          f"{tension.id}`")
    at_preset = [d for d in candidates if plan.preset is None or d.preset == plan.preset]
    # A run that could not start here reports no scale of its own ('unknown'): it is the deciding run telling
    # why it cannot run, which the tension says, rather than evidence at some other preset.
    blocked = [d for d in candidates if d.preset in (None, "unknown") and d.verdict is not None
               and d.verdict.kind is VerdictKind.not_runnable]
    if not at_preset and blocked:
        return judge(tension.a.claim, tension.b.claim, blocked[0], evaluator)
    if not at_preset:  # evidence at another preset (a smoke run) never decides what the plan's preset settles
        elsewhere = ", ".join(sorted({repr(d.preset or "unknown") for d in candidates}))
        return TensionState(
            Outcome.open,
            f"open: no evidence{where} (only at {elsewhere}, which does not decide "
            f"it); run `kb verify --tension {tension.id}`",
        )
    return judge(tension.a.claim, tension.b.claim, at_preset[0], evaluator)


def by_claim(tensions: Iterable[Tension]) -> dict[str, list[Tension]]:
    """The tensions each claim key is in."""
    found: dict[str, list[Tension]] = defaultdict(list)
    for tension in tensions:
        found[tension.a.key].append(tension)
        found[tension.b.key].append(tension)
    return dict(found)


def same_quantity(refs: list[ClaimRef], key: str) -> list[tuple[ClaimRef, str | None]]:
    """The other notes' claims on the same quantity as claim ``key``, each with why it is not comparable
    (None: it is), comparable ones first."""
    mine = next((r for r in refs if r.key == key), None)
    if mine is None:
        return []
    others = [(r, incomparable_reason(mine.about, r.about)) for r in refs
              if r.note_id != mine.note_id and _norm(r.about.quantity) == _norm(mine.about.quantity)]
    return sorted(others, key=lambda pair: (pair[1] is not None, pair[0].key))


def measured(deciding: Deciding | None, metric: str) -> SeedValue | None:
    """kb's value of ``metric`` on a deciding record: mean and interval across its seeds (None: no record)."""
    return value_across_seeds(deciding.results, metric) if deciding is not None and deciding.results else None


# -- what the CLI prints and the app shows
# --------------------------------------------------------------------

def _evidence_record(deciding: Deciding | None, status: ClaimStatus | None) -> dict[str, Any] | None:
    if deciding is None:
        return None
    verdict = deciding.verdict
    return {
        "run": deciding.run_id,
        "claim": deciding.claim_key,
        "scale": deciding.preset,
        "state": status.state.value if status else None,
        "verdict": verdict.kind.value if verdict else None,
        "observed": verdict.observed if verdict else None,
        "reason": verdict.reason if verdict else None,
    }


def side_record(tension: Tension, ref: ClaimRef) -> dict[str, Any]:
    """One side of a tension as ``kb tensions --json`` prints it."""
    source = ref.claim.source
    status = tension.statuses.get(ref.key)
    return {"key": ref.key, "note": ref.note_id, "claim": ref.claim.id, "statement": ref.claim.statement,
            "quote": source.quote if source else None, "section": source.section if source else None,
            "page": source.page if source else None, "expects": ref.expects,
            "accepts": ref.accepts.text() if ref.accepts else None,
            "state": status.state.value if status else ("unverified" if ref.claim.analyzer else "unbound"),
            "evidence": _evidence_record(tension.evidence.get(ref.key), status)}


def record(tension: Tension) -> dict[str, Any]:
    """A tension as ``kb tensions --json`` prints it: both claims with their quotes and pages, each side's
    evidence, the state and the evidence that decided it (with both verdicts on it)."""
    state = tension.state
    plan = settle_plan(tension)
    deciding = state.deciding
    metric = tension.a.claim.expect.metric if tension.a.claim.expect is not None else None
    value = measured(deciding, metric) if metric else None
    decided: dict[str, Any] | None = None
    if deciding is not None:
        decided = {"run": deciding.run_id, "claim": deciding.claim_key, "scale": deciding.preset,
                   "value": value.mean if value else None, "low": value.low if value else None,
                   "high": value.high if value else None,
                   "verdicts": {side: {"kind": v.kind.value, "reason": v.reason}
                                for side, v in zip("AB", state.verdicts or (), strict=False)}}
    return {"id": tension.id, "kind": tension.kind, "quantity": tension.quantity, "why": tension.why,
            "state": state.outcome.value, "state_text": state.text, "deciding_evidence": decided,
            "settle": {"claim": plan.claim_key, "scale": plan.preset, "why_not": plan.why_not},
            "a": side_record(tension, tension.a), "b": side_record(tension, tension.b)}
