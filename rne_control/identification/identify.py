"""Least-squares estimation of the base parameters (Gautier & Khalil; Gautier 1997's weighting).

tau = Y_b(q, qd, qdd) pi_b + rho, stacked over N samples. OLS minimises |rho|^2. WLS divides each joint's
rows by sigma_j, with sigma_j^2 = |rho_j|^2 / (N - b) from that joint's OLS residual rho_j (Gautier), so
that joints with different torque scales and noise count alike. Standard deviations from the covariance
sigma_w^2 (Y_w^T Y_w)^-1, sigma_w^2 = |rho_w|^2 / (N n - b) (Y_w, rho_w the weighted rows).

The normal equations are formed per joint (G_j = Y_bj^T Y_bj, so the WLS Gram matrix is sum G_j / sigma_j^2
without a second regressor pass), solved with column equilibration and Cholesky, then refined with the
exact residual (iterative refinement of the semi-normal equations), which recovers least-squares accuracy.
"""
import numpy as np

from ..model.errors import InputError
from .base_parameters import base_parameters
from .parameters import consistency_problems, model_with_parameters, parameter_vector
from .regressor import regressor

CHUNK = 4096        # samples per regressor call (bounds the memory of the full Y)
MAX_COND = 1e10     # a base regressor (unit-norm columns) worse than this is rank deficient


def _joint_data(model, q, qd, qdd, tau):
    arrays = []
    N = None
    for name, x in (("q", q), ("qd", qd), ("qdd", qdd), ("tau", tau)):
        try:
            a = np.array(x, dtype=float, order="C")
        except (TypeError, ValueError):
            raise InputError(f"'{name}' must be an array of numbers") from None
        if a.ndim != 2 or a.shape[1] != model.n:
            raise InputError(f"'{name}' must have shape (N, {model.n}) for joints {list(model.joint_names)}, "
                             f"got {a.shape}")
        if N is not None and a.shape[0] != N:
            raise InputError(f"'{name}' has {a.shape[0]} samples, 'q' has {N}: all inputs need one row per sample")
        N = a.shape[0]
        bad = np.argwhere(~np.isfinite(a))
        if len(bad):
            raise InputError(f"'{name}' of joint '{model.joint_names[bad[0][1]]}' is NaN or inf (sample {bad[0][0]})")
        arrays.append(a)
    return arrays, N


class IdentificationResult:
    """What :func:`identify` found. Arrays per base parameter (``base.names``): ``estimate``, ``std``,
    ``rel_std`` (%); per joint: ``residual_rms`` (N m or N), ``r2``, ``sigma`` (the WLS weights' sigma_j);
    ``cond`` (condition number of Y_b with unit-norm columns), ``method``, ``base``
    (:class:`BaseParameters`), ``pi`` (the full parameter vector of ``model``) and ``model``, whose torques
    are those of the estimate; ``physically_consistent`` and ``problems`` (why not)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def table(self):
        """The estimate as text: one line per base parameter with its standard deviation."""
        w = max(len(s) for s in self.base.names)
        w = min(w, 70)
        lines = [f"{'base parameter':<{w}}  {'estimate':>12}  {'std dev':>10}  {'rel %':>8}"]
        for name, x, s, r in zip(self.base.names, self.estimate, self.std, self.rel_std):
            short = name if len(name) <= w else name[:w - 3] + "..."
            lines.append(f"{short:<{w}}  {x:12.6g}  {s:10.3g}  {r:8.2f}")
        lines.append(f"condition number {self.cond:.4g} ({self.method}); per joint residual RMS and R^2:")
        for j, rms, r2 in zip(self.base.model.joint_names, self.residual_rms, self.r2):
            lines.append(f"  {j}: {rms:.4g}  R^2 = {r2:.5f}")
        return "\n".join(lines)

    def to_yaml(self, path):
        """Write ``model`` as a file ``model_file`` accepts: see rne_control.identification.export."""
        from .export import write_model
        return write_model(self, path)


def _gram_rhs(Yb3, x):
    """Y_bj^T x_j for each joint j: (n, b)."""
    return np.einsum("jnb,jn->jb", Yb3, x)  # much faster than the batched matmul for a vector


def _predict(Yb3, theta):
    """Y_bj theta for each joint j: (n, N)."""
    return np.einsum("jnb,b->jn", Yb3, theta)


def _weighted_solve(G, g, Yb3, tau3, w):
    """theta minimising sum_j w_j^2 |tau_j - Y_bj theta|^2, from the per-joint G_j, g_j, refined twice."""
    Gw = np.tensordot(w ** 2, G, axes=1)
    d = 1.0 / np.sqrt(np.maximum(np.diag(Gw), 1e-300))
    L = np.linalg.cholesky(Gw * d[:, None] * d[None, :])

    def solve(rhs):
        return d * np.linalg.solve(L.T, np.linalg.solve(L, d * rhs))

    theta = solve(np.tensordot(w ** 2, g, axes=1))
    for _ in range(2):
        rho = tau3 - _predict(Yb3, theta)
        theta = theta + solve(np.tensordot(w ** 2, _gram_rhs(Yb3, rho), axes=1))
    rho = tau3 - _predict(Yb3, theta)
    return theta, rho, Gw, d, L


def identify(model, q, qd, qdd, tau, method="wls", physical=False, base=None, seed=0, min_speed=0.0):
    """Estimate the base parameters from stacked samples q, qd, qdd, tau (N, n) (rad, rad/s, rad/s^2, N m;
    m, N for prismatic joints), measured on ``model``'s robot (fixed base, friction and rotor inertia).

    ``method``: "ols" or "wls" (module docstring). ``physical=True`` constrains every link's pseudo-inertia
    to be positive semidefinite and Ia, Fv, Fs >= 0 (needs cvxpy, the ``[identify]`` extra).
    ``base``: a :class:`BaseParameters` to reuse (else ``base_parameters(model, seed)``). ``min_speed``
    (rad/s or m/s; scalar or per joint): a joint's rows at samples where it moves slower are left out,
    as Gautier does: near a velocity reversal the Coulomb model sign(qd) is wrong, and the more so after
    filtering, which smears the measured torque's step but not the regressor's. Raises
    InputError for too few samples, a joint that never moves, a rank-deficient excitation, NaN, or
    mismatched lengths. Returns an :class:`IdentificationResult`.
    """
    if method not in ("ols", "wls"):
        raise InputError(f"'method' must be 'ols' or 'wls', got {method!r}")
    (q, qd, qdd, tau), N = _joint_data(model, q, qd, qdd, tau)
    bp = base or base_parameters(model, seed)
    b, n = bp.b, model.n
    if N <= b:
        raise InputError(f"too few samples: {N} for {b} base parameters of '{model.name}' (need more than {b}, "
                         f"and in practice at least {10 * b})")
    still = [j for k, j in enumerate(model.joint_names) if np.ptp(q[:, k]) < 1e-9 and not np.any(qd[:, k])]
    if still:
        raise InputError(f"the excitation is rank deficient: joint(s) {still} never move, so their parameters "
                         f"cannot be identified")
    Yb3 = np.empty((n, N, b))
    for s in range(0, N, CHUNK):
        e = min(N, s + CHUNK)
        Y = regressor(model, q[s:e], qd[s:e], qdd[s:e]).reshape(e - s, n, -1)
        for k in range(n):
            np.take(Y[:, k, :], bp.independent, axis=1, out=Yb3[k, s:e, :])
    tau3 = np.ascontiguousarray(tau.T)
    keep = np.abs(qd) >= np.broadcast_to(np.asarray(min_speed, float), (n,))  # (N, n)
    if not keep.all():
        Yb3 *= keep.T[:, :, None]
        tau3 *= keep.T
    Nj = keep.sum(axis=0)
    for k in np.flatnonzero(Nj <= b):
        raise InputError(f"too few samples of joint '{model.joint_names[k]}' faster than min_speed: {Nj[k]} for "
                         f"{b} base parameters")
    G = np.matmul(Yb3.transpose(0, 2, 1), Yb3)
    g = _gram_rhs(Yb3, tau3)
    Gs = G.sum(axis=0)
    dn = 1.0 / np.sqrt(np.maximum(np.diag(Gs), 1e-300))
    ev = np.linalg.eigvalsh(Gs * dn[:, None] * dn[None, :])
    cond = float(np.sqrt(ev[-1] / ev[0])) if ev[0] > 0 else np.inf
    if not cond < MAX_COND:
        weak = np.argsort(np.diag(Gs))[:3]
        raise InputError(f"the excitation is rank deficient (condition number {cond:.3g} of the base regressor): "
                         f"it hardly excites {[bp.names[i] for i in weak]}")
    ones = np.ones(n)
    theta, rho, Gw, d, L = _weighted_solve(G, g, Yb3, tau3, ones)
    sigma = np.sqrt((rho ** 2).sum(axis=1) / (Nj - b))
    w = ones
    if method == "wls":
        w = 1.0 / np.maximum(sigma, 1e-12 * max(1e-300, sigma.max()))
        theta, rho, Gw, d, L = _weighted_solve(G, g, Yb3, tau3, w)
    sw2 = float(((w[:, None] * rho) ** 2).sum() / max(1, Nj.sum() - b))
    Linv = np.linalg.inv(L)
    cov = sw2 * (d[:, None] * (Linv.T @ Linv) * d[None, :])
    pi0 = parameter_vector(model)
    if physical:
        from .physical import physical_fit
        pi = physical_fit(model, bp, Gw, np.tensordot(w ** 2, g, axes=1), pi0)
        theta = bp.K @ pi
        rho = tau3 - _predict(Yb3, theta)
    else:  # the nominal pi moved the least distance that makes K pi = theta
        K = bp.K
        pi = pi0 + K.T @ np.linalg.solve(K @ K.T, theta - K @ pi0)
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    tc = (tau3 - (tau3.sum(axis=1) / Nj)[:, None]) * keep.T
    problems = consistency_problems(model, pi)
    return IdentificationResult(
        estimate=theta, std=std, rel_std=100.0 * std / np.maximum(np.abs(theta), 1e-300), cond=cond,
        method=method, sigma=sigma, residual_rms=np.sqrt((rho ** 2).sum(axis=1) / Nj),
        r2=1.0 - (rho ** 2).sum(axis=1) / np.maximum((tc ** 2).sum(axis=1), 1e-300), base=bp, pi=pi,
        model=model_with_parameters(model, pi), physically_consistent=not problems, problems=problems,
        physical=bool(physical), nominal=model, covariance=cov, samples_used=Nj)
