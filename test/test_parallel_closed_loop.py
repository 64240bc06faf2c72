"""Eq. (66) against the closed-loop machinery (issue 7): the same Gough-Stewart platform as a closed-loop
tree, the platform hung on leg 1's piston by a spherical joint (three revolutes) and the other five
spherical joints cut. Both give the actuator forces from (q, qd, qdd) in actuator coordinates."""
from pathlib import Path

import numpy as np
import pytest
import yaml

import rne_control as rc
from rne_control.model.loops import CutJoint
from rne_control.model.build import Link, build_model
from rne_control.model.spatial import transform

ROOT = Path(__file__).parents[1]
SHIPPED = yaml.safe_load(open(ROOT / "config" / "gough_stewart.yaml"))


def rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def quat_R(quat):
    x, y, z, w = np.asarray(quat) / np.linalg.norm(quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def reference_frame(a1):
    """The issue's universal-joint reference: x0 = u_axis, z0 = base z made perpendicular, y0 = z0 x x0."""
    up = np.array([0.0, 0.0, 1.0]) if abs(a1[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    z0 = up - (up @ a1) * a1
    z0 /= np.linalg.norm(z0)
    return np.column_stack([a1, np.cross(z0, a1), z0])


def closed_loop_platform(spec):
    legs = [{**spec.get("leg_defaults", {}), **lg} for lg in spec["legs"]]
    links, cuts, actuated = [Link("base")], [], {}
    for i, lg in enumerate(legs):
        A = np.asarray(lg["base_point"], float)
        a1 = np.asarray(lg.get("u_axis", (-A[1], A[0], 0.0)), float)
        R0 = reference_frame(a1 / np.linalg.norm(a1))
        cyl, pis = lg["cylinder"], lg["piston"]
        Ic = np.diag([cyl["inertia"]["transverse"]] * 2 + [cyl["inertia"]["axial"]])
        Ip = np.diag([pis["inertia"]["transverse"]] * 2 + [pis["inertia"]["axial"]])
        links += [Link(f"cross{i}", "base", f"u1_{i}", "revolute", transform(R0, A), axis=(1.0, 0.0, 0.0)),
                  Link(f"cyl{i}", f"cross{i}", f"u2_{i}", "revolute", axis=(0.0, 1.0, 0.0),
                       inertial=(cyl["mass"], (0.0, 0.0, cyl["com"]), Ic)),
                  Link(f"pis{i}", f"cyl{i}", lg["joint_name"], "prismatic", axis=(0.0, 0.0, 1.0),
                       inertial=(pis["mass"], (0.0, 0.0, -pis["com"]), Ip))]
        actuated[f"u1_{i}"] = actuated[f"u2_{i}"] = False
    plat, I = spec["platform"], spec["platform"]["inertia"]
    Ipl = np.array([[I["ixx"], I.get("ixy", 0.0), I.get("ixz", 0.0)], [I.get("ixy", 0.0), I["iyy"], I.get("iyz", 0.0)],
                    [I.get("ixz", 0.0), I.get("iyz", 0.0), I["izz"]]], float)
    links += [Link("s1", "pis0", "s_z", "revolute", axis=(0.0, 0.0, 1.0)),
              Link("s2", "s1", "s_y", "revolute", axis=(0.0, 1.0, 0.0)),
              Link("s3", "s2", "s_x", "revolute", axis=(1.0, 0.0, 0.0)),
              Link("platform", "s3", None, "fixed", transform(p=-np.asarray(legs[0]["platform_point"], float)),
                   inertial=(plat["mass"], np.asarray(plat.get("com", [0, 0, 0]), float), Ipl))]
    actuated.update(s_z=False, s_y=False, s_x=False)
    for i, lg in enumerate(legs[1:], start=1):
        cuts.append(CutJoint(f"sphere{i + 1}", "spherical", f"pis{i}", np.eye(4), "platform",
                             transform(p=np.asarray(lg["platform_point"], float))))
    return build_model("gough_stewart_loop", links, gravity=spec.get("gravity"), actuated=actuated,
                       cut_joints=cuts)


def tree_guess(model, pose):
    """The closed tree configuration at a pose: legs from the inverse kinematics, the spherical joint's
    Z-Y-X angles from R_piston1^T R."""
    _, legq = rc.platform_inverse_kinematics(model, pose, leg_joints=True)
    RL = reference_frame(model.u_axes[0]) @ rx(legq[0, 0]) @ ry(legq[0, 1])
    M = RL.T @ quat_R(pose[3:])
    return np.r_[legq.reshape(-1), np.arctan2(M[1, 0], M[0, 0]), -np.arcsin(M[2, 0]), np.arctan2(M[2, 1], M[2, 2])]


@pytest.mark.parametrize("tilted_gravity", [False, True])
def test_eq66_equals_the_closed_loop_inverse_dynamics(tilted_gravity):
    spec = yaml.safe_load(yaml.safe_dump(SHIPPED))
    if tilted_gravity:  # and leg bodies that differ, so nothing cancels by symmetry
        spec["gravity"] = [0.5, -0.2, -9.6]
        spec["legs"][2]["cylinder"] = {"mass": 60.0, "com": 0.9, "inertia": {"axial": 0.4, "transverse": 20.0}}
        spec["legs"][4]["u_axis"] = [0.2, 1.0, 0.3]
    pm, cm = rc.load_parallel(spec), closed_loop_platform(spec)
    assert cm.active_joint_names == pm.joint_names
    rng = np.random.default_rng(4)
    for _ in range(3):
        axis, ang = rng.normal(size=3), rng.uniform(-0.15, 0.15)
        pose = np.r_[rng.uniform(-0.2, 0.2, 2), 2.0 + rng.uniform(-0.2, 0.2),
                     np.sin(ang / 2) * axis / np.linalg.norm(axis), np.cos(ang / 2)]
        q = rc.platform_inverse_kinematics(pm, pose)
        qd, qdd = rng.uniform(-0.3, 0.3, 6), rng.uniform(-1.0, 1.0, 6)
        ref = rc.closed_loop_inverse_dynamics(cm, q, qd, qdd, tree_guess(pm, pose), friction=False)
        tau = rc.parallel_joint_inverse_dynamics(pm, q, qd, qdd, pose_guess=pose, friction=False)
        assert np.max(np.abs(tau - ref)) <= 1e-9 * np.max(np.abs(ref)), (tau, ref)
