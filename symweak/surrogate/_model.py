"""The forward response learner Û = MLP_θ(FE_φ(t, X)) (paper section 4.3.1–4.3.2).

Inputs are normalised to [-1, 1] per coordinate from the observations' domain; outputs are
standardised per field (mean and standard deviation of the observed values), so the same
hyperparameters work whatever the units.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import torch
from torch import nn

from .._errors import SymweakError
from ..data import check_float32
from ._embedding import GaussianEmbedding

__all__ = ["MLP", "Surrogate", "choose_device", "plain_mlp_like"]

#: no Gaussian starts narrower along a coordinate than this share of the gap between the
#: data's distinct values around its centre. Clean decay with diffusion seen at 5, 6 or 8
#: snapshots (250 Gaussians, 0.19 of [-1, 1] against 0.29-0.5 between snapshots): 0 of 9
#: runs exact without it, 3 with 0.75, 9 with 1; but 1 also widened the 64 Gaussians of the
#: scratch-assay twin's five noisy snapshots (0.375 → 0.5) and lost two of its six honest
#: runs (docs/decisions.md)
GAP_SHARE = 0.75
#: ... on a coordinate the data hold at this many distinct values or fewer (a few snapshots
#: or sensors). Twelve snapshots at scattered times already came back right (heat
#: 1.504 u_xx for 1.5), and widening by their gaps gave 1.247 u_xx (Airy E∞ 0.015 → 0.058)
FEW_VALUES = 10


def choose_device(device=None) -> torch.device:
    """``None``/``"auto"``: CUDA when available, else CPU."""
    if device in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise SymweakError("device='cuda' was asked for but torch sees no CUDA device.")
    return dev


class _Sin(nn.Module):
    def forward(self, x):
        return torch.sin(x)


_ACTIVATIONS = {"tanh": nn.Tanh, "sin": _Sin, "gelu": nn.GELU}


class MLP(nn.Sequential):
    """``inputs -> [Linear, activation] * layers -> Linear -> outputs``."""

    def __init__(
        self, inputs: int, outputs: int, hidden: int = 32, layers: int = 2, activation: str = "tanh"
    ):
        if activation not in _ACTIVATIONS:
            raise SymweakError(
                f"activation must be one of {sorted(_ACTIVATIONS)}, got {activation!r}."
            )
        mods: list[nn.Module] = []
        width = inputs
        for _ in range(layers):
            mods += [nn.Linear(width, hidden), _ACTIVATIONS[activation]()]
            width = hidden
        mods.append(nn.Linear(width, outputs))
        super().__init__(*mods)


class Surrogate(nn.Module):
    """Û(t, X): Gaussian embedding + lightweight MLP (or a plain MLP with ``kernels=0``).

    Parameters
    ----------
    bounds: ``{"t": (t0, t1), "x": (x0, x1), ...}``; inputs are mapped to [-1, 1].
    fields: output field names; ``mean``/``std`` standardise each output.
    kernels, features: N Gaussians per feature and d' features (paper: 1000 and 4);
        ``kernels=0`` gives the paper's ablation "without FE_φ" (MLP on the coordinates).
    full: full (rotated) covariances instead of diagonal ones.
    hidden, layers, activation: the MLP (paper: 32, 2, tanh; sin for NS).
    """

    def __init__(
        self,
        bounds: Mapping[str, tuple[float, float]],
        fields: Sequence[str],
        *,
        mean: Sequence[float] | None = None,
        std: Sequence[float] | None = None,
        kernels: int = 1000,
        features: int = 4,
        full: bool = False,
        hidden: int = 32,
        layers: int = 2,
        activation: str = "tanh",
        width: float = 1.5,
        seed: int = 0,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        self.coord_names = tuple(bounds)
        self.field_names = tuple(fields)
        self.config = {
            "kernels": kernels,
            "features": features,
            "full": full,
            "hidden": hidden,
            "layers": layers,
            "activation": activation,
            "width": width,
            "seed": seed,
        }
        lo = torch.tensor([float(bounds[n][0]) for n in self.coord_names], dtype=torch.float64)
        hi = torch.tensor([float(bounds[n][1]) for n in self.coord_names], dtype=torch.float64)
        if torch.any(hi <= lo):
            raise SymweakError("Surrogate bounds must have positive extent on every coordinate.")
        self.register_buffer("lo", lo.to(dtype))
        self.register_buffer("hi", hi.to(dtype))
        h = len(self.field_names)
        self.register_buffer(
            "out_mean", torch.tensor(mean if mean is not None else [0.0] * h, dtype=dtype)
        )
        self.register_buffer(
            "out_std", torch.tensor(std if std is not None else [1.0] * h, dtype=dtype)
        )
        gen = torch.Generator().manual_seed(int(seed))
        dim = len(self.coord_names)
        torch.manual_seed(int(seed))  # nn.Linear initialisation
        if kernels > 0:
            self.embedding: GaussianEmbedding | None = GaussianEmbedding(
                dim, features, kernels, full=full, width=width, generator=gen, dtype=dtype
            )
            self.mlp = MLP(features, h, hidden, layers, activation)
        else:
            self.embedding = None
            self.mlp = MLP(dim, h, hidden, layers, activation)
        self.mlp.to(dtype)

    # ------------------------------------------------------------------ evaluation
    def normalise(self, x: torch.Tensor) -> torch.Tensor:
        return 2.0 * (x - self.lo) / (self.hi - self.lo) - 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Fields at physical points ``x`` (n, D) -> (n, h)."""
        z = self.normalise(x)
        return self.head(self.embedding(z) if self.embedding is not None else z)

    def head(self, feats: torch.Tensor) -> torch.Tensor:
        """The MLP and the output scaling: features (..., d') -> fields (..., h)."""
        return self.mlp(feats) * self.out_std + self.out_mean

    def grid_features(self, axes: Sequence[torch.Tensor]) -> torch.Tensor:
        """The MLP's inputs on a rectilinear grid -> (*shape, d'): the embedding's features
        (separable) or, without an embedding, the normalised coordinates. ``head`` of a
        subset of them is the surrogate at those grid points."""
        normed = [
            2.0 * (a - self.lo[i]) / (self.hi[i] - self.lo[i]) - 1.0 for i, a in enumerate(axes)
        ]
        if self.embedding is not None:
            return self.embedding.grid(list(normed))
        return torch.stack(torch.meshgrid(*normed, indexing="ij"), dim=-1)

    def grid(self, axes: Sequence[torch.Tensor], chunk_points: int = 500_000) -> torch.Tensor:
        """Fields on a rectilinear grid -> (*shape, h), using the separable embedding.

        Grids larger than ``chunk_points`` are evaluated in slabs along the first axis with
        activation checkpointing when gradients are needed, so memory holds the output and
        one slab's activations (recomputed in the backward pass), not the whole grid's.
        """
        size = 1
        for a in axes:
            size *= int(a.numel())
        n0 = int(axes[0].numel())
        if size > chunk_points and n0 > 1:
            from torch.utils.checkpoint import checkpoint

            per = max(1, chunk_points // max(size // n0, 1))
            need_grad = torch.is_grad_enabled() and any(p.requires_grad for p in self.parameters())
            slabs = []
            for start in range(0, n0, per):
                sub = [axes[0][start : start + per], *axes[1:]]
                if need_grad:
                    slabs.append(checkpoint(self._grid, *sub, use_reentrant=False))
                else:
                    slabs.append(self._grid(*sub))
            return torch.cat(slabs, dim=0)
        return self._grid(*axes)

    def _grid(self, *axes: torch.Tensor) -> torch.Tensor:
        return self.head(self.grid_features(axes))

    def grid_jets(
        self,
        axes: Sequence[torch.Tensor],
        orders: Sequence[tuple[int, ...]],
        chunk_points: int = 250_000,
    ) -> torch.Tensor:
        """Derivatives of the fields on a rectilinear grid -> (*shape, len(orders), h).

        ``orders[j]`` is a multi-index along the coordinates ((0, 2): ∂²/∂x²). Each grid
        value depends on its own coordinates only, so a forward-mode derivative along an
        axis (tangent 1 on that axis' nodes) is the pointwise partial derivative; orders
        above one nest the forward passes. Exact for the surrogate (no finite differences),
        evaluated in slabs along the first axis; no gradients flow to the parameters."""
        from torch.func import jvp

        def along(fn, axis: int):
            def d(*ax):
                tangents = tuple(
                    torch.ones_like(a) if i == axis else torch.zeros_like(a)
                    for i, a in enumerate(ax)
                )
                return jvp(fn, ax, tangents)[1]

            return d

        fns = []
        for alpha in orders:
            if len(alpha) != len(self.coord_names):
                raise SymweakError(
                    f"Multi-index {tuple(alpha)} needs one entry per coordinate {self.coord_names}."
                )
            fn = self._grid
            for axis, n in enumerate(alpha):
                for _ in range(int(n)):
                    fn = along(fn, axis)
            fns.append(fn)
        n0 = int(axes[0].numel())
        rest = max(1, math.prod(int(a.numel()) for a in axes[1:]))
        per = max(1, chunk_points // rest)
        slabs = []
        with torch.no_grad():
            for start in range(0, n0, per):
                sub = (axes[0][start : start + per], *axes[1:])
                slabs.append(torch.stack([fn(*sub) for fn in fns], dim=-2))
        return torch.cat(slabs, dim=0)

    @property
    def device(self) -> torch.device:
        return self.lo.device

    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    # ------------------------------------------------------------------ NumPy helpers
    def predict(self, coords: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``{"u": values}`` at points given as ``{"t": t, "x": x}`` (1-D arrays)."""
        missing = [n for n in self.coord_names if n not in coords]
        if missing:
            raise SymweakError(
                f"predict needs coordinates {list(self.coord_names)}; missing {missing}."
            )
        unknown = sorted(set(coords) - set(self.coord_names))
        if unknown:
            raise SymweakError(
                f"predict: unknown coordinate(s) {unknown}; the surrogate's coordinates are "
                f"{list(self.coord_names)}."
            )
        arrays = [np.asarray(coords[n], dtype=np.float64).ravel() for n in self.coord_names]
        if len({a.size for a in arrays}) != 1:
            sizes = ", ".join(f"{n} {a.size}" for n, a in zip(self.coord_names, arrays))
            raise SymweakError(f"predict: coordinate arrays must have the same length ({sizes}).")
        for n, a in zip(self.coord_names, arrays):
            bad = ~np.isfinite(a)
            if bad.any():
                raise SymweakError(
                    f"predict: coordinate {n} holds NaN or inf at {int(bad.sum())} point(s) "
                    f"(first: index {int(np.argmax(bad))}); give finite coordinates."
                )
        x = torch.as_tensor(np.stack(arrays, axis=1), dtype=self.lo.dtype, device=self.device)
        with torch.no_grad():
            out = self.forward(x).double().cpu().numpy()
        return {n: out[:, i] for i, n in enumerate(self.field_names)}

    def predict_grid(self, axes: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``{"u": array of shape (len(t), len(x), ...)}`` on a rectilinear grid."""
        tensors = [
            torch.as_tensor(
                np.asarray(axes[n], dtype=np.float64), dtype=self.lo.dtype, device=self.device
            )
            for n in self.coord_names
        ]
        with torch.no_grad():
            out = self.grid(tensors).double().cpu().numpy()
        return {n: out[..., i] for i, n in enumerate(self.field_names)}

    def predict_points(self, obs) -> dict[str, np.ndarray]:
        """Predictions at the points of some observations.

        Points that fill a good part of a grid are evaluated on the grid (separable, chunked)
        and indexed: for a whole 2-D-space benchmark grid (millions of points) that is seconds
        instead of the many minutes of point-wise Gaussians."""
        grid = obs.grid
        if grid is not None and tuple(grid.names) == tuple(self.coord_names):
            size = int(np.prod([len(a) for a in grid.axes.values()]))
            if 4 * len(obs) >= size:
                full = self.predict_grid(grid.axes)
                return {n: v.reshape(-1)[obs.grid_index] for n, v in full.items()}
        return self.predict(obs.coords)

    # ------------------------------------------------------------------ fitting
    @classmethod
    def for_observations(cls, obs, **options) -> Surrogate:
        if obs.is_complex:
            raise SymweakError("Split complex fields first: obs.split_complex({...}).")
        if options.get("dtype", torch.float32) == torch.float32:
            check_float32(obs.coords)
        bounds = obs.bounds
        mean = [float(np.mean(obs.fields[f])) for f in obs.field_names]
        std = [float(np.std(obs.fields[f])) or 1.0 for f in obs.field_names]
        between = options.pop("between_samples", True)
        model = cls(bounds, obs.field_names, mean=mean, std=std, **options)
        if between and model.embedding is not None and not model.embedding.full:
            model.start_between_samples(obs)
        return model

    def start_between_samples(self, obs) -> None:
        """No Gaussian starts narrower along a coordinate the data hold at ``FEW_VALUES``
        (10) distinct values or fewer than ``GAP_SHARE`` (3/4) of the gap between those
        values around its centre: between five snapshots, Gaussians sized by their count
        alone (1.5 × 2/N^{1/D} of [-1, 1]) bend the field where no data hold it (clean decay
        with diffusion: 47 % off halfway between snapshots, 10 % with this). Point columns
        of a grid, twelve snapshots or 24 sensors are left as they are."""
        lo = self.lo.double().cpu().numpy()
        hi = self.hi.double().cpu().numpy()
        knots = []
        for i, name in enumerate(self.coord_names):
            values = np.unique(np.asarray(obs.coords[name], dtype=np.float64))
            few = values.size <= FEW_VALUES
            knots.append(2.0 * (values - lo[i]) / (hi[i] - lo[i]) - 1.0 if few else None)
        self.embedding.start_between(knots, GAP_SHARE)

    def fit(
        self,
        obs,
        epochs: int = 1500,
        lr: float = 1e-2,
        validation: float = 0.1,
        seed: int = 0,
        progress: bool = False,
        callback=None,
        max_points: int | None = None,
        patience: int | None = None,
    ) -> list[float]:
        """Fit to the observations (data loss only, paper eq. (16)); returns the loss history.

        A seeded fraction ``validation`` of the points is held out; the parameters with the
        lowest held-out loss are kept (early stopping), which stops the embedding from
        fitting the noise. When the observations lie on a grid, each step evaluates the
        surrogate on that grid (the separable fast path) and compares at the observed points.
        Ctrl-C stops the fit with the best parameters so far (``self.interrupted``).
        ``patience``: stop once the held-out loss has not improved for that many epochs (the
        parameters kept are the same as a full fit's unless the held-out loss would have
        improved again after such a gap); ``self.stopped_at`` is then the epochs run.
        """
        from .._trainer import BestCheckpoint, Step, cosine_adam, cuda_graphs, train_loop
        from ._data import DataTerm, held_out_term, split_points

        train, held = split_points(obs, validation, seed)
        data = DataTerm(self, train, max_points=max_points, seed=seed)
        check = held_out_term(self, held, data.mode, max_points, seed)
        best = BestCheckpoint(self)
        taken = best.buffers()
        opt, advance = cosine_adam(self, lr, epochs, cuda_graphs(self.device))

        def body():
            shared = data.shared()
            loss = data.loss(shared)
            loss.backward()
            opt.step()
            if check is None:
                return loss.detach()[None]
            with torch.no_grad():  # the stepped parameters (the features of before the step)
                held = check.loss(shared.detach() if shared is not None else None)
            best.take(taken)
            return torch.stack([loss.detach(), held])

        once = Step(body, opt, self.device)

        def step(epoch: int) -> float:
            value, *held = once().tolist()  # one read from the device per step
            advance()
            if held:
                best.offer(held[0], epoch=epoch, taken=taken)
            if callback is not None:
                callback(epoch, value)
            return value

        n = self.config["kernels"]
        run = train_loop(
            epochs,
            step,
            desc=f"surrogate N={n}" if n else "surrogate",
            progress=progress,
            postfix=lambda epoch, value: {"loss": f"{value:.3e}"},
            every=50,
            stop=None
            if check is None or not patience
            else lambda epoch: epoch - best.epoch >= patience,
        )
        if check is not None:  # early stopping on the held-out points
            best.restore()
        self.fit_seconds = run.seconds
        self.validation_loss = best.loss
        #: True when Ctrl-C stopped the fit (the best parameters so far are kept)
        self.interrupted = run.interrupted
        self.stopped_at = run.stopped
        #: the epoch whose parameters were kept (the lowest held-out loss)
        self.best_epoch = best.epoch
        return run.records

    def point_errors(self, obs) -> np.ndarray:
        """Squared error at each observed point, on standardised fields and averaged over
        the fields (the data loss ℒ_data is its mean): what compares two surrogates point by
        point on the same held-out observations."""
        pred = self.predict_points(obs)
        std = self.out_std.double().cpu().numpy()
        errors = [
            ((pred[f] - np.asarray(obs.field(f), dtype=np.float64)) / std[i]) ** 2
            for i, f in enumerate(self.field_names)
        ]
        return np.mean(errors, axis=0)


def plain_mlp_like(model: Surrogate, activation: str = "tanh") -> dict:
    """Options for a plain MLP (``kernels=0``) with about as many parameters as ``model``."""
    target = model.n_parameters()
    dim, h = len(model.coord_names), len(model.field_names)
    layers = model.config["layers"] + 1
    # parameters ≈ dim·w + (layers-1)·w² + layers·w + w·h + h; solve for w
    a, b = layers - 1, dim + layers + h
    width = int((-b + math.sqrt(b * b + 4 * a * max(target - h, 1))) / (2 * a))
    return {"kernels": 0, "hidden": max(width, 4), "layers": layers, "activation": activation}
