"""Deterministic PDE solvers for the benchmark systems.

* :func:`etdrk4_1d` — Kassam & Trefethen's fourth-order exponential time differencing
  Runge–Kutta for periodic 1-D problems ``u_t = L u + N(u)`` (L diagonal in Fourier space),
  with 2/3-rule dealiasing; real or complex fields.
* :func:`chafee_infante` — method of lines (fourth-order finite differences, Dirichlet) with
  SciPy's stiff BDF integrator.
* :func:`wave_2d` — exact Fourier solution of the periodic wave equation.
* :func:`sine_gordon_2d` — Fourier (x, periodic) × sine (y, Dirichlet) spectral space, exact
  linear flow with Strang-split ``-sin(u)`` kicks.
* :func:`navier_stokes_2d` — periodic vorticity–streamfunction pseudo-spectral solver,
  RK4 with an integrating factor for viscosity, 2/3-rule dealiasing.
"""

from __future__ import annotations

import numpy as np
import scipy.fft as sfft
from scipy.integrate import solve_ivp

__all__ = [
    "chafee_infante",
    "etdrk4_1d",
    "etdrk4_coefficients",
    "navier_stokes_2d",
    "periodic_grid",
    "sine_gordon_2d",
    "wave_2d",
    "wavenumbers",
]


def periodic_grid(a: float, b: float, n: int) -> np.ndarray:
    """n points on [a, b) (the right end is the periodic image of the left)."""
    return a + (b - a) * np.arange(n) / n


def wavenumbers(n: int, length: float, real: bool = False) -> np.ndarray:
    """Angular wavenumbers of an n-point periodic grid of the given length."""
    d = length / n
    f = np.fft.rfftfreq(n, d) if real else np.fft.fftfreq(n, d)
    return 2.0 * np.pi * f


def _dealias_mask(n: int, real: bool) -> np.ndarray:
    k = np.fft.rfftfreq(n, 1.0 / n) if real else np.fft.fftfreq(n, 1.0 / n)
    return np.abs(k) < n / 3.0


def etdrk4_coefficients(L: np.ndarray, h: float, m: int = 64):
    """ETDRK4 coefficients by contour integrals (Kassam & Trefethen 2005), complex-safe."""
    E = np.exp(h * L)
    E2 = np.exp(h * L / 2.0)
    r = np.exp(2j * np.pi * (np.arange(1, m + 1) - 0.5) / m)
    LR = h * L[:, None] + r[None, :]
    Q = h * np.mean((np.exp(LR / 2.0) - 1.0) / LR, axis=1)
    f1 = h * np.mean((-4.0 - LR + np.exp(LR) * (4.0 - 3.0 * LR + LR**2)) / LR**3, axis=1)
    f2 = h * np.mean((2.0 + LR + np.exp(LR) * (-2.0 + LR)) / LR**3, axis=1)
    f3 = h * np.mean((-4.0 - 3.0 * LR - LR**2 + np.exp(LR) * (4.0 - LR)) / LR**3, axis=1)
    if np.isrealobj(L):
        Q, f1, f2, f3 = Q.real, f1.real, f2.real, f3.real
    return E, E2, Q, f1, f2, f3


def etdrk4_1d(u0, L, nonlinear, t_out, substeps: int, real: bool = True) -> np.ndarray:
    """Integrate ``v_t = L v + N(v)`` in Fourier space and return u at ``t_out`` (nt, nx).

    ``nonlinear(v_hat) -> N_hat`` works on dealiased Fourier coefficients. ``t_out`` must
    be uniformly spaced from its first value; each output interval is split into
    ``substeps`` ETDRK4 steps. Several fields: ``u0`` of shape (F, nx) and ``L`` of shape
    (F, nk) integrate them together (the output is then (nt, F, nx)).
    """
    n = np.shape(u0)[-1]
    fwd = np.fft.rfft if real else np.fft.fft

    def inv(v):
        return np.fft.irfft(v, n) if real else np.fft.ifft(v)

    return etdrk4(u0, L, nonlinear, t_out, substeps, fwd, inv, _dealias_mask(n, real), real)


def etdrk4(u0, L, nonlinear, t_out, substeps, fwd, inv, mask, real=True) -> np.ndarray:
    """ETDRK4 for any transform: ``fwd``/``inv`` map physical arrays to coefficients and
    back (along the trailing axes), ``L`` the linear symbol of the coefficients' shape,
    ``mask`` the dealiasing mask. Returns the physical arrays at ``t_out``."""
    u0 = np.asarray(u0)
    t_out = np.asarray(t_out, dtype=float)
    h = float(t_out[1] - t_out[0]) / substeps
    L = np.asarray(L)
    coeffs = etdrk4_coefficients(L.ravel(), h)
    E, E2, Q, f1, f2, f3 = (c.reshape(L.shape) for c in coeffs)
    v = fwd(u0)
    out = np.empty((t_out.size, *u0.shape), dtype=float if real else complex)
    out[0] = u0
    for i in range(1, t_out.size):
        for _ in range(substeps):
            Nv = nonlinear(v) * mask
            a = E2 * v + Q * Nv
            Na = nonlinear(a) * mask
            b = E2 * v + Q * Na
            Nb = nonlinear(b) * mask
            c = E2 * a + Q * (2.0 * Nb - Nv)
            Nc = nonlinear(c) * mask
            v = E * v + Nv * f1 + 2.0 * (Na + Nb) * f2 + Nc * f3
        out[i] = inv(v)
    return out


def _fd4_laplacian(u: np.ndarray, dx: float) -> np.ndarray:
    """Fourth-order centred second derivative on interior points with u = 0 at both ends."""
    full = np.concatenate(([0.0], u, [0.0]))
    out = np.empty_like(u)
    # second-order next to the boundary, fourth-order inside
    out[0] = (full[0] - 2 * full[1] + full[2]) / dx**2
    out[-1] = (full[-3] - 2 * full[-2] + full[-1]) / dx**2
    f = full
    out[1:-1] = (-f[:-4] + 16 * f[1:-3] - 30 * f[2:-2] + 16 * f[3:-1] - f[4:]) / (12 * dx**2)
    return out


def chafee_infante(x, t_out, u0, rtol: float = 1e-10, atol: float = 1e-12) -> np.ndarray:
    """u_t = u_xx - u + u^3 on [x0, x1], u = 0 at both ends (method of lines, BDF)."""
    dx = float(x[1] - x[0])
    interior0 = u0[1:-1].astype(float)

    def rhs(_t, u):
        return _fd4_laplacian(u, dx) - u + u**3

    n = interior0.size
    from scipy.sparse import diags

    sparsity = diags([1.0] * 5, [-2, -1, 0, 1, 2], shape=(n, n), dtype=float)
    sol = solve_ivp(
        rhs,
        (float(t_out[0]), float(t_out[-1])),
        interior0,
        t_eval=t_out,
        method="BDF",
        rtol=rtol,
        atol=atol,
        jac_sparsity=sparsity,
    )
    if not sol.success:  # pragma: no cover - the solver is robust on this problem
        raise RuntimeError(f"Chafee–Infante solver failed: {sol.message}")
    out = np.zeros((t_out.size, x.size))
    out[:, 1:-1] = sol.y.T
    out[0] = u0
    return out


def wave_2d(x, y, t_out, u0, v0=None, c2: float = 1.0) -> np.ndarray:
    """Exact periodic solution of u_tt = c²(u_xx + u_yy): û(t) = û0 cos(ωt) + v̂0 sin(ωt)/ω."""
    kx = wavenumbers(x.size, x.size * (x[1] - x[0]))
    ky = wavenumbers(y.size, y.size * (y[1] - y[0]))
    KX, KY = np.meshgrid(kx, ky, indexing="ij")
    omega = np.sqrt(c2 * (KX**2 + KY**2))
    u0h = np.fft.fft2(u0)
    v0h = np.zeros_like(u0h) if v0 is None else np.fft.fft2(v0)
    safe = np.where(omega == 0, 1.0, omega)
    out = np.empty((t_out.size, x.size, y.size))
    for i, t in enumerate(t_out):
        sin_term = np.where(omega == 0, t, np.sin(omega * t) / safe)
        out[i] = np.fft.ifft2(u0h * np.cos(omega * t) + v0h * sin_term).real
    return out


def sine_gordon_2d(x, y, t_out, u0, v0=None, substeps: int = 10) -> np.ndarray:
    """u_tt = u_xx + u_yy - sin u; x periodic (Fourier), y Dirichlet at both ends (sine series).

    Exact linear flow in spectral space with Strang-split kicks by -sin(u).
    """
    nx, ny = x.size, y.size
    Ly = float(y[-1] - y[0])
    kx = wavenumbers(nx, nx * (x[1] - x[0]))
    m = np.arange(1, ny - 1)  # sine modes on the interior points
    ky = m * np.pi / Ly
    KX, KY = np.meshgrid(kx, ky, indexing="ij")
    omega = np.sqrt(KX**2 + KY**2)
    safe = np.where(omega == 0, 1.0, omega)

    def to_spec(f):
        return sfft.dst(np.fft.fft(f[:, 1:-1], axis=0), type=1, axis=1)

    def to_phys(fh):
        g = np.zeros((nx, ny))
        g[:, 1:-1] = np.fft.ifft(sfft.idst(fh, type=1, axis=1), axis=0).real
        return g

    dt_out = float(t_out[1] - t_out[0])
    h = dt_out / substeps
    c, s = np.cos(omega * h), np.sin(omega * h)
    u = u0.astype(float).copy()
    v = np.zeros_like(u) if v0 is None else v0.astype(float).copy()
    out = np.empty((t_out.size, nx, ny))
    out[0] = u
    for i in range(1, t_out.size):
        for _ in range(substeps):
            v = v - 0.5 * h * np.sin(u)
            v[:, 0] = v[:, -1] = 0.0
            uh, vh = to_spec(u), to_spec(v)
            uh, vh = uh * c + vh * np.where(omega == 0, h, s / safe), -uh * omega * s + vh * c
            u, v = to_phys(uh), to_phys(vh)
            v = v - 0.5 * h * np.sin(u)
            v[:, 0] = v[:, -1] = 0.0
        out[i] = u
    return out


def navier_stokes_2d(
    x, y, t_out, w0, nu: float, substeps: int, *, flow: float = 0.0, solid=None, eta=0.02
):
    """Periodic 2-D vorticity equation ω_t = -(uω)_x - (vω)_y + ν Δω.

    Returns (ω, u, v) at ``t_out``, each (nt, nx, ny), with u = flow + ψ_y, v = -ψ_x,
    Δψ = -ω. With ``solid`` (a mask χ in [0, 1] on the grid), an obstacle by Brinkman
    penalisation: the momentum equation gains −χ u/η, so the vorticity equation gains its
    curl, ∂_x(−χ v/η) − ∂_y(−χ u/η); outside the obstacle (χ = 0) the equation is unchanged.
    """
    nx, ny = x.size, y.size
    kx = wavenumbers(nx, nx * (x[1] - x[0]))
    ky = wavenumbers(ny, ny * (y[1] - y[0]), real=True)
    KX, KY = np.meshgrid(kx, ky, indexing="ij")
    K2 = KX**2 + KY**2
    K2safe = np.where(K2 == 0, 1.0, K2)
    mask = (np.abs(np.fft.fftfreq(nx, 1.0 / nx))[:, None] < nx / 3.0) & (
        np.fft.rfftfreq(ny, 1.0 / ny)[None, :] < ny / 3.0
    )

    def velocity(wh):
        psih = wh / K2safe
        psih[0, 0] = 0.0
        u = np.fft.irfft2(1j * KY * psih, s=(nx, ny)) + flow
        v = np.fft.irfft2(-1j * KX * psih, s=(nx, ny))
        return u, v

    def nonlinear(wh):
        u, v = velocity(wh)
        w = np.fft.irfft2(wh, s=(nx, ny))
        out = -(1j * KX * np.fft.rfft2(u * w) + 1j * KY * np.fft.rfft2(v * w))
        if solid is not None:
            out += (1j * KX * np.fft.rfft2(-solid * v) - 1j * KY * np.fft.rfft2(-solid * u)) / eta
        return out * mask

    dt_out = float(t_out[1] - t_out[0])
    h = dt_out / substeps
    E = np.exp(-nu * K2 * h / 2.0)
    wh = np.fft.rfft2(w0)
    W = np.empty((t_out.size, nx, ny))
    U = np.empty_like(W)
    V = np.empty_like(W)

    def record(i, wh):
        W[i] = np.fft.irfft2(wh, s=(nx, ny))
        U[i], V[i] = velocity(wh)

    record(0, wh)
    for i in range(1, t_out.size):
        for _ in range(substeps):
            # RK4 on the integrating-factor form d/dt (e^{νk²t} ŵ) = e^{νk²t} N(ŵ)
            k1 = nonlinear(wh)
            a = E * (wh + 0.5 * h * k1)
            k2 = nonlinear(a)
            b = E * wh + 0.5 * h * k2
            k3 = nonlinear(b)
            c = E * E * wh + h * E * k3
            k4 = nonlinear(c)
            wh = E * E * wh + h / 6.0 * (E * E * k1 + 2.0 * E * (k2 + k3) + k4)
        record(i, wh)
    return W, U, V
