"""The Plant of a tree with lumped elasticity (Khalil 2010, §6): controlled coordinates are rigid joints.

``joints`` is any subset of the rigid (actuated) joints (default: all, in the model's order). The state
read from ``/joint_states`` is the controlled joints and the elastic and free passive ones, all required
(an elastic joint's position and velocity come from e.g. a link-side encoder; a missing one makes the
state invalid, :class:`StateError`), and the uncontrolled rigid joints (optional: measured, else held at
their last, initially their ``locked`` position, at rest, with zero acceleration). A ``<mimic>`` joint
(a gripper's second finger) follows its leader as in the tree plant (:mod:`~rne_control.control.tree_state`):
placed by its rule from the leader, measured or locked, whether or not it is published, a published
position off the rule by more than ``loop_tolerance`` ignored and counted (``ignored_passive``); its
leader must be an uncontrolled rigid joint (a mimic joint that a controlled joint drives is a closed loop,
and one tied to a spring has no rule for its acceleration: both refused). The torques are those
of the controlled joints from one :func:`rne_control.elastic_inverse_dynamics` call with the commanded
accelerations; the elastic joints then accelerate as that call says, which
:meth:`ElasticPlant.extra_state` reports with their deflections. The simulator integrates the controlled
and the passive joints (springs, dampers, friction), the uncontrolled rigid ones held.
"""
import numpy as np

from ...dynamics.api import gravity_torques, inverse_dynamics as tree_inverse_dynamics, mass_matrix
from ...dynamics.elastic.api import (elastic_coriolis_torques, elastic_forward_dynamics,
                                     elastic_inverse_dynamics)
from ...model.layout import JTYPE, QIDX, REVOLUTE
from ...model.loops import mimic_roots
from .. import tree_state as ts
from ..plant import (DEFAULT_LOOP_TOLERANCE, Plant, StateError, choose_joints, first_missing, joint_friction,
                     payload_links)
from .tree import _vector, driven_mimic_joints, mimic_rules


class ElasticPlant(Plant):
    """A model with elastic (or free passive) joints; a rigid tree also works, with none."""

    kind = "elastic"

    def __init__(self, model, joints=None, locked=None, loop_tolerance=DEFAULT_LOOP_TOLERANCE):
        rigid, names = model.rigid_joint_names, model.joint_names
        rules = _mimic_rules(model)
        joints, uncontrolled, locked = choose_joints(model, [j for j in rigid if j not in rules], joints, locked,
                                                     lambda bad: _not_controllable(model, bad, rules))
        driven = driven_mimic_joints(model, joints)
        if driven:
            raise ValueError(f"model {model.name!r} has elastic joints {list(model.elastic_joint_names)} and mimic "
                             f"joints {driven} that controlled joints {sorted({rules[f][0] for f in driven})} drive "
                             "(a closed loop): that combination is not supported; leave their leaders uncontrolled "
                             "(measured, else locked)")
        followers = [j for j in names if j in rules]
        self.model = model
        self.name = model.name
        self.loop_tolerance = float(loop_tolerance)
        self._r, self._u, self._e = (np.array(model.rigid_index), np.array(model.unactuated_index),
                                     np.array(model.elastic_index))
        self._pos_c = np.array([rigid.index(j) for j in joints], dtype=np.int64)   # among the rigid joints
        self._pos_h = np.array([rigid.index(j) for j in uncontrolled], dtype=np.int64)
        self._identity = tuple(joints) == tuple(rigid)
        self.joint_names = tuple(joints)
        self.state_names = tuple(joints) + tuple(uncontrolled) + tuple(followers) + model.unactuated_joint_names
        self.required_names = tuple(joints) + model.unactuated_joint_names
        self.sim_names = names if self._identity else tuple(joints) + model.unactuated_joint_names
        # state_names -> joint_names
        self._order = np.array([names.index(j) for j in self.state_names], dtype=np.int64)
        self._sim_order = np.array([names.index(j) for j in self.sim_names], dtype=int)
        nc, nh, ns = len(joints), len(uncontrolled) + len(followers), len(self.state_names)
        self._required = np.r_[0:nc, nc + nh:ns].astype(np.int64)
        self._held_index = self._order[nc:nc + nh]      # uncontrolled rigid joints, then mimic joints
        c = self._r[self._pos_c]
        self.effort_limits = np.array(model.effort_limits[c])
        self.velocity_limits = np.array(model.velocity_limits[c])
        self.position_limits = np.array(model.position_limits[c])
        self.link_names = payload_links(model)
        self._Fs, self._Fv = joint_friction(model)
        self._gravity0 = np.array(model.gravity)
        q0 = np.zeros(model.n)
        q0[self._e] = model.elastic_rest_position
        for j, v in locked.items():
            q0[names.index(j)] = float(v)
        # the state completion (tree_state.complete: the uncontrolled joints measured or held, the mimic joints
        # by their rules) into model-order rows of _work; _q, _qd are views of them
        tree = np.asarray(model.tree)
        revolute = np.zeros(model.n, bool)
        revolute[tree[:, QIDX].astype(int)] = tree[:, JTYPE] == REVOLUTE
        self._mimic = [(names.index(f), names.index(r), m, o) for f, (r, m, o) in rules.items()]
        self._state = ts.TreeState(self._order, np.arange(model.n, dtype=np.int64), c.astype(np.int64),
                                   self._mimic, revolute, q0, self.loop_tolerance)
        self._plan, self._work = self._state.plan, self._state.work
        self._q, self._qd = self._state.q_model, self._state.qd_model
        self._held = np.array(self._q)   # uncontrolled rigid joints at their locked positions, mimic joints by rule
        self.initial_state = self._q[self._order]      # rigid joints at zero (or locked), elastic ones at rest
        self.initial_state[nc + len(uncontrolled):nc + nh] = np.nan   # mimic joints: solved, not assumed
        self._qdd_u = np.zeros(len(self._u))     # passive accelerations of the last torque computed
        self._zero_r, self._zero = np.zeros(len(self._r)), np.zeros(model.n)
        ts.prepare()

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
        q, qd = _vector(q), _vector(qd)
        ns, nc = len(self.state_names), self.n
        if q.shape != (ns,) or qd.shape != (ns,):
            raise StateError(f"state must have {ns} positions and velocities ({list(self.state_names)}), "
                             f"got {q.shape} and {qd.shape}")
        required = self._required
        i = first_missing(q[required], qd[required], len(required))
        if i >= 0:
            j = required[i]
            kind = "rigid" if j < nc else "elastic or passive"
            raise StateError(f"{kind} joint '{self.state_names[j]}' is missing from the joint state or not finite "
                             "(position and velocity are required)")
        ts.complete(q, qd, self._plan, self._work)

    @property
    def ignored_passive(self):
        """{mimic joint: in how many states set (cycles) its published position was off its rule by more
        than ``loop_tolerance`` and ignored} (joints with none left out)."""
        names = self.model.joint_names
        return {names[f]: int(n) for (f, _, _, _), n in zip(self._mimic, self._state.ignored) if n}

    @property
    def q(self):
        return self._state.q_ctrl

    @property
    def qd(self):
        return self._state.qd_ctrl

    @property
    def q_all(self):
        """Positions of every joint (``model.joint_names`` order) of the state last set, mimic joints by their
        rules."""
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
        """(names, positions) of the uncontrolled rigid joints at their locked positions, then the mimic joints
        by their rules."""
        h = self._held_index
        return tuple(self.model.joint_names[k] for k in h), self._held[h]

    def extra_state(self):
        """``elastic_deflection`` q - q0 (rad or m) and ``elastic_acceleration`` (rad/s^2 or m/s^2) of the
        elastic joints (``model.elastic_joint_names`` order): the accelerations that the torques of the last
        :meth:`inverse_dynamics` or :meth:`gravity_torques` call give them."""
        m = self.model
        pos = np.searchsorted(self._u, self._e)     # elastic joints among the passive ones
        return {"elastic_deflection": self._q[self._e] - m.elastic_rest_position,
                "elastic_acceleration": self._qdd_u[pos].copy()}


def _mimic_rules(model):
    """{follower: (root, multiplier, offset)} of the model's mimic joints (none without), each tied to the first
    leader up its chain; ValueError for cut loops and for a mimic joint or root that is elastic or passive."""
    if len(model.loops.cut):
        raise ValueError(f"model {model.name!r} has both elastic joints {list(model.elastic_joint_names)} and closed "
                         f"loops (cut joints {list(model.cut_joint_names)}): that combination is not supported")
    rules = mimic_roots(mimic_rules(model))
    passive = set(model.unactuated_joint_names)
    bad = sorted({j for f, (r, _, _) in rules.items() for j in (f, r) if j in passive})
    if bad:
        raise ValueError(f"joints {bad} of model {model.name!r} are elastic or passive and in a <mimic> coupling "
                         f"({', '.join(f'{f} follows {r}' for f, (r, _, _) in rules.items())}): a mimic joint and "
                         "its leader must be rigid; that combination is not supported")
    return rules


def _not_controllable(model, bad, rules):
    """Why joints ``bad`` of an elastic model cannot be controlled (choose_joints' message)."""
    mimic = [j for j in bad if j in rules]
    passive = [j for j in bad if j not in rules]
    why = []
    if passive:
        why.append(f"joints {passive} of model {model.name!r} are elastic or passive: they have no actuator of their "
                   "own (their springs and the rigid joints move them)")
    springs = [j for j in passive if j in model.elastic_joint_names]
    if springs:
        why.append(f"to model a series-elastic drive (a motor turning the link through the spring) instead, give "
                   f"the URDF joint a rotor inertia too (load_urdf elastic {{'{springs[0]}': {{..., 'rotor_inertia': "
                   f"Ia}}}}, the nodes' elastic.{springs[0]}.rotor_inertia: kg m^2): it then stays controlled (the "
                   f"gear output) and {springs[0]}_deflection is its spring; in a DH file, write the drive as two "
                   "links (config/arm7_elastic.yaml)")
    if mimic:
        why.append(f"joints {mimic} of model {model.name!r} are <mimic> joints: they follow their leaders "
                   f"{[rules[j][0] for j in mimic]}, uncontrolled in a model with elastic joints")
    leaders = {r for r, _, _ in rules.values()}
    rigid = [j for j in model.rigid_joint_names if j not in rules and j not in leaders]
    return "; ".join(why) + f"; control rigid joints {rigid}" + (f" (mimic leaders {sorted(leaders)} stay "
                                                                 "uncontrolled)" if leaders else "")
