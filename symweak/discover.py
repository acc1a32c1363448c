"""``symweak.discover`` and its result, :class:`Discovery`."""

from __future__ import annotations

import json
import logging
import math
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import sympy

from ._errors import DataError, SymweakError
from ._version import __version__
from .data import Observations, load
from .grammar import Constraints, OperatorSet, parse_constraints, parse_operators, parse_terms
from .ir import Equation, System, Term

__all__ = ["Discovery", "discover"]

log = logging.getLogger("symweak")

#: The paper's operator set (appendix, table of hyperparameters).
PAPER_OPS = "id,^2,^3,sin,*"


class Discovery:
    """The result of :func:`discover`.

    Attributes
    ----------
    system: the discovered equations as IR (:class:`~symweak.ir.System`).
    settings: every option the run used (including defaults), JSON-serialisable.
    seed: the seed.
    history: per-phase records (losses, chosen thresholds, timings).
    """

    def __init__(
        self,
        system: System,
        *,
        settings: Mapping[str, Any] | None = None,
        seed: int = 0,
        history: Mapping[str, Any] | None = None,
        method: str = "grid",
        surrogate=None,
        coords: tuple[str, ...] = (),
        fields: tuple[str, ...] = (),
    ) -> None:
        self.system = system if isinstance(system, System) else System(system)
        self.settings = dict(settings or {})
        self.seed = int(seed)
        self.history = dict(history or {})
        self.method = method
        self.surrogate = surrogate
        self.coords = tuple(coords)
        self.fields = tuple(fields)

    # ------------------------------------------------------------------ the contract
    @property
    def ir(self) -> Equation | System:
        """The IR: an :class:`~symweak.ir.Equation`, or a :class:`~symweak.ir.System`."""
        return self.system[0] if len(self.system) == 1 else self.system

    @property
    def equation(self) -> sympy.Eq | list[sympy.Eq]:
        """``sympy.Eq(Derivative(u(t, x), t), rhs)``; a list of them for a system."""
        eqs = self.system.to_sympy()
        return eqs[0] if len(eqs) == 1 else eqs

    @property
    def coefficients(self) -> dict:
        """``{term: float}`` with each term a SymPy expression such as ``Derivative(u**2, x)``.

        For a system: ``{lhs: {term: float}}`` keyed by each left-hand side expression.
        """
        per_eq = {
            e.lhs.to_sympy(): {t.to_sympy(): float(c) for t, c in e.coefficients.items()}
            for e in self.system
        }
        return next(iter(per_eq.values())) if len(per_eq) == 1 else per_eq

    def latex(self, digits: int | None = 4) -> str:
        """LaTeX of the equation (``cases`` for a system); coefficients to ``digits`` digits."""
        if len(self.system) == 1:
            return self.system[0].latex(digits)
        return self.system.latex(digits)

    def short(self) -> str:
        return self.system.short()

    def __str__(self) -> str:
        return self.short()

    def __repr__(self) -> str:
        return f"<Discovery {self.method}: {' ; '.join(e.short() for e in self.system)}>"

    def predict(self, **coords):
        """Field values at the given coordinates, from the surrogate (``predict(t=..., x=...)``)."""
        if self.surrogate is None:
            raise SymweakError(
                "This result has no surrogate: it came from the full-grid fast path, which "
                "uses the data directly. Run discover(..., method='network') to train one."
            )
        return self.surrogate.predict(coords)

    # ------------------------------------------------------------------ export
    def to_code(
        self,
        target: str = "numpy",
        *,
        periodic=(),
        accuracy: int = 4,
        integrator: str = "BDF",
    ) -> str:
        """The equation(s) as ``"latex"`` (a document), ``"numpy"`` (``rhs(fields, spacing)``),
        ``"sim"`` (a method-of-lines simulation script), ``"torch"`` (an ``nn.Module``) or
        ``"c"`` (``symweak_rhs(...)``). ``periodic`` names the space axes that wrap around."""
        from .export import render

        return render(
            self.system,
            target,
            self.coords,
            periodic=periodic,
            accuracy=accuracy,
            method=self.method,
            seed=self.seed,
            integrator=integrator,
        )

    def export(self, path, target: str | None = None, **options) -> Path:
        """Write :meth:`to_code` to ``path``; the target follows the suffix when not given
        (``.tex`` LaTeX, ``.py`` NumPy, ``.c`` C)."""
        path = Path(path)
        if target is None:
            by_suffix = {".tex": "latex", ".py": "numpy", ".c": "c"}
            if path.suffix not in by_suffix:
                raise SymweakError(
                    f"Cannot tell the export target from {path.name!r}; name it .tex, .py or "
                    ".c, or pass target='latex'|'numpy'|'sim'|'torch'|'c'."
                )
            target = by_suffix[path.suffix]
        from .export import write

        write(self.to_code(target, **options), path)
        return path

    def simulate(
        self,
        data,
        *,
        periodic=None,
        integrator: str = "BDF",
        rtol: float = 1e-6,
        atol: float = 1e-8,
    ):
        """Integrate the discovered PDE from the first snapshot of ``data`` and compare.

        ``data``: observations that fill a grid (or a file), or scattered observations when
        this result has a surrogate (its prediction on the data's grid is used).
        ``periodic``: space axes that wrap around (default: those recorded in the data's
        metadata, else none). Returns a :class:`Simulation` with the simulated fields and the
        relative L2 error against the data per field.
        """
        import types

        obs = _observations(data)
        if obs.grid is None:
            raise DataError(
                "simulate() needs observations on a grid (the time axis and every space axis); "
                "these are scattered points."
            )
        axes = dict(obs.grid.axes)
        if "t" not in axes:
            raise DataError("simulate() needs a time coordinate `t` in the data.")
        if obs.is_full_grid:
            grids = {f: obs.to_grid(f) for f in obs.field_names}
        elif self.surrogate is not None:
            grids = self.surrogate.predict_grid(axes)
        else:
            raise DataError(
                "The data do not fill their grid and this result has no surrogate to fill it; "
                "pass the full grid."
            )
        if periodic is None:
            periodic = tuple(obs.meta.get("periodic", ()))
        order = list(axes)
        if order[0] != "t":
            raise DataError("simulate() expects time as the first axis of the grid.")
        code = self.to_code("sim", periodic=periodic, integrator=integrator)
        module = types.ModuleType("symweak_simulation")
        exec(compile(code, "<symweak simulation>", "exec"), module.__dict__)
        t = np.asarray(axes["t"], dtype=float)
        spacing = {n: float(axes[n][1] - axes[n][0]) for n in order[1:]}
        safe = dict(zip(self._field_order(), module.FIELDS))
        missing = [f for f in safe if f not in grids]
        if missing:
            raise DataError(f"The data lack the field(s) {missing} the equations use.")
        lhs_fields = [safe[f] for f in self._lhs_fields()]
        aux = [f for f in module.FIELDS if f not in lhs_fields]
        if aux:
            raise SymweakError(
                f"Cannot simulate: the field(s) {', '.join(aux)} appear in the equations but "
                "have no equation of their own (e.g. velocities next to a vorticity equation)."
            )
        inverse = {v: k for k, v in safe.items()}
        initial = {s: grids[inverse[s]][0] for s in lhs_fields}
        dt = t[1] - t[0]
        rate = {
            s: (-3 * grids[inverse[s]][0] + 4 * grids[inverse[s]][1] - grids[inverse[s]][2])
            / (2 * dt)
            for s in lhs_fields
            if module.LHS[s] == 2
        }
        try:
            out = module.simulate(
                initial,
                t,
                spacing,
                method=integrator,
                rtol=rtol,
                atol=atol,
                initial_rate=rate or None,
            )
        except (RuntimeError, ValueError) as exc:
            raise SymweakError(f"The simulation failed: {exc}") from None
        fields = {inverse[s]: v for s, v in out.items()}
        errors = {}
        for name, values in fields.items():
            ref = grids[name][: len(values)]
            errors[name] = float(np.linalg.norm(values - ref) / max(np.linalg.norm(ref), 1e-300))
        return Simulation(t=t[: len(next(iter(fields.values())))], fields=fields, errors=errors)

    def _field_order(self) -> list[str]:
        seen = []
        for eq in self.system:
            for name in (*eq.lhs.field_names, *eq.field_names):
                if name not in seen:
                    seen.append(name)
        return seen

    def _lhs_fields(self) -> list[str]:
        return [eq.lhs.field_names[0] for eq in self.system]

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict:
        return {
            "format": "symweak.discovery",
            "format_version": 1,
            "symweak_version": __version__,
            "python": platform.python_version(),
            "method": self.method,
            "coords": list(self.coords),
            "fields": list(self.fields),
            "equations": [
                {
                    "lhs": e.lhs.short(),
                    "text": e.short(),
                    "terms": [[t.short(), c] for t, c in e.coefficients.items()],
                }
                for e in self.system
            ],
            "settings": _jsonable(self.settings),
            "seed": self.seed,
            "history": _jsonable(self.history),
            "surrogate": _surrogate_state(self.surrogate),
        }

    def save(self, path) -> None:
        """Write the result as JSON (equations with exact float64 coefficients, settings, seed,
        versions, history)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2), encoding="utf-8")

    @classmethod
    def load(cls, path) -> Discovery:
        """Read a result written by :meth:`save`; the equations come back identical."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SymweakError(f"No such file: {path}.") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise SymweakError(f"{path} is not a symweak result (not valid JSON: {exc}).") from None
        if not isinstance(data, dict) or data.get("format") != "symweak.discovery":
            raise SymweakError(f"{path} is not a symweak result (missing format marker).")
        if int(data.get("format_version", 0)) > 1:
            raise SymweakError(
                f"{path} was written by a newer symweak (format {data['format_version']}); "
                "upgrade symweak to read it."
            )
        try:
            coords = ",".join(data["coords"]) or None
            fields = data["fields"] or None
            equations = []
            for item in data["equations"]:
                lhs = parse_terms(item["lhs"], coords=coords, fields=fields)[0]
                rhs = [
                    (parse_terms(t, coords=coords, fields=fields)[0], float(c))
                    for t, c in item["terms"]
                ]
                equations.append(Equation(lhs, rhs))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise SymweakError(f"{path} is damaged: {exc}.") from None
        surrogate = _surrogate_from_state(data.get("surrogate"), path)
        return cls(
            System(equations),
            surrogate=surrogate,
            settings=data.get("settings"),
            seed=data.get("seed", 0),
            history=data.get("history"),
            method=data.get("method", "grid"),
            coords=tuple(data["coords"]),
            fields=tuple(data["fields"]),
        )


class Simulation:
    """What :meth:`Discovery.simulate` returns: times, simulated fields, relative L2 errors."""

    def __init__(self, t, fields, errors) -> None:
        self.t, self.fields, self.errors = t, fields, errors

    def __repr__(self) -> str:
        errs = ", ".join(f"{k}: {v:.3e}" for k, v in self.errors.items())
        return f"<Simulation {len(self.t)} steps; relative L2 error {errs}>"


def _surrogate_state(surrogate) -> dict | None:
    """The surrogate as JSON: constructor arguments plus its tensors (base64 of torch.save)."""
    if surrogate is None:
        return None
    import base64
    import io

    import torch

    buf = io.BytesIO()
    torch.save({k: v.detach().cpu() for k, v in surrogate.state_dict().items()}, buf)
    lo, hi = surrogate.lo.double().cpu().tolist(), surrogate.hi.double().cpu().tolist()
    return {
        "bounds": {n: [a, b] for n, a, b in zip(surrogate.coord_names, lo, hi)},
        "fields": list(surrogate.field_names),
        "config": dict(surrogate.config),
        "dtype": str(surrogate.lo.dtype).replace("torch.", ""),
        "state": base64.b64encode(buf.getvalue()).decode("ascii"),
    }


def _surrogate_from_state(state, path):
    if state is None:
        return None
    import base64
    import io

    import torch

    from .surrogate import Surrogate

    try:
        dtype = getattr(torch, state["dtype"])
        model = Surrogate(
            {n: tuple(b) for n, b in state["bounds"].items()},
            state["fields"],
            dtype=dtype,
            **state["config"],
        )
        tensors = torch.load(
            io.BytesIO(base64.b64decode(state["state"])), map_location="cpu", weights_only=True
        )
        model.load_state_dict(tensors)
    except Exception as exc:  # a damaged or incompatible state: say which file
        raise SymweakError(f"{path}: the saved surrogate cannot be restored ({exc}).") from None
    model.eval()
    return model


def _jsonable(obj):
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    return str(obj)


# ---------------------------------------------------------------------------- discover
def _observations(data) -> Observations:
    if isinstance(data, Observations):
        return data
    if isinstance(data, (str, Path)) or type(data).__module__.startswith("xarray"):
        return load(data)
    raise DataError(
        "discover() takes Observations, a file path or an xarray object, got "
        f"{type(data).__name__}. "
        "Build observations with symweak.Observations(...) or Observations.from_grid(...)."
    )


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


def _discover_network(
    obs, opset, lhs_terms, seed, cons, max_order, network, progress, rules=()
) -> Discovery:
    from ._network import NetworkSettings, fit_network

    options = dict(network or {})
    known = set(NetworkSettings.__dataclass_fields__)
    unknown = sorted(set(options) - known)
    if unknown:
        raise SymweakError(
            f"Unknown network option(s) {unknown}; known: {', '.join(sorted(known))}."
        )
    if max_order:
        options.setdefault("max_order", dict(max_order))
    if cons is not None and cons.max_order:
        options.setdefault("max_order", {})
        options["max_order"] = {**options["max_order"], **cons.max_order}
    settings = NetworkSettings(**options)
    equations, surrogate, history, interrupted = fit_network(
        obs, lhs_terms, opset, settings, seed, progress, cons, rules
    )
    if interrupted:
        log.warning("symweak: the run was interrupted; returning the best result so far")
    record = {
        "method": "network",
        "ops": opset.spec() if opset is not None else None,
        "lhs": [t.short() for t in lhs_terms],
        "constraints": cons.text if cons is not None else None,
        "rules": [repr(r) for r in rules],
        **{k: (list(v) if isinstance(v, tuple) else v) for k, v in settings.__dict__.items()},
        "interrupted": interrupted,
    }
    return Discovery(
        System(equations),
        settings=record,
        seed=seed,
        history=history,
        method="network",
        surrogate=surrogate,
        coords=obs.coord_names,
        fields=obs.field_names,
    )


def _split_complex(obs: Observations, lhs):
    """Complex fields given directly: split each ψ into ψre, ψim (or u, v when the data have
    one complex field and no u, v) and rewrite the left-hand side ``psi_t`` accordingly."""
    import re

    complex_names = [f for f in obs.field_names if np.iscomplexobj(obs.fields[f])]
    taken = set(obs.field_names)
    names = {}
    for f in complex_names:
        pair = ("u", "v") if len(complex_names) == 1 and not {"u", "v"} & taken else None
        names[f] = pair or (f"{f}re", f"{f}im")
    obs = obs.split_complex(names)
    if lhs is None:
        lhs = ", ".join(f"{a}_t, {b}_t" for a, b in names.values())
    elif isinstance(lhs, str):
        for f, (a, b) in names.items():
            lhs = re.sub(rf"\b{re.escape(f)}_(t+)\b", rf"{a}_\1, {b}_\1", lhs)
    log.info(
        "symweak: complex field(s) split into real and imaginary parts: %s",
        ", ".join(f"{f} = {a} + i {b}" for f, (a, b) in names.items()),
    )
    return obs, names, lhs


def _check_rules(rules, obs) -> list:
    """Rules must be Rule objects; they are bound to the data's names now, so that a rule
    naming a field the data lack fails before any training."""
    from .rules import Rule

    if rules is None:
        return []
    if isinstance(rules, Rule):
        rules = [rules]
    out = list(rules)
    coords = [sympy.Symbol(n) for n in obs.coord_names]
    fields = [sympy.Function(f)(*coords) for f in obs.field_names]
    for rule in out:
        if not isinstance(rule, Rule):
            raise SymweakError(
                f"rules= takes symweak.rules.Rule objects, got {type(rule).__name__}; for "
                "rule text use constraints='rule NAME: x -> -x, u -> -u'."
            )
        rule.apply({}, coords, fields)  # binds names: raises on unknown fields/coordinates
    return out


def discover(
    data,
    ops: str | OperatorSet | None = PAPER_OPS,
    lhs: str | Term | None = None,
    seed: int = 0,
    *,
    constraints: str | Constraints | None = None,
    method: str = "auto",
    degree: int = 3,
    max_order: Mapping[str, int] | int | None = None,
    n_tests: int = 1000,
    test_function: str = "poly",
    eta: tuple[float, float] = (0.2, 0.4),
    scale: str = "hybrid",
    criterion: str = "wsindy",
    threshold: float | None = None,
    complexity: str = "terms",
    debias: bool = True,
    network: Mapping[str, Any] | None = None,
    rules: Sequence | None = None,
    progress: bool = True,
) -> Discovery:
    """Discover the PDE governing ``data``.

    Parameters
    ----------
    data: :class:`~symweak.Observations`, a file path (``.npz .mat .h5 .nc``) or an xarray object.
    ops: operator set, e.g. ``"+,-,*,sin"`` (default: the paper's ``"id,^2,^3,sin,*"``).
    lhs: left-hand side(s), e.g. ``"u_t"``, ``"u_tt"``, ``"u_t, v_t"`` (default: first field's u_t).
    seed: every random choice (test functions, sampling, initialisation) follows it.
    constraints: constraint text (see docs/grammar.md) or a parsed :class:`Constraints`.
    method: ``"auto"`` (the fast path when the data fill a grid), ``"grid"``, or ``"network"``.
    degree, max_order: library for the fast path — monomials of the fields up to ``degree``
        times spatial derivatives up to ``max_order`` (per coordinate; default 4).
    n_tests, test_function, eta, scale: the test functions (K, ``"poly"``/``"poly:P"``/
        ``"exp"``, the paper's (η_min, η_max), and the radii: ``"hybrid"`` — the paper's
        η·L_min capped per axis by a radius read off the data's spectrum — or ``"paper"``,
        ``"axis"`` (η·L_i per axis), ``"auto"`` (spectrum only)).
    criterion, threshold: sparsity selection on the thresholding path (``"wsindy"``,
        ``"elbow"`` or ``"bic"``), or a fixed threshold; ``complexity`` weights the
        sparsity penalty per term (``"terms"``, ``"degree"``, ``"degree:w"`` — 1 + w·(degree − 1)
        — or ``"degree+order"``).
    debias: estimate the noise level from the data and remove the bias noise puts into
        nonlinear terms (E[ũ²] = u² + σ², ...) with Hermite polynomials (fast path).
    network: options of the surrogate-network path (see ``symweak._network.NetworkSettings``):
        ``kernels`` (``"auto"``: on up to ``auto_kernels_points`` = 100 000 observations,
        the count of ``kernel_choices`` = (64, 250, 1000) whose held-out loss is lowest, the
        smallest within one standard error; on more data, and with an integer, that count:
        the paper's N = 1000), ``features`` (d' = 4), ``hidden``, ``layers``, ``activation``,
        ``embedding`` (False: the ablation without FE_φ), ``search`` (False: without NAS),
        ``nodes_per_op``, ``depth`` (L_max = 3), ``counts`` (K = {0,1,2,3}), epochs and
        learning rates per phase, ``lambda_w``, ``lambda_r``, ``n_tests``, ``device``.
    rules: extra rewrite rules (:class:`symweak.rules.Rule` objects, e.g. ``Galilean("u")``,
        ``U1("u", "v")`` or your own) applied to the candidate library after those named in
        the constraints (``galilean(u, v)``, ``u1(u, v)``, ``rule NAME: ...``).
    """
    obs = _observations(data)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise SymweakError(f"seed must be an integer, got {seed!r}.")
    split: dict[str, tuple[str, str]] = {}
    if obs.is_complex:
        obs, split, lhs = _split_complex(obs, lhs)
    opset = parse_operators(ops) if ops is not None and not isinstance(ops, OperatorSet) else ops
    cons = constraints
    if isinstance(constraints, str):
        cons = parse_constraints(
            constraints, coords=",".join(obs.coord_names), fields=list(obs.field_names)
        )
    if cons is not None and cons.ops is not None:
        opset = cons.ops
    lhs_terms = _lhs_terms(lhs, obs, cons)
    if isinstance(max_order, int):
        max_order = {n: max_order for n in obs.space_names}
    if method not in ("auto", "grid", "network"):
        raise SymweakError(f"method must be 'auto', 'grid' or 'network', got {method!r}.")
    if method == "auto":
        method = "grid" if obs.is_full_grid else "network"
    rules = _check_rules(rules, obs)
    if split:  # the paper's U(1) hypothesis for complex fields: candidates, not constraints
        from .rules import U1

        rules = [*rules, *(U1(re, im) for re, im in split.values())]
    if method == "network":
        res = _discover_network(
            obs, opset, lhs_terms, int(seed), cons, max_order, network, progress, rules
        )
        res.settings["complex_split"] = {k: list(v) for k, v in split.items()}
        return res
    from ._fastpath import GridSettings, fit_grid

    settings = GridSettings(
        degree=degree,
        max_order=dict(max_order) if max_order else None,
        n_tests=n_tests,
        test_function=test_function,
        eta=tuple(eta),
        scale=scale,
        criterion=criterion,
        threshold=threshold,
        complexity=complexity,
        debias=debias,
    )
    if progress:
        log.info("symweak: full-grid fast path on %s", obs.describe().splitlines()[0])
    equations, summary = fit_grid(obs, lhs_terms, opset, settings, int(seed), cons, rules)
    record = {
        "method": "grid",
        "ops": opset.spec() if opset is not None else None,
        "lhs": [t.short() for t in lhs_terms],
        "constraints": cons.text if cons is not None else None,
        "rules": [repr(r) for r in rules],
        "complex_split": {k: list(v) for k, v in split.items()},
        **settings.__dict__,
        "eta": list(settings.eta),
    }
    return Discovery(
        System(equations),
        settings=record,
        seed=int(seed),
        history={"grid": summary},
        method="grid",
        coords=obs.coord_names,
        fields=obs.field_names,
    )
