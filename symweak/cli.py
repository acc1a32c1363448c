"""The ``symweak`` command.

Errors print one clear line and exit with status 2 (``--debug`` shows the traceback).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

from ._errors import SymweakError
from ._version import __version__

__all__ = ["build_parser", "main"]


def _cmd_parse(args: argparse.Namespace) -> int:
    from . import grammar

    text = args.text
    if args.file:
        with open(args.text, encoding="utf-8") as fh:
            text = fh.read()
    kind = args.kind
    if kind == "ops":
        ops = grammar.parse_operators(text)
        unary = ", ".join(op.symbol for op in ops.unary) or "none"
        binary = ", ".join(op.symbol for op in ops.binary) or "none"
        print(f"unary: {unary}\nbinary: {binary}")
    elif kind == "term":
        for term in grammar.parse_terms(text):
            print(f"{term.short()}\t{term.latex()}\tstrong: {term.strong()}")
    elif kind == "equation":
        eq = grammar.parse_equation(text)
        print(eq.short())
        print(eq.latex())
    else:
        c = grammar.parse_constraints(text)
        print(f"coords: {', '.join(map(str, c.coords))}")
        print(f"fields: {', '.join(c.fields) or '(from the data)'}")
        print(f"lhs: {', '.join(t.short() for t in c.lhs) or '(default)'}")
        print(f"ops: {c.ops.spec() if c.ops else '(default)'}")
        if c.max_order:
            print("order: " + ", ".join(f"{k} <= {v}" for k, v in c.max_order.items()))
        if c.forbid:
            print(f"forbid: {', '.join(t.short() for t in c.forbid)}")
        if c.keep:
            print(f"keep: {', '.join(t.short() for t in c.keep)}")
        if c.add:
            print(f"add: {', '.join(t.short() for t in c.add)}")
        if c.conserved:
            print(f"conserved: {', '.join(c.conserved)}")
        for rule in c.rules:
            if rule.builtin:
                action = f" as {rule.action}" if rule.action else ""
                print(f"rule: {rule.name}({', '.join(rule.fields)}){action}")
            else:
                subs = ", ".join(f"{a} -> {b}" for a, b in rule.substitutions)
                print(f"rule {rule.name}: {subs} ({rule.action})")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from . import bench

    fixed = ("data", "speed", "units", "paper", "hole")
    if args.set and args.name in fixed:
        raise SymweakError(
            f"--set applies to a system's row (`symweak bench burgers --set surrogates=3`) "
            f"and to `zoo` and `fullgrid`, not to `{args.name}`; leave it out."
        )
    if args.name == "data":
        if not args.rest:
            raise SymweakError("Name a system, e.g. `symweak bench data burgers`.")
        system = bench.get_system(args.rest[0])
        obs = bench.generate(system.name, split=not args.complex)
        if args.ratio < 1.0:
            obs = obs.sample(args.ratio, seed=args.seed)
        if args.noise > 0.0:
            obs = obs.add_noise(args.noise, seed=args.seed)
        out = args.out or f"{system.name}.npz"
        obs.save(out)
        print(f"{system.title}: {obs.describe()}")
        print(f"true equation(s): {system.true_equations().short()}")
        print(f"wrote {out}")
        return 0
    import json

    from .bench import CLASSIC_FILES, classic_observations, format_rows, get_system, run_case

    if args.name == "speed":
        from .bench._speed import speed_report, user_data_report

        if args.user_data:
            report = user_data_report(two_d=args.two_d)
        else:
            report = speed_report(three_d=args.three_d)
        for line in report:
            print(line, flush=True)
        return 0
    if args.name == "units":
        from .bench._units import units_report

        for line in units_report(args.noise, args.seed, args.rest or None):
            print(line, flush=True)
        return 0
    if args.name == "paper":
        from .sweep import sweep
        from .sweep._paper import paper_report, paper_spec

        store = args.store or "paper.sqlite"
        spec = paper_spec(args.tables, _seeds(args.seeds), store)
        summary = sweep(spec, workers=args.workers)
        print(summary)
        print(paper_report(store, args.tables))
        return 130 if summary.interrupted else 0
    rows = []
    if args.name == "hole":
        from .bench._domains import holed

        system = get_system(args.rest[0] if args.rest else "wave")
        data, domain = holed(system.name, args.ratio, seed=args.seed, noise=args.noise)
        for label, obs in (("with the domain", data.with_domain(domain)), ("no domain", data)):
            row = run_case(system.name, 1.0, 0.0, args.seed, data=obs)
            row.update(ratio=args.ratio, noise=args.noise, domain=label)
            rows.append(row)
            print(f"{label}: {format_rows([row]).splitlines()[-1]}", flush=True)
    elif args.name == "zoo":
        from .bench._zoo import zoo_cases

        seeds = _seeds(args.seeds)
        options = _set_options(args.set)
        if args.workers is not None:
            rows, interrupted = _zoo_sweep(zoo_cases(args.half), args, seeds, options)
            print(format_rows(rows))
            print(zoo_summary(rows))
            return 130 if interrupted else 0
        for system in zoo_cases(args.half):
            for seed in seeds:
                row = run_case(
                    system.name, args.ratio, args.noise, seed, columns=True, **options
                )
                row["half"] = system.settings["half"]
                rows.append(row)
                print(format_rows([row]).splitlines()[-1], flush=True)
        print(zoo_summary(rows))
    elif args.name == "fullgrid":
        folder = Path(args.shared)
        names = args.rest or list(CLASSIC_FILES)
        options = _set_options(args.set)
        for name in names:
            system = get_system(name)
            data = classic_observations(system, folder) if args.classic else None
            for noise in args.noises:
                row = run_case(system.name, 1.0, noise, args.seed, data=data, **options)
                row["data"] = CLASSIC_FILES[system.name] if args.classic else "generated"
                rows.append(row)
                print(format_rows([row]).splitlines()[-1], flush=True)
    else:
        system = get_system(args.name)
        extra = _set_options(args.set)
        if args.constraints is not None:
            if args.no_rules:
                raise SymweakError(
                    "--constraints replaces the system's rules; leave out --no-rules."
                )
            from .grammar import parse_constraints

            parse_constraints(args.constraints)  # a typo fails here, before any data work
            extra["constraints"] = args.constraints
        row = run_case(
            system.name, args.ratio, args.noise, args.seed, rules=not args.no_rules, **extra
        )
        rows.append(row)
        print(format_rows(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


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
            }
        )  # fmt: skip
    return rows, summary.interrupted


def zoo_summary(rows) -> str:
    """The recovery rate (every equation with TPR = 1) per half and overall."""
    lines = []
    for half in ("tune", "validate"):
        mine = [r for r in rows if r.get("half") == half]
        if mine:
            ok = sum(all(v == 1.0 for v in r["TPR"]) for r in mine)
            lines.append(
                f"{half} half: TPR = 1 in {ok} of {len(mine)} runs ({100 * ok / len(mine):.0f} %)"
            )
    ok = sum(all(v == 1.0 for v in r["TPR"]) for r in rows)
    lines.append(
        f"all: TPR = 1 in {ok} of {len(rows)} runs"
        + (f" ({100 * ok / len(rows):.0f} %)" if rows else "")
    )
    return "\n".join(lines)


def _parse_value(text: str):
    """A ``--set`` value: JSON (numbers, true/false/null, lists, objects) or a bare string."""
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _overrides(args: argparse.Namespace) -> dict:
    """``--n-tests``, ``--criterion`` and every ``--set key=value`` as config overrides."""
    out = {}
    if args.n_tests is not None:
        out["n_tests"] = args.n_tests
    if args.criterion is not None:
        out["criterion"] = args.criterion
    out.update(_set_options(args.set))
    return out


def _set_options(items) -> dict:
    """Every ``--set key=value`` as a config override; an unknown key is an error."""
    from .discover import ENTRIES

    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SymweakError(f"--set takes key=value, got {item!r} (e.g. --set kernels=250).")
        if key.strip().rsplit(".", 1)[-1] not in ENTRIES:
            raise SymweakError(
                f"--set: unknown option `{key.strip()}`. "
                f"Known options: {', '.join(sorted(ENTRIES))}."
            )
        out[key.strip()] = _parse_value(value.strip())
    return out


def _load_options(args: argparse.Namespace) -> dict:
    """``--coords``, ``--fields`` and ``--rename old=new,...`` for ``load``."""
    out: dict = {}
    if args.coords:
        out["coords"] = args.coords
    if args.fields:
        out["fields"] = [f.strip() for f in args.fields.split(",") if f.strip()]
    if args.rename:
        pairs = [p.partition("=") for p in args.rename.split(",") if p.strip()]
        if any(not sep or not a.strip() or not b.strip() for a, sep, b in pairs):
            raise SymweakError(
                f"--rename takes old=new pairs, e.g. time=t,X=x; got {args.rename!r}."
            )
        out["rename"] = {a.strip(): b.strip() for a, _, b in pairs}
    return out


def _cmd_discover(args: argparse.Namespace) -> int:
    from . import discover, load

    obs = load(args.file, **_load_options(args))
    if args.domain == "covered":  # test functions only where the data are
        obs = obs.with_domain("covered")
        print(f"domain: {obs.domain.describe()}")
    constraints = None
    if args.constraints:
        with open(args.constraints, encoding="utf-8") as fh:
            constraints = fh.read()
    res = discover(
        obs,
        ops=args.ops,
        lhs=args.lhs,
        seed=args.seed,
        constraints=constraints,
        method=args.method,
        **_overrides(args),
    )
    if res.uncertainty:  # the network path: intervals, probabilities, the Pareto front
        for line in res.summary().splitlines()[1:]:
            print(line)
    print(res)
    if args.out:
        res.save(args.out)
        print(f"saved {args.out}")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from .discover import Discovery
    from .export import TARGETS

    res = Discovery.load(args.run)
    periodic = [p.strip() for p in args.periodic.split(",") if p.strip()] if args.periodic else []
    text = res.to_code(args.to, periodic=periodic, accuracy=args.accuracy)
    if args.out in (None, "-"):
        sys.stdout.write(text)
        return 0
    from .export import write

    write(text, args.out)
    print(f"wrote {args.out} ({TARGETS[args.to].description})")
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    from .data import load
    from .discover import Discovery
    from .plot import save_figures

    res = Discovery.load(args.run)
    obs = load(args.data) if args.data else None
    out = args.out or str(Path(args.run).with_suffix("")) + "_figures"
    made = save_figures(res, out, obs)
    if not made:
        raise SymweakError(
            "Nothing to plot: the result has no training history; pass --data FILE to plot "
            "the fields."
        )
    for path in made:
        print(f"wrote {path}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    """Burgers' equation twice: from the full noisy grid (the full-grid path, seconds), then
    from a fraction of its points given as plain columns t, x, u, as a user's file holds
    them (the network path, the job symweak exists for). Exit status 0 when both runs find
    the true terms."""
    import time

    from . import discover
    from .bench import generate, get_system
    from .bench._speed import columns

    if not 0.0 < args.ratio <= 1.0:
        raise SymweakError(f"--ratio must be in (0, 1], got {args.ratio}.")
    system = get_system("burgers")
    truth = system.true_equations()
    full = generate(system.name)
    print(f"Burgers' equation from symweak's own solver: {full.describe().splitlines()[0]}")
    print(f"noise: sigma_NR = {args.noise} (u + sigma * rms(u) * N(0, 1)), seed {args.seed}")
    rows = [("true", truth.short(args.digits), "", "")]

    print("\n1. the full grid, noisy: the full-grid path (fixed library, a few seconds)")
    start = time.perf_counter()
    res = discover(full.add_noise(args.noise, seed=args.seed), lhs="u_t", seed=args.seed)
    rows.append(_demo_row("full grid", res, truth, time.perf_counter() - start, args.digits))
    print(f"   {rows[-1][1]}")

    sparse = columns(full.sample(args.ratio, seed=args.seed).add_noise(args.noise, seed=args.seed))
    print(
        f"\n2. {args.ratio:.0%} of the points ({len(sparse):,}), noisy, as plain columns t, x, u "
        "in no order: the network path (surrogate, symbolic search, weak-form fit)",
        flush=True,
    )
    start = time.perf_counter()
    res = discover(sparse, ops=system.ops, lhs="u_t", seed=args.seed, progress=True)
    rows.append(
        _demo_row(f"{args.ratio:.0%} points", res, truth, time.perf_counter() - start, args.digits)
    )
    print(f"   {rows[-1][1]}")

    width = max(len(r[0]) for r in rows)
    eq_width = max(len(r[1]) for r in rows)
    print()
    for label, eq, score, seconds in rows:
        print(f"{label:<{width}}  {eq:<{eq_width}}  {score:<22}  {seconds}".rstrip())
    ok = all(r[2].startswith("TPR 1.00") for r in rows[1:])
    return 0 if ok else 1


def _demo_row(label, res, truth, seconds, digits) -> tuple[str, str, str, str]:
    from .bench.metrics import score_system

    (sc,) = score_system(res.system, truth)
    return (label, res.short(digits), f"TPR {sc.tpr:.2f}, E_inf {sc.e_inf:.4f}", f"{seconds:.1f} s")


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .sweep import Store, report, report_figure, sweep

    if args.target[0] == "report":
        if len(args.target) != 2:
            raise SymweakError("usage: symweak sweep report STORE")
        path = Path(args.target[1])
        if not path.is_file():
            raise SymweakError(f"No such results store: {path}.")
        store = Store(path)
        print(report(store))
        if args.figure:
            print(f"figure: {report_figure(store, args.figure)}")
        if args.export:
            store.export(args.export)
            print(f"rows: {args.export}")
        return 0
    if len(args.target) != 1:
        raise SymweakError("usage: symweak sweep SPEC.toml [--workers N] (one spec at a time)")
    summary = sweep(
        args.target[0],
        workers=0 if args.serial else args.workers,
        scheduler=args.scheduler,
        store=args.store,
        retry_failed=args.retry_failed,
    )
    print(summary)
    return 130 if summary.interrupted else 0


def build_parser() -> argparse.ArgumentParser:
    from .discover import METHODS
    from .export import TARGETS
    from .regress import CRITERIA

    parser = argparse.ArgumentParser(
        prog="symweak",
        description="Discover the PDE governing a system from sparse, noisy observations.",
    )
    parser.add_argument("--version", action="version", version=f"symweak {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "demo",
        help="discover Burgers' equation from its noisy full grid, then from 10 %% of its points",
    )
    p.add_argument("--noise", type=float, default=0.1, help="noise level sigma_NR (default 0.1)")
    p.add_argument("--ratio", type=float, default=0.1, help="fraction of points (default 0.1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--digits", type=int, default=4, help="significant digits shown (default 4)")
    p.set_defaults(func=_cmd_demo)

    p = sub.add_parser("discover", help="discover the PDE in a data file")
    p.add_argument("file", help="observations (.npz, .mat, .h5, .nc, .csv, .parquet)")
    p.add_argument("--coords", default=None, help='table columns of the coordinates ("t,x")')
    p.add_argument("--fields", default=None, help='table columns of the fields ("u,v")')
    p.add_argument("--rename", default=None, help="rename columns first: time=t,X=x")
    p.add_argument("--ops", default="id,^2,^3,sin,*", help='operator set, e.g. "+,-,*,sin"')
    p.add_argument("--lhs", default=None, help='left-hand side(s), e.g. "u_t" or "u_t, v_t"')
    p.add_argument("--constraints", default=None, help="file with a constraint spec")
    p.add_argument("--domain", choices=["covered"], help="test functions only where data are")
    p.add_argument("--method", default="auto", choices=list(METHODS))
    p.add_argument(
        "--n-tests", type=int, default=None, help="number of test functions (default: preset)"
    )
    p.add_argument("--criterion", default=None, choices=list(CRITERIA))
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="any config option, e.g. --set kernels=250 --set eta=[0.1,0.3] (repeatable)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="save the result as JSON")
    p.set_defaults(func=_cmd_discover)

    p = sub.add_parser(
        "export", help="write a saved result as LaTeX, NumPy, a simulation script, PyTorch or C"
    )
    p.add_argument("run", help="a result saved by `symweak discover --out RUN.json`")
    p.add_argument("--to", required=True, choices=list(TARGETS))
    p.add_argument("--out", default=None, help="output file (default: standard output)")
    p.add_argument("--periodic", default="", help='periodic space axes, e.g. "x,y"')
    p.add_argument("--accuracy", type=int, default=4, help="finite-difference accuracy (even)")
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser("plot", help="figures of a saved result (losses, coefficients, fields)")
    p.add_argument("run", help="a result saved by `symweak discover --out RUN.json`")
    p.add_argument("--data", default=None, help="the observations, to plot fields and residuals")
    p.add_argument("--out", default=None, help="folder for the PNG files (default RUN_figures)")
    p.set_defaults(func=_cmd_plot)

    p = sub.add_parser(
        "sweep",
        help="run a sweep spec on Dask (`sweep SPEC.toml`), or report a store "
        "(`sweep report STORE`)",
        description=(
            "Run every run of a TOML sweep spec not yet in its results store, on a local Dask "
            "cluster (or --scheduler), one SQLite row per run; run it again to resume. "
            "`symweak sweep report STORE` prints the recovery table."
        ),
    )
    p.add_argument("target", nargs="+", help="SPEC.toml, or `report STORE`")
    p.add_argument("--workers", type=int, default=None, help="local workers (default: cores)")
    p.add_argument("--serial", action="store_true", help="run in this process, one at a time")
    p.add_argument("--scheduler", default=None, help="an existing Dask scheduler, tcp://HOST:PORT")
    p.add_argument("--store", default=None, help="results store (default: the spec's)")
    p.add_argument("--retry-failed", action="store_true", help="run failed runs again")
    p.add_argument("--figure", default=None, help="report: also a figure (PNG/SVG/PDF)")
    p.add_argument("--export", default=None, help="report: also the rows as .parquet or .csv")
    p.set_defaults(func=_cmd_sweep)

    p = sub.add_parser("parse", help="check operator sets, terms, equations or constraint specs")
    p.add_argument("kind", choices=["ops", "term", "equation", "constraints"])
    p.add_argument("text", help="the text to parse (or a file name with --file)")
    p.add_argument("--file", action="store_true", help="read the text from the file TEXT")
    p.set_defaults(func=_cmd_parse)

    p = sub.add_parser("options", help="the options of `discover` (--set KEY=VALUE), by group")
    p.add_argument("--markdown", action="store_true", help="print docs/options.md")
    p.set_defaults(func=_cmd_options)

    _bench_parser(sub)
    return parser


def _cmd_options(args: argparse.Namespace) -> int:
    from .discover import ENTRIES
    from .discover._config import PRESETS, options_markdown

    if args.markdown:
        print(options_markdown(), end="")
        return 0
    group = None
    for name, (section, f) in ENTRIES.items():
        if section != group:
            group = section
            print(f"{section}:")
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default
        print(f"  {name} = {default!r}  [{', '.join(f.metadata['methods'])}]  {f.metadata['doc']}")
    print("network preset: " + ", ".join(f"{k}={v!r}" for k, v in PRESETS["network"].items()))
    return 0


def _bench_parser(sub) -> None:
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
    p.set_defaults(func=_cmd_bench)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except (SymweakError, OSError) as exc:
        if args.debug:
            raise
        first, *rest = str(exc).splitlines() or [type(exc).__name__]
        print(f"symweak: error: {first}", file=sys.stderr)
        for line in rest:
            print(f"  {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("symweak: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
