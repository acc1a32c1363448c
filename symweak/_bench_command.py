"""``symweak bench``: benchmark rows, datasets, the zoo, the paper's tables, speed and units
reports, as one command (the parser and the runner of its arguments)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ._errors import SymweakError
from .bench import (
    CLASSIC_FILES,
    classic_observations,
    format_rows,
    generate,
    get_system,
    run_case,
    zoo_summary,
)
from .discover import set_options as _set_options

__all__ = ["bench_command", "zoo_summary"]


def bench_command(args: argparse.Namespace) -> int:
    """Run ``symweak bench NAME ...`` (see :func:`add_bench_parser`)."""
    fixed = ("data", "speed", "units", "paper", "hole")
    if args.set and args.name in fixed:
        raise SymweakError(
            f"--set applies to a system's row (`symweak bench burgers --set surrogates=3`) "
            f"and to `zoo` and `fullgrid`, not to `{args.name}`; leave it out."
        )
    reports = {
        "data": _bench_data,
        "speed": _bench_speed,
        "units": _bench_units,
        "profile": _bench_profile,
    }
    if args.name in reports:
        return reports[args.name](args)
    if args.name == "paper":
        return _bench_paper(args)
    if args.name == "zoo" and args.workers is not None:
        from .bench import zoo_cases

        rows, interrupted = _zoo_sweep(
            zoo_cases(args.half), args, _seeds(args.seeds), _set_options(args.set)
        )
        print(format_rows(rows))
        print(zoo_summary(rows))
        return 130 if interrupted else 0
    rows = {"hole": _bench_hole, "zoo": _bench_zoo, "fullgrid": _bench_fullgrid}.get(
        args.name, _bench_row
    )(args)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


def _bench_data(args) -> int:
    """``bench data NAME``: write a system's observations to a file."""
    if not args.rest:
        raise SymweakError("Name a system, e.g. `symweak bench data burgers`.")
    system = get_system(args.rest[0])
    obs = generate(system.name, split=not args.complex)
    if args.ratio != 1.0:  # the API's own checks (a ratio above 1 is refused there)
        obs = obs.sample(args.ratio, seed=args.seed)
    if args.noise != 0.0:  # (and a negative noise level)
        obs = obs.add_noise(args.noise, seed=args.seed)
    out = args.out or f"{system.name}.npz"
    obs.save(out)
    print(f"{system.title}: {obs.describe()}")
    print(f"true equation(s): {system.true_equations().short()}")
    print(f"wrote {out}")
    return 0


def _bench_speed(args) -> int:
    from .bench import speed_report, user_data_report

    if args.user_data:
        report = user_data_report(two_d=args.two_d)
    else:
        report = speed_report(three_d=args.three_d)
    for line in report:
        print(line, flush=True)
    return 0


def _bench_profile(args) -> int:
    """``bench profile [NAME]``: one run under torch.profiler, a table per phase."""
    from .bench import profile_report

    name = args.rest[0] if args.rest else "burgers"
    for line in profile_report(name, args.ratio, args.noise, args.seed, _set_options(args.set)):
        print(line, flush=True)
    return 0


def _bench_units(args) -> int:
    from .bench import units_report

    for line in units_report(args.noise, args.seed, args.rest or None):
        print(line, flush=True)
    return 0


def _bench_paper(args) -> int:
    from .sweep import paper_report, paper_spec, sweep

    store = args.store or "paper.sqlite"
    spec = paper_spec(args.tables, _seeds(args.seeds), store)
    summary = sweep(spec, workers=args.workers)
    print(summary)
    print(paper_report(store, args.tables))
    return 130 if summary.interrupted else 0


def _bench_hole(args) -> list[dict]:
    from .bench import holed

    rows = []
    system = get_system(args.rest[0] if args.rest else "wave")
    data, domain = holed(system.name, args.ratio, seed=args.seed, noise=args.noise)
    for label, obs in (("with the domain", data.with_domain(domain)), ("no domain", data)):
        row = run_case(system.name, 1.0, 0.0, args.seed, data=obs)
        row.update(ratio=args.ratio, noise=args.noise, domain=label)
        rows.append(row)
        print(f"{label}: {format_rows([row]).splitlines()[-1]}", flush=True)
    return rows


def _bench_zoo(args) -> list[dict]:
    """``bench zoo`` one run after another (``--workers``: :func:`_zoo_sweep`)."""
    from .bench import zoo_cases

    rows = []
    options = _set_options(args.set)
    for system in zoo_cases(args.half):
        for seed in _seeds(args.seeds):
            row = run_case(system.name, args.ratio, args.noise, seed, columns=True, **options)
            row["half"] = system.settings["half"]
            rows.append(row)
            print(format_rows([row]).splitlines()[-1], flush=True)
    print(zoo_summary(rows))
    return rows


def _bench_fullgrid(args) -> list[dict]:
    rows = []
    folder = Path(args.shared)
    options = _set_options(args.set)
    for name in args.rest or list(CLASSIC_FILES):
        system = get_system(name)
        data = classic_observations(system, folder) if args.classic else None
        for noise in args.noises:
            row = run_case(system.name, 1.0, noise, args.seed, data=data, **options)
            row["data"] = CLASSIC_FILES[system.name] if args.classic else "generated"
            rows.append(row)
            print(format_rows([row]).splitlines()[-1], flush=True)
    return rows


def _bench_row(args) -> list[dict]:
    """``bench NAME``: one row of a system."""
    system = get_system(args.name)
    extra = _set_options(args.set)
    if args.constraints is not None:
        if args.no_rules:
            raise SymweakError("--constraints replaces the system's rules; leave out --no-rules.")
        from .grammar import parse_constraints

        parse_constraints(args.constraints)  # a typo fails here, before any data work
        extra["constraints"] = args.constraints
    row = run_case(system.name, args.ratio, args.noise, args.seed, rules=not args.no_rules, **extra)
    print(format_rows([row]))
    return [row]


def _seeds(text: str) -> list[int]:
    try:
        seeds = [int(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        seeds = []
    if not seeds or any(v < 0 for v in seeds):
        raise SymweakError(f"--seeds must be integers >= 0 separated by commas, got {text!r}.")
    return seeds


def _zoo_sweep(cases, args, seeds, options) -> tuple[list[dict], bool]:
    """``bench zoo --workers N``: the runs of ``cases`` as a sweep on Dask (``--store``,
    default zoo.sqlite; runs already stored are not run again), read back as zoo rows.
    Returns (rows, interrupted)."""
    from .sweep import Store, load_spec, sweep

    spec = load_spec(
        {
            "store": args.store or "zoo.sqlite",
            "runs": [
                {
                    "systems": [c.name for c in cases],
                    "ratio": [args.ratio],
                    "noise": [args.noise],
                    "seeds": list(seeds),
                    "columns": True,
                    "options": dict(options),
                }
            ],
        }
    )
    summary = sweep(spec, workers=args.workers)
    print(summary, flush=True)
    stored = {row["key"]: row for row in Store(spec.store).rows()}
    half = {c.name: c.settings["half"] for c in cases}
    rows = []
    for run in spec.runs:  # the spec's order: case by case, seed by seed
        row = stored.get(run.key)
        if row is None or row["status"] != "ok":
            continue
        rows.append(
            {
                "system": run.system, "ratio": run.ratio, "noise": run.noise,
                "seed": run.seed, "half": half[run.system], "TPR": [row["tpr"]],
                "E_inf": [row["e_inf"]], "E_2": [row["e_2"]], "seconds": row["seconds"],
                "equation": row["equation"],
                "equation_display": display_equation(row["equation"]),
                "honest": None if row["honest"] is None else [bool(row["honest"])],
                "exact": None if row["exact"] is None else [bool(row["exact"])],
                "verdicts": row["verdicts"],
            }
        )  # fmt: skip
    return rows, summary.interrupted


def display_equation(text: str, digits: int = 4) -> str:
    """A stored equation (every digit, one equation per line) as ``print(res)`` shows it:
    ``digits`` significant digits per coefficient (the text itself where it does not parse)."""
    from .grammar import parse_equation

    try:
        return "\n".join(parse_equation(line).short(digits) for line in text.splitlines() if line)
    except SymweakError:
        return text
