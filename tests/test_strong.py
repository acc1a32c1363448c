"""Candidate terms in strong form on a surrogate at points (symweak.discover.network._strong)."""

import numpy as np
import pytest
import sympy
import torch

from symweak.discover.network._strong import evaluator, readable
from symweak.grammar import parse_terms


class _Field(torch.nn.Module):
    """u = 1.5 + e^{−t} sin x, exactly."""

    coord_names, field_names = ("t", "x"), ("u",)
    lo, device = torch.zeros(2, dtype=torch.float64), torch.device("cpu")

    def forward(self, x):
        return (1.5 + torch.exp(-x[:, 0]) * torch.sin(x[:, 1]))[:, None]


def test_terms_are_read_by_automatic_differentiation():
    t, x = np.array([0.0, 0.3, 1.0]), np.array([0.5, 2.0, 4.0])
    u, ux, uxx = 1.5 + np.exp(-t) * np.sin(x), np.exp(-t) * np.cos(x), -np.exp(-t) * np.sin(x)
    terms = parse_terms("u, u_xx, d_xx(u^2), d_x(u^3)", "t,x", "u")
    values = evaluator(_Field(), [sympy.Function("u")(*sympy.symbols("t x"))])
    got = values(terms, {"t": t, "x": x})
    expected = [u, uxx, 2 * ux**2 + 2 * u * uxx, 3 * u**2 * ux]
    for term, want in zip(terms, expected):
        assert got[term] == pytest.approx(want, rel=1e-10, abs=1e-12)


def test_products_of_derivatives_are_not_read():
    assert readable(parse_terms("u, d_xx(u^2)", "t,x", "u"))
    assert not readable(parse_terms("u_x^2", "t,x", "u"))
