"""Irregular and holed domains (issue 25): construction, containment of test-function
supports, placement, and bad domains refused with their messages."""

import numpy as np
import pytest

import symweak
from symweak import DataError, Domain, Observations, SymweakError
from symweak.discover._testfunctions import make_tests

BOX = [(-5, -5), (5, -5), (5, 5), (-5, 5)]
ANGLE = np.linspace(0, 2 * np.pi, 64, endpoint=False)
DISC = np.stack([1.5 * np.cos(ANGLE), 1.5 * np.sin(ANGLE)], axis=1)


def test_intervals_are_exact():
    dom = Domain.intervals([(5, 9), (0, 3)])
    assert dom.describe() == "x in [0, 3] ∪ [5, 9]"
    inside = dom.box_inside(
        np.array([[1.5], [2.5], [7.0], [4.0]]), np.array([[1.5], [1.0], [2.0], [0.5]])
    )
    assert inside.tolist() == [True, False, True, False]
    assert dom.contains({"x": np.array([0.0, 3.5, 9.0])}).tolist() == [True, False, True]


def test_polygon_with_a_hole():
    dom = Domain.polygon(BOX, holes=[DISC])
    pts = {"x": np.array([0.0, 3.0, 6.0, 1.0]), "y": np.array([0.0, 3.0, 0.0, 1.0])}
    assert dom.contains(pts).tolist() == [False, True, False, False]
    centers = np.array([[3.5, 3.5], [0.0, 3.0], [3.0, 0.0], [-4.0, 4.0]])
    radii = np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.5, 1.5]])
    # (0, 3) with half-width 1 reaches y = 2, outside the disc of radius 1.5: inside;
    # (3, 0) with half-width 1 reaches x = 2: inside; (-4, 4) ± 1.5 leaves the box
    assert dom.box_inside(centers, radii).tolist() == [True, True, True, False]
    # a box that swallows the whole hole has no sample point in it but holds its vertices
    assert not dom.box_inside(np.array([[0.0, 0.0]]), np.array([[3.0, 3.0]]))[0]
    tiny = Domain.polygon(BOX, holes=[0.01 * DISC + 2.0])
    assert not tiny.box_inside(np.array([[2.003, 2.003]]), np.array([[1.0, 1.0]]))[0]


def test_mask_boxes_match_brute_force():
    x = np.linspace(0, 1, 41)
    y = np.linspace(0, 2, 33)
    X, Y = np.meshgrid(x, y, indexing="ij")
    mask = (X - 0.5) ** 2 + (Y - 1.0) ** 2 > 0.3**2
    dom = Domain.mask(mask, x=x, y=y)
    rng = np.random.default_rng(0)
    c = np.stack([rng.uniform(0, 1, 300), rng.uniform(0, 2, 300)], axis=1)
    r = rng.uniform(0.02, 0.3, (300, 2))
    got = dom.box_inside(c, r)
    hx, hy = (x[1] - x[0]) / 2, (y[1] - y[0]) / 2
    want = []
    for (cx, cy), (rx, ry) in zip(c, r):
        if (
            cx - rx < x[0] - hx
            or cx + rx > x[-1] + hx
            or cy - ry < y[0] - hy
            or cy + ry > y[-1] + hy
        ):
            want.append(False)
            continue
        # cells whose extent [a - h, a + h] meets the box
        ix = (x + hx >= cx - rx) & (x - hx <= cx + rx)
        iy = (y + hy >= cy - ry) & (y - hy <= cy + ry)
        want.append(bool(mask[np.ix_(ix, iy)].all()))
    assert np.mean(got == np.array(want)) > 0.98  # cell-edge ties may differ
    assert got.sum() > 30 and (~got).sum() > 30


def test_covered_finds_the_hole_in_scattered_data():
    rng = np.random.default_rng(1)
    n = 6000
    x, y, t = rng.uniform(-5, 5, n), rng.uniform(-5, 5, n), rng.uniform(0, 1, n)
    keep = x**2 + y**2 > 2.0**2
    obs = Observations(
        coords={"t": t[keep], "x": x[keep], "y": y[keep]}, fields={"u": np.sin(x[keep])}
    )
    withd = obs.with_domain("covered")
    assert withd.domain.kind == "mask"
    assert not withd.domain.contains({"x": np.array([0.0]), "y": np.array([0.0])})[0]
    assert withd.domain.contains({"x": np.array([4.0]), "y": np.array([-4.0])})[0]
    # the data are unchanged, and subsets keep the domain
    assert np.array_equal(withd.fields["u"], obs.fields["u"])
    assert withd.subset(np.arange(10)).domain is withd.domain
    assert "domain: mask on a" in withd.describe()


def test_test_functions_are_placed_inside_and_reproducibly():
    dom = Domain.polygon(BOX, holes=[DISC])
    bounds = {"t": (0.0, 10.0), "x": (-5.0, 5.0), "y": (-5.0, 5.0)}
    a = make_tests(bounds, 100, (0.05, 0.15), 3, "exp", "paper", domain=dom)
    b = make_tests(bounds, 100, (0.05, 0.15), 3, "exp", "paper", domain=dom)
    assert len(a) == 100
    assert np.array_equal(a.centers, b.centers)
    assert dom.box_inside(a.centers[:, 1:], a.radii[:, 1:]).all()
    assert "inside the domain (100 kept of" in a.how


def test_points_inside_counts_like_brute_force():
    from symweak.discover._testfunctions import points_inside

    rng = np.random.default_rng(1)
    pts = rng.uniform(0, 1, size=(500, 2))
    centers = rng.uniform(0, 1, size=(40, 2))
    radii = rng.uniform(0.05, 0.3, size=(40, 2))
    brute = [int(np.sum(np.all(np.abs(pts - c) < r, axis=1))) for c, r in zip(centers, radii)]
    assert points_inside(pts, centers, radii).tolist() == brute


def test_test_functions_only_where_data_are_nearby(caplog):
    bounds = {"t": (0.0, 1.0), "x": (0.0, 10.0)}
    rng = np.random.default_rng(0)
    plain = make_tests(bounds, 100, (0.05, 0.1), 2, "exp", "paper")
    # data everywhere: the usual draw, unchanged
    dense = np.column_stack([rng.uniform(0, 1, 20000), rng.uniform(0, 10, 20000)])
    same = make_tests(bounds, 100, (0.05, 0.1), 2, "exp", "paper", points=dense, min_points=3)
    assert np.array_equal(same.centers, plain.centers) and same.how == plain.how
    # no data for 3 < x < 7: supports there are replaced by ones with data
    gap = dense[(dense[:, 1] < 3) | (dense[:, 1] > 7)]
    tests = make_tests(bounds, 100, (0.05, 0.1), 2, "exp", "paper", points=gap, min_points=3)
    again = make_tests(bounds, 100, (0.05, 0.1), 2, "exp", "paper", points=gap, min_points=3)
    assert len(tests) == 100 and np.array_equal(tests.centers, again.centers)
    from symweak.discover._testfunctions import points_inside

    assert points_inside(gap, tests.centers, tests.radii).min() >= 3
    assert points_inside(gap, plain.centers, plain.radii).min() < 3  # the usual draw had some
    assert "with >= 3 observations in the support (100 kept of" in tests.how
    with pytest.raises(SymweakError, match=r"Only 0 of \d+ test functions drawn hold at least 10"):
        make_tests(bounds, 50, (0.05, 0.1), 2, "exp", "paper", points=gap[:5], min_points=10)


def test_min_points_is_checked():
    with pytest.raises(SymweakError, match=r"config option min_points must be an integer >= 0"):
        symweak.discover(
            Observations(coords={"t": np.arange(30.0), "x": np.arange(30.0) % 7},
                         fields={"u": np.arange(30.0) % 5}),
            lhs="u_t", min_points=-1, progress=False,
        )  # fmt: skip


def test_radii_shrink_when_supports_cannot_fit(caplog):
    dom = Domain.polygon(BOX, holes=[DISC])
    bounds = {"t": (0.0, 10.0), "x": (-5.0, 5.0), "y": (-5.0, 5.0)}
    tests = make_tests(bounds, 50, (0.2, 0.4), 0, "exp", "paper", domain=dom)
    assert tests.how.endswith("radii × 0.5")
    assert "shrunk to 0.5" in caplog.text
    narrow = Domain.polygon([(-5, -5), (5, -5), (5, -4.99), (-5, -4.99)])
    with pytest.raises(SymweakError, match=r"Only 0 of \d+ test functions drawn fit inside"):
        make_tests(bounds, 50, (0.2, 0.4), 0, "exp", "paper", domain=narrow)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: Domain.intervals([]), "The domain is empty: give at least one interval."),
        (lambda: Domain.intervals([(3, 1)]), r"Interval \(3.0, 1.0\) is empty or not finite"),
        (lambda: Domain.intervals([3]), "Each interval is a pair"),
        (lambda: Domain.polygon([(0, 0), (1, 1)]), "needs at least 3 vertices"),
        (lambda: Domain.polygon([(0, 0), (1, 1), (2, 2)]), "encloses no area"),
        (lambda: Domain.polygon(BOX, holes=[[(0, 0), (1, np.nan), (1, 0)]]), "Hole 0 holds NaN"),
        (lambda: Domain.mask(np.zeros((3, 4), bool), x=np.arange(3.0), y=np.arange(4.0)),
         "The domain mask is all False"),
        (lambda: Domain.mask(np.ones((3, 4), bool), x=np.arange(3.0), y=np.arange(5.0)),
         r"The mask has shape \(3, 4\) but the axes \('x', 'y'\) give \(3, 5\)"),
        (lambda: Domain.mask(np.ones((3, 4)), x=np.arange(3.0), y=np.arange(4.0)),
         "A domain mask must be boolean"),
        (lambda: Domain.mask(np.ones(3, bool), x=np.array([0.0, 2.0, 1.0])),
         "Mask axis 'x' must be a strictly increasing"),
    ],
)  # fmt: skip
def test_bad_domains_are_refused(build, message):
    with pytest.raises(DataError, match=message):
        build()


def test_domain_must_fit_the_data():
    obs = Observations(
        coords={"t": np.repeat(np.arange(5.0), 20), "x": np.tile(np.linspace(0, 1, 20), 5)},
        fields={"u": np.arange(100.0)},
    )
    with pytest.raises(DataError, match="No observation lies inside the domain"):
        obs.with_domain(Domain.intervals([(5, 6)]))
    with pytest.raises(DataError, match=r"The domain is over \('x', 'y'\) but the data's space"):
        obs.with_domain(Domain.polygon(BOX))
    with pytest.raises(DataError, match=r"domain must be a symweak\.Domain"):
        obs.with_domain([(0, 1)])
    ok = obs.with_domain(Domain.intervals([(0.0, 0.5)]))
    assert ok.domain.describe() == "x in [0, 0.5]"
    assert (
        symweak.Observations(
            coords=obs.coords, fields=obs.fields, domain=Domain.intervals([(0, 1)])
        ).domain
        is not None
    )


def test_penalised_cylinder_slows_the_flow_inside_only():
    from symweak.bench._obstacle import CYLINDER, _ns_obstacle, obstacle_domain

    out = _ns_obstacle(nt=11, nx=96, ny=48, T=2.0)
    X, Y = np.meshgrid(out["x"], out["y"], indexing="ij")
    cx, cy, r = CYLINDER
    d = np.hypot(X - cx, Y - cy)
    speed = np.hypot(out["fields"]["u"][-1], out["fields"]["v"][-1])
    # the uniform flow is 1; inside the disc the penalisation (η = 0.1) holds it near rest
    assert speed[d < 0.5 * r].mean() < 0.35
    assert speed[d > r + 2.0].mean() == pytest.approx(1.0, abs=0.2)
    dom = obstacle_domain()
    assert not dom.contains({"x": np.array([cx + r + 0.9]), "y": np.array([cy])})[0]
    assert dom.contains({"x": np.array([cx + r + 1.1]), "y": np.array([cy])})[0]


@pytest.mark.parametrize("ext", [".npz", ".h5", ".mat", ".nc"])
@pytest.mark.parametrize(
    "make",
    [
        lambda obs: Domain.polygon(BOX, holes=[DISC]),
        lambda obs: "covered",
    ],
    ids=["polygon", "mask"],
)
def test_the_domain_is_saved_with_the_observations(tmp_path, ext, make):
    rng = np.random.default_rng(0)
    n = 400
    obs = Observations(
        coords={"t": rng.uniform(0, 1, n), "x": rng.uniform(-5, 5, n), "y": rng.uniform(-5, 5, n)},
        fields={"u": rng.normal(size=n)},
    ).with_domain(make(None))
    path = tmp_path / f"obs{ext}"
    obs.save(path)
    back = symweak.load(path)
    assert back.domain is not None and back.domain.kind == obs.domain.kind
    assert back.domain.describe() == obs.domain.describe()
    probe = {"x": rng.uniform(-5, 5, 200), "y": rng.uniform(-5, 5, 200)}
    assert np.array_equal(back.domain.contains(probe), obs.domain.contains(probe))
    assert np.array_equal(back.fields["u"], obs.fields["u"])


def test_intervals_round_trip_and_tables_warn(tmp_path, caplog):
    rng = np.random.default_rng(1)
    obs = Observations(
        coords={"t": rng.uniform(0, 1, 300), "x": rng.uniform(0, 9, 300)},
        fields={"u": rng.normal(size=300)},
    ).with_domain(Domain.intervals([(0, 3), (5, 9)]))
    obs.save(tmp_path / "a.npz")
    assert symweak.load(tmp_path / "a.npz").domain.parts == ((0.0, 3.0), (5.0, 9.0))
    obs.save(tmp_path / "a.csv")
    assert "the domain (" in caplog.text and "is not saved with it" in caplog.text
    assert symweak.load(tmp_path / "a.csv").domain is None


def test_a_damaged_stored_domain_is_refused():
    with pytest.raises(DataError, match=r"f.npz: the stored domain is not valid: Interval"):
        Domain.from_json('{"kind": "intervals", "names": ["x"], "intervals": [[3, 1]]}', "f.npz")
    with pytest.raises(DataError, match=r"f.npz: the stored domain cannot be read"):
        Domain.from_json("{not json", "f.npz")
    with pytest.raises(DataError, match=r"unknown domain kind 'blob'"):
        Domain.from_json('{"kind": "blob", "names": ["x"]}', "f.npz")
