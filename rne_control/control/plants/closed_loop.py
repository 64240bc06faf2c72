"""The Plant of a closed-loop robot (Khalil 2010, §4): controlled coordinates are its active joints.

The state read from ``/joint_states`` is the active joints (required) and the passive ones (optional).
:meth:`ClosedLoopPlant.set_state` closes the loops for the measured active joints, warm-started from
the last solution with any measured passive joint put in; a measured passive joint that differs from
the closed solution by more than ``loop_tolerance`` (rad or m) makes the state inconsistent
(:class:`StateError`). Passive velocities are not read: they are G qd_a (eq. 56). Every dynamics call
is one closed-loop library call on the model (the tree's RNE, gravity or CRBA projected by G^T).

:meth:`~ClosedLoopPlant.set_state` solves the loops with the library's kernel itself, into a spare
buffer that it swaps in once the state is accepted (a rejected state leaves the last one); a non-zero
kernel status takes :func:`~rne_control.solve_loops`, which raises the error that status stands for. In
computed torque, :meth:`~ClosedLoopPlant.computed_torque` closes the loops, takes the law's acceleration
and computes Gamma_c in one compiled call (``control/_fused.py``).
"""
import numpy as np

from ...dynamics import closed_loop as cl
from ...dynamics.calls import prepare
from ...dynamics.closed_loop_api import (KERNELS, LoopClosureError, closed_loop_coriolis_torques,
                                         closed_loop_forward_dynamics, closed_loop_gravity_torques,
                                         closed_loop_inverse_dynamics, closed_loop_mass_matrix, loop_jacobian,
                                         solve_loops)
from ...dynamics.spatial import FRICTION, JTYPE, QIDX, REVOLUTE
from .. import _kernels as K
from .._fused import closed_loop_computed_torque, ready
from ..plant import Plant, StateError, joint_friction, payload_links

DEFAULT_LOOP_TOLERANCE = 0.01


class ClosedLoopPlant(Plant):
    """A closed-loop model (``model.is_closed_loop``; a tree also works, with no passive joint).

    ``loop_tolerance`` (rad or m): how far a measured passive joint may be from the closed solution.
    """

    kind = "closed_loop"

    def __init__(self, model, loop_tolerance=DEFAULT_LOOP_TOLERANCE):
        if not (np.isfinite(loop_tolerance) and loop_tolerance > 0):
            raise ValueError(f"loop_tolerance must be a positive number (rad or m), got {loop_tolerance!r}")
        self.model = model
        self.name = model.name
        self.loop_tolerance = float(loop_tolerance)
        self._active = np.array(model.loops.active)
        self._passive = np.array(model.loops.passive, dtype=np.int64)
        self.joint_names = model.active_joint_names
        self.state_names = model.active_joint_names + model.passive_joint_names
        self.required_names = self.joint_names
        self.sim_names = self.joint_names
        self.effort_limits = np.array(model.effort_limits[self._active])
        self.velocity_limits = np.array(model.velocity_limits[self._active])
        self.position_limits = np.array(model.position_limits[self._active])
        self.link_names = payload_links(model)
        tree = np.asarray(model.tree)
        self._Fs, self._Fv = joint_friction(model)
        self._revolute = np.zeros(model.n, bool)
        self._revolute[tree[:, QIDX].astype(int)] = tree[:, JTYPE] == REVOLUTE
        self._gravity0 = np.array(model.gravity)
        self._q = np.array(model.loops.q_ref)          # the closed tree configuration of the last state
        self._qa = np.array(self._q[self._active])
        self._qda = np.zeros(len(self._active))
        self._guess = np.empty(model.n)                # the next solve's warm start
        self._spare = np.empty(model.n)                # the next solve's output (scratch between solves)
        prepare(cl.solve_one, [KERNELS["solve"][1]])
        self._ct = ready(closed_loop_computed_torque)
        self._sim_q = np.array(model.loops.q_ref)      # warm start of the simulation's loop solves
        # before any measurement: the active joints of the reference closure, the passive ones unknown
        self.initial_state = np.r_[self._qa, np.full(len(self._passive), np.nan)]

    # ------------------------------------------------------------ state
    def set_state(self, q, qd):
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        N, ns = len(self._active), len(self.state_names)
        if q.shape != (ns,) or qd.shape != (ns,):
            raise StateError(f"state must have {ns} positions and velocities ({list(self.state_names)}), "
                             f"got {q.shape} and {qd.shape}")
        measured = K.loop_guess(q, qd, N, self._passive, self._q, self._guess)
        if measured < 0:
            raise StateError(f"active joint '{self.state_names[-1 - measured]}' is missing or not finite")
        model, q_tr, qa = self.model, self._spare, q[:N]
        try:  # the kernel takes C-contiguous float64 arrays only (TypeError otherwise)
            st = cl.solve_one(model._K, model.loops.LK, qa, self._guess, q_tr)
        except TypeError:
            st = -1
        if st != 0:
            try:
                q_tr[:] = solve_loops(model, qa, self._guess)
            except LoopClosureError as exc:
                raise StateError(f"the loops do not close at the measured state: {exc}") from None
        j = K.passive_gap(q, N, self._passive, q_tr, self._revolute, self.loop_tolerance) if measured else -1
        if j >= 0:
            k = self._passive[j]
            diff = q[N + j] - q_tr[k]
            if self._revolute[k]:
                diff = (diff + np.pi) % (2 * np.pi) - np.pi
            raise StateError(f"passive joint '{self.state_names[N + j]}' is measured at {q[N + j]:.6g} but the "
                             f"closed loop puts it at {q_tr[k]:.6g} (off by {abs(diff):.3g}, loop_tolerance "
                             f"{self.loop_tolerance:g})")
        self._spare, self._q, self._qa, self._qda = self._q, q_tr, qa.copy(), qd[:N].copy()

    def computed_torque(self, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, friction, qdd, out):
        """One compiled call (_fused.py): the loops closed into the spare buffer, swapped in on success."""
        model = self.model
        try:
            st = self._ct(model._K, model.loops.LK, q, qd, q_d, qd_d, qdd_d, kp, kd, scale,
                          FRICTION if friction else 0, self._passive, self._revolute, self.loop_tolerance, self._q,
                          self._guess, qdd, out, self._spare)
        except TypeError:  # not the kernel's argument types
            st = -1
        if st != 0:
            return Plant.computed_torque(self, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, friction, qdd, out)
        N = self._active.shape[0]
        self._spare, self._q, self._qa, self._qda = self._q, self._spare, q[:N].copy(), qd[:N].copy()
        return out

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

    # ------------------------------------------------------------ dynamics at the state last set
    def inverse_dynamics(self, qdd, friction, out):
        return closed_loop_inverse_dynamics(self.model, self._qa, self._qda, qdd, self._q, friction=friction,
                                            q_out=self._spare, out=out)

    def gravity_torques(self, out):
        out[:] = closed_loop_gravity_torques(self.model, self._qa, self._q)
        return out

    def coriolis_torques(self, out):
        out[:] = closed_loop_coriolis_torques(self.model, self._qa, self._qda, self._q)
        return out

    def friction_torques(self, out):
        """G^T (Fs sign(qd_tr) + Fv qd_tr): the friction of every tree joint, projected (eq. 55)."""
        G = loop_jacobian(self.model, self._q)
        qd = G @ self._qda
        out[:] = G.T @ (self._Fs * np.sign(qd) + self._Fv * qd)
        return out

    def mass_matrix(self):
        return closed_loop_mass_matrix(self.model, self._qa, self._q)

    def forward_dynamics(self, tau):
        return closed_loop_forward_dynamics(self.model, self._qa, self._qda, tau, self._q, friction=True)

    # ------------------------------------------------------------ simulation (rne_sim)
    def sim_acceleration(self, q, qd, tau):
        """Active accelerations at the active state (q, qd), warm-starting each solve from the last one."""
        return closed_loop_forward_dynamics(self.model, q, qd, tau, self._sim_q, friction=self.sim_friction,
                                            q_out=self._sim_q)

    def sim_joint_states(self, q, qd):
        q_tr = solve_loops(self.model, q, self._sim_q)
        self._sim_q[:] = q_tr
        qd_tr = loop_jacobian(self.model, q_tr) @ np.asarray(qd, float)
        order = np.concatenate([self._active, self._passive])
        return self.state_names, q_tr[order], qd_tr[order]
