"""Trees with lumped elasticity (Khalil 2010, §6; Khalil & Gautier 2000): inverse and direct dynamics.

Each joint is rigid (actuated), elastic (passive, Gamma_j = -K_j dq_j - D_j qd_j with dq_j = q_j - q0_j,
eqs. 69-70 and a damper) or free (passive, Gamma_j = 0); see rne_control.model.elastic. Friction
Fs sign(qd) + Fv qd acts at every joint when FRICTION is set (eq. 44); the damper D always acts.

Direct dynamics (§6.2) is the rigid articulated-body algorithm (aba.py, §3.3.2) with Gamma_j put in
for the passive joints: :func:`elastic_aba`.

Inverse dynamics (§6.3): from q, qd of every joint and qdd of the rigid joints, the torques of the
rigid joints and the accelerations of the passive ones, in three recursive passes, O(n):

i)   forward, j = 1..n: exactly the first pass of the direct model (§3.3.2), aba.aba_forward: the
     screw transform jT_i, v_j, gamma_j (34) and beta_j (35); J*_j = J_j, beta*_j = beta_j.
ii)  backward, j = n..1, i = a(j):
       passive:  H_j = a_j^T J*_j a_j + Ia_j                                           (72; Ia as in 36)
                 K_j = J*_j - J*_j a_j H_j^-1 a_j^T J*_j                               (73)
                 alpha_j = K_j gamma_j + J*_j a_j H_j^-1 (Gamma_j + a_j^T beta*_j) - beta*_j  (74)
       rigid:    K_j = J*_j                                                            (75)
                 alpha_j = K_j gamma_j + J*_j a_j qdd_j - beta*_j                      (76)
       parent:   beta*_i = beta*_i - jT_i^T alpha_j,   J*_i = J*_i + jT_i^T K_j jT_i  (77, 78)
iii) forward, j = 1..n, from the base's V0' = -g:
       f_j = K_j jT_i V'_i + alpha_j                                                   (79)
       passive:  qdd_j = H_j^-1 [-a_j^T J*_j (jT_i V'_i + gamma_j) + Gamma_j + a_j^T beta*_j]  (80)
       every j:  V'_j = jT_i V'_i + a_j qdd_j + gamma_j                                (81)
       rigid:    Gamma_j = a_j^T f_j + Ia_j qdd_j  (+ friction)                        (82)

In Featherstone's notation, used by the kernels (aba.py): jT_i is X_j (parent to body coordinates),
a_j is S_j, J*_j the articulated inertia I^A_j, beta*_j = -p^A_j, gamma_j = c_j, V'_j = a_j and
J*_j a_j = U_j. Khalil prints the transform in (79)-(81) as jT_i^T; it is the jT_i of (14), which
maps the antecedent's acceleration into frame j (x_motion). Since K_j = J*_j is symmetric at a rigid
joint, a_j^T f_j in (82) is U_j^T (X_j a_i) + a_j^T alpha_j: the pass stores only U_j and the scalar
a_j^T alpha_j per rigid joint. The Ia_j in (72) is (36)'s rotor term (zero for a virtual elastic joint).
"""
import numpy as np

from ..aba import NO_FEXT, aba, aba_forward, add_xT_M_x
from ..direct import NOT_DIRECT, arrays_ok, is_array, matrix, unmanaged, vector
from ...model.layout import DAMPING, FREE_JOINT, FS, FV, IA, QIDX, REST, REVOLUTE, RIGID_JOINT, ROLE, STIFFNESS, SUBIDX
from ..primitives import (F_OUT, F_Q, F_QD, F_TAU, FRICTION, SINGULAR, add_xT_force, body, entry, gravity_status,
                          inline, jit, length_status, sgn, split, status, x_motion)

# Workspace per body (row nb = the base), the layout of aba.py: X 0:12, v 12:18, gamma = c 18:24,
# p^A = -beta* 24:30, U = J* a 30:36, J* 36:72, V' 72:78, H 78, then 79: Gamma_j + a^T beta*_j (passive)
# or a^T alpha_j (rigid).


@inline
def passive_torque(row, q, qd):
    """Gamma_j of a passive joint: -K (q - q0) - D qd when elastic (69, 70), 0 when free."""
    if row[ROLE] == FREE_JOINT:
        return 0.0
    return -row[STIFFNESS] * (q - row[REST]) - row[DAMPING] * qd


@inline
def counts(tree):
    """The number of rigid joints and of passive (elastic or free) joints."""
    n_r = 0
    for i in range(tree.shape[0]):
        if tree[i, ROLE] == RIGID_JOINT:
            n_r += 1
    return n_r, tree.shape[0] - n_r


@inline
def joint_inputs(tree, q, qd, x_rigid, x):
    """x (all joints): x_rigid at the rigid joints, Gamma_j at the passive ones."""
    for i in range(tree.shape[0]):
        k = int(tree[i, QIDX])
        if tree[i, ROLE] == RIGID_JOINT:
            x[k] = x_rigid[int(tree[i, SUBIDX])]
        else:
            x[k] = passive_torque(tree[i], q[k], qd[k])


@inline
def add_K_gamma(K, gamma, out):
    """out += K gamma for a row-major 6x6 K. gamma = v x S qd has no component 2 or 5 for either joint type
    (S is e_3 or e_6), so those columns are skipped."""
    for r in range(6):
        out[r] += K[6 * r] * gamma[0] + K[6 * r + 1] * gamma[1] + K[6 * r + 3] * gamma[3] + K[6 * r + 4] * gamma[4]


@jit
def elastic_rnea(tree, dyn, q, qd, qdd_r, f_ext, flags, tau_r, qdd_p, ws, scratch):
    """tau_r (rigid joints) and qdd_p (passive joints) for one sample; returns a status (0 = ok)."""
    nb = tree.shape[0]
    n_r, n_p = counts(tree)
    st = (length_status(q, nb, F_Q) or length_status(qd, nb, F_QD) or length_status(qdd_r, n_r, F_TAU)
          or length_status(tau_r, n_r, F_OUT) or length_status(qdd_p, n_p, F_OUT) or gravity_status(dyn, nb))
    if st:
        return st
    # x in the base row's free columns (no allocation on the hot path) when it fits
    x = ws[nb, 80:80 + nb] if nb <= ws.shape[1] - 80 else np.empty(nb)
    joint_inputs(tree, q, qd, qdd_r, x)
    ws[nb, 12:18] = 0.0                                           # fixed base: v_0 = 0
    # i) the first forward pass of the direct model: X, v, gamma, J* = J, p^A = -beta
    st = aba_forward(tree, dyn, q, qd, x, f_ext, ws, scratch)
    if st:
        return st
    # ii) backward: H, K, alpha; J* and beta* of the parent (72-78)
    scale = 1.0
    for i in range(nb):
        scale += dyn[i, 0] + dyn[i, 4] + dyn[i, 5] + dyn[i, 6] + tree[i, IA]
    for i in range(nb - 1, -1, -1):
        p, jtype, k = body(tree, i)
        s = 2 if jtype == REVOLUTE else 5
        J, U, pA, gamma = ws[i, 36:72], ws[i, 30:36], ws[i, 24:30], ws[i, 18:24]
        alpha = scratch[114:120]
        for r in range(6):
            U[r] = J[6 * r + s]                                   # J* a
        if tree[i, ROLE] == RIGID_JOINT:
            Kj = J                                                # K = J*                          (75)
            for r in range(6):                                    # alpha = K gamma + J* a qdd - beta*  (76)
                alpha[r] = pA[r] + U[r] * x[k]
            add_K_gamma(Kj, gamma, alpha)
            ws[i, 79] = alpha[s]
        else:
            H = U[s] + tree[i, IA]                                # H = a^T J* a + Ia               (72)
            if not H > 1e-14 * scale:
                return status(SINGULAR, 0, k)
            u = x[k] - pA[s]                                      # Gamma + a^T beta*
            if flags & FRICTION:
                u -= tree[i, FV] * qd[k] + tree[i, FS] * sgn(qd[k])
            ws[i, 78], ws[i, 79] = H, u
            Kj = scratch[78:114]
            invH = 1.0 / H
            for r in range(6):                                    # K = J* - J* a H^-1 a^T J*       (73)
                for c in range(6):
                    Kj[6 * r + c] = J[6 * r + c] - U[r] * invH * U[c]
            for r in range(6):                                    # alpha = K gamma + J* a H^-1 u - beta*  (74)
                alpha[r] = pA[r] + U[r] * invH * u
            add_K_gamma(Kj, gamma, alpha)
        if p >= 0:
            add_xT_force(ws[i, 0:12], alpha, ws[p, 24:30])       # beta*_i -= T^T alpha            (77)
            add_xT_M_x(ws[i, 0:12], Kj, ws[p, 36:72], scratch)   # J*_i += T^T K T                 (78)
    # iii) forward from V0' = -g: qdd of the passive joints, Gamma of the rigid ones (79-82)
    a_g = dyn[nb + 1, 0:3]
    base = ws[nb, 72:78]
    base[0:3] = 0.0
    for j in range(3):
        base[3 + j] = -a_g[j]
    Ta = scratch[120:126]
    for i in range(nb):
        p, jtype, k = body(tree, i)
        s = 2 if jtype == REVOLUTE else 5
        a, U = ws[i, 72:78], ws[i, 30:36]
        x_motion(ws[i, 0:12], ws[p if p >= 0 else nb, 72:78], Ta)   # T V'_i
        if tree[i, ROLE] == RIGID_JOINT:
            qddk = x[k]
            t = ws[i, 79]                                         # a^T f = a^T (K T V'_i + alpha)  (79, 82)
            for j in range(6):
                t += U[j] * Ta[j]
            t += tree[i, IA] * qddk
            if flags & FRICTION:
                t += tree[i, FV] * qd[k] + tree[i, FS] * sgn(qd[k])
            tau_r[int(tree[i, SUBIDX])] = t
        else:
            acc = ws[i, 79]                                       # (80)
            for j in range(6):
                acc -= U[j] * (Ta[j] + ws[i, 18 + j])
            qddk = acc / ws[i, 78]
            qdd_p[int(tree[i, SUBIDX])] = qddk
        for j in range(6):                                        # V' = T V'_i + a qdd + gamma     (81)
            a[j] = Ta[j] + ws[i, 18 + j]
        a[s] += qddk
    return 0


@jit
def elastic_aba(tree, dyn, q, qd, tau_r, f_ext, flags, qdd, ws, scratch):
    """qdd (all joints) under the rigid joints' tau_r and the passive joints' Gamma_j (§6.2)."""
    nb = tree.shape[0]
    n_r, _ = counts(tree)
    st = (length_status(q, nb, F_Q) or length_status(qd, nb, F_QD) or length_status(tau_r, n_r, F_TAU)
          or length_status(qdd, nb, F_OUT))
    if st:
        return st
    tau = np.empty(nb)
    joint_inputs(tree, q, qd, tau_r, tau)
    return aba(tree, dyn, q, qd, tau, f_ext, flags, qdd, ws, scratch)


@entry
def elastic_rnea_one(args, flags):
    """The direct call (see direct.py): ``args`` is the address of the tuple
    (ndarray, K, q, qd, qdd_r, tau_r, qdd_p); tau_r and qdd_p are the outputs."""
    if not (arrays_ok(args, 4, 1) and is_array(args, 5, 1, True)):   # both outputs writeable
        return NOT_DIRECT
    tree, dyn, ws, scratch = split(matrix(args, 1))
    return elastic_rnea(tree, dyn, vector(args, 2), vector(args, 3), vector(args, 4), NO_FEXT, flags,
                        vector(args, 5), vector(args, 6), ws, scratch)


@entry
def elastic_rnea_many(K, q, qd, qdd_r, f_ext, flags, tau_r, qdd_p):
    """Stacked samples (N, ·); f_ext (N, nb, 6) or (0, 0, 6). Returns (status, sample)."""
    tree, dyn, ws, scratch = split(unmanaged(K))
    for s in range(q.shape[0]):
        fe = f_ext[s] if f_ext.shape[0] > 0 else NO_FEXT
        st = elastic_rnea(tree, dyn, q[s], qd[s], qdd_r[s], fe, flags, tau_r[s], qdd_p[s], ws, scratch)
        if st != 0:
            return st, s
    return 0, 0


@entry
def elastic_aba_one(K, q, qd, tau_r, flags, qdd):
    tree, dyn, ws, scratch = split(unmanaged(K))
    return elastic_aba(tree, dyn, q, qd, tau_r, NO_FEXT, flags, qdd, ws, scratch)


@entry
def elastic_aba_many(K, q, qd, tau_r, f_ext, flags, qdd):
    tree, dyn, ws, scratch = split(unmanaged(K))
    for s in range(q.shape[0]):
        fe = f_ext[s] if f_ext.shape[0] > 0 else NO_FEXT
        st = elastic_aba(tree, dyn, q[s], qd[s], tau_r[s], fe, flags, qdd[s], ws, scratch)
        if st != 0:
            return st, s
    return 0, 0
