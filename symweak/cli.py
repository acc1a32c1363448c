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
from ._outputs import check_report_outputs, check_writable
from ._version import __version__

__all__ = ["build_parser", "main"]

# The choices, written out so that building the parser imports neither SymPy nor torch
# (`symweak --help` in well under a second); tests/test_cli.py checks them against the tables.
METHODS = ("auto", "grid", "network")  # symweak.discover.METHODS
CRITERIA = ("wsindy", "elbow", "bic", "log")  # symweak.regress.CRITERIA
TARGETS = ("latex", "numpy", "sim", "torch", "c")  # symweak.export.TARGETS


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


def _overrides(args: argparse.Namespace) -> dict:
    """``--n-tests``, ``--criterion`` and every ``--set key=value`` as config overrides."""
    from .discover import set_options

    out = {}
    if args.n_tests is not None:
        out["n_tests"] = args.n_tests
    if args.criterion is not None:
        out["criterion"] = args.criterion
    out.update(set_options(args.set))
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


def _constraint_text(value: str | None) -> str | None:
    """``--constraints``: the text of a file when the value names one, else the text itself
    (``--constraints "forbid: u"``)."""
    if not value:
        return None
    path = Path(value).expanduser()
    if path.is_file():
        return path.read_text(encoding="utf-8")
    if path.suffix in (".txt", ".spec", ".cfg") and ":" not in value and "(" not in value:
        raise SymweakError(
            f"--constraints names {value}, which does not exist; give a file or the "
            'constraint text itself (--constraints "forbid: u").'
        )
    return value


def _cmd_discover(args: argparse.Namespace) -> int:
    from . import discover, load

    if args.out:
        check_writable(args.out)
    constraints = _constraint_text(args.constraints)
    obs = load(args.file, **_load_options(args))
    if args.domain == "covered":  # test functions only where the data are
        obs = obs.with_domain("covered")
        print(f"domain: {obs.domain.describe()}")
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

    if args.out not in (None, "-"):
        names = {"latex": "eq.tex", "sim": "sim.py", "c": "rhs.c"}
        check_writable(args.out, example=names.get(args.to, "rhs.py"))
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

    out = args.out or str(Path(args.run).with_suffix("")) + "_figures"
    check_writable(out, folder_ok=True)
    res = Discovery.load(args.run)
    space = [c for c in res.coords if c != "t"]
    for flag, axes in (("--periodic", _axes(args.periodic)), ("--mirror", _axes(args.mirror))):
        unknown = [a for a in axes or () if a not in space]
        if unknown:
            raise SymweakError(
                f"{flag} names {unknown}, which are not space axes of this result; its space "
                f"axes are {space}."
            )
    obs = load(args.data) if args.data else None
    skipped: dict[str, str] = {}
    made = save_figures(
        res, out, obs, periodic=_axes(args.periodic), mirror=_axes(args.mirror) or (),
        skipped=skipped,
    )  # fmt: skip
    for path in made:
        print(f"wrote {path}")
    for name, why in skipped.items():
        print(f"not drawn: {name} — {why}")
    if not made:
        hint = "" if obs is not None else "; pass --data FILE to plot the fields"
        raise SymweakError(f"Nothing could be plotted (see above){hint}.")
    return 0


def _axes(text: str | None) -> list[str] | None:
    """``"x, y"`` -> ``["x", "y"]`` (None when not given)."""
    return [a.strip() for a in text.split(",") if a.strip()] if text else None


def _cmd_demo(args: argparse.Namespace) -> int:
    """Burgers' equation twice: from the full noisy grid (the full-grid path, seconds), then
    from a fraction of its points given as plain columns t, x, u, as a user's file holds
    them (the network path, the job symweak exists for). Exit status 0 when both runs find
    the true terms."""
    import time

    from . import discover
    from .bench import columns, generate, get_system

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
        check_report_outputs(args)
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
        threads=args.threads,
    )
    print(summary)
    return 130 if summary.interrupted else 0


def build_parser() -> argparse.ArgumentParser:
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
    _discover_parser(sub)
    _file_parsers(sub)

    p = sub.add_parser("parse", help="check operator sets, terms, equations or constraint specs")
    p.add_argument("kind", choices=["ops", "term", "equation", "constraints"])
    p.add_argument("text", help="the text to parse (or a file name with --file)")
    p.add_argument("--file", action="store_true", help="read the text from the file TEXT")
    p.set_defaults(func=_cmd_parse)

    p = sub.add_parser("options", help="the options of `discover` (--set KEY=VALUE), by group")
    p.add_argument("--markdown", action="store_true", help="print docs/options.md")
    p.set_defaults(func=_cmd_options)

    from ._bench_parser import add_bench_parser

    add_bench_parser(sub)
    return parser


def _discover_parser(sub) -> None:
    p = sub.add_parser("discover", help="discover the PDE in a data file")
    p.add_argument("file", help="observations (.npz, .mat, .h5, .nc, .csv, .parquet)")
    p.add_argument("--coords", default=None, help='table columns of the coordinates ("t,x")')
    p.add_argument("--fields", default=None, help='table columns of the fields ("u,v")')
    p.add_argument("--rename", default=None, help="rename columns first: time=t,X=x")
    p.add_argument("--ops", default="id,^2,^3,sin,*", help='operator set, e.g. "+,-,*,sin"')
    p.add_argument("--lhs", default=None, help='left-hand side(s), e.g. "u_t" or "u_t, v_t"')
    p.add_argument(
        "--constraints", default=None, help="a constraint spec: its text, or a file holding it"
    )
    p.add_argument("--domain", choices=["covered"], help="test functions only where data are")
    p.add_argument("--method", default="auto", choices=METHODS)
    p.add_argument(
        "--n-tests", type=int, default=None, help="number of test functions (default: preset)"
    )
    p.add_argument("--criterion", default=None, choices=CRITERIA)
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="any config option, e.g. --set kernels=250 --set eta=[0.1,0.3] (repeatable)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="save the result as JSON")
    p.set_defaults(func=_cmd_discover)


def _file_parsers(sub) -> None:
    """``export`` and ``plot`` (of a saved result) and ``sweep`` (of a spec or a store)."""
    p = sub.add_parser(
        "export", help="write a saved result as LaTeX, NumPy, a simulation script, PyTorch or C"
    )
    p.add_argument("run", help="a result saved by `symweak discover --out RUN.json`")
    p.add_argument("--to", required=True, choices=TARGETS)
    p.add_argument("--out", default=None, help="output file (default: standard output)")
    p.add_argument("--periodic", default="", help='periodic space axes, e.g. "x,y"')
    p.add_argument("--accuracy", type=int, default=4, help="finite-difference accuracy (even)")
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser("plot", help="figures of a saved result (losses, coefficients, fields)")
    p.add_argument("run", help="a result saved by `symweak discover --out RUN.json`")
    p.add_argument("--data", default=None, help="the observations, to plot fields and residuals")
    p.add_argument(
        "--periodic", default=None, help="space axes that wrap around, for the simulation (x,y)"
    )
    p.add_argument(
        "--mirror", default=None, help="space axes with no-flux ends, for the simulation (x)"
    )
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
    p.add_argument(
        "--threads", type=int, default=None, help="torch threads per run (default: cores / workers)"
    )
    p.add_argument("--scheduler", default=None, help="an existing Dask scheduler, tcp://HOST:PORT")
    p.add_argument("--store", default=None, help="results store (default: the spec's)")
    p.add_argument("--retry-failed", action="store_true", help="run failed runs again")
    p.add_argument("--figure", default=None, help="report: also a figure (PNG/SVG/PDF)")
    p.add_argument("--export", default=None, help="report: also the rows as .parquet or .csv")
    p.set_defaults(func=_cmd_sweep)


def _cmd_options(args: argparse.Namespace) -> int:
    from .discover import ENTRIES, PRESETS, options_markdown

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
