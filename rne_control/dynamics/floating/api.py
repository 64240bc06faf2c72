"""The floating-base dynamics functions: moving base, free-floating base, momentum, forward dynamics.

Conventions (all base vectors in the base frame, at the base-frame origin; [linear; angular] order):

- ``base_orientation``: unit quaternion (x, y, z, w), the rotation from the base frame to the world
  frame (norm within 1e-6 of 1; it is normalised). It only enters through gravity: ``model.gravity``
  is in the world frame.
- ``base_twist`` [v; w]: velocity of the base-frame origin and angular velocity.
- ``base_accel``: the time derivative of that twist (Pinocchio's free-flyer convention); the
  classical acceleration of the base origin is vdot + w x v.
- ``base_wrench`` [f; n]: the external wrench on the base body, gravity included: what must act on
  the base for the given motion (moving base), or what acts on it (forward dynamics).
- ``momentum`` [p; k]: the centroidal momentum, linear and angular about the system COM, world axes.

Joint-space arrays are in ``model.joint_names`` order. Each function takes single samples, or stacked
ones ((N, n), (N, 6), (N, 4)) with the unstacked inputs broadcast, like the fixed-base functions. Each
starts with the fast path, its one-sample kernel called through the dispatcher (calls.fast_path); any
other status than 0 takes the checked path, which validates the inputs (the quaternion's norm first) and
names what is wrong.
"""
import numpy as np

from ...model.errors import InputError
from . import floating_aba as fa, free_floating as ff, momentum as mo, moving_base as mb
from .base_body import F_BASE2, F_QUAT, F_TWIST, QUAT_TOL
from ..calls import (FIELDS, FLAGS, MODEL, SingularMassMatrixError, arr, check, close, fast_path, joint_arrays, prepare,
                     vector)
from ..primitives import FRICTION, SINGULAR

_f1, _f2 = arr(1), arr(2)
# The default orientation: a plain float64 array, the kernels' canonical type (a tuple would take the
# checked path on every call). The kernels never write it.
IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])
_ZERO6 = np.zeros(6)

KERNELS = {  # name -> (one-sample kernel, its signature, many-sample kernel, its signature)
    "moving_base": (mb.moving_base_one, (*MODEL, *(_f1,) * 6, FLAGS, _f1, _f1),
                    mb.moving_base_many, (*MODEL, *(_f2,) * 6, FLAGS, _f2, _f2)),
    "free_floating": (ff.free_floating_one, (*MODEL, *(_f1,) * 5, FLAGS, _f1, _f1),
                      ff.free_floating_many, (*MODEL, *(_f2,) * 5, FLAGS, _f2, _f2)),
    "momentum": (mo.momentum_one, (*MODEL, *(_f1,) * 5), mo.momentum_many, (*MODEL, *(_f2,) * 5)),
    "floating_aba": (fa.floating_aba_one, (*MODEL, *(_f1,) * 6, FLAGS, _f1, _f1),
                     fa.floating_aba_many, (*MODEL, *(_f2,) * 6, FLAGS, _f2, _f2)),
}
for _one, _, _many, _ in KERNELS.values():
    close(_one)
    close(_many)


def require_floating(model, fname):
    if not getattr(model, "floating_base", False):
        raise InputError(f"{fname}() needs a floating-base model; '{model.name}' has a fixed base (load it with "
                         f"load_urdf(..., floating_base=True) or 'base: floating' in the YAML file)")


def _check(model, st, sample, field8):
    code = int(st) // 100000
    if code // 10 == SINGULAR and code % 10 == F_TWIST:
        at = "" if sample is None else f" (sample {sample})"
        raise SingularMassMatrixError(f"the composite inertia of model '{model.name}' about its base is singular "
                                      f"(no mass, or a degenerate rotational inertia){at}")
    check(model, st, sample, {**FIELDS, F_TWIST: "base_twist", F_BASE2: field8, F_QUAT: "base_orientation"})


def checked_call(model, fname, name, joint, base, field8, flags=None):
    """Slow path: compile if needed, validate and stack the inputs, call the many-sample kernel.

    ``joint``: {name: joint-space input}; ``base``: [(name, input, size)] in kernel order after the joint
    arrays. Returns the kernel's two outputs: (n,) or (N, n), and (6,) or (N, 6)."""
    require_floating(model, fname)
    one, one_sig, many, many_sig = KERNELS[name]
    prepare(one, [one_sig])
    arrays, N = joint_arrays(model, **joint)
    vecs = []
    for bname, x, size in base:
        a = vector(bname, x, size)
        if a.ndim == 2:
            if N is not None and a.shape[0] != N:
                raise InputError(f"'{bname}' stacks {a.shape[0]} samples, others {N}")
            N = a.shape[0]
        if bname == "base_orientation":
            norm = np.linalg.norm(a, axis=-1)
            if not np.all(np.abs(norm - 1.0) <= QUAT_TOL):
                raise InputError(f"'base_orientation' must be a unit quaternion (x, y, z, w) within {QUAT_TOL:g}, "
                                 f"got norm {float(np.atleast_1d(norm)[np.argmax(np.abs(norm - 1.0))]):.9g}")
        vecs.append(a)
    single = N is None
    extra = () if flags is None else (flags,)
    if single:   # the one-sample kernel on the converted inputs: the many-sample one compiles only for stacks
        out1, out2 = np.empty(model.n if name != "momentum" else 6), np.empty(6)
        st = one(model._K, *arrays, *vecs, *extra, *((out1,) if name == "momentum" else (out1, out2)))
        _check(model, st, None, field8)
        return out1 if name == "momentum" else (out1, out2)
    prepare(many, [many_sig])
    arrays = [a if a.ndim == 2 else np.tile(a, (N, 1)) for a in arrays + vecs]
    out1 = np.empty((N, model.n if name != "momentum" else 6))
    out2 = np.empty((N, 6))
    outs = (out1,) if name == "momentum" else (out1, out2)
    st, s = many(model._K, *arrays, *extra, *outs)
    _check(model, st, s, field8)
    return out1 if name == "momentum" else (out1, out2)


def moving_base_inverse_dynamics(model, q, qd, qdd, base_twist, base_accel, base_orientation=IDENTITY,
                                 friction=True):
    """Joint torques and the base wrench for a prescribed base motion: ``(tau, base_wrench)``.

    The RNE starts from the base twist and acceleration and continues the backward pass to the base
    (Khalil §7.1): ``base_wrench`` [f; n] (N, N m; base frame, at the base origin) is the external wrench
    the base must receive to move as given, gravity included. ``tau`` includes rotor inertia and, with
    ``friction=True``, joint friction, as :func:`rne_control.inverse_dynamics`.
    """
    if model.floating_base:
        tau, wrench = np.empty(model.n), np.empty(6)
        if fast_path(mb.moving_base_one, model._K, q, qd, qdd, base_twist, base_accel, base_orientation,
                     FRICTION if friction else 0, tau, wrench) == 0:
            return tau, wrench
    return checked_call(model, "moving_base_inverse_dynamics", "moving_base", dict(q=q, qd=qd, qdd=qdd),
                        [("base_twist", base_twist, 6), ("base_accel", base_accel, 6),
                         ("base_orientation", base_orientation, 4)], "base_accel", FRICTION if friction else 0)


def free_floating_inverse_dynamics(model, q, qd, qdd, base_twist, base_orientation=IDENTITY, friction=True):
    """Joint torques and the resulting base acceleration of a free-floating base: ``(tau, base_accel)``.

    No external wrench acts on the base. Khalil's recursive three-pass algorithm (§7.2), O(n) apart from
    one 6x6 solve; see free_floating.py. ``base_accel`` [vdot; wdot] is the derivative of the base twist.
    """
    if model.floating_base:
        tau, accel = np.empty(model.n), np.empty(6)
        if fast_path(ff.free_floating_one, model._K, q, qd, qdd, base_twist, base_orientation,
                     FRICTION if friction else 0, tau, accel) == 0:
            return tau, accel
    return checked_call(model, "free_floating_inverse_dynamics", "free_floating", dict(q=q, qd=qd, qdd=qdd),
                        [("base_twist", base_twist, 6), ("base_orientation", base_orientation, 4)], "base_accel",
                        FRICTION if friction else 0)


def base_twist_from_momentum(model, q, qd, momentum=None, base_orientation=IDENTITY):
    """The base twist [v; w] (base frame) that gives the system the centroidal ``momentum`` [p; k].

    ``momentum`` (kg m/s, kg m^2/s): linear momentum and angular momentum about the system's centre of
    mass, in world axes; zero by default (the seed's eq. 29, moved to the base origin).
    """
    if model.floating_base:
        twist = np.empty(6)
        if fast_path(mo.momentum_one, model._K, q, qd, _ZERO6 if momentum is None else momentum, base_orientation,
                     twist) == 0:
            return twist
    return checked_call(model, "base_twist_from_momentum", "momentum", dict(q=q, qd=qd),
                        [("momentum", _ZERO6 if momentum is None else momentum, 6),
                         ("base_orientation", base_orientation, 4)], "momentum")


def floating_forward_dynamics(model, q, qd, tau, base_twist, base_orientation=IDENTITY, base_wrench=None,
                              friction=True):
    """Joint and base accelerations under joint torques ``tau`` and an external ``base_wrench`` [f; n]
    (base frame, at the base origin; none by default): ``(qdd, base_accel)``.

    Khalil's recursive direct model (§7.3), an articulated-body algorithm with a free root; see
    floating_aba.py. Friction (``friction=True``) is subtracted from tau, rotor inertia included.
    """
    if model.floating_base:
        qdd, accel = np.empty(model.n), np.empty(6)
        if fast_path(fa.floating_aba_one, model._K, q, qd, tau, base_twist, base_orientation,
                     _ZERO6 if base_wrench is None else base_wrench, FRICTION if friction else 0, qdd, accel) == 0:
            return qdd, accel
    return checked_call(model, "floating_forward_dynamics", "floating_aba", dict(q=q, qd=qd, tau=tau),
                        [("base_twist", base_twist, 6), ("base_orientation", base_orientation, 4),
                         ("base_wrench", _ZERO6 if base_wrench is None else base_wrench, 6)], "base_wrench",
                        FRICTION if friction else 0)


def centroidal_momentum(model, q, qd, base_twist, base_orientation=IDENTITY):
    """The converse of :func:`base_twist_from_momentum`, for checks and reports (single samples only):
    ``(momentum, com)``, the centroidal momentum [p; k] (world axes) of the state and the system's centre
    of mass in base coordinates."""
    require_floating(model, "centroidal_momentum")
    args = [vector(name, x, size, stacked_ok=False) for name, x, size in
            (("base_twist", base_twist, 6), ("base_orientation", base_orientation, 4))]
    (qa, qda), N = joint_arrays(model, q=q, qd=qd)
    if N is not None:
        raise InputError("centroidal_momentum() takes single samples")
    out = np.empty(9)
    _check(model, mo.momentum_of(model.tree, model.dyn, qa, qda, *args, out), None, "momentum")
    return out[:6], out[6:]
