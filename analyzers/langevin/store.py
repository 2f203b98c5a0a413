"""Pickle-free files for the Langevin caches (trained weights, sampler checkpoints).

Everything kb reads back from its cache is loaded with ``torch.load(weights_only=True)``: only tensors,
numbers, strings, lists, tuples and dicts come back, so a file planted in the cache (shared folder, copied
work dir) cannot run code. numpy arrays, which that loader refuses, are stored as tensors under a marker
key and restored on load. A file that is not such plain data is reported as unreadable, never executed.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import torch

from analyzers.files import atomic_write_bytes

_ARRAY = "__kb_ndarray__"


class UnreadableCache(Exception):
    """A cache file that is not plain data (damaged, old format, or planted); the caller recomputes."""


def _to_plain(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return {_ARRAY: torch.from_numpy(np.ascontiguousarray(obj))}
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {key: _to_plain(value) for key, value in obj.items()}
    if isinstance(obj, list):
        return [_to_plain(value) for value in obj]
    if isinstance(obj, tuple):
        return tuple(_to_plain(value) for value in obj)
    return obj


def _from_plain(obj: Any) -> Any:
    if isinstance(obj, dict):
        if set(obj) == {_ARRAY}:
            return obj[_ARRAY].numpy()
        return {key: _from_plain(value) for key, value in obj.items()}
    if isinstance(obj, list):
        return [_from_plain(value) for value in obj]
    if isinstance(obj, tuple):
        return tuple(_from_plain(value) for value in obj)
    return obj


def save_plain(obj: Any, path: Path) -> None:
    """Write ``obj`` (tensors, numpy arrays, numbers, strings, lists, tuples, dicts) atomically to
    ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    torch.save(_to_plain(obj), buffer)
    atomic_write_bytes(path, buffer.getvalue())


def load_plain(path: Path) -> Any:
    """Read a :func:`save_plain` file without unpickling anything but plain data; ``UnreadableCache``
    otherwise."""
    try:
        return _from_plain(torch.load(path, map_location="cpu", weights_only=True))
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, OSError, AttributeError) as error:
        raise UnreadableCache(
            f"{path}: not a plain-data cache file ({type(error).__name__}); recomputing"
        ) from error
