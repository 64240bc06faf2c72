"""Task-space torque control of a tree on a fixed base: Cartesian impedance and operational-space control
(no ROS). The modes ``cartesian_impedance`` and ``operational_space`` of
:class:`~rne_control.control.laws.ControlLaw` run here.

The task is the pose of ``end_effector_frame`` (a link or URDF frame): x = (p, R), twist xd = J qd = [v; w]
of the frame's origin, base axes (J: the frame Jacobian at its origin, LOCAL_WORLD_ALIGNED). J, M, C qd + g
are the controlled joints', the uncontrolled joints held (zero acceleration), as in every plant.

* pose error e = [p - p_d; log(R R_d^T)] (m, rad; rotation.py): its position and rotation norms are scaled
  down to ``error_clip``, direction kept;
* shaped target (p_d, R_d), xd_d, xdd_d: shaping.py, within ``max_cartesian_velocity``;
* sigma_min(J) below ``singular_damping`` = eps: lambda^2 = eps^2 - sigma_min^2 damps the pseudo-inverse
  J^T (J J^T + lambda^2 I)^-1 and Lambda = (J M^-1 J^T + lambda^2 mean(diag M^-1) I)^-1 (both exact above eps).

``cartesian_impedance`` (Ott 2008; Albu-Schaeffer et al. 2003):

    tau = J^T (-K e - D (xd - xd_d) + F_d) + Nbar^T tau_0 + C qd + g (+ friction),
    tau_0 = K_n (q_n - q) - D_n qd,   D_n = 2 zeta_n sqrt(K_n M_ii)   (N m/rad, N m s/rad)

with D = 2 zeta sqrt(K) (``unit_mass``) or, by double diagonalisation of Lambda and K (Lambda = Q Q^T,
K = Q K_0 Q^T), D = Q diag(2 zeta_i sqrt(k_0i)) Q^T, each mode damped at zeta (``double_diagonalization``, the
default: unit-mass damping is unstable in discrete time where Lambda is small, e.g. about a wrist's axis).

``operational_space`` (Khatib 1987), a* = xdd_d + K_D (xd_d - xd) - K_P e, qdd_0 = K_n (q_n - q) -
2 zeta_n sqrt(K_n) qd (1/s^2, 1/s):

    tau = RNE(q, qd, Jbar (a* - Jdot qd) + Nbar qdd_0),   Jbar = M^-1 J^T Lambda,

one RNE call, equal to J^T (Lambda a* + mu + p) + Nbar^T (M qdd_0 + C qd + g) with the dynamically
consistent Nbar = I - Jbar J. With the kinematic projector N = I - J^+ J (``nullspace_projector:
kinematic``) the law is composed explicitly: J^T Lambda (a* - Jdot qd + J M^-1 h) + N^T (M qdd_0 + h),
h = C qd + g.

The feedback terms (K, D; K_P, K_D; the null space) are multiplied by the activation ramp's scale; F_d and
xdd_d are feed-forward. The torque's change per cycle is limited to ``max_effort_rate`` x the time since
the last task-space cycle, from the first torque computed on entering the mode (never from zero).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ...dynamics.calls import check, prepare
from ...dynamics.frame_api import frame_of, frame_pose
from ...dynamics.primitives import FRICTION
from ..plant import StateError
from . import _kernel as K
from . import shaping
from .rotation import quaternion_matrix

TASK_MODES = ("cartesian_impedance", "operational_space")
DAMPING_DESIGNS = ("double_diagonalization", "unit_mass")
PROJECTORS = ("dynamic", "kinematic")
TASK_DIM = 6


class TaskError(ValueError):
    """A task-space input that cannot be used (an unknown frame, a bad pose or wrench), or a plant without
    a task space; the message names the field."""


def _signature():
    import numba as nb
    f1, f2, I = nb.float64[::1], nb.float64[:, ::1], nb.int64
    f3 = nb.float64[:, :, ::1]
    return (f2, f1, f1, nb.int64[::1], f2, nb.int64[::1], I, f2, f1, f1, nb.float64, f1, f1, f2, f2, f2, f1, f3, f1,
            f2, f3, f2)


def task_unavailable(plant) -> str:
    """Why ``plant`` has no task space ("" where it has one): it needs a tree on a fixed base (uncontrolled
    parts allowed) and at least 6 controlled joints."""
    if plant.rigid_tree_unavailable:
        return plant.rigid_tree_unavailable
    if plant.n < TASK_DIM:
        return "a 6-D task needs at least 6 controlled joints (%d: %s)" % (plant.n, ", ".join(plant.joint_names))
    return ""


def default_frame(model, joint: str) -> str:
    """The child link of ``joint`` in ``model``: of the links on its body, the one whose frame is the body's
    own (URDF), else the first (DH: the link's DH frame). The default end effector and wrench frame."""
    from ...model.layout import QIDX
    k = model.joint_names.index(joint)
    body = int(np.flatnonzero(np.asarray(model.tree)[:, QIDX] == k)[0])
    on_body = [name for name, (b, _) in model.link_frames.items() if b == body]
    own = [name for name in on_body if np.allclose(model.link_frames[name][1], np.eye(4))]
    return (own or on_body)[0]


def check_frame(plant, frame: str) -> str:
    """``frame`` if the controlled joints move it, else TaskError naming it (and the frames they move)."""
    model, _, _, ctrl = plant.rigid_tree()
    movable = moved_frames(model, ctrl)
    if frame not in movable:
        raise TaskError("end_effector_frame %r is not a frame the controlled joints move (frames: %s)"
                        % (frame, ", ".join(sorted(movable))))
    return frame


def moved_frames(model, ctrl) -> list:
    """The frames of ``model`` below one of its joints ``ctrl`` (indices)."""
    from ...model.layout import PARENT, QIDX
    tree = np.asarray(model.tree)
    ctrl = set(int(k) for k in ctrl)
    below = np.zeros(model.nb, bool)
    for b in range(model.nb):   # a parent comes before its children
        p = int(tree[b, PARENT])
        below[b] = int(tree[b, QIDX]) in ctrl or (p >= 0 and below[p])
    return [name for name, (b, _) in model.link_frames.items() if b >= 0 and below[b]]


class TaskSpace:
    """The task-space laws of the module docstring on a tree ``plant`` on a fixed base, for ``frame``.

    Per cycle :meth:`compute` (the kernel: state, kinematics, dynamics, target, law, in one call). The
    target is held by a shaped segment: :meth:`anchor` (the measured pose, at rest), :meth:`set_target`.
    Outputs after a compute: ``error`` (6,), ``sigma_min``, ``clipped`` (position, rotation), ``singular``,
    ``pose`` (4x4 of the frame), ``target`` (p_d, R_d), ``ff`` (J^T F_d at the controlled joints)."""

    def __init__(self, plant, frame: Optional[str] = None):
        why = task_unavailable(plant)
        if why:
            raise TaskError("no task space for the %s model %r: %s" % (plant.kind, plant.name, why))
        self.plant = plant
        self.model, self._q, self._qd, ctrl = plant.rigid_tree()
        self._state = plant.fused_state()   # (plan, work): the kernel completes the state as set_state does
        self.frame = check_frame(plant, frame or default_frame(self.model, plant.joint_names[-1]))
        self.n = n = plant.n
        nr = self.model.n
        self._ctrl = np.ascontiguousarray(ctrl, dtype=np.int64)
        b, T = frame_of(self.model, self.frame)
        self._b, self._T = int(b), np.array(T, dtype=float, order="C")
        self.P = np.zeros(K.NULL + 3 * n)
        self.O = np.zeros(K.N_OUT + n)
        self.S = shaping.hold(np.zeros(3), np.eye(3))
        self._E = np.zeros((3, 6, 6))       # Lambda; the eigensolver's warm starts
        self.Lam = self._E[0]
        self._Jf, self._Mf = np.zeros((6, nr)), np.zeros((nr, nr))
        self._pose, self._acc = np.zeros((4, 4)), np.zeros(6)
        self._prev = np.zeros(n)
        self._V = np.zeros((2, nr))
        m = max(6, n)
        self._Z, self._Y = np.zeros((K.N_Z, m, m)), np.zeros((K.N_Y, m))   # the kernel's scratch
        self._t_last = None                  # time of the last compute (the effort-rate limit's interval)
        self.posture = self.P[K.NULL + 2 * n:]   # rad or m, controlled joints
        self.limits = (0.0, 0.0)
        self.max_effort_rate = 0.0
        self.ff = self.O[K.FF:]
        self.error = self.O[K.ERR:K.ERR + 6]

    # ------------------------------------------------------------ settings
    def configure(self, mode: str, s) -> None:
        """Install the task settings of the Settings ``s`` for ``mode`` (one of TASK_MODES)."""
        P, n = self.P, self.n
        if mode == "operational_space":
            P[K.STIFF:K.STIFF + 6], P[K.DAMP:K.DAMP + 6] = s.cartesian_kp, s.cartesian_kd
        else:
            P[K.STIFF:K.STIFF + 6], P[K.DAMP:K.DAMP + 6] = s.cartesian_stiffness, s.cartesian_damping_ratio
        P[K.MODE] = K.OPERATIONAL if mode == "operational_space" else K.IMPEDANCE
        P[K.DESIGN] = K.UNIT_MASS if s.damping_design == "unit_mass" else K.DOUBLE_DIAGONAL
        P[K.PROJECTOR] = K.KINEMATIC if s.nullspace_projector == "kinematic" else K.DYNAMIC
        P[K.CLIP:K.CLIP + 2] = s.error_clip
        P[K.EPS] = s.singular_damping
        P[K.FLAGS] = FRICTION if s.friction_compensation else 0
        P[K.NULL:K.NULL + n] = s.nullspace_stiffness
        P[K.NULL + n:K.NULL + 2 * n] = s.nullspace_damping_ratio
        if s.nullspace_posture is not None:
            self.posture[:] = s.nullspace_posture
        P[K.WARM] = P[K.WARM_DD] = 0.0
        self.limits = tuple(s.max_cartesian_velocity)
        self.max_effort_rate = s.max_effort_rate

    def set_wrench(self, wrench) -> None:
        """F_d (6,): [force (N); moment (N m)] the tool is to exert on the environment, at the frame's origin,
        base axes."""
        w = np.asarray(wrench, dtype=float).reshape(-1)
        if w.shape != (6,) or not np.all(np.isfinite(w)):
            raise TaskError("the wrench needs 6 finite values [force; moment], got %s" % w.tolist())
        self.P[K.WRENCH:K.WRENCH + 6] = w

    @property
    def wrench(self) -> np.ndarray:
        return self.P[K.WRENCH:K.WRENCH + 6]

    # ------------------------------------------------------------ the target
    def measured_pose(self) -> np.ndarray:
        """The frame's pose (4x4, base frame) at the plant's state last set."""
        return frame_pose(self.model, self._q, self.frame)

    def anchor(self, t: float) -> None:
        """Hold the measured pose (the plant's state last set) from t (s), at rest, with F_d = 0; the effort-rate
        limit starts from here."""
        T = self.measured_pose()
        self.P[K.WRENCH:K.WRENCH + 6] = 0.0
        self.S = shaping.hold(T[:3, 3], T[:3, :3], t)
        self._prev[:] = 0.0
        self._t_last = None
        self.P[K.WARM] = self.P[K.WARM_DD] = 0.0

    def set_posture(self, q=None) -> None:
        """The null-space posture (controlled joints, rad or m); None: the configuration of the state last set."""
        self.posture[:] = self.plant.q if q is None else q

    def frame_in_base(self, frame: str) -> np.ndarray:
        """The pose (4x4) of ``frame`` in the base frame at the state last set ("" or the base link: the
        identity); TaskError naming it if the model has no such frame."""
        if not frame:
            return np.eye(4)
        if frame not in self.model.link_frames:
            raise TaskError("frame_id %r is not a frame of the model (frames: %s; no tf here)"
                            % (frame, ", ".join(sorted(self.model.link_frames))))
        return frame_pose(self.model, self._q, frame)

    def set_target(self, position, quaternion, t: float, frame: str = "") -> None:
        """A new target pose: ``position`` (3,) m and ``quaternion`` (x, y, z, w) in ``frame``, converted to
        the base frame now; approached along a shaped path from t (s)."""
        p = np.asarray(position, dtype=float).reshape(-1)
        if p.shape != (3,) or not np.all(np.isfinite(p)):
            raise TaskError("the target position needs 3 finite values, got %s" % p.tolist())
        try:
            R = quaternion_matrix(*np.asarray(quaternion, float).reshape(4), what="the target orientation")
        except (ValueError, TypeError) as e:
            raise TaskError(str(e)) from None
        T = self.frame_in_base(frame)
        self.S = shaping.plan(self.S, t, T[:3, :3] @ p + T[:3, 3], T[:3, :3] @ R, self.limits)

    def wrench_in_base(self, force, moment, frame: str = "") -> np.ndarray:
        """A wrench given at the origin of ``frame`` in its axes, as F_d: base axes, at the end effector's
        origin (m_ee = m + (o_f - o_ee) x f), at the state last set."""
        f, m = np.asarray(force, float), np.asarray(moment, float)
        if f.shape != (3,) or m.shape != (3,) or not (np.all(np.isfinite(f)) and np.all(np.isfinite(m))):
            raise TaskError("the wrench needs a finite force and moment (3 values each)")
        T, E = self.frame_in_base(frame), self.measured_pose()
        fb = T[:3, :3] @ f
        return np.r_[fb, T[:3, :3] @ m + np.cross(T[:3, 3] - E[:3, 3], fb)]

    def target(self, t: float):
        """The shaped target at t (s): (p_d (3,), R_d (3x3), xd_d (6,), xdd_d (6,))."""
        p, R, xd, xdd = np.empty(3), np.empty((3, 3)), np.empty(6), np.empty(6)
        shaping.sample(self.S, t, p, R, xd, xdd)
        return p, R, xd, xdd

    # ------------------------------------------------------------ the law
    def compute(self, q, qd, t: float, scale: float, out: np.ndarray) -> np.ndarray:
        """The torques (controlled joints) of the configured law at the measured state q, qd (the plant's
        ``state_names`` order) and time t (s), into ``out``. Raises StateError where the plant refuses the
        state."""
        P = self.P
        P[K.SCALE] = scale
        rate = self.max_effort_rate
        P[K.RATE_STEP] = rate * (t - self._t_last) if (rate > 0.0 and self._t_last is not None
                                                       and t > self._t_last) else 0.0
        plan, work = self._state
        try:
            st = K.task_step(self.model._K, q, qd, plan, work, self._ctrl, self._b, self._T, P, self.S, t, out,
                             self.O, self._Jf, self._Mf, self._pose, self._acc, self._E, self._prev, self._V, self._Z,
                             self._Y)
        except TypeError:   # not the kernel's argument types: as float64 arrays and times
            st = K.task_step(self.model._K, np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(qd, dtype=float),
                             plan, work, self._ctrl, self._b, self._T, P, self.S, float(t), out, self.O, self._Jf,
                             self._Mf, self._pose, self._acc, self._E, self._prev, self._V, self._Z, self._Y)
        if st == K.NOT_SPD:
            raise StateError("task space: M, J M^-1 J^T or J J^T is not positive definite at this state")
        if st != 0:
            self.plant.set_state(q, qd)    # raises the StateError the status stands for, if it is the state's
            check(self.model, st)          # else the dynamics' InputError (a ValueError)
        self._t_last = t
        return out

    # ------------------------------------------------------------ the last compute
    @property
    def sigma_min(self) -> float:
        return float(self.O[K.SIGMA])

    @property
    def clipped(self):
        return bool(self.O[K.CLIPPED_P]), bool(self.O[K.CLIPPED_R])

    @property
    def singular(self) -> bool:
        return bool(self.O[K.SINGULAR])

    @property
    def pose(self) -> np.ndarray:
        """The frame's pose (4x4) at the last compute."""
        return self._pose

    @property
    def twist(self) -> np.ndarray:
        return self.O[K.TWIST:K.TWIST + 6]

    def shaped_target(self):
        """(p_d (3,), R_d (3x3), xd_d (6,), xdd_d (6,)) of the last compute."""
        O = self.O
        return (O[K.P_D:K.P_D + 3], O[K.R_D:K.R_D + 9].reshape(3, 3), O[K.XD_D:K.XD_D + 6],
                O[K.XDD_D:K.XDD_D + 6])

    def warm_up(self) -> None:
        """Run the kernel once in each mode, design and projector on a throwaway copy of the arrays, so that
        no cycle compiles anything."""
        prepare(K.task_step, [_signature()])   # compiled (or loaded) for the one signature, then closed
        q, qd = self.plant.reference_state()
        saved = (self.P.copy(), self.O.copy(), self.S.copy(), self._prev.copy(), self._t_last, self._E.copy())
        try:
            self.plant.set_state(q, qd)
            self.anchor(0.0)
            for mode in (K.IMPEDANCE, K.OPERATIONAL):
                for design in (K.UNIT_MASS, K.DOUBLE_DIAGONAL):
                    for proj in (K.DYNAMIC, K.KINEMATIC):
                        self.P[K.MODE], self.P[K.DESIGN], self.P[K.PROJECTOR] = mode, design, proj
                        self.P[K.STIFF:K.DAMP + 6] = 1.0
                        self.P[K.CLIP:K.CLIP + 2], self.P[K.EPS] = 1.0, 0.05
                        self.P[K.NULL:K.NULL + 2 * self.n] = 1.0
                        self.compute(q, qd, 0.0, 1.0, np.zeros(self.n))
            limits, self.limits = self.limits, (0.25, 1.0)      # a shaped path (the log map), then a step
            try:
                self.set_target(np.zeros(3), [0.0, 0.0, 0.0, 1.0], 0.0)
                self.target(0.05)
                self.limits = (0.0, 0.0)
                self.set_target(np.zeros(3), [0.0, 0.0, 0.0, 1.0], 0.0)
            finally:
                self.limits = limits
            self.wrench_in_base(np.zeros(3), np.zeros(3), self.frame)
        finally:
            self.P[:], self.O[:], self.S, self._prev[:], self._t_last, self._E[:] = saved

