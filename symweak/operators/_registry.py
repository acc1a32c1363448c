"""THE operator registry: one row per operator, from which the grammar, the torch code
generator and the export printers derive their tables.

A row (:class:`Operator`) says everything about an operator: its name and arity, how to
build it in SymPy and evaluate it in torch, its SymPy function class and its NumPy/C
printer names (for code generation and export), the inputs on which it is defined, how an
operator set may spell it, and where it may appear — in an operator set of the symbolic
network (``network``) and/or as ``name(...)`` in the expression language (``function``).

Adding an operator is one row: ``register_operator("asinh", 1, sympy.asinh, torch.asinh,
numpy_name="arcsinh", c_name="asinh", function=True)`` makes ``asinh`` an operator-set entry,
a function of the term/equation grammar, compilable to torch and printable to NumPy and C.
User rows shadow built-ins (``ChainMap(user, builtin)``).
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
    "builtin_rows",
    "expression_functions",
    "get_operator",
    "known_operators",
    "power_operator",
    "register_operator",
    "registry",
    "reserved_names",
    "torch_functions",
    "unregister_operator",
]

#: Domains of inputs on which an operator is defined (used to draw test inputs).
DOMAINS = ("real", "positive", "nonzero", "unit")


def _torch():
    import torch

    return torch


@dataclass(frozen=True)
class Operator:
    """One row of the registry.

    Attributes
    ----------
    name: canonical name (``"sin"``, ``"mul"``, ``"pow2"``).
    arity: 1 (unary) or 2 (binary).
    sympy_fn: builds the SymPy expression from SymPy arguments.
    torch_fn: evaluates on torch tensors (same signature).
    numpy_fn: optional NumPy evaluation; derived from SymPy if None.
    domain: inputs on which it is defined: ``"real"``, ``"positive"``, ``"nonzero"`` or
        ``"unit"`` (|x| < 1).
    symbol: how the operator is written in an operator set (``"+"``, ``"^2"``, ``"sin"``).
    spellings: other accepted spellings in an operator set (``"identity"`` for ``id``).
    sympy_class: the SymPy function class the row produces (``sympy.sin``), if any: what
        the torch code generator and the export printers recognise.
    torch_name, numpy_name, c_name: the function's name in ``torch``, ``numpy`` and C
        (``None``: not printable there).
    network: usable in an operator set of the symbolic network.
    function: usable as ``name(...)`` in the term and equation grammar.
    """

    name: str
    arity: int
    sympy_fn: Callable[..., sympy.Expr]
    torch_fn: Callable = field(compare=False, repr=False)
    numpy_fn: Callable | None = field(default=None, compare=False, repr=False)
    domain: str = "real"
    symbol: str = ""
    spellings: tuple[str, ...] = ()
    sympy_class: type | None = field(default=None, compare=False, repr=False)
    torch_name: str | None = None
    numpy_name: str | None = None
    c_name: str | None = None
    network: bool = True
    function: bool = False

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


def _fn(name, cls, domain="real", *, network=True, function=True, numpy_name=None, c_name=None):
    """A row for a SymPy function class with the same name in torch (and, by default, in
    NumPy and C)."""

    def torch_fn(a, _n=name):
        return getattr(_torch(), _n)(a)

    return Operator(
        name,
        1,
        cls,
        torch_fn,
        domain=domain,
        # sqrt builds a Pow, which the printers and the code generator know as such
        sympy_class=cls if isinstance(cls, type) else None,
        torch_name=name,
        numpy_name=numpy_name or name,
        c_name=c_name or name,
        network=network,
        function=function,
    )


def power_operator(n: int) -> Operator:
    """The unary operator ``^n`` (``x -> x**n``) for an integer ``n >= 2``."""
    if isinstance(n, bool) or int(n) != n or n < 2:
        raise ValueError(f"Power operator needs an integer exponent >= 2, got {n!r}.")
    n = int(n)
    return Operator(
        f"pow{n}", 1, lambda a, _n=n: a**_n, lambda a, _n=n: a**_n, domain="real", symbol=f"^{n}"
    )


def builtin_rows() -> list[Operator]:
    """The built-in rows, in the order messages list them."""
    return [
        Operator("id", 1, lambda a: a, lambda a: a, symbol="id", spellings=("identity",)),
        _fn("sin", sympy.sin),
        _fn("cos", sympy.cos),
        _fn("exp", sympy.exp),
        _fn("tanh", sympy.tanh),
        _fn("log", sympy.log, "positive"),
        _fn("sqrt", sympy.sqrt, "positive"),
        # functions of the expression language that are not network operators
        _fn("tan", sympy.tan, network=False),
        _fn("sinh", sympy.sinh, network=False),
        _fn("cosh", sympy.cosh, network=False),
        _fn("abs", sympy.Abs, network=False, numpy_name="abs", c_name="fabs"),
        # compiled and printed when they appear in an expression, not written by users
        _fn("asin", sympy.asin, "unit", network=False, function=False, numpy_name="arcsin"),
        _fn("acos", sympy.acos, "unit", network=False, function=False, numpy_name="arccos"),
        _fn("atan", sympy.atan, network=False, function=False, numpy_name="arctan"),
        Operator("add", 2, lambda a, b: a + b, lambda a, b: a + b, symbol="+"),
        Operator("sub", 2, lambda a, b: a - b, lambda a, b: a - b, symbol="-"),
        Operator("mul", 2, lambda a, b: a * b, lambda a, b: a * b, symbol="*"),
        Operator("div", 2, lambda a, b: a / b, lambda a, b: a / b, domain="nonzero", symbol="/"),
        *(power_operator(n) for n in (2, 3, 4)),
    ]


_BUILTIN: dict[str, Operator] = {op.name: op for op in builtin_rows()}
_USER: dict[str, Operator] = {}
#: The registry: user operators shadow built-ins.
registry: ChainMap[str, Operator] = ChainMap(_USER, _BUILTIN)


def _aliases() -> dict[str, str]:
    """Spelling -> name for every symbol and extra spelling of a network operator."""
    out = {}
    for op in registry.values():
        if op.network:
            for spelling in (op.symbol, *op.spellings):
                out.setdefault(spelling, op.name)
    return out


def register_operator(
    name: str,
    arity: int,
    sympy_fn: Callable[..., sympy.Expr],
    torch_fn: Callable,
    *,
    numpy_fn: Callable | None = None,
    domain: str = "real",
    symbol: str | None = None,
    spellings: Iterable[str] = (),
    numpy_name: str | None = None,
    c_name: str | None = None,
    function: bool | None = None,
) -> Operator:
    """Register (or override) an operator usable in operator sets and, when unary, the
    expression language; ``numpy_name`` / ``c_name`` make it printable by the exporters.

    >>> import sympy, torch
    >>> register_operator("sinh", 1, sympy.sinh, torch.sinh)  # doctest: +ELLIPSIS
    Operator(name='sinh', arity=1, ...)
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"Operator name {name!r} must be an identifier such as 'sinh'.")
    cls = sympy_fn if isinstance(sympy_fn, type) and issubclass(sympy_fn, sympy.Function) else None
    if cls is None and isinstance(sympy_fn, sympy.core.function.UndefinedFunction):
        cls = sympy_fn
    op = Operator(
        name,
        arity,
        sympy_fn,
        torch_fn,
        numpy_fn,
        domain,
        symbol or name,
        tuple(spellings),
        sympy_class=cls,
        numpy_name=numpy_name,
        c_name=c_name,
        function=arity == 1 if function is None else function,
    )
    _USER[name] = op
    return op


def unregister_operator(name: str) -> None:
    """Remove a user operator (built-ins it overrode come back)."""
    _USER.pop(name, None)


def known_operators() -> list[str]:
    """Spellings accepted in an operator set, sorted for messages."""
    spelled = {
        op.symbol for op in registry.values() if op.network and not op.name.startswith("pow")
    }
    return sorted(spelled | {"^n"}, key=lambda s: (s[0].isalpha(), s))


def expression_functions() -> dict[str, Operator]:
    """``{name: row}`` of the functions the expression language accepts (``sin(u)``)."""
    return {name: op for name, op in registry.items() if op.function and op.arity == 1}


def reserved_names() -> frozenset[str]:
    """Names that cannot be fields: the built-in functions, ``id`` and the derivative
    spellings ``d`` and ``D``."""
    return frozenset({op.name for op in _BUILTIN.values() if op.function} | {"id", "d", "D"})


def torch_functions() -> tuple[dict, dict]:
    """For the torch code generator: ``({SymPy class: torch name}`` of the built-in rows,
    ``{function name: torch_fn}`` of the user rows).``"""
    builtin = {
        op.sympy_class: op.torch_name
        for op in _BUILTIN.values()
        if op.sympy_class is not None and op.torch_name
    }
    return builtin, {name: op.torch_fn for name, op in _USER.items()}


def printer_functions(target: str) -> dict[str, str]:
    """``{SymPy function name: printed name}`` for the ``"numpy"`` or ``"c"`` exporter: the
    rows that name a function there (user rows shadow built-ins)."""
    attr = {"numpy": "numpy_name", "c": "c_name"}[target]
    out = {}
    for op in registry.values():
        printed = getattr(op, attr)
        if printed and op.sympy_class is not None:
            out.setdefault(op.sympy_class.__name__, printed)
    return out


def get_operator(spelling: str) -> Operator:
    """Look up a network operator by name, symbol (``+``, ``^3``) or spelling; raise if
    unknown."""
    name = _aliases().get(spelling, spelling)
    if name.startswith("^") and name[1:].isdigit():
        name = f"pow{int(name[1:])}"
    if name in registry and registry[name].network:
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
        name = item.name if isinstance(item, Operator) else _aliases().get(str(item), str(item))
        return name in self.names

    def spec(self) -> str:
        """The operator set written back as text (``"id,^2,sin,*"``)."""
        return ",".join(op.symbol for op in self.operators)

    def __str__(self) -> str:
        return self.spec()

    def __repr__(self) -> str:
        return f"OperatorSet({self.spec()!r})"
