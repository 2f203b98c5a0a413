"""Counting the host synchronisations a piece of tensor code would make on a GPU, on any device.

A GPU runs ahead of the Python that launches its work until the host asks for a value: ``.item()``,
``int(tensor)``, ``.tolist()``, ``.cpu()``, a boolean mask's ``nonzero``, a linear-algebra call that checks
its error codes. Each such read waits for every kernel queued before it, so a probe that reads one value
per layer runs at the speed of the launch loop, not of the GPU. ``HostSyncCounter`` counts these reads
by name while it is active, on the CPU as well (where nothing waits, but the same code would wait on a
GPU), so a CPU test can assert that a probe pass syncs a fixed number of times whatever its depth.
On CUDA, ``torch.cuda.set_sync_debug_mode`` reports the syncs the driver actually sees
(``benchmarks/gpu_depth.py`` prints both).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

#: aten ops that read a device value on the host (the result's size or an error code depends on it).
SYNCING_OPS = frozenset({
    "aten._local_scalar_dense",  # .item(), int(t), float(t), bool(t)
    "aten.nonzero",
    "aten.masked_select",
    "aten._unique2",
    "aten.unique_consecutive",
    "aten.repeat_interleave",
    "aten._linalg_eigh",  # checks the solver's error codes on the host
    "aten.linalg_eigh",
    "aten._linalg_svd",
    "aten.linalg_svd",
    "aten.linalg_inv_ex",
    "aten._linalg_solve_ex",
})
#: Tensor methods that copy to the host (on a CPU tensor they dispatch nothing, so they are caught here).
HOST_READS = frozenset({"tolist", "cpu", "numpy"})


class _FunctionCounter(TorchFunctionMode):
    def __init__(self, counts: Counter[str]) -> None:
        super().__init__()
        self.counts = counts

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = getattr(func, "__name__", "")
        if name in HOST_READS and args and isinstance(args[0], torch.Tensor):
            self.counts[f"Tensor.{name}"] += 1
        return func(*args, **(kwargs or {}))


class _DispatchCounter(TorchDispatchMode):
    def __init__(self, counts: Counter[str]) -> None:
        super().__init__()
        self.counts = counts

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = func.overloadpacket.__qualname__ if hasattr(func, "overloadpacket") else str(func)
        name = f"aten.{name.split('.')[-1]}" if not name.startswith("aten.") else name
        if name in SYNCING_OPS:
            self.counts[name] += 1
        elif name in ("aten.index", "aten.index_put_", "aten.index_put") and _has_bool_index(args):
            self.counts[f"{name} (boolean mask)"] += 1
        elif name in ("aten._to_copy", "aten.copy_") and _to_host(args, kwargs or {}):
            self.counts[f"{name} (device to host)"] += 1
        return func(*args, **(kwargs or {}))


def _has_bool_index(args: Any) -> bool:
    indices = args[1] if len(args) > 1 else ()
    return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in indices or ())


def _to_host(args: Any, kwargs: dict[str, Any]) -> bool:
    if not args or not isinstance(args[0], torch.Tensor):
        return False
    if len(args) > 1 and isinstance(args[1], torch.Tensor):  # copy_(dst, src)
        return args[0].device.type == "cpu" and args[1].device.type != "cpu"
    device = kwargs.get("device")
    return device is not None and torch.device(device).type == "cpu" and args[0].device.type != "cpu"


class HostSyncCounter:
    """``with HostSyncCounter() as syncs: ...``; then ``syncs.total`` and ``syncs.counts`` (by op name)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._modes: list[Any] = []

    def __enter__(self) -> HostSyncCounter:
        self._modes = [_FunctionCounter(self.counts), _DispatchCounter(self.counts)]
        for mode in self._modes:
            mode.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        for mode in reversed(self._modes):
            mode.__exit__(*exc)

    @property
    def total(self) -> int:
        """Host reads counted so far."""
        return sum(self.counts.values())
