"""What a result says about the units its coordinates came in, and the radii a run takes
where they are lopsided.

The paper's test functions are isotropic: one radius on every axis (up to an aspect of
``ISOTROPY_ASPECT``, beyond which the long axis gets η·L/8). How far they reach along t
against x therefore follows the units the data come in. Where one coordinate spans more
than 8 times another's range and the data follow the field through time (not a few
snapshots), the network method takes the radii the field's own spectrum reads on each axis
instead (``scales=("spectrum", "cap")``; :func:`long_time`, :func:`long_space`): over four
equations no default was tuned on, with t or x rescaled (80 runs), the returned terms were
the true ones in 80 where the paper's radius gave 57. A few snapshots keep the paper's
radius: the scratch-assay twin (5 times, in µm or in mm) came back honest in 6 of 6 runs
under it and in 4 of 6 under the spectrum's radii or radii per axis.
The warning of an equation that leaves most of its left-hand side unexplained names
lopsided units (:func:`unexplained`), and so does the warning of an equation the data's
own time series contradict: a FitzHugh–Nagumo variant (10 % points, σ 0.1) in seconds and
millimetres (t over 1 800, x over 160) came back without u_xx and contradicted under radii
per axis, and in minutes (t over 30) gave its four terms (3.36 u_xx for 3.2).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["FUNCTION_REACH", "SPECTRAL", "functions_of_large_fields", "long_space", "long_time",
           "lopsided", "unexplained"]  # fmt: skip

#: the radii a run takes where one coordinate is long (:func:`long_time`,
#: :func:`long_space`), the data follow the field through time (not a few snapshots) and
#: its ``scales`` were left alone
SPECTRAL = ("spectrum", "cap")


def long_time(spans: Mapping) -> float | None:
    """How many times the range of the shortest space axis time spans, where that is more
    than ``ISOTROPY_ASPECT`` (the paper's radius would cut time's to an eighth of its
    own): else None. ``spans``: each coordinate's range, time named ``"t"``.

    There the paper's radius gives the test functions a few snapshots' reach in time: an
    advection–diffusion–dispersion −0.3 u_x + 0.02 u_xx − 0.05 u_xxx (10 % point columns,
    σ 0.05) with time in hundredths of the unit (t over 600, x over 20) came back without
    u_xx and every term uncertain after its search drifted off the data. Over four such
    equations with time ×30 or ×100 (t over 7.5–30 times x; σ 0.05 and 0.1, seeds 0 and 1)
    the returned terms were the true ones in 32 of 32 runs with the spectrum's radii, 23
    with radii per axis beyond 8 and 18 under the paper's radius; exact in 29, 10 and 0;
    honest in 32, 24 and 24."""
    from ..weak import ISOTROPY_ASPECT

    space = [float(v) for n, v in spans.items() if n != "t" and float(v) > 0]
    t = float(spans.get("t", 0.0))
    if not space or t <= ISOTROPY_ASPECT * min(space):
        return None
    return t / min(space)


def long_space(spans: Mapping) -> tuple[str, float] | None:
    """(the longest space axis, how many times the shortest coordinate's range it spans)
    where that is more than ``ISOTROPY_ASPECT`` (the paper's radius cuts it to an eighth of
    η·L there), else None. ``spans``: each coordinate's range, time named ``"t"``.

    There the paper's cut, not the field, sets how far the test functions reach along
    that axis. The same four equations with x in tenths or thirtieths of the model's unit
    (x over 10–30 times t), as 10 % point columns or 21 snapshots of the lattice, gave their
    true terms in 48 of 48 runs with the spectrum's radii against 39 under the paper's
    radius, exact in 42 against 29, honest in 48 against 47, the largest coefficient error
    below 10 % in 47 against 29 (the advection–dispersion's u_xxx came back 100 times too
    small in six). Radii per axis (η·L_i) did less well (x over 10–30: true terms 28 of 32,
    honest 29, exact 17)."""
    from ..weak import ISOTROPY_ASPECT

    space = {n: float(v) for n, v in spans.items() if n != "t" and float(v) > 0}
    every = [float(v) for v in spans.values() if float(v) > 0]
    if not space or len(every) < 2:
        return None
    axis = max(space, key=space.get)
    ratio = space[axis] / min(every)
    return (axis, ratio) if ratio > ISOTROPY_ASPECT else None


def _example(axis: str) -> str:
    """A change of units that shortens ``axis``'s range: of time, or of a space axis."""
    return "minutes for seconds" if axis == "t" else "millimetres for micrometres"


def lopsided(settings: Mapping) -> str | None:
    """The clause naming lopsided units (one coordinate spanning more than
    ``ISOTROPY_ASPECT`` times another's range) where the run's radii were the paper's
    (``settings["scales"]`` not first ``"axis"`` or ``"spectrum"``) or the run chose the
    spectrum's for the long axis itself (``settings["spectral"]``; ``"per_axis"`` in results
    saved by earlier versions); ``settings["snapshots"]``: the long axis where the data are a
    few snapshots (the paper's radius kept: only rescaling is suggested). Else None.
    ``settings["spans"]``: each coordinate's range (results saved before it was recorded:
    None)."""
    from ..weak import ISOTROPY_ASPECT

    spans = {n: float(v) for n, v in (settings.get("spans") or {}).items() if float(v) > 0}
    scales = tuple(settings.get("scales") or ())
    if len(spans) < 2:
        return None
    longest, shortest = max(spans, key=spans.get), min(spans, key=spans.get)
    ratio = spans[longest] / spans[shortest]
    if ratio <= ISOTROPY_ASPECT:
        return None
    if settings.get("per_axis") == longest:  # saved by a version that scaled them per axis
        return (
            f"or its units lopsided: {longest} spans {ratio:.3g} times the range of "
            f"{shortest} here, so the test functions were scaled per axis; rescale {longest} "
            f"({_example(longest)}, say) and compare"
        )
    if settings.get("spectral") == longest:  # the run sized them by the spectrum itself
        return (
            f"or its units lopsided: {longest} spans {ratio:.3g} times the range of "
            f"{shortest} here, so the test functions took the radii the field's spectrum "
            f"reads; rescale {longest} ({_example(longest)}, say) and compare"
        )
    if scales and scales[0] in ("axis", "spectrum"):  # radii the units do not decide
        return None
    if settings.get("snapshots") == longest:  # a few snapshots: the paper's radius stays
        return (
            f"or its units lopsided: {longest} spans {ratio:.3g} times the range of "
            f"{shortest} here, and the test functions are isotropic (the paper's radius, kept "
            "for a few snapshots), so the units decide how far they reach along "
            f"{longest}; rescale {longest} ({_example(longest)}, say) and compare"
        )
    return (
        f"or its units lopsided: {longest} spans {ratio:.3g} times the range of {shortest} "
        "here, and the test functions are isotropic (the paper's radius), so the units decide "
        f"how far they reach along {longest}; rescale {longest} ({_example(longest)}, say) or "
        "pass scales=('spectrum', 'cap') to size them by the field's spectrum"
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
