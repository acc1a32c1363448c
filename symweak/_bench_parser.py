"""The ``symweak bench`` command's options; the runner (:mod:`symweak._bench_command`) loads
only when the command runs, so ``symweak --help`` stays quick."""

from __future__ import annotations

import argparse

__all__ = ["add_bench_parser"]


def _bench(args: argparse.Namespace) -> int:
    from ._bench_command import bench_command

    return bench_command(args)


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
        "name",
        help="a system, `data`, `fullgrid`, `zoo`, `paper`, `speed`, `profile`, `hole`, `units`",
    )
    p.add_argument(
        "rest",
        nargs="*",
        help="system name(s) after `data` / `fullgrid` / `profile`; cases after `units`",
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
    p.set_defaults(func=_bench)
