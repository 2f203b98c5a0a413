"""What a claim is about (its quantity, subject and condition, defaults read from its binding and scale), and
when two subjects differ: the comparability rule that tensions compare claims by and that verdicts hold a
run's own scale to (a run on another subject is a proxy).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from schemas import Claim

#: Two stated model sizes are the same subject when the larger is at most this many times the smaller.
SIZE_FACTOR = 2.0



@dataclass(frozen=True)
class About:
    """What a claim is about, its defaults filled in (``about``): quantity, subject and condition."""

    quantity: str | None  # 'depth.sweep:best_depth', or a named quantity; None: nothing to compare it on
    unit: str | None = None
    family: str | None = None
    objective: str | None = None
    parameters: float | None = None
    data: str | None = None
    preset: str | None = None  # the scale preset whose evidence settles the claim
    budget: tuple[float, float] | None = None


def about(claim: Claim) -> About:
    """What ``claim`` is about: its own ``quantity`` / ``subject`` / ``condition``, else the defaults read
    from its binding (``analyzer:metric``; the preset ``settled_by``, else ``scale``) and its ``scale`` (size,
    data)."""
    binding, expect, scale = claim.analyzer, claim.expect, claim.scale
    quantity = claim.quantity.name if claim.quantity is not None else None
    if quantity is None and binding is not None and expect is not None:
        quantity = f"{binding.name}:{expect.metric}"
    subject, condition = claim.subject, claim.condition
    parameters = subject.parameters if subject is not None and subject.parameters is not None else (
        scale.parameters if scale is not None else None)
    data = subject.data if subject is not None and subject.data is not None else (
        scale.data if scale is not None else None)
    preset = condition.scale if condition is not None and condition.scale is not None else (
        (binding.settled_by or binding.scale) if binding is not None else None)
    return About(quantity=quantity, unit=claim.quantity.unit if claim.quantity is not None else None,
                 family=subject.family if subject is not None else None,
                 objective=subject.objective if subject is not None else None,
                 parameters=parameters, data=data, preset=preset,
                 budget=condition.budget_range() if condition is not None else None)


#: A PDB entry named in a data description ('2ABD', '1ubi.cif model 1 chain A'): a digit and three letters or
#: digits, at least one a letter; a size such as '650M' or '100k' is not one.
_PDB_ENTRY = re.compile(r"\b([1-9][a-z0-9]{3})\b")
_SIZE = re.compile(r"^\d+[kmbt]$")


def structures(data: str | None) -> frozenset[str]:
    """The PDB entries a data description names (lower case)."""
    found = _PDB_ENTRY.findall(data.casefold()) if data else []
    return frozenset(x for x in found if not x.isdigit() and not _SIZE.match(x))


def subject_difference(a: About, b: About) -> str | None:
    """Why two subjects differ in size (beyond ``SIZE_FACTOR``) or in the structure their data names (both
    name PDB entries, none shared), or None: the part of the comparability rule that a run's own scale can be
    held to (``kb.evidence.verdicts`` asks it of evidence against its claim)."""
    if a.parameters is not None and b.parameters is not None:
        small, large = sorted((a.parameters, b.parameters))
        if large > small * SIZE_FACTOR or (small == 0 and large > 0):
            return f"different sizes ({a.parameters:.3g} / {b.parameters:.3g} parameters)"
    mine, theirs = structures(a.data), structures(b.data)
    if mine and theirs and not mine & theirs:
        return (
            f"different structures ({', '.join(sorted(mine)).upper()} / {', '.join(sorted(theirs)).upper()})"
        )
    return None
