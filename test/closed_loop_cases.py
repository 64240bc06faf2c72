"""Independent truths for the closed-loop tests: closed-form planar linkages, and Pinocchio KKT solves.

Nothing here calls rne_control: the closed forms are written from the linkage geometry (circle
intersections), and the Pinocchio models are built from the same numbers with its own API or from the
URDF, with the loop closed by a point constraint and the Lagrange multipliers of a KKT system built
from Pinocchio's crba, nonLinearEffects, frame Jacobians and getFrameClassicalAcceleration.
"""
from pathlib import Path

import numpy as np
import pinocchio as pin

ROOT = Path(__file__).parents[1]
G0 = 9.81

# config/fourbar.yaml
L0, L1, L2, L3 = 0.30, 0.10, 0.30, 0.25
FB_MASS = (0.157, 0.471, 0.3925)
FB_IZZ = (1.360667e-04, 3.548200e-03, 2.057354e-03)
FB_IXX = (6.541667e-06, 1.962500e-05, 1.635417e-05)
FB_IYY = (1.321417e-04, 3.536425e-03, 2.047542e-03)
FB_IA = 1.0e-4


def d1(f, x, h=2e-3):
    """First derivative, sixth-order central difference."""
    return (-f(x - 3 * h) + 9 * f(x - 2 * h) - 45 * f(x - h) + 45 * f(x + h) - 9 * f(x + 2 * h) + f(x + 3 * h)) / (60 * h)


def d2(f, x, h=2e-3):
    """Second derivative, sixth-order central difference."""
    return (2 * f(x - 3 * h) - 27 * f(x - 2 * h) + 270 * f(x - h) - 490 * f(x) + 270 * f(x + h) - 27 * f(x + 2 * h)
            + 2 * f(x + 3 * h)) / (180 * h * h)


# ----------------------------------------------------------------------------- four-bar, closed form
def fourbar_pose(t1):
    """Absolute angles of crank, coupler, rocker and the three COMs (x, y) of the open four-bar."""
    A = np.array([L1 * np.cos(t1), L1 * np.sin(t1)])
    O = np.array([L0, 0.0])
    d = O - A
    dist = np.hypot(*d)
    a = (L2 ** 2 - L3 ** 2 + dist ** 2) / (2 * dist)
    h = np.sqrt(L2 ** 2 - a ** 2)
    u = d / dist
    P = A + a * u + h * np.array([-u[1], u[0]])   # the pin above the line A-O
    t2 = np.arctan2(P[1] - A[1], P[0] - A[0])
    t3 = np.arctan2(P[1], P[0] - L0)
    coms = [0.5 * A, A + 0.5 * (P - A), O + 0.5 * (P - O)]
    return np.array([t1, t2, t3]), np.array(coms)


def fourbar_tree_q(t1):
    """Tree joints (joint1 crank, joint2 coupler relative to the crank, joint3 rocker)."""
    th, _ = fourbar_pose(t1)
    return np.array([th[0], th[1] - th[0], th[2]])


def fourbar_potential(t1):
    _, c = fourbar_pose(t1)
    return G0 * sum(m * ci[1] for m, ci in zip(FB_MASS, c))


def _fourbar_flat(t1):
    th, c = fourbar_pose(t1)
    return np.concatenate([th, c.ravel()])


def fourbar_closed_form(t1, qd, qdd):
    """(tau, gravity, velocity term, a) of the crank from Lagrange's equation with one coordinate:
    T = a(t1) qd^2 / 2, tau = a qdd + a'/2 qd^2 + V'."""
    y1, y2 = d1(_fourbar_flat, t1), d2(_fourbar_flat, t1)
    a, half_da = FB_IA, 0.0
    for i in range(3):
        w1, w2 = y1[i], y2[i]
        c1, c2 = y1[3 + 2 * i:5 + 2 * i], y2[3 + 2 * i:5 + 2 * i]
        a += FB_MASS[i] * (c1 @ c1) + FB_IZZ[i] * w1 * w1
        half_da += FB_MASS[i] * (c1 @ c2) + FB_IZZ[i] * w1 * w2
    grav = d1(fourbar_potential, t1)
    vel = half_da * qd * qd
    return a * qdd + vel + grav, grav, vel, a


def fourbar_energy(t1, qd):
    _, _, _, a = fourbar_closed_form(t1, qd, 0.0)
    return 0.5 * a * qd * qd + fourbar_potential(t1)


# ----------------------------------------------------------------------------- slider-crank, closed form
SC_L1, SC_L2, SC_E = 0.10, 0.35, 0.02
SC_MASS = (0.5, 1.2, 2.0)
SC_IZZ = (5e-4, 1.3e-2, 1e-3)


def slider_crank_doc(cut="prismatic"):
    """A slider-crank, its slider's prismatic joint cut (Khalil §2.2): crank (motor) -> rod -> block
    (passive revolute at the rod's end); R_k on the base with z along base x at y = e, R_(k+B) on the
    block, aligned with the base when the block does not rotate."""
    inert = [{"ixx": 0.5 * i, "iyy": 0.5 * i, "izz": i} for i in SC_IZZ]
    return {"name": "slider_crank", "convention": "modified", "gravity": [0.0, -9.81, 0.0],
            "links": [
                {"name": "crank", "joint": "revolute", "mass": SC_MASS[0], "com": [SC_L1 / 2, 0, 0], "inertia": inert[0]},
                {"name": "rod", "joint": "revolute", "parent": 1, "d": SC_L1, "actuated": False, "mass": SC_MASS[1],
                 "com": [SC_L2 / 2, 0, 0], "inertia": inert[1]},
                {"name": "block", "joint": "revolute", "parent": 2, "d": SC_L2, "actuated": False,
                 "mass": SC_MASS[2], "inertia": inert[2]}],
            "cut_joints": [{"name": "slide", "joint": cut, "parent": 0, "gamma": np.pi / 2, "alpha": np.pi / 2,
                            "d": SC_E, "closes_on": 3, "on_closes_on": {"gamma": np.pi / 2, "alpha": np.pi / 2}}]}


def _slider_flat(t1):
    s = (SC_E - SC_L1 * np.sin(t1)) / SC_L2
    phi = np.arcsin(s)
    A = SC_L1 * np.array([np.cos(t1), np.sin(t1)])
    B = A + SC_L2 * np.array([np.cos(phi), np.sin(phi)])
    return np.array([t1, phi, 0.0, *(0.5 * A), *(0.5 * (A + B)), *B])


def slider_crank_closed_form(t1, qd, qdd):
    y0, y1, y2 = _slider_flat(t1), d1(_slider_flat, t1), d2(_slider_flat, t1)
    a = half_da = 0.0
    V = lambda t: G0 * sum(m * _slider_flat(t)[4 + 2 * i] for i, m in enumerate(SC_MASS))  # noqa: E731
    for i in range(3):
        c1, c2 = y1[3 + 2 * i:5 + 2 * i], y2[3 + 2 * i:5 + 2 * i]
        a += SC_MASS[i] * (c1 @ c1) + SC_IZZ[i] * y1[i] ** 2
        half_da += SC_MASS[i] * (c1 @ c2) + SC_IZZ[i] * y1[i] * y2[i]
    tree_q = np.array([y0[0], y0[1] - y0[0], -y0[1]])
    return a * qdd + half_da * qd * qd + d1(V, t1), tree_q


# ----------------------------------------------------------------------------- Pinocchio KKT
def _inertia(m, com, ixx, iyy, izz):
    return pin.Inertia(m, np.asarray(com, float), np.diag([ixx, iyy, izz]))


def pin_fourbar():
    """The four-bar's equivalent tree with Pinocchio's own API, and its two closure points."""
    pm = pin.Model()
    pm.gravity = pin.Motion(np.array([0.0, -G0, 0.0, 0.0, 0.0, 0.0]))
    lengths = (L1, L2, L3)
    parents_and_origins = ((0, (0, 0, 0)), (1, (L1, 0, 0)), (0, (L0, 0, 0)))
    for i, (par, org) in enumerate(parents_and_origins):
        jid = pm.addJoint(par, pin.JointModelRZ(), pin.SE3(np.eye(3), np.array(org, float)), f"joint{i + 1}")
        pm.appendBodyToJoint(jid, _inertia(FB_MASS[i], [lengths[i] / 2, 0, 0], FB_IXX[i], FB_IYY[i], FB_IZZ[i]),
                             pin.SE3.Identity())
    fa = pm.addFrame(pin.Frame("coupler_end", 2, 0, pin.SE3(np.eye(3), np.array([L2, 0, 0])), pin.FrameType.OP_FRAME))
    fb = pm.addFrame(pin.Frame("rocker_end", 3, 0, pin.SE3(np.eye(3), np.array([L3, 0, 0])), pin.FrameType.OP_FRAME))
    return pm, fa, fb


def pin_palletizer():
    """urdf/palletizer.urdf as a plain tree (Pinocchio ignores <mimic> here), closed by a point
    constraint between the crank's tip and the rod's crank end: a different cut of the same loop."""
    pm = pin.buildModelFromUrdf(str(ROOT / "urdf" / "palletizer.urdf"))
    crank, rod = pm.getJointId("joint3"), pm.getJointId("rod")
    fa = pm.addFrame(pin.Frame("crank_tip", crank, 0, pin.SE3(np.eye(3), np.array([0.25, 0, 0])),
                               pin.FrameType.OP_FRAME))
    fb = pm.addFrame(pin.Frame("rod_end", rod, 0, pin.SE3(np.eye(3), np.array([-1.0, 0, 0])), pin.FrameType.OP_FRAME))
    return pm, fa, fb


def kkt_forward(pm, fa, fb, q, v, tau, armature=None):
    """qdd of the tree under generalized forces tau with the point of frame fa held on that of fb:
    [M J^T; J 0] [qdd; -lambda] = [tau - nle; -gamma], least squares (planar loops make J rank deficient).
    Returns (qdd, the closure gap, J)."""
    pd = pm.createData()
    M = pin.crba(pm, pd, q)
    M = np.triu(M) + np.triu(M, 1).T
    if armature is not None:
        M = M + np.diag(armature)
    nle = pin.nonLinearEffects(pm, pd, q, v)
    pin.forwardKinematics(pm, pd, q, v, np.zeros(pm.nv))
    pin.updateFramePlacements(pm, pd)
    pin.computeJointJacobians(pm, pd, q)
    ref = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    J = (pin.getFrameJacobian(pm, pd, fa, ref) - pin.getFrameJacobian(pm, pd, fb, ref))[:3]
    gamma = (pin.getFrameClassicalAcceleration(pm, pd, fa, ref).linear
             - pin.getFrameClassicalAcceleration(pm, pd, fb, ref).linear)
    gap = pd.oMf[fa].translation - pd.oMf[fb].translation
    nv = pm.nv
    K = np.block([[M, J.T], [J, np.zeros((3, 3))]])
    rhs = np.concatenate([tau - nle, -gamma])
    sol = np.linalg.lstsq(K, rhs, rcond=1e-13)[0]
    return sol[:nv], gap, J
