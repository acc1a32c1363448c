"""JSON persistence of discovery results: equations with exact float64 coefficients,
settings, seed, versions, history, and the surrogate's tensors (base64 of ``torch.save``)."""

from __future__ import annotations

import json
import platform
from pathlib import Path

from .._errors import SymweakError
from .._files import atomic_write, jsonable
from .._version import __version__

__all__ = ["FORMAT_VERSION", "read_result", "result_to_dict", "write_result"]

FORMAT_VERSION = 1


def result_to_dict(res) -> dict:
    return {
        "format": "symweak.discovery",
        "format_version": FORMAT_VERSION,
        "symweak_version": __version__,
        "python": platform.python_version(),
        "method": res.method,
        "coords": list(res.coords),
        "fields": list(res.fields),
        "equations": [
            {
                "lhs": e.lhs.short(),
                "text": e.short(),
                "terms": [[t.short(), c] for t, c in e.coefficients.items()],
            }
            for e in res.system
        ],
        "settings": jsonable(res.settings),
        "seed": res.seed,
        "history": res.history.to_dict(),
        "surrogate": _surrogate_state(res.surrogate),
    }


def write_result(res, path) -> None:
    path = Path(path)
    if path.is_dir():
        raise SymweakError(
            f"Cannot save to {path}: it is a folder; give a file name, e.g. {path / 'run.json'}."
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result_to_dict(res), indent=2)
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _read_json(path: Path) -> dict:
    if path.is_dir():
        raise SymweakError(f"{path} is a folder, not a symweak result; give its run.json file.")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SymweakError(f"No such file: {path}.") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SymweakError(f"{path} is not a symweak result (not valid JSON: {exc}).") from None
    if not isinstance(data, dict) or data.get("format") != "symweak.discovery":
        raise SymweakError(f"{path} is not a symweak result (missing format marker).")
    if int(data.get("format_version", 0)) > FORMAT_VERSION:
        raise SymweakError(
            f"{path} was written by a newer symweak (format {data['format_version']}); "
            "upgrade symweak to read it."
        )
    return data


def read_result(path) -> dict:
    """The parts of a saved result: ``system``, ``surrogate``, ``settings``, ``seed``,
    ``history``, ``method``, ``coords``, ``fields`` (the arguments of ``Discovery``)."""
    from ..grammar import parse_terms
    from ..ir import Equation, System

    path = Path(path)
    data = _read_json(path)
    try:
        coords = ",".join(data["coords"]) or None
        fields = data["fields"] or None
        equations = []
        for item in data["equations"]:
            lhs = parse_terms(item["lhs"], coords=coords, fields=fields)[0]
            rhs = [
                (parse_terms(t, coords=coords, fields=fields)[0], float(c))
                for t, c in item["terms"]
            ]
            equations.append(Equation(lhs, rhs))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise SymweakError(f"{path} is damaged: {exc}.") from None
    return {
        "system": System(equations),
        "surrogate": _surrogate_from_state(data.get("surrogate"), path),
        "settings": data.get("settings"),
        "seed": data.get("seed", 0),
        "history": data.get("history"),
        "method": data.get("method", "grid"),
        "coords": tuple(data["coords"]),
        "fields": tuple(data["fields"]),
    }


def _surrogate_state(surrogate) -> dict | None:
    """The surrogate as JSON: constructor arguments plus its tensors (base64 of torch.save)."""
    if surrogate is None:
        return None
    import base64
    import io

    import torch

    buf = io.BytesIO()
    torch.save({k: v.detach().cpu() for k, v in surrogate.state_dict().items()}, buf)
    lo, hi = surrogate.lo.double().cpu().tolist(), surrogate.hi.double().cpu().tolist()
    return {
        "bounds": {n: [a, b] for n, a, b in zip(surrogate.coord_names, lo, hi)},
        "fields": list(surrogate.field_names),
        "config": dict(surrogate.config),
        "dtype": str(surrogate.lo.dtype).replace("torch.", ""),
        "state": base64.b64encode(buf.getvalue()).decode("ascii"),
    }


def _surrogate_from_state(state, path):
    if state is None:
        return None
    import base64
    import io

    import torch

    from ..surrogate import Surrogate

    try:
        dtype = getattr(torch, state["dtype"])
        model = Surrogate(
            {n: tuple(b) for n, b in state["bounds"].items()},
            state["fields"],
            dtype=dtype,
            **state["config"],
        )
        tensors = torch.load(
            io.BytesIO(base64.b64decode(state["state"])), map_location="cpu", weights_only=True
        )
        model.load_state_dict(tensors)
    except Exception as exc:  # a damaged or incompatible state: say which file
        raise SymweakError(f"{path}: the saved surrogate cannot be restored ({exc}).") from None
    model.eval()
    return model
