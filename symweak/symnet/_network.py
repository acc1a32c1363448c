"""The symbolic network Ψ (paper eq. (14)) with differentiable architecture search (eq. (24)-(26)).

Developer notes:

* Layer l: y = W z + b, then the operators: N_i nodes per operator type i, unary types first
  (each takes one slot of y), binary types after (two consecutive slots each). The operator
  layer is a SymPy expression graph compiled to torch by :mod:`symweak.compile`.
* Search: per layer and operator type, softmax weights α over candidate counts K (a node p
  of type i is kept with weight Σ_j α̂_j [p < k_j]); softmax β over depth, the output is
  Σ_l β̂_l z'^(l). After the search, counts = K[argmax α], depth = argmax β + 1.
* Fixed: hard 0/1 masks from the chosen counts; the output is the last layer's.
* :meth:`SymNet.expressions` reads the network back into SymPy with the trained weights
  (small weights dropped) and :meth:`SymNet.graph` gives it as a networkx DAG whose edges
  carry the weights.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx
import sympy
import torch
from torch import nn

from .._errors import SymweakError
from ..compile import compile_expressions
from ..grammar import OperatorSet
from ..operators import torch_functions

__all__ = ["SymNet", "field_scales"]

#: fields whose root mean square lies outside [1/FIELD_RANGE, FIELD_RANGE] enter the symbolic
#: network divided by the nearest power of ten (pressure in Pa, 1e4: the search's products
#: overflowed and discover stopped on a NaN); inside it they enter as given
FIELD_RANGE = 100.0

#: the network's exp takes its argument up to this value (e^20 ≈ 4.9e8): nested in three
#: layers, exp of exp overflowed float32 at the initial weights (a bistable field with
#: |u| up to 3.6, ops "+,-,*,exp") and the search stopped on a NaN; no term of a PDE fitted
#: to data of ordinary size needs more. The candidate library's eᵘ is not bounded, nor is
#: an exp the user registered.
EXP_CEILING = 20.0


def _bounded_exp(a: torch.Tensor) -> torch.Tensor:
    return torch.exp(torch.clamp(a, max=EXP_CEILING))


def field_scales(values) -> list[float]:
    """Per field (the columns of ``values``, shape (N, h)), the power of ten it is divided by
    before the symbolic network: 1 where its root mean square is within [1/FIELD_RANGE,
    FIELD_RANGE], otherwise 10^round(log10(rms))."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    out = []
    for column in values.reshape(len(values), -1).T:
        rms = float(np.sqrt(np.mean(column[np.isfinite(column)] ** 2))) if column.size else 1.0
        if rms > 0 and not (1.0 / FIELD_RANGE <= rms <= FIELD_RANGE):
            out.append(float(10.0 ** round(np.log10(rms))))
        else:
            out.append(1.0)
    return out


class SymNet(nn.Module):
    """Ψ_(W, b, α, β): R^h -> R^S with S = Σ_i N_i output nodes per layer."""

    def __init__(
        self,
        fields: Sequence[sympy.Expr],
        ops: OperatorSet,
        nodes_per_op: int = 3,
        depth: int = 3,
        counts: Sequence[int] = (0, 1, 2, 3),
        seed: int = 0,
        dtype: torch.dtype = torch.float64,
        init_scale: float = 0.5,
        input_scale: Sequence[float] | None = None,
    ) -> None:
        """``input_scale``: each field is divided by its entry before the first layer (and
        in :meth:`expressions`), so that fields of magnitude 1e4 do not overflow the
        products of the search (see :func:`field_scales`)."""
        super().__init__()
        if not len(ops):
            raise SymweakError("The operator set is empty.")
        if depth < 1 or nodes_per_op < 1:
            raise SymweakError("depth and nodes_per_op must be at least 1.")
        self.fields = list(fields)
        self.ops = list(ops.unary) + list(ops.binary)
        self.opset = ops
        self.nodes_per_op = nodes_per_op
        self.max_depth = depth
        self.counts = sorted({min(int(k), nodes_per_op) for k in counts})
        if not self.counts:
            raise SymweakError("counts must list at least one candidate node count.")
        self.width = nodes_per_op * len(self.ops)
        self.slots = sum(nodes_per_op * op.arity for op in self.ops)
        gen = torch.Generator().manual_seed(int(seed))
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        in_dim = len(self.fields)
        scales = [1.0] * in_dim if input_scale is None else [float(v) for v in input_scale]
        if len(scales) != in_dim or not all(v > 0 and v < float("inf") for v in scales):
            raise SymweakError(f"input_scale needs one positive number per field, got {scales}.")
        self.input_scale = scales
        self.register_buffer("_inv_scale", torch.tensor([1.0 / v for v in scales], dtype=dtype))
        for _ in range(depth):
            w = torch.randn(self.slots, in_dim, generator=gen, dtype=torch.float64) * init_scale
            self.weights.append(nn.Parameter(w.to(dtype)))
            self.biases.append(nn.Parameter(torch.zeros(self.slots, dtype=dtype)))
            in_dim = self.width
        self.alpha = nn.Parameter(torch.zeros(depth, len(self.ops), len(self.counts), dtype=dtype))
        self.beta = nn.Parameter(torch.zeros(depth, dtype=dtype))
        # the operator layer, as SymPy compiled to torch (shared by all layers)
        self.y_symbols = [sympy.Symbol(f"y{j}") for j in range(self.slots)]
        self.node_exprs = self._operator_exprs(self.y_symbols)
        self.op_layer = compile_expressions(
            self.node_exprs, self.y_symbols, dtype=dtype, trainable=False,
            user_ops=None if "exp" in torch_functions()[1] else {"exp": _bounded_exp},
        )  # fmt: skip
        self.fixed: dict | None = None  # {"depth": L, "counts": [[n_i per type] per layer]}
        self._masks: dict[tuple, torch.Tensor] = {}  # mask tensors per architecture

    # ------------------------------------------------------------------ structure
    def _operator_exprs(self, y: Sequence[sympy.Expr]) -> list[sympy.Expr]:
        out, j = [], 0
        for op in self.ops:
            for _ in range(self.nodes_per_op):
                if op.arity == 1:
                    out.append(op.sympy_fn(y[j]))
                    j += 1
                else:
                    out.append(op.sympy_fn(y[j], y[j + 1]))
                    j += 2
        return out

    def soft_masks(self) -> torch.Tensor:
        """(depth, width) node weights Σ_j α̂_j [p < k_j] for every layer."""
        probs = torch.softmax(self.alpha, dim=-1)  # (L, types, counts)
        key = ("keep", probs.device, probs.dtype)
        keep = self._masks.get(key)
        if keep is None:  # made once: a tensor of Python values is a copy to the device
            p = torch.arange(self.nodes_per_op, device=probs.device)
            counts = torch.tensor(self.counts, device=probs.device)
            keep = self._masks[key] = (p[None, :] < counts[:, None]).to(probs.dtype)
        masks = torch.einsum("ltc,cp->ltp", probs, keep)  # (L, types, N)
        return masks.reshape(self.max_depth, self.width)

    def hard_masks(self) -> torch.Tensor:
        if self.fixed is None:
            raise SymweakError("The architecture is not fixed yet; call fix_architecture().")
        counts = tuple(tuple(int(n) for n in layer) for layer in self.fixed["counts"])
        key = (counts, self.alpha.device, self.alpha.dtype)
        masks = self._masks.get(key)
        if masks is None:  # once per architecture (see soft_masks)
            rows = []
            for layer_counts in counts:
                row = []
                for n in layer_counts:
                    row += [1.0] * n + [0.0] * (self.nodes_per_op - n)
                rows.append(row)
            masks = torch.tensor(rows, dtype=self.alpha.dtype, device=self.alpha.device)
            self._masks[key] = masks
        return masks

    def fix_architecture(self, margin: float = 0.1) -> dict:
        """Read the discrete architecture off α and β (paper section 4.4.1) and fix it.

        The count of each operator type is K[argmax α̂] when that choice is clear (its weight
        beats the runner-up by ``margin``); when the search left α̂ nearly uniform, argmax would
        pick by noise, so the expected count Σ_j α̂_j K_j (rounded up) is used and pruning
        removes what is not needed. The depth is argmax β̂.
        """
        if not (torch.isfinite(self.alpha).all() and torch.isfinite(self.beta).all()):
            raise SymweakError(
                "The architecture search diverged: its operator weights are not finite (an "
                "operator overflowed on these data). Try an operator set without the fastest-"
                "growing operator (exp, ^4), fewer layers (depth=2), or fields of order one."
            )
        k = torch.tensor(self.counts, dtype=self.alpha.dtype, device=self.alpha.device)
        with torch.no_grad():
            probs = torch.softmax(self.alpha, dim=-1)  # (L, types, counts)
            top2 = probs.topk(min(2, probs.shape[-1]), dim=-1).values
            clear = (top2[..., 0] - top2[..., -1]) >= margin
            expected = torch.ceil((probs * k).sum(-1) - 1e-9)
            chosen = torch.where(clear, k[probs.argmax(dim=-1)], expected)
            depth = int(self.beta.argmax()) + 1
        counts = [[int(c) for c in row] for row in chosen[:depth].tolist()]
        self.fixed = {"depth": depth, "counts": counts}
        return self.describe()

    def describe(self) -> dict:
        if self.fixed is None:
            return {"search": True, "max_depth": self.max_depth}
        layers = []
        for counts in self.fixed["counts"]:
            layers.append({op.symbol: n for op, n in zip(self.ops, counts) if n})
        return {"depth": self.fixed["depth"], "layers": layers}

    # ------------------------------------------------------------------ evaluation
    def _layer(self, l: int, z: torch.Tensor) -> torch.Tensor:
        """One layer on node-major values: z (inputs, M) -> (width, M). Node-major keeps each
        node's values contiguous, so that the operators run on whole rows (2.3x faster on the
        CPU than on strided columns of a point-major layout)."""
        y = torch.addmm(self.biases[l][:, None], self.weights[l], z)
        return self.op_layer.rows(y)

    def forward(self, U: torch.Tensor) -> torch.Tensor:
        """F(U) of shape (..., width) for field values U of shape (..., h); the result is a
        transposed view of node-major values (``movedim(F, -1, 0)`` is contiguous)."""
        batch = U.shape[:-1]
        z = U if all(v == 1.0 for v in self.input_scale) else U * self._inv_scale.to(U.dtype)
        z = z.reshape(-1, z.shape[-1]).T
        if self.fixed is None:
            masks = self.soft_masks()
            beta = torch.softmax(self.beta, dim=0)
            out = 0.0
            for l in range(self.max_depth):
                z = self._layer(l, z) * masks[l][:, None]
                out = out + beta[l] * z
        else:
            masks = self.hard_masks()
            for l in range(self.fixed["depth"]):
                z = self._layer(l, z) * masks[l][:, None]
            out = z
        return out.T.reshape(*batch, self.width)

    def l1(self) -> torch.Tensor:
        """Σ|W| + Σ|b| over the layers in use."""
        depth = self.fixed["depth"] if self.fixed is not None else self.max_depth
        total = 0.0
        for l in range(depth):
            total = total + self.weights[l].abs().sum() + self.biases[l].abs().sum()
        return total

    # ------------------------------------------------------------------ read-back
    def expressions(self, tol: float = 1e-3) -> list[sympy.Expr]:
        """The output nodes as SymPy expressions of the fields, with the trained weights.

        Weights with |w| < tol·max|W| of their layer are dropped (pruned connections).
        Inactive nodes give 0.
        """
        if self.fixed is None:
            raise SymweakError("Fix the architecture before reading expressions back.")
        masks = self.hard_masks().cpu().tolist()
        z: list[sympy.Expr] = [
            f if v == 1.0 else f / sympy.Integer(v) if float(v).is_integer() else f / sympy.Float(v)
            for f, v in zip(self.fields, self.input_scale)
        ]
        for l in range(self.fixed["depth"]):
            W = self.weights[l].detach().double().cpu()
            b = self.biases[l].detach().double().cpu()
            cut = tol * float(max(W.abs().max(), b.abs().max(), 1e-300))
            y = []
            for j in range(self.slots):
                acc = sympy.Integer(0)
                for i, zi in enumerate(z):
                    w = float(W[j, i])
                    if abs(w) >= cut and zi != 0:
                        acc += sympy.Float(w) * zi
                bj = float(b[j])
                if abs(bj) >= cut:
                    acc += sympy.Float(bj)
                y.append(acc)
            nodes = self._operator_exprs(y)
            z = [n if masks[l][k] > 0 else sympy.Integer(0) for k, n in enumerate(nodes)]
        return z

    def graph(self) -> nx.DiGraph:
        """The fixed network as a DAG: fields -> slots (edges carry W, b) -> operator nodes."""
        if self.fixed is None:
            raise SymweakError("Fix the architecture before building its graph.")
        g = nx.DiGraph()
        masks = self.hard_masks().cpu().tolist()
        prev = [("field", str(f.func.__name__)) for f in self.fields]
        for n in prev:
            g.add_node(n, kind="field")
        for l in range(self.fixed["depth"]):
            W = self.weights[l].detach().double().cpu()
            b = self.biases[l].detach().double().cpu()
            slot_nodes = []
            for j in range(self.slots):
                node = ("slot", l, j)
                g.add_node(node, kind="linear", bias=float(b[j]), symbol=f"b_{l}_{j}")
                for i, src in enumerate(prev):
                    g.add_edge(src, node, weight=float(W[j, i]), symbol=f"W_{l}_{j}_{i}")
                slot_nodes.append(node)
            out_nodes = []
            j = 0
            for t, op in enumerate(self.ops):
                for p in range(self.nodes_per_op):
                    k = t * self.nodes_per_op + p
                    node = ("op", l, k)
                    g.add_node(node, kind="operator", op=op.name, active=bool(masks[l][k]))
                    for _ in range(op.arity):
                        g.add_edge(slot_nodes[j], node)
                        j += 1
                    out_nodes.append(node)
            prev = out_nodes
        return g
