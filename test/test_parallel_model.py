"""rc.load_parallel: the Gough-Stewart model file (merging, defaults, attributes) and bad files."""
import copy
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

import rne_control as rc

ROOT = Path(__file__).parents[1]
PATH = ROOT / "config" / "gough_stewart.yaml"
SHIPPED = yaml.safe_load(open(PATH))


def test_shipped_model_attributes():
    m = rc.load_parallel(PATH)
    assert m.name == "gough_stewart"
    assert m.joint_names == tuple(f"leg{i}" for i in range(1, 7))
    assert m.leg_names == m.joint_names
    assert m.leg_joint_names[0] == ("leg1_u1", "leg1_u2", "leg1")
    np.testing.assert_array_equal(m.position_limits, np.tile([2.5, 3.8], (6, 1)))
    np.testing.assert_array_equal(m.effort_limits, np.full(6, 20000.0))
    np.testing.assert_array_equal(m.home_pose, [0, 0, 2.0, 0, 0, 0, 1])
    np.testing.assert_array_equal(m.gravity, [0, 0, -9.81])
    # the MathWorks numbers: radii 3 and 1, +-2.5 deg and +-10 deg, top turned by 60 deg
    np.testing.assert_allclose(np.linalg.norm(m.base_points, axis=1), 3.0, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(m.platform_points, axis=1), 1.0, atol=1e-9)
    ang_b = np.degrees(np.arctan2(m.base_points[:, 1], m.base_points[:, 0])) % 360
    ang_t = np.degrees(np.arctan2(m.platform_points[:, 1], m.platform_points[:, 0])) % 360
    np.testing.assert_allclose(ang_b, [2.5, 117.5, 122.5, 237.5, 242.5, 357.5], atol=1e-7)
    np.testing.assert_allclose(ang_t, [50, 70, 170, 190, 290, 310], atol=1e-7)
    # inertias from the stated geometry and density (the arithmetic in the file's comments)
    rho, L0 = 76e3 / 9.81, np.linalg.norm([0.642787610 - 2.997144665, 0.766044443 - 0.130858162, 2.0])
    l = 0.75 * L0
    d = SHIPPED["leg_defaults"]
    assert math.isclose(SHIPPED["platform"]["mass"], rho * math.pi * 0.05, rel_tol=1e-7)
    assert math.isclose(SHIPPED["platform"]["inertia"]["izz"], rho * math.pi * 0.05 / 2, rel_tol=1e-6)
    m_tube = rho * math.pi * (0.05 ** 2 - 0.03 ** 2) * l
    assert math.isclose(d["cylinder"]["mass"], m_tube, rel_tol=1e-6)
    assert math.isclose(d["cylinder"]["inertia"]["transverse"], m_tube * (3 * 0.0034 + l * l) / 12, rel_tol=1e-5)
    m_rod = rho * math.pi * 0.03 ** 2 * l
    assert math.isclose(d["piston"]["mass"], m_rod, rel_tol=1e-6)
    assert math.isclose(d["piston"]["com"], l / 2, rel_tol=1e-6)


def test_leg_defaults_merge_and_u_axis_default():
    spec = copy.deepcopy(SHIPPED)
    spec["legs"][1]["piston"] = {"mass": 7.0, "com": 0.3, "inertia": {"axial": 0.01, "transverse": 0.2}}
    spec["legs"][4]["u_axis"] = [0.0, 0.0, 2.0]
    spec["legs"][5]["name"] = "front_right"
    m = rc.load_parallel(spec)
    assert m.leg_names[5] == "front_right" and m.joint_names[5] == "leg6"
    assert m.legs[1].dyn[2, 0] == 7.0 and m.legs[0].dyn[2, 0] == SHIPPED["leg_defaults"]["piston"]["mass"]
    A = m.base_points[0]
    np.testing.assert_allclose(m.u_axes[0], np.array([-A[1], A[0], 0]) / np.linalg.norm(A[:2]))
    np.testing.assert_allclose(m.u_axes[4], [0, 0, 1])
    # read-only
    with pytest.raises(ValueError):
        m.base_points[0, 0] = 1.0


def test_default_home_is_mid_stroke():
    spec = copy.deepcopy(SHIPPED)
    del spec["home"]
    m = rc.load_parallel(spec)
    q = rc.platform_inverse_kinematics(m, m.home_pose)
    assert abs(q.mean() - 3.15) < 1e-12 and m.home_pose[2] > 0


def _bad(mutate):
    spec = copy.deepcopy(SHIPPED)
    mutate(spec)
    return spec


@pytest.mark.parametrize("mutate, match", [
    (lambda s: s.update(colour="red"), r"unknown key.*'colour'"),
    (lambda s: s["legs"][2].update(stroke=1.0), r"legs\[2\]: unknown key.*'stroke'"),
    (lambda s: s["leg_defaults"]["cylinder"].update(length=1.0), r"leg 'leg1' cylinder: unknown key.*'length'"),
    (lambda s: s["leg_defaults"]["piston"]["inertia"].update(ixx=1.0), r"piston inertia: unknown key.*'ixx'"),
    (lambda s: s["platform"]["inertia"].update(axial=1.0), r"platform inertia: unknown key"),
    (lambda s: s["legs"].pop(), r"exactly 6 legs, got 5"),
    (lambda s: s["legs"][3].update(lower_limit=4.0), r"leg 'leg4': 'upper_limit' 3.8 must exceed 'lower_limit' 4.0"),
    (lambda s: s["legs"][1].update(joint_name="leg1"), r"duplicate .*'leg1'"),
    (lambda s: s["legs"][0].update(platform_point=[1, 2]), r"leg 'leg1': 'platform_point' must be 3 finite"),
    (lambda s: s["legs"][0].pop("base_point"), r"leg 'leg1': missing 'base_point'"),
    (lambda s: s["legs"][5].update(u_axis=[0, 0, 0]), r"leg 'leg6': 'u_axis' is zero"),
    (lambda s: s["legs"][2].update(cylinder={"mass": -1.0}), r"leg 'leg3' cylinder: 'mass' must be finite and >= 0"),
    (lambda s: s["legs"][2].update(viscous="much"), r"leg 'leg3': 'viscous' must be a number"),
    (lambda s: s["platform"].update(mass=float("nan")), r"platform: 'mass' is NaN"),
    (lambda s: s["platform"]["inertia"].update(ixx=-5.0), r"platform: inertia has a negative eigenvalue"),
    (lambda s: s["legs"][0].pop("joint_name"), r"legs\[0\]: missing 'joint_name'"),
    (lambda s: s.update(home={"position": [0, 0, 2], "rpy": [0, 0, 0]}), r"home: unknown key.*'rpy'"),
])
def test_bad_model_files(mutate, match):
    with pytest.raises(rc.ModelError, match=match):
        rc.load_parallel(_bad(mutate))


def test_bad_paths(tmp_path):
    with pytest.raises(rc.ModelError, match="cannot read"):
        rc.load_parallel(tmp_path / "missing.yaml")
    p = tmp_path / "bad.yaml"
    p.write_text("legs: [unclosed\n")
    with pytest.raises(rc.ModelError, match="not valid YAML"):
        rc.load_parallel(p)


def test_gravity_and_payload_swap():
    m = rc.load_parallel(PATH)
    q = rc.platform_inverse_kinematics(m, m.home_pose)
    g0 = rc.parallel_gravity_torques(m, q)
    m.set_payload("platform", 100.0, com=(0, 0, 0.1))
    g1 = rc.parallel_gravity_torques(m, q)
    # at the symmetric home pose a centred payload loads every leg equally: 100 g / (6 u_z)
    u_z = 2.0 / 3.153800681
    np.testing.assert_allclose(g1 - g0, 100 * 9.81 / (6 * u_z), rtol=1e-8)
    m.clear_payload()
    np.testing.assert_allclose(rc.parallel_gravity_torques(m, q), g0, rtol=0, atol=0)
    m.set_gravity([0, 0, 0])
    np.testing.assert_allclose(rc.parallel_gravity_torques(m, q), 0, atol=1e-9)
    with pytest.raises(rc.ModelError, match="only 'platform'"):
        m.set_payload("leg1", 1.0)
