"""Forward hooks for one instrumented pass, and replaying single layers with their recorded calls.

The clean pass records, with forward pre-hooks, each layer's call (its arguments: attention mask,
rotary or position tensors, ...) and its input ``h_l``; the last layer's output gives ``h_L``. The
attention and MLP updates ``a_l``, ``m_l`` are reduced to per-token statistics as soon as both exist, and
attention probabilities to entropies as soon as a layer produces them, then dropped: no layer's
attention map outlives its layer. ``call_layer`` replays one layer on a new residual state with the
recorded call, which lets the skip probes start from ``h_s`` instead of re-running the prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import torch
from torch import nn

from analyzers.depth.adapters import Adapter

EPS = 1e-12


@dataclass
class LayerCall:
    """The positional and keyword arguments one layer was called with (the hidden state excluded)."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    hidden_in_kwargs: bool  # the hidden state came as ``hidden_states=`` rather than first positional


@dataclass
class CleanRecord:
    """What the clean pass leaves: residual states, layer calls, final logits."""

    states: list[torch.Tensor] = field(default_factory=list)  # L+1 of (batch, seq, dim), model dtype
    calls: list[LayerCall] = field(default_factory=list)
    logits: torch.Tensor | None = None  # (batch, seq, vocab)


def first_tensor(output: Any) -> torch.Tensor:
    """A layer's hidden-state output, whether it returns a tensor or a tuple (older transformers)."""
    return output if isinstance(output, torch.Tensor) else output[0]


def _expand(value: Any, repeats: int, batch: int, cache: dict[tuple[int, int], Any]) -> Any:
    """``value`` with every batch-leading tensor repeated ``repeats`` times along the batch axis."""
    if repeats == 1:
        return value
    if isinstance(value, torch.Tensor):
        if value.dim() == 0 or value.shape[0] != batch:
            # broadcast over the batch (e.g. rotary cos/sin of shape (1, seq, dim)) or not batched
            return value
        key = (id(value), repeats)
        if key not in cache:
            cache[key] = value.repeat(repeats, *([1] * (value.dim() - 1)))
        return cache[key]
    if isinstance(value, tuple):
        return tuple(_expand(v, repeats, batch, cache) for v in value)
    if isinstance(value, list):
        return [_expand(v, repeats, batch, cache) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v, repeats, batch, cache) for k, v in value.items()}
    return value


def call_layer(
    layer: nn.Module,
    call: LayerCall,
    hidden: torch.Tensor,
    batch: int,
    cache: dict[tuple[int, int], Any] | None = None,
) -> torch.Tensor:
    """Run one layer on ``hidden`` (``(repeats * batch, seq, dim)``) with its recorded call, the recorded
    batch-leading tensors repeated to match. Returns the layer's new residual state."""
    repeats = hidden.shape[0] // batch
    cache = {} if cache is None else cache
    args = _expand(call.args, repeats, batch, cache)
    kwargs = _expand(call.kwargs, repeats, batch, cache)
    if call.hidden_in_kwargs:
        return first_tensor(layer(*args, **{**kwargs, "hidden_states": hidden}))
    return first_tensor(layer(hidden, *args, **kwargs))


@contextmanager
def hooks(handles: list[Any]) -> Iterator[None]:
    """Remove the given hook handles on exit, whatever happens."""
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


@contextmanager
def fast_attention(model: nn.Module) -> Iterator[None]:
    """SDPA attention kernels for the duration of the block where the model runs eager attention (loaded
    so for the attention-entropy probe) and supports SDPA: the skip replays read no attention map, and
    the attention masks recorded in the clean pass (additive, 4-D) are valid SDPA masks too."""
    config = getattr(model, "config", None)
    switch = getattr(config, "_attn_implementation", None) == "eager" and getattr(
        model, "_supports_sdpa", False
    )
    if switch:
        try:
            model.set_attn_implementation("sdpa")  # type: ignore[operator]
        except (ValueError, ImportError, AttributeError):
            switch = False
    try:
        yield
    finally:
        if switch:
            model.set_attn_implementation("eager")  # type: ignore[operator]


@contextmanager
def zeroed(module: nn.Module) -> Iterator[None]:
    """Make ``module`` output zeros: skips a sublayer when ``module`` is its output projection, since the
    residual is added outside it."""

    def hook(_module: nn.Module, _args: tuple, output: Any) -> Any:
        zero = torch.zeros_like(first_tensor(output))
        return zero if isinstance(output, torch.Tensor) else (zero, *output[1:])

    with hooks([module.register_forward_hook(hook)]):
        yield


class CleanPass:
    """Hooks that record a clean forward pass and reduce sublayer updates and attention on the fly.

    ``on_contribution(layer, h, a, m)`` receives ``h_l``, ``a_l``, ``m_l`` (pre-LN models) and
    ``on_attention(layer, probs)`` each layer's attention probabilities ``(batch, heads, seq, seq)``;
    neither tensor is kept after the callback returns.
    """

    def __init__(
        self,
        adapter: Adapter,
        on_contribution: Callable[[int, torch.Tensor, torch.Tensor, torch.Tensor], None] | None = None,
        on_attention: Callable[[int, torch.Tensor], None] | None = None,
        record_calls: bool = True,
    ) -> None:
        self.adapter = adapter
        self.on_contribution = on_contribution
        self.on_attention = on_attention
        self.record_calls = record_calls
        self.record = CleanRecord()
        self._attn: dict[int, torch.Tensor] = {}
        self.saw_attention = False

    @contextmanager
    def active(self) -> Iterator[CleanRecord]:
        """Install the hooks for the duration of one forward pass."""
        num_layers = self.adapter.num_layers
        self.record = CleanRecord(states=[None] * (num_layers + 1),  # type: ignore[list-item]
                                  calls=[None] * num_layers)  # type: ignore[list-item]
        handles = [layer.register_forward_pre_hook(partial(self._layer_input, index), with_kwargs=True)
                   for index, layer in enumerate(self.adapter.layers)]
        handles.append(self.adapter.layers[-1].register_forward_hook(self._last_output))
        if self.on_contribution is not None and self.adapter.pre_ln:
            handles += [module.register_forward_hook(partial(self._attention_branch, index))
                        for index, module in enumerate(self.adapter.attn_out)]
            handles += [module.register_forward_hook(partial(self._mlp_branch, index))
                        for index, module in enumerate(self.adapter.mlp_out)]
        if self.on_attention is not None:
            handles += [module.register_forward_hook(partial(self._attention_probs, index))
                        for index, module in enumerate(self.adapter.attn_probs)]
        with hooks(handles):
            yield self.record
        self._attn.clear()

    # The hooks, each told its layer's index (functools.partial). A branch's output is divided by the
    # adapter's residual scale: ESM-C adds branch / scale, so the residual update is that.

    def _layer_input(self, index: int, _module: nn.Module, args: tuple, kwargs: dict) -> None:
        hidden_in_kwargs = not args
        hidden = kwargs["hidden_states"] if hidden_in_kwargs else args[0]
        self.record.states[index] = hidden.detach()
        if self.record_calls:
            rest = {k: v for k, v in kwargs.items() if k != "hidden_states"}
            self.record.calls[index] = LayerCall(args[1:], rest, hidden_in_kwargs)

    def _last_output(self, _module: nn.Module, _args: tuple, output: Any) -> None:
        self.record.states[self.adapter.num_layers] = first_tensor(output).detach()

    def _unscaled(self, output: Any) -> torch.Tensor:
        branch = first_tensor(output).detach()
        scale = self.adapter.residual_scale
        return branch if scale == 1.0 else branch / scale

    def _attention_branch(self, index: int, _module: nn.Module, _args: tuple, output: Any) -> None:
        self._attn[index] = self._unscaled(output)

    def _mlp_branch(self, index: int, _module: nn.Module, _args: tuple, output: Any) -> None:
        if self.on_contribution is not None:
            attention = self._attn.pop(index)
            self.on_contribution(index, self.record.states[index], attention, self._unscaled(output))

    def _attention_probs(self, index: int, _module: nn.Module, _args: tuple, output: Any) -> None:
        if isinstance(output, tuple) and len(output) > 1 and isinstance(output[1], torch.Tensor):
            self.saw_attention = True
            if self.on_attention is not None:
                self.on_attention(index, output[1].detach())
