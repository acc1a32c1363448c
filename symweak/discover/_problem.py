"""A discovery :class:`Problem`: everything about *what* to discover, checked and bound to
the data's names before any training (the *how* is :class:`~._config.Config`)."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._errors import DataError, SymweakError
from .._seeds import check_seed
from ..data import Observations, load
from ..grammar import Constraints, OperatorSet, parse_constraints, parse_operators, parse_terms
from ..ir import Term
from ._library import symbols
from ._snapshots import say_snapshots

__all__ = ["Problem", "as_observations"]

log = logging.getLogger("symweak")


def as_observations(data) -> Observations:
    """``data`` as :class:`Observations`: they themselves, a file path, or an xarray object."""
    if isinstance(data, Observations):
        return data
    if isinstance(data, (str, Path)) or type(data).__module__.startswith("xarray"):
        return load(data)
    raise DataError(
        "discover() takes Observations, a file path or an xarray object, got "
        f"{type(data).__name__}. "
        "Build observations with symweak.Observations(...) or Observations.from_grid(...)."
    )


@dataclass
class Problem:
    """Observations, the coordinate and field symbols (built once), the left-hand sides, the
    operator set, the constraints, the bound rules, the seed, and how complex fields were
    split (``{psi: (re, im)}``)."""

    obs: Observations
    lhs: list
    ops: OperatorSet | None
    constraints: Constraints | None
    rules: list
    seed: int
    split: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.coords, self.fields = symbols(self.obs.coord_names, self.obs.field_names)

    @classmethod
    def build(cls, data, ops, lhs, seed, constraints=None, rules=None) -> Problem:
        obs = as_observations(data)
        check_seed(seed)
        split: dict[str, tuple[str, str]] = {}
        given = lhs
        if obs.is_complex:
            obs, split, lhs, given = _split_complex(obs, lhs)
        opset = (
            parse_operators(ops) if ops is not None and not isinstance(ops, OperatorSet) else ops
        )
        cons = constraints
        if isinstance(constraints, str):
            cons = parse_constraints(
                constraints, coords=",".join(obs.coord_names), fields=list(obs.field_names)
            )
        if cons is not None and cons.ops is not None:
            opset = cons.ops
        lhs_terms = _lhs_terms(lhs, obs, cons)
        _check_same_lhs(lhs_terms, cons)
        _check_dynamics(obs, lhs_terms)
        say_snapshots(obs, lhs_terms, MIN_TIMES)
        bound = _check_rules(rules, obs)
        if split:  # the paper's U(1) hypothesis for complex fields: candidates, not constraints
            from ..rules import U1

            # unless the user states U(1) for that pair (u1(u, v) as pair / as equivariant)
            specs = cons.rules if cons is not None else ()
            stated = {tuple(r.fields) for r in specs if r.name == "u1"}
            stated |= {(r.real, r.imag) for r in bound if isinstance(r, U1)}
            bound = [*bound, *(U1(re, im) for re, im in split.values() if (re, im) not in stated)]
            _say_split(split, given, lhs, stated)
        _check_pair_ties(cons, bound, obs, lhs_terms)
        return cls(obs, lhs_terms, opset, cons, bound, int(seed), split)

    def max_order(self, configured: Mapping[str, int] | None) -> dict[str, int]:
        """Highest derivative orders per coordinate: the configured ones, then those of the
        constraints (``order: x <= 3``), which win."""
        out = {str(k): int(v) for k, v in (configured or {}).items()}
        if self.constraints is not None and self.constraints.max_order:
            out.update(self.constraints.max_order)
        return out

    def record(self) -> dict:
        """What the settings of a result say about the problem."""
        return {
            "ops": self.ops.spec() if self.ops is not None else None,
            "lhs": [t.short() for t in self.lhs],
            "constraints": self.constraints.text if self.constraints is not None else None,
            "rules": [repr(r) for r in self.rules],
            "complex_split": {k: list(v) for k, v in self.split.items()},
            "coords": list(self.obs.coord_names),
            "fields": list(self.obs.field_names),
            "spans": {n: float(np.ptp(self.obs.coords[n])) for n in self.obs.coord_names},
        }


def _lhs_terms(lhs, obs: Observations, constraints: Constraints | None) -> list[Term]:
    coords = ",".join(obs.coord_names)
    fields = list(obs.field_names)
    if lhs is None:
        if constraints is not None and constraints.lhs:
            return list(constraints.lhs)
        return parse_terms(f"{fields[0]}_t", coords=coords, fields=fields)
    if isinstance(lhs, Term):
        return [lhs]
    if isinstance(lhs, (list, tuple)):
        out = []
        for item in lhs:
            out.extend(_lhs_terms(item, obs, None))
        return out
    terms = parse_terms(str(lhs), coords=coords, fields=fields)
    for term in terms:
        if not term.alpha or len(term.fields) != 1 or term.fields[0] != term.F:
            raise SymweakError(
                f"lhs `{term.short()}` must be a derivative of one field, such as u_t or u_tt."
            )
    return terms


def _check_same_lhs(lhs_terms, constraints: Constraints | None) -> None:
    """``lhs=`` and the constraints' ``lhs:`` must name the same left-hand sides."""
    if constraints is None or not constraints.lhs:
        return
    given = [t.short() for t in lhs_terms]
    stated = [t.short() for t in constraints.lhs]
    if sorted(given) != sorted(stated):
        raise SymweakError(
            f"lhs={', '.join(given)!r} and the constraints' `lhs: {', '.join(stated)}` differ; "
            "give the left-hand side once (either place is enough)."
        )


#: distinct times beyond the time-derivative order that a left-hand side needs
MIN_TIMES = 3


def _check_dynamics(obs: Observations, lhs_terms) -> None:
    """Each left-hand side is a time derivative of a field that changes: a constant field,
    or one that does not vary in time on a full grid, has no dynamics to identify."""
    for term in lhs_terms:
        name = term.field_names[0]
        orders = dict(zip(obs.coord_names, term.orders(obs.coord_names)))
        if orders.get("t", 0) < 1 or any(k for c, k in orders.items() if c != "t"):
            raise SymweakError(
                f"lhs `{term.short()}` must be a time derivative of one field, such as "
                f"{name}_t or {name}_tt: symweak discovers evolution equations (the data need "
                "a time coordinate t)."
            )
        values = obs.fields[name]
        if float(np.ptp(values)) == 0.0:
            raise DataError(
                f"Field {name!r} is constant (every value is {values[0]:.6g}): there is no "
                f"dynamics to identify for `{term.short()}`. Check that the right column was "
                "loaded."
            )
        needed = orders["t"] + MIN_TIMES
        times = np.unique(obs.coords["t"])
        if times.size < needed:
            shown = ", ".join(f"{v:.6g}" for v in times)
            raise DataError(
                f"The data have {times.size} distinct time(s) ({shown}); `{term.short()}` "
                f"needs the field at {needed} or more times (weak-form integrals over t need "
                "points along t). Add observations at more times."
            )
        if obs.grid is not None and "t" in obs.coord_names and _static_in_time(obs, values):
            raise DataError(
                f"Field {name!r} does not change in time (each place keeps one value at every "
                f"time): there is no dynamics to identify for `{term.short()}`."
            )


def _static_in_time(obs: Observations, values: np.ndarray) -> bool:
    """Whether, on a full or partial lattice, the field takes one value at every place
    (points with equal coordinates other than t), with some place seen at two times."""
    shape = obs.grid.shape
    axis = list(obs.grid.axes).index("t")
    index = np.unravel_index(np.asarray(obs.grid_index), shape)
    rest = [i for k, i in enumerate(index) if k != axis]
    place = (
        np.ravel_multi_index(rest, [n for k, n in enumerate(shape) if k != axis])
        if rest
        else np.zeros(len(values), dtype=np.int64)
    )
    order = np.argsort(place, kind="stable")
    place, ordered = place[order], values[order]
    starts = np.flatnonzero(np.r_[True, place[1:] != place[:-1]])
    sizes = np.diff(np.r_[starts, len(place)])
    if not np.any(sizes > 1):
        return False
    spread = np.maximum.reduceat(ordered, starts) - np.minimum.reduceat(ordered, starts)
    return bool(np.all(spread == 0.0))


def _split_complex(obs: Observations, lhs):
    """Complex fields given directly: split each ψ into ψre, ψim (or u, v when the data have
    one complex field and no u, v) and rewrite the left-hand side ``psi_t`` accordingly."""
    complex_names = [f for f in obs.field_names if np.iscomplexobj(obs.fields[f])]
    taken = set(obs.field_names)
    names = {}
    for f in complex_names:
        pair = ("u", "v") if len(complex_names) == 1 and not {"u", "v"} & taken else None
        names[f] = pair or (f"{f}re", f"{f}im")
    obs = obs.split_complex(names)
    given = lhs
    if lhs is None:
        lhs = ", ".join(f"{a}_t, {b}_t" for a, b in names.values())
    elif isinstance(lhs, str):
        for f, (a, b) in names.items():
            lhs = re.sub(rf"\b{re.escape(f)}_(t+)\b", rf"{a}_\1, {b}_\1", lhs)
    return obs, names, lhs, given


def _say_split(names: dict, given, lhs, stated: set) -> None:
    """A warning, so that it shows without any logging set up: the run now has one
    equation per part (and takes longer than the user may expect)."""
    hypothesis = [(a, b) for a, b in names.values() if (a, b) not in stated]
    log.warning(
        "symweak: complex field(s) split into real and imaginary parts (%s)%s; left-hand "
        "sides %s -> %s%s",
        ", ".join(f"{f} = {a} + i {b}" for f, (a, b) in names.items()),
        " with the U(1) hypothesis" if hypothesis else "",
        given if given is not None else "(default)",
        lhs,
        (
            ' (constraints="'
            + "; ".join(f"u1({a}, {b}) as equivariant" for a, b in hypothesis)
            + '" imposes the phase symmetry instead)'
        )
        if hypothesis
        else "",
    )


def _check_pair_ties(constraints, rules, obs, lhs_terms) -> None:
    """``pair`` rules may tie an equation to another or within itself, not both: refused
    here, before any training, naming the rules (the final fit cannot do both at once)."""
    from ..rules import rule_from_spec

    specs = [*(constraints.rules if constraints is not None else ()), *rules]
    objs = [r if hasattr(r, "equation_pairs") else rule_from_spec(r) for r in specs]
    coords, fields = symbols(obs.coord_names, obs.field_names)
    inner: dict = {}
    across: dict = {}
    for rule in objs:
        for a, b in rule.equation_pairs(lhs_terms, coords, fields):
            if a == b:
                inner.setdefault(a, []).append(rule.name)
            else:
                across.setdefault(a, []).append(rule.name)
                across.setdefault(b, []).append(rule.name)
    both = [lhs for lhs in lhs_terms if lhs in inner and lhs in across]
    if both:
        said = "; ".join(
            f"{lhs.short()}: within itself by {', '.join(dict.fromkeys(inner[lhs]))}, to another "
            f"equation by {', '.join(dict.fromkeys(across[lhs]))}"
            for lhs in both
        )
        raise SymweakError(
            f"`pair` rules tie an equation both within itself and to another equation ({said}); "
            "fitting both kinds of tie at once is not supported yet: keep one of the rules as "
            "`pair` and give the other as `augment`."
        )


def _check_rules(rules, obs) -> list:
    """Rules must be Rule objects; they are bound to the data's names now, so that a rule
    naming a field the data lack fails before any training."""
    from ..rules import Rule

    if rules is None:
        return []
    if isinstance(rules, Rule):
        rules = [rules]
    out = list(rules)
    coords, fields = symbols(obs.coord_names, obs.field_names)
    for rule in out:
        if not isinstance(rule, Rule):
            raise SymweakError(
                f"rules= takes symweak.rules.Rule objects, got {type(rule).__name__}; for "
                "rule text use constraints='rule NAME: x -> -x, u -> -u'."
            )
        rule.apply({}, coords, fields)  # binds names: raises on unknown fields/coordinates
    return out
