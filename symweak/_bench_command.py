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

__all__ = ["add_bench_parser", "bench_command", "zoo_summary"]


def bench_command(args: argparse.Namespace) -> int:
    """Run ``symweak bench NAME ...`` (see :func:`add_bench_parser`)."""
    fixed = ("data", "speed", "units", "paper", "hole")
    if args.set and args.name in fixed:
        raise SymweakError(
            f"--set applies to a system's row (`symweak bench burgers --set surrogates=3`) "
            f"and to `zoo` and `fullgrid`, not to `{args.name}`; leave it out."
        )
    reports = {"data": _bench_data, "speed": _bench_speed, "units": _bench_units}
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


def add_bench_parser(sub) -> None:
    """The ``bench`` command's options."""
    p = sub.add_parser(
        "bench",
        help="benchmark systems: `bench NAME --ratio R --noise S`, `bench data NAME`, "
        "`bench fullgrid`",
        description=(
            "Run a benchmark row (`symweak bench burgers --ratio 0.1 --noise 0.2`), write a "
            "dataset (`symweak bench data burgers --out b.npz`), or run the full-grid noise "
            "sweep (`symweak bench fullgrid [NAMES] [--classic]`)."
        ),
    )
    p.add_argument(
        "name", help="a system, `data`, `fullgrid`, `zoo`, `paper`, `speed`, `hole`, `units`"
    )
    p.add_argument(
        "rest", nargs="*", help="system name(s) after `data` / `fullgrid`; cases after `units`"
    )
    p.add_argument("--noises", type=float, nargs="+", default=[0.0, 0.01, 0.1, 0.25, 0.5, 1.0])
    p.add_argument("--classic", action="store_true", help="fullgrid: use PDE-FIND's files")
    p.add_argument("--shared", default="../shared/data", help="folder of the classic files")
    p.add_argument("--json", default=None, help="also write the rows as JSON")
    p.add_argument("--3d", dest="three_d", action="store_true", help="speed: also the 3-D grid")
    p.add_argument(
        "--half",
        choices=["tune", "validate", "all"],
        default="all",
        help="zoo: which half (defaults are tuned on `tune` only; `validate` is reported)",
    )
    p.add_argument("--seeds", default="0", help="zoo, paper: seeds, e.g. 0,1,2")
    p.add_argument(
        "--tables", default=None, help="paper: the systems' tables, e.g. burgers,kdv (default all)"
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="paper, zoo: Dask workers (0: in this process); zoo runs one at a time without it",
    )
    p.add_argument(
        "--store",
        default=None,
        help="paper, zoo --workers: results store (default paper.sqlite, zoo.sqlite); "
        "runs already in it are not run again",
    )
    p.add_argument(
        "--user-data",
        action="store_true",
        help="speed: end-to-end times on point columns (lattice, scattered, complete grid)",
    )
    p.add_argument(
        "--2d", dest="two_d", action="store_true", help="speed --user-data: also wave and NS"
    )
    p.add_argument("--out", help="output file (.npz, .mat, .h5, .nc); default NAME.npz")
    p.add_argument("--ratio", type=float, default=1.0, help="sampling ratio r (default 1)")
    p.add_argument("--noise", type=float, default=0.0, help="noise level sigma_NR (default 0)")
    p.add_argument("--seed", type=int, default=0, help="seed for sampling and noise")
    p.add_argument("--complex", action="store_true", help="keep complex fields (NLS) unsplit")
    p.add_argument(
        "--no-rules",
        action="store_true",
        help="run without the system's physical rules (Galilean for NS, U(1) for NLS)",
    )
    p.add_argument(
        "--constraints",
        default=None,
        help="constraint text used instead of the system's rules, e.g. 'u1(u, v) as pair'",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="a system's row, zoo and fullgrid: any config option, e.g. --set surrogates=3 "
        "(repeatable)",
    )
    p.set_defaults(func=bench_command)
