"""Bad input gets a clear ValueError that names the joint, link or field; nothing is silently accepted."""
import copy
import warnings

import numpy as np
import pytest

import rne_control as rc
from oracle import ROOT, erd
from test_closed_form import DH, URDF

UR5 = erd("ur_description/urdf/ur5_robot.urdf")


@pytest.fixture(scope="module")
def ur5():
    return rc.load_urdf(UR5)


def test_error_classes():
    assert issubclass(rc.ModelError, ValueError) and issubclass(rc.InputError, ValueError)
    assert issubclass(rc.SingularMassMatrixError, rc.InputError)


@pytest.mark.parametrize("fn,args", [
    (rc.inverse_dynamics, 3), (rc.gravity_torques, 1), (rc.coriolis_torques, 2), (rc.mass_matrix, 1),
    (rc.forward_dynamics, 3)])
def test_wrong_length(ur5, fn, args):
    good = [np.zeros(6)] * args
    for i in range(args):
        bad = list(good)
        bad[i] = np.zeros(5)
        with pytest.raises(rc.InputError, match=r"shape \(6,\)|expected 6"):
            fn(ur5, *bad)
        bad[i] = np.zeros((4, 7))
        with pytest.raises(rc.InputError):
            fn(ur5, *bad)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nonfinite_names_joint(ur5, value):
    for field, call in [("q", lambda x: rc.inverse_dynamics(ur5, x, np.zeros(6), np.zeros(6))),
                        ("qd", lambda x: rc.inverse_dynamics(ur5, np.zeros(6), x, np.zeros(6))),
                        ("qdd", lambda x: rc.inverse_dynamics(ur5, np.zeros(6), np.zeros(6), x)),
                        ("q", lambda x: rc.gravity_torques(ur5, x)),
                        ("qd", lambda x: rc.coriolis_torques(ur5, np.zeros(6), x)),
                        ("q", lambda x: rc.mass_matrix(ur5, x)),
                        ("tau", lambda x: rc.forward_dynamics(ur5, np.zeros(6), np.zeros(6), x))]:
        x = np.zeros(6)
        x[2] = value
        with pytest.raises(rc.InputError, match=f"'{field}' of joint 'elbow_joint'"):
            call(x)
    X = np.zeros((3, 6))
    X[1, 4] = value
    with pytest.raises(rc.InputError, match="wrist_2_joint.*sample 1"):
        rc.inverse_dynamics(ur5, X, np.zeros_like(X), np.zeros_like(X))


def test_other_bad_calls(ur5):
    with pytest.raises(rc.InputError, match="gravity"):
        rc.gravity_torques(ur5, np.zeros(6), gravity=[0, 0, np.nan])
    with pytest.raises(rc.InputError, match="nolink"):
        rc.inverse_dynamics(ur5, np.zeros(6), np.zeros(6), np.zeros(6), f_ext={"nolink": np.zeros(6)})
    with pytest.raises(rc.InputError, match="f_ext"):
        rc.inverse_dynamics(ur5, np.zeros(6), np.zeros(6), np.zeros(6), f_ext={"tool0": [1, 2]})
    with pytest.raises(rc.InputError, match="'q' must be an array of numbers"):
        rc.gravity_torques(ur5, ["a"] * 6)
    # lists and integer arrays are converted, not rejected
    np.testing.assert_allclose(rc.gravity_torques(ur5, [0] * 6), rc.gravity_torques(ur5, np.zeros(6)))


def test_unknown_joint_names():
    with pytest.raises(rc.ModelError, match="'nosuch'"):
        rc.load_urdf(UR5, joints=["shoulder_pan_joint", "nosuch"])
    with pytest.raises(rc.ModelError, match="'nosuch'"):
        rc.load_urdf(UR5, locked={"nosuch": 0.1})


def _urdf_with(**repl):
    text = URDF
    for old, new in repl.items():
        text = text.replace(old, new)
    return text


def test_negative_mass_names_link():
    with pytest.raises(rc.ModelError, match="link 'l2'.*negative mass"):
        rc.load_urdf(URDF.replace('<mass value="1.5"/>', '<mass value="-1.5"/>'))


def test_inertia_negative_eigenvalue_names_link():
    bad = URDF.replace('<inertia ixx="0.01" iyy="0.09" izz="0.09"', '<inertia ixx="0.01" iyy="0.09" izz="-0.09"')
    with pytest.raises(rc.ModelError, match="link 'l2'.*negative eigenvalue"):
        rc.load_urdf(bad)


def test_unknown_joint_type_names_joint():
    with pytest.raises(rc.ModelError, match="joint 'j2'.*planar"):
        rc.load_urdf(URDF.replace('name="j2" type="continuous"', 'name="j2" type="planar"'))
    doc = copy.deepcopy(DH)
    doc["links"][1]["joint"] = "spherical"
    with pytest.raises(rc.ModelError, match=r"links\[1\].*spherical"):
        rc.load_dh(doc)


def test_yaml_missing_and_misspelt_fields(tmp_path):
    doc = copy.deepcopy(DH)
    del doc["convention"]
    with pytest.raises(rc.ModelError, match="missing required field 'convention'"):
        rc.load_dh(doc)
    doc = copy.deepcopy(DH)
    del doc["links"][0]["joint"]
    with pytest.raises(rc.ModelError, match=r"links\[0\].*'joint'"):
        rc.load_dh(doc)
    doc = copy.deepcopy(DH)
    doc["links"][1]["mas"] = 2.0
    with pytest.raises(rc.ModelError, match=r"link 'link2'.*'mas'"):
        rc.load_dh(doc)
    doc = copy.deepcopy(DH)
    doc["links"][0]["inertia"]["ixxx"] = 1.0
    with pytest.raises(rc.ModelError, match="ixxx"):
        rc.load_dh(doc)
    doc = copy.deepcopy(DH)
    doc["gravty"] = [0, 0, -9.81]
    with pytest.raises(rc.ModelError, match="gravty"):
        rc.load_dh(doc)
    doc = copy.deepcopy(DH)
    doc["links"][0]["a"] = "one"
    with pytest.raises(rc.ModelError, match="'a' must be a number"):
        rc.load_dh(doc)
    with pytest.raises(rc.ModelError, match="not found"):
        rc.load_dh(tmp_path / "missing.yaml")
    (tmp_path / "bad.yaml").write_text("convention: standard\nlinks: [\n")
    with pytest.raises(rc.ModelError, match="invalid YAML"):
        rc.load_dh(tmp_path / "bad.yaml")


def test_massless_links_are_valid():
    """ur5's tool0 and panda's panda_link8 are massless: zero mass and PSD inertia load fine."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rc.load_urdf(UR5)
        rc.load_urdf(erd("panda_description/urdf/panda.urdf"))


def test_triangle_inequality_warns():
    bad = URDF.replace('<inertia ixx="0.01" iyy="0.09" izz="0.09"', '<inertia ixx="0.01" iyy="0.01" izz="0.09"')
    with pytest.warns(UserWarning, match="link 'l2'.*triangle"):
        m = rc.load_urdf(bad)
    assert m.n == 2
    with pytest.warns(UserWarning, match="triangle"):
        rc.load_dh(ROOT / "config/ffsr.yaml")
