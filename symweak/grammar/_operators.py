"""The operator registry: one table of (name, arity, SymPy function, torch function).

Built-in operators cover the paper's set ``id, ^2, ^3, sin, *`` and ``+ - * /``, ``exp``,
``cos``, ``tanh``, ``log``, ``sqrt`` and any integer power ``^n``. Users add their own
(or override a built-in) with :func:`register_operator`; lookups go through
``ChainMap(user, builtin)`` so a user definition wins.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import sympy

from .._errors import GrammarError

__all__ = [
    "Operator",
    "OperatorSet",
    "get_operator",
    "known_operators",
    "power_operator",
    "register_operator",
    "registry",
    "unregister_operator",
]

#: Domains of inputs on which an operator is defined (used to draw test inputs).
DOMAINS = ("real", "positive", "nonzero")


def _torch():
    import torch

    return torch


@dataclass(frozen=True)
class Operator:
    """A network operator.

    Attributes
    ----------
    name: canonical name (``"sin"``, ``"mul"``, ``"pow2"``); also what the grammar reads,
        together with the symbols ``+ - * / ^n``.
    arity: 1 (unary) or 2 (binary).
    sympy_fn: builds the SymPy expression from SymPy arguments.
    torch_fn: evaluates on torch tensors (same signature).
    numpy_fn: optional NumPy evaluation (used by exporters); derived from SymPy if None.
    domain: inputs on which it is defined: ``"real"``, ``"positive"`` or ``"nonzero"``.
    symbol: how the operator is written in an operator set (``"+"``, ``"^2"``, ``"sin"``).
    """

    name: str
    arity: int
    sympy_fn: Callable[..., sympy.Expr]
    torch_fn: Callable = field(compare=False, repr=False)
    numpy_fn: Callable | None = field(default=None, compare=False, repr=False)
    domain: str = "real"
    symbol: str = ""

    def __post_init__(self) -> None:
        if self.arity not in (1, 2):
            raise ValueError(f"Operator {self.name!r}: arity must be 1 or 2, got {self.arity}.")
        if self.domain not in DOMAINS:
            raise ValueError(f"Operator {self.name!r}: domain must be one of {DOMAINS}.")
        if not self.symbol:
            object.__setattr__(self, "symbol", self.name)

    @property
    def is_unary(self) -> bool:
        return self.arity == 1

    def __call__(self, *args):
        return self.sympy_fn(*args)


def _unary(name, sympy_fn, torch_name, domain="real", symbol=None):
    def torch_fn(a, _n=torch_name):
        return getattr(_torch(), _n)(a)

    return Operator(name, 1, sympy_fn, torch_fn, domain=domain, symbol=symbol or name)


def power_operator(n: int) -> Operator:
    """The unary operator ``^n`` (``x -> x**n``) for an integer ``n >= 2``."""
    if isinstance(n, bool) or int(n) != n or n < 2:
        raise ValueError(f"Power operator needs an integer exponent >= 2, got {n!r}.")
    n = int(n)
    return Operator(
        f"pow{n}", 1, lambda a, _n=n: a**_n, lambda a, _n=n: a**_n, domain="real", symbol=f"^{n}"
    )


def _builtin_table() -> dict[str, Operator]:
    ops = [
        Operator("id", 1, lambda a: a, lambda a: a, symbol="id"),
        _unary("sin", sympy.sin, "sin"),
        _unary("cos", sympy.cos, "cos"),
        _unary("exp", sympy.exp, "exp"),
        _unary("tanh", sympy.tanh, "tanh"),
        _unary("log", sympy.log, "log", domain="positive"),
        _unary("sqrt", sympy.sqrt, "sqrt", domain="positive"),
        Operator("add", 2, lambda a, b: a + b, lambda a, b: a + b, symbol="+"),
        Operator("sub", 2, lambda a, b: a - b, lambda a, b: a - b, symbol="-"),
        Operator("mul", 2, lambda a, b: a * b, lambda a, b: a * b, symbol="*"),
        Operator("div", 2, lambda a, b: a / b, lambda a, b: a / b, domain="nonzero", symbol="/"),
    ]
    table = {op.name: op for op in ops}
    for n in (2, 3, 4):
        table[f"pow{n}"] = power_operator(n)
    return table


_BUILTIN: dict[str, Operator] = _builtin_table()
_USER: dict[str, Operator] = {}
#: The registry: user operators shadow built-ins.
registry: ChainMap[str, Operator] = ChainMap(_USER, _BUILTIN)

# How an operator set may spell each operator.
_ALIASES = {"+": "add", "-": "sub", "*": "mul", "/": "div", "identity": "id"}


def register_operator(
    name: str,
    arity: int,
    sympy_fn: Callable[..., sympy.Expr],
    torch_fn: Callable,
    *,
    numpy_fn: Callable | None = None,
    domain: str = "real",
    symbol: str | None = None,
) -> Operator:
    """Register (or override) an operator usable in operator sets and the expression language.

    >>> import sympy, torch
    >>> register_operator("sinh", 1, sympy.sinh, torch.sinh)  # doctest: +ELLIPSIS
    Operator(name='sinh', arity=1, ...)
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"Operator name {name!r} must be an identifier such as 'sinh'.")
    op = Operator(name, arity, sympy_fn, torch_fn, numpy_fn, domain, symbol or name)
    _USER[name] = op
    return op


def unregister_operator(name: str) -> None:
    """Remove a user operator (built-ins it overrode come back)."""
    _USER.pop(name, None)


def known_operators() -> list[str]:
    """Spellings accepted in an operator set, sorted for messages."""
    spelled = {op.symbol for op in registry.values() if not op.name.startswith("pow")}
    return sorted(spelled | {"^n"}, key=lambda s: (s[0].isalpha(), s))


def get_operator(spelling: str) -> Operator:
    """Look up an operator by name, symbol (``+``, ``^3``) or alias; raise if unknown."""
    name = _ALIASES.get(spelling, spelling)
    if name.startswith("^") and name[1:].isdigit():
        name = f"pow{int(name[1:])}"
    if name in registry:
        return registry[name]
    if name.startswith("pow") and name[3:].isdigit() and int(name[3:]) >= 2:
        return power_operator(int(name[3:]))
    raise GrammarError(
        f"Unknown operator `{spelling}`.",
        hint=(
            f"Known operators: {', '.join(known_operators())}. "
            "Register your own with symweak.register_operator(name, arity, sympy_fn, torch_fn)."
        ),
    )


@dataclass(frozen=True)
class OperatorSet:
    """An ordered set of operators (unary first, as the symbolic network uses them)."""

    operators: tuple[Operator, ...]

    def __post_init__(self) -> None:
        names = [op.name for op in self.operators]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise GrammarError(f"Operator(s) listed twice: {', '.join(dup)}.")

    @classmethod
    def of(cls, spellings: Iterable[str | Operator]) -> OperatorSet:
        ops = [s if isinstance(s, Operator) else get_operator(s) for s in spellings]
        return cls(tuple(ops))

    @property
    def unary(self) -> tuple[Operator, ...]:
        return tuple(op for op in self.operators if op.arity == 1)

    @property
    def binary(self) -> tuple[Operator, ...]:
        return tuple(op for op in self.operators if op.arity == 2)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(op.name for op in self.operators)

    def __iter__(self) -> Iterator[Operator]:
        return iter(self.operators)

    def __len__(self) -> int:
        return len(self.operators)

    def __contains__(self, item: object) -> bool:
        name = item.name if isinstance(item, Operator) else _ALIASES.get(str(item), str(item))
        return name in self.names

    def spec(self) -> str:
        """The operator set written back as text (``"id,^2,sin,*"``)."""
        return ",".join(op.symbol for op in self.operators)

    def __str__(self) -> str:
        return self.spec()

    def __repr__(self) -> str:
        return f"OperatorSet({self.spec()!r})"
