"""The dynamics functions of a tree with lumped elasticity (Khalil 2010, §6; kernels in kernels.py).

``q`` and ``qd`` hold every joint in ``model.joint_names`` order. Torques and accelerations that
concern only some joints are in the order of ``model.rigid_joint_names`` (the actuated joints) or
``model.unactuated_joint_names`` (the elastic joints, ``model.elastic_joint_names``, and any free
passive joint, ``actuated: false``; on a model without free passive joints the two are equal).

Each function takes single samples, or stacked ones ((N, ·), unstacked inputs broadcast), like the
rigid functions, and starts with the fast path (calls.py): inverse dynamics by the direct call of its
kernel (direct.py), forward dynamics by its dispatcher (calls.fast_path); the checked path takes the rest.
The elastic damper -D qd is part of the joint and always acts; ``friction=False`` removes only the
Coulomb and viscous friction Fs sign(qd) + Fv qd (which, with ``friction=True``, acts at every joint).
On a floating-base model these functions hold the base fixed, like the tree functions of api.py.
"""
import numpy as np

from ...model.errors import InputError
from . import kernels as el
from ..calls import (FIELDS, FLAGS, MODEL, arr, check, close, external_forces, fast_path, model_array, prepare,
                     sized_arrays)
from ..direct import DIRECT, NOT_DIRECT, entry_point, not_compiled
from ..primitives import FRICTION, LENGTH

_f1, _f2, _f3 = arr(1), arr(2), arr(3)
_empty, _zeros, _id, _ndarray = np.empty, np.zeros, id, np.ndarray
_fd_one = el.elastic_aba_one
_id_one = not_compiled   # the direct entry point of elastic_rnea_one (direct.py), once compiled
KERNELS = {
    "id": (el.elastic_rnea_one, DIRECT,
           el.elastic_rnea_many, (*MODEL, _f2, _f2, _f2, _f3, FLAGS, _f2, _f2)),
    "fd": (el.elastic_aba_one, (*MODEL, _f1, _f1, _f1, FLAGS, _f1),
           el.elastic_aba_many, (*MODEL, _f2, _f2, _f2, _f3, FLAGS, _f2)),
}
for _one, _, _many, _ in KERNELS.values():
    close(_one)
    close(_many)


def _check(model, st, rigid_name, sample=None):
    """calls.check, with the rigid-joint input (field F_TAU) named ``rigid_name`` and its length N_r."""
    code, idx = divmod(int(st), 100000)
    if code == LENGTH * 10 + 4:
        at = "" if sample is None else f" (sample {sample})"
        raise InputError(f"'{rigid_name}' has {idx} entries, expected {len(model.rigid_joint_names)} "
                         f"(rigid joints {list(model.rigid_joint_names)}){at}")
    check(model, st, sample, {**FIELDS, 4: rigid_name})


def _arrays(model, q, qd, x, x_name):
    """q, qd (n) and x (N_r) as float64, single (·,) or all stacked (N, ·); returns (arrays, N or None)."""
    return sized_arrays((("q", q, model.n, "the joints", model.joint_names),
                         ("qd", qd, model.n, "the joints", model.joint_names),
                         (x_name, x, len(model.rigid_joint_names), "the rigid joints", model.rigid_joint_names)))


def _checked(model, name, q, qd, x, x_name, K, f_ext, flags, out_sizes):
    global _id_one
    one, one_sig, many, many_sig = KERNELS[name]
    prepare(one, [one_sig])
    if name == "id" and _id_one is not_compiled:
        _id_one = entry_point(one)
    arrays, N = _arrays(model, q, qd, x, x_name)
    single = N is None
    if single and not f_ext:   # the one-sample kernel: the many-sample one compiles only for stacks and forces
        outs = [np.empty(size) for size in out_sizes]
        args = (np.ndarray, K, *arrays, *outs)
        st = _id_one(id(args), flags) if name == "id" else one(K, *arrays, flags, *outs)
        if st != NOT_DIRECT:
            if st:
                _check(model, st, x_name)
            return outs
    prepare(many, [many_sig])
    if single:
        arrays, N = [a[None] for a in arrays], 1
    outs = [np.empty((N, size)) for size in out_sizes]
    st, s = many(K, *arrays, external_forces(model, f_ext, N)[0], flags, *outs)
    if st:
        _check(model, st, x_name, None if single else s)
    return [o[0] for o in outs] if single else outs


def elastic_inverse_dynamics(model, q, qd, qdd_rigid, f_ext=None, gravity=None, friction=True):
    """(tau_rigid, qdd_elastic): the torques of the rigid joints (N m, N; ``rigid_joint_names`` order)
    that give them the accelerations ``qdd_rigid`` (rad/s^2, m/s^2; same order) at (q, qd) of all joints,
    and the accelerations that result at the elastic and free passive joints (``unactuated_joint_names``
    order). Khalil's three recursive passes (§6.3, eqs. 72-82), O(n). Rotor inertia included; ``f_ext``
    and ``gravity`` as in :func:`rne_control.inverse_dynamics`; ``friction`` see the module docstring.
    Raises SingularMassMatrixError if a passive joint has no inertia behind it.
    """
    flags = FRICTION if friction else 0
    if f_ext is None and gravity is None:
        n_r, n_u = model._split_sizes
        tau, qdd = _empty(n_r), _empty(n_u)
        args = (_ndarray, model._K, q, qd, qdd_rigid, tau, qdd)
        st = _id_one(_id(args), flags)
        if st == 0:
            return tau, qdd
        if st > 0:
            _check(model, st, "qdd_rigid")
    return tuple(_checked(model, "id", q, qd, qdd_rigid, "qdd_rigid", model_array(model, gravity), f_ext or {},
                          flags, (len(model.rigid_index), len(model.unactuated_index))))


def _zero_rates(model, *xs):
    """Zero qd (n) and qdd_rigid (N_r), stacked like the most stacked of xs."""
    shape = next((np.shape(x)[:-1] for x in xs if np.ndim(x) == 2), ())
    return _zeros((*shape, model.n)), _zeros((*shape, len(model.rigid_index)))


def elastic_gravity_torques(model, q, gravity=None):
    """Rigid-joint torques (N m, N) that hold the rigid joints still at q (all joints): gravity and the
    springs at the current deflections, i.e. the first output of
    ``elastic_inverse_dynamics(model, q, 0, 0, friction=False)``; the elastic joints may still move."""
    qd0, qdd0 = _zero_rates(model, q)
    return elastic_inverse_dynamics(model, q, qd0, qdd0, gravity=gravity, friction=False)[0]


def elastic_coriolis_torques(model, q, qd):
    """Rigid-joint torques (N m, N) of the velocities at (q, qd): ``elastic_inverse_dynamics(model, q, qd,
    0, friction=False)`` minus :func:`elastic_gravity_torques` (the elastic dampers' part included)."""
    qd0, qdd0 = _zero_rates(model, q, qd)
    return (elastic_inverse_dynamics(model, q, qd, qdd0, friction=False)[0]
            - elastic_inverse_dynamics(model, q, qd0, qdd0, friction=False)[0])


def elastic_forward_dynamics(model, q, qd, tau_rigid, f_ext=None, friction=True, gravity=None):
    """Accelerations qdd (rad/s^2, m/s^2) of all joints (``joint_names`` order) at (q, qd) under the rigid
    joints' torques ``tau_rigid`` (``rigid_joint_names`` order), the springs and dampers of the elastic
    joints and zero torque at free passive joints: the articulated-body algorithm (Khalil §6.2).
    Friction is subtracted at every joint when ``friction=True``; ``f_ext`` and ``gravity`` as in
    :func:`rne_control.forward_dynamics`.
    """
    flags = FRICTION if friction else 0
    if f_ext is None and gravity is None:
        qdd = _empty(model.n)
        st = fast_path(_fd_one, model._K, q, qd, tau_rigid, flags, qdd)
        if st == 0:
            return qdd
        if st > 0:
            _check(model, st, "tau_rigid")
    return _checked(model, "fd", q, qd, tau_rigid, "tau_rigid", model_array(model, gravity), f_ext or {}, flags,
                    (model.n,))[0]
