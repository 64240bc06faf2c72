"""The Plant of a Gough-Stewart platform (Khalil 2010, §5): the controlled coordinates are its legs.

``joints`` is any subset of the six legs (default: all six, in the model's order). ``/joint_states`` carries
the leg lengths and rates: the controlled legs' are required; an uncontrolled leg takes its measured length
and rate, else holds its last (initially its ``locked`` length, default the home pose's, at rest), is given
zero acceleration and no command. :meth:`ParallelPlant.set_state` solves
the forward kinematics warm-started from the last pose, so each cycle costs one or two Newton-Raphson
steps; lengths that no pose fits (or a singular configuration) make the state inconsistent
(:class:`StateError`). :meth:`extra_state` gives the platform pose [p; quat xyzw] and twist [v; w] (base
frame). Every dynamics call is one library call in actuator coordinates (eq. 66 after the kinematics).

The plant calls the library's kernels ``fk_many`` (for :meth:`~ParallelPlant.set_state`, into spare
buffers swapped in once the pose is solved, so a rejected state leaves the last one) and ``joint_many``
(the dynamics at that pose) itself, on its own one-sample buffers: the public functions around them would
allocate their outputs and re-check what the plant holds in the right form. A non-zero kernel status
takes the public function, which raises the error that status stands for. In computed torque,
:meth:`~ParallelPlant.computed_torque` does the forward kinematics, the law's acceleration and the
inverse dynamics in one compiled call (``control/_fused.py``).
"""
import numpy as np

from ...dynamics.calls import prepare
from ...dynamics.direct import NOT_DIRECT
from ...dynamics.parallel.api import (ID, SIGS, parallel_coriolis_torques, parallel_gravity_torques,
                                      parallel_joint_forward_dynamics, parallel_joint_inverse_dynamics,
                                      parallel_mass_matrix, platform_forward_kinematics, platform_inverse_kinematics,
                                      platform_jacobian)
from ...dynamics.parallel.dynamics import joint_many
from ...dynamics.parallel.kinematics import fk_many
from ...model.layout import FS, FV
from ...dynamics.primitives import FRICTION
from ...model.errors import LoopClosureError, SingularConfigurationError
from ...dynamics.calls import Prepared
from .._fused import parallel_computed_torque, ready
from ..plant import Plant, StateError, choose_joints, first_missing, payload_links


class ParallelPlant(Plant):
    """A :class:`~rne_control.model.parallel.ParallelModel` as a Plant (see the module docstring)."""

    kind = "parallel"
    task_space = True

    def __init__(self, model, joints=None, locked=None):
        legs = model.joint_names
        joints, uncontrolled, locked = choose_joints(model, legs, joints, locked, None)
        self.model = model
        self.name = model.name
        self.joint_names = self.required_names = self.sim_names = tuple(joints)
        self.state_names = tuple(joints) + tuple(uncontrolled)
        self._identity = self.state_names == tuple(legs)
        self._order = np.array([legs.index(j) for j in self.state_names], dtype=np.int64)   # state -> legs
        self._pos_c = self._order[:len(joints)]
        self.effort_limits = np.array(model.effort_limits)[self._pos_c]
        self.velocity_limits = np.array(model.velocity_limits)[self._pos_c]
        self.position_limits = np.array(model.position_limits)[self._pos_c]
        self.link_names = payload_links(model)
        # the actuator (prismatic) joint is body 2 of each leg's chain
        self._Fv = np.array([lg.tree[2, FV] for lg in model.legs])
        self._Fs = np.array([lg.tree[2, FS] for lg in model.legs])
        self._gravity0 = np.array(model.gravity)
        self._sim_pose = np.array(model.home_pose)
        # the state (rows of (1, 6) and (1, 7) buffers, as the kernels take them) and a second set that
        # set_state fills and, once the pose is solved, swaps in: a rejected state leaves the last one
        q0 = platform_inverse_kinematics(model, model.home_pose, check_limits=False)  # at rest at home until set_state
        # (each set: the three buffers, then their rows as (6,), (6,) and (7,) views)
        self._rows = self._buffers(q0[None].copy(), np.zeros((1, 6)), np.array(model.home_pose)[None])
        self._trial = self._buffers(*(np.array(a) for a in self._rows[:3]))
        self._q, self._qd, self._pose = self._rows[3:]
        self._x, self._out, self._zero = np.zeros((1, 6)), np.zeros((1, 6)), np.zeros((1, 6))
        self._out_for, self._out_rows = None, None     # computed_torque's caller's output and its (1, 6) view
        for j, v in locked.items():
            q0[legs.index(j)] = float(v)
        self._held = np.array(q0)                      # the legs before any measurement
        self._rows[0][0] = q0
        self.initial_state = q0[self._order]           # the leg lengths of the home pose (or locked)
        for kernel in (fk_many, joint_many):   # set_state's and the composed path's (closed until prepared)
            prepare(kernel, [SIGS[kernel]])
        self._fused = Prepared(self, "_fused", lambda: ready(parallel_computed_torque))
        self._twist = None

    @staticmethod
    def _buffers(Q, QD, P):
        return Q, QD, P, Q[0], QD[0], P[0]

    # ------------------------------------------------------------ state
    def set_state(self, q, qd):
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        if q.shape != (6,) or qd.shape != (6,):
            raise StateError(f"state must have 6 positions and velocities ({list(self.state_names)}), "
                             f"got {q.shape} and {qd.shape}")
        i = first_missing(q, qd, self.n)
        if i >= 0:
            raise StateError(f"leg '{self.state_names[i]}' is missing or not finite")
        Q, QD, P = self._trial[:3]
        if self._identity:
            Q[0], QD[0] = q, qd
        else:   # legs order; an uncontrolled leg not measured holds its last length and rate
            Q[0, self._order] = np.where(np.isfinite(q), q, self._q[self._order])
            QD[0, self._order] = np.where(np.isfinite(qd), qd, self._qd[self._order])
        P[0] = self._pose
        if fk_many(self.model.kernel_arrays()[0], Q, P)[0] != 0:
            try:
                P[0] = platform_forward_kinematics(self.model, Q[0], self._pose)
            except (LoopClosureError, SingularConfigurationError) as exc:
                raise StateError(f"no platform pose fits the measured leg lengths: {exc}") from None
        self._swap()

    def _swap(self):
        """The trial buffers become the state (a state accepted)."""
        self._trial, self._rows = self._rows, self._trial
        self._q, self._qd, self._pose = self._rows[3:]
        self._twist = None

    @property
    def q(self):
        return self._q if self._identity else self._q[self._pos_c]

    @property
    def qd(self):
        return self._qd if self._identity else self._qd[self._pos_c]

    @property
    def pose(self):
        """Platform pose [p; quat xyzw] (7,) of the state last set (base frame)."""
        return self._pose

    @property
    def twist(self):
        """Platform twist [v; w] (6,) = J_p qd of the state last set (base frame)."""
        if self._twist is None:
            self._twist = platform_jacobian(self.model, self._pose) @ self._qd
        return self._twist

    # ------------------------------------------------------------ dynamics at the state last set
    def _id(self, PKLK, qd, qdd, friction, out, public, *args):
        """joint_many's inverse dynamics at the state last set into ``out`` (its forward kinematics starts,
        and ends, at the solved pose). On a non-zero status the public function
        ``public(model, q, *args)`` gives the result or raises the error."""
        Q, _, P = self._rows[:3]
        if joint_many(PKLK[0], PKLK[1], Q, qd, qdd, FRICTION if friction else 0, ID, P, self._out)[0] != 0:
            self._out[0] = public(self.model, self._q, *args)
        out[:] = self._out[0] if self._identity else self._out[0, self._pos_c]
        return out

    def inverse_dynamics(self, qdd, friction, out):
        self._x[0] = 0.0
        self._x[0, self._pos_c] = qdd
        return self._id(self.model.kernel_arrays(), self._rows[1], self._x, friction, out,
                        parallel_joint_inverse_dynamics, self._qd, self._x[0], self._pose, friction)

    def _fused_step(self, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, friction, qdd, out):
        """computed_torque in one compiled call (_fused.py) when every leg is controlled, in the model's
        order: the pose solved from the last one, into the spare buffers (swapped in on success), and the leg
        forces written straight into ``out`` (through a (1, 6) view of it, kept while ``out`` is the same
        C-contiguous float64 array)."""
        if not self._identity:
            return NOT_DIRECT
        if out is not self._out_for:
            ok = type(out) is np.ndarray and out.shape == (6,) and out.dtype == np.float64 and out.flags.c_contiguous
            self._out_for, self._out_rows = out, (out.reshape(1, 6) if ok else self._out)
        Q, QD, P = self._trial[:3]
        PK, LK = self.model.kernel_arrays()
        st = self._fused(PK, LK, q, qd, q_d, qd_d, qdd_d, kp, kd, scale, FRICTION if friction else 0, Q, QD, self._x,
                         self._rows[2], P, self._out_rows)
        if st != 0:
            return st
        self._swap()
        if self._out_rows is self._out:
            out[:] = self._out[0]
        return 0

    def gravity_torques(self, out):
        return self._id(self.model.kernel_arrays(), self._zero, self._zero, False, out, parallel_gravity_torques,
                        self._pose)

    def coriolis_torques(self, out):
        return self._id(self.model.zero_gravity_arrays(), self._rows[1], self._zero, False, out,
                        parallel_coriolis_torques, self._qd, self._pose)

    def friction_torques(self, out):
        c = self._pos_c
        out[:] = self._Fs[c] * np.sign(self._qd[c]) + self._Fv[c] * self._qd[c]
        return out

    def mass_matrix(self):
        """The leg-space mass matrix restricted to the controlled legs (the others held)."""
        M = parallel_mass_matrix(self.model, self._q, self._pose)
        return M if self._identity else M[np.ix_(self._pos_c, self._pos_c)]

    def forward_dynamics(self, tau):
        """Controlled leg accelerations under ``tau`` (the uncontrolled legs held), friction included."""
        if self._identity:
            return parallel_joint_forward_dynamics(self.model, self._q, self._qd, tau, self._pose, friction=True)
        h = self.inverse_dynamics(np.zeros(self.n), True, np.zeros(self.n))
        return np.linalg.solve(self.mass_matrix(), np.asarray(tau, float) - h)

    # ------------------------------------------------------------ simulation (rne_sim)
    def sim_acceleration(self, q, qd, tau):
        """Controlled leg accelerations at (q, qd), the uncontrolled legs held at their locked lengths; each
        forward kinematics warm-started from the previous solve."""
        if self._identity:
            return parallel_joint_forward_dynamics(self.model, q, qd, tau, self._sim_pose,
                                                   friction=self.sim_friction, pose_out=self._sim_pose)
        c = self._pos_c
        q6, qd6 = np.array(self._held), np.zeros(6)
        q6[c], qd6[c] = q, qd
        self._sim_pose[:] = platform_forward_kinematics(self.model, q6, self._sim_pose)
        h = parallel_joint_inverse_dynamics(self.model, q6, qd6, np.zeros(6), self._sim_pose, self.sim_friction)
        M = parallel_mass_matrix(self.model, q6, self._sim_pose)
        return np.linalg.solve(M[np.ix_(c, c)], np.asarray(tau, float) - h[c])

    def sim_joint_states(self, q, qd):
        return self.joint_names, np.array(q, float), np.array(qd, float)

    def held_joint_states(self):
        """(names, lengths) of the uncontrolled legs at their locked lengths."""
        u = self._order[self.n:]
        return self.state_names[self.n:], self._held[u]

    def sim_pose(self):
        """The platform pose of the simulation's last forward-dynamics call (for a simulator to publish)."""
        return self._sim_pose

    def extra_state(self):
        return {"platform_pose": self._pose, "platform_twist": self.twist}
