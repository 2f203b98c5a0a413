"""Contact maps: from a PDB/mmCIF file (gemmi), by PDB id (RCSB, cached, online only), or from an
idealized four-helix bundle built geometrically (the offline default; it is NOT 2ABD)."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import numpy as np

ACBP_SEQUENCE = "SQAEFDKAAEEVKHLKTKPADEEMLFIYSHYKQATVGDINTERPGMLDFKGKAKWDAWNELKGTSKEDAMKAYIDKVEELKKKYGI"
# Helix boundaries (1-based, inclusive) resembling ACBP's four helices.
BUNDLE_HELICES: tuple[tuple[int, int], ...] = ((3, 15), (21, 36), (51, 62), (65, 85))
RCSB_URL = "https://files.rcsb.org/download/{pdb_id}.cif"


def contacts_from_coords(atom_coords: list[np.ndarray], cutoff: float, min_separation: int) -> np.ndarray:
    """Residue contact map: any atom pair closer than ``cutoff`` and |i-j| >= min_separation.

    atom_coords[i]: (atoms_i, 3). Returns (L, L) bool, symmetric, False on the diagonal band.
    """
    length = len(atom_coords)
    owner = np.concatenate([np.full(len(c), i) for i, c in enumerate(atom_coords)])  # (atoms,)
    xyz = np.concatenate(atom_coords)  # (atoms, 3)
    dist2 = ((xyz[:, None, :] - xyz[None, :, :]) ** 2).sum(-1)  # (atoms, atoms)
    close = dist2 < cutoff**2
    contact = np.zeros((length, length), dtype=bool)
    rows, cols = np.nonzero(close)
    contact[owner[rows], owner[cols]] = True
    index = np.arange(length)
    contact &= np.abs(index[:, None] - index[None, :]) >= min_separation
    return contact


def contact_map_from_file(
    path: str | Path, chain: str | None = None, model: int = 1, cutoff: float = 4.5, min_separation: int = 1
) -> np.ndarray:
    """Heavy-atom contact map of one chain of one model (1-based) of a PDB/mmCIF file. (L, L) bool."""
    import gemmi

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"structure file not found: {path}")
    structure = gemmi.read_structure(str(path))
    if model < 1 or model > len(structure):
        raise ValueError(f"model {model} not in {path.name} (it has {len(structure)} models)")
    gemmi_model = structure[model - 1]
    names = [c.name for c in gemmi_model]
    if chain is None:
        chain = names[0]
    if chain not in names:
        raise ValueError(f"chain {chain!r} not found in {path.name}; chains: {names}")
    coords = []
    for residue in gemmi_model[chain]:
        if not gemmi.find_tabulated_residue(residue.name) or residue.het_flag == "H":
            continue
        heavy = [a.pos.tolist() for a in residue if a.element.name != "H"]
        if heavy:
            coords.append(np.asarray(heavy, dtype=float))
    if not coords:
        raise ValueError(f"chain {chain!r} of {path.name} has no amino-acid residues")
    return contacts_from_coords(coords, cutoff, min_separation)


def fetch_pdb(pdb_id: str, cache_dir: str | Path, timeout: float = 5.0) -> Path:
    """Download ``pdb_id`` as mmCIF from RCSB into ``cache_dir`` (reused when cached); fails fast offline."""
    cache = Path(cache_dir) / f"{pdb_id.upper()}.cif"
    if cache.is_file():
        return cache
    cache.parent.mkdir(parents=True, exist_ok=True)
    try:
        with urllib.request.urlopen(RCSB_URL.format(pdb_id=pdb_id.upper()), timeout=timeout) as response:
            cache.write_bytes(response.read())
    except (TimeoutError, OSError) as error:
        raise ConnectionError(
            f"could not download {pdb_id} from RCSB ({error}); this machine may be offline: "
            "give a structure file, or use the idealized four-helix bundle"
        ) from error
    return cache


def ideal_four_helix_bundle(
    length: int = 86,
    helices: tuple[tuple[int, int], ...] = BUNDLE_HELICES,
    cutoff: float = 6.0,
    min_separation: int = 1,
) -> np.ndarray:
    """Contact map of an idealized four-helix bundle (CA + CB-like pseudo atoms), built geometrically.

    Helices are ideal alpha helices (1.5 A rise, 100 deg/residue, radius 2.3 A) on the corners of a
    square of side 10 A, alternating up/down; loop residues are linearly interpolated between helix
    ends. CB-like atoms sit 2.4 A further out from each helix axis. The default cutoff (6 A) is larger
    than the heavy-atom 4.5 A because two pseudo atoms stand in for a whole residue. Not the 2ABD structure.
    """
    axes = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])  # (4, 2)
    ca = np.full((length, 3), np.nan)
    cb = np.full((length, 3), np.nan)
    for h, (start, end) in enumerate(helices):
        k = np.arange(end - start + 1)
        z = 1.5 * k - 0.75 * (end - start)
        z = z if h % 2 == 0 else -z
        angle = np.deg2rad(100.0) * k
        for radius, target in ((2.3, ca), (4.7, cb)):
            target[start - 1 : end, 0] = axes[h, 0] + radius * np.cos(angle)
            target[start - 1 : end, 1] = axes[h, 1] + radius * np.sin(angle)
            target[start - 1 : end, 2] = z
    known = np.where(~np.isnan(ca[:, 0]))[0]
    for dim in range(3):  # loops and termini: interpolate (ends are held at the nearest helix residue)
        ca[:, dim] = np.interp(np.arange(length), known, ca[known, dim])
        cb[:, dim] = np.where(np.isnan(cb[:, dim]), ca[:, dim], cb[:, dim])
    coords = [np.stack([ca[i], cb[i]]) for i in range(length)]
    return contacts_from_coords(coords, cutoff=cutoff, min_separation=min_separation)
