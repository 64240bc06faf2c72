"""Gough-Stewart parallel platforms: the YAML model file, parsed into an immutable :class:`ParallelModel`.

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
import math
import os
import threading

import numpy as np
import yaml

from .errors import ModelError
from .model import Link, build_model
from .spatial import body_params, check_inertia, inertia_matrix, transform

TOP_KEYS = {"name", "gravity", "platform", "leg_defaults", "legs", "home"}
PLATFORM_KEYS = {"mass", "com", "inertia"}
INERTIA_KEYS = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
LEG_KEYS = {"name", "joint_name", "base_point", "platform_point", "u_axis", "cylinder", "piston", "viscous",
            "coulomb", "effort_limit", "velocity_limit", "lower_limit", "upper_limit"}
BODY_KEYS = {"mass", "com", "inertia"}
AXI_KEYS = {"axial", "transverse"}
HOME_KEYS = {"position", "quaternion"}
N_LEGS = 6
# Rows of the platform kernel array PK (width PW); see rne_control.dynamics.parallel_kinematics.
PW = 15
ROW_PLATFORM, ROW_GRAVITY = N_LEGS, N_LEGS + 1


def _num(d, key, where, default=None, positive=False, nonneg=False):
    if key not in d or d[key] is None:
        if default is None:
            raise ModelError(f"{where}: missing '{key}'")
        return float(default)
    try:
        val = float(d[key])
    except (TypeError, ValueError):
        raise ModelError(f"{where}: '{key}' must be a number, got {d[key]!r}") from None
    if math.isnan(val):
        raise ModelError(f"{where}: '{key}' is NaN")
    if positive and not val > 0:
        raise ModelError(f"{where}: '{key}' must be > 0, got {val}")
    if nonneg and not (val >= 0 and math.isfinite(val)):
        raise ModelError(f"{where}: '{key}' must be finite and >= 0, got {val}")
    return val


def _vec(d, key, where, size=3, default=None):
    if key not in d:
        if default is None:
            raise ModelError(f"{where}: missing '{key}'")
        return np.asarray(default, float)
    try:
        v = np.asarray(d[key], float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"{where}: '{key}' must be {size} numbers, got {d[key]!r}") from None
    if v.shape != (size,) or not np.isfinite(v).all():
        raise ModelError(f"{where}: '{key}' must be {size} finite numbers, got {d[key]!r}")
    return v


def _mapping(d, where, allowed):
    if not isinstance(d, dict):
        raise ModelError(f"{where} must be a mapping (keys {sorted(allowed)}), got {type(d).__name__}")
    bad = set(d) - set(allowed)
    if bad:
        raise ModelError(f"{where}: unknown key(s) {sorted(bad)} (allowed: {sorted(allowed)})")
    return d


def _leg_body(d, where):
    """(mass, com distance, axial, transverse) of a cylinder or piston."""
    _mapping(d, where, BODY_KEYS)
    inert = _mapping(d.get("inertia", {}) or {}, f"{where} inertia", AXI_KEYS)
    return (_num(d, "mass", where, nonneg=True), _num(d, "com", where, 0.0),
            _num(inert, "axial", f"{where} inertia", 0.0, nonneg=True),
            _num(inert, "transverse", f"{where} inertia", 0.0, nonneg=True))


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


class ParallelModel:
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

    def set_gravity(self, gravity):
        """Change gravity (m/s^2, base frame) at run time (atomic swap)."""
        g = np.asarray(gravity, float).reshape(-1)
        if g.shape != (3,) or not np.isfinite(g).all():
            raise ModelError(f"gravity must be 3 finite numbers, got {np.asarray(gravity).tolist()}")
        with self._lock:
            self._arrays = self.kernel_arrays(g)

    @property
    def payload(self):
        return self._payload

    def set_payload(self, link, mass, com=(0.0, 0.0, 0.0), inertia=(0.0,) * 6):
        """A rigid payload on the platform (``link='platform'``): mass (kg), COM (m, platform frame),
        inertia [ixx, iyy, izz, ixy, ixz, iyz] about its COM (kg m^2). Atomic swap."""
        if link != "platform":
            raise ModelError(f"payload link '{link}' is not a link of parallel model '{self.name}' (only 'platform')")
        com = np.asarray(com, float).reshape(-1)
        inertia = np.asarray(inertia, float).reshape(-1)
        if com.shape != (3,) or inertia.shape != (6,) or not np.isfinite(com).all():
            raise ModelError("payload com must be 3 finite numbers and inertia 6 numbers "
                             "[ixx, iyy, izz, ixy, ixz, iyz]")
        I_com = inertia_matrix(*inertia)
        check_inertia(float(mass), I_com, "payload on link 'platform'")
        params = self._params + body_params(float(mass), com, I_com)
        with self._lock:
            self._arrays = self._build(params, self.gravity)
            self._payload = ("platform", float(mass), tuple(com), tuple(inertia))

    def clear_payload(self):
        with self._lock:
            self._arrays = self._build(self._params, self.gravity)
            self._payload = None

    def __repr__(self):
        return f"<rne_control.ParallelModel '{self.name}': 6 U-P-S legs {list(self.joint_names)}>"


def _ro(a):
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


def _home(A, b, limits):
    """Identity orientation, the platform origin on the z axis at the height where the mean leg length is
    mid-stroke (a few Newton steps on the mean length)."""
    target = float(np.mean(limits.mean(axis=1)))
    z = target
    for _ in range(50):
        L = b + np.array([0.0, 0.0, z]) - A
        n = np.linalg.norm(L, axis=1)
        f, df = n.mean() - target, (L[:, 2] / n).mean()
        z -= f / df
        if abs(f) < 1e-14:
            break
    return np.array([0.0, 0.0, z, 0.0, 0.0, 0.0, 1.0])


def load_parallel(source):
    """Load a Gough-Stewart platform from a YAML file path or an already parsed dict (format in the
    README, section "Parallel robots"). Raises ModelError naming the leg and field on bad input."""
    if isinstance(source, dict):
        doc, where0 = source, "parallel model"
    else:
        path = os.fspath(source)
        try:
            with open(path) as f:
                doc = yaml.safe_load(f)
        except OSError as e:
            raise ModelError(f"cannot read parallel model file '{path}': {e}") from None
        except yaml.YAMLError as e:
            raise ModelError(f"'{path}' is not valid YAML: {e}") from None
        where0 = f"'{path}'"
    _mapping(doc, where0, TOP_KEYS)
    name = str(doc.get("name", "parallel"))
    gravity = _vec(doc, "gravity", where0, default=(0.0, 0.0, -9.81))
    if "platform" not in doc:
        raise ModelError(f"{where0}: missing 'platform'")
    plat = _mapping(doc["platform"], "platform", PLATFORM_KEYS)
    inert = _mapping(plat.get("inertia", {}) or {}, "platform inertia", set(INERTIA_KEYS))
    m_p = _num(plat, "mass", "platform", nonneg=True)
    c_p = _vec(plat, "com", "platform", default=(0.0, 0.0, 0.0))
    I_p = inertia_matrix(*[_num(inert, k, "platform inertia", 0.0) for k in INERTIA_KEYS])
    check_inertia(m_p, I_p, "platform")
    defaults = _mapping(doc.get("leg_defaults", {}) or {}, "leg_defaults", LEG_KEYS - {"name", "joint_name"})
    legs = doc.get("legs")
    if not isinstance(legs, list) or len(legs) != N_LEGS:
        raise ModelError(f"{where0}: 'legs' must list exactly {N_LEGS} legs, got "
                         f"{len(legs) if isinstance(legs, list) else type(legs).__name__}")
    names, joints, A, b, axes, models = [], [], [], [], [], []
    effort, velocity, limits = [], [], []
    for k, raw in enumerate(legs):
        _mapping(raw, f"legs[{k}]", LEG_KEYS)
        leg = {**defaults, **raw}
        if "joint_name" not in leg:
            raise ModelError(f"legs[{k}]: missing 'joint_name'")
        jn = str(leg["joint_name"])
        ln = str(leg.get("name", jn))
        where = f"leg '{ln}'"
        Ai, bi = _vec(leg, "base_point", where), _vec(leg, "platform_point", where)
        ua = _vec(leg, "u_axis", where, default=(-Ai[1], Ai[0], 0.0))
        if np.linalg.norm(ua) < 1e-9:
            raise ModelError(f"{where}: 'u_axis' is zero (a base point on the z axis needs an explicit u_axis)")
        ua = ua / np.linalg.norm(ua)
        cyl = _leg_body(leg.get("cylinder", {}) or {}, f"{where} cylinder")
        pis = _leg_body(leg.get("piston", {}) or {}, f"{where} piston")
        lo = _num(leg, "lower_limit", where, positive=True)
        hi = _num(leg, "upper_limit", where)
        if not hi > lo:
            raise ModelError(f"{where}: 'upper_limit' {hi} must exceed 'lower_limit' {lo}")
        eff = _num(leg, "effort_limit", where, math.inf, positive=True)
        vel = _num(leg, "velocity_limit", where, math.inf, positive=True)
        visc = _num(leg, "viscous", where, 0.0, nonneg=True)
        coul = _num(leg, "coulomb", where, 0.0, nonneg=True)
        models.append(leg_model(ln, jn, Ai, reference_frame(ua), cyl, pis, visc, coul, eff, vel, lo, hi, gravity))
        names.append(ln)
        joints.append(jn)
        A.append(Ai)
        b.append(bi)
        axes.append(ua)
        effort.append(eff)
        velocity.append(vel)
        limits.append((lo, hi))
    for label, seq in (("leg name", names), ("joint_name", joints)):
        dup = sorted({x for x in seq if seq.count(x) > 1})
        if dup:
            raise ModelError(f"{where0}: duplicate {label}(s) {dup}")
    A, b, limits = np.array(A), np.array(b), np.array(limits)
    home = doc.get("home")
    if home is None:
        home_pose = _home(A, b, limits)
    else:
        _mapping(home, "home", HOME_KEYS)
        quat = _vec(home, "quaternion", "home", 4, default=(0.0, 0.0, 0.0, 1.0))
        if not np.linalg.norm(quat) > 0:
            raise ModelError("home: 'quaternion' is zero")
        home_pose = np.r_[_vec(home, "position", "home"), quat / np.linalg.norm(quat)]
    return ParallelModel(name, names, joints, A, b, np.array(axes), models, body_params(m_p, c_p, I_p), gravity,
                         effort, velocity, limits, home_pose)
