"""The Plant of a tree with lumped elasticity (Khalil 2010, §6): controlled coordinates are its rigid joints.

The state read from ``/joint_states`` is every joint: the rigid (actuated) joints and the elastic and
free passive ones, all required (an elastic joint's position and velocity come from e.g. a link-side
encoder; a missing one makes the state invalid, :class:`StateError`). The torques are those of the rigid
joints from one :func:`rne_control.elastic_inverse_dynamics` call with the commanded rigid accelerations;
the elastic joints then accelerate as that call says, which :meth:`ElasticPlant.extra_state` reports
with their deflections. The simulator integrates every joint with
:func:`rne_control.elastic_forward_dynamics` (springs, dampers, friction).
"""
import numpy as np

from ...dynamics.api import gravity_torques, mass_matrix
from ...dynamics.elastic_api import (elastic_coriolis_torques, elastic_forward_dynamics,
                                     elastic_inverse_dynamics)
from ..plant import Plant, StateError, first_missing, joint_friction, payload_links


class ElasticPlant(Plant):
    """A model with elastic (or free passive) joints; a rigid tree also works, with none."""

    kind = "elastic"

    def __init__(self, model):
        self.model = model
        self.name = model.name
        self._r, self._u, self._e = (np.array(model.rigid_index), np.array(model.unactuated_index),
                                     np.array(model.elastic_index))
        self.joint_names = model.rigid_joint_names
        self.state_names = model.rigid_joint_names + model.unactuated_joint_names
        self.required_names = self.state_names
        self.sim_names = model.joint_names
        self._order = np.concatenate([self._r, self._u]).astype(int)   # state_names -> joint_names
        self.effort_limits = np.array(model.effort_limits[self._r])
        self.velocity_limits = np.array(model.velocity_limits[self._r])
        self.position_limits = np.array(model.position_limits[self._r])
        self.link_names = payload_links(model)
        Fs, Fv = joint_friction(model)
        self._Fs, self._Fv = Fs[self._r], Fv[self._r]
        self._gravity0 = np.array(model.gravity)
        self._q, self._qd = np.zeros(model.n), np.zeros(model.n)
        self._q[self._e] = model.elastic_rest_position
        self.initial_state = self._q[self._order]      # rigid joints at zero, elastic ones at rest
        self._qdd_u = np.zeros(len(self._u))     # passive accelerations of the last torque computed
        self._zero_r, self._zero = np.zeros(len(self._r)), np.zeros(model.n)

    def complete_sim_positions(self, q_ctrl):
        """Every joint from the rigid ones: each elastic joint at its static deflection under gravity with
        the rigid joints held, -K (q_e - q0) = g_e(q) (a fixed-point iteration; free passive joints at 0)."""
        m = self.model
        q = np.zeros(m.n)
        q[self._r] = q_ctrl
        q[self._e] = m.elastic_rest_position
        K = np.asarray(m.elastic_stiffness, float)
        soft = K > 0
        for _ in range(50):
            g = gravity_torques(m, q)[self._e]
            new = np.where(soft, m.elastic_rest_position - g / np.where(soft, K, 1.0), q[self._e])
            done = np.max(np.abs(new - q[self._e]), initial=0.0) < 1e-13
            q[self._e] = new
            if done:
                break
        return q

    # ------------------------------------------------------------ state
    def set_state(self, q, qd):
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        ns = len(self.state_names)
        if q.shape != (ns,) or qd.shape != (ns,):
            raise StateError(f"state must have {ns} positions and velocities ({list(self.state_names)}), "
                             f"got {q.shape} and {qd.shape}")
        i = first_missing(q, qd, ns)
        if i >= 0:
            kind = "rigid" if i < len(self._r) else "elastic or passive"
            raise StateError(f"{kind} joint '{self.state_names[i]}' is missing from the joint state or not finite "
                             "(position and velocity are required)")
        self._q[self._order], self._qd[self._order] = q, qd

    @property
    def q(self):
        return self._q[self._r]

    @property
    def qd(self):
        return self._qd[self._r]

    @property
    def q_all(self):
        """Positions of every joint (``model.joint_names`` order) of the state last set."""
        return self._q

    # ------------------------------------------------------------ dynamics at the state last set
    def inverse_dynamics(self, qdd, friction, out):
        tau, self._qdd_u[:] = elastic_inverse_dynamics(self.model, self._q, self._qd, qdd, friction=friction)
        out[:] = tau
        return out

    def gravity_torques(self, out):
        """Gravity and the springs at the measured deflections, rigid joints held still
        (:func:`rne_control.elastic_gravity_torques`)."""
        tau, self._qdd_u[:] = elastic_inverse_dynamics(self.model, self._q, self._zero, self._zero_r,
                                                       friction=False)
        out[:] = tau
        return out

    def coriolis_torques(self, out):
        """Velocity terms, the elastic dampers' effect included (:func:`rne_control.elastic_coriolis_torques`)."""
        out[:] = elastic_coriolis_torques(self.model, self._q, self._qd)
        return out

    def friction_torques(self, out):
        qd = self._qd[self._r]
        out[:] = self._Fs * np.sign(qd) + self._Fv * qd
        return out

    def mass_matrix(self):
        """A11 - A12 A22^-1 A12^T (eq. 68): the inertia the rigid joints feel with the passive ones free."""
        A = mass_matrix(self.model, self._q)
        r, u = self._r, self._u
        A12 = A[np.ix_(r, u)]
        return A[np.ix_(r, r)] - A12 @ np.linalg.solve(A[np.ix_(u, u)], A12.T)

    def forward_dynamics(self, tau):
        return elastic_forward_dynamics(self.model, self._q, self._qd, tau)[self._r]

    # ------------------------------------------------------------ simulation (rne_sim)
    def sim_acceleration(self, q, qd, tau):
        """Accelerations of every joint (``sim_names`` = ``model.joint_names``) under the rigid torques."""
        return elastic_forward_dynamics(self.model, q, qd, tau, friction=self.sim_friction)

    def sim_joint_states(self, q, qd):
        return self.sim_names, np.asarray(q, float), np.asarray(qd, float)

    def extra_state(self):
        """``elastic_deflection`` q - q0 (rad or m) and ``elastic_acceleration`` (rad/s^2 or m/s^2) of the
        elastic joints (``model.elastic_joint_names`` order): the accelerations that the torques of the last
        :meth:`inverse_dynamics` or :meth:`gravity_torques` call give them."""
        m = self.model
        pos = np.searchsorted(self._u, self._e)     # elastic joints among the passive ones
        return {"elastic_deflection": self._q[self._e] - m.elastic_rest_position,
                "elastic_acceleration": self._qdd_u[pos].copy()}
