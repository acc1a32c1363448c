"""`symweak bench paper`: the paper's result tables as a sweep, reported next to the
paper's own TPR and E∞ (``paper.toml``, shipped with the package)."""

from __future__ import annotations

import statistics
from pathlib import Path

from .._errors import SymweakError
from ._spec import toml
from ._store import Store

__all__ = ["paper_report", "paper_rows", "paper_spec"]

_TABLE = Path(__file__).with_name("paper.toml")


def paper_rows(tables=None) -> list[dict]:
    """The paper's rows (system, ratio, noise, tpr, e_inf), of ``tables`` (system names)
    or all of them, in the paper's order."""
    rows = toml().loads(_TABLE.read_text(encoding="utf-8"))["rows"]
    known = list(dict.fromkeys(r["system"] for r in rows))
    if tables is None:
        return rows
    if isinstance(tables, str):
        tables = [t.strip() for t in tables.split(",") if t.strip()]
    unknown = [t for t in tables if t not in known]
    if unknown:
        raise SymweakError(f"No paper table for {unknown}; the tables are {', '.join(known)}.")
    return [r for r in rows if r["system"] in tables]


def paper_spec(tables=None, seeds=(0,), store="paper.sqlite") -> dict:
    """A sweep spec of the paper's rows (the paper's protocol: sampled from the grid, the
    system's physical rules), ``seeds`` each."""
    return {
        "store": str(store),
        "runs": [
            {
                "systems": [r["system"]],
                "ratio": [r["ratio"]],
                "noise": [r["noise"]],
                "seeds": list(seeds),
            }
            for r in paper_rows(tables)
        ],
    }


def paper_report(store, tables=None) -> str:
    """A Markdown table: each paper row with the paper's TPR and E∞ and ours (runs with
    TPR = 1 / finished, median E∞, median seconds), "not run" where the store has none."""
    rows = Store(store).rows() if not isinstance(store, Store) else store.rows()
    ours: dict[tuple, list] = {}
    for row in rows:
        cfg = row["config"] or {}
        if cfg.get("options") or cfg.get("columns") or not cfg.get("rules", True):
            continue
        ours.setdefault((row["system"], row["ratio"], row["noise"]), []).append(row)
    lines = [
        "| system | r | σ | paper TPR | paper E∞ | TPR = 1 | E∞ (median) | seconds (median) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    matched = reached = 0
    for p in paper_rows(tables):
        got = ours.get((p["system"], float(p["ratio"]), float(p["noise"])), [])
        ok = [r for r in got if r["status"] == "ok"]
        head = (
            f"| {p['system']} | {p['ratio']:.1%} | {p['noise']:.0%} | {p['tpr']:.2f} | "
            f"{p['e_inf']:.4f} |"
        )
        if not got:
            lines.append(head + " not run | | |")
            continue
        hits = sum(r["tpr"] == 1.0 for r in ok)
        failed = len(got) - len(ok)
        e_inf = statistics.median(r["e_inf"] for r in ok) if ok else None
        secs = statistics.median(r["seconds"] for r in ok) if ok else None
        matched += 1
        reached += bool(ok) and hits == len(ok)
        lines.append(
            head
            + f" {hits}/{len(ok)}{f' ({failed} failed)' if failed else ''} |"
            + (f" {e_inf:.4f} |" if e_inf is not None else " |")
            + (f" {secs:.0f} |" if secs is not None else " |")
        )
    lines.append("")
    lines.append(
        f"{matched} of {len(paper_rows(tables))} paper rows run; TPR = 1 in every seed on "
        f"{reached} of them."
    )
    return "\n".join(lines)
