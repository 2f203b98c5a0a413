"""The one pseudo-Langevin step, for one chain (n,) or many (R, n), and its capture for a GPU.

``langevin_update`` is the step of both samplers in ``dynamics`` (kick/2, RATTLE, thermostat, drift + SHAKE,
new gradient with the Fixman term, kick/2 + RATTLE): ``PseudoLangevin`` calls it on one chain's (n,) tensors,
``ReplicaPseudoLangevin`` on (R, n) tensors, R chains of one weight shape, whatever their model's start or
temperature. What differs is only how a dot product over a chain's weights is taken (its ``Reduction``): per
row of a batch (``PER_CHAIN``), or over one vector, per constraint group when it has several (``OneChain``);
each keeps the summation its sampler always had, so both give the numbers they gave before they shared the
step. The step reads its random inputs (the thermostat's normal draws and the minibatch indices) as arguments
instead of drawing them, and never reads a tensor's value on the host: no ``.item()``, no Python branch on a
tensor, so a GPU runs it without one synchronisation. A SHAKE failure is counted per chain (``bad``) and read
by the caller every so many steps.

``StepRunner`` runs the batched step three ways (``STEP_CAPTURES``):

* ``none``: eagerly (every device; the CPU's only mode);
* ``graph``: captured once in a ``torch.cuda.CUDAGraph`` over static buffers (the chains' state, the noise and
  the minibatch indices), replayed every step: one launch for the whole step, the low-rank mass products
  (``MassMatrix``, O(k n) each) inside it;
* ``compile``: ``torch.compile(mode="reduce-overhead")`` of the same function (CUDA graphs by way of
  Inductor).

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


class Reduction:
    """Dot products over each chain's weights, for R chains (R, n): one per row, (R, 1)."""

    def dot(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """x . y per chain: (R, 1)."""
        return (x * y).sum(-1, keepdim=True)  # (R, 1)

    def spread(self, values: torch.Tensor) -> torch.Tensor:
        """Per-chain values, broadcastable onto the weights."""
        return values

    def failures(self, discriminant: torch.Tensor) -> torch.Tensor:
        """The SHAKE failures of this step per chain: (R,) long."""
        return (discriminant[:, 0] < 0).long()

    def no_failures(self, w: torch.Tensor) -> torch.Tensor:
        return torch.zeros(len(w), dtype=torch.long, device=w.device)


PER_CHAIN = Reduction()


class OneChain(Reduction):
    """One chain's weights (n,), with one norm constraint or one per group (``groups`` (n,) long, group
    ids)."""

    def __init__(self, groups: torch.Tensor | None = None) -> None:
        self.groups = groups
        self.num_groups = 1 if groups is None else int(groups.max()) + 1

    def dot(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """x . y per constraint group: () for one group, (G,) for several."""
        if self.groups is None:
            return x @ y
        return torch.zeros(self.num_groups, dtype=x.dtype, device=x.device).index_add_(0, self.groups, x * y)

    def spread(self, values: torch.Tensor) -> torch.Tensor:
        """Per-group values onto the weights (identity for one group)."""
        return values if self.groups is None else values[self.groups]

    def failures(self, discriminant: torch.Tensor) -> torch.Tensor:
        """The SHAKE failures of this step, all groups together: () long."""
        return (discriminant < 0).long().sum()

    def no_failures(self, w: torch.Tensor) -> torch.Tensor:
        return torch.zeros((), dtype=torch.long, device=w.device)


@dataclass
class StepConstants:
    """What a step reads but never writes (until the masses are set again)."""

    mass: MassMatrix  # batched: (R, n), (R, k, n), (R, k), (R,); one chain: (n,), (k, n), (k,), ()
    temperature: torch.Tensor | float  # (R, 1); one chain: a number
    q: torch.Tensor  # (R, 1) the squared norm each chain keeps; one chain: () or (G,) per group
    noise_factor: torch.Tensor  # (R, n) the added noise's amplitude before the mass
    dt: float
    c1: float
    constrained: bool
    fixman: bool
    reduction: Reduction = PER_CHAIN


def chain_dot(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x . y per chain: (R, 1)."""
    return PER_CHAIN.dot(x, y)


def rattle(
    p: torch.Tensor, w: torch.Tensor, inverse_w: torch.Tensor, reduction: Reduction = PER_CHAIN
) -> torch.Tensor:
    """p less its component that would leave the sphere: w . M^-1 p = 0 per chain (per group)."""
    return p - reduction.spread(reduction.dot(inverse_w, p) / reduction.dot(inverse_w, w)) * w


def shake(
    w_free: torch.Tensor, direction: torch.Tensor, q: torch.Tensor, reduction: Reduction = PER_CHAIN
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(w_free + lambda M^-1 w_old on |.|^2 = q, lambda spread onto the weights, this step's failures): lambda
    the smallest-|lambda| root of a lambda^2 + b lambda + c = 0; a negative discriminant counts as a failure
    (and gives lambda from its clamped root)."""
    a = reduction.dot(direction, direction)
    b = 2.0 * reduction.dot(w_free, direction)
    c = reduction.dot(w_free, w_free) - q
    discriminant = b * b - 4.0 * a * c  # (R, 1)
    sign = torch.where(b >= 0, 1.0, -1.0).to(b)
    big = -0.5 * (b + sign * discriminant.clamp(min=0.0).sqrt())
    lam = torch.where(big != 0, c / big, torch.zeros_like(c))  # c / big is always the smaller root
    lam = reduction.spread(lam)
    return w_free + lam * direction, lam, reduction.failures(discriminant)


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
    """One step of R chains (or of one): (w, p, grad, loss, M^-1 w, SHAKE failures) after it, from the state
    before it, ``noise`` (R, n) standard normal draws and the minibatch ``index`` (R, batch) (None: the full
    batch, or a gradient that draws its own minibatch)."""
    k, dt, mass, reduction = constants, constants.dt, constants.mass, constants.reduction
    p = p - 0.5 * dt * grad
    if k.constrained:
        p = rattle(p, w, inverse_w, reduction)
    p = k.c1 * p + mass.added_noise(k.noise_factor * noise)
    if k.constrained:
        p = rattle(p, w, inverse_w, reduction)
    w_free = w + dt * mass.inverse(p)
    if k.constrained:
        w_new, lam, bad = shake(w_free, inverse_w, k.q, reduction)
        p = p + lam * w / dt  # the constraint impulse: p = M (w_new - w_old) / dt
    else:
        w_new, bad = w_free, reduction.no_failures(w)
    inverse_new = mass.inverse(w_new)
    loss, grad_new = gradient(w_new, index)
    if k.constrained and k.fixman:
        grad_new = grad_new + fixman_force(k.temperature, w_new, inverse_new, reduction)
    p = p - 0.5 * dt * grad_new
    if k.constrained:
        p = rattle(p, w_new, inverse_new, reduction)
    return w_new, p, grad_new, loss, inverse_new, bad


def fixman_force(temperature: torch.Tensor | float, w: torch.Tensor, inverse_w: torch.Tensor,
                 reduction: Reduction = PER_CHAIN) -> torch.Tensor:
    """The gradient of the Fixman term (T/2) log(w^T M^-1 w): T M^-1 w / (w^T M^-1 w)."""
    return temperature * inverse_w / reduction.spread(reduction.dot(w, inverse_w))


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
    """Advances a ``ChainState`` by ``langevin_update``, eagerly, from a CUDA graph or compiled (see the
    module docstring). The graph and the compiled function hold the state's tensors: whoever replaces a tensor
    of the state or a constant calls :meth:`reset` (the next step captures again)."""

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
        w, p, grad, loss, inverse_w, bad = langevin_update(
            state.w, state.p, state.grad, state.inverse_w, constants, noise, index, self.gradient
        )
        state.w, state.p, state.grad, state.loss, state.inverse_w = w, p, grad, loss, inverse_w
        state.bad_steps = state.bad_steps + bad

    def _in_place(self, state: ChainState, constants: StepConstants, noise: torch.Tensor,
                  index: torch.Tensor | None) -> None:
        w, p, grad, loss, inverse_w, bad = langevin_update(
            state.w, state.p, state.grad, state.inverse_w, constants, noise, index, self.gradient
        )
        for target, value in zip(state.tensors()[:5], (w, p, grad, loss, inverse_w), strict=True):
            target.copy_(value)
        state.bad_steps.add_(bad)

    def _replay(self, state: ChainState, constants: StepConstants, noise: torch.Tensor,
                index: torch.Tensor | None) -> None:
        static = self._static
        if (
            self._graph is None
            or static.get("state") is not state
            or static.get("constants") is not constants
        ):
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
