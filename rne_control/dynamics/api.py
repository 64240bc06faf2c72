"""The fixed-base dynamics functions. Joint-space arrays are in ``model.joint_names`` order, SI units.

Each function takes single samples of shape (n,) or stacked samples of shape (N, n) (inputs that are
not stacked are broadcast), and returns (n,) / (N, n), or (n, n) / (N, n, n) for the mass matrix. On a
floating-base model these functions hold the base fixed at the identity pose.

The ``try`` in each function is the fast path (see calls.py); its ``except TypeError`` falls back to the
checked path, which stacks single samples as N = 1 and calls the many-sample kernel.
"""
import numpy as np

from . import aba, crba, gravity as grav, rnea
from .calls import FLAGS, MODEL, arr, check, close, external_forces, joint_arrays, model_array, prepare
from .spatial import CORIOLIS_ONLY, FRICTION

_f1, _f2, _f3 = arr(1), arr(2), arr(3)
# bound once: the fast paths below read them without module attribute lookups
_empty = np.empty
_rnea_one, _gravity_one, _crba_one, _aba_one = rnea.rnea_one, grav.gravity_one, crba.crba_one, aba.aba_one

KERNELS = {  # name -> (one-sample kernel, its signature, many-sample kernel, its signature)
    "rnea": (rnea.rnea_one, (*MODEL, _f1, _f1, _f1, FLAGS, _f1),
             rnea.rnea_many, (*MODEL, _f2, _f2, _f2, _f3, FLAGS, _f2)),
    "gravity": (grav.gravity_one, (*MODEL, _f1, _f1), grav.gravity_many, (*MODEL, _f2, _f2)),
    "crba": (crba.crba_one, (*MODEL, _f1, _f2), crba.crba_many, (*MODEL, _f2, _f3)),
    "aba": (aba.aba_one, (*MODEL, _f1, _f1, _f1, FLAGS, _f1),
            aba.aba_many, (*MODEL, _f2, _f2, _f2, _f3, FLAGS, _f2)),
}
for _one, _, _many, _ in KERNELS.values():
    close(_one)
    close(_many)


def checked_call(model, name, inputs, K=None, f_ext=None, flags=None, out_shape=None):
    """Slow path: compile if needed, validate and stack the inputs, call the many-sample kernel."""
    one, one_sig, many, many_sig = KERNELS[name]
    prepare(one, [one_sig])
    prepare(many, [many_sig])
    arrays, N = joint_arrays(model, **inputs)
    single = N is None
    if single:
        arrays, N = [a[None] for a in arrays], 1
    extra = () if f_ext is None else (external_forces(model, f_ext, N)[0],)
    extra += () if flags is None else (flags,)
    out = np.empty((N, *(out_shape or (model.n,))))
    st, s = many(model._K if K is None else K, *arrays, *extra, out)
    check(model, st, None if single else s)
    return out[0] if single else out


def _into(out, res):
    if out is not None and np.shape(out) == res.shape:
        out[...] = res
        return out
    return res


def inverse_dynamics(model, q, qd, qdd, f_ext=None, gravity=None, friction=True, out=None):
    """Joint torques/forces tau (N m, N) that produce qdd (rad/s^2, m/s^2) at (q, qd), by the RNE.

    Includes rotor inertia Ia qdd and, with ``friction=True``, Fs sign(qd) + Fv qd. ``f_ext`` maps link
    names to wrenches [fx, fy, fz, tx, ty, tz] acting *on* the link (N, N m), in the link frame about its
    origin; stacked wrenches have shape (N, 6). ``gravity`` (m/s^2, base frame) overrides the model's.
    ``out``: optional preallocated float64 array of shape (n,) written in place.
    """
    if f_ext is None and gravity is None:
        try:
            res = _empty(model.n) if out is None else out
            st = _rnea_one(model._K, q, qd, qdd, FRICTION if friction else 0, res)
        except TypeError:
            pass
        else:
            if st:
                check(model, st)
            return res
    return _into(out, checked_call(model, "rnea", dict(q=q, qd=qd, qdd=qdd), model_array(model, gravity),
                                   f_ext or {}, FRICTION if friction else 0))


def gravity_torques(model, q, gravity=None, out=None):
    """Gravity torques g(q) (N m, N): what holds the robot still against ``gravity`` (m/s^2, base frame)."""
    if gravity is None:
        try:
            res = _empty(model.n) if out is None else out
            st = _gravity_one(model._K, q, res)
        except TypeError:
            pass
        else:
            if st:
                check(model, st)
            return res
    return _into(out, checked_call(model, "gravity", dict(q=q), model_array(model, gravity)))


def coriolis_torques(model, q, qd, out=None):
    """Coriolis and centrifugal torques C(q, qd) qd (N m, N): no gravity, acceleration, friction or rotor terms."""
    try:
        res = _empty(model.n) if out is None else out
        st = _rnea_one(model._K, q, qd, q, CORIOLIS_ONLY, res)  # qdd unused
    except TypeError:
        pass
    else:
        if st:
            check(model, st)
        return res
    (qa, qda), _ = joint_arrays(model, q=q, qd=qd)
    return _into(out, checked_call(model, "rnea", dict(q=qa, qd=qda, qdd=qa), None, {}, CORIOLIS_ONLY))


def mass_matrix(model, q):
    """Joint-space inertia matrix H(q) (kg m^2, kg), symmetric positive definite, rotor inertia on the diagonal."""
    try:
        H = _empty((model.n, model.n))
        st = _crba_one(model._K, q, H)
    except TypeError:
        pass
    else:
        if st:
            check(model, st)
        return H
    return checked_call(model, "crba", dict(q=q), out_shape=(model.n, model.n))


def forward_dynamics(model, q, qd, tau, f_ext=None, friction=True, gravity=None):
    """Joint accelerations qdd (rad/s^2, m/s^2) under torques tau (N m, N) at (q, qd), by the articulated-body
    algorithm. Rotor inertia included; friction subtracted from tau when ``friction=True``; ``f_ext`` as in
    :func:`inverse_dynamics`. Raises SingularMassMatrixError (an InputError) if the mass matrix is singular.
    """
    if f_ext is None and gravity is None:
        try:
            res = _empty(model.n)
            st = _aba_one(model._K, q, qd, tau, FRICTION if friction else 0, res)
        except TypeError:
            pass
        else:
            if st:
                check(model, st)
            return res
    return checked_call(model, "aba", dict(q=q, qd=qd, tau=tau), model_array(model, gravity), f_ext or {},
                        FRICTION if friction else 0)
