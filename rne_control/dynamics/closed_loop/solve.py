"""Closing the loops: Newton-Raphson on eq. (3) for the passive joints, and G of eq. (56).

Partition the constraint Jacobian by columns into active and passive joints, Phi = [Phi_a Phi_p]. With
the active joints given, each Newton step solves Phi_p dq_p = -e in the least-squares sense, by a
Householder QR of Phi_p (m x p, m >= p). Planar loops give redundant rows (their out-of-plane
conditions hold identically), so Phi has dependent rows; what matters is that Phi_p has full column
rank p, i.e. the passive joints are determined by the active ones. If it has not, the configuration is
singular (or G undefined) and the solve stops with status SINGULAR_LOOP.

Differentiating Phi qd = 0 gives the passive velocities and accelerations (eq. 56):

    qd_p  = G_p qd_a,                   G_p = -Phi_p^+ Phi_a,
    qdd_p = G_p qdd_a - Phi_p^+ b,      b = Phi' qd   (bias.py),

so the tree's qdd is G qdd_a + Gdot qd_a, with G = [1; G_p] (active rows are the identity).
"""
import math

from .arrays import V_BETA, V_DQ, V_E, V_Q, V_RHS, V_RINV, offsets, sizes
from .closure import closure, n_rows
from ...model.layout import C_ROW, C_TYPE
from ..primitives import inline, jit, status

NOCLOSE, SINGULAR_LOOP = 4, 5   # status kinds: the loops do not close / Phi_p is rank deficient
TOL = 1e-12                     # |e| (m, and unit-vector components) at which the loops count as closed
MAXIT = 50
MAX_STEP = 0.5                  # rad or m per Newton step, so a poor guess does not jump branches wildly
RANK_TOL = 1e-10


@jit
def worst_loop(LK, e):
    """Index of the loop (cut joints, then mimic couplings) with the largest residual."""
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut = 1
    worst, big = 0, -1.0
    for c in range(B + M):
        if c < B:
            r0, nr = int(LK[o_cut + c, C_ROW]), n_rows(int(LK[o_cut + c, C_TYPE]))
        else:
            r0, nr = m - M + c - B, 1
        for r in range(r0, r0 + nr):
            if abs(e[r]) > big:
                worst, big = c, abs(e[r])
    return worst


@inline
def factor_passive(LK):
    """Householder QR of Phi_p in place (QR rows; beta and 1 / R's diagonal in vector rows). Returns 0, or
    SINGULAR_LOOP when Phi_p has not full column rank (a column's remainder below RANK_TOL times the
    largest column; compared squared, which spares a square root per column)."""
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn = offsets(LK)
    Phi, A = LK[o_phi:o_phi + m], LK[o_qr:o_qr + m]
    beta, rinv, passive = LK[o_vec + V_BETA], LK[o_vec + V_RINV], LK[o_act + 1]
    scale2 = 0.0
    for j in range(p):
        kj = int(passive[j])
        col = 0.0
        for r in range(m):
            A[r, j] = Phi[r, kj]
            col += A[r, j] * A[r, j]
        scale2 = max(scale2, col)
    if m < p:
        return status(SINGULAR_LOOP, 0, 0)
    for j in range(p):
        norm2 = 0.0
        for r in range(j, m):
            norm2 += A[r, j] * A[r, j]
        if norm2 <= RANK_TOL * RANK_TOL * scale2:
            return status(SINGULAR_LOOP, 0, j)
        x0 = A[j, j]
        alpha = -math.sqrt(norm2) if x0 >= 0.0 else math.sqrt(norm2)
        A[j, j] = x0 - alpha                  # v = x - alpha e_1, kept in A[j:, j]
        beta[j] = 1.0 / (norm2 - alpha * x0)  # 2 / v^T v, as v^T v = 2 (|x|^2 - alpha x_0)
        rinv[j] = 1.0 / alpha                 # R's diagonal is alpha
        for c in range(j + 1, p):             # apply (1 - beta v v^T) to the remaining columns
            s = 0.0
            for r in range(j, m):
                s += A[r, j] * A[r, c]
            s *= beta[j]
            for r in range(j, m):
                A[r, c] -= s * A[r, j]
    return 0


@inline
def solve_passive(LK, x, y):
    """y (p,) = Phi_p^+ x for x (m,) (overwritten with Q^T x), from the factors of factor_passive."""
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn = offsets(LK)
    A, beta, rinv = LK[o_qr:o_qr + m], LK[o_vec + V_BETA], LK[o_vec + V_RINV]
    for j in range(p):
        s = 0.0
        for r in range(j, m):
            s += A[r, j] * x[r]
        s *= beta[j]
        for r in range(j, m):
            x[r] -= s * A[r, j]
    for j in range(p - 1, -1, -1):
        s = x[j]
        for c in range(j + 1, p):
            s -= A[j, c] * y[c]
        y[j] = s * rinv[j]


@inline
def sq_norm(e, m):
    s = 0.0
    for r in range(m):
        s += e[r] * e[r]
    return s


@jit
def newton(tree, LK, q):
    """Close the loops: adjust q's passive joints (q in/out, its active joints fixed) until |e| <= TOL.

    Damped Gauss-Newton: each step solves Phi_p dq_p = -e, is shortened to at most MAX_STEP, and is
    halved until it reduces |e|, so the solve stays on the branch nearest the guess instead of jumping to
    another assembly mode. Leaves Phi and the QR of Phi_p at the solution. Returns 0 or a NOCLOSE /
    SINGULAR_LOOP status whose index is the worst loop; e is left in its vector row for the message."""
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn = offsets(LK)
    e, Phi, rhs, dq = LK[o_vec + V_E], LK[o_phi:o_phi + m], LK[o_vec + V_RHS], LK[o_vec + V_DQ]
    q_old, passive = LK[o_vec + V_Q], LK[o_act + 1]
    closure(tree, LK, q, e, Phi)
    err = sq_norm(e, m)
    for it in range(MAXIT):
        if not math.isfinite(err):
            break
        st = factor_passive(LK)
        if st:
            return status(SINGULAR_LOOP, 0, worst_loop(LK, e))
        big = 0.0
        for r in range(m):
            big = max(big, abs(e[r]))
        if big <= TOL:
            return 0
        for r in range(m):
            rhs[r] = -e[r]
        solve_passive(LK, rhs, dq)
        big = 0.0
        for j in range(p):
            big = max(big, abs(dq[j]))
            q_old[j] = q[int(passive[j])]
        alpha = MAX_STEP / big if big > MAX_STEP else 1.0
        accepted = False
        for ls in range(40):                  # halve the step until |e| decreases
            for j in range(p):
                q[int(passive[j])] = q_old[j] + alpha * dq[j]
            closure(tree, LK, q, e, Phi)
            trial = sq_norm(e, m)
            if trial < err:
                accepted = True
                break
            alpha *= 0.5
        if not accepted:                      # a least-squares minimum that does not close: out of reach
            for j in range(p):
                q[int(passive[j])] = q_old[j]
            closure(tree, LK, q, e, Phi)
            break
        err = trial
    return status(NOCLOSE, 0, worst_loop(LK, e))


@inline
def passive_jacobian(LK):
    """G_p = -Phi_p^+ Phi_a (p x N) into its rows, from Phi and the QR at the solution."""
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn = offsets(LK)
    Phi, Gp, rhs, y = LK[o_phi:o_phi + m], LK[o_g:o_g + p], LK[o_vec + V_RHS], LK[o_vec + V_DQ]
    active = LK[o_act]
    for a in range(N):
        ka = int(active[a])
        for r in range(m):
            rhs[r] = -Phi[r, ka]
        solve_passive(LK, rhs, y)
        for j in range(p):
            Gp[j, a] = y[j]


@inline
def expand(LK, xa, x):
    """x (n,) = G xa: active joints from xa (N,), passive ones G_p xa."""
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn = offsets(LK)
    active, passive, Gp = LK[o_act], LK[o_act + 1], LK[o_g:o_g + p]
    for a in range(N):
        x[int(active[a])] = xa[a]
    for j in range(p):
        s = 0.0
        for a in range(N):
            s += Gp[j, a] * xa[a]
        x[int(passive[j])] = s


@inline
def project(LK, tau, tau_a):
    """tau_a (N,) = G^T tau (eq. 55), i.e. Gamma_a + G_p^T Gamma_p (eq. 57)."""
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn = offsets(LK)
    active, passive, Gp = LK[o_act], LK[o_act + 1], LK[o_g:o_g + p]
    for a in range(N):
        s = tau[int(active[a])]
        for j in range(p):
            s += Gp[j, a] * tau[int(passive[j])]
        tau_a[a] = s
