"""Benchmark runs through the public API: one row per (system, ratio, noise, seed)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from ..data import Observations, load
from ._systems import BenchmarkSystem, generate, get_system
from .metrics import reconstruction_mse, score_system, verdict_scores

__all__ = ["CLASSIC_FILES", "classic_observations", "format_rows", "run_case"]

#: PDE-FIND's classic files (in ../shared/data) and the systems they hold.
CLASSIC_FILES = {
    "burgers": "burgers.mat",
    "kdv": "kdv.mat",
    "ks": "kuramoto_sivishinky.mat",
    "nls": "nls.mat",
}


def classic_observations(system: BenchmarkSystem, folder: Path) -> Observations:
    obs = load(Path(folder) / CLASSIC_FILES[system.name])
    if system.split:
        # the classic NLS file names its complex field u; split it into the system's u, v
        (names,) = system.split.values()
        obs = obs.split_complex({"u": names})
    return obs


def run_case(
    name: str,
    ratio: float = 1.0,
    noise: float = 0.0,
    seed: int = 0,
    data: Observations | None = None,
    rules: bool = True,
    columns: bool = False,
    **options,
) -> dict:
    """Sample, add noise, discover, and score against the true equations.

    ``rules``: apply the system's physical rules (Galilean for Navier–Stokes, U(1) for NLS)
    given as constraints, as the paper does; False for the rows "without" them. Constraint
    text given as ``constraints=`` replaces them (``row["rules"]`` is then False and
    ``row["constraints"]`` holds the text).
    """
    from ..discover import discover

    system = get_system(name)
    obs = data if data is not None else generate(system.name)
    full = obs
    if ratio < 1.0:
        obs = obs.sample(ratio, seed=seed)
    if noise > 0.0:
        obs = obs.add_noise(noise, seed=seed)
    if columns:
        from ._speed import columns as as_columns

        obs = as_columns(obs, seed=seed)
    options.setdefault("lhs", system.lhs)
    options.setdefault("ops", system.ops)
    own_rules = bool(rules and system.rules and "constraints" not in options)
    if own_rules:
        options["constraints"] = system.rules
    start = time.perf_counter()
    res = discover(obs, seed=seed, **options)
    seconds = time.perf_counter() - start
    truth = system.true_equations()
    scores = score_system(res.system, truth)
    row = {
        "system": system.name,
        "ratio": ratio,
        "noise": noise,
        "seed": seed,
        "TPR": [s.tpr for s in scores],
        "E_inf": [s.e_inf for s in scores],
        "E_2": [s.e_2 for s in scores],
        # Ctrl-C during training ends a phase early and the run goes on with what it had
        # learned: right for one discovery, but a sweep must not store such a run as done
        "interrupted": bool(res.history.interrupted),
        "seconds": seconds,
        "equation": res.short(),
        "equation_display": res.short(res.digits),
        "coefficients": coefficient_table(res.system),
        "device": res.settings.get("device"),
        "intervals": {f.lhs: f.intervals for f in res.history.fits if f.intervals},
        **_verdict_row(res, truth),
        "method": res.method,
        "rules": own_rules,
        "columns": columns,
        "constraints": options["constraints"]
        if isinstance(options.get("constraints"), str)
        else None,
        "phases": {
            name: round(float(seconds), 1) for name, seconds in res.history.seconds().items()
        },
    }
    phases = res.history.phases
    if "final" in phases:  # which test functions the network path's final fit kept
        row["final_tests"] = phases["final"].tests
    if "warmup" in phases:  # the surrogate's kernel count (chosen by held-out loss with "auto")
        row["kernels"] = phases["warmup"].kernels
    if res.surrogate is not None:
        # the paper's ℒ: mean squared error of Û against the clean field on the whole grid
        pred = res.surrogate.predict_points(full)
        mse = reconstruction_mse(pred, full.fields)
        row["L"] = [mse[f] for f in full.field_names if f in mse]
    return row


def _verdict_row(res, truth) -> dict:
    """The run's verdicts and how they read against the truth (one entry per equation)."""
    scores = verdict_scores(res, truth)
    return {
        "verdicts": {f.lhs: f.verdicts for f in res.history.fits if f.verdicts},
        "honest": [v.honest for v in scores],
        "exact": [v.exact for v in scores],
        "uncertain": [v.uncertain for v in scores],
    }


def coefficient_table(system) -> dict[str, dict[str, float]]:
    """``{lhs: {term: coefficient}}`` as short text, every digit (JSON-ready)."""
    return {e.lhs.short(): {t.short(): float(c) for t, c in e.coefficients.items()} for e in system}


def format_rows(rows: Sequence[dict]) -> str:
    """A Markdown table of benchmark rows."""

    def fmt(values):
        return " / ".join(f"{v:.4f}" for v in values)

    lines = [
        "| system | r | σ_NR | seed | TPR | E∞ | E₂ | ℒ | s | equation |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        eq = r.get("equation_display", r["equation"]).replace("\n", " ; ")
        lines.append(
            f"| {r['system']} | {r['ratio']:g} | {r['noise']:g} | {r['seed']} | "
            f"{' / '.join(f'{v:.2f}' for v in r['TPR'])} | {fmt(r['E_inf'])} | {fmt(r['E_2'])} | "
            f"{' / '.join(f'{v:.2e}' for v in r['L']) if r.get('L') else '--'} | "
            f"{r['seconds']:.1f} | `{eq}` |"
        )
    return "\n".join(lines)
