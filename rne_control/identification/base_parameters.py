"""Base parameters: the identifiable combinations pi_b = K pi (Gautier 1990, numerical QR).

Y is stacked over random samples within the joint limits; its columns are scaled to unit norm (scaling
does not change which columns depend on earlier ones), except columns below ZERO times the largest norm,
which are rounding residue (a DH alpha of pi/2 has cos = 6e-17) and are set to zero. A QR decomposition *without pivoting* in a fixed
column order (``qr_order``: link by link in Khalil's order, then the joints) keeps column j if
|R_jj| > TOL (documented below): a column that
is a combination of earlier ones is regrouped into them, so that the earliest parameter of each
combination gives its name, and the result does not depend on the random samples. With Y_d = Y_b beta
(beta by least squares), Y pi = Y_b (pi_i + beta pi_d), so K = [1 | beta] in the original column order.
The rank b is cross-checked by the singular values of the same scaled Y: sigma_b / sigma_{b+1} > GAP.
"""
import numpy as np

from ..model.errors import ModelError
from .parameters import parameter_names
from .regressor import regressor

TOL = 1e-8     # |R_jj| threshold on unit-norm columns
GAP = 1e8      # required singular-value gap at rank b
ZERO = 1e-10   # a column whose norm is below ZERO times the largest is zero (not identifiable)
ROUND = 1e-10  # |beta| below this (relative to its row's largest) is printed and stored as exactly zero


class BaseParameters:
    """The base parameters of a model: ``b``, the kept column ``independent`` indices and regrouped
    ``dependent`` ones, ``beta`` (b, d), ``K`` (b, p) with pi_b = K pi, ``names`` of each combination, the
    ``gap`` sigma_b / sigma_{b+1} found, and :meth:`Y_b` (``Y[:, independent]``)."""

    def __init__(self, model, independent, dependent, beta, names, gap, tol):
        self.model = model
        self.independent = np.asarray(independent, int)
        self.dependent = np.asarray(dependent, int)
        self.beta = beta
        self.b = len(self.independent)
        p = len(self.independent) + len(self.dependent)
        self.K = np.zeros((self.b, p))
        self.K[np.arange(self.b), self.independent] = 1.0
        self.K[:, self.dependent] = beta
        self.names = names
        self.gap = gap
        self.tol = tol

    @property
    def selection(self):
        """The selection matrix P_b (p, b): Y_b = Y P_b (the kept columns)."""
        P = np.zeros((self.K.shape[1], self.b))
        P[self.independent, np.arange(self.b)] = 1.0
        return P

    @property
    def regrouping(self):
        """The regrouping matrix beta (b, d): Y_d = Y_b beta, so pi_b = pi_independent + beta pi_dependent."""
        return self.beta

    def Y_b(self, Y):
        """The base regressor Y_b = Y[:, independent] of a full regressor Y: tau = Y_b pi_b."""
        return Y[:, self.independent]

    def regressor(self, q, qd, qdd, **kw):
        """Y_b at stacked or single samples (``rc.regressor`` arguments)."""
        return self.Y_b(regressor(self.model, q, qd, qdd, **kw))

    def __repr__(self):
        return f"<BaseParameters of '{self.model.name}': b = {self.b} of {self.K.shape[1]}>"


KHALIL = np.array([4, 5, 7, 6, 8, 9, 1, 2, 3, 0])  # Ixx Ixy Ixz Iyy Iyz Izz mcx mcy mcz m, in pi's link block


def qr_order(model):
    """The fixed column order of the QR: link by link (``link_names``), each in Khalil's order
    [XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M], then the joints' [Ia, Fv, Fs]. A column that depends on
    earlier ones is regrouped into them, so the mass and first moments of a link (last in its block)
    are regrouped into inertias and into the links before it, as in Khalil & Bennis's rules (XXR = XX - YY,
    ZZR, MXR, ...), rather than the reverse, which would keep nearly parallel mass columns and give an
    ill-conditioned Y_b whatever the trajectory."""
    nl = len(model.link_names)
    return np.concatenate([10 * li + KHALIL for li in range(nl)] + [np.arange(10 * nl, 10 * nl + 3 * model.n)])


def random_states(model, count, rng):
    """q uniform within the joint limits ([-pi, pi] where unlimited), qd and qdd standard normal."""
    lo, hi = model.position_limits[:, 0].copy(), model.position_limits[:, 1].copy()
    lo[~np.isfinite(lo)], hi[~np.isfinite(hi)] = -np.pi, np.pi
    q = rng.uniform(lo, hi, (count, model.n))
    return q, rng.standard_normal((count, model.n)), rng.standard_normal((count, model.n))


def _combination(names, i, coeffs, dep):
    text = names[i]
    for c, j in zip(coeffs, dep):
        if c == 0.0:
            continue
        mag = abs(c)
        term = names[j] if abs(mag - 1.0) < 1e-9 else f"{mag:.6g}*{names[j]}"
        text += f" {'-' if c < 0 else '+'} {term}"
    return text


def base_parameters(model, seed=0, samples=None, rotor=True, friction=True):
    """The base parameters of ``model`` (fixed base): see the module docstring. ``samples`` random states
    (default: enough for 4 p rows) drawn with ``seed``. ``rotor=False`` / ``friction=False`` leave out the
    Ia / Fv, Fs columns (they become unidentifiable parameters of K's null space), for comparing counts
    with the literature's inertial-only models.
    Raises ModelError if the singular values show no gap of GAP at the rank the QR found.
    """
    names = parameter_names(model)
    p = len(names)
    count = samples or max(20, -(-4 * p // model.n))
    q, qd, qdd = random_states(model, count, np.random.default_rng(seed))
    Y = regressor(model, q, qd, qdd, friction=friction)
    if not rotor:
        Y[:, len(names) - 3 * model.n::3] = 0.0
    norms = np.linalg.norm(Y, axis=0)
    nonzero = norms > ZERO * norms.max()  # cos(pi/2) = 6e-17 leaves exactly-zero columns slightly non-zero
    Ys = np.where(nonzero, Y / np.where(nonzero, norms, 1.0), 0.0)
    order = qr_order(model)
    R = np.linalg.qr(Ys[:, order], mode="r")
    keep = np.abs(np.diag(R)) > TOL
    independent, dependent = order[keep], np.sort(order[~keep])
    b = len(independent)
    s = np.linalg.svd(Ys, compute_uv=False)
    gap = s[b - 1] / s[b] if b < len(s) and s[b] > 0 else np.inf
    if not gap > GAP:
        raise ModelError(f"model '{model.name}': no clear rank of the regressor (sigma_b / sigma_b+1 = {gap:.3g} "
                         f"at b = {b}, need > {GAP:g})")
    Yb = Y[:, independent]
    beta = np.linalg.lstsq(Yb, Y[:, dependent], rcond=None)[0] if len(dependent) else np.zeros((b, 0))
    if beta.size:
        scale = np.maximum(np.abs(beta).max(axis=0, keepdims=True), 1e-300)
        beta[np.abs(beta) < ROUND * np.maximum(scale, 1.0)] = 0.0
    combos = [_combination(names, i, beta[r], dependent) for r, i in enumerate(independent)]
    return BaseParameters(model, independent, dependent, beta, combos, gap, TOL)
