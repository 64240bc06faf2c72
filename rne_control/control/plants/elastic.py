"""The Plant of a tree with lumped elasticity (Khalil 2010, §6): controlled coordinates are rigid joints.

``joints`` is any subset of the rigid (actuated) joints (default: all, in the model's order). The state
read from ``/joint_states`` is the controlled joints and the elastic and free passive ones, all required
(an elastic joint's position and velocity come from e.g. a link-side encoder; a missing one makes the
state invalid, :class:`StateError`), and the uncontrolled rigid joints (optional: measured, else held at
their last, initially their ``locked`` position, at rest, with zero acceleration). The torques are those
of the controlled joints from one :func:`rne_control.elastic_inverse_dynamics` call with the commanded
accelerations; the elastic joints then accelerate as that call says, which
:meth:`ElasticPlant.extra_state` reports with their deflections. The simulator integrates the controlled
and the passive joints (springs, dampers, friction), the uncontrolled rigid ones held.
"""
import numpy as np

from ...dynamics.api import gravity_torques, inverse_dynamics as tree_inverse_dynamics, mass_matrix
from ...dynamics.elastic.api import (elastic_coriolis_torques, elastic_forward_dynamics,
                                     elastic_inverse_dynamics)
from ..plant import Plant, StateError, choose_joints, first_missing, joint_friction, payload_links


class ElasticPlant(Plant):
    """A model with elastic (or free passive) joints; a rigid tree also works, with none."""

    kind = "elastic"

    def __init__(self, model, joints=None, locked=None):
        rigid, names = model.rigid_joint_names, model.joint_names
        joints, uncontrolled, locked = choose_joints(model, rigid, joints, locked, lambda bad: (
            f"joints {bad} of model {model.name!r} are elastic or passive: they have no actuator of their own "
            f"(their springs and the rigid joints move them); control rigid joints {list(rigid)}"))
        self.model = model
        self.name = model.name
        self._r, self._u, self._e = (np.array(model.rigid_index), np.array(model.unactuated_index),
                                     np.array(model.elastic_index))
        self._pos_c = np.array([rigid.index(j) for j in joints], dtype=np.int64)   # among the rigid joints
        self._pos_h = np.array([rigid.index(j) for j in uncontrolled], dtype=np.int64)
        self._identity = tuple(joints) == tuple(rigid)
        self.joint_names = tuple(joints)
        self.state_names = tuple(joints) + tuple(uncontrolled) + model.unactuated_joint_names
        self.required_names = tuple(joints) + model.unactuated_joint_names
        self.sim_names = names if self._identity else tuple(joints) + model.unactuated_joint_names
        # state_names -> joint_names
        self._order = np.array([names.index(j) for j in self.state_names], dtype=int)
        self._sim_order = np.array([names.index(j) for j in self.sim_names], dtype=int)
        c = self._r[self._pos_c]
        self.effort_limits = np.array(model.effort_limits[c])
        self.velocity_limits = np.array(model.velocity_limits[c])
        self.position_limits = np.array(model.position_limits[c])
        self.link_names = payload_links(model)
        self._Fs, self._Fv = joint_friction(model)
        self._gravity0 = np.array(model.gravity)
        self._q, self._qd = np.zeros(model.n), np.zeros(model.n)
        self._q[self._e] = model.elastic_rest_position
        for j, v in locked.items():
            self._q[names.index(j)] = float(v)
        self._held = np.array(self._q)                 # uncontrolled rigid joints at their locked positions
        self.initial_state = self._q[self._order]      # rigid joints at zero (or locked), elastic ones at rest
        self._qdd_u = np.zeros(len(self._u))     # passive accelerations of the last torque computed
        self._zero_r, self._zero = np.zeros(len(self._r)), np.zeros(model.n)

    def complete_sim_positions(self, q_ctrl):
        """The simulated joints (``sim_names``) from the controlled ones: the uncontrolled rigid joints at their
        locked positions, each elastic joint at its static deflection under gravity with the rigid joints held,
        -K (q_e - q0) = g_e(q) (a fixed-point iteration; free passive joints at 0)."""
        m = self.model
        q = np.array(self._held)
        q[self._r[self._pos_c]] = q_ctrl
        K = np.asarray(m.elastic_stiffness, float)
        soft = K > 0
        for _ in range(50):
            g = gravity_torques(m, q)[self._e]
            new = np.where(soft, m.elastic_rest_position - g / np.where(soft, K, 1.0), q[self._e])
            done = np.max(np.abs(new - q[self._e]), initial=0.0) < 1e-13
            q[self._e] = new
            if done:
                break
        return q[self._sim_order]

    # ------------------------------------------------------------ state
    def set_state(self, q, qd):
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        ns, nc = len(self.state_names), self.n
        if q.shape != (ns,) or qd.shape != (ns,):
            raise StateError(f"state must have {ns} positions and velocities ({list(self.state_names)}), "
                             f"got {q.shape} and {qd.shape}")
        nh = len(self._pos_h)
        required = np.r_[0:nc, nc + nh:ns]
        i = first_missing(q[required], qd[required], len(required))
        if i >= 0:
            j = required[i]
            kind = "rigid" if j < nc else "elastic or passive"
            raise StateError(f"{kind} joint '{self.state_names[j]}' is missing from the joint state or not finite "
                             "(position and velocity are required)")
        if nh:   # an uncontrolled rigid joint not measured holds its last position and velocity
            h = self._order[nc:nc + nh]
            q, qd = q.copy(), qd.copy()
            q[nc:nc + nh] = np.where(np.isfinite(q[nc:nc + nh]), q[nc:nc + nh], self._q[h])
            qd[nc:nc + nh] = np.where(np.isfinite(qd[nc:nc + nh]), qd[nc:nc + nh], self._qd[h])
        self._q[self._order], self._qd[self._order] = q, qd

    @property
    def q(self):
        return self._q[self._r[self._pos_c]]

    @property
    def qd(self):
        return self._qd[self._r[self._pos_c]]

    @property
    def q_all(self):
        """Positions of every joint (``model.joint_names`` order) of the state last set."""
        return self._q

    # ------------------------------------------------------------ dynamics at the state last set
    def _rigid(self, qdd):
        """Every rigid joint's acceleration: ``qdd`` at the controlled ones, zero at the others."""
        if self._identity:
            return qdd
        out = np.zeros(len(self._r))
        out[self._pos_c] = qdd
        return out

    def inverse_dynamics(self, qdd, friction, out):
        tau, self._qdd_u[:] = elastic_inverse_dynamics(self.model, self._q, self._qd, self._rigid(qdd),
                                                       friction=friction)
        out[:] = tau[self._pos_c]
        return out

    def gravity_torques(self, out):
        """Gravity and the springs at the measured deflections, rigid joints held still
        (:func:`rne_control.elastic_gravity_torques`)."""
        tau, self._qdd_u[:] = elastic_inverse_dynamics(self.model, self._q, self._zero, self._zero_r,
                                                       friction=False)
        out[:] = tau[self._pos_c]
        return out

    def coriolis_torques(self, out):
        """Velocity terms, the elastic dampers' effect included (:func:`rne_control.elastic_coriolis_torques`)."""
        out[:] = elastic_coriolis_torques(self.model, self._q, self._qd)[self._pos_c]
        return out

    def friction_torques(self, out):
        c = self._r[self._pos_c]
        qd = self._qd[c]
        out[:] = self._Fs[c] * np.sign(qd) + self._Fv[c] * qd
        return out

    def mass_matrix(self):
        """A_cc - A_cu A_uu^-1 A_uc (eq. 68, c the controlled and u the passive joints): the inertia the
        controlled joints feel with the passive ones free and the uncontrolled rigid ones held."""
        A = mass_matrix(self.model, self._q)
        c, u = self._r[self._pos_c], self._u
        Acu = A[np.ix_(c, u)]
        return A[np.ix_(c, c)] - Acu @ np.linalg.solve(A[np.ix_(u, u)], Acu.T)

    def forward_dynamics(self, tau):
        """Controlled accelerations under ``tau`` (the uncontrolled rigid joints held), friction included."""
        if self._identity:
            return elastic_forward_dynamics(self.model, self._q, self._qd, tau)[self._r]
        h = self.inverse_dynamics(np.zeros(self.n), True, np.zeros(self.n))
        return np.linalg.solve(self.mass_matrix(), np.asarray(tau, float) - h)

    # ------------------------------------------------------------ simulation (rne_sim)
    def sim_acceleration(self, q, qd, tau):
        """Accelerations of the simulated joints (``sim_names``) under the controlled torques: every joint
        when all rigid joints are controlled; else the controlled and passive ones, the uncontrolled rigid
        joints held at their locked positions (A_ff qdd_f = tau_f - h_f over the free joints f)."""
        m = self.model
        if self._identity:
            return elastic_forward_dynamics(m, q, qd, tau, friction=self.sim_friction)
        s = self._sim_order
        q_m, qd_m = np.array(self._held), np.zeros(m.n)
        q_m[s], qd_m[s] = q, qd
        tau_m = np.zeros(m.n)
        tau_m[self._r[self._pos_c]] = tau
        tau_m[self._e] = (-np.asarray(m.elastic_stiffness) * (q_m[self._e] - m.elastic_rest_position)
                          - np.asarray(m.elastic_damping) * qd_m[self._e])
        h = tree_inverse_dynamics(m, q_m, qd_m, self._zero, friction=self.sim_friction)
        A = mass_matrix(m, q_m)
        return np.linalg.solve(A[np.ix_(s, s)], tau_m[s] - h[s])

    def sim_joint_states(self, q, qd):
        return self.sim_names, np.asarray(q, float), np.asarray(qd, float)

    def held_joint_states(self):
        """(names, positions) of the uncontrolled rigid joints at their locked positions."""
        h = self._r[self._pos_h]
        return tuple(self.model.joint_names[k] for k in h), self._held[h]

    def extra_state(self):
        """``elastic_deflection`` q - q0 (rad or m) and ``elastic_acceleration`` (rad/s^2 or m/s^2) of the
        elastic joints (``model.elastic_joint_names`` order): the accelerations that the torques of the last
        :meth:`inverse_dynamics` or :meth:`gravity_torques` call give them."""
        m = self.model
        pos = np.searchsorted(self._u, self._e)     # elastic joints among the passive ones
        return {"elastic_deflection": self._q[self._e] - m.elastic_rest_position,
                "elastic_acceleration": self._qdd_u[pos].copy()}
