"""Closed-loop dynamics on the equivalent tree (Khalil 2010, §4): the compiled entry points.

Each call closes the loops for the given active joints (solve.newton, warm-started from a full
tree configuration), forms G and the tree's velocities and accelerations

    qd_tr = G qd_a,     qdd_tr = G qdd_a + Gdot qd_a      (eq. 56 and its derivative),

runs the tree's own kernels on them (rnea, gravity, crba: reused, not copied) and projects:

    Gamma_c = G^T Gamma_tr(q_tr, qd_tr, qdd_tr)       (eq. 55; = Gamma_a + G_p^T Gamma_p, eq. 57)
    A_c = G^T A G,   H_c = G^T Gamma_tr(q_tr, qd_tr, Gdot qd_a),   Gamma_c = A_c qdd_a + H_c  (eq. 58)

Stacked entries take (S, .) arrays; with a single initial guess, sample s > 0 starts from the
solution of sample s - 1 (a trajectory warm-starts itself).
"""
import math

import numpy as np

from ..crba import crba
from ..direct import DIMS, NOT_DIRECT, TUPLE_SIZE, words, is_array, item, matrix, unmanaged, vector
from ..gravity import gravity
from .arrays import (H_LAST, V_BIAS, V_COL, V_DQ, V_E, V_G, V_H, V_LAST, V_QD, V_QDD, V_RHS, V_START, V_TAUTR, V_UNIT,
                     offsets, sizes)
from .bias import constraint_bias
from .closure import closure
from .solve import (NOCLOSE, SINGULAR_LOOP, TOL, expand, factor_passive, newton, passive_jacobian, project,
                         solve_passive, worst_loop)
from ..rnea import rnea, rnea_call
from ...model.layout import B_X, KW
from ..primitives import FRICTION, LENGTH, NONFINITE, SINGULAR, XUP_GIVEN, bad, entry, inline, jit, split, status

GRAVITY_ONLY = 4    # torque modes beside FRICTION (spatial.FRICTION = 1): G^T g only;
VELOCITY_ONLY = 8   # H_c without gravity (no friction, qdd_a = 0);
NO_QDDA = 16        # qdd_a = 0 (gravity and friction as usual)
F_QA, F_QDA, F_QDDA, F_TAUA, F_GUESS = 1, 2, 3, 4, 8
NO_FEXT = np.empty((0, 6))
CONT_STEP = 0.25                     # rad or m: the largest step of a continuation in the active joints
LOOSE = 1e-6                         # loop_jacobian: residual above which q is not a closed configuration


@inline
def vec_status(x, size, field):
    if x.shape[0] != size:
        return status(LENGTH, field, x.shape[0])
    for i in range(size):
        if bad(x[i]):
            return status(NONFINITE, field, i)
    return 0


@jit
def close_loops(tree, LK, qa, q_guess, q):
    """q (n,) = the closed configuration with active joints qa that continues q_guess; then G_p.

    If the guess's own active joints are within CONT_STEP of qa, this is one Newton solve from the guess.
    Otherwise the loops are first closed at the guess's active joints, and the solution is carried to qa
    in steps of at most CONT_STEP (predictor q_p += G_p dq_a, then Newton): it stays on the guess's
    branch (assembly mode). Should the loops not close at the guess's own active joints, Newton starts
    from the guess at qa directly. When the guess is the configuration this model's loops were last
    closed at (a controller's warm start), the G_p still in the workspace predicts the passive joints
    first (q_p += G_p dq_a), which saves a Newton step; if its active joints are qa exactly (a call after
    solve_loops on the same state), nothing is solved: Phi, its QR and G_p in the workspace are those of
    q. Returns a status."""
    B, M, N, p, m, n, nb = sizes(LK)
    st = vec_status(qa, N, F_QA) or vec_status(q_guess, n, F_GUESS)
    if st:
        return st
    o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn = offsets(LK)
    active, passive, Gp, start = LK[o_act], LK[o_act + 1], LK[o_g:o_g + p], LK[o_vec + V_START]
    last = LK[o_vec + V_LAST]
    same = LK[0, H_LAST] == 1.0
    for k in range(n):
        q[k] = q_guess[k]
        same = same and q_guess[k] == last[k]
    LK[0, H_LAST] = 0.0
    big = 0.0
    for a in range(N):
        big = max(big, abs(qa[a] - q[int(active[a])]))
    if same and big == 0.0:     # the configuration closed last, at these active joints: Phi, its QR, G_p hold
        LK[0, H_LAST] = 1.0
        return 0
    if same and big <= CONT_STEP:
        for a in range(N):
            d = qa[a] - q[int(active[a])]
            for j in range(p):
                q[int(passive[j])] += Gp[j, a] * d
    elif big > CONT_STEP and p > 0 and newton(tree, LK, q) == 0:
        K = int(math.ceil(big / CONT_STEP))
        for a in range(N):
            start[a] = q[int(active[a])]
        st = 0
        for step in range(1, K + 1):
            passive_jacobian(LK)
            for a in range(N):
                ka = int(active[a])
                new = qa[a] if step == K else start[a] + (qa[a] - start[a]) * step / K
                for j in range(p):
                    q[int(passive[j])] += Gp[j, a] * (new - q[ka])
                q[ka] = new
            st = newton(tree, LK, q)
            if st:
                break
        if st == 0:
            return closed(LK, q)
        for k in range(n):
            q[k] = q_guess[k]
    for a in range(N):
        q[int(active[a])] = qa[a]
    st = newton(tree, LK, q)
    if st:
        return st
    return closed(LK, q)


@inline
def closed(LK, q):
    """G_p at the closed configuration q, and remember q (see close_loops). Returns 0."""
    passive_jacobian(LK)
    last = LK[offsets(LK)[5] + V_LAST]
    for k in range(q.shape[0]):
        last[k] = q[k]
    LK[0, H_LAST] = 1.0
    return 0


@inline
def tree_motion(tree, LK, qda, qdda, accel, qd, qdd):
    """qd = G qd_a and qdd = G qdd_a + Gdot qd_a (qdd_a = 0 unless ``accel``), at the solved configuration."""
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn = offsets(LK)
    expand(LK, qda, qd)
    bias, rhs, y = LK[o_vec + V_BIAS], LK[o_vec + V_RHS], LK[o_vec + V_DQ]
    constraint_bias(tree, LK, qd, bias)
    if accel:
        expand(LK, qdda, qdd)
    else:
        for k in range(n):
            qdd[k] = 0.0
    for r in range(m):
        rhs[r] = -bias[r]
    solve_passive(LK, rhs, y)                 # Gdot qd_a = -Phi_p^+ b on the passive joints
    passive = LK[o_act + 1]
    for j in range(p):
        qdd[int(passive[j])] += y[j]


@jit
def torques(K, LK, qa, qda, qdda, q_guess, flags, tau_a, q):
    """Gamma_c (mode: inverse dynamics, GRAVITY_ONLY or VELOCITY_ONLY) into tau_a; q = the closed q."""
    tree, dyn, ws, _ = split(K)
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn = offsets(LK)
    st = close_loops(tree, LK, qa, q_guess, q)
    if st:
        return st
    if tau_a.shape[0] != N:
        return status(LENGTH, F_TAUA, tau_a.shape[0])
    qd, qdd, tau = LK[o_vec + V_QD, 0:n], LK[o_vec + V_QDD, 0:n], LK[o_vec + V_TAUTR, 0:n]
    if flags & GRAVITY_ONLY:
        st = gravity(tree, dyn, q, tau, ws)
    else:
        accel = not (flags & (VELOCITY_ONLY | NO_QDDA))
        st = vec_status(qda, N, F_QDA) or (vec_status(qdda, N, F_QDDA) if accel else 0)
        if st:
            return st
        tree_motion(tree, LK, qda, qdda, accel, qd, qdd)
        bodies = LK[o_body:o_body + nb]
        for b in range(nb):     # the closure's joint transforms at q (closure.body_poses), for the RNE
            for j in range(12):
                ws[b, j] = bodies[b, B_X + j]
        if not flags & VELOCITY_ONLY:
            st = rnea(tree, dyn, q, qd, qdd, NO_FEXT, (flags & FRICTION) | XUP_GIVEN, tau, ws)
        else:   # H_c without gravity: the tree's RNE with zero gravity, no friction, qdd = Gdot qd_a
            dyn0 = LK[o_dyn:o_dyn + nb + 2, 0:10]
            dyn0[:, :] = dyn
            dyn0[nb + 1, 0:3] = 0.0
            st = rnea_call(tree, dyn0, q, qd, qdd, NO_FEXT, XUP_GIVEN, tau, ws)
    if st:
        return st
    project(LK, tau, tau_a)
    return 0


@jit
def mass(K, LK, qa, q_guess, A, q):
    """A_c = G^T A G (N x N) into A at the closed configuration (q out)."""
    tree, dyn, ws, _ = split(K)
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn = offsets(LK)
    st = close_loops(tree, LK, qa, q_guess, q)
    if st:
        return st
    H = LK[o_mat:o_mat + n, 0:n]
    st = crba(tree, dyn, q, H, ws)
    if st:
        return st
    g, y, col, unit = LK[o_vec + V_G, 0:n], LK[o_vec + V_TAUTR, 0:n], LK[o_vec + V_COL, 0:N], LK[o_vec + V_UNIT, 0:N]
    for b in range(N):
        for a in range(N):
            unit[a] = 1.0 if a == b else 0.0
        expand(LK, unit, g)                    # column b of G
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += H[i, j] * g[j]
            y[i] = s
        project(LK, y, col)
        for a in range(N):
            A[a, b] = col[a]
    return 0


@jit
def forward(K, LK, qa, qda, tau, q_guess, flags, qdda, q):
    """qdd_a = A_c^-1 (tau - H_c - G^T g - G^T friction) (eq. 58), by a Cholesky factorisation of A_c."""
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn = offsets(LK)
    st = vec_status(tau, N, F_TAUA)
    if st:
        return st
    if qdda.shape[0] != N:
        return status(LENGTH, F_QDDA, qdda.shape[0])
    L = LK[o_ac:o_ac + N, 0:N]
    st = mass(K, LK, qa, q_guess, L, q)
    if st:
        return st
    h = LK[o_vec + V_H, 0:N]
    st = torques(K, LK, qa, qda, qda, q, (flags & FRICTION) | NO_QDDA, h, q)
    if st:
        return st
    for a in range(N):
        qdda[a] = tau[a] - h[a]
    for j in range(N):                          # L L^T = A_c, in place (lower triangle)
        s = L[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return status(SINGULAR, 0, int(LK[o_act, j]))
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, N):
            s = L[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
    for i in range(N):
        s = qdda[i]
        for k in range(i):
            s -= L[i, k] * qdda[k]
        qdda[i] = s / L[i, i]
    for i in range(N - 1, -1, -1):
        s = qdda[i]
        for k in range(i + 1, N):
            s -= L[k, i] * qdda[k]
        qdda[i] = s / L[i, i]
    return 0


@jit
def guess(q_guess, q, s):
    """The initial guess of sample s: its own, or (one guess for all) the previous sample's solution."""
    if q_guess.shape[0] > 1:
        return q_guess[s]
    return q_guess[0] if s == 0 else q[s - 1]


@entry
def solve_one(K, LK, qa, q_guess, q):
    return close_loops(split(unmanaged(K))[0], unmanaged(LK), unmanaged(qa), unmanaged(q_guess), unmanaged(q))


@entry
def solve_many(K_, LK_, qa_, q_guess_, q_):
    K, LK, qa, q_guess, q = unmanaged(K_), unmanaged(LK_), unmanaged(qa_), unmanaged(q_guess_), unmanaged(q_)
    tree = split(K)[0]
    for s in range(qa.shape[0]):
        st = close_loops(tree, LK, qa[s], guess(q_guess, q, s), q[s])
        if st:
            return st, s
    return 0, 0


@jit
def jacobian(tree, LK, q, G):
    """G (n x N) at the closed configuration q (eq. 56)."""
    B, M, N, p, m, n, nb = sizes(LK)
    o_cut, o_mim, o_act, o_body, o_phi, o_vec, o_qr, o_g, o_mat, o_ac, o_dyn = offsets(LK)
    st = vec_status(q, n, F_GUESS)
    if st:
        return st
    e = LK[o_vec + V_E]
    LK[0, H_LAST] = 0.0
    closure(tree, LK, q, e, LK[o_phi:o_phi + m])
    tight = True
    for r in range(m):
        if not abs(e[r]) <= LOOSE:
            return status(NOCLOSE, 0, worst_loop(LK, e))
        tight = tight and abs(e[r]) <= TOL
    st = factor_passive(LK)
    if st:
        return status(SINGULAR_LOOP, 0, worst_loop(LK, e))
    closed(LK, q)
    if not tight:               # closed to LOOSE only: not a warm start that close_loops may take as is
        LK[0, H_LAST] = 0.0
    active, passive, Gp = LK[o_act], LK[o_act + 1], LK[o_g:o_g + p]
    G[:, :] = 0.0
    for a in range(N):
        G[int(active[a]), a] = 1.0
        for j in range(p):
            G[int(passive[j]), a] = Gp[j, a]
    return 0


@entry
def jacobian_one(K, LK, q, G):
    return jacobian(split(unmanaged(K))[0], unmanaged(LK), unmanaged(q), unmanaged(G))


@entry
def jacobian_many(K_, LK_, q_, G_):
    K, LK, q, G = unmanaged(K_), unmanaged(LK_), unmanaged(q_), unmanaged(G_)
    tree = split(K)[0]
    for s in range(q.shape[0]):
        st = jacobian(tree, LK, q[s], G[s])
        if st:
            return st, s
    return 0, 0


@entry
def torques_one(K, LK, qa, qda, qdda, q_guess, flags, tau_a, q):
    return torques(unmanaged(K), unmanaged(LK), unmanaged(qa), unmanaged(qda), unmanaged(qdda), unmanaged(q_guess),
                   flags, unmanaged(tau_a), unmanaged(q))


@entry
def torques_many(K_, LK_, qa_, qda_, qdda_, q_guess_, flags, tau_a_, q_):
    K, LK, qa, qda, qdda = unmanaged(K_), unmanaged(LK_), unmanaged(qa_), unmanaged(qda_), unmanaged(qdda_)
    q_guess, tau_a, q = unmanaged(q_guess_), unmanaged(tau_a_), unmanaged(q_)
    for s in range(qa.shape[0]):
        st = torques(K, LK, qa[s], qda[s], qdda[s], guess(q_guess, q, s), flags, tau_a[s], q[s])
        if st:
            return st, s
    return 0, 0


@entry
def mass_one(K, LK, qa, q_guess, A, q):
    return mass(unmanaged(K), unmanaged(LK), unmanaged(qa), unmanaged(q_guess), unmanaged(A), unmanaged(q))


@entry
def mass_many(K_, LK_, qa_, q_guess_, A_, q_):
    K, LK, qa, q_guess, A, q = (unmanaged(K_), unmanaged(LK_), unmanaged(qa_), unmanaged(q_guess_), unmanaged(A_),
                                unmanaged(q_))
    for s in range(qa.shape[0]):
        st = mass(K, LK, qa[s], guess(q_guess, q, s), A[s], q[s])
        if st:
            return st, s
    return 0, 0


@entry
def forward_one(K, LK, qa, qda, tau, q_guess, flags, qdda, q):
    return forward(unmanaged(K), unmanaged(LK), unmanaged(qa), unmanaged(qda), unmanaged(tau), unmanaged(q_guess),
                   flags, unmanaged(qdda), unmanaged(q))


@entry
def forward_many(K_, LK_, qa_, qda_, tau_, q_guess_, flags, qdda_, q_):
    K, LK, qa, qda, tau = unmanaged(K_), unmanaged(LK_), unmanaged(qa_), unmanaged(qda_), unmanaged(tau_)
    q_guess, qdda, q = unmanaged(q_guess_), unmanaged(qdda_), unmanaged(q_)
    for s in range(qa.shape[0]):
        st = forward(K, LK, qa[s], qda[s], tau[s], guess(q_guess, q, s), flags, qdda[s], q[s])
        if st:
            return st, s
    return 0, 0


@entry
def torques_direct(args, flags):
    """The direct call (direct.py): ``args`` is the address of the tuple
    (ndarray, K, LK, qa, qda, qdda, q_guess, tau_a, q)."""
    if words(args, TUPLE_SIZE + 1, np.int64)[TUPLE_SIZE] != 9:
        return NOT_DIRECT
    if not (is_array(args, 1, 2, True) and is_array(args, 2, 2, True) and is_array(args, 7, 1, True)
            and is_array(args, 8, 1, True)):
        return NOT_DIRECT
    for i in range(3, 7):
        if not is_array(args, i, 1, False):
            return NOT_DIRECT
    dims = words(words(item(args, 1), DIMS + 1, np.int64)[DIMS], 2, np.int64)
    if dims[1] != KW or dims[0] < 4 or (dims[0] - 4) % 3 != 0:
        return NOT_DIRECT
    return torques(matrix(args, 1), matrix(args, 2), vector(args, 3), vector(args, 4), vector(args, 5),
                   vector(args, 6), flags, vector(args, 7), vector(args, 8))
