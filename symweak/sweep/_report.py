"""Reports of a results store: recovery probability per row and noise level, median E∞,
median time; Markdown, and a figure of recovery against noise per system."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path

from .._errors import SymweakError
from ._store import Store

__all__ = ["report", "report_figure", "summarise"]


def _row_label(row) -> str:
    cfg = row["config"] or {}
    data = row["system"] or Path(row["file"] or "?").name
    opts = cfg.get("options") or {}
    extra = "".join(f" {k}={json.dumps(v)}" for k, v in sorted(opts.items()))
    flags = (" columns" if cfg.get("columns") else "") + (
        "" if cfg.get("rules", True) else " no-rules"
    )
    return f"{data} r={row['ratio']:g}{flags}{extra}"


def summarise(rows) -> dict[tuple[str, float], dict]:
    """``{(row label, noise): {"runs", "ok", "failed", "recovered", "e_inf", "seconds"}}``:
    recovered is the fraction of finished runs with TPR = 1 (None without a truth); e_inf and
    seconds are medians over finished runs."""
    groups: dict[tuple[str, float], list] = defaultdict(list)
    for row in rows:
        groups[(_row_label(row), row["noise"])].append(row)
    out = {}
    for key, members in groups.items():
        ok = [r for r in members if r["status"] == "ok"]
        scored = [r for r in ok if r["tpr"] is not None]
        out[key] = {
            "runs": len(members),
            "ok": len(ok),
            "failed": len(members) - len(ok),
            "recovered": (sum(r["tpr"] == 1.0 for r in scored) / len(scored) if scored else None),
            "e_inf": statistics.median(r["e_inf"] for r in scored) if scored else None,
            "seconds": statistics.median(r["seconds"] for r in ok) if ok else None,
        }
    return out


def report(store) -> str:
    """A Markdown table: one row per data set, ratio and options; one column per noise level
    holding ``recovered/finished (median E∞, median s)``; failures counted."""
    rows = Store(store).rows() if not isinstance(store, Store) else store.rows()
    if not rows:
        raise SymweakError(f"{store}: the store holds no runs yet.")
    summary = summarise(rows)
    labels = list(dict.fromkeys(label for label, _ in summary))
    noises = sorted({noise for _, noise in summary})
    head = "| run | " + " | ".join(f"σ = {n:g}" for n in noises) + " |"
    lines = [head, "|---" * (len(noises) + 1) + "|"]
    for label in labels:
        cells = []
        for noise in noises:
            s = summary.get((label, noise))
            cells.append(_cell(s))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    total = len(rows)
    failed = sum(r["status"] != "ok" for r in rows)
    scored = [r for r in rows if r["status"] == "ok" and r["tpr"] is not None]
    rate = sum(r["tpr"] == 1.0 for r in scored)
    lines.append("")
    lines.append(
        f"{total} runs, {failed} failed; TPR = 1 in {rate} of {len(scored)} scored runs. "
        "Cells: runs with TPR = 1 / finished runs (median E∞, median seconds)."
    )
    return "\n".join(lines)


def _cell(s) -> str:
    if s is None:
        return ""
    if s["recovered"] is None:
        text = f"{s['ok']} ok"
    else:
        text = f"{round(s['recovered'] * s['ok'])}/{s['ok']} ({s['e_inf']:.3g}"
        text += f", {s['seconds']:.0f} s)" if s["seconds"] is not None else ")"
    if s["failed"]:
        text += f", {s['failed']} failed"
    return text


def report_figure(store, path) -> Path:
    """Recovery probability against noise, one line per row of the report (PNG, SVG, PDF)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .._files import atomic_write

    rows = Store(store).rows() if not isinstance(store, Store) else store.rows()
    summary = summarise(rows)
    fig, ax = plt.subplots(figsize=(6, 4))
    for label in dict.fromkeys(label for label, _ in summary):
        points = sorted(
            (noise, s["recovered"])
            for (lab, noise), s in summary.items()
            if lab == label and s["recovered"] is not None
        )
        if points:
            ax.plot(*zip(*points), marker="o", label=label)
    ax.set_xlabel("noise level σ_NR")
    ax.set_ylabel("fraction of seeds with TPR = 1")
    ax.set_ylim(-0.05, 1.05)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = Path(path)
    atomic_write(path, lambda tmp: fig.savefig(tmp, format=path.suffix.lstrip(".") or "png"))
    plt.close(fig)
    return path
