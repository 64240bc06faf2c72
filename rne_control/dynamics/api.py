"""The fixed-base dynamics functions. Joint-space arrays are in ``model.joint_names`` order, SI units.

Each function takes single samples of shape (n,) or stacked samples of shape (N, n) (inputs that are
not stacked are broadcast), and returns (n,) / (N, n), or (n, n) / (N, n, n) for the mass matrix. On a
floating-base model these functions hold the base fixed at the identity pose.

The first lines of each function are the fast path, the direct call of the one-sample kernel (see
direct.py); a status of NOT_DIRECT (an argument not a plain float64 vector, or the kernel not compiled
yet) falls through to the checked path, which compiles the kernels if needed, converts and validates the
inputs, stacks single samples as N = 1 and calls the many-sample kernel.
"""
import numpy as np

from . import aba, crba, gravity as grav, momentum_coriolis as mc, rnea
from .calls import FLAGS, MODEL, arr, check, close, external_forces, into as _into, joint_arrays, model_array, prepare
from .direct import DIRECT, NOT_DIRECT, entry_point, not_compiled
from .primitives import CORIOLIS_ONLY, FRICTION
from ..model.errors import InputError

_f1, _f2, _f3 = arr(1), arr(2), arr(3)
# bound once: the fast paths below read them without module attribute lookups
_empty, _id, _ndarray = np.empty, id, np.ndarray
# the direct entry points, as module globals; checked_call puts the compiled ones in place
_rnea_one = _gravity_one = _crba_one = _aba_one = _momentum_coriolis_one = not_compiled

KERNELS = {  # name -> (one-sample kernel, its signature, many-sample kernel, its signature)
    "rnea": (rnea.rnea_one, DIRECT, rnea.rnea_many, (*MODEL, _f2, _f2, _f2, _f3, FLAGS, _f2)),
    "gravity": (grav.gravity_one, DIRECT, grav.gravity_many, (*MODEL, _f2, _f2)),
    "crba": (crba.crba_one, DIRECT, crba.crba_many, (*MODEL, _f2, _f3)),
    "aba": (aba.aba_one, DIRECT, aba.aba_many, (*MODEL, _f2, _f2, _f2, _f3, FLAGS, _f2)),
    "momentum_coriolis": (mc.momentum_coriolis_one, DIRECT, mc.momentum_coriolis_many, (*MODEL, _f2, _f2, _f3)),
}
for _one, _, _many, _ in KERNELS.values():
    close(_one)
    close(_many)


def checked_call(model, name, inputs, K=None, f_ext=None, flags=None, out_shape=None):
    """Slow path: compile if needed and validate the inputs; a single sample without external forces goes to
    the one-sample kernel (converted to its canonical types), stacked samples to the many-sample kernel,
    which is compiled only then (a node never stacks: it does not pay for compiling it)."""
    one, one_sig, many, many_sig = KERNELS[name]
    if globals()[f"_{name}_one"] is not_compiled:
        prepare(one, [one_sig])
        globals()[f"_{name}_one"] = entry_point(one)
    arrays, N = joint_arrays(model, **inputs)
    K = model._K if K is None else K
    shape = out_shape or (model.n,)
    if N is None and not f_ext:
        out = np.empty(shape)
        args = (np.ndarray, K, *arrays, out)
        st = globals()[f"_{name}_one"](id(args), flags or 0)
        if st != NOT_DIRECT:
            check(model, st)
            return out
    prepare(many, [many_sig])
    single = N is None
    if single:
        arrays, N = [a[None] for a in arrays], 1
    extra = () if f_ext is None else (external_forces(model, f_ext, N)[0],)
    extra += () if flags is None else (flags,)
    out = np.empty((N, *shape))
    st, s = many(K, *arrays, *extra, out)
    check(model, st, None if single else s)
    return out[0] if single else out


def inverse_dynamics(model, q, qd, qdd, f_ext=None, gravity=None, friction=True, out=None):
    """Joint torques/forces tau (N m, N) that produce qdd (rad/s^2, m/s^2) at (q, qd), by the RNE.

    Includes rotor inertia Ia qdd and, with ``friction=True``, Fs sign(qd) + Fv qd. ``f_ext`` maps link
    names to wrenches [fx, fy, fz, tx, ty, tz] acting *on* the link (N, N m), in the link frame about its
    origin; stacked wrenches have shape (N, 6). ``gravity`` (m/s^2, base frame) overrides the model's.
    ``out``: optional preallocated float64 array of shape (n,) written in place.
    """
    if f_ext is None and gravity is None:
        res = _empty(model.n) if out is None else out
        args = (_ndarray, model._K, q, qd, qdd, res)
        st = _rnea_one(_id(args), FRICTION if friction else 0)
        if st == 0:
            return res
        if st > 0:
            check(model, st)
    return _into(out, checked_call(model, "rnea", dict(q=q, qd=qd, qdd=qdd), model_array(model, gravity),
                                   f_ext or {}, FRICTION if friction else 0))


def gravity_torques(model, q, gravity=None, out=None):
    """Gravity torques g(q) (N m, N): what holds the robot still against ``gravity`` (m/s^2, base frame)."""
    if gravity is None:
        res = _empty(model.n) if out is None else out
        args = (_ndarray, model._K, q, res)
        st = _gravity_one(_id(args), 0)
        if st == 0:
            return res
        if st > 0:
            check(model, st)
    return _into(out, checked_call(model, "gravity", dict(q=q), model_array(model, gravity)))


def coriolis_torques(model, q, qd, out=None):
    """Coriolis and centrifugal torques C(q, qd) qd (N m, N): no gravity, acceleration, friction or rotor terms."""
    res = _empty(model.n) if out is None else out
    args = (_ndarray, model._K, q, qd, q, res)  # qdd unused
    st = _rnea_one(_id(args), CORIOLIS_ONLY)
    if st == 0:
        return res
    if st > 0:
        check(model, st)
    (qa, qda), _ = joint_arrays(model, q=q, qd=qd)
    return _into(out, checked_call(model, "rnea", dict(q=qa, qd=qda, qdd=qa), None, {}, CORIOLIS_ONLY))


def mass_matrix(model, q):
    """Joint-space inertia matrix H(q) (kg m^2, kg), symmetric positive definite, rotor inertia on the diagonal."""
    H = _empty(model._mass_shape)
    args = (_ndarray, model._K, q, H)
    st = _crba_one(_id(args), 0)
    if st == 0:
        return H
    if st > 0:
        check(model, st)
    return checked_call(model, "crba", dict(q=q), out_shape=(model.n, model.n))


def forward_dynamics(model, q, qd, tau, f_ext=None, friction=True, gravity=None):
    """Joint accelerations qdd (rad/s^2, m/s^2) under torques tau (N m, N) at (q, qd), by the articulated-body
    algorithm. Rotor inertia included; friction subtracted from tau when ``friction=True``; ``f_ext`` as in
    :func:`inverse_dynamics`. Raises SingularMassMatrixError (an InputError) if the mass matrix is singular.
    """
    if f_ext is None and gravity is None:
        res = _empty(model.n)
        args = (_ndarray, model._K, q, qd, tau, res)
        st = _aba_one(_id(args), FRICTION if friction else 0)
        if st == 0:
            return res
        if st > 0:
            check(model, st)
    return checked_call(model, "aba", dict(q=q, qd=qd, tau=tau), model_array(model, gravity), f_ext or {},
                        FRICTION if friction else 0)


def not_a_tree(model):
    """The InputError for a model without a kinematic tree (a parallel platform) given to a tree function."""
    return InputError(f"model '{getattr(model, 'name', model)}' ({type(model).__name__}) has no kinematic tree: "
                      "use the parallel_* and platform_* functions")


def momentum_and_coriolis_transpose(model, q, qd):
    """(p, C^T qd) from one pass of the momentum_coriolis kernel: :func:`generalized_momentum` and
    :func:`coriolis_transpose_torques` together, for a caller that needs both (the momentum observer)."""
    out = _momentum_coriolis(model, q, qd, slice(None))
    return out[..., 0, :], out[..., 1, :]


def _momentum_coriolis(model, q, qd, row):
    """Row 0 (p = M qd), row 1 (C^T qd) or both (``slice(None)``) of the momentum_coriolis kernel's output."""
    try:
        res = _empty((2, model.n))
        args = (_ndarray, model._K, q, qd, res)
    except AttributeError:
        raise not_a_tree(model) from None
    st = _momentum_coriolis_one(_id(args), 0)
    if st == 0:
        return res[row]
    if st > 0:
        check(model, st)
    out = checked_call(model, "momentum_coriolis", dict(q=q, qd=qd), out_shape=(2, model.n))
    return out[..., row, :]


def generalized_momentum(model, q, qd):
    """Generalized momentum p = M(q) qd (kg m^2/s for revolute joints, kg m/s for prismatic ones), rotor
    inertia included (Ia_k qd_k added to joint k), in one O(n) pass (momentum_coriolis.py):

        p_i = S_i^T h_i + Ia_i qd_i,   h_i = I_i v_i + sum over children c of X_up,c^T h_c

    h_i is the spatial momentum [angular; linear] of the subtree at body i, in body i's coordinates.
    """
    return _momentum_coriolis(model, q, qd, 0)


def coriolis_transpose_torques(model, q, qd):
    """C(q, qd)^T qd (N m, N): the derivative dT/dq of the kinetic energy T = 1/2 qd^T M(q) qd at fixed qd,
    equal to Mdot qd - C qd for every C with Mdot = C + C^T (Pinocchio's Christoffel C among them). One O(n)
    pass after the RNE's velocity pass (momentum_coriolis.py), no gravity, friction or rotor inertia (Ia is
    constant):

        (C^T qd)_i = -S_i^T (v_i x* h_i),   h_i = I_i v_i + sum over children c of X_up,c^T h_c

    with v_i the spatial velocity of body i and h_i its subtree's spatial momentum, in body i's coordinates.
    """
    return _momentum_coriolis(model, q, qd, 1)
