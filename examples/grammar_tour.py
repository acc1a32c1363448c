"""A tour of symweak's IR and grammar: parse, print, compare, and catch errors."""

import symweak

eq = symweak.parse_equation("u_t = -u*u_x + 0.1*u_xx")
print("canonical:", eq.short())
print("latex:    ", eq.latex())
print("sympy:    ", eq.to_sympy())
print("strong:   ", eq.strong())

spec = symweak.parse_constraints(
    """
    lhs: u_t, v_t
    ops: id, ^2, ^3, *
    order: x <= 4
    u1(u, v)
    """
)
print("lhs:", [t.short() for t in spec.lhs], "ops:", spec.ops.spec())

try:
    symweak.parse_operators("+,-,sinh")
except symweak.GrammarError as err:
    print(err)
