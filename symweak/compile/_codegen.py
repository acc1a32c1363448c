"""SymPy expressions -> torch modules by lambdify-style code generation, and back.

Developer notes:

* One table maps a SymPy class to a torch expression template; user operators registered
  in ``symweak.grammar`` (``register_operator``) override built-ins through a ChainMap.
* Shared subexpressions are computed once (``sympy.cse``); n-ary Add/Mul are folded.
* Every ``Float`` becomes a trainable parameter created directly in the training dtype
  (float64 available, so the round trip is exact); integers and rationals stay literals.
* ``Derivative(u, x)`` atoms become named inputs: the caller supplies their values.
* ``.sympy()`` rebuilds the expressions with the current parameter values.
* ``.rows(X)`` evaluates from one stacked input with one torch op per group of
  expressions of the same form (the symbolic network's nodes), generated beside the
  per-expression code.
"""

from __future__ import annotations

import itertools
from collections import ChainMap
from collections.abc import Callable, Mapping, Sequence

import sympy
import torch
from sympy.core.function import AppliedUndef
from torch import nn

from .._errors import SymweakError
from ..operators import torch_functions

__all__ = ["CompiledExpressions", "compile_expressions", "input_name"]


def _is_field(a) -> bool:
    return isinstance(a, AppliedUndef) and all(isinstance(arg, sympy.Symbol) for arg in a.args)


def input_name(atom: sympy.Basic) -> str:
    """A Python identifier for an input: ``u(t, x) -> u``, ``Derivative(u, (x, 2)) -> u_xx``."""
    if isinstance(atom, AppliedUndef):
        return atom.func.__name__
    if isinstance(atom, sympy.Derivative) and isinstance(atom.expr, AppliedUndef):
        suffix = "".join(str(v) * int(n) for v, n in atom.variable_count)
        return f"{atom.expr.func.__name__}_{suffix}"
    if isinstance(atom, sympy.Symbol):
        return str(atom)
    raise SymweakError(f"{atom} cannot be an input of a compiled expression.")


class _Printer:
    """Turns a SymPy tree into a torch expression string (recursive, table-driven)."""

    def __init__(self, names: Mapping[sympy.Basic, str], user_ops: Mapping[str, Callable]) -> None:
        self.names = dict(names)
        self.user_ops = user_ops
        self.floats: list[float] = []
        self.float_index: dict[sympy.Float, int] = {}
        self.calls: dict[str, Callable] = {}

    def __call__(self, e: sympy.Basic) -> str:
        if e in self.names:
            return self.names[e]
        if isinstance(e, sympy.Float):
            if e not in self.float_index:
                self.float_index[e] = len(self.floats)
                self.floats.append(float(e))
            return f"c[{self.float_index[e]}]"
        if isinstance(e, (sympy.Integer, sympy.Rational)):
            return repr(float(e)) if not isinstance(e, sympy.Integer) else f"{int(e)}.0"
        if e in (sympy.pi, sympy.E):
            return repr(float(e))
        if isinstance(e, sympy.Add):
            return "(" + " + ".join(self(a) for a in e.args) + ")"
        if isinstance(e, sympy.Mul):
            return "(" + " * ".join(self(a) for a in e.args) + ")"
        if isinstance(e, sympy.Pow):
            base, ex = self(e.base), e.exp
            if ex == sympy.Rational(1, 2):
                return f"torch.sqrt({base})"
            if ex == -1:
                return f"(1.0 / {base})"
            if ex.is_Integer and 1 < int(ex) <= 6:
                return "(" + " * ".join([base] * int(ex)) + ")"
            return f"({base} ** {self(ex)})"
        if isinstance(e, sympy.Function):
            name = type(e).__name__
            if name in self.user_ops:
                key = f"op_{name}"
                self.calls[key] = self.user_ops[name]
                return f"{key}(" + ", ".join(self(a) for a in e.args) + ")"
            for cls, tname in torch_functions()[0].items():
                if isinstance(e, cls):
                    return f"torch.{tname}(" + ", ".join(self(a) for a in e.args) + ")"
            raise SymweakError(
                f"Cannot compile the function `{name}` to torch: it is neither built in nor a "
                f"registered operator. Register it with symweak.register_operator('{name}', "
                "arity, sympy_fn, torch_fn)."
            )
        if isinstance(e, sympy.Derivative):
            raise SymweakError(f"{e} is not an input of this compiled function; list it in inputs.")
        raise SymweakError(f"Cannot compile {type(e).__name__} `{e}` to torch.")


class CompiledExpressions(nn.Module):
    """A torch module evaluating several SymPy expressions (generated code, trainable floats).

    Call it with tensors for the inputs, in ``input_names`` order (or as keywords); it
    returns a tensor of shape ``(*batch, len(expressions))``.
    """

    def __init__(
        self,
        exprs: Sequence[sympy.Expr],
        inputs: Sequence[sympy.Basic],
        *,
        dtype: torch.dtype = torch.float64,
        trainable: bool = True,
        user_ops: Mapping[str, Callable] | None = None,
    ) -> None:
        super().__init__()
        # what __reduce__ compiles again (the generated function itself does not pickle)
        self._options = {"dtype": dtype, "trainable": trainable, "user_ops": user_ops}
        self.exprs = [sympy.sympify(e) for e in exprs]
        self.inputs = list(inputs)
        self.input_names = [input_name(a) for a in self.inputs]
        if len(set(self.input_names)) != len(self.input_names):
            raise SymweakError(f"Inputs have clashing names: {self.input_names}.")
        ops = ChainMap(
            dict(user_ops or {}),
            torch_functions()[1],  # user-registered rows
        )
        # every field or derivative used must be an input
        dummies = {a: sympy.Dummy() for a in self.inputs}
        leftover = set()
        for e in self.exprs:
            rest = e.xreplace({a: d for a, d in dummies.items() if isinstance(a, sympy.Derivative)})
            rest = rest.xreplace(dummies)
            leftover |= {
                a
                for a in rest.atoms(AppliedUndef)
                if _is_field(a) and not any(isinstance(g, sympy.Dummy) for g in a.args)
            }
            leftover |= rest.atoms(sympy.Derivative)
        if leftover:
            raise SymweakError(
                f"Expressions use {sorted(map(str, leftover))}, which are not inputs "
                f"({self.input_names})."
            )
        # inputs become plain symbols x0, x1, ... (derivatives first, so the fields inside
        # them are not replaced separately) before common subexpressions are extracted
        plain = {a: sympy.Symbol(f"x{i}") for i, a in enumerate(self.inputs)}
        order = sorted(self.inputs, key=lambda a: not isinstance(a, sympy.Derivative))
        flat = []
        for e in self.exprs:
            for a in order:
                e = e.xreplace({a: plain[a]})
            flat.append(e)
        names = {sym: str(sym) for sym in plain.values()}
        symbols = (sympy.Symbol(f"_s{i}") for i in itertools.count())
        replacements, reduced = sympy.cse(flat, symbols=symbols)
        printer = _Printer(names, ops)
        lines = []
        for sym, sub in replacements:
            lines.append(f"    {sym} = {printer(sub)}")
            printer.names[sym] = str(sym)
        outs = [printer(e) for e in reduced]
        args = "".join(f"x{i}, " for i in range(len(self.inputs)))
        body = "\n".join(lines) or "    pass"
        self.source = f"def _generated({args}c):\n{body}\n    return [{', '.join(outs)}]\n"
        namespace: dict = {"torch": torch, **printer.calls}
        exec(compile(self.source, "<symweak-codegen>", "exec"), namespace)
        self._fn = namespace["_generated"]
        self._floats = list(printer.float_index)
        self._grouped = _grouped(flat, len(self.inputs), ops)
        if self._grouped is not None:
            for k, index in enumerate(self._grouped[1]):
                self.register_buffer(f"_gather{k}", index, persistent=False)
            if self._grouped[2] is not None:
                self.register_buffer("_order", self._grouped[2], persistent=False)
        values = torch.tensor(printer.floats, dtype=dtype)
        if trainable:
            self.constants = nn.Parameter(values)
        else:
            self.register_buffer("constants", values)

    def __reduce__(self):
        """Pickled as its expressions, inputs and options (compiled again when loaded, so
        user operators must be registered there too) and its constants."""
        return _compiled_again, (self.exprs, self.inputs, self._options, self.state_dict())

    def forward(self, *args: torch.Tensor, **kwargs: torch.Tensor) -> torch.Tensor:
        if kwargs:
            missing = [n for n in self.input_names if n not in kwargs]
            if missing:
                raise SymweakError(f"Missing inputs {missing}; expected {self.input_names}.")
            args = tuple(kwargs[n] for n in self.input_names)
        if len(args) != len(self.inputs):
            raise SymweakError(f"Expected inputs {self.input_names}, got {len(args)} tensors.")
        c = self.constants
        args = tuple(torch.as_tensor(a, dtype=c.dtype, device=c.device) for a in args)
        shape = torch.broadcast_shapes(*(a.shape for a in args)) if args else ()
        outs = self._fn(*args, c)
        return torch.stack(
            [
                torch.broadcast_to(torch.as_tensor(o, dtype=c.dtype, device=c.device), shape)
                for o in outs
            ],
            dim=-1,
        )

    def rows(self, X: torch.Tensor) -> torch.Tensor:
        """The same values from the inputs stacked on the FIRST axis, X (inputs, ...) ->
        (expressions, ...), with one torch operation per group of expressions of the same
        form (the three sin(y_j) nodes of a layer are one torch.sin of three rows) instead of
        one per expression; each row is contiguous when X is, which the elementwise kernels
        need to be fast on the CPU. The per-expression call when the expressions hold
        trainable constants or one of them uses no input."""
        if X.shape[0] != len(self.inputs):
            raise SymweakError(
                f"Expected {len(self.inputs)} input rows {self.input_names}, got {X.shape[0]}."
            )
        if self._grouped is None:
            return torch.movedim(self(*X.unbind(0)), -1, 0)
        fn, index, order = self._grouped
        gathers = [getattr(self, f"_gather{k}") for k in range(len(index))]
        out = fn(X.to(self.constants.dtype), gathers)
        return out if order is None else out[self._order]

    def columns(self, X: torch.Tensor) -> torch.Tensor:
        """:meth:`rows` with the inputs on the last axis: X (..., inputs) -> (..., expressions)."""
        return torch.movedim(self.rows(torch.movedim(X, -1, 0)), 0, -1)

    def sympy(self) -> list[sympy.Expr]:
        """The expressions with the current (trained) constants, exact in float64."""
        values = self.constants.detach().double().cpu().tolist()
        mapping = {old: sympy.Float(v, precision=53) for old, v in zip(self._floats, values)}
        return [e.xreplace(mapping) for e in self.exprs]


def _placeholders(e: sympy.Expr, inputs: set) -> list[sympy.Symbol]:
    """The input symbols of ``e`` in the order they are first met (pre-order)."""
    seen: dict = {}
    for node in sympy.preorder_traversal(e):
        if node in inputs:
            seen.setdefault(node, None)
    return list(seen)


def _grouped(flat: list[sympy.Expr], n_inputs: int, ops):
    """Code evaluating ``flat`` (expressions in x0, x1, ...) from one input X stacked on its
    first axis, with one operation per group of expressions of one form: (fn, gather
    indices, output order or None). None where an expression holds a Float (a trainable
    constant) or no input."""
    symbols = [sympy.Symbol(f"x{i}") for i in range(n_inputs)]
    position = {s: i for i, s in enumerate(symbols)}
    groups: dict = {}
    for i, e in enumerate(flat):
        found = _placeholders(e, set(symbols))
        if not found or e.atoms(sympy.Float):
            return None
        slots = [sympy.Symbol(f"_a{k}") for k in range(len(found))]
        form = e.xreplace(dict(zip(found, slots)))
        groups.setdefault(form, []).append((i, [position[s] for s in found]))
    # every operand's rows of X in one gather, split into the operands: one gather whose
    # backward adds into one zero tensor, where a slice per operand cost a zero tensor of
    # X's size each in the backward pass (a fifth of a search step's CPU time)
    taken: list[int] = []
    sizes: list[int] = []
    lines, parts, order = [], [], []
    printer = _Printer({}, ops)
    for g, (form, members) in enumerate(groups.items()):
        for k in range(len(members[0][1])):
            printer.names[sympy.Symbol(f"_a{k}")] = f"a{g}_{k}"
            lines.append(f"    a{g}_{k} = _y[{len(sizes)}]")
            taken += [m[1][k] for m in members]
            sizes.append(len(members))
        parts.append(printer(form))
        order += [m[0] for m in members]
    source = "def _rows(X, g):\n"
    source += f"    _y = torch.split(X.index_select(0, g[0]), {tuple(sizes)})\n"
    source += "\n".join(lines) + f"\n    return torch.cat([{', '.join(parts)}], dim=0)\n"
    namespace: dict = {"torch": torch, **printer.calls}
    exec(compile(source, "<symweak-codegen-rows>", "exec"), namespace)
    index = [torch.tensor(taken, dtype=torch.long)]
    if order == list(range(len(flat))):
        return namespace["_rows"], index, None
    inverse = [0] * len(order)
    for pos, i in enumerate(order):
        inverse[i] = pos
    return namespace["_rows"], index, torch.tensor(inverse, dtype=torch.long)


def _compiled_again(exprs, inputs, options, state) -> CompiledExpressions:
    module = CompiledExpressions(exprs, inputs, **options)
    module.load_state_dict(state)
    return module.to(state["constants"].device)


def compile_expressions(
    exprs: Sequence[sympy.Expr],
    inputs: Sequence[sympy.Basic] | None = None,
    **options,
) -> CompiledExpressions:
    """Compile SymPy expressions to a torch module; inputs default to their fields (sorted)."""
    if inputs is None:
        atoms = set()
        for e in exprs:
            atoms |= {a for a in sympy.sympify(e).atoms(AppliedUndef) if _is_field(a)}
        inputs = sorted(atoms, key=str)
    return CompiledExpressions(exprs, inputs, **options)
