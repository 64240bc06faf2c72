"""Pinocchio oracle for the Gough-Stewart platform (test-only).

A Pinocchio model of the same platform as an open tree: six legs (RX, RY, PZ joints from the base, as
the issue's U-P-S leg with the cylinder on the second revolute and the piston on the prismatic joint) and
the platform on a free-flyer joint. The six spherical joints are constraints: leg tip B_i (origin of the
piston body) = platform point B_i. Dynamics come from Pinocchio's crba / nonLinearEffects and frame
Jacobians, solved as KKT systems:

    inverse:  [S_a  J_c^T] [Gamma; lam] = M a + h      (S_a selects the prismatic joints)
    forward:  [[M, J_c^T], [J_c, 0]] [a; -lam] = [S_a Gamma - h; -gamma]

The model is built from the same parameter dict that rc.load_parallel reads, not from rne_control.
"""
import numpy as np
import pinocchio as pin

LWA = pin.LOCAL_WORLD_ALIGNED


def quat_R(quat):
    x, y, z, w = np.asarray(quat, float) / np.linalg.norm(quat)
    return pin.Quaternion(w, x, y, z).toRotationMatrix()


def legs_of(spec):
    d = spec.get("leg_defaults", {})
    return [{**d, **leg} for leg in spec["legs"]]


def u_axis(leg):
    A = np.asarray(leg["base_point"], float)
    a = np.asarray(leg.get("u_axis", (-A[1], A[0], 0.0)), float)
    return a / np.linalg.norm(a)


def reference_frame(a1):
    """x0 = a1, z0 = base z made perpendicular (x if a1 is vertical), y0 = z0 x x0 (the issue's choice)."""
    up = np.array([0.0, 0.0, 1.0]) if abs(a1[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    z0 = up - (up @ a1) * a1
    z0 /= np.linalg.norm(z0)
    return np.column_stack([a1, np.cross(z0, a1), z0])


def _inertia(body, sign):
    m = float(body.get("mass", 0.0))
    I = body.get("inertia", {})
    t, a = float(I.get("transverse", 0.0)), float(I.get("axial", 0.0))
    return pin.Inertia(m, np.array([0.0, 0.0, sign * float(body.get("com", 0.0))]), np.diag([t, t, a]))


class PlatformOracle:
    def __init__(self, spec):
        self.spec = spec
        pm = pin.Model()
        pm.gravity = pin.Motion(np.r_[spec.get("gravity", [0, 0, -9.81]), 0.0, 0.0, 0.0])
        self.tips, self.points, self.act = [], [], []
        for i, leg in enumerate(legs_of(spec)):
            R0 = reference_frame(u_axis(leg))
            j1 = pm.addJoint(0, pin.JointModelRX(), pin.SE3(R0, np.asarray(leg["base_point"], float)), f"u1_{i}")
            j2 = pm.addJoint(j1, pin.JointModelRY(), pin.SE3.Identity(), f"u2_{i}")
            pm.appendBodyToJoint(j2, _inertia(leg.get("cylinder", {}), 1.0), pin.SE3.Identity())
            j3 = pm.addJoint(j2, pin.JointModelPZ(), pin.SE3.Identity(), f"p_{i}")
            pm.appendBodyToJoint(j3, _inertia(leg.get("piston", {}), -1.0), pin.SE3.Identity())
            self.tips.append(pm.addFrame(pin.Frame(f"tip_{i}", j3, pin.SE3.Identity(), pin.FrameType.OP_FRAME)))
            self.act.append(pm.joints[j3].idx_v)
        plat = spec["platform"]
        I = plat.get("inertia", {})
        Ic = np.array([[I.get("ixx", 0), I.get("ixy", 0), I.get("ixz", 0)],
                       [I.get("ixy", 0), I.get("iyy", 0), I.get("iyz", 0)],
                       [I.get("ixz", 0), I.get("iyz", 0), I.get("izz", 0)]], float)
        jp = pm.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "platform")
        pm.appendBodyToJoint(jp, pin.Inertia(float(plat["mass"]), np.asarray(plat.get("com", [0, 0, 0]), float), Ic),
                             pin.SE3.Identity())
        for i, leg in enumerate(legs_of(spec)):
            self.points.append(pm.addFrame(pin.Frame(f"B_{i}", jp, pin.SE3(np.eye(3), np.asarray(
                leg["platform_point"], float)), pin.FrameType.OP_FRAME)))
        self.pm, self.pd = pm, pm.createData()
        self.ff_q, self.ff_v = pm.joints[jp].idx_q, pm.joints[jp].idx_v
        self.legs_v = np.arange(18)

    # ------------------------------------------------------------------ state
    def q_full(self, legq, pose):
        q = np.zeros(self.pm.nq)
        q[:18] = np.asarray(legq).reshape(18)
        q[self.ff_q:self.ff_q + 7] = pose
        return q

    def constraint(self, q, v=None):
        """(J_c (18, 24), gamma (18,), position residual (18,)): tip minus platform point, LOCAL_WORLD_ALIGNED."""
        pm, pd = self.pm, self.pd
        v = np.zeros(pm.nv) if v is None else v
        pin.forwardKinematics(pm, pd, q, v, np.zeros(pm.nv))
        pin.updateFramePlacements(pm, pd)
        pin.computeJointJacobians(pm, pd, q)
        J, g, r = np.zeros((18, pm.nv)), np.zeros(18), np.zeros(18)
        for i, (a, b) in enumerate(zip(self.tips, self.points)):
            J[3 * i:3 * i + 3] = (pin.getFrameJacobian(pm, pd, a, LWA)[:3] - pin.getFrameJacobian(pm, pd, b, LWA)[:3])
            g[3 * i:3 * i + 3] = (pin.getFrameClassicalAcceleration(pm, pd, a, LWA).linear
                                  - pin.getFrameClassicalAcceleration(pm, pd, b, LWA).linear)
            r[3 * i:3 * i + 3] = pd.oMf[a].translation - pd.oMf[b].translation
        return J, g, r

    def full_state(self, legq, pose, twist, accel):
        """Full (q, v, a) of the tree with the platform moving as (pose, twist, accel) (base coordinates,
        classical acceleration) and the legs following it (constraint velocity and acceleration solved)."""
        q = self.q_full(legq, pose)
        R = quat_R(pose[3:])
        v = np.zeros(self.pm.nv)
        vl, wl = R.T @ twist[:3], R.T @ twist[3:]
        v[self.ff_v:self.ff_v + 6] = np.r_[vl, wl]
        J, _, _ = self.constraint(q)
        L, F = J[:, :18], J[:, self.ff_v:self.ff_v + 6]
        v[:18] = np.linalg.solve(L, -F @ v[self.ff_v:])
        a = np.zeros(self.pm.nv)
        a[self.ff_v:] = np.r_[R.T @ accel[:3] - np.cross(wl, vl), R.T @ accel[3:]]
        J, g, _ = self.constraint(q, v)
        a[:18] = np.linalg.solve(L, -F @ a[self.ff_v:] - g)
        return q, v, a

    def Mh(self, q, v):
        M = pin.crba(self.pm, self.pd, q)
        M = np.triu(M) + np.triu(M, 1).T
        return M, pin.nonLinearEffects(self.pm, self.pd, q, v)

    # ------------------------------------------------------------------ dynamics
    def inverse(self, q, v, a, f_ext=None):
        """Actuator forces (6,) by the KKT inverse dynamics; f_ext [f; n] on the platform (base coordinates,
        about its origin)."""
        M, h = self.Mh(q, v)
        if f_ext is not None:
            pin.computeJointJacobians(self.pm, self.pd, q)
            Jp = pin.getJointJacobian(self.pm, self.pd, self.pm.njoints - 1, LWA)
            h = h - Jp.T @ np.asarray(f_ext, float)
        J, _, _ = self.constraint(q, v)
        S = np.zeros((self.pm.nv, 6))
        S[self.act, range(6)] = 1.0
        x = np.linalg.solve(np.hstack([S, J.T]), M @ a + h)
        return x[:6]

    def forward(self, q, v, tau):
        """Full accelerations (24,) under actuator forces tau, by the KKT forward dynamics."""
        M, h = self.Mh(q, v)
        J, g, _ = self.constraint(q, v)
        rhs = -h
        rhs[self.act] += tau
        K = np.block([[M, J.T], [J, np.zeros((18, 18))]])
        return np.linalg.solve(K, np.r_[rhs, -g])[:self.pm.nv]

    def platform_accel(self, pose, v, a):
        """Classical platform acceleration [pdd; dw] (base coordinates) from the free-flyer's v and a."""
        R = quat_R(pose[3:])
        vl, wl = v[self.ff_v:self.ff_v + 3], v[self.ff_v + 3:self.ff_v + 6]
        al, dwl = a[self.ff_v:self.ff_v + 3], a[self.ff_v + 3:self.ff_v + 6]
        return np.r_[R @ (al + np.cross(wl, vl)), R @ dwl]

    def actuator_map(self, q):
        """G (24, 6): full velocities per unit actuator velocity (constraints held)."""
        J, _, _ = self.constraint(q)
        S = np.zeros((6, self.pm.nv))
        S[range(6), self.act] = 1.0
        return np.linalg.solve(np.vstack([J, S]), np.vstack([np.zeros((18, 6)), np.eye(6)]))

    def energy(self, q, v):
        return pin.computeKineticEnergy(self.pm, self.pd, q, v) + pin.computePotentialEnergy(self.pm, self.pd, q)
