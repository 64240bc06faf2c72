"""A tree in modified DH (Khalil's antecedent a(j), gamma and b) equals the same tree written as a URDF."""
import numpy as np

import rne_control as rc
from rne_control.model.spatial import rot_x, rot_z
from oracle import rel_err

# links: (parent index, gamma, b, alpha, d, theta, r, joint, mass, com)
LINKS = [
    (0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.40, "revolute", 5.0, [0.0, 0.0, -0.2]),       # torso
    (1, 0.3, 0.10, -np.pi / 2, 0.25, 0.2, 0.05, "revolute", 2.0, [0.15, 0.0, 0.0]),  # left shoulder
    (2, 0.0, 0.0, np.pi / 2, 0.30, 0.0, 0.0, "prismatic", 1.5, [0.0, 0.1, 0.0]),    # left slide
    (1, -0.3, 0.10, np.pi / 2, 0.25, -0.2, 0.05, "revolute", 2.0, [0.15, 0.0, 0.0]),  # right shoulder (a branch)
    (4, 0.0, 0.0, -np.pi / 2, 0.30, 0.1, 0.0, "revolute", 1.0, [0.1, 0.0, 0.02]),   # right elbow
]
INERTIA = {"ixx": 0.02, "iyy": 0.03, "izz": 0.025, "ixy": 0.001, "ixz": -0.002, "iyz": 0.0015}


def mdh_doc():
    links = []
    for j, (a, g, b, al, d, th, r, kind, m, c) in enumerate(LINKS, start=1):
        links.append({"parent": a, "gamma": g, "b": b, "alpha": al, "d": d, "theta": th, "r": r, "joint": kind,
                      "mass": m, "com": c, "inertia": dict(INERTIA), "name": f"L{j}", "joint_name": f"J{j}"})
    return {"name": "tree", "convention": "modified", "links": links}


def rpy(R):
    return np.arctan2(R[2, 1], R[2, 2]), np.arcsin(-R[2, 0]), np.arctan2(R[1, 0], R[0, 0])


def urdf():
    names = ["base"] + [f"L{j}" for j in range(1, len(LINKS) + 1)]
    parts = ['<robot name="tree"><link name="base"/>']
    for j, (a, g, b, al, d, th, r, kind, m, c) in enumerate(LINKS, start=1):
        # joint frame in the antecedent's frame: Rz(gamma) Tz(b) Rx(alpha) Tx(d) Rz(theta) Tz(r)
        R = rot_z(g) @ rot_x(al) @ rot_z(th)
        p = np.array([0, 0, b]) + rot_z(g) @ rot_x(al) @ np.array([d, 0, 0]) + R @ np.array([0, 0, r])
        parts.append(
            f'<joint name="J{j}" type="{kind}"><parent link="{names[a]}"/><child link="L{j}"/>'
            f'<origin xyz="{float(p[0])!r} {float(p[1])!r} {float(p[2])!r}" rpy="{" ".join(repr(float(x)) for x in rpy(R))}"/>'
            f'<axis xyz="0 0 1"/><limit effort="100" velocity="1" lower="-2" upper="2"/></joint>'
            f'<link name="L{j}"><inertial><origin xyz="{c[0]} {c[1]} {c[2]}"/><mass value="{m}"/>'
            f'<inertia ixx="{INERTIA["ixx"]}" iyy="{INERTIA["iyy"]}" izz="{INERTIA["izz"]}" ixy="{INERTIA["ixy"]}" '
            f'ixz="{INERTIA["ixz"]}" iyz="{INERTIA["iyz"]}"/></inertial></link>')
    parts.append("</robot>")
    return "".join(parts)


def test_mdh_tree_equals_urdf():
    a, b = rc.load_dh(mdh_doc()), rc.load_urdf(urdf())
    assert a.joint_names == b.joint_names == tuple(f"J{j}" for j in range(1, 6))
    rng = np.random.default_rng(2)
    for _ in range(10):
        q, qd, qdd = rng.uniform(-1, 1, (3, 5))
        assert rel_err(rc.inverse_dynamics(a, q, qd, qdd), rc.inverse_dynamics(b, q, qd, qdd)) < 1e-12
        assert rel_err(rc.mass_matrix(a, q), rc.mass_matrix(b, q)) < 1e-12
        w = rng.normal(size=6)
        assert rel_err(rc.inverse_dynamics(a, q, qd, qdd, f_ext={"L5": w}),
                       rc.inverse_dynamics(b, q, qd, qdd, f_ext={"L5": w})) < 1e-12
    # the two branches do not couple through inertia: M[left, right] = 0
    H = rc.mass_matrix(a, rng.uniform(-1, 1, 5))
    assert np.all(H[np.ix_([1, 2], [3, 4])] == 0.0)
