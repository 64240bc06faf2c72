"""Closed-loop robots (Khalil 2010, §2.2 and §4): the public functions.

Coordinates: ``q_active`` etc. are (N,) in ``model.active_joint_names`` order (or stacked (S, N));
``q_guess`` and the returned ``q`` are full tree configurations, (n,) in ``model.joint_names`` order (or
(S, n)). Units SI (rad, m, N m, N). Every function first closes the loops by Newton-Raphson on eq. (3),
warm-started from ``q_guess`` (default: ``model.loops.q_ref``, the mid-range of each joint's position
limits, 0 where unlimited: give passive joints limits to pick the assembly mode). With stacked inputs
and a single guess, each sample starts from the previous sample's solution. On a tree model (no loop)
the functions reduce to the tree functions (G = identity).

Each function starts with the fast path (calls.py): the one-sample kernel, called directly (direct.py) for
the inverse dynamics and through its dispatcher (calls.fast_path) for the others; anything it does not
accept (lists, other dtypes, stacked samples, a gravity override) takes the checked path.
"""
import numpy as np

from ...model.errors import InputError, LoopClosureError
from . import kernels as cl
from ..calls import (SingularMassMatrixError, arr, as_float, check, close, fast_path, into as _into, model_array,
                     prepare, sized_arrays)
from ..direct import DIRECT, entry_point, not_compiled
from .arrays import V_E, offsets
from .solve import NOCLOSE, SINGULAR_LOOP
from ..primitives import FRICTION, LENGTH, NONFINITE, SINGULAR

_f1, _f2, _f3 = arr(1), arr(2), arr(3)
_empty = np.empty


def _sigs():
    import numba as nb
    K2, I = arr(2), nb.int64
    return {
        "solve": (cl.solve_one, (K2, K2, _f1, _f1, _f1), cl.solve_many, (K2, K2, _f2, _f2, _f2)),
        "jacobian": (cl.jacobian_one, (K2, K2, _f1, _f2), cl.jacobian_many, (K2, K2, _f2, _f3)),
        "torques": (cl.torques_one, (K2, K2, _f1, _f1, _f1, _f1, I, _f1, _f1),
                    cl.torques_many, (K2, K2, _f2, _f2, _f2, _f2, I, _f2, _f2)),
        "mass": (cl.mass_one, (K2, K2, _f1, _f1, _f2, _f1), cl.mass_many, (K2, K2, _f2, _f2, _f3, _f2)),
        "forward": (cl.forward_one, (K2, K2, _f1, _f1, _f1, _f1, I, _f1, _f1),
                    cl.forward_many, (K2, K2, _f2, _f2, _f2, _f2, I, _f2, _f2)),
    }


KERNELS = _sigs()
for _one, _, _many, _ in KERNELS.values():
    close(_one)
    close(_many)
_solve_one, _torques_one, _mass_one, _forward_one = cl.solve_one, cl.torques_one, cl.mass_one, cl.forward_one
_torques_direct = not_compiled   # the direct call (direct.py) of the torque kernel, once compiled
_id, _ndarray = id, np.ndarray
_FIELDS = {cl.F_QA: "q_active", cl.F_QDA: "qd_active", cl.F_QDDA: "qdd_active", cl.F_TAUA: "tau_active",
           cl.F_GUESS: "q_guess"}


def _loop_message(model, idx, LK):
    loops = model.loops
    B = len(loops.cut_joint_names)
    e = LK[offsets(LK)[5] + V_E]
    if idx < B:
        rows = loops.cut_rows(idx)
        what = f"loop of cut joint '{loops.cut_joint_names[idx]}' (joints {list(loops.loop_joints[idx])})"
    else:
        rows = [loops.n_rows - len(loops.mimic) + idx - B]
        f = model.joint_names[int(loops.mimic[idx - B, 0])]
        what = f"mimic coupling of joint '{f}'"
    res = max(abs(float(e[r])) for r in rows)
    return what, res


def _check(model, st, sample=None, what_q="q_guess"):
    if st == 0:
        return
    code, idx = divmod(int(st), 100000)
    kind, field = divmod(code, 10)
    at = "" if sample is None else f" (sample {sample})"
    if kind == NOCLOSE:
        what, res = _loop_message(model, idx, model.loops.LK)
        raise LoopClosureError(f"{what} does not close: residual {res:.3g} after Newton-Raphson from the initial "
                               f"guess (out of reach, or a guess on no branch of the loop){at}")
    if kind == SINGULAR_LOOP:
        what, res = _loop_message(model, idx, model.loops.LK)
        raise LoopClosureError(f"{what} is at a singular configuration (residual {res:.3g}): the active joints do "
                               f"not determine its passive joints there (G undefined){at}")
    if kind == SINGULAR:
        raise SingularMassMatrixError(f"the closed-loop mass matrix A_c is singular at active joint "
                                      f"'{model.joint_names[idx]}'{at}")
    if kind in (LENGTH, NONFINITE) and field in _FIELDS:
        name = what_q if field == cl.F_GUESS else _FIELDS[field]
        names = model.joint_names if field == cl.F_GUESS else model.active_joint_names
        if kind == LENGTH:
            raise InputError(f"'{name}' has {idx} entries, expected {len(names)} (joints {list(names)}){at}")
        raise InputError(f"'{name}' of joint '{names[idx]}' is not finite (NaN or inf){at}")
    check(model, st, sample)


def _stack(model, active, q_guess, name_q="q_guess"):
    """Active-joint inputs as (S, N) arrays and the guess as (S or 1, n); S None for one sample."""
    N, n = model.loops.n_active, model.n
    arrays, S = sized_arrays([(name, x, N, "the active joints", model.active_joint_names)
                              for name, x in active.items()])
    g = model.loops.q_guess0 if q_guess is None else as_float(name_q, q_guess)
    if g.ndim not in (1, 2) or g.shape[-1] != n:
        raise InputError(f"'{name_q}' must be a full tree configuration of shape ({n},) or (S, {n}) for joints "
                         f"{list(model.joint_names)}, got {g.shape}")
    if g.ndim == 2 and g.shape[0] != 1:
        if S is not None and g.shape[0] != S:
            raise InputError(f"'{name_q}' stacks {g.shape[0]} samples, the active inputs {S}")
        S = g.shape[0]
    single = S is None
    S = 1 if single else S
    arrays = [np.array(np.broadcast_to(a, (S, N)), order="C") for a in arrays]
    return arrays, np.array(g.reshape(-1, n), order="C"), S, single


def _call(model, name, active, q_guess, flags=None, K=None, out_shape=None, q_out=None):
    global _torques_direct
    one, one_sig, many, many_sig = KERNELS[name]
    prepare(one, [one_sig])
    if name == "torques" and _torques_direct is not_compiled:
        prepare(cl.torques_direct, [DIRECT])
        _torques_direct = entry_point(cl.torques_direct)
    arrays, g, S, single = _stack(model, active, q_guess)
    N = model.loops.n_active
    out = np.empty((S, *(out_shape or (N,))))
    q = np.empty((S, model.n))
    extra = () if flags is None else (flags,)
    K = model._K if K is None else K
    if single:   # the one-sample kernel: the many-sample one compiles only for stacks
        st = one(K, model.loops.LK, *(a[0] for a in arrays), g[0], *extra, out[0], q[0])
        s = None
    else:
        prepare(many, [many_sig])
        st, s = many(K, model.loops.LK, *arrays, g, *extra, out, q)
    _check(model, st, s)
    if q_out is not None:
        np.copyto(q_out, q[0] if single else q)
    return out[0] if single else out


def solve_loops(model, q_active, q_guess=None):
    """The tree configuration q (n,) (``joint_names`` order; rad, m) that closes every loop with the active
    joints at ``q_active`` (N,): Newton-Raphson on eq. (3) to |e| <= 1e-12, warm-started from ``q_guess``.
    Stacked: q_active (S, N) -> (S, n). Raises LoopClosureError naming the loop and its residual."""
    q = _empty(model.n)
    st = fast_path(_solve_one, model._K, model.loops.LK, q_active, model.loops.q_guess0 if q_guess is None else q_guess,
                   q)
    if st == 0:
        return q
    prepare(cl.solve_one, [KERNELS["solve"][1]])
    arrays, g, S, single = _stack(model, {"q_active": q_active}, q_guess)
    q = np.empty((S, model.n))
    if single:
        st, s = cl.solve_one(model._K, model.loops.LK, arrays[0][0], g[0], q[0]), None
    else:
        prepare(cl.solve_many, [KERNELS["solve"][3]])
        st, s = cl.solve_many(model._K, model.loops.LK, arrays[0], g, q)
    _check(model, st, s)
    return q[0] if single else q


def loop_jacobian(model, q):
    """G = dq/dq_active (n x N) at the closed tree configuration q (n,): qd = G qd_active (eq. 56). Its
    active rows are the identity. Stacked q (S, n) -> (S, n, N). Raises LoopClosureError if q does not
    close the loops (residual > 1e-6) or is singular there."""
    prepare(cl.jacobian_one, [KERNELS["jacobian"][1]])
    qq = as_float("q", q)
    if qq.ndim not in (1, 2) or qq.shape[-1] != model.n:
        raise InputError(f"'q' must have shape ({model.n},) or (S, {model.n}) for joints {list(model.joint_names)}, "
                         f"got {qq.shape}")
    single = qq.ndim == 1
    qq = np.ascontiguousarray(qq.reshape(-1, model.n))
    G = np.empty((qq.shape[0], model.n, model.loops.n_active))
    if single:
        st, s = cl.jacobian_one(model._K, model.loops.LK, qq[0], G[0]), None
    else:
        prepare(cl.jacobian_many, [KERNELS["jacobian"][3]])
        st, s = cl.jacobian_many(model._K, model.loops.LK, qq, G)
    try:
        _check(model, st, None if single else s, what_q="q")
    except InputError as exc:
        raise type(exc)(str(exc).replace("after Newton-Raphson from the initial guess (out of reach, or a guess "
                                         "on no branch of the loop)", "at the given q")) from None
    return G[0] if single else G


def closed_loop_inverse_dynamics(model, q_active, qd_active, qdd_active, q_guess=None, friction=True, gravity=None,
                                 q_out=None, out=None):
    """Active-joint torques Gamma_c (N,) (N m, N) that produce qdd_active (eqs. 55/57): the tree's RNE at
    q = solve_loops(q_active), qd = G qd_a, qdd = G qdd_a + Gdot qd_a, projected by G^T. Rotor inertia and
    (``friction=True``) the friction of every tree joint included; ``gravity`` (m/s^2) overrides the model's.
    ``q_out`` (n,), optional, receives the closed configuration (to warm-start the next call); ``out``
    (N,), optional, a float64 array the torques are written into (and returned)."""
    if gravity is None:
        loops = model.loops
        tau = _empty(loops.n_active) if out is None else out
        args = (_ndarray, model._K, loops.LK, q_active, qd_active, qdd_active,
                loops.q_guess0 if q_guess is None else q_guess, tau, _empty(model.n) if q_out is None else q_out)
        st = _torques_direct(_id(args), FRICTION if friction else 0)
        if st == 0:
            return tau
        if st > 0:
            _check(model, st)
    return _into(out, _call(model, "torques", dict(q_active=q_active, qd_active=qd_active, qdd_active=qdd_active),
                            q_guess, FRICTION if friction else 0, model_array(model, gravity), q_out=q_out))


def _fast(model, kernel, inputs, q_guess, flags, out, q_out):
    """The fast path of a one-sample kernel (K, LK, *inputs, q_guess[, flags], out, q): its status by
    calls.fast_path, with an input error (status > 0) raised."""
    loops = model.loops
    args = (model._K, loops.LK, *inputs, loops.q_guess0 if q_guess is None else q_guess,
            *(() if flags is None else (flags,)), out, _empty(model.n) if q_out is None else q_out)
    st = fast_path(kernel, *args)
    if st > 0:
        _check(model, st)
    return st


def closed_loop_gravity_torques(model, q_active, q_guess=None, gravity=None, q_out=None):
    """Gravity torques of the closed-loop robot, G^T g(q) (N,) (N m, N), at q = solve_loops(q_active)."""
    # qd and qdd are not used in this mode: q_active stands in for them
    if gravity is None:
        tau = _empty(model.loops.n_active)
        if _fast(model, _torques_one, (q_active, q_active, q_active), q_guess, cl.GRAVITY_ONLY, tau, q_out) == 0:
            return tau
    return _call(model, "torques", dict(q_active=q_active, qd_active=q_active, qdd_active=q_active), q_guess,
                 cl.GRAVITY_ONLY, model_array(model, gravity), q_out=q_out)


def closed_loop_coriolis_torques(model, q_active, qd_active, q_guess=None, q_out=None):
    """H_c without gravity (N,): G^T [C(q, qd) qd + A Gdot qd_a] with qd = G qd_a, i.e. the velocity-product
    torques of the closed-loop robot (no gravity, acceleration or friction)."""
    tau = _empty(model.loops.n_active)
    if _fast(model, _torques_one, (q_active, qd_active, qd_active), q_guess, cl.VELOCITY_ONLY, tau, q_out) == 0:
        return tau
    return _call(model, "torques", dict(q_active=q_active, qd_active=qd_active, qdd_active=qd_active), q_guess,
                 cl.VELOCITY_ONLY, q_out=q_out)


def closed_loop_mass_matrix(model, q_active, q_guess=None, q_out=None):
    """A_c = G^T A G (N x N) (kg m^2, kg), symmetric positive definite; (S, N, N) when stacked."""
    N = model.loops.n_active
    A = _empty((N, N))
    if _fast(model, _mass_one, (q_active,), q_guess, None, A, q_out) == 0:
        return A
    return _call(model, "mass", dict(q_active=q_active), q_guess, out_shape=(N, N), q_out=q_out)


def closed_loop_forward_dynamics(model, q_active, qd_active, tau_active, q_guess=None, friction=True, gravity=None,
                                 q_out=None):
    """Active-joint accelerations qdd_a (N,) under the active torques tau_active, from eq. (58):
    A_c qdd_a = tau_active - H_c - G^T g - G^T friction (friction with ``friction=True``). Raises
    SingularMassMatrixError if A_c is singular."""
    if gravity is None:
        qdd = _empty(model.loops.n_active)
        if _fast(model, _forward_one, (q_active, qd_active, tau_active), q_guess, FRICTION if friction else 0, qdd,
                 q_out) == 0:
            return qdd
    return _call(model, "forward", dict(q_active=q_active, qd_active=qd_active, tau_active=tau_active), q_guess,
                 FRICTION if friction else 0, model_array(model, gravity), q_out=q_out)
