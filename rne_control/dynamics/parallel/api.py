"""The Gough-Stewart platform functions (Khalil 2010, §5) on a :class:`~rne_control.model.parallel.ParallelModel`.

Conventions (base frame, SI units): a pose is [p; quat] (7,), p (m) the platform origin and quat
[x, y, z, w] the rotation taking platform to base; a twist is [v; w] (m/s, rad/s) of the platform origin;
an acceleration [a; dw] is its classical time derivative (m/s^2, rad/s^2); a wrench is [f; n] (N, N m) on
the platform about its origin. Actuator coordinates are the leg lengths q = |A_i B_i| (m), their rates and
accelerations, and the actuator forces Gamma (N), in ``model.joint_names`` order.

Every function takes single samples or stacked ones (N, .) (single inputs are broadcast against stacked
ones). The actuator-coordinate functions solve the forward kinematics first, warm-started from
``pose_guess`` (default ``model.home_pose``; stacked samples warm-start each from the previous one);
``pose_out`` (7,) or (N, 7), if given, receives the poses, to warm-start the next call.
"""
import numpy as np

from ...model.errors import InputError, LoopClosureError, SingularConfigurationError
from . import dynamics as pd, kinematics as pk
from ..calls import FLAGS, SingularMassMatrixError, arr, as_float, close, fast_path, prepare
from ..primitives import FRICTION

_2, _3 = arr(2), arr(3)
SIGS = {
    pk.ik_many: (_2, _2, _2, _3),
    pk.jacobian_many: (_2, _2, _3),
    pk.fk_many: (_2, _2, _2),
    pd.id_many: (_2, _3, _2, _2, _2, _2, FLAGS, _2),
    pd.fd_many: (_2, _3, _2, _2, _2, _2, FLAGS, _2),
    pd.joint_many: (_2, _3, _2, _2, _2, FLAGS, FLAGS, _2, _2),
}
FIELDS = ("pose", "twist", "accel", "q", "qd", "qdd", "tau", "f_ext")
ID, FD, MASS = 0, 1, 2
_empty, _joint_many, _fk_many = np.empty, pd.joint_many, pk.fk_many
for _kernel in SIGS:
    close(_kernel)


def _call(kernel, *args):
    prepare(kernel, [SIGS[kernel]])
    return kernel(*args)


def _fk_one(PK, q, pose_guess, home, pose):
    """The fast path of the forward kinematics: one sample through the many-sample kernel (its status)."""
    pose[0] = home if pose_guess is None else pose_guess
    return _fk_many(PK, q[None], pose)[0]


def _joint_one(PKLK, q, qd, x, flags, mode, pose_guess, home, pose, out):
    """The fast path of the actuator-coordinate functions: one sample through the many-sample kernel."""
    pose[0] = home if pose_guess is None else pose_guess
    return _joint_many(PKLK[0], PKLK[1], q[None], qd[None], x[None], flags, mode, pose, out)[0]


def _rows(name, x, size):
    """x as a C-contiguous float64 (N, size) array, and whether it was a single sample."""
    a = x if type(x) is np.ndarray and x.dtype == np.float64 else as_float(name, x)
    if a.ndim == 1 and a.shape[0] == size:
        return np.ascontiguousarray(a).reshape(1, size), True
    if a.ndim == 2 and a.shape[1] == size:
        return np.ascontiguousarray(a), False
    raise InputError(f"'{name}' must have shape ({size},) or (N, {size}), got {a.shape}")


def _stack(**named):
    """{name: (x, size)} -> list of (N, size) arrays (single ones broadcast), N, single."""
    rows = [(_rows(k, x, size)) for k, (x, size) in named.items()]
    Ns = {a.shape[0] for a, one in rows if not one}
    if len(Ns) > 1:
        raise InputError(f"stacked inputs {list(named)} have different numbers of samples {sorted(Ns)}")
    if not Ns:
        return [a for a, _ in rows], 1, True
    N = Ns.pop()
    return [np.ascontiguousarray(np.broadcast_to(a, (N, a.shape[1]))) if one else a for a, one in rows], N, False


def _pose_buffer(model, pose_guess, N):
    buf = np.empty((N, 7))
    if pose_guess is None:
        buf[0] = model.home_pose
    else:
        g = as_float("pose_guess", pose_guess)
        if g.shape != (7,):
            raise InputError(f"'pose_guess' must be one pose [x, y, z, qx, qy, qz, qw], got shape {g.shape}")
        buf[0] = g
    return buf


def _check(model, code, s, single, pose=None, q=None):
    if code == 0:
        return
    kind, idx = divmod(int(code), 100)
    at = "" if single else f" (sample {s})"
    if kind == pk.NONFINITE:
        raise InputError(f"'{FIELDS[idx]}' contains NaN or inf{at}")
    if kind == pk.ZERO_QUAT:
        raise InputError(f"the pose's quaternion [x, y, z, w] is zero{at}")
    if kind == pk.SINGULAR_LEG:
        raise SingularConfigurationError(
            f"leg '{model.leg_names[idx]}' (joint '{model.joint_names[idx]}') is singular{at}: its length is zero "
            f"or it lies along its universal joint's first axis u_axis {model.u_axes[idx].tolist()}")
    where = "" if pose is None else f" at pose {np.round(pose[s], 6).tolist()}"
    if kind == pk.SINGULAR_JP:
        raise SingularConfigurationError(
            f"the platform is at a singular configuration{where}{at}: J_p^-1 (rows [u_i; P_i x u_i]) is "
            f"rank-deficient (a type II / parallel singularity), so the leg forces cannot balance every wrench")
    if kind == pk.NO_CONVERGENCE:
        res = np.max(np.abs(_ik(model, pose[s:s + 1])[0][0] - q[s])) if pose is not None else float("nan")
        raise LoopClosureError(
            f"forward kinematics of '{model.name}' did not converge for leg lengths {np.round(q[s], 9).tolist()}"
            f"{at}: residual {res:.3g} m after {pk.FK_MAXIT} Newton-Raphson steps (unreachable lengths, or a "
            f"guess on another assembly branch)")
    if kind == pk.OUT_OF_STROKE:
        length = _ik(model, np.ascontiguousarray(pose[s:s + 1]))[0][0, idx]
        lo, hi = model.position_limits[idx]
        raise InputError(f"pose unreachable{at}: leg '{model.leg_names[idx]}' (joint '{model.joint_names[idx]}') "
                         f"would be {length:.6g} m long, outside its stroke [{lo:.6g}, {hi:.6g}] m")
    if kind == pk.SINGULAR_MASS:
        raise SingularMassMatrixError(f"the Cartesian mass matrix of '{model.name}' is singular{at}: the platform "
                                      f"and legs have no inertia in some direction")
    raise InputError(f"parallel kernel status {code}{at}")


def _ik(model, pose):
    q, legq = np.empty((pose.shape[0], 6)), np.empty((pose.shape[0], 6, 3))
    code, s = _call(pk.ik_many, model.kernel_arrays()[0], pose, q, legq)
    return q, legq, code, s


def platform_inverse_kinematics(model, pose, leg_joints=False, check_limits=True):
    """Leg lengths q (6,) (m) of the platform pose [p; quat] (7,); stacked: (N, 7) -> (N, 6).

    With ``leg_joints=True`` returns (q, legq), legq (6, 3) per leg [theta1, theta2, q_i] (rad, rad, m):
    the universal joint's angles about u_axis and about its second axis, and the length (joint order
    ``model.leg_joint_names``). With ``check_limits`` a leg length outside its stroke
    [lower_limit, upper_limit] raises InputError naming the leg (the pose is unreachable). A leg along its
    universal joint's first axis raises SingularConfigurationError."""
    (P,), N, single = _stack(pose=(pose, 7))
    P = P.copy()  # the kernel normalises the quaternion in place
    q, legq, code, s = _ik(model, P)
    _check(model, code, s, single)
    if check_limits:
        lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
        bad = np.argwhere((q < lo) | (q > hi))
        if bad.size:
            s, i = bad[0]
            _check(model, pk.OUT_OF_STROKE * 100 + int(i), s, single, P)
    if single:
        return (q[0], legq[0]) if leg_joints else q[0]
    return (q, legq) if leg_joints else q


def platform_forward_kinematics(model, q, pose_guess=None):
    """The platform pose [p; quat] (7,) with leg lengths q (6,) (m), by Newton-Raphson on the leg-length
    residual (to 1e-12 m) from ``pose_guess`` (default ``model.home_pose``); stacked q (N, 6) -> (N, 7),
    each sample warm-started from the previous solution. The quaternion keeps the guess's sign. Raises
    LoopClosureError if it does not converge (unreachable lengths) and SingularConfigurationError at a
    singular configuration."""
    pose = _empty((1, 7))
    if fast_path(_fk_one, model.kernel_arrays()[0], q, pose_guess, model.home_pose, pose) == 0:
        return pose[0]
    (qa,), N, single = _stack(q=(q, 6))
    pose = _pose_buffer(model, pose_guess, N)
    code, s = _call(pk.fk_many, model.kernel_arrays()[0], qa, pose)
    _check(model, code, s, single, pose, qa)
    return pose[0] if single else pose


def platform_jacobian(model, pose):
    """J_p (6, 6) with twist [v; w] = J_p qd, the inverse of the easy J_p^-1 whose rows are
    [u_i^T, (P_i x u_i)^T] (Khalil §5, eq. 60); stacked (N, 7) -> (N, 6, 6). Raises
    SingularConfigurationError at a singular configuration."""
    (P,), N, single = _stack(pose=(pose, 7))
    P = P.copy()
    J = np.empty((N, 6, 6))
    code, s = _call(pk.jacobian_many, model.kernel_arrays()[0], P, J)
    _check(model, code, s, single, P)
    return J[0] if single else J


def _arrays(model, gravity):
    if gravity is None:
        return model.kernel_arrays()
    g = as_float("gravity", gravity)
    if g.shape != (3,) or not np.isfinite(g).all():
        raise InputError(f"'gravity' must be 3 finite numbers, got {np.asarray(gravity).tolist()}")
    return model.kernel_arrays(g)


def _cartesian(kernel, model, pose, twist, third, name, f_ext, friction, gravity):
    PK, LK = _arrays(model, gravity)
    named = dict(pose=(pose, 7), twist=(twist, 6))
    named[name] = (third, 6)
    named["f_ext"] = (np.zeros(6) if f_ext is None else f_ext, 6)
    (P, V, X, F), N, single = _stack(**named)
    P = P.copy()
    out = np.empty((N, 6))
    code, s = _call(kernel, PK, LK, P, V, X, F, FRICTION if friction else 0, out)
    _check(model, code, s, single, P)
    return out[0] if single else out


def parallel_inverse_dynamics(model, pose, twist, accel, f_ext=None, friction=True, gravity=None):
    """Actuator forces Gamma (6,) (N) that give the platform the acceleration ``accel`` at (pose, twist), by
    Khalil's eq. (66): Gamma = J_p^T [F_p + sum_i J_vi^T J_i^-T Gamma_i], the legs' own inverse dynamics
    Gamma_i included. ``f_ext`` [f; n] (6,) is a wrench on the platform (base coordinates, about the
    platform origin); ``friction`` adds each actuator's viscous and Coulomb friction; ``gravity`` (m/s^2)
    overrides the model's. Stacked: (N, .) -> (N, 6). A pose that puts a leg outside its stroke is
    unreachable: InputError naming the leg, as in :func:`platform_inverse_kinematics`."""
    return _cartesian(pd.id_many, model, pose, twist, accel, "accel", f_ext, friction, gravity)


def parallel_forward_dynamics(model, pose, twist, tau, f_ext=None, friction=True, gravity=None):
    """The platform acceleration [a; dw] (6,) (classical, base coordinates) under actuator forces ``tau``
    (6,) (N) at (pose, twist): the inverse of :func:`parallel_inverse_dynamics`. It solves
    Lambda accel + h = J_p^-T tau without inverting J_p^-1, so it stays defined at a type II singularity
    (where the platform gains a motion the legs cannot resist). Stacked: -> (N, 6). An unreachable pose
    raises InputError naming the leg."""
    return _cartesian(pd.fd_many, model, pose, twist, tau, "tau", f_ext, friction, gravity)


def _joint(model, mode, q, qd, x, pose_guess, friction, PKLK, pose_out):
    flags = FRICTION if friction else 0
    width = 36 if mode == MASS else 6
    pose, out = _empty((1, 7)), _empty((1, width))
    code = fast_path(_joint_one, PKLK, q, qd, x, flags, mode, pose_guess, model.home_pose, pose, out)
    if code != 0:  # the slow path: convert, stack, compile if needed, and name what is wrong
        (qa, qda, xa), N, single = _stack(q=(q, 6), qd=(qd, 6), x=(x, 6))
        pose = _pose_buffer(model, pose_guess, N)
        out = np.empty((N, width))
        code, s = _call(pd.joint_many, PKLK[0], PKLK[1], qa, qda, xa, flags, mode, pose, out)
        _check(model, code, s, single, pose, qa)
    else:
        single = True
    if pose_out is not None:
        pose_out[...] = pose[0] if single else pose
    if mode == MASS:
        out = out.reshape(-1, 6, 6)
    return out[0] if single else out


def parallel_joint_inverse_dynamics(model, q, qd, qdd, pose_guess=None, friction=True, gravity=None, pose_out=None):
    """Actuator forces Gamma (6,) (N) for leg accelerations qdd (m/s^2) at leg lengths q (m) and rates qd
    (m/s): forward kinematics (warm-started from ``pose_guess``), the platform's twist J_p qd and
    acceleration, then eq. (66). Stacked: (N, 6) -> (N, 6)."""
    return _joint(model, ID, q, qd, qdd, pose_guess, friction, _arrays(model, gravity), pose_out)


def parallel_joint_forward_dynamics(model, q, qd, tau, pose_guess=None, friction=True, gravity=None, pose_out=None):
    """Leg accelerations qdd (6,) (m/s^2) under actuator forces ``tau`` (N) at (q, qd). Stacked -> (N, 6)."""
    return _joint(model, FD, q, qd, tau, pose_guess, friction, _arrays(model, gravity), pose_out)


def parallel_gravity_torques(model, q, pose_guess=None, gravity=None, pose_out=None):
    """Actuator forces (6,) (N) that hold the platform still at leg lengths q against gravity. Stacked ok."""
    zero = np.zeros(6)
    return _joint(model, ID, q, zero, zero, pose_guess, False, _arrays(model, gravity), pose_out)


def parallel_coriolis_torques(model, q, qd, pose_guess=None, pose_out=None):
    """Velocity-product actuator forces (6,) (N) at (q, qd): inverse dynamics with qdd = 0, no gravity and
    no friction. Stacked ok."""
    return _joint(model, ID, q, qd, np.zeros(6), pose_guess, False, model.zero_gravity_arrays(), pose_out)


def parallel_mass_matrix(model, q, pose_guess=None, pose_out=None):
    """The inertia matrix (6, 6) (kg) in actuator coordinates, J_p^T Lambda J_p, Lambda the Cartesian
    inertia of the bracket of eq. (66). Stacked q (N, 6) -> (N, 6, 6)."""
    zero = np.zeros(6)
    return _joint(model, MASS, q, zero, zero, pose_guess, False, model.kernel_arrays(), pose_out)
