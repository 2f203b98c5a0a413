"""One pseudo-Langevin step of many chains as a function of tensors only, and its capture for a GPU.

``langevin_update`` is the step of ``sampler.PseudoLangevin`` (kick/2, RATTLE, thermostat, drift + SHAKE, new
gradient with the Fixman term, kick/2 + RATTLE) on (R, n) tensors: R chains of one weight shape, whatever their
model's start or temperature. It reads its random inputs (the thermostat's normal draws and the minibatch
indices) as arguments instead of drawing them, and never reads a tensor's value on the host: no ``.item()``, no
Python branch on a tensor, so a GPU runs it without one synchronisation. A SHAKE failure is counted per chain
(``bad``) and read by the caller every so many steps.

``StepRunner`` runs that one function three ways (``STEP_CAPTURES``):

* ``none``: eagerly (every device; the CPU's only mode);
* ``graph``: captured once in a ``torch.cuda.CUDAGraph`` over static buffers (the chains' state, the noise and
  the minibatch indices), replayed every step: one launch for the whole step, the low-rank mass products
  (``MassMatrix``, O(k n) each) inside it;
* ``compile``: ``torch.compile(mode="reduce-overhead")`` of the same function (CUDA graphs by way of Inductor).

The capture is only a wrapper: the function captured is the one the CPU tests compare with the per-chain
sampler (tests/test_langevin_batched_step.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from analyzers.langevin.mass_matrix import MassMatrix

# w (R, n), minibatch indices (R, batch) or None (full batch) -> (losses (R,), gradients (R, n))
IndexedGradFn = Callable[[torch.Tensor, torch.Tensor | None], tuple[torch.Tensor, torch.Tensor]]
STEP_CAPTURES = ("auto", "none", "graph", "compile")


def resolve_capture(capture: str, device: torch.device | str) -> str:
    """``auto``: a CUDA graph on CUDA, eager elsewhere; ``graph``/``compile`` fall back to eager off CUDA (a
    CUDA graph needs a CUDA device; ``compile`` is meant for its ``reduce-overhead`` graphs)."""
    if capture not in STEP_CAPTURES:
        raise ValueError(f"step_capture must be one of {', '.join(STEP_CAPTURES)}, got {capture!r}")
    on_cuda = torch.device(device).type == "cuda"
    if capture == "auto":
        return "graph" if on_cuda else "none"
    return capture if on_cuda else "none"


@dataclass
class StepConstants:
    """What a step reads but never writes (until the masses are set again)."""

    mass: MassMatrix  # batched: (R, n), (R, k, n), (R, k), (R,)
    temperature: torch.Tensor  # (R, 1)
    q: torch.Tensor  # (R, 1) the squared norm each chain keeps
    noise_factor: torch.Tensor  # (R, n) the added noise's amplitude before the mass
    dt: float
    c1: float
    constrained: bool
    fixman: bool


def chain_dot(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x . y per chain: (R, 1)."""
    return (x * y).sum(-1, keepdim=True)  # (R, 1)


def rattle(p: torch.Tensor, w: torch.Tensor, inverse_w: torch.Tensor) -> torch.Tensor:
    """p less its component that would leave the sphere: w . M^-1 p = 0 per chain."""
    return p - chain_dot(inverse_w, p) / chain_dot(inverse_w, w) * w


def shake(
    w_free: torch.Tensor, direction: torch.Tensor, q: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(w_free + lambda M^-1 w_old on |.|^2 = q, lambda (R, 1), failures (R,) long): lambda the smallest-|lambda|
    root of a lambda^2 + b lambda + c = 0; a negative discriminant counts as a failure (and gives lambda from
    its clamped root, as the single sampler does)."""
    a = chain_dot(direction, direction)
    b = 2.0 * chain_dot(w_free, direction)
    c = chain_dot(w_free, w_free) - q
    discriminant = b * b - 4.0 * a * c  # (R, 1)
    sign = torch.where(b >= 0, 1.0, -1.0).to(b)
    big = -0.5 * (b + sign * discriminant.clamp(min=0.0).sqrt())
    lam = torch.where(big != 0, c / big, torch.zeros_like(c))  # c / big is always the smaller root
    return w_free + lam * direction, lam, (discriminant[:, 0] < 0).long()


def langevin_update(
    w: torch.Tensor,
    p: torch.Tensor,
    grad: torch.Tensor,
    inverse_w: torch.Tensor,
    constants: StepConstants,
    noise: torch.Tensor,
    index: torch.Tensor | None,
    gradient: IndexedGradFn,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """One step of R chains: (w, p, grad, loss, M^-1 w, SHAKE failures (R,)) after it, from the state before it,
    ``noise`` (R, n) standard normal draws and the minibatch ``index`` (R, batch) (None: the full batch)."""
    k, dt, mass = constants, constants.dt, constants.mass
    p = p - 0.5 * dt * grad
    if k.constrained:
        p = rattle(p, w, inverse_w)
    p = k.c1 * p + mass.added_noise(k.noise_factor * noise)
    if k.constrained:
        p = rattle(p, w, inverse_w)
    w_free = w + dt * mass.inverse(p)
    if k.constrained:
        w_new, lam, bad = shake(w_free, inverse_w, k.q)
        p = p + lam * w / dt  # the constraint impulse: p = M (w_new - w_old) / dt
    else:
        w_new, bad = w_free, torch.zeros(len(w), dtype=torch.long, device=w.device)
    inverse_new = mass.inverse(w_new)
    loss, grad_new = gradient(w_new, index)
    if k.constrained and k.fixman:
        grad_new = grad_new + k.temperature * inverse_new / chain_dot(w_new, inverse_new)
    p = p - 0.5 * dt * grad_new
    if k.constrained:
        p = rattle(p, w_new, inverse_new)
    return w_new, p, grad_new, loss, inverse_new, bad


@dataclass
class ChainState:
    """The tensors a step carries from one to the next (static buffers while a graph is captured)."""

    w: torch.Tensor  # (R, n)
    p: torch.Tensor  # (R, n)
    grad: torch.Tensor  # (R, n)
    loss: torch.Tensor  # (R,)
    inverse_w: torch.Tensor  # (R, n) M^-1 w
    bad_steps: torch.Tensor  # (R,) long, SHAKE failures so far

    def tensors(self) -> list[torch.Tensor]:
        return [self.w, self.p, self.grad, self.loss, self.inverse_w, self.bad_steps]


class StepRunner:
    """Advances a ``ChainState`` by ``langevin_update``, eagerly, from a CUDA graph or compiled (see the module
    docstring). The graph and the compiled function hold the state's tensors: whoever replaces a tensor of the
    state or a constant calls :meth:`reset` (the next step captures again)."""

    def __init__(self, gradient: IndexedGradFn, capture: str = "none", warmup: int = 2) -> None:
        self.gradient = gradient
        self.capture = capture
        self.warmup = warmup
        self._graph: Any = None
        self._static: dict[str, Any] = {}
        self._compiled: Any = None
        self.captures = 0  # how many times a graph was captured (a test reads it)

    def reset(self) -> None:
        self._graph, self._static = None, {}

    def step(self, state: ChainState, constants: StepConstants, noise: torch.Tensor,
             index: torch.Tensor | None) -> None:
        """One step of every chain; ``state`` holds the result (its tensors replaced eagerly, written in place
        by a graph or the compiled function)."""
        if self.capture == "graph":
            self._replay(state, constants, noise, index)
            return
        if self.capture == "compile":
            if self._compiled is None:
                self._compiled = torch.compile(langevin_update, mode="reduce-overhead", dynamic=False)
            outputs = self._compiled(state.w, state.p, state.grad, state.inverse_w, constants, noise, index,
                                     self.gradient)  # fmt: skip
            w, p, grad, loss, inverse_w, bad = outputs
            for target, value in zip(state.tensors()[:5], (w, p, grad, loss, inverse_w), strict=True):
                target.copy_(value)  # its outputs live in the graph's pool, overwritten by the next call
            state.bad_steps += bad
            return
        w, p, grad, loss, inverse_w, bad = langevin_update(state.w, state.p, state.grad, state.inverse_w, constants,
                                                           noise, index, self.gradient)  # fmt: skip
        state.w, state.p, state.grad, state.loss, state.inverse_w = w, p, grad, loss, inverse_w
        state.bad_steps = state.bad_steps + bad

    def _in_place(self, state: ChainState, constants: StepConstants, noise: torch.Tensor,
                  index: torch.Tensor | None) -> None:
        w, p, grad, loss, inverse_w, bad = langevin_update(state.w, state.p, state.grad, state.inverse_w, constants,
                                                           noise, index, self.gradient)  # fmt: skip
        for target, value in zip(state.tensors()[:5], (w, p, grad, loss, inverse_w), strict=True):
            target.copy_(value)
        state.bad_steps.add_(bad)

    def _replay(self, state: ChainState, constants: StepConstants, noise: torch.Tensor,
                index: torch.Tensor | None) -> None:
        static = self._static
        if self._graph is None or static.get("state") is not state or static.get("constants") is not constants:
            self._capture(state, constants, noise, index)
            static = self._static
        static["noise"].copy_(noise)
        if index is not None:
            static["index"].copy_(index)
        self._graph.replay()

    def _capture(self, state: ChainState, constants: StepConstants, noise: torch.Tensor,
                 index: torch.Tensor | None) -> None:
        static_noise = noise.clone()
        static_index = None if index is None else index.clone()
        saved = [tensor.clone() for tensor in state.tensors()]
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):  # warm-up off the default stream, as CUDA graph capture requires
            for _ in range(self.warmup):
                self._in_place(state, constants, static_noise, static_index)
        torch.cuda.current_stream().wait_stream(stream)
        for tensor, value in zip(state.tensors(), saved, strict=True):
            tensor.copy_(value)  # the warm-up steps are undone: capturing runs nothing
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self._in_place(state, constants, static_noise, static_index)
        self._graph = graph
        self._static = {"state": state, "constants": constants, "noise": static_noise, "index": static_index}
        self.captures += 1
