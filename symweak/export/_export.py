"""Discovered equations as LaTeX and code (SymPy printers in strict mode + jinja2 templates).

Developer notes:

* Every target works from the weak-form structure of the result: each equation is
  ``∂_t^k f = Σ c_j D^{α_j} F_j(U)``. The distinct F_j are printed once by the target's SymPy
  printer (strict: an expression the printer cannot write is an error, never a silent
  partial string), and the generated code applies the derivative D^{α_j} on the grid.
* A target is a row of :data:`TARGETS`: template name, printer and file suffix. Adding a
  target is one template plus one row.
"""

from __future__ import annotations

import keyword
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import jinja2
import sympy
from sympy.core.function import AppliedUndef
from sympy.printing.c import C99CodePrinter
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pytorch import TorchPrinter

from .._errors import SymweakError
from .._resources import resource_dir
from .._version import __version__
from ..ir import System
from ..operators import printer_functions

__all__ = ["TARGETS", "Target", "render", "write"]


@dataclass(frozen=True)
class Target:
    name: str
    template: str
    suffix: str
    description: str


TARGETS: dict[str, Target] = {
    t.name: t
    for t in [
        Target("latex", "equation.tex.j2", ".tex", "LaTeX: the equation and a table of terms"),
        Target("numpy", "numpy_rhs.py.j2", ".py", "NumPy: rhs(fields, spacing) on a grid"),
        Target("sim", "simulate.py.j2", ".py", "NumPy + SciPy: method-of-lines simulation"),
        Target("torch", "torch_module.py.j2", ".py", "PyTorch: an nn.Module for the rhs"),
        Target("c", "rhs.c.j2", ".c", "C99: symweak_rhs(fields, out, n, h, periodic)"),
    ]
}


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resource_dir("templates"))),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["repr"] = repr
    env.filters["tuple_repr"] = lambda seq: repr(tuple(seq))
    return env


def _safe(name: str) -> str:
    reserved = {"np", "numpy", "torch", "math", "out", "fields", "spacing", "self"}
    plain = name.isidentifier() and name.isascii() and not keyword.iskeyword(name)
    if plain and name not in reserved and not name.startswith(("F", "h_", "c_")):
        return name
    return "field_" + "".join(ch if ch.isalnum() and ch.isascii() else "_" for ch in name)


def _printed(expr, printer, target: str) -> str:
    try:
        return printer.doprint(expr)
    except Exception as exc:  # SymPy raises PrintMethodNotImplementedError / ValueError
        raise SymweakError(
            f"The {target} export cannot write `{sympy.sstr(expr)}`: {exc}. Operators "
            "registered by the user need a printed name for this target "
            "(register_operator(..., numpy_name=..., c_name=...))."
        ) from None


def _plan(system: System, coords: Iterable[str], periodic: Mapping[str, bool], accuracy: int):
    coords = list(coords)
    if "t" not in coords:
        raise SymweakError("Code export needs a time coordinate `t`.")
    space = [c for c in coords if c != "t"]
    fields_seen: list[str] = []
    for eq in system:
        for name in (*eq.lhs.field_names, *eq.field_names):
            if name not in fields_seen:
                fields_seen.append(name)
    safe = {f: _safe(f) for f in fields_seen}
    functions: list[sympy.Expr] = []
    jets: dict[str, dict] = {}
    equations = []
    for eq in system:
        lhs = eq.lhs
        order = dict((str(s), n) for s, n in lhs.alpha)
        if set(order) - {"t"} or len(lhs.field_names) != 1:
            raise SymweakError(
                f"Code export needs left-hand sides of the form u_t or u_tt, got {lhs.short()}."
            )
        terms = []
        for term, coef in eq.coefficients.items():
            orders = dict((str(s), n) for s, n in term.alpha)
            if orders.get("t"):
                raise SymweakError(
                    f"Term {term.short()} has a time derivative on the right-hand side; "
                    "code export integrates only explicit equations."
                )
            F = _term_function(term, space, safe, jets)
            if F not in functions:
                functions.append(F)
            terms.append(
                {
                    "coef": float(coef),
                    "index": functions.index(F),
                    "orders": [(i, space[i], orders.get(space[i], 0)) for i in range(len(space))],
                    "latex": term.latex(),
                    "short": term.short(),
                    "coef_latex": f"{float(coef):.6g}",
                }
            )
        equations.append(
            {
                "field": safe[lhs.field_names[0]],
                "name": lhs.field_names[0],
                "time_order": order["t"],
                "text": eq.short(),
                "latex": eq.latex(6),
                "lhs_latex": lhs.latex(),
                "terms": terms,
            }
        )
    return {
        "version": __version__,
        "space": space,
        "fields": [safe[f] for f in fields_seen],
        "field_names": fields_seen,
        "periodic": {n: bool(periodic.get(n, False)) for n in space},
        "accuracy": int(accuracy),
        "equations": equations,
        "functions_sympy": functions,
        "jets": list(jets.values()),
    }


def _term_function(term, space, safe, jets: dict) -> sympy.Expr:
    """``term``'s F over plain symbols: each field by its safe name, and each derivative
    inside F (product terms, u_x^2) by the name of an array computed first (into
    ``jets``)."""
    jet_sub = {}
    for d in sorted(term.F.atoms(sympy.Derivative), key=sympy.default_sort_key):
        d_orders = dict((str(s), int(n)) for s, n in d.variable_count)
        name = f"{safe[d.expr.func.__name__]}_" + "".join(c * d_orders.get(c, 0) for c in space)
        if d_orders.get("t"):
            raise SymweakError(
                f"Term {term.short()} holds a time derivative; code export "
                "integrates only explicit equations."
            )
        if name not in jets:
            jets[name] = {
                "name": name,
                "field": safe[d.expr.func.__name__],
                "orders": [(i, space[i], d_orders.get(space[i], 0)) for i in range(len(space))],
            }
        jet_sub[d] = sympy.Symbol(name)
    F = term.F.xreplace(jet_sub)
    sub = {f: sympy.Symbol(safe[f.func.__name__]) for f in F.atoms(AppliedUndef)}
    return F.xreplace(sub)


def _add_intervals(plan: dict, uncertainty) -> None:
    """Each term's 95 % interval and inclusion probability for the LaTeX table
    (``uncertainty``: ``{lhs: {term: {"interval": (lo, hi), "probability": p}}}``, short
    text keys, as :attr:`Discovery.uncertainty` gives per equation)."""
    any_interval = False
    for eq in plan["equations"]:
        per = uncertainty.get(eq["text"].split(" = ", 1)[0], {})
        for term in eq["terms"]:
            info = per.get(term["short"]) or {}
            lo, hi = info.get("interval", (None, None))
            p = info.get("probability")
            term["interval_latex"] = (
                f"[{lo:.4g}, {hi:.4g}]" if lo is not None and lo == lo and hi == hi else "--"
            )
            term["probability_latex"] = f"{p:.2f}" if p is not None else "--"
            any_interval = any_interval or term["interval_latex"] != "--"
    plan["intervals"] = any_interval


def _nest(call: str, inner: str, orders) -> str:
    expr = inner
    for axis, name, n in orders:
        if n:
            expr = f"{call}({expr}, {axis}, {n}, h_{name}, PERIODIC[{name!r}])"
    return expr


def render(
    system: System,
    target: str,
    coords: Iterable[str],
    *,
    periodic: Iterable[str] | Mapping[str, bool] = (),
    accuracy: int = 4,
    method: str | None = None,
    seed: int | None = None,
    document: bool = True,
    integrator: str = "BDF",
    uncertainty=None,
) -> str:
    """The text of ``target`` (one of :data:`TARGETS`) for ``system``.

    periodic: space axes treated as periodic (spectral derivatives in NumPy/PyTorch,
        wrap-around stencils in C); the others use finite differences of ``accuracy``.
    """
    if target not in TARGETS:
        raise SymweakError(f"Unknown export target {target!r}; choose one of {', '.join(TARGETS)}.")
    if accuracy < 2 or accuracy % 2:
        raise SymweakError(f"accuracy must be an even number >= 2, got {accuracy}.")
    if not isinstance(periodic, Mapping):
        periodic = {n: True for n in periodic}
    coords = list(coords)
    unknown = sorted(set(periodic) - set(coords))
    if unknown:
        raise SymweakError(f"periodic names unknown axes {unknown}; the axes are {coords}.")
    plan = _plan(system, coords, periodic, accuracy)
    env = _environment()
    spec = TARGETS[target]
    if target == "latex":
        _add_intervals(plan, uncertainty or {})
        return env.get_template(spec.template).render(
            **plan, document=document, method=method, seed=seed
        )
    _code_plan(plan, target)
    text = env.get_template(spec.template).render(**plan, method=integrator)
    if target in ("numpy", "sim", "torch"):
        text = text.replace("\nimport numpy as np\n", "\nimport numpy\nimport numpy as np\n", 1)
    return text


def _code_plan(plan: dict, target: str) -> None:
    """The printed functions and derivative calls of a code target, into ``plan``."""
    funcs = plan["functions_sympy"]
    np_printer = NumPyPrinter(
        {
            "strict": True,
            "fully_qualified_modules": True,
            "user_functions": {k: f"numpy.{v}" for k, v in printer_functions("numpy").items()},
        }
    )
    plan["functions"] = [_printed(F, np_printer, "NumPy") for F in funcs]
    if target == "torch":
        printer = TorchPrinter({"strict": True})
        plan["torch_functions"] = [_printed(F, printer, "PyTorch") for F in funcs]
    for jet in plan["jets"]:
        jet["numpy"] = _nest("derivative", jet["field"], jet["orders"])
        jet["torch"] = _nest("_derivative", jet["field"], jet["orders"])
    for eq in plan["equations"]:
        for term in eq["terms"]:
            inner = f"F{term['index']}"
            term["numpy"] = _nest("derivative", inner, term["orders"])
            term["torch"] = _nest("_derivative", inner, term["orders"])
    if target == "c":
        plan["c_terms"] = _c_terms(plan)


def _c_terms(plan: dict) -> list[dict]:
    """One C item per term: the fields it uses, its printed F and its derivative steps."""
    funcs = plan["functions_sympy"]
    if plan["jets"]:
        raise SymweakError(
            "The C export does not write products of derivatives ("
            + ", ".join(j["name"] for j in plan["jets"])
            + ") yet; export to numpy or torch instead."
        )
    printer = C99CodePrinter({"strict": True, "user_functions": printer_functions("c")})
    items = []
    for e, eq in enumerate(plan["equations"]):
        for term in eq["terms"]:
            steps = [{"axis": axis, "order": n} for axis, _name, n in term["orders"] if n]
            used = {str(sym) for sym in funcs[term["index"]].free_symbols}
            items.append(
                {
                    "uses": [(i, f) for i, f in enumerate(plan["fields"]) if f in used],
                    "equation": e,
                    "coef": repr(term["coef"]),
                    "function": _printed(funcs[term["index"]], printer, "C"),
                    "steps": steps,
                    "comment": f"{eq['name']}: {term['short']}".replace("*/", "* /"),
                }
            )
    return items


def write(text: str, path) -> None:
    from pathlib import Path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
