"""Products of derivatives offered by default when the D^α F(U) fit leaves a clear part of
the left-hand side unexplained (network path)."""

import numpy as np
import pytest

from symweak import Observations
from symweak.discover._problem import Problem
from symweak.discover.network._widen import default_inputs
from symweak.ir import product_library


def _obs(fields, space):
    rng = np.random.default_rng(0)
    coords = {"t": rng.uniform(0, 1, 300), **{c: rng.uniform(0, 1, 300) for c in space}}
    return Observations(coords=coords, fields={f: rng.normal(size=300) for f in fields})


def _problem(fields, space, lhs, constraints=None):
    return Problem.build(_obs(fields, space), "+,-,*", lhs, 0, constraints=constraints)


def test_one_field_in_one_space_dimension_gets_cubic_products_of_u_and_u_x():
    inputs, degree = default_inputs(_problem("u", "x", "u_t"))
    assert [str(g) for g in inputs] == ["u(t, x)", "Derivative(u(t, x), x)"]
    assert degree == 3
    terms = [t.short() for t in product_library(inputs, degree)]
    assert terms[:6] == ["u_x", "d_x(u^2)", "u_x^2", "d_x(u^3)", "u*u_x^2", "u_x^3"]
    assert "d_x(u_x^2)" in terms and len(terms) == 12


def test_two_fields_or_two_space_dimensions_get_quadratic_products():
    inputs, degree = default_inputs(_problem("uv", "x", ["u_t", "v_t"]))
    assert degree == 2 and len(inputs) == 4
    assert len(product_library(inputs, degree)) == 17
    inputs, degree = default_inputs(_problem("w", "xy", "w_t"))
    assert degree == 2 and [str(g) for g in inputs][1:] == [
        "Derivative(w(t, x, y), x)",
        "Derivative(w(t, x, y), y)",
    ]


@pytest.mark.parametrize(
    "fields, space, lhs, constraints",
    [
        ("uvw", "xy", ["w_t"], None),  # 3 fields in 2-D: too many products to offer blind
        ("u", "x", "u_t", "inputs: u, u_x"),  # the user chose the products
    ],
)
def test_no_default_products(fields, space, lhs, constraints):
    assert default_inputs(_problem(fields, space, lhs, constraints)) is None
