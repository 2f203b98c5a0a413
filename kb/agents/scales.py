"""A scale proposed for a drafted claim that states none, read from the paper's own text (issue 35).

A claim without a scale can be settled by no run ('at <preset> only: the claim states no scale'), and a quote
rarely repeats the model size the paper is about. So the drafter (rule-based or agent) proposes one from the
whole text: the model size the text names most often ('650M', '3B parameters', '46 B';
``fallback.model_sizes``), the data set it names most often (UniRef50, UniProt, Pfam, CATH, PDB ids, ...) and
the layer counts it states ('36 layers', '6, 12, 24, 36 and 48 layers', '36层'). Ties go to the first named.
The proposal is shown beside the claim, with what it was read from and what else the text names; it enters the
note only when the user accepts it (``--with-proposed-scale``) or sets it (``kb set``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from kb.agents.fallback import model_sizes
from schemas.claim import ClaimScale

_DATASET = re.compile(
    r"\b(?:UniRef ?(?:50|90|100)|UniProt(?:KB)?|Swiss-?Prot|TrEMBL|BFD|MGnify|Pfam|CATH|SCOPe?|ProteinGym|"
    r"OpenProteinSet|CAMEO|CASP ?\d{1,2}|PDB(?: (?:entry |id |ID )?[1-9][A-Za-z0-9]{3}\b)?)(?![\w-])")
_NUMBERS = r"\d{1,3}(?:\s*(?:,|and|or|to|/|-)\s*\d{1,3})*"
_LAYERS = re.compile(rf"(?<![\w.]){_NUMBERS}(?:\s?-?\s?(?:layers?|blocks?)\b|\s?层)", re.IGNORECASE)


@dataclass(frozen=True)
class ProposedScale:
    """A scale read from a paper's text, and what it was read from (``basis``: 'named 3 times: 650M; ...')."""

    scale: ClaimScale
    basis: str

    def text(self) -> str:
        """As the drafter shows it: '650M parameters, UniRef50, 6, 12, 24, 36, 48 layers'."""
        return scale_text(self.scale)


def scale_text(scale: ClaimScale) -> str:
    """A claim's scale in words: '650M parameters, UniRef50, 36 layers'."""
    parts = [f"{_size(scale.parameters)} parameters"] if scale.parameters is not None else []
    parts += [part for part in (scale.data, scale.description) if part]
    return ", ".join(parts)


def _size(parameters: float) -> str:
    if parameters >= 1e9:
        return f"{parameters / 1e9:g}B"
    return f"{parameters / 1e6:g}M" if parameters >= 1e6 else f"{parameters / 1e3:g}k"


def _layer_counts(found: str) -> str:
    """'36层', '36-layer' and '36 layers' as one key, '36 layers'; '6, 12, 24, 36 and 48 layers' as
    '6, 12, 24, 36, 48 layers'."""
    return ", ".join(re.findall(r"\d+", found)) + " layers"


def _counted(found: list[str]) -> tuple[str | None, str]:
    """The most frequent (first named on a tie) and the rest in words: ("650M", "650M x3; also 3B x1")."""
    if not found:
        return None, ""
    counts = Counter(found)
    ranked = counts.most_common()  # stable: equal counts keep the order they were first named in
    chosen = ranked[0][0]
    others = ", ".join(f"{name} x{count}" for name, count in ranked[1:4])
    return chosen, f"{chosen} x{counts[chosen]}" + (f" (also named: {others})" if others else "")


def propose_scale(text: str) -> ProposedScale | None:
    """The scale the text is about, by the module's rule; None when it names no model size, data set or
    layers."""
    sizes = [_size(size) for size in model_sizes(text)]
    data = [re.sub(r"\s+", " ", m.group(0)) for m in _DATASET.finditer(text)]
    layers = [_layer_counts(m.group(0)) for m in _LAYERS.finditer(text)]
    size, size_basis = _counted(sizes)
    dataset, data_basis = _counted(data)
    depth, layer_basis = _counted(layers)
    if size is None and dataset is None and depth is None:
        return None
    parameters = next((p for p in model_sizes(text) if _size(p) == size), None)
    scale = ClaimScale(parameters=parameters, data=dataset, description=depth)
    basis = "; ".join(f"{what} {why}" for what, why in (("size", size_basis), ("data", data_basis),
                                                          ("layers", layer_basis)) if why)
    return ProposedScale(scale, basis)
