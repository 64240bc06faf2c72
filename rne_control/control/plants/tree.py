"""The Plant of a tree robot on a fixed, moving or free-floating base (Featherstone's RNE; Khalil 2010 §3, §7).

Controlled coordinates are ``joints`` (all movable joints by default, or any subset of the actuated ones,
in any order). The rest of the mechanism is uncontrolled: an uncontrolled joint takes its measured
position and velocity from the state, else keeps its last (initially its ``locked`` position, at rest),
and is given zero acceleration; a ``<mimic>`` joint (whose chain of leaders holds no controlled joint:
make_plant gives the others to the closed-loop plant) follows its leader, measured or locked, through its
rule, and a published position of it off that rule is ignored and counted (``ignored_passive``). See
:mod:`rne_control.control.tree_state`. Torques are those of the controlled joints.

On a fixed base the dynamics run on the model restricted to what the controlled torques depend on (the
controlled joints, the joints between them and the base, their subtrees): the other arm of a two-armed
robot, its head or its legs cost nothing per cycle; a gripper on the controlled arm (from FOLD_FROM
passenger joints on) costs nothing while it is at rest, its subtree folded into one composite body. On a
floating base every body counts.

Bases (``set_base``), with the measured :class:`~rne_control.control.laws.BaseState`:

- ``fixed``: :func:`rne_control.inverse_dynamics` and its gravity-only and Coriolis-only variants;
- ``moving``: :func:`rne_control.moving_base_inverse_dynamics` with the measured base twist and
  acceleration (the gravity torques hold the joints still on the accelerating base; the Coriolis torques
  keep the base twist but neither gravity nor base acceleration);
- ``free_floating``: :func:`rne_control.free_floating_inverse_dynamics`, the base twist measured
  (``base_velocity_source = "odometry"``) or from zero total momentum (``"momentum"``); gravity does not
  act. ``last_base_output`` holds the base wrench (moving) or base acceleration (free-floating) of the
  last call.
"""
import numpy as np

from ...dynamics import api
from ...dynamics.floating import api as fl
from ...dynamics.direct import NOT_DIRECT
from ...dynamics.primitives import FRICTION
from ...model.layout import JTYPE, PARENT, QIDX, REVOLUTE
from ...model.loops import mimic_roots
from ...model.reduced import restricted, welded
from ...model.spatial import quat_to_matrix
from .. import _kernels as kernels
from .. import tree_state as ts
from ...dynamics.calls import Prepared
from .._fused import folded_tree_computed_torque, ready, tree_computed_torque
from ..plant import DEFAULT_LOOP_TOLERANCE, Plant, StateError, choose_joints, joint_friction, payload_links

BASE_VELOCITY_SOURCES = ("odometry", "momentum")
# passengers from which folding them pays: the folded kernel takes one more kernel array, which costs about
# the RNE of two bodies (bench_cycle: the Panda's two fingers ran 1.04-1.09x the bare arm folded, 1.00x
# not; bench_descriptions: Talos' seven gripper joints 1.15x not folded, 1.03x folded)
FOLD_FROM = 3


def mimic_rules(model):
    """{follower: (leader, multiplier, offset)} of a model's mimic couplings (URDF ``<mimic>``)."""
    names = model.joint_names
    return {names[int(f)]: (names[int(l)], float(m), float(o)) for f, l, m, o in model.loops.mimic}


def driven_mimic_joints(model, joints):
    """The mimic joints of ``model`` whose first leader up the chain is one of ``joints``, sorted: a mimic
    coupling a controlled joint drives is a closed loop (ClosedLoopPlant), one it does not is followed by a
    tree."""
    return sorted(f for f, (root, _, _) in mimic_roots(mimic_rules(model)).items() if root in joints)


def dependencies(model, joints):
    """(kept, chain): the joints of ``model`` whose bodies the torques of ``joints`` depend on, on a fixed
    base (those joints, the joints between them and the base, and their subtrees), and of those the ones
    some joint of ``joints`` hangs from or is (``joints`` and the joints between them and the base); both
    in the model's joint order. The others kept are the passengers."""
    tree = np.asarray(model.tree)
    parent, body_joint = tree[:, PARENT].astype(int), tree[:, QIDX].astype(int)
    body_of = {model.joint_names[k]: b for b, k in enumerate(body_joint)}
    chain = np.zeros(model.nb, bool)
    for j in joints:
        b = body_of[j]
        while b >= 0 and not chain[b]:            # the joint and those between it and the base
            chain[b] = True
            b = parent[b]
    roots = {body_of[j] for j in joints}
    below = np.zeros(model.nb, bool)
    for b in range(model.nb):                    # subtrees: a parent comes before its children
        below[b] = b in roots or (parent[b] >= 0 and below[parent[b]])

    def names(mask):
        ks = {body_joint[b] for b in range(model.nb) if mask[b]}
        return [j for k, j in enumerate(model.joint_names) if k in ks]
    return names(chain | below), names(chain)


def _fold_maps(R, F, controlled):
    """The index maps of tree_state's fold (see TreeState): R the restricted model, F the folded one (R's
    chain joints), ``controlled`` the controlled joint names."""
    tR, tF = np.asarray(R.tree), np.asarray(F.tree)
    passengers = [k for k, j in enumerate(R.joint_names) if j not in F.index]
    pas = set(passengers)
    body_F = {F.joint_names[int(tF[f, QIDX])]: f for f in range(F.nb)}
    kinds = []
    for b in range(R.nb):
        if int(tR[b, QIDX]) not in pas:
            kinds.append((ts.KEPT, 0))
            continue
        p = int(tR[b, PARENT])
        if p >= 0 and int(tR[p, QIDX]) in pas:
            kinds.append((ts.BELOW_PASSENGER, p))
        else:
            kinds.append((ts.BELOW_FOLDED, body_F[R.joint_names[int(tR[p, QIDX])]] if p >= 0 else -1))
    body_R = {R.joint_names[int(tR[b, QIDX])]: b for b in range(R.nb)}
    src = [body_R[F.joint_names[int(tF[f, QIDX])]] for f in range(F.nb)]
    return passengers, kinds, src, [R.index[j] for j in F.joint_names], [F.index[j] for j in controlled]


class TreePlant(Plant):
    """A tree model (fixed or floating base) as a Plant; see the module docstring."""

    kind = "tree"

    def __init__(self, model, joints=None, locked=None, loop_tolerance=DEFAULT_LOOP_TOLERANCE):
        names = list(model.joint_names)
        rules = mimic_roots(mimic_rules(model))
        joints, _, locked = choose_joints(model, [j for j in names if j not in rules], joints, locked, lambda bad: (
            "joints %s are passive joints of model %r: <mimic> joints follow their leaders %s and have no actuator "
            "of their own; control the leader instead" % (bad, model.name, [rules[j][0] for j in bad])))
        driven = driven_mimic_joints(model, joints)
        if driven or len(model.loops.cut):
            raise ValueError("model %r has closed loops (%s): its plant is a ClosedLoopPlant (make_plant picks it)"
                             % (model.name, "mimic joints %s of controlled leaders" % driven if driven
                                else "cut joints %s" % list(model.cut_joint_names)))
        self.model = model
        self.name = model.name
        self.loop_tolerance = float(loop_tolerance)
        self.joint_names = self.required_names = tuple(joints)
        self.state_names = tuple(joints + [j for j in names if j not in joints])
        state_index = np.array([names.index(j) for j in self.state_names], dtype=np.int64)
        self._ctrl = state_index[:len(joints)]
        self._identity = tuple(joints) == tuple(names)
        self.effort_limits = np.array(model.effort_limits, float)[self._ctrl]
        self.velocity_limits = np.array(model.velocity_limits, float)[self._ctrl]
        self.position_limits = np.array(model.position_limits, float)[self._ctrl]
        self.link_names = payload_links(model)
        self.bases = ("fixed", "moving", "free_floating") if model.floating_base else ("fixed",)
        self.sim_floating_base = bool(model.floating_base)
        self.sim_names = self.state_names if self._identity else self.joint_names
        self.base_velocity_source = "odometry"
        self.last_base_output = None
        self._gravity0 = np.array(model.gravity, float)
        initial_q = np.zeros(model.n)
        for j, v in locked.items():
            initial_q[names.index(j)] = float(v)
        tree = np.asarray(model.tree)
        revolute = np.zeros(model.n, bool)
        revolute[tree[:, QIDX].astype(int)] = tree[:, JTYPE] == REVOLUTE
        self._mimic = [(names.index(f), names.index(r), m, o) for f, (r, m, o) in rules.items()]
        # the dynamics models: on a fixed base, only what the controlled torques depend on, and that with its
        # passengers folded while they are at rest (tree_state.py)
        kept, chain = (names, names) if model.floating_base else dependencies(model, joints)
        self._dm = model if len(kept) == len(names) else restricted(model, kept)
        self._folded = restricted(model, chain) if len(kept) - len(chain) >= FOLD_FROM else None
        fold = None if self._folded is None else _fold_maps(self._dm, self._folded, joints)
        dyn_index = np.array([names.index(j) for j in kept], dtype=np.int64)
        ctrl_dyn = np.array([kept.index(j) for j in joints], dtype=np.int64)
        self._state = ts.TreeState(state_index, dyn_index, ctrl_dyn, self._mimic, revolute, initial_q,
                                   self.loop_tolerance, fold)
        st = self._state
        self._plan, self._work = st.plan, st.work
        self._ctrl_dyn = ctrl_dyn
        self._ctrl_folded = None if fold is None else np.array(fold[-1], dtype=np.int64)
        Fs, Fv = joint_friction(model)
        self._Fs, self._Fv = Fs[self._ctrl], Fv[self._ctrl]
        nr = len(kept)
        self._zero, self._zero3, self._zero6 = np.zeros(nr), np.zeros(3), np.zeros(6)
        self._zero_folded = np.zeros(len(chain))
        self.initial_state = np.array(st.q_model[state_index])
        self._held = np.array(st.q_model)               # the locked positions, mimic joints by their rules
        for f, _, _, _ in self._mimic:                  # solved, not assumed: a mimic joint follows its leader
            self.initial_state[list(self.state_names).index(names[f])] = np.nan
        self._welded = None
        self.rigid_tree_unavailable = "the model has a floating base" if model.floating_base else ""
        self.fused_kernel = kernel = tree_computed_torque if self._folded is None else folded_tree_computed_torque
        self._fused = Prepared(self, "_fused", lambda: (ts.prepare(), ready(kernel))[1])

    # ------------------------------------------------------------ state
    def set_state(self, q, qd):
        q, qd = _vector(q), _vector(qd)
        st = ts.complete(q, qd, self._plan, self._work) if q.ndim == 1 and qd.ndim == 1 else ts.REJECTED
        if st == 0:
            return
        if st < 0:
            raise StateError("controlled joint '%s' is missing from the joint state or not finite"
                             % self.joint_names[-1 - st])
        ns = len(self.state_names)
        raise StateError("state must have %d positions and velocities (%s), got %s and %s"
                         % (ns, list(self.state_names), np.shape(q), np.shape(qd)))

    @property
    def q(self):
        return self._state.q_ctrl

    @property
    def qd(self):
        return self._state.qd_ctrl

    @property
    def q_model(self):
        """Positions of every joint (``model.joint_names`` order) of the state last set, mimic joints by
        their rules."""
        return self._state.q_model

    @property
    def ignored_passive(self):
        """{mimic joint: in how many states set (cycles) its published position was off its rule by more
        than ``loop_tolerance`` and ignored} (joints with none left out)."""
        names = self.model.joint_names
        return {names[f]: int(n) for (f, _, _, _), n in zip(self._mimic, self._state.ignored) if n}

    # ------------------------------------------------------------ the RNE calls, per base
    def _call(self, qd, qdd, friction, use_gravity, use_accel, out):
        """tau (N,) of the RNE at the state's q with the given restricted-model qd and qdd (the state's rows, or
        ``self._zero``), on the current base; ``use_gravity``/``use_accel``: whether gravity and the base
        acceleration act (moving base). On a fixed base with the passengers at rest, on the folded model."""
        st, m, base, idx = self._state, self._dm, self.base, self._ctrl_dyn
        if base == "fixed":
            q = st.q
            F = self._folded
            if F is not None and ts.rest_ready(m._K, F._K, self._plan, self._work):
                m, q, idx, zero, full = F, st.q_folded, self._ctrl_folded, self._zero_folded, st.tau_folded
                qd = st.qd_folded if qd is st.qd else zero
                qdd = st.qdd_folded if qdd is st.qdd else zero
            else:
                zero, full = self._zero, st.tau
            if qdd is zero and not friction:
                if use_gravity and qd is zero:
                    api.gravity_torques(m, q, out=full)
                elif not use_gravity:
                    api.coriolis_torques(m, q, qd, out=full)
                else:
                    api.inverse_dynamics(m, q, qd, qdd, friction=False, out=full)
            else:
                api.inverse_dynamics(m, q, qd, qdd, gravity=None if use_gravity else self._zero3,
                                     friction=friction, out=full)
        else:
            bs = self.base_state
            orientation = bs.orientation
            twist = self._base_twist(bs)
            if base == "moving":
                accel = bs.accel if use_accel else self._zero6
                if not use_gravity:  # cancel the model's gravity, which the RNE applies as a base acceleration
                    accel = np.r_[accel[:3] + quat_to_matrix(*orientation).T @ m.gravity, accel[3:]]
                full, self.last_base_output = fl.moving_base_inverse_dynamics(
                    m, st.q, qd, qdd, twist, accel, orientation, friction=friction)
            else:
                full, self.last_base_output = fl.free_floating_inverse_dynamics(
                    m, st.q, qd, qdd, twist, orientation, friction=friction)
        kernels.take(full, idx, out)
        return out

    def _base_twist(self, bs):
        if self.base == "free_floating" and self.base_velocity_source == "momentum":
            return fl.base_twist_from_momentum(self._dm, self._state.q, self._state.qd, None, bs.orientation)
        return bs.twist

    # ------------------------------------------------------------ dynamics at the state last set
    def inverse_dynamics(self, qdd, friction, out):
        ts.scatter_controlled(qdd, self._plan, self._work)
        return self._call(self._state.qd, self._state.qdd, friction, True, True, out)

    def _fused_step(self, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, friction, qdd, out):
        """computed_torque in one compiled call (_fused.py) on a fixed base."""
        if self.base != "fixed":
            return NOT_DIRECT
        flags = FRICTION if friction else 0
        if self._folded is None:
            return self._fused(self._dm._K, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, flags, self._plan, self._work, out)
        return self._fused(self._dm._K, self._folded._K, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, flags, self._plan,
                           self._work, out)

    def gravity_torques(self, out):
        return self._call(self._zero, self._zero, False, True, True, out)

    def coriolis_torques(self, out):
        return self._call(self._state.qd, self._zero, False, False, False, out)

    def friction_torques(self, out):
        out.fill(0.0)
        kernels.add_friction(self.qd, self._Fs, self._Fv, out)
        return out

    def rigid_tree(self):
        """The restricted dynamics model (the controlled joints, those between them and the base, their
        subtrees: every joint a controlled row of M, C or g depends on) and its state."""
        if self.rigid_tree_unavailable:
            return Plant.rigid_tree(self)
        return self._dm, self._state.q, self._state.qd, self._ctrl_dyn

    def fused_state(self):
        """(plan, work) of the compiled state completion (tree_state.complete, what set_state runs), for a
        kernel that completes the measured state itself; the rigid tree's q, qd are views into ``work``."""
        return self._plan, self._work

    def mass_matrix(self):
        """M restricted to the controlled joints (the uncontrolled ones held)."""
        M = api.mass_matrix(self._dm, self._state.q)
        return M[np.ix_(self._ctrl_dyn, self._ctrl_dyn)]

    def forward_dynamics(self, tau):
        """Controlled accelerations under ``tau`` with the uncontrolled joints held (zero acceleration),
        friction included: M_cc qdd = tau - h_c."""
        if self._identity and self.base == "fixed":
            return api.forward_dynamics(self.model, self._state.q, self._state.qd, tau, friction=True)
        h = self.inverse_dynamics(np.zeros(self.n), True, np.zeros(self.n))
        return np.linalg.solve(self.mass_matrix(), np.asarray(tau, float) - h)

    # ------------------------------------------------------------ simulation
    @property
    def sim_model(self):
        """The model whose forward dynamics a simulation integrates: the model itself when every joint is
        controlled, else the model with the uncontrolled joints welded at their locked positions (built at
        first use, with the model's gravity and payload then; a controller never needs it)."""
        if self._identity:
            return self.model
        if self._welded is None:
            self._welded = welded(self.model, self.joint_names, self._held)
        return self._welded

    def sim_acceleration(self, q, qd, tau):
        """Accelerations of the simulated joints (``sim_names``) on a fixed base: ``sim_model``'s forward
        dynamics."""
        return api.forward_dynamics(self.sim_model, q, qd, tau, friction=self.sim_friction)

    def sim_joint_states(self, q, qd):
        return self.sim_names, np.asarray(q, float), np.asarray(qd, float)

    def held_joint_states(self):
        """(names, positions) of the uncontrolled joints at their locked positions (mimic joints by their
        rules), for a simulator that publishes them too."""
        names = self.state_names[self.n:]
        return names, self._held[[self.model.joint_names.index(j) for j in names]]

    # ------------------------------------------------------------ run-time settings
    def _derived_models(self):
        """The models built from ``model`` that must follow its gravity and payload: the restricted dynamics
        model and the welded simulation model, where they are not ``model`` itself."""
        return [m for m in (self._dm, self._welded) if m is not None and m is not self.model]

    def set_gravity(self, gravity):
        Plant.set_gravity(self, gravity)
        for m in self._derived_models():
            m.set_gravity(self.model.gravity)
        self._state.invalidate_fold()

    def set_payload(self, link, mass=0.0, com=(0.0, 0.0, 0.0), inertia=(0.0,) * 6):
        """As :meth:`Plant.set_payload`; on a link the controlled torques do not depend on (the other arm),
        it changes nothing they feel."""
        Plant.set_payload(self, link, mass, com, inertia)
        for m in self._derived_models():
            if link is not None and link in m.link_frames:
                m.set_payload(link, mass, com, inertia)
            else:
                m.clear_payload()
        self._state.invalidate_fold()


def _vector(a):
    """``a`` as the kernels take it: a C-contiguous float64 array (itself when it is one)."""
    if type(a) is np.ndarray and a.dtype == np.float64 and a.flags.c_contiguous:
        return a
    return np.ascontiguousarray(a, dtype=float)
