"""What the network method's phases share: the surrogate, the quadrature grid and test
functions, the weak-form assemblers, the symbolic network and its coefficients ξ, the
preconditioner, the data terms and the best held-out checkpoint.

Developer notes:

* The surrogate Û is evaluated on a quadrature grid (the observations' grid when they were
  sampled from one, otherwise a grid over their bounding box); the data loss compares Û with
  the observations, the weak loss integrates F(Û) against the test functions.
* ℒ_weak is normalised by ‖b‖² of the warm-up surrogate so that λ_w means the same on every
  system.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..._trainer import BestCheckpoint
from ...ir import multi_indices
from ...surrogate import DataTerm, held_out_term
from ...symnet import SymNet, field_scales
from ...weak import WeakAssembler
from .._settings import COUNTS, GRID_POINTS, NODES_PER_OP
from .._testfunctions import (
    bump_for_orders,
    lattice_axis_ok,
    make_tests,
    spectral_radius,
    support_floor,
)

__all__ = ["NetworkState", "quadrature_axes"]


def quadrature_axes(obs, target: int) -> tuple[dict[str, np.ndarray], tuple[int, ...]]:
    """The grid the surrogate is evaluated on, and the strides of the (coarser) grid the
    network phases integrate on (at most ``target`` points).

    Data on a lattice (a subsample of a simulation grid) are integrated on that lattice, so
    that the final fit can correct the surrogate with the observations at its nodes. An
    axis of the lattice that is coarse or uneven (:func:`lattice_axis_ok`: sensors at fixed
    scattered positions, snapshots at scattered times) is replaced by an even one, as for
    scattered data: the surrogate is a function of the coordinates and can be evaluated
    anywhere (the heat equation from 24 sensors × 101 times: 0.058 u − 0.15 u² on the
    sensors' 24 x nodes)."""
    dims = len(obs.coord_names)
    n = int(np.clip(round((4 * target) ** (1.0 / dims)), 16, 512))
    if obs.grid is not None:
        axes = {
            name: a if lattice_axis_ok(a) else np.linspace(a[0], a[-1], max(n, len(a)))
            for name, a in obs.grid.axes.items()
        }
    else:
        axes = {name: np.linspace(lo, hi, n) for name, (lo, hi) in obs.bounds.items()}
    strides = [1] * len(axes)
    sizes = [len(a) for a in axes.values()]
    while np.prod([(n - 1) // s + 1 for n, s in zip(sizes, strides)]) > target:
        i = int(np.argmax([n / s for n, s in zip(sizes, strides)]))
        if sizes[i] // strides[i] < 32:
            break
        strides[i] += 1
    return axes, tuple(strides)


class _Weak:
    """Weak-form integrals of the network outputs F(Û) for every derivative multi-index."""

    def __init__(self, assembler: WeakAssembler, alphas: Sequence[tuple[int, ...]], lhs_alphas):
        self.asm = assembler
        self.alphas = list(alphas)
        self.lhs_alphas = list(lhs_alphas)

    def columns(self, F: torch.Tensor) -> torch.Tensor:
        """(K, S, A) integrals of each output s with each multi-index a. F: (*grid, S)."""
        return self.asm.integrate_outer(torch.movedim(F, -1, 0), self.alphas)

    def lhs(self, U: torch.Tensor, field_index: Sequence[int]) -> torch.Tensor:
        """(K, E) left-hand sides for each equation."""
        vals = torch.stack([U[..., i] for i in field_index], dim=0)
        return self.asm.integrate(vals, self.lhs_alphas)


@dataclass
class _Quadrature:
    full_axes: dict
    strides: tuple
    axes_np: dict
    axes: list
    bounds: dict


def _multi_indices(problem, config) -> list[tuple[int, ...]]:
    """The derivative multi-indices the network's outputs are paired with."""
    coords = problem.coords
    space = [c for c in coords if str(c) != "t"]
    max_order = {str(c): 4 if len(space) == 1 else 2 for c in space}
    max_order.update(problem.max_order(config.library.max_order))
    max_order["t"] = 0
    max_total = None if len(space) == 1 else max(max_order.values())
    return [
        tuple(dict(a).get(c, 0) for c in coords)
        for a in multi_indices(coords, max_order, max_total)
    ]


class NetworkState:
    """Everything the phases after the warm-up read and train (see the module notes)."""

    def __init__(self, problem, config, device, warm, history) -> None:
        self.problem, self.config, self.device, self.history = problem, config, device, history
        self.surrogate = warm.surrogate
        self.interrupted = warm.interrupted
        #: more trained surrogates (``surrogates=K``): the final fit integrates their mean
        #: with this run's (:meth:`mean_grid`)
        self.members: list = []
        #: (phase, parameters, held-out loss) of the best checkpoint before the tuning phase, which
        #: trains the surrogate towards the candidate library (:mod:`._untuned`)
        self.untuned: tuple | None = None
        obs, names, tcfg = problem.obs, problem.obs.coord_names, config.tests
        full_axes, strides = quadrature_axes(obs, GRID_POINTS)
        axes_np = {n: a[::s] for (n, a), s in zip(full_axes.items(), strides)}
        # the network phases only need Û on the coarse quadrature grid (and at the data points)
        axes = [
            torch.as_tensor(axes_np[n], dtype=self.surrogate.lo.dtype, device=device) for n in names
        ]
        bounds = {n: (float(a[0]), float(a[-1])) for n, a in axes_np.items()}
        self.quad = _Quadrature(full_axes, strides, axes_np, axes, bounds)
        self.wdtype = torch.float32 if config.training.dtype == "float32" else torch.float64
        self.A = _multi_indices(problem, config)
        self.lhs_alphas = [t.orders(names) for t in problem.lhs]
        self.orders = {
            n: max([a[i] for a in self.A + self.lhs_alphas]) for i, n in enumerate(names)
        }
        self.bump = bump_for_orders(tcfg.test_function, self.orders)
        self.radius = None
        if {"cap", "spectrum"} & set(tcfg.scales):
            with torch.no_grad():
                pred = self.surrogate.grid(axes).double().cpu().numpy()
            grids = [pred[..., i] for i in range(pred.shape[-1])]
            self.radius = spectral_radius(axes_np, grids, self.bump)
        self.tests = self.make_tests(tcfg.scales[0], tcfg.n_tests)
        # the training phases integrate with the plain trapezoid rows: exact moments there
        # change every run's trajectory, and on the zoo's tuning half (σ = 0.2) that lost
        # two weak u_xx terms (Fisher–KPP, sine reaction); the final fit's assembler has them
        self.asm = WeakAssembler(
            axes_np, self.tests, self.orders, dtype=self.wdtype, device=device,
            exact_moments=False,
        )  # fmt: skip
        self.asm64 = WeakAssembler(
            axes_np, self.tests, self.orders, device=device, exact_moments=False
        )
        self.asm_final = WeakAssembler(axes_np, self.tests, self.orders, device=device)
        self.weak = _Weak(self.asm, self.A, self.lhs_alphas)
        self.field_index = [obs.field_names.index(t.field_names[0]) for t in problem.lhs]
        self._network(warm)

    def _network(self, warm) -> None:
        """The symbolic network, ξ, the data terms, the checkpoint and ‖b‖²."""
        problem, cfg = self.problem, self.config.training
        self.net = SymNet(
            problem.fields,
            problem.ops,
            NODES_PER_OP,
            cfg.depth if cfg.search else 2,
            COUNTS,
            seed=problem.seed,
            dtype=self.wdtype,
            input_scale=field_scales(
                np.column_stack([np.real(problem.obs.field(n)) for n in problem.obs.field_names])
            ),
        ).to(self.device)
        if not cfg.search:  # the ablation "without NAS": the complete network, fixed
            self.net.fixed = {
                "depth": self.net.max_depth,
                "counts": [[self.net.nodes_per_op] * len(self.net.ops)] * self.net.max_depth,
            }
        shape = (len(problem.lhs), self.net.width, len(self.A))
        self.xi = torch.nn.Parameter(torch.zeros(shape, dtype=self.wdtype, device=self.device))
        self.data = DataTerm(
            self.surrogate, warm.train, max_points=warm.max_points, seed=problem.seed
        )
        self.check = held_out_term(
            self.surrogate, warm.held, self.data.mode, warm.max_points, problem.seed
        )
        # The surrogate the final fit uses is the one with the lowest held-out data loss seen
        # in any phase (the warm-up's early-stopped one included): on noisy data the joint
        # phases can go on fitting the noise, and the final regression then differentiates it.
        self.best = BestCheckpoint(
            self.surrogate,
            getattr(self.surrogate, "validation_loss", math.inf),
            "warmup",
            self.config.training.warmup_epochs,
        )
        self.taken = self.best.buffers()  # the parameters a step's held-out loss is of
        with torch.no_grad():  # ℒ_weak is normalised by the warm-up surrogate's ‖b‖²
            Uc = self.surrogate.grid(self.quad.axes).to(self.wdtype)
            self.b_norm = (self.weak.lhs(Uc, self.field_index) ** 2).sum(0).clamp_min(1e-30)
        self.scale = None  # the preconditioner's factors (see set_scale)

    def mean_grid(self, axes, members: bool = True) -> torch.Tensor:
        """Û on a grid (*grid, fields): this run's surrogate, or with ``members`` the mean of
        it and :attr:`members` (no gradients flow to the members)."""
        U = self.surrogate.grid(axes)
        if not (members and self.members):
            return U
        with torch.no_grad():
            rest = sum(m.grid(axes).to(U.dtype) for m in self.members)
        return (U + rest) / (1 + len(self.members))

    def mean_jets(self, axes, orders, members: bool = True) -> torch.Tensor:
        """Û's derivatives ``orders`` on a grid (*grid, len(orders), fields), averaged over
        the surrogates like :meth:`mean_grid` (a derivative of the mean is the mean of the
        derivatives)."""
        J = self.surrogate.grid_jets(axes, orders)
        if not (members and self.members):
            return J
        rest = sum(m.grid_jets(axes, orders).to(J.dtype) for m in self.members)
        return (J + rest) / (1 + len(self.members))

    def make_tests(self, scale: str, n: int):
        """Test functions of radii ``scale`` over the quadrature grid's bounds."""
        tcfg = self.config.tests
        return make_tests(
            self.quad.bounds,
            n,
            tcfg.eta,
            self.problem.seed,
            self.bump,
            scale,
            self.radius,
            domain=self.problem.obs.domain,
            points=self._points() if tcfg.min_points else None,
            min_points=tcfg.min_points,
            floor=support_floor(self.quad.axes_np),
        )

    def _points(self) -> np.ndarray:
        """The observations' coordinates, (N, d) in the order of the quadrature bounds."""
        coords = self.problem.obs.coords
        return np.column_stack([np.asarray(coords[n], dtype=float) for n in self.quad.bounds])

    # ------------------------------------------------------------------ losses
    def data_losses(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """ℒ_data on the training points, and without gradient the same parameters' loss on
        the held-out points (None without them), for the checkpoint (:meth:`offer`)."""
        shared = self.data.shared()
        loss = self.data.loss(shared)
        held = None
        if self.check is not None:
            with torch.no_grad():
                held = self.check.loss(shared.detach() if shared is not None else None)
            self.best.take(self.taken)
        return loss, held

    def offer(self, held: float | None, phase: str, epoch: int) -> None:
        """Offer a step's held-out loss (:meth:`data_losses`) to the checkpoint with the
        parameters that step took."""
        if held is not None:
            self.best.offer(held, phase, epoch, taken=self.taken)

    def set_scale(self, G: torch.Tensor | None) -> None:
        """Fix the factors ξ = ξ̃·s with s = ‖b_e‖/‖G_sa‖ at the start of a phase (keeping ξ).

        The network's columns differ in size by orders of magnitude (ω³ next to ω_xx), and
        Adam moves every parameter by about the learning rate: unscaled, a step on the
        coefficient of a large column overshoots and the weak loss blows up (seen on
        Navier–Stokes). ξ̃ is then the term's contribution relative to the left-hand side,
        which is also what the L1 penalty of the pruning phase should weigh. The factors are
        constant within a phase: re-normalising every step would make a column's weight
        irrelevant, and L1 would shrink outputs to round-off that is then scaled back up."""
        if G is None:
            return
        with torch.no_grad():
            norms = G.norm(dim=0)  # (S, A)
            norms = norms.clamp_min(1e-6 * float(norms.max().clamp_min(1e-30)))
            new = (self.b_norm.sqrt()[:, None, None].to(norms.dtype) / norms[None]).to(
                self.xi.dtype
            )
            old = self.scale if self.scale is not None else 1.0
            self.xi.mul_(old / new)
            self.scale = new

    def effective_xi(self) -> torch.Tensor:
        return self.xi if self.scale is None else self.xi * self.scale

    def losses(self, held: bool = False):
        """(ℒ_data, ℒ_weak, G (K, S, A), b (K, E)) of the current parameters, with ``held``
        also the held-out loss (:meth:`data_losses`) last; the weak loss trains the surrogate
        as well as the network."""
        l_data, l_held = self.data_losses() if held else (self.data.loss(), None)
        Uc = self.surrogate.grid(self.quad.axes).to(self.wdtype)
        F = self.net(Uc)
        G = self.weak.columns(F)  # (K, S, A)
        b = self.weak.lhs(Uc, self.field_index)  # (K, E)
        rhs = torch.einsum("ksa,esa->ke", G, self.effective_xi())
        l_weak = (((rhs - b) ** 2).sum(0) / self.b_norm).mean()
        return (l_data, l_weak, G, b, l_held) if held else (l_data, l_weak, G, b)
