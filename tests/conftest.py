import os

import pytest
import sympy
from hypothesis import settings

settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def tx():
    t, x = sympy.symbols("t x")
    return t, x


@pytest.fixture
def u(tx):
    return sympy.Function("u")(*tx)


@pytest.fixture
def v(tx):
    return sympy.Function("v")(*tx)
