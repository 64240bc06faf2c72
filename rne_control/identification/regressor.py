"""The dynamic regressor Y(q, qd, qdd) with tau = Y pi, computed recursively, column block by link.

Atkeson, An & Hollerbach (1986) / Khalil & Gautier (Khalil 2010, §5, the "model linear in the
parameters"): the spatial force a rigid body needs, f = I a + v x* I v (Featherstone eq. 5.9), is
linear in its ten inertial parameters, f = A(v, a) pi_link, with A a 6x10 matrix of the body's velocity
and acceleration. Joint k (an ancestor of the body, or its own joint) transmits S_k^T X^T f, so link l's
column block in the row of joint k is S_k^T (X_{k..l})^T A(v_l, a_l): one backward sweep of a 6x10
matrix per link from its body to the root. For a moving base the sweep continues into the base,
whose wrench rows come first. No finite differences, no per-parameter RNE calls.

Parameter order (``parameter_names``): per link, in ``model.link_names`` order,
[m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (kg, kg m, kg m^2; inertia about the link-frame origin,
link-frame axes, the link frame of the model file), then per joint in ``model.joint_names`` order
[Ia, Fv, Fs] (rotor inertia kg m^2, viscous N m s/rad, Coulomb N m; kg, N s/m, N for prismatic joints).
A link folded into a body (fixed joint) is mapped through its frame's pose in that body.
"""
import numpy as np

from ..dynamics.floating.base_body import base_rotation, to_motion
from ..dynamics.calls import FLAGS, arr, check, close, joint_arrays, prepare, vector
from ..dynamics.floating.api import IDENTITY, require_floating
from ..model.layout import REVOLUTE
from ..dynamics.primitives import (FRICTION, add_cross_motion_S, body, entry, inline, joint_xform, sgn, split,
                                   x_motion, xT_force)
from ..model.errors import InputError

MOVING = 4  # flag: prescribed base motion, base wrench rows first
NPL, NPJ = 10, 3  # parameters per link, per joint


@inline
def link_columns(v, a, U):
    """U[c] = the spatial force [n; f] that unit parameter c of a body needs at velocity v and
    acceleration a (Featherstone order, body coordinates), for the ten parameters in the order above:
    f = m a_c + wd x h + w x (w x h), n = I_o wd + w x (I_o w) + h x a_c, a_c = a_lin + w x v_lin."""
    w0, w1, w2 = v[0], v[1], v[2]
    d0, d1, d2 = a[0], a[1], a[2]
    c0 = a[3] + w1 * v[5] - w2 * v[4]
    c1 = a[4] + w2 * v[3] - w0 * v[5]
    c2 = a[5] + w0 * v[4] - w1 * v[3]
    ww = w0 * w0 + w1 * w1 + w2 * w2
    for c in range(10):
        for j in range(6):
            U[c, j] = 0.0
    U[0, 3], U[0, 4], U[0, 5] = c0, c1, c2                      # m
    U[1, 1], U[1, 2] = -c2, c1                                  # h = e_x: n = e_x x a_c
    U[1, 3], U[1, 4], U[1, 5] = w0 * w0 - ww, d2 + w1 * w0, -d1 + w2 * w0
    U[2, 0], U[2, 2] = c2, -c0                                  # h = e_y
    U[2, 3], U[2, 4], U[2, 5] = -d2 + w0 * w1, w1 * w1 - ww, d0 + w2 * w1
    U[3, 0], U[3, 1] = -c1, c0                                  # h = e_z
    U[3, 3], U[3, 4], U[3, 5] = d1 + w0 * w2, -d0 + w1 * w2, w2 * w2 - ww
    # inertia columns Ixx, Ixy, Iyy, Ixz, Iyz, Izz: n = L(wd) + w x L(w), L(w) = d(I_o w)/d(I_..)
    for c in range(6):
        if c == 0:
            s0, s1, s2, u0, u1, u2 = w0, 0.0, 0.0, d0, 0.0, 0.0
        elif c == 1:
            s0, s1, s2, u0, u1, u2 = w1, w0, 0.0, d1, d0, 0.0
        elif c == 2:
            s0, s1, s2, u0, u1, u2 = 0.0, w1, 0.0, 0.0, d1, 0.0
        elif c == 3:
            s0, s1, s2, u0, u1, u2 = w2, 0.0, w0, d2, 0.0, d0
        elif c == 4:
            s0, s1, s2, u0, u1, u2 = 0.0, w2, w1, 0.0, d2, d1
        else:
            s0, s1, s2, u0, u1, u2 = 0.0, 0.0, w2, 0.0, 0.0, d2
        U[4 + c, 0] = u0 + w1 * s2 - w2 * s1
        U[4 + c, 1] = u1 + w2 * s0 - w0 * s2
        U[4 + c, 2] = u2 + w0 * s1 - w1 * s0


@inline
def xT_couple_inplace(X, f):
    """f = X^T f for a pure couple f = [n; 0] (the inertia columns): X^T [n; 0] = [E^T n; 0]."""
    n0 = X[0] * f[0] + X[3] * f[1] + X[6] * f[2]
    n1 = X[1] * f[0] + X[4] * f[1] + X[7] * f[2]
    n2 = X[2] * f[0] + X[5] * f[1] + X[8] * f[2]
    f[0], f[1], f[2] = n0, n1, n2


@inline
def xT_columns(X, U):
    """U[c] = X^T U[c] for the ten columns; the six inertia columns are couples and stay couples."""
    for c in range(4):
        u = U[c]
        u[0], u[1], u[2], u[3], u[4], u[5] = xT_force(X, u[0], u[1], u[2], u[3], u[4], u[5])
    for c in range(4, 10):
        xT_couple_inplace(X, U[c])


@entry
def regressor_many(K, LK, q, qd, qdd, twist, accel, quat, flags, Y):
    """Y (N rows, p) for stacked samples; LK (nl, 14) per link: body (-1 = base), identity flag, the
    body-to-link transform [E (9), r (3)]. With the MOVING flag, twist/accel (N, 6), quat (N, 4).
    Returns a status (0 = ok; quaternion problems only, the rest is checked before the call)."""
    tree, dyn, _, _ = split(K)
    nb, nl, n = tree.shape[0], LK.shape[0], q.shape[1]
    moving = (flags & MOVING) != 0
    r0 = 6 if moving else 0
    rows = r0 + n
    X = np.empty((nb, 12))
    V = np.empty((nb + 1, 6))
    A = np.empty((nb + 1, 6))
    U = np.empty((10, 6))
    vl, al, R, g = np.empty(6), np.empty(6), np.empty(9), np.empty(3)
    for s in range(q.shape[0]):
        Ys = Y[s * rows:(s + 1) * rows]
        Ys[:, :] = 0.0
        if moving:  # the base's own motion, gravity as the fictitious acceleration -a_g (Featherstone §5.3)
            st = base_rotation(quat[s], R)
            if st:
                return st
            gw = dyn[nb + 1]
            for j in range(3):
                g[j] = R[j] * gw[0] + R[3 + j] * gw[1] + R[6 + j] * gw[2]
            to_motion(twist[s], V[nb])
            to_motion(accel[s], A[nb])
        else:
            for j in range(6):
                V[nb, j] = 0.0
                A[nb, j] = 0.0
            for j in range(3):
                g[j] = dyn[nb + 1, j]
        for j in range(3):
            A[nb, 3 + j] -= g[j]
        for i in range(nb):  # forward pass: Featherstone Table 5.1 lines 3-7
            p, jtype, k = body(tree, i)
            pp = p if p >= 0 else nb
            joint_xform(tree[i], jtype, q[s, k], X[i])
            x_motion(X[i], V[pp], V[i])
            x_motion(X[i], A[pp], A[i])
            sj = 2 if jtype == REVOLUTE else 5
            V[i, sj] += qd[s, k]
            A[i, sj] += qdd[s, k]
            add_cross_motion_S(V[i], jtype, qd[s, k], A[i])
        for li in range(nl):  # backward sweep of each link's 6x10 block
            b = int(LK[li, 0])
            if b < 0 and not moving:
                continue  # the fixed base carries no joint torque
            bb = b if b >= 0 else nb
            XL = LK[li, 2:14]
            identity = LK[li, 1] != 0.0
            if identity:
                link_columns(V[bb], A[bb], U)
            else:
                x_motion(XL, V[bb], vl)
                x_motion(XL, A[bb], al)
                link_columns(vl, al, U)
                xT_columns(XL, U)   # link frame -> body frame
            col = NPL * li
            i = b
            while i >= 0:
                p, jtype, k = body(tree, i)
                sj = 2 if jtype == REVOLUTE else 5
                for c in range(10):
                    Ys[r0 + k, col + c] = U[c, sj]   # tau_k = S_k^T f
                if p < 0 and not moving:
                    break
                xT_columns(X[i], U)
                i = p
            if moving:
                for c in range(10):  # base wrench [f; n]
                    for j in range(3):
                        Ys[j, col + c] = U[c, 3 + j]
                        Ys[3 + j, col + c] = U[c, j]
        base = NPL * nl
        for i in range(nb):  # Khalil eq. 31: Ia qdd + Fv qd + Fs sign(qd)
            k = int(tree[i, 17])
            Ys[r0 + k, base + NPJ * k] = qdd[s, k]
            if flags & FRICTION:
                Ys[r0 + k, base + NPJ * k + 1] = qd[s, k]
                Ys[r0 + k, base + NPJ * k + 2] = sgn(qd[s, k])
    return 0


_f1, _f2 = arr(1), arr(2)
close(regressor_many)
_SIG = (arr(2), _f2, _f2, _f2, _f2, _f2, _f2, _f2, FLAGS, _f2)


def link_table(model):
    """(nl, 14) per link in ``link_names`` order: body, identity flag, body-to-link X = [E, r]."""
    cached = getattr(model, "_regressor_links", None)
    if cached is not None:
        return cached
    LK = np.zeros((len(model.link_names), 14))
    for li, name in enumerate(model.link_names):
        b, T = model.link_frames[name]
        LK[li, 0] = b
        LK[li, 1] = float(np.allclose(T, np.eye(4), rtol=0.0, atol=0.0))
        LK[li, 2:11] = T[:3, :3].T.ravel()
        LK[li, 11:14] = T[:3, 3]
    model._regressor_links = LK
    return LK


def num_parameters(model):
    return NPL * len(model.link_names) + NPJ * model.n


def regressor(model, q, qd, qdd, friction=True, base_twist=None, base_accel=None, base_orientation=None):
    """The regressor Y with tau = Y pi (see the module docstring for pi; ``parameter_vector(model)``).

    q, qd, qdd (rad, rad/s, rad/s^2; m for prismatic joints), single (n,) or stacked (N, n). Returns
    (n, p) for one sample, (N n, p) stacked (sample s in rows s n .. s n + n - 1, joint order).
    With ``friction=False`` the Fv and Fs columns are zero (rotor inertia stays), like
    ``inverse_dynamics(..., friction=False)``. With ``base_twist`` and ``base_accel`` (floating-base models;
    conventions of ``moving_base_inverse_dynamics``), each sample has 6 + n rows: the base wrench [f; n]
    first, then the joint torques, and Y pi equals ``moving_base_inverse_dynamics``. Without them the
    base is fixed (identity pose), and the base link's columns are zero.
    """
    moving = base_twist is not None or base_accel is not None or base_orientation is not None
    arrays, N = joint_arrays(model, q=q, qd=qd, qdd=qdd)
    for name, a in zip(("q", "qd", "qdd"), arrays):
        bad = ~np.isfinite(a)
        if bad.any():
            k = int(np.argwhere(bad)[0][-1])
            raise InputError(f"'{name}' of joint '{model.joint_names[k]}' is not finite (NaN or inf)")
    single = N is None
    if single:
        arrays, N = [a[None] for a in arrays], 1
    if moving:
        require_floating(model, "regressor")
        if base_twist is None or base_accel is None:
            raise InputError("regressor(): a moving base needs both 'base_twist' and 'base_accel'")
        base = []
        for name, x, size in (("base_twist", base_twist, 6), ("base_accel", base_accel, 6),
                              ("base_orientation", IDENTITY if base_orientation is None else base_orientation, 4)):
            a = vector(name, x, size)
            if a.ndim == 2 and a.shape[0] != N:
                if not single:
                    raise InputError(f"'{name}' stacks {a.shape[0]} samples, the joint inputs {N}")
                arrays, N, single = [np.repeat(b, a.shape[0], axis=0) for b in arrays], a.shape[0], False
            if name == "base_orientation" and not np.all(np.abs(np.linalg.norm(a, axis=-1) - 1.0) <= 1e-6):
                raise InputError("'base_orientation' must be a unit quaternion (x, y, z, w) within 1e-06")
            base.append(a)
        base = [np.array(np.broadcast_to(a, (N, a.shape[-1])), order="C") for a in base]
    else:
        base = [np.empty((0, 6)), np.empty((0, 6)), np.empty((0, 4))]
    rows = model.n + (6 if moving else 0)
    Y = np.empty((N * rows, num_parameters(model)))
    prepare(regressor_many, [_SIG])
    flags = (FRICTION if friction else 0) | (MOVING if moving else 0)
    st = regressor_many(model._K, link_table(model), *arrays, *base, flags, Y)
    if st:
        check(model, st, None, {9: "base_orientation"})
    return Y
