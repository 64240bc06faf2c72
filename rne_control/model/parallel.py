"""Gough-Stewart parallel platforms: the YAML model file, parsed into a :class:`ParallelModel`
(geometry fixed; gravity and payload swappable at run time, swap.py).

The robot is a fixed base and a moving platform joined by six U-P-S legs (Khalil 2010, §5): a universal
joint at the base point A_i (two passive revolutes), the active prismatic joint (the leg length
q_i = |A_i B_i|), and a spherical joint at the platform point B_i, which is not a leg variable.

Each leg is a three-joint serial chain, packed as an ordinary :class:`~rne_control.model.Model` so the
existing recursive Newton-Euler kernel computes its own inverse dynamics Gamma_i:

- joint ``<leg>_u1``: revolute about ``u_axis`` (fixed in the base; default the horizontal tangent to the
  base circle at A_i, (-A_y, A_x, 0) normalised), in the reference frame R0_i = [x0, y0, z0] at A_i with
  x0 = u_axis, z0 = the base z axis made perpendicular to x0, y0 = z0 x x0;
- joint ``<leg>_u2``: revolute about the rotated y0 (perpendicular to u_axis and to the leg); the body
  after it is the cylinder, with axes [e1, e2, u] = R0 Rx(theta1) Ry(theta2), u the unit leg vector, so
  theta1 = theta2 = 0 when the leg points along z0;
- joint ``<leg>`` (the actuator): prismatic along u; the body after it, the piston, has its origin at B_i.

Cylinder and piston are axisymmetric about the leg: ``inertia: {axial, transverse}`` about their COM,
which lies on the leg at ``com`` from A_i (cylinder) or back from B_i (piston).
"""
import threading

import numpy as np

from .errors import ModelError
from .layout import N_LEGS, PW, ROW_GRAVITY, ROW_PLATFORM
from .build import Link, build_model
from .spatial import transform
from .swap import RunTimeSwaps



def reference_frame(u_axis):
    """R0 = [x0, y0, z0]: x0 = u_axis, z0 = the base z axis (or x axis if u_axis is vertical) made
    perpendicular to x0, y0 = z0 x x0."""
    x0 = u_axis / np.linalg.norm(u_axis)
    up = np.array([0.0, 0.0, 1.0]) if abs(x0[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    z0 = up - (up @ x0) * x0
    z0 /= np.linalg.norm(z0)
    return np.column_stack([x0, np.cross(z0, x0), z0])


def leg_model(name, joint_name, A, R0, cyl, pis, viscous, coulomb, effort, velocity, lower, upper, gravity):
    """The leg as a serial U-P chain (a Model with joints [<name>_u1, <name>_u2, joint_name])."""
    mc, cc, ac, tc = cyl
    mp, cp, ap, tp = pis
    links = [
        Link("base"),
        Link(f"{name}_cross", "base", f"{name}_u1", "revolute", transform(R0, A), axis=(1.0, 0.0, 0.0)),
        Link(f"{name}_cylinder", f"{name}_cross", f"{name}_u2", "revolute", axis=(0.0, 1.0, 0.0),
             inertial=(mc, (0.0, 0.0, cc), np.diag([tc, tc, ac]))),
        Link(f"{name}_piston", f"{name}_cylinder", joint_name, "prismatic", axis=(0.0, 0.0, 1.0),
             inertial=(mp, (0.0, 0.0, -cp), np.diag([tp, tp, ap])), viscous=viscous, coulomb=coulomb,
             effort=effort, velocity=velocity, lower=lower, upper=upper),
    ]
    return build_model(name, links, joints=[f"{name}_u1", f"{name}_u2", joint_name], gravity=gravity)


class ParallelModel(RunTimeSwaps):
    """A Gough-Stewart platform (see the module docstring). Read-only attributes:

    ``name``; ``joint_names`` (the six actuated legs, the controlled coordinates); ``leg_names``;
    ``leg_joint_names`` (6, 3) (``<leg>_u1``, ``<leg>_u2``, actuator); ``base_points`` A_i (6, 3) (m, base
    frame); ``platform_points`` b_i (6, 3) (m, platform frame); ``u_axes`` (6, 3); ``legs``: each leg's
    own :class:`Model`; ``platform_params`` [m, h, I_o] (platform frame, about its origin); ``gravity``;
    ``effort_limits``, ``velocity_limits`` (6,); ``position_limits`` (6, 2) (leg-length stroke, m);
    ``home_pose`` (7,) [p; quat xyzw], the default forward-kinematics guess.
    """

    kind = "parallel"

    def __init__(self, name, leg_names, joint_names, A, b, u_axes, legs, platform_params, gravity, effort,
                 velocity, limits, home_pose):
        self.name = name
        self.leg_names, self.joint_names = tuple(leg_names), tuple(joint_names)
        self.n = N_LEGS
        self.leg_joint_names = tuple(lg.joint_names for lg in legs)
        self.legs = tuple(legs)
        self.base_points, self.platform_points, self.u_axes = _ro(A), _ro(b), _ro(u_axes)
        self._params = _ro(platform_params)
        self.effort_limits, self.velocity_limits, self.position_limits = _ro(effort), _ro(velocity), _ro(limits)
        self.home_pose = _ro(home_pose)
        self.index = {j: i for i, j in enumerate(self.joint_names)}
        self.link_names = ("platform",)
        self._lock = threading.Lock()
        self._payload = None
        self._arrays = self._build(self._params, gravity)
        self._zero_g = None

    def _build(self, params, gravity):
        """(PK, LK): the platform array (N_LEGS + 2, PW) and the stacked leg kernel arrays."""
        PK = np.zeros((N_LEGS + 2, PW))
        for i in range(N_LEGS):
            R0 = reference_frame(self.u_axes[i])
            PK[i, 0:3], PK[i, 3:6] = self.base_points[i], self.platform_points[i]
            PK[i, 6:15] = R0.T.ravel()  # the columns x0, y0, z0 one after the other
            PK[i, 15:17] = self.position_limits[i]   # the leg's stroke
        PK[ROW_PLATFORM, 0:10] = params
        PK[ROW_GRAVITY, 0:3] = gravity
        LK = np.ascontiguousarray(np.stack([lg.kernel_array(np.asarray(gravity, float)) for lg in self.legs]))
        return PK, LK

    def kernel_arrays(self, gravity=None):
        """(PK, LK) for the kernels; with ``gravity`` (m/s^2, base frame) copies that have it instead."""
        if gravity is None:
            return self._arrays
        return self._build(self._arrays[0][ROW_PLATFORM, 0:10], gravity)

    def zero_gravity_arrays(self):
        """(PK, LK) without gravity (cached until the payload changes)."""
        z = self._zero_g
        if z is None or z[0] is not self._arrays:
            z = (self._arrays, self.kernel_arrays(np.zeros(3)))
            self._zero_g = z
        return z[1]

    @property
    def gravity(self):
        return _ro(self._arrays[0][ROW_GRAVITY, 0:3])

    @property
    def platform_params(self):
        return _ro(self._arrays[0][ROW_PLATFORM, 0:10])

    def _rebuild(self, params, gravity):
        self._arrays = self._build(params, gravity)

    def _with_payload(self, link, params10):
        """The payload sits on the platform (``link='platform'``, platform frame)."""
        if link != "platform":
            raise ModelError(f"payload link '{link}' is not a link of parallel model '{self.name}' (only 'platform')")
        return self._params + params10

    def __repr__(self):
        return f"<rne_control.ParallelModel '{self.name}': 6 U-P-S legs {list(self.joint_names)}>"


def _ro(a):
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a
