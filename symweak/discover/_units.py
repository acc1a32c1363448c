"""What a result says about the units its coordinates came in.

The paper's test functions are isotropic: one radius on every axis (up to an aspect of
``ISOTROPY_ASPECT``, beyond which the long axis gets η·L/8). How far they reach along t
against x therefore follows the units the data come in. λ–ω sampled at 21 times in seconds
and 60 places in millimetres (t over 480, x over 3: supports a twentieth of a rotation
long) left 72 % of v_t unexplained and came back as the rotation alone; with
``scales=("axis", "cap")`` (radii per axis, η·L_i) the same data gave both equations' five
cubic terms. Radii per axis by default were measured and not adopted: the scratch-assay
twin (x over 1 900 µm, t over 48 h) came back with u_xxxx, d_xxxx(u²) and d_xx(u²) beside
its three terms. So the warning of an equation that leaves most of its left-hand side
unexplained names the units where they are lopsided (:func:`unexplained`), and so does the
warning of an equation the data's own time series contradict: a FitzHugh–Nagumo variant
(10 % points, σ 0.1) in seconds and millimetres (t over 1 800, x over 160) came back
without u_xx and contradicted, per-axis radii did not help, and in minutes (t over 30) it
gave its four terms (3.36 u_xx for 3.2).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["FUNCTION_REACH", "PER_AXIS", "functions_of_large_fields", "long_time", "lopsided",
           "unexplained"]  # fmt: skip

#: the radii a run takes where time is the long axis and its ``scales`` were left alone
PER_AXIS = ("axis", "cap")


def long_time(spans: Mapping) -> float | None:
    """How many times the range of the shortest space axis time spans, where that is more
    than ``ISOTROPY_ASPECT`` (the paper's radius would cut time's to an eighth of its
    own): else None. ``spans``: each coordinate's range, time named ``"t"``.

    There the default radii (``"cap"``) give the test functions a few snapshots' reach in
    time: an advection–diffusion–dispersion −0.3 u_x + 0.02 u_xx − 0.05 u_xxx (10 % point
    columns, σ 0.05) with time in hundredths of the unit (t over 600, x over 20) came back
    without u_xx and every term uncertain after its search drifted off the data, and a sink
    beside a flux (0.08 u_xx − 0.4 d_x(u²) − 0.3 u²) as −0.030 u³ − 0.016 d_x(u²); per
    axis both gave their three terms, as λ–ω did in seconds (t over 480, x over 3). Over
    four such equations with t over 9–30 times x (σ 0.05 and 0.1, seeds 0 and 1) the
    returned terms were the true ones in 23 of 32 runs per axis against 18 with the default
    (none the other way round), exact in 10 against 0 (the default left most terms
    uncertain), honest in 24 against 24. Space as the long axis keeps the default: the
    scratch-assay twin (x over 1 900 µm, t over 48 h) took three spurious terms per axis."""
    from ..weak import ISOTROPY_ASPECT

    space = [float(v) for n, v in spans.items() if n != "t" and float(v) > 0]
    t = float(spans.get("t", 0.0))
    if not space or t <= ISOTROPY_ASPECT * min(space):
        return None
    return t / min(space)


def _example(axis: str) -> str:
    """A change of units that shortens ``axis``'s range: of time, or of a space axis."""
    return "minutes for seconds" if axis == "t" else "millimetres for micrometres"


def lopsided(settings: Mapping) -> str | None:
    """The clause naming lopsided units (one coordinate spanning more than
    ``ISOTROPY_ASPECT`` times another's range) where the run's radii were not per axis
    (``settings["scales"]`` first ``"axis"``) or the run chose them so for a long time axis
    (``settings["per_axis"]``), else None. ``settings["spans"]``: each
    coordinate's range (results saved before it was recorded: None)."""
    from ..weak import ISOTROPY_ASPECT

    spans = {n: float(v) for n, v in (settings.get("spans") or {}).items() if float(v) > 0}
    scales = tuple(settings.get("scales") or ())
    if len(spans) < 2:
        return None
    longest, shortest = max(spans, key=spans.get), min(spans, key=spans.get)
    ratio = spans[longest] / spans[shortest]
    if ratio <= ISOTROPY_ASPECT:
        return None
    if settings.get("per_axis") == longest:  # the run scaled them per axis itself
        return (
            f"or its units lopsided: {longest} spans {ratio:.3g} times the range of "
            f"{shortest} here, so the test functions were scaled per axis; rescale {longest} "
            f"({_example(longest)}, say) and compare"
        )
    if scales and scales[0] == "axis":
        return None
    return (
        f"or its units lopsided: {longest} spans {ratio:.3g} times the range of {shortest} "
        "here, and the test functions are isotropic (the paper's radius), so the units decide "
        f"how far they reach along {longest}; rescale {longest} ({_example(longest)}, say) or "
        "pass scales=('axis', 'cap') to scale them per axis"
    )


def unexplained(lhs: str, share: float, settings: Mapping) -> str:
    """The warning of an equation that leaves ``share`` of its left-hand side unexplained."""
    hint = lopsided(settings)
    cause = "the data may be too noisy or too sparse to determine it"
    return (
        f"{lhs}: the equation leaves {100 * share:.0f} % of {lhs} unexplained; {cause}"
        f"{', ' + hint if hint else ''}. Compare the Pareto front and the intervals before "
        "using it."
    )


#: a field whose observed values (1 % to 99 % quantiles) reach beyond this in size is
#: large for a function of it taken as given (the symbolic network divides a field whose
#: root mean square passes 100 by a power of ten: ``symweak.symnet._network.FIELD_RANGE``)
FUNCTION_REACH = 100.0


def functions_of_large_fields(settings: Mapping, observed: Mapping | None) -> list[str]:
    """One warning per field whose values reach beyond ``FUNCTION_REACH`` where the
    operator set (``settings["ops"]``) applies functions (sin, tanh, exp): the candidate
    library takes them of the field as given. A sine damping, u_t = 0.1 u_xx − 0.5 sin u,
    handed over with u in units 500 times smaller (u up to 1 250) came back as its Taylor
    stand-in −0.4977 u + 3.1e-07 u³ (sin u excluded above 42): sin(u/500) is no candidate.
    ``observed``: each field's quantiles (``History.observed``)."""
    from .._errors import SymweakError
    from ..grammar import parse_operators

    if not settings.get("ops") or not observed:
        return []
    try:
        functions = [op.symbol for op in parse_operators(settings["ops"]).unary if op.function]
    except SymweakError:  # an operator set this version does not know (a saved result)
        return []
    out = []
    for name, seen in observed.items() if functions else ():
        quantiles = (seen or {}).get("quantiles") or []
        if len(quantiles) < 3:
            continue
        reach = max(abs(float(quantiles[1])), abs(float(quantiles[-2])))
        if reach > FUNCTION_REACH:
            applied = ", ".join(f"{f}({name})" for f in functions)
            out.append(
                f"{applied}: the candidate terms take {name} as given, and it reaches "
                f"{reach:.4g} here; a function of a quantity in units needs a reference "
                f"value inside it ({functions[0]}({name}/{name}0)): divide {name} by a "
                "typical value before discover if such a term is expected"
            )
    return out
