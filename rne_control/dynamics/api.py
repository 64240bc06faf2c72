"""The fixed-base dynamics functions. Joint-space arrays are in ``model.joint_names`` order, SI units.

Each function takes single samples of shape (n,) or stacked samples of shape (N, n) (inputs that are
not stacked are broadcast), and returns (n,) / (N, n), or (n, n) / (N, n, n) for the mass matrix. On a
floating-base model these functions hold the base fixed at the identity pose.

The first ``try`` in each function is the fast path (see calls.py); its ``except TypeError`` falls back
to the checked, stacking path.
"""
import numba as nb
import numpy as np

from . import aba, crba, gravity as grav, rnea
from .calls import GRAVITY_TYPES, MODEL_ARGS, NO_FEXT, arr, check, close, external_forces, gravity_arg, joint_arrays, prepare

_f1, _f2, _f3, _B = arr(1), arr(2), arr(3), nb.boolean


def _sigs(one_args, many_args, with_gravity=True):
    gs = GRAVITY_TYPES if with_gravity else [()]
    wrap = (lambda g: (g,)) if with_gravity else (lambda g: ())
    return ([(*MODEL_ARGS, *wrap(g), *one_args) for g in gs], [(*MODEL_ARGS, *wrap(g), *many_args) for g in gs])


KERNELS = {  # kernel pair -> signatures
    "rnea": (rnea.rnea_one, rnea.rnea_many, _sigs((_f1, _f1, _f1, _f2, _B, _f1), (_f2, _f2, _f2, _f3, _B, _f2))),
    "gravity": (grav.gravity_one, grav.gravity_many, _sigs((_f1, _f1), (_f2, _f2))),
    "crba": (crba.crba_one, crba.crba_many, _sigs((_f1, _f2), (_f2, _f3), with_gravity=False)),
    "aba": (aba.aba_one, aba.aba_many, _sigs((_f1, _f1, _f1, _f2, _B, _f1), (_f2, _f2, _f2, _f3, _B, _f2))),
}
for _one, _many, _ in KERNELS.values():
    close(_one)
    close(_many)


def _checked(model, kernel, inputs, a_g=None, f_ext=None, flags=(), out_shape=None):
    """Slow path: compile if needed, validate and stack the inputs, call the one- or many-sample kernel."""
    one, many, sigs = KERNELS[kernel]
    prepare(one, sigs[0])
    prepare(many, sigs[1])
    arrays, N = joint_arrays(model, **inputs)
    head = (model.topo, model.kin, model.inertia) + (() if a_g is None else (a_g,))
    fe = () if f_ext is None else (external_forces(model, f_ext, N)[0],)
    out_shape = out_shape or (model.n,)
    if N is None:
        out = np.empty(out_shape)
        check(model, one(*head, *arrays, *fe, *flags, out))
    else:
        out = np.empty((N, *out_shape))
        st, s = many(*head, *arrays, *fe, *flags, out)
        check(model, st, s)
    return out


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
    if f_ext is None:
        try:
            res = np.empty(model.n) if out is None else out
            st = rnea.rnea_one(model.topo, model.kin, model._inertia, model.gravity if gravity is None else gravity,
                               q, qd, qdd, NO_FEXT, friction, res)
        except TypeError:
            pass
        else:
            check(model, st)
            return res
    return _into(out, _checked(model, "rnea", dict(q=q, qd=qd, qdd=qdd), gravity_arg(model, gravity), f_ext or {},
                               (bool(friction),)))


def gravity_torques(model, q, gravity=None, out=None):
    """Gravity torques g(q) (N m, N): what holds the robot still against ``gravity`` (m/s^2, base frame)."""
    try:
        res = np.empty(model.n) if out is None else out
        st = grav.gravity_one(model.topo, model.kin, model._inertia, model.gravity if gravity is None else gravity,
                              q, res)
    except TypeError:
        pass
    else:
        check(model, st)
        return res
    return _into(out, _checked(model, "gravity", dict(q=q), gravity_arg(model, gravity)))


_ZERO3 = np.zeros(3)
_ZERO3.flags.writeable = False
_ZEROS = {}


def _zeros(n):
    z = _ZEROS.get(n)
    if z is None:
        z = _ZEROS[n] = np.zeros(n)
    return z


def coriolis_torques(model, q, qd, out=None):
    """Coriolis and centrifugal torques C(q, qd) qd (N m, N): no gravity, acceleration, friction or rotor terms."""
    try:
        res = np.empty(model.n) if out is None else out
        st = rnea.rnea_one(model.topo, model.kin, model._inertia, _ZERO3, q, qd, _zeros(model.n), NO_FEXT, False, res)
    except TypeError:
        pass
    else:
        check(model, st)
        return res
    (qa, qda), N = joint_arrays(model, q=q, qd=qd)
    return _into(out, _checked(model, "rnea", dict(q=qa, qd=qda, qdd=np.zeros_like(qa)), np.zeros(3), {}, (False,)))


def mass_matrix(model, q):
    """Joint-space inertia matrix H(q) (kg m^2, kg), symmetric positive definite, rotor inertia on the diagonal."""
    try:
        H = np.empty((model.n, model.n))
        st = crba.crba_one(model.topo, model.kin, model._inertia, q, H)
    except TypeError:
        pass
    else:
        check(model, st)
        return H
    return _checked(model, "crba", dict(q=q), out_shape=(model.n, model.n))


def forward_dynamics(model, q, qd, tau, f_ext=None, friction=True, gravity=None):
    """Joint accelerations qdd (rad/s^2, m/s^2) under torques tau (N m, N) at (q, qd), by the articulated-body
    algorithm. Rotor inertia included; friction subtracted from tau when ``friction=True``; ``f_ext`` as in
    :func:`inverse_dynamics`. Raises SingularMassMatrixError (an InputError) if the mass matrix is singular.
    """
    if f_ext is None:
        try:
            res = np.empty(model.n)
            st = aba.aba_one(model.topo, model.kin, model._inertia, model.gravity if gravity is None else gravity,
                             q, qd, tau, NO_FEXT, friction, res)
        except TypeError:
            pass
        else:
            check(model, st)
            return res
    return _checked(model, "aba", dict(q=q, qd=qd, tau=tau), gravity_arg(model, gravity), f_ext or {},
                    (bool(friction),))
