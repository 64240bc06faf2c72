"""The computed-torque step fused into one compiled call: a plant's state update, the acceleration of the
law (:func:`~rne_control.control._kernels.ct_accel`) and the plant's inverse dynamics.

A cycle in computed torque is then one kernel call where it was several (the state's checks and copies,
the acceleration, the inverse dynamics), each a trip through numba's dispatcher. That matters most when
the caches are cold, as they are when other processes run between two joint states. The kernels reuse
the library's algorithms (the RNE, the Gough-Stewart platform's ``joint_many``); they return a non-zero
status for anything they do not handle, and the plant then takes its composed path
(:meth:`~rne_control.control.plant.Plant.computed_torque`), which raises the error that stands for it.
"""

import numba as nb
from numba import njit

from ..dynamics.calls import prepare
from ..dynamics.closed_loop.kernels import torques
from ..dynamics.direct import unmanaged
from ..dynamics.parallel.api import ID
from ..dynamics.parallel.dynamics import joint_many
from ..model.layout import N_LEGS
from ..dynamics.rnea import NO_FEXT, rnea
from ..dynamics.primitives import split
from ._kernels import ct_accel, lengths_are, loop_guess, passive_gap
from .tree_state import (NC, NF, NR, QC, QDC, QDDC, QDDF, QDDR, QDF, QDR, QF, QR, REJECTED, TAUF, TAUR, complete,
                         gather_controlled, rest_ready, scatter_controlled)


@njit(cache=True, inline="always")
def _tree_step(KR, KF, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, flags, plan, work, tau):
    """A tree on a fixed base (tree_state.py): the state q, qd (``state_names`` order) completed into
    ``work``; the controlled accelerations ct_accel(...) and zero at the other joints; tau (N m, N) = the
    controlled joints' torques of the RNE with ``flags`` (friction) on the folded model KF while the
    passengers are at rest, else on the restricted model KR. Returns 0; -1 - i (controlled joint i's
    position or velocity not finite, nothing written); REJECTED (an input of another length, nothing
    written); or the RNE's status."""
    nc = plan[NC]
    if not lengths_are(nc, (q_d, qd_d, qdd_d, kp, kd, tau)):
        return REJECTED
    st = complete(q, qd, plan, work)
    if st != 0:
        return st
    qdd_c = work[QDDC][:nc]
    ct_accel(qdd_d, qd_d, work[QDC][:nc], q_d, work[QC][:nc], kp, kd, scale, qdd_c)
    scatter_controlled(qdd_c, plan, work)
    folded = rest_ready(KR, KF, plan, work)
    n = plan[NF] if folded else plan[NR]
    K, Q, QD, QDD, TAU = (KF, QF, QDF, QDDF, TAUF) if folded else (KR, QR, QDR, QDDR, TAUR)
    tree, dyn, ws, _ = split(unmanaged(K))
    st = rnea(tree, dyn, work[Q][:n], work[QD][:n], work[QDD][:n], NO_FEXT, flags, work[TAU][:n], ws)
    if st != 0:
        return st
    gather_controlled(plan, work, tau, folded)
    return 0


@njit(cache=True)  # holds the GIL, as the library's entry points do: it works in the model's workspace
def tree_computed_torque(K, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, flags, plan, work, tau):
    """_tree_step on a tree plant without passengers (nothing to fold): one kernel array argument fewer."""
    return _tree_step(K, K, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, flags, plan, work, tau)


@njit(cache=True)
def folded_tree_computed_torque(KR, KF, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, flags, plan, work, tau):
    """_tree_step on a tree plant with passengers: KR the restricted model, KF the folded one."""
    return _tree_step(KR, KF, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, flags, plan, work, tau)


@njit(cache=True)
def parallel_computed_torque(PK, LK, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, flags, Q, QD, X, guess, pose, out):
    """A Gough-Stewart platform in leg coordinates: Q, QD (1, 6) = q, qd (m, m/s); X (1, 6) = ct_accel(...);
    then ``joint_many``'s inverse dynamics: the forward kinematics from ``guess`` (1, 7) (the last pose)
    into ``pose`` (1, 7), and out (1, 6) = the leg forces (N). Returns 0, REJECTED (an input of another
    length) or joint_many's status (a non-finite input, no pose fits, a singular configuration)."""
    if not lengths_are(N_LEGS, (q, qd, q_d, qd_d, qdd_d, kp, kd)):
        return REJECTED
    for i in range(N_LEGS):
        Q[0, i] = q[i]
        QD[0, i] = qd[i]
    for i in range(7):
        pose[0, i] = guess[0, i]
    ct_accel(qdd_d, qd_d, qd, q_d, q, kp, kd, scale, X[0])
    return joint_many(PK, LK, Q, QD, X, flags, ID, pose, out)[0]


@njit(cache=True)
def closed_loop_computed_torque(K, LK, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, flags, passive, revolute, tolerance,
                                q_last, guess, qdd, tau, q_tree):
    """A closed-loop robot with N active joints. The state q, qd (the N active joints, then the passive
    ones, NaN where not measured) gives the Newton guess (``loop_guess``: the last closed configuration
    ``q_last`` with the measured passive joints put in); qdd (N,) = ct_accel(...) on the active joints;
    tau (N,) = Gamma_c at that acceleration (closed_loop's ``torques``: the loops closed into q_tree (n,),
    the tree's RNE, G^T). Returns 0; REJECTED (an input of another length, or a measured passive joint
    farther than ``tolerance`` from the closure); -1 - i (active joint i not finite); or the torques'
    status."""
    N = tau.shape[0]
    if q.shape[0] != N + passive.shape[0] or qd.shape[0] != q.shape[0]:
        return REJECTED
    if not lengths_are(N, (q_d, qd_d, qdd_d, kp, kd, qdd)):
        return REJECTED
    measured = loop_guess(q, qd, N, passive, q_last, guess)
    if measured < 0:
        return measured
    qa, qda = unmanaged(q)[:N], unmanaged(qd)[:N]
    ct_accel(qdd_d, qd_d, qda, q_d, qa, kp, kd, scale, qdd)
    st = torques(unmanaged(K), unmanaged(LK), qa, qda, unmanaged(qdd), unmanaged(guess), flags, unmanaged(tau),
                 unmanaged(q_tree))
    if st:
        return st
    if measured and passive_gap(q, N, passive, q_tree, revolute, tolerance) >= 0:
        return REJECTED
    return 0


def _signatures():
    f1, f2, F, I = nb.float64[::1], nb.float64[:, ::1], nb.float64, nb.int64
    tree = (f1, f1, f1, f1, f1, f1, f1, F, I, nb.int64[::1], f2, f1)
    return {tree_computed_torque: (f2, *tree), folded_tree_computed_torque: (f2, f2, *tree),
            closed_loop_computed_torque: (f2, f2, f1, f1, f1, f1, f1, f1, f1, F, I, nb.int64[::1], nb.boolean[::1], F,
                                          f1, f1, f1, f1, f1),
            parallel_computed_torque: (f2, nb.float64[:, :, ::1], f1, f1, f1, f1, f1, f1, f1, F, I, f2, f2, f2, f2,
                                       f2, f2)}


SIGNATURES = _signatures()


def ready(kernel):
    """``kernel`` compiled (or loaded from the cache) for its one signature: C-contiguous float64 arrays, a
    float scale and integer flags. Anything else then raises TypeError, and the plant takes its composed
    path."""
    prepare(kernel, [SIGNATURES[kernel]])
    return kernel

