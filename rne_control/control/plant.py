"""The one interface a control law and the ROS nodes use, whatever the kind of model.

Every kind of robot model (a tree on a fixed, moving or free-floating base, a closed-loop robot, a
parallel platform, a robot with elastic joints) is wrapped in a :class:`Plant`. The control law and the
nodes talk only to this interface, so they never branch on the kind of model.

Coordinates
-----------
- ``joint_names`` (N): the *controlled coordinates*: the actuated joints whose torques/forces the law
  returns and the node publishes: any subset of the model's actuated joints (active joints of a closed
  loop, rigid joints of an elastic robot, legs of a Gough-Stewart platform, movable joints of a tree), by
  default all of them. The rest of the mechanism is *uncontrolled*: its actuated joints take their
  measured position and velocity, else their locked position at rest (``lockable_names``), zero
  acceleration and no command; its mimic joints follow their leaders and its loops close from their own
  active joints.
- ``state_names``: every joint the plant reads from ``/joint_states``, in a fixed order. The first N are
  ``joint_names``; ``required_names`` (a superset of ``joint_names``) must be measured and fresh (e.g.
  elastic joints, measured by link-side encoders); the others are optional (uncontrolled joints; passive
  joints of a loop, which warm-start the loop solve and are checked against it, or ignored and counted,
  ``ignored_passive``, where only uncontrolled joints drive their loop).

State
-----
:meth:`Plant.set_state` takes positions and velocities in ``state_names`` order, with NaN for an
optional joint that was not measured, and completes the state (closes the loops, solves the platform's
forward kinematics, ...). It raises :class:`StateError` (a ValueError naming the joint) when the
measurement is inconsistent: the node then rejects that joint state. The dynamics methods below act at
the state last set.

Units are SI (rad, m, N m, N); torques and accelerations are in ``joint_names`` order.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ..dynamics.direct import NOT_DIRECT
from . import _kernels as kernels


def joint_friction(model):
    """(Fs, Fv): Coulomb (N m or N) and viscous (N m s/rad or N s/m) friction of every joint of a tree
    model, in ``model.joint_names`` order."""
    from ..model.layout import FS, FV, QIDX
    tree = np.asarray(model.tree)
    k = tree[:, QIDX].astype(int)
    Fs, Fv = np.zeros(model.n), np.zeros(model.n)
    Fs[k], Fv[k] = tree[:, FS], tree[:, FV]
    return Fs, Fv


def payload_links(model) -> tuple:
    """The links a payload may be attached to: every link frame of the model (URDF fixed links included)."""
    frames = getattr(model, "link_frames", None)
    return tuple(frames) if frames else tuple(model.link_names)


def first_missing(q, qd, n):
    """Index of the first of the first ``n`` joints whose position or velocity (float64 arrays) is not
    finite, or -1."""
    return kernels.first_nonfinite(q, qd, n)


DEFAULT_LOOP_TOLERANCE = 0.01   # rad or m: how far a published passive joint may be from its closed value


def choose_joints(model, actuated, joints, locked, passive_reason):
    """(joints, uncontrolled, locked) of a plant: ``joints`` (default: ``actuated``, the model's actuated
    joints in its order) as a list, the actuated joints it leaves uncontrolled, and ``locked`` as a dict.
    ValueError names unknown or repeated joints, controlled joints outside ``actuated`` (with
    ``passive_reason(bad)``, why they cannot be controlled) and locked joints that are not uncontrolled
    actuated ones."""
    joints = list(actuated) if not joints else list(joints)
    bad = [j for j in joints if j not in model.joint_names]
    if bad:
        raise ValueError(f"joints {bad} are not joints of model {model.name!r} (its actuated joints: {list(actuated)})")
    if len(set(joints)) != len(joints):
        raise ValueError(f"joints lists a joint twice: {joints}")
    bad = [j for j in joints if j not in actuated]
    if bad:
        raise ValueError(passive_reason(bad))
    uncontrolled = [j for j in actuated if j not in joints]
    locked = dict(locked or {})
    bad = [j for j in locked if j not in uncontrolled]
    if bad:
        raise ValueError(f"locked joints {bad} are not uncontrolled actuated joints of model {model.name!r} "
                         f"(uncontrolled: {uncontrolled}; a passive or mimic joint follows the others)")
    return joints, uncontrolled, locked


class StateError(ValueError):
    """A measured state the plant cannot accept (a loop that does not close, a missing elastic joint)."""


class Plant:
    """Abstract plant. Subclasses set the attributes in ``__init__`` and implement the methods."""

    kind = "abstract"           # for log messages only: never branch on it
    name: str = ""
    joint_names: tuple = ()     # controlled coordinates, output order (N)
    state_names: tuple = ()     # joints read from /joint_states; joint_names first
    required_names: tuple = ()  # joints that must be measured (joint_names and e.g. elastic joints)
    effort_limits: np.ndarray   # (N,) N m or N, inf where unknown
    velocity_limits: np.ndarray  # (N,)
    position_limits: np.ndarray  # (N, 2)
    link_names: tuple = ()      # links a payload may be attached to
    bases: tuple = ("fixed",)   # base models this plant supports (``set_base``)
    base: str = "fixed"         # the current one
    base_state = None           # the measured base state (BaseState) the moving and free-floating bases read
    _gravity0: np.ndarray       # the model's own gravity, m/s^2
    # positions (state_names order) assumed before any measurement; NaN: an optional joint the plant
    # solves for itself (e.g. a passive joint of a loop)
    initial_state: np.ndarray

    @property
    def n(self) -> int:
        return len(self.joint_names)

    @property
    def n_state(self) -> int:
        return len(self.state_names)

    @property
    def lockable_names(self) -> tuple:
        """Optional state joints that have a default position instead of being solved for (the uncontrolled
        actuated joints): a driver that does not publish them leaves them at that position."""
        return tuple(j for j, v in zip(self.state_names[self.n:], self.initial_state[self.n:])
                     if j not in self.required_names and np.isfinite(v))

    def reference_state(self):
        """A state (q, qd) in ``state_names`` order that the plant accepts: its reference configuration at
        rest (used to warm up the kernels, and by tests)."""
        q = np.array(self.initial_state)
        q[:self.n] = np.where(np.isfinite(q[:self.n]), q[:self.n], 0.0)
        return q, np.zeros(len(self.state_names))

    # ------------------------------------------------------------ run-time settings (on ``self.model``)
    @property
    def model_gravity(self) -> np.ndarray:
        """The gravity the model was loaded with (m/s^2, world frame)."""
        return self._gravity0

    def set_gravity(self, gravity: Optional[Sequence[float]]) -> None:
        """Gravity (m/s^2, world frame); None restores the model's own. Swapped into the model atomically."""
        self.model.set_gravity(self._gravity0 if gravity is None else gravity)

    def set_payload(self, link: Optional[str], mass: float = 0.0, com=(0.0, 0.0, 0.0),
                    inertia=(0.0,) * 6) -> None:
        """A rigid payload on ``link`` (kg; m in the link frame; ixx iyy izz ixy ixz iyz about its COM);
        ``link=None`` removes it. Atomic: the dynamics see the old or the new payload, never a mixture."""
        if link is None:
            self.model.clear_payload()
        else:
            self.model.set_payload(link, mass, com, inertia)

    def set_base(self, base: str, base_state=None) -> None:
        """``fixed`` | ``moving`` | ``free_floating`` (one of ``bases``), with the measured base state
        (:class:`rne_control.control.laws.BaseState`) that the moving and free-floating models read."""
        if base not in self.bases:
            raise ValueError("base %r is not available for the %s model %r (available: %s)"
                             % (base, self.kind, self.name, ", ".join(self.bases)))
        if base != "fixed" and base_state is None:
            raise ValueError("base %r needs the measured base state" % base)
        self.base, self.base_state = base, base_state

    # ------------------------------------------------------------ state
    def set_state(self, q: np.ndarray, qd: np.ndarray) -> None:
        """Positions and velocities in ``state_names`` order (NaN: optional joint not measured)."""
        raise NotImplementedError

    def computed_torque(self, q: np.ndarray, qd: np.ndarray, q_d: np.ndarray, qd_d: np.ndarray,
                        qdd_d: np.ndarray, kp: np.ndarray, kd: np.ndarray, scale: float, friction: bool,
                        qdd: np.ndarray, out: np.ndarray) -> np.ndarray:
        """One computed-torque step into ``out`` (N,): :meth:`set_state` (q, qd), then :meth:`inverse_dynamics`
        at the controlled coordinates' acceleration qdd = qdd_d + scale (kd (qd_d - qd) + kp (q_d - q))
        with ``friction``; ``qdd`` (N,) is a work array for that acceleration.

        The template of every plant: first :meth:`_fused_step`, the plant's fused kernel (one compiled call,
        _fused.py); on status 0 it is done. Else (no fused kernel for the plant's configuration, arguments
        not of the kernel's types, or a status the kernel leaves to this path) the composed steps, which
        raise the error that stands for the status. The status contract is the library's fast path
        (rne_control.dynamics.calls)."""
        try:
            st = self._fused_step(q, qd, q_d, qd_d, qdd_d, kp, kd, scale, friction, qdd, out)
        except TypeError:  # not the fused kernel's argument types
            st = NOT_DIRECT
        if st == 0:
            return out
        self.set_state(q, qd)
        kernels.ct_reference(qdd_d, qd_d, self.qd, q_d, self.q, kp, kd, scale, qdd)
        return self.inverse_dynamics(qdd, friction, out)

    _fused = None   # the plant's fused computed-torque kernel (_fused.py), if it has one

    def _fused_step(self, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, friction, qdd, out):
        """The computed-torque step by ``_fused``, the state it solved accepted on success: the kernel's
        status (0 done); NOT_DIRECT where the plant has no fused call for its configuration."""
        return NOT_DIRECT

    @property
    def q(self) -> np.ndarray:
        """Controlled-coordinate positions (N,) of the state last set."""
        raise NotImplementedError

    @property
    def qd(self) -> np.ndarray:
        """Controlled-coordinate velocities (N,) of the state last set."""
        raise NotImplementedError

    # ------------------------------------------------------------ dynamics at the state last set
    def inverse_dynamics(self, qdd: np.ndarray, friction: bool, out: np.ndarray) -> np.ndarray:
        """Torques (N,) that produce the controlled accelerations ``qdd`` (N,), gravity and velocity terms
        included, into ``out``; with ``friction`` the model's joint friction is added."""
        raise NotImplementedError

    def gravity_torques(self, out: np.ndarray) -> np.ndarray:
        """Torques (N,) that hold the plant still against gravity at the current positions."""
        raise NotImplementedError

    def coriolis_torques(self, out: np.ndarray) -> np.ndarray:
        """Velocity-product torques (N,) at the current state: no gravity, acceleration or friction."""
        raise NotImplementedError

    def friction_torques(self, out: np.ndarray) -> np.ndarray:
        """The model's friction Fs sign(qd) + Fv qd (N,) at the current velocities (zeros without)."""
        raise NotImplementedError

    def mass_matrix(self) -> np.ndarray:
        """Inertia matrix (N, N) in controlled coordinates (symmetric positive definite)."""
        raise NotImplementedError

    def forward_dynamics(self, tau: np.ndarray) -> np.ndarray:
        """Controlled accelerations (N,) under the torques ``tau`` (N,) at the state last set, friction
        included."""
        raise NotImplementedError

    # ------------------------------------------------------------ simulation (rne_sim)
    # ``sim_names``: the coordinates rne_sim integrates (joint_names, plus e.g. the elastic joints); the
    # uncontrolled joints are held at their locked positions (``held_joint_states``).
    sim_names: tuple = ()
    sim_friction: bool = True        # whether sim_acceleration includes the model's joint friction
    sim_floating_base: bool = False  # a tree on a floating base: the simulation integrates the base too
    task_space: bool = False         # a platform: pose and twist of the state last set, and leg motion
                                     # from platform motion (control.task_space), for task-space topics
    sim_model = None                 # a model whose joints are sim_names (its order) and all driven by tau:
                                     # the simulation integrates its forward dynamics directly

    def sim_reference_state(self):
        """(q, qd) in ``sim_names`` order: the reference state at rest (``reference_state`` by name)."""
        q, _ = self.reference_state()
        by_name = dict(zip(self.state_names, q))
        return np.array([by_name.get(j, 0.0) for j in self.sim_names], float), np.zeros(len(self.sim_names))

    def sim_initial_positions(self, q) -> np.ndarray:
        """Initial positions in ``sim_names`` order from ``q``: every simulated joint, or only the controlled
        joints (``joint_names`` order), the others then completed by :meth:`complete_sim_positions`."""
        q = np.asarray(q, float)
        ns = len(self.sim_names)
        if q.shape == (ns,):
            return q
        if q.shape == (self.n,):
            return self.complete_sim_positions(q)
        raise ValueError("initial positions need %d values (%s) or %d (%s), got %d"
                         % (ns, list(self.sim_names), self.n, list(self.joint_names), q.size))

    def complete_sim_positions(self, q_ctrl: np.ndarray) -> np.ndarray:
        """``sim_names`` positions from the controlled joints' (where the simulated coordinates are more)."""
        raise ValueError("initial positions need every simulated joint: %s" % list(self.sim_names))

    def sim_acceleration(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Accelerations in ``sim_names`` order at (q, qd) (``sim_names`` order) under the actuator
        torques ``tau`` (``joint_names`` order), friction, springs and dampers included."""
        raise NotImplementedError

    def sim_joint_states(self, q: np.ndarray, qd: np.ndarray):
        """(names, positions, velocities) of every joint a driver would publish, from the simulated
        state (e.g. the passive joints of a loop, solved for)."""
        raise NotImplementedError

    def held_joint_states(self):
        """(names, positions) of the uncontrolled joints at their locked positions, which a simulation
        holds still (mimic and passive joints closed from them)."""
        return (), np.zeros(0)

    @property
    def ignored_passive(self) -> dict:
        """{passive joint: in how many states set (cycles) its published position was off its closed value and
        ignored}: only where no controlled joint drives its loop (elsewhere such a state is rejected)."""
        return {}

    # ------------------------------------------------------------ the rigid tree (control.external, control.task)
    # why the plant offers no rigid tree on a fixed base ("" where it does). The momentum observer and the
    # task-space laws need one: loop constraint forces, elastic deflections and a moving base are not in it
    rigid_tree_unavailable: str = "its dynamics are not one tree's on a fixed base"

    def rigid_tree(self):
        """(model, q, qd, index), where ``rigid_tree_unavailable`` is empty: a tree model on a fixed base whose
        rows of M, C and g at the controlled joints are the plant's (its other joints held), views of its
        positions and velocities (its ``joint_names`` order) at the state last set, and the indices of the
        controlled joints in that order."""
        raise ValueError("the %s model %r has no rigid tree on a fixed base: %s" % (self.kind, self.name,
                                                                                     self.rigid_tree_unavailable))

    def extra_state(self) -> dict:
        """Named arrays beyond the controlled coordinates for ``~/controller_state`` (e.g. elastic
        deflections); empty by default."""
        return {}
