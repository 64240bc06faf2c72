"""The Plant of a closed-loop robot (Khalil 2010, §4): controlled coordinates are active joints.

``joints`` is any subset of the active joints (default: all, in the model's order). The state read from
``/joint_states`` is the controlled joints (required), the uncontrolled active joints (optional: measured,
else held at their last, initially their ``locked`` position, at rest) and the passive joints (optional).
:meth:`ClosedLoopPlant.set_state` closes the loops for the active joints, warm-started from the last
solution with the measured passive joints of the loops that a controlled joint drives put in; such a
passive joint that differs from the closed solution by more than ``loop_tolerance`` (rad or m) makes the
state inconsistent (:class:`StateError`). A passive joint of a loop that only uncontrolled joints drive (a
gripper's linkage beside a controlled arm) never rejects a state: a published position off the closed
solution is ignored and counted (``ignored_passive``). Passive velocities are not read: they are G qd_a
(eq. 56). Every dynamics call is one closed-loop library call on the model (the tree's RNE, gravity or
CRBA projected by G^T), at zero acceleration of the uncontrolled active joints: Gamma_c are the rows of
G^T Gamma_tr of the controlled joints.

:meth:`~ClosedLoopPlant.set_state` solves the loops with the library's kernel itself, into a spare
buffer that it swaps in once the state is accepted (a rejected state leaves the last one); a non-zero
kernel status takes :func:`~rne_control.solve_loops`, which raises the error that status stands for. In
computed torque with every active joint controlled, :meth:`~ClosedLoopPlant.computed_torque` closes the
loops, takes the law's acceleration and computes Gamma_c in one compiled call (``control/_fused.py``).
"""
import numpy as np

from ...dynamics.closed_loop import kernels as cl
from ...dynamics.calls import fast_path, prepare
from ...dynamics.closed_loop.api import (KERNELS, LoopClosureError, closed_loop_coriolis_torques,
                                         closed_loop_forward_dynamics, closed_loop_gravity_torques,
                                         closed_loop_inverse_dynamics, closed_loop_mass_matrix, loop_jacobian,
                                         solve_loops)
from ...dynamics.direct import NOT_DIRECT
from ...dynamics.primitives import FRICTION
from ...model.layout import JTYPE, QIDX, REVOLUTE
from ...model.loops import loop_groups
from .. import _kernels as kernels
from ...dynamics.calls import Prepared
from .._fused import closed_loop_computed_torque, ready
from ..plant import DEFAULT_LOOP_TOLERANCE, Plant, StateError, choose_joints, joint_friction, payload_links


def _wrap(d, revolute):
    return np.where(revolute, (d + np.pi) % (2 * np.pi) - np.pi, d)


class ClosedLoopPlant(Plant):
    """A closed-loop model (``model.is_closed_loop``; a tree also works, with no passive joint).

    ``joints``: the controlled active joints, output order; ``locked``: positions of uncontrolled active
    joints before they are measured (default: mid-range of their limits, 0 where unlimited);
    ``loop_tolerance`` (rad or m): how far a measured passive joint may be from the closed solution.
    """

    kind = "closed_loop"

    def __init__(self, model, joints=None, locked=None, loop_tolerance=DEFAULT_LOOP_TOLERANCE):
        if not (np.isfinite(loop_tolerance) and loop_tolerance > 0):
            raise ValueError(f"loop_tolerance must be a positive number (rad or m), got {loop_tolerance!r}")
        names, active, passive = model.joint_names, model.active_joint_names, model.passive_joint_names
        joints, uncontrolled, locked = choose_joints(model, active, joints, locked, lambda bad: (
            f"joints {bad} are passive joints of the closed-loop model {model.name!r}: their loops (or <mimic> "
            f"leaders) move them and they have no actuator; control active joints {list(active)}"))
        self.model = model
        self.name = model.name
        self.loop_tolerance = float(loop_tolerance)
        self._active = np.array(model.loops.active)
        self._passive = np.array(model.loops.passive, dtype=np.int64)
        self._pos_c = np.array([active.index(j) for j in joints], dtype=np.int64)
        self._pos_u = np.array([active.index(j) for j in uncontrolled], dtype=np.int64)
        self._identity = tuple(joints) == tuple(active)
        self.joint_names = self.required_names = tuple(joints)
        self.state_names = tuple(joints) + tuple(uncontrolled) + passive
        self.effort_limits = np.array(model.effort_limits[self._active[self._pos_c]])
        self.velocity_limits = np.array(model.velocity_limits[self._active[self._pos_c]])
        self.position_limits = np.array(model.position_limits[self._active[self._pos_c]])
        self.link_names = payload_links(model)
        tree = np.asarray(model.tree)
        self._Fs, self._Fv = joint_friction(model)
        self._revolute = np.zeros(model.n, bool)
        self._revolute[tree[:, QIDX].astype(int)] = tree[:, JTYPE] == REVOLUTE
        self._gravity0 = np.array(model.gravity)
        # a passive joint is checked (a state off it is rejected) where a controlled joint drives its loop
        controlled = {int(self._active[p]) for p in self._pos_c}
        driven = {k for a, p in loop_groups(model) if set(a) & controlled for k in p}
        self._checked = np.array([int(k) in driven for k in self._passive], bool)
        self._ignored = np.zeros(len(self._passive), np.int64)
        self._q = np.array(model.loops.q_ref)          # the closed tree configuration of the last state
        for j, v in locked.items():
            self._q[names.index(j)] = float(v)
        self._qa_all = np.array(self._q[self._active])  # every active joint, model order
        self._qda_all = np.zeros(len(self._active))
        self._qa, self._qda = self._qa_all[self._pos_c], self._qda_all[self._pos_c]
        self._guess = np.empty(model.n)                # the next solve's warm start
        self._spare = np.empty(model.n)                # the next solve's output (scratch between solves)
        prepare(cl.solve_one, [KERNELS["solve"][1]])   # set_state's (closed until prepared)
        self._fused = Prepared(self, "_fused", lambda: ready(closed_loop_computed_torque))
        held = np.array(self._q)
        if not self._identity and len(self._passive):
            try:
                held = solve_loops(model, self._qa_all, self._q)
            except LoopClosureError as exc:
                raise ValueError(f"the loops do not close with the uncontrolled joints at their locked positions "
                                 f"{dict(zip(uncontrolled, self._qa_all[self._pos_u]))}: {exc}") from None
        self._q[:] = held
        self._held = np.array(held)                    # locked (reference) active joints, passive ones closed
        self._sim_q = np.array(held)                   # warm start of the simulation's loop solves
        self.sim_names = self.joint_names
        # before any measurement: the active joints of the reference closure, the passive ones unknown
        self.initial_state = np.r_[self._qa_all[self._pos_c], self._qa_all[self._pos_u],
                                   np.full(len(self._passive), np.nan)]

    # ------------------------------------------------------------ state
    def set_state(self, q, qd):
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        N, ns = len(self._active), len(self.state_names)
        if q.shape != (ns,) or qd.shape != (ns,):
            raise StateError(f"state must have {ns} positions and velocities ({list(self.state_names)}), "
                             f"got {q.shape} and {qd.shape}")
        if self._identity:
            qs, qds = q, qd
        else:
            qs, qds = self._active_first(q, qd)
        measured = kernels.loop_guess(qs, qds, N, self._passive, self._q, self._guess)
        if measured < 0:
            raise StateError(f"active joint '{self.model.active_joint_names[-1 - measured]}' is missing or not "
                             "finite")
        model, q_tr, qa = self.model, self._spare, qs[:N]
        if fast_path(cl.solve_one, model._K, model.loops.LK, qa, self._guess, q_tr) != 0:
            try:
                q_tr[:] = solve_loops(model, qa, self._guess)
            except LoopClosureError as exc:
                raise StateError(f"the loops do not close at the measured state: {exc}") from None
        j = kernels.passive_gap(qs, N, self._passive, q_tr, self._revolute, self.loop_tolerance) if measured else -1
        if j >= 0:
            k = self._passive[j]
            diff = _wrap(qs[N + j] - q_tr[k], self._revolute[k])
            raise StateError(f"passive joint '{self.model.joint_names[k]}' is measured at {qs[N + j]:.6g} but the "
                             f"closed loop puts it at {q_tr[k]:.6g} (off by {abs(diff):.3g}, loop_tolerance "
                             f"{self.loop_tolerance:g})")
        if not self._identity:
            self._count_ignored(q, q_tr)
        self._accept(q_tr, qs[:N], qds[:N])

    def _active_first(self, q, qd):
        """(qs, qds): every active joint in the model's order (the uncontrolled ones measured, else held),
        then the passive joints of the loops that controlled joints drive (NaN for the others: their
        published positions neither warm-start nor reject)."""
        N, Nc = len(self._active), len(self._pos_c)
        i = kernels.first_nonfinite(q, qd, Nc)
        if i >= 0:
            raise StateError(f"controlled joint '{self.joint_names[i]}' is missing or not finite")
        qs = np.concatenate([self._qa_all, np.where(self._checked, q[N:], np.nan)])
        qds = np.concatenate([self._qda_all, np.zeros(len(self._passive))])
        qs[self._pos_c], qds[self._pos_c] = q[:Nc], qd[:Nc]
        u, du = q[Nc:N], qd[Nc:N]
        qs[self._pos_u] = np.where(np.isfinite(u), u, qs[self._pos_u])
        qds[self._pos_u] = np.where(np.isfinite(du), du, qds[self._pos_u])
        return qs, qds

    def _count_ignored(self, q, q_tr):
        N = len(self._active)
        x = q[N:]
        off = np.isfinite(x) & ~self._checked
        if off.any():
            d = np.abs(_wrap(x - q_tr[self._passive], self._revolute[self._passive]))
            self._ignored += off & (d > self.loop_tolerance)

    def _accept(self, q_tr, qa_all, qda_all):
        """The closed configuration (in the spare buffer) and the active state become the state."""
        self._spare, self._q = self._q, q_tr
        self._qa_all, self._qda_all = np.array(qa_all), np.array(qda_all)
        if self._identity:
            self._qa, self._qda = self._qa_all, self._qda_all
        else:
            self._qa, self._qda = self._qa_all[self._pos_c], self._qda_all[self._pos_c]

    def _fused_step(self, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, friction, qdd, out):
        """computed_torque in one compiled call (_fused.py) when every active joint is controlled: the loops
        closed into the spare buffer, swapped in on success."""
        if not self._identity:
            return NOT_DIRECT
        model = self.model
        st = self._fused(model._K, model.loops.LK, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, FRICTION if friction else 0,
                         self._passive, self._revolute, self.loop_tolerance, self._q, self._guess, qdd, out,
                         self._spare)
        if st == 0:
            N = self._active.shape[0]
            self._accept(self._spare, q[:N], qd[:N])
        return st

    @property
    def q(self):
        return self._qa

    @property
    def qd(self):
        return self._qda

    @property
    def q_tree(self):
        """The closed tree configuration (n,) of the state last set, ``model.joint_names`` order."""
        return self._q

    @property
    def ignored_passive(self):
        """{passive joint: in how many states set (cycles) its published position was off the closed loop
        by more than ``loop_tolerance``, in a loop no controlled joint drives, and ignored} (none left out)."""
        names = self.model.joint_names
        return {names[k]: int(c) for k, c in zip(self._passive, self._ignored) if c}

    # ------------------------------------------------------------ dynamics at the state last set
    def _controlled(self, tau_all, out):
        out[:] = tau_all[self._pos_c]
        return out

    def inverse_dynamics(self, qdd, friction, out):
        if self._identity:
            return closed_loop_inverse_dynamics(self.model, self._qa, self._qda, qdd, self._q, friction=friction,
                                                q_out=self._spare, out=out)
        qdd_all = np.zeros(len(self._active))
        qdd_all[self._pos_c] = qdd
        return self._controlled(closed_loop_inverse_dynamics(self.model, self._qa_all, self._qda_all, qdd_all, self._q,
                                                             friction=friction, q_out=self._spare), out)

    def gravity_torques(self, out):
        return self._controlled(closed_loop_gravity_torques(self.model, self._qa_all, self._q), out)

    def coriolis_torques(self, out):
        return self._controlled(closed_loop_coriolis_torques(self.model, self._qa_all, self._qda_all, self._q), out)

    def friction_torques(self, out):
        """G^T (Fs sign(qd_tr) + Fv qd_tr): the friction of every tree joint, projected (eq. 55)."""
        G = loop_jacobian(self.model, self._q)
        qd = G @ self._qda_all
        return self._controlled(G.T @ (self._Fs * np.sign(qd) + self._Fv * qd), out)

    def mass_matrix(self):
        """A_c restricted to the controlled joints (the uncontrolled ones held)."""
        A = closed_loop_mass_matrix(self.model, self._qa_all, self._q)
        return A[np.ix_(self._pos_c, self._pos_c)]

    def forward_dynamics(self, tau):
        """Controlled accelerations under ``tau`` (the uncontrolled active joints held), friction included."""
        if self._identity:
            return closed_loop_forward_dynamics(self.model, self._qa, self._qda, tau, self._q, friction=True)
        h = self.inverse_dynamics(np.zeros(self.n), True, np.zeros(self.n))
        return np.linalg.solve(self.mass_matrix(), np.asarray(tau, float) - h)

    # ------------------------------------------------------------ simulation (rne_sim)
    def _sim_active(self, q, qd):
        """Every active joint (model order): the simulated (controlled) ones at q, qd, the others held."""
        qa, qda = np.array(self._held[self._active]), np.zeros(len(self._active))
        qa[self._pos_c], qda[self._pos_c] = q, qd
        return qa, qda

    def sim_acceleration(self, q, qd, tau):
        """Controlled accelerations at the controlled state (q, qd), the uncontrolled active joints held at
        their locked positions; each loop solve warm-started from the last one."""
        if self._identity:
            return closed_loop_forward_dynamics(self.model, q, qd, tau, self._sim_q, friction=self.sim_friction,
                                                q_out=self._sim_q)
        qa, qda = self._sim_active(q, qd)
        h = closed_loop_inverse_dynamics(self.model, qa, qda, np.zeros(len(qa)), self._sim_q,
                                         friction=self.sim_friction, q_out=self._sim_q)
        A = closed_loop_mass_matrix(self.model, qa, self._sim_q)
        c = self._pos_c
        return np.linalg.solve(A[np.ix_(c, c)], np.asarray(tau, float) - h[c])

    def sim_joint_states(self, q, qd):
        """The controlled joints and the passive joints of their loops (solved)."""
        qa, qda = self._sim_active(q, qd)
        q_tr = solve_loops(self.model, qa, self._sim_q)
        self._sim_q[:] = q_tr
        qd_tr = loop_jacobian(self.model, q_tr) @ qda
        order = np.concatenate([self._active[self._pos_c], self._passive[self._checked]])
        names = self.joint_names + tuple(self.model.joint_names[k] for k in self._passive[self._checked])
        return names, q_tr[order], qd_tr[order]

    def held_joint_states(self):
        """(names, positions) of the uncontrolled joints at their locked positions (the passive joints of
        their loops closed), for a simulator that publishes them too."""
        order = np.concatenate([self._active[self._pos_u], self._passive[~self._checked]])
        return tuple(self.model.joint_names[k] for k in order), self._held[order]
