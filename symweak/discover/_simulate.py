"""Integrating a discovered PDE from the data's first snapshot (``Discovery.simulate``)."""

from __future__ import annotations

import types

import numpy as np

from .._errors import DataError, SymweakError

__all__ = ["Simulation", "simulate"]

#: a simulated field larger than this many times the data's largest value has blown up
BLOWN_UP = 1e6


class Simulation:
    """What :meth:`Discovery.simulate` returns: times, simulated fields, relative L2 errors."""

    def __init__(self, t, fields, errors) -> None:
        self.t, self.fields, self.errors = t, fields, errors

    def __repr__(self) -> str:
        errs = ", ".join(f"{k}: {v:.3e}" for k, v in self.errors.items())
        return f"<Simulation {len(self.t)} steps; relative L2 error {errs}>"


def _reference_grids(result, obs) -> tuple[dict, dict]:
    """The grid's axes and the fields on it: the data, or the surrogate's prediction."""
    if obs.grid is None:
        raise DataError(
            "simulate() needs observations on a grid (the time axis and every space axis); "
            "these are scattered points."
        )
    axes = dict(obs.grid.axes)
    if "t" not in axes:
        raise DataError("simulate() needs a time coordinate `t` in the data.")
    if next(iter(axes)) != "t":
        raise DataError("simulate() expects time as the first axis of the grid.")
    if obs.is_full_grid:
        return axes, {f: obs.to_grid(f) for f in obs.field_names}
    if result.surrogate is not None:
        return axes, result.surrogate.predict_grid(axes)
    raise DataError(
        "The data do not fill their grid and this result has no surrogate to fill it; "
        "pass the full grid."
    )


def _field_order(system) -> list[str]:
    seen = []
    for eq in system:
        for name in (*eq.lhs.field_names, *eq.field_names):
            if name not in seen:
                seen.append(name)
    return seen


def _mirrored(axes: dict, grids: dict, mirror) -> tuple[dict, dict]:
    """The grids extended along each axis of ``mirror`` by their reflection (about half a
    spacing beyond the last point), so that a periodic simulation on the doubled axis is
    the no-flux (mirror) boundary on the original one."""
    axes, grids = dict(axes), dict(grids)
    for name in mirror:
        if name not in axes or name == "t":
            space = [n for n in axes if n != "t"]
            raise DataError(f"mirror names {name!r}; the data's space axes are {space}.")
        a = np.asarray(axes[name], dtype=float)
        axes[name] = np.concatenate([a, a[-1] + (a[-1] - a[::-1]) + (a[1] - a[0])])
        i = list(axes).index(name)
        grids = {f: np.concatenate([g, np.flip(g, axis=i)], axis=i) for f, g in grids.items()}
    return axes, grids


def simulate(result, obs, *, periodic, integrator, rtol, atol, mirror=()) -> Simulation:
    """See :meth:`Discovery.simulate`."""
    axes, grids = _reference_grids(result, obs)
    if periodic is None:
        periodic = tuple(obs.meta.get("periodic", ()))
    mirror = tuple(mirror)
    sizes = {n: len(a) for n, a in axes.items()}
    if mirror:
        both = sorted(set(mirror) & set(periodic))
        if both:
            raise DataError(f"An axis cannot be both periodic and mirrored: {both}.")
        axes, grids = _mirrored(axes, grids, mirror)
        periodic = (*periodic, *mirror)
    order = list(axes)
    code = result.to_code("sim", periodic=periodic, integrator=integrator)
    module = types.ModuleType("symweak_simulation")
    exec(compile(code, "<symweak simulation>", "exec"), module.__dict__)
    t = np.asarray(axes["t"], dtype=float)
    spacing = {n: float(axes[n][1] - axes[n][0]) for n in order[1:]}
    safe = dict(zip(_field_order(result.system), module.FIELDS))
    missing = [f for f in safe if f not in grids]
    if missing:
        raise DataError(f"The data lack the field(s) {missing} the equations use.")
    lhs_fields = [safe[eq.lhs.field_names[0]] for eq in result.system]
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
        s: (-3 * grids[inverse[s]][0] + 4 * grids[inverse[s]][1] - grids[inverse[s]][2]) / (2 * dt)
        for s in lhs_fields
        if module.LHS[s] == 2
    }
    try:
        # a solution that blows up overflows inside the right-hand side before some
        # integrators give up (LSODA): that is the integrator's failure, not a warning
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out = module.simulate(
                initial, t, spacing, method=integrator, rtol=rtol, atol=atol,
                initial_rate=rate or None,
            )  # fmt: skip
        if not all(np.all(np.isfinite(v)) for v in out.values()):
            raise RuntimeError("the integrator stopped: the solution is not finite (it blew up)")
        # backward diffusion can stay finite on a coarse grid while it grows by e^500
        scale = max(float(np.max(np.abs(g))) for g in grids.values()) or 1.0
        if max(float(np.max(np.abs(v))) for v in out.values()) > BLOWN_UP * scale:
            raise RuntimeError(
                "the solution grew beyond a million times the data's largest value (it blew up)"
            )
    except (RuntimeError, ValueError) as exc:
        hint = ""
        free = [n for n in order[1:] if n not in periodic]
        if free:
            names = ", ".join(repr(n) for n in free)
            hint = (
                f" The ends of {names} are free (one-sided differences, no boundary condition)"
                f": if the domain wraps around, pass periodic=[{names}] (the data can record "
                f"it: obs.meta['periodic'] = [{names}]); for walls with no flux, "
                f"mirror=[{names}]."
            )
        posed = [w for w in result.warnings() if ": the equation is ill-posed:" in w]
        if posed:  # short waves grow without bound: no boundary condition helps
            hint = " " + " ".join(posed) + hint
        raise SymweakError(f"The simulation failed: {str(exc).rstrip('.')}.{hint}") from None
    fields = {inverse[s]: v for s, v in out.items()}
    if mirror:  # back to the data's own axes
        crop = (slice(None), *(slice(0, sizes[n]) for n in order[1:]))
        fields = {k: v[crop] for k, v in fields.items()}
        grids = {k: v[crop] for k, v in grids.items()}
    errors = {}
    for name, values in fields.items():
        ref = grids[name][: len(values)]
        errors[name] = float(np.linalg.norm(values - ref) / max(np.linalg.norm(ref), 1e-300))
    return Simulation(t=t[: len(next(iter(fields.values())))], fields=fields, errors=errors)
