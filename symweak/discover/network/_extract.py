"""Phase 3: extraction — the pruned network read back into SymPy; every monomial of an
active output, paired with each derivative multi-index that carries weight, becomes a
candidate term. The candidates then go through the constraints and the rules."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import sympy
import torch

from ..._errors import IRError, SymweakError
from ...compile import compile_expressions
from ...symnet import function_shapes, library_from_network
from .._library import (
    conserves,
    distinct_functions,
    equation_libraries,
    filter_library,
    has_fitted_constants,
    is_flux_term,
    kept_by_filters,
    monomial_neighbours,
    time_terms,
    union,
)
from .._settings import EXTRACT_TOL, MAX_DEGREE, SHAPE_TOL, SHAPE_TOL_MIN
from ._warmup import noise_ratio

log = logging.getLogger("symweak")

__all__ = ["Candidates", "run"]


def _with_constant(library: list) -> list:
    """``library`` with the constant F = 1 (a source term: u_t = u_xx + 0.2 − 0.2 eᵘ has
    one) in front, once. The network's read-back drops constants (an output's constant
    part is the network's bias, not a term), so it is only offered when asked for."""
    from ...ir import Term

    one = Term(sympy.Integer(1))
    return library if one in library else [one, *library]


def _products(state, library, inputs=None, degree=MAX_DEGREE) -> list:
    """Terms beyond D^α F(U) from ``inputs: u, u_x, …`` (the constraint language; or
    ``inputs`` given here, see :mod:`._widen`): every
    monomial of the inputs up to ``degree`` that holds a derivative, in the normal
    form of :func:`symweak.ir.product_library` (u_x², u·u_x², …), less the left-hand sides,
    forbidden terms and terms already in the library. They enter the final sparse fit of
    every equation (the symbolic network's search does not produce them)."""
    problem = state.problem
    constraints = problem.constraints
    given = inputs is None
    if given:
        if constraints is None or not constraints.inputs:
            return []
        inputs = constraints.inputs
    from ...ir import product_library

    present = set(library) | set(problem.lhs)
    if constraints is not None:
        present |= set(constraints.forbid)
    out = [t for t in product_library(inputs, degree) if t not in present]
    state.history.products = [t.short() for t in out]
    if given:
        log.info("symweak: %d product terms from `inputs:` join the final fit", len(out))
    return out


@dataclass
class Candidates:
    """The candidate library after the rules: the union of the equations' libraries, the
    column positions of each equation's terms, the ties of ``pair`` rules, and the compiled
    distinct functions F with each column's F and multi-index."""

    library: list
    libraries: dict
    ties: list
    cols: list
    functions: torch.nn.Module
    lib_index: list
    lib_alphas: list
    #: per equation, the columns of the readable alternative fit: the library's terms
    #: without fitted constants inside F
    readable_cols: list | None = None
    #: field derivatives the functions take after the fields (product terms, ``inputs:``),
    #: each as (field position, multi-index along the coordinates)
    jets: list = field(default_factory=list)
    #: (library, libraries, ties) before the product terms
    base: tuple = ()
    #: terms for the verdicts only, after the library's own (:func:`verdict_terms`); per
    #: equation, their columns; the library's own terms are the first ``n_fit``
    verdict_terms: list = field(default_factory=list)
    verdict_cols: list = field(default_factory=list)
    n_fit: int = 0
    #: ``lib_index`` slices as index tensors per device (:meth:`_index`)
    _indices: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def _index(self, start: int, end: int, device) -> torch.Tensor:
        """``lib_index[start:end]`` as an index tensor on ``device``, made once (a tensor of
        Python values in a training step is a copy to the device each step)."""
        key = (start, end, str(device))
        if key not in self._indices:
            index = torch.as_tensor(self.lib_index[start:end], dtype=torch.long, device=device)
            self._indices[key] = index
        return self._indices[key]

    def jet_values(self, state, grid_axes, members: bool = True) -> torch.Tensor | None:
        """Û's derivatives that product terms take, on the grid (*grid, jets), float64
        (forward-mode, exact for the surrogate; the surrogates' mean with ``members``, see
        :meth:`NetworkState.mean_jets`); None without product terms."""
        if not self.jets:
            return None
        J = state.mean_jets(grid_axes, [a for _, a in self.jets], members).double()
        return torch.stack([J[..., j, f] for j, (f, _) in enumerate(self.jets)], dim=-1)

    def system(
        self, state, grid_axes, assemblers, chunk: int | None = None, members=True, verdicts=False
    ):
        """(Û on the grid, [weak columns G of the library], [left-hand sides b], Û's
        derivatives for product terms or None) in float64 (the verdicts' own terms as
        columns after the library's with ``verdicts``),
        one G and b per assembler (test-function set) on that grid: Û and the library's
        values are computed once for all of them. ``chunk``: evaluate and integrate that many
        library columns at a time (bounded memory on the data's own 2-D-space grid).
        ``members``: Û is the mean of the run's surrogates (``surrogates=K``), else this
        run's own."""
        Ug = state.mean_grid(grid_axes, members)
        U64 = Ug.double()
        J = self.jet_values(state, grid_axes, members)
        inputs = [*U64.unbind(-1), *(J.unbind(-1) if J is not None else ())]
        vals = torch.movedim(self.functions(*inputs), -1, 0)  # (nF, *grid)
        width = len(self.library) if verdicts else self.n_fit
        step = chunk or width
        parts: list[list[torch.Tensor]] = [[] for _ in assemblers]
        for i in range(0, width, step):
            end = min(i + step, width)
            sel = vals[self._index(i, end, vals.device)]
            for part, assembler in zip(parts, assemblers):
                part.append(assembler.integrate(sel, self.lib_alphas[i:end]))
        lhs = torch.stack([U64[..., i] for i in state.field_index])
        Gs = [torch.cat(part, dim=1) for part in parts]
        bs = [assembler.integrate(lhs, state.lhs_alphas) for assembler in assemblers]
        return Ug, Gs, bs, J


def _active(state) -> tuple[list, dict, dict, dict]:
    """The network's outputs, the active (output -> multi-indices) pairs, and the fields'
    RMS and maximum on the coarse grid."""
    obs, coords = state.problem.obs, state.problem.coords
    with torch.no_grad():
        _, _, G, b = state.losses()
        norms = G.norm(dim=0)  # (S, A)
        bnorm = b.norm(dim=0)  # (E,)
        rel = (state.effective_xi().abs() * norms[None]) / bnorm[:, None, None]  # (E, S, A)
        strength = rel.max(dim=0).values.cpu().numpy()
        Ug = state.surrogate.grid(state.quad.axes).double().cpu().numpy()  # enough for RMS
    exprs = state.net.expressions()
    active: dict[int, list] = {}
    for s in range(state.net.width):
        for a_i, a in enumerate(state.A):
            if strength[s, a_i] >= EXTRACT_TOL:
                active.setdefault(s, []).append(tuple((c, n) for c, n in zip(coords, a) if n))
    rms = {f: float(np.sqrt(np.mean(Ug[..., i] ** 2))) for i, f in enumerate(obs.field_names)}
    amax = {f: float(np.max(np.abs(Ug[..., i]))) for i, f in enumerate(obs.field_names)}
    return exprs, active, rms, amax


def run(state) -> Candidates:
    """The candidates from the pruned network, with the product terms of the constraints'
    ``inputs:``."""
    library, libraries, ties, verdicts = _network_library(state)
    products = _products(state, library)
    return with_products(state, library, libraries, ties, products, verdicts)


def widened(state, cands: Candidates, inputs, degree) -> Candidates:
    """``cands`` (before any product term) with the product terms of ``inputs`` up to
    ``degree`` (:mod:`._widen`)."""
    library, libraries, ties = cands.base
    products = _products(state, library, inputs, degree)
    return with_products(state, library, libraries, ties, products, cands.verdict_terms)


def with_neighbours(state, cands: Candidates) -> tuple[Candidates, list]:
    """``cands`` with the monomial neighbours of its D^α F(U) terms (one degree up and down
    under the same multi-index, :func:`~.._library.monomial_neighbours`) joining the
    library, after the constraints and rules like the network's own terms; and the terms
    that joined (none: ``cands`` itself)."""
    problem = state.problem
    library, _, _ = cands.base
    near = monomial_neighbours(library, list(problem.fields), MAX_DEGREE)
    near = [t for t in filter_library(near, problem.lhs, problem.constraints) if t in near]
    if not near:
        return cands, []
    libraries, _, ties = equation_libraries(problem, library + near)
    joined = [t for t in near if any(t in lib for lib in libraries.values())]
    products = cands.library[len(cands.base[0]) : cands.n_fit]
    wide = with_products(state, union(libraries), libraries, ties, products, cands.verdict_terms)
    return wide, joined


def shape_tolerance(noise: float) -> float:
    """How far f(u) must differ from its cubic Taylor polynomial over the data to be offered
    beside it: the noise / std ``noise``, within [SHAPE_TOL_MIN, SHAPE_TOL]."""
    return min(SHAPE_TOL, max(SHAPE_TOL_MIN, noise))


def verdict_terms(exprs, active, amax, shape_tol: float, library: list, problem) -> list:
    """D^α f(field) for every function f the network applies to a field that differs from
    its cubic Taylor polynomial over the data by more than SHAPE_TOL_MIN but not by
    ``shape_tol`` (so the selection is offered only the polynomial), with every multi-index
    of the library: the verdicts judge them, so that a function the noise hides from the
    selection (d_x(eᵘ) beside u_x + d_x(u²)/2 where |u| <= 1: 1.9 % apart) comes back as an
    uncertain alternative rather than as nothing."""
    from ...ir import Term

    offered = set(function_shapes(exprs, active, amax, shape_tol))
    shapes = [f for f in function_shapes(exprs, active, amax, SHAPE_TOL_MIN) if f not in offered]
    alphas = sorted({t.alpha for t in library}, key=lambda a: (sum(n for _, n in a), str(a)))
    terms: list = []
    for shape in shapes:
        for alpha in alphas:
            try:
                term = Term(shape, alpha).canonical()[1]
            except IRError:
                continue
            if term not in terms and term not in library:
                terms.append(term)
    forbid = set(problem.constraints.forbid) if problem.constraints is not None else set()
    return [t for t in terms if t not in set(problem.lhs) and t not in forbid]


def _network_library(state) -> tuple[list, dict, list, list]:
    """The pruned network's terms after the constraints and rules: (library, per-equation
    libraries, ties, the verdicts' own terms)."""
    problem, history = state.problem, state.history
    exprs, active, rms, amax = _active(state)
    shape_tol = shape_tolerance(noise_ratio(history, problem))
    library = library_from_network(
        exprs,
        active,
        rms,
        max_degree=MAX_DEGREE,
        field_max=amax,
        shape_tol=shape_tol,
    )
    if state.config.library.include_constant:
        library = _with_constant(library)
    library = library + time_terms(problem.lhs, library)
    library = filter_library(library, problem.lhs, problem.constraints)
    # unordered: sorting the terms of these long sums took half the printing's time
    history.network_outputs = [sympy.sstr(e, order="none") for e in exprs]
    history.library = [t.short() for t in library]
    libraries, reports, ties = equation_libraries(problem, library)
    library = union(libraries)
    history.rules = [r.as_dict() for r in reports]
    if not library or not all(libraries.values()):
        raise SymweakError(
            "The symbolic network produced no candidate term (every output was pruned). Try "
            "more search epochs (search_epochs) or a different operator set."
        )
    verdicts = verdict_terms(exprs, active, amax, shape_tol, library, problem)
    if verdicts:
        log.info(
            "symweak: judged beside their polynomial stand-ins, not selected (the noise hides "
            "the difference): %s",
            ", ".join(t.short() for t in verdicts),
        )
    unoffered = diffusion_terms(problem, state.A, library + verdicts)
    if unoffered:
        log.info(
            "symweak: judged though the network did not offer them (a diffusion the data may "
            "hold): %s",
            ", ".join(t.short() for t in unoffered),
        )
    return library, libraries, ties, verdicts + unoffered


def diffusion_terms(problem, alphas, present) -> list:
    """Each left-hand side field's own diffusion along each space axis (u_xx, u_yy for
    u_t) that the multi-indices ``alphas`` allow and ``present`` lacks: the verdicts judge
    it though the network's read-back did not offer it, so that an equation returned
    without any derivative says whether the data could hold one (a scratch assay at 36 %
    noise came back as u_t = 0.067 u − 52 u² with no word on diffusion) rather than
    saying nothing. Only for left-hand sides of first order in time."""
    from ...ir import Term

    coords = [str(c) for c in problem.coords]
    out: list = []
    for lhs in problem.lhs:
        if sum(lhs.order.values()) != 1:
            continue
        for i, axis in enumerate(coords):
            if axis == "t" or not any(a[i] == 2 and sum(a) == 2 for a in alphas):
                continue
            term = Term(lhs.F, {axis: 2})
            if term not in present and term not in out:
                out.append(term)
    forbid = set(problem.constraints.forbid) if problem.constraints is not None else set()
    return [t for t in out if t not in forbid]


def with_products(state, library, libraries, ties, products, verdicts=()) -> Candidates:
    """The candidates: ``library``, ``products`` and the verdicts' own terms ``verdicts``
    compiled, and each equation's columns (every product term joins every equation's
    library; the verdicts' terms are columns of no equation's fit)."""
    problem = state.problem
    base = (library, dict(libraries), ties)
    libraries = dict(libraries)
    library = library + products
    n_fit = len(library)
    verdicts = [t for t in verdicts if t not in library]
    library = library + verdicts
    funcs, index = distinct_functions(library)
    jets = sorted({d for F in funcs for d in F.atoms(sympy.Derivative)}, key=sympy.default_sort_key)
    functions = compile_expressions(funcs, [*problem.fields, *jets], trainable=False).to(
        state.device
    )
    coords = problem.coords
    position = {t: i for i, t in enumerate(library)}
    names = problem.obs.coord_names
    fields = list(problem.fields)
    jet_index = [
        (fields.index(d.expr), tuple(dict(d.variable_count).get(c, 0) for c in coords))
        for d in jets
    ]
    for lhs in problem.lhs:  # product terms join every equation's own fit
        own = [t for t in products if t not in libraries[lhs]]
        if conserves(lhs, problem.constraints):
            own = [t for t in own if is_flux_term(t, lhs)]
        own = kept_by_filters(problem, lhs, own)
        libraries[lhs] = libraries[lhs] + own
    readable_cols = [
        [position[t] for t in libraries[lhs] if not has_fitted_constants(t)] for lhs in problem.lhs
    ]
    return Candidates(
        base=base,
        jets=jet_index,
        library=library,
        libraries=libraries,
        ties=ties,
        readable_cols=readable_cols,
        cols=[[position[t] for t in libraries[lhs]] for lhs in problem.lhs],
        n_fit=n_fit,
        verdict_terms=verdicts,
        verdict_cols=[_verdict_cols(problem, lhs, verdicts, position) for lhs in problem.lhs],
        functions=functions,
        lib_index=[index[t.F] for t in library],
        lib_alphas=[t.orders(names) for t in library],
    )


def _verdict_cols(problem, lhs, verdicts, position) -> list:
    """The columns of the verdicts' own terms that ``lhs``'s equation may hold (flux terms
    only for a conserved field; the constraints' filters)."""
    own = [t for t in verdicts if not conserves(lhs, problem.constraints) or is_flux_term(t, lhs)]
    return [position[t] for t in kept_by_filters(problem, lhs, own)]
