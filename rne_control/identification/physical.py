"""Physically consistent least squares (Wensing, Kim & Slotine 2017), with cvxpy (the [identify] extra).

minimise |A K pi - z| / |z| + EPS |pi - pi_0| / sqrt(1 + |pi_0|^2)
subject to  J_l(pi) >= 0 (PSD) for every link that moves, and Ia, Fv, Fs >= 0,

where A^T A = G_w and A^T z = g_w are the (weighted) normal equations of the fit, so the first term is
the weighted torque residual up to a constant, and the tiny second term picks, among the equally good
pi, the one nearest the nominal. J_l is the link's 4x4 pseudo-inertia [[Sigma, h], [h^T, m]],
Sigma = tr(I_o)/2 1 - I_o: J_l >= 0 holds iff the link's mass distribution can exist (m >= 0, inertia
PSD, triangle inequalities). The solution is finally projected onto the constraints (eigenvalues
clipped at zero) to remove the solver's tolerance.
"""
import warnings

import numpy as np

from ..model.errors import InputError
from .parameters import pseudo_inertia
from .regressor import NPL

EPS = 1e-6
SOLVER = {"solver": "CLARABEL", "tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}


def _from_pseudo(J):
    Sigma = J[:3, :3]
    I = np.trace(Sigma) * np.eye(3) - Sigma
    return np.array([J[3, 3], J[0, 3], J[1, 3], J[2, 3], I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]])


def project(model, pi):
    """pi with every moving link's pseudo-inertia projected onto the PSD cone and Ia, Fv, Fs >= 0."""
    pi = np.array(pi, float)
    for li, name in enumerate(model.link_names):
        if model.link_frames[name][0] < 0 and not model.floating_base:
            continue
        s = slice(NPL * li, NPL * (li + 1))
        ev, V = np.linalg.eigh(pseudo_inertia(pi[s]))
        pi[s] = _from_pseudo((V * np.maximum(ev, 0.0)) @ V.T)
    j0 = NPL * len(model.link_names)
    pi[j0:] = np.maximum(pi[j0:], 0.0)
    return pi


def physical_fit(model, bp, Gw, gw, pi0):
    """The full parameter vector of the constrained fit (module docstring)."""
    try:
        import cvxpy as cp
    except ImportError:
        raise InputError("physical=True needs cvxpy: pip install 'rne_control[identify]'") from None
    d = 1.0 / np.sqrt(np.maximum(np.diag(Gw), 1e-300))
    Ls = np.linalg.cholesky(Gw * d[:, None] * d[None, :])
    A = Ls.T / d[None, :]
    z = np.linalg.solve(Ls, d * gw)
    p = len(pi0)
    pi = cp.Variable(p)
    E = [pseudo_inertia(np.eye(NPL)[k]) for k in range(NPL)]
    cons = []
    for li, name in enumerate(model.link_names):
        if model.link_frames[name][0] < 0 and not model.floating_base:
            continue  # the fixed base's own parameters never enter the torques
        P = cp.Variable((4, 4), PSD=True)
        cons.append(P == sum(pi[NPL * li + k] * E[k] for k in range(NPL)))
    j0 = NPL * len(model.link_names)
    cons.append(pi[j0:] >= 0)
    AK = A @ bp.K / np.sqrt(max(z @ z, 1e-300))
    zs = z / np.sqrt(max(z @ z, 1e-300))
    # norms, not squares: a second-order cone keeps the solver's accuracy on the residual itself
    obj = cp.norm(AK @ pi - zs) + EPS * cp.norm(pi - pi0) / np.sqrt(1.0 + pi0 @ pi0)
    prob = cp.Problem(cp.Minimize(obj), cons)
    with warnings.catch_warnings():
        # "optimal_inaccurate" is common when the data fit exactly (a zero residual is the cone's tip);
        # the result is checked afterwards (projection, consistency, residual) instead
        warnings.simplefilter("ignore", UserWarning)
        prob.solve(**SOLVER)
    if pi.value is None or prob.status not in ("optimal", "optimal_inaccurate"):
        raise InputError(f"the physically consistent fit failed: solver status '{prob.status}'")
    return project(model, pi.value)
