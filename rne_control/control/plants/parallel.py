"""The Plant of a Gough-Stewart platform (Khalil 2010, §5): the controlled coordinates are the six legs.

``/joint_states`` carries the leg lengths and rates (all required). :meth:`ParallelPlant.set_state` solves
the forward kinematics warm-started from the last pose, so each cycle costs one or two Newton-Raphson
steps; lengths that no pose fits (or a singular configuration) make the state inconsistent
(:class:`StateError`). :meth:`extra_state` gives the platform pose [p; quat xyzw] and twist [v; w] (base
frame). Every dynamics call is one library call in actuator coordinates (eq. 66 after the kinematics).
"""
import numpy as np

from ...dynamics.parallel_api import (parallel_coriolis_torques, parallel_gravity_torques,
                                      parallel_joint_forward_dynamics, parallel_joint_inverse_dynamics,
                                      parallel_mass_matrix, platform_forward_kinematics, platform_inverse_kinematics,
                                      platform_jacobian)
from ...dynamics.spatial import FS, FV
from ...model.errors import LoopClosureError, SingularConfigurationError
from ..plant import Plant, StateError, first_missing, payload_links


class ParallelPlant(Plant):
    """A :class:`~rne_control.model.parallel.ParallelModel` as a Plant (see the module docstring)."""

    kind = "parallel"
    task_space = True

    def __init__(self, model):
        self.model = model
        self.name = model.name
        self.joint_names = self.state_names = self.required_names = self.sim_names = model.joint_names
        self.effort_limits = np.array(model.effort_limits)
        self.velocity_limits = np.array(model.velocity_limits)
        self.position_limits = np.array(model.position_limits)
        self.link_names = payload_links(model)
        # the actuator (prismatic) joint is body 2 of each leg's chain
        self._Fv = np.array([lg.tree[2, FV] for lg in model.legs])
        self._Fs = np.array([lg.tree[2, FS] for lg in model.legs])
        self._gravity0 = np.array(model.gravity)
        self._pose = np.array(model.home_pose)
        self._sim_pose = np.array(model.home_pose)
        self._q = platform_inverse_kinematics(model, self._pose, check_limits=False)  # at rest at home until set_state
        self._qd = np.zeros(6)
        self.initial_state = np.array(self._q)         # the leg lengths of the home pose
        self._twist = None

    # ------------------------------------------------------------ state
    def set_state(self, q, qd):
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        if q.shape != (6,) or qd.shape != (6,):
            raise StateError(f"state must have 6 positions and velocities ({list(self.state_names)}), "
                             f"got {q.shape} and {qd.shape}")
        i = first_missing(q, qd, 6)
        if i >= 0:
            raise StateError(f"leg '{self.state_names[i]}' is missing or not finite")
        try:
            pose = platform_forward_kinematics(self.model, q, self._pose)
        except (LoopClosureError, SingularConfigurationError) as exc:
            raise StateError(f"no platform pose fits the measured leg lengths: {exc}") from None
        self._pose, self._q, self._qd, self._twist = pose, q.copy(), qd.copy(), None

    @property
    def q(self):
        return self._q

    @property
    def qd(self):
        return self._qd

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
    def inverse_dynamics(self, qdd, friction, out):
        out[:] = parallel_joint_inverse_dynamics(self.model, self._q, self._qd, qdd, self._pose, friction=friction)
        return out

    def gravity_torques(self, out):
        out[:] = parallel_gravity_torques(self.model, self._q, self._pose)
        return out

    def coriolis_torques(self, out):
        out[:] = parallel_coriolis_torques(self.model, self._q, self._qd, self._pose)
        return out

    def friction_torques(self, out):
        out[:] = self._Fs * np.sign(self._qd) + self._Fv * self._qd
        return out

    def mass_matrix(self):
        return parallel_mass_matrix(self.model, self._q, self._pose)

    def forward_dynamics(self, tau):
        return parallel_joint_forward_dynamics(self.model, self._q, self._qd, tau, self._pose, friction=True)

    # ------------------------------------------------------------ simulation (rne_sim)
    def sim_acceleration(self, q, qd, tau):
        """Leg accelerations at (q, qd), each forward kinematics warm-started from the previous solve."""
        return parallel_joint_forward_dynamics(self.model, q, qd, tau, self._sim_pose, friction=self.sim_friction,
                                               pose_out=self._sim_pose)

    def sim_joint_states(self, q, qd):
        return self.joint_names, np.array(q, float), np.array(qd, float)

    def sim_pose(self):
        """The platform pose of the simulation's last forward-dynamics call (for a simulator to publish)."""
        return self._sim_pose

    def extra_state(self):
        return {"platform_pose": self._pose, "platform_twist": self.twist}
