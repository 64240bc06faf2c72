"""Series-elastic drives of URDF joints (load_urdf's elastic ``rotor_inertia``, model/series.py): the URDF
joint J split into the rigid gear output J and the elastic ``<J>_deflection``.

Truths: config/arm7_elastic.yaml, the same drives written by hand in modified DH (two links per drive),
against urdf/arm7.urdf with every joint given that file's stiffness, damping and rotor inertia; the rigid
RNE of the unsplit URDF at the link-side coordinates (the tree identity of a massless gear body); the
rigid arm7 plus the rotor inertia for ``ignore_elasticity``.
"""
import copy
import warnings

import numpy as np
import pytest
import yaml

import rne_control as rc
from oracle import ROOT, erd
from rne_control.model import PRISMATIC, REVOLUTE
from rne_control.model.series import deflection_name, gear_name
from rne_control.ros import model_params

ARM7_URDF = ROOT / "urdf/arm7.urdf"
ARM7_ELASTIC = ROOT / "config/arm7_elastic.yaml"
JOINTS = [f"arm7_joint{i}" for i in range(1, 8)]
EXTRA = {"rotor_inertia": 0.05, "viscous": 0.4, "coulomb": 0.7}   # joint_dynamics on top of the drives
TOL = 1e-9


def drives(doc):
    """{J: {stiffness, rest_position, damping, rotor_inertia}} from arm7_elastic.yaml's gear and deflection links."""
    out = {}
    for e in doc["links"]:
        if "elastic" in e:
            out.setdefault(e["joint_name"].removesuffix("_deflection"), {}).update(e["elastic"])
        elif e["joint"] != "fixed":
            out.setdefault(e["joint_name"], {})["rotor_inertia"] = e["rotor_inertia"]
    return out


def hand_built(extra=False, joints=None, locked=None):
    """arm7_elastic.yaml, with EXTRA's rotor inertia and friction added on the gear outputs; a locked drive
    (``joints`` without it) loses its spring (the DH loader refuses a locked elastic joint)."""
    doc = yaml.safe_load(open(ARM7_ELASTIC))
    for e in doc["links"]:
        if extra and e["joint_name"] in JOINTS:
            e["rotor_inertia"] += EXTRA["rotor_inertia"]
            e["viscous"], e["coulomb"] = EXTRA["viscous"], EXTRA["coulomb"]
        if joints is not None and e["joint_name"] not in joints:
            e.pop("elastic", None)
    return rc.load_dh(doc, joints=joints, locked=locked)


def split(extra=False, **kw):
    jd = {j: dict(EXTRA) for j in JOINTS} if extra else None
    return rc.load_urdf(ARM7_URDF, elastic=drives(yaml.safe_load(open(ARM7_ELASTIC))), joint_dynamics=jd, **kw)


def states(model, count=5, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield (rng.uniform(-1.5, 1.5, model.n), rng.normal(size=model.n), rng.normal(size=model.n),
               rng.normal(size=len(model.rigid_index)) * 20)


def assert_same_dynamics(a, b, count=5):
    """Every elastic and tree function of models ``a`` and ``b`` (the same joint names) agree to TOL."""
    assert a.joint_names == b.joint_names and a.rigid_joint_names == b.rigid_joint_names
    assert a.elastic_joint_names == b.elastic_joint_names
    for name in ("elastic_stiffness", "elastic_rest_position", "elastic_damping", "effort_limits", "velocity_limits",
                 "position_limits"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    worst = {}
    for q, qd, qdd, tau_r in states(a, count):
        qdd_r = qdd[a.rigid_index]
        for fr in (True, False):
            got = {}
            for m in (a, b):
                tau, qdd_u = rc.elastic_inverse_dynamics(m, q, qd, qdd_r, friction=fr)
                got.setdefault("elastic inverse dynamics", []).append(np.r_[tau, qdd_u])
                got.setdefault("elastic forward dynamics", []).append(rc.elastic_forward_dynamics(m, q, qd, tau_r,
                                                                                                  friction=fr))
                got.setdefault("elastic gravity", []).append(rc.elastic_gravity_torques(m, q))
                got.setdefault("elastic Coriolis", []).append(rc.elastic_coriolis_torques(m, q, qd))
                got.setdefault("inverse dynamics", []).append(rc.inverse_dynamics(m, q, qd, qdd, friction=fr))
                got.setdefault("mass matrix", []).append(rc.mass_matrix(m, q))
            for what, (x, y) in got.items():
                assert np.all(np.isfinite(x)) and np.abs(y).max() > 0, what
                worst[what] = max(worst.get(what, 0.0), float(np.abs(x - y).max()))
    assert max(worst.values()) <= TOL, worst
    return worst


@pytest.mark.parametrize("extra", [False, True], ids=["drives", "drives+joint_dynamics"])
def test_the_split_equals_arm7_elastic_written_by_hand(extra):
    m, h = split(extra), hand_built(extra)
    assert m.joint_names == h.joint_names == tuple(j for J in JOINTS for j in (J, deflection_name(J)))
    assert m.rigid_joint_names == tuple(JOINTS)
    assert m.elastic_joint_names == tuple(map(deflection_name, JOINTS))
    assert [gear_name(j) for j in JOINTS] == [ln for ln in m.link_names if ln.endswith("_gear")]
    rotor = np.asarray(m.tree)[:, 12]
    np.testing.assert_allclose(rotor, np.asarray(h.tree)[:, 12], rtol=0, atol=1e-15)
    worst = assert_same_dynamics(m, h)
    print("\nsplit arm7.urdf - arm7_elastic.yaml: " + ", ".join(f"{k} {v:.1e}" for k, v in worst.items()))
    # the URDF joint's limits stay on the gear output; the deflection has none
    urdf = rc.load_urdf(ARM7_URDF)
    r, e = m.rigid_index, m.elastic_index
    np.testing.assert_array_equal(m.effort_limits[r], urdf.effort_limits)
    np.testing.assert_array_equal(m.position_limits[r], urdf.position_limits)
    assert np.all(np.isinf(m.effort_limits[e])) and np.all(np.isinf(m.position_limits[e]))


def test_joints_kept_and_locked():
    """``joints``: a kept drive keeps its deflection (right after it, or where ``joints`` puts it); a locked
    drive's deflection is locked too (at 0, or at its ``locked`` value)."""
    m = split(joints=["arm7_joint4", "arm7_joint2"], locked={"arm7_joint1": 0.3, "arm7_joint6": 1.1})
    assert m.joint_names == ("arm7_joint4", "arm7_joint4_deflection", "arm7_joint2", "arm7_joint2_deflection")
    h = hand_built(joints=list(m.joint_names), locked={"arm7_joint1": 0.3, "arm7_joint6": 1.1})
    assert_same_dynamics(m, h)
    locked = {"arm7_joint1": 0.3, "arm7_joint1_deflection": -0.02, "arm7_joint6": 1.1}
    m = split(joints=["arm7_joint2_deflection", "arm7_joint2", "arm7_joint4"], locked=locked)
    assert m.joint_names == ("arm7_joint2_deflection", "arm7_joint2", "arm7_joint4", "arm7_joint4_deflection")
    assert_same_dynamics(m, hand_built(joints=list(m.joint_names), locked=locked))
    # the deflection of a locked gear output kept: a spring between a locked motor and the link
    m = split(joints=["arm7_joint3_deflection"], locked={"arm7_joint3": 0.4})
    assert m.rigid_joint_names == () and m.elastic_joint_names == ("arm7_joint3_deflection",)


def test_no_rotor_inertia_no_split():
    """Without ``rotor_inertia`` the joint is today's passive spring; both kinds in one map."""
    m = rc.load_urdf(ARM7_URDF, elastic={"arm7_joint2": {"stiffness": 5e3}, "arm7_joint4": {"stiffness": 5e3,
                                                                                            "rotor_inertia": 0.0}})
    assert m.joint_names == ("arm7_joint1", "arm7_joint2", "arm7_joint3", "arm7_joint4", "arm7_joint4_deflection",
                             "arm7_joint5", "arm7_joint6", "arm7_joint7")
    assert m.elastic_joint_names == ("arm7_joint2", "arm7_joint4_deflection")
    assert "arm7_joint2_gear" not in m.link_names and "arm7_joint4_gear" in m.link_names


def link_side(model, urdf, q, qd, qdd, Ia):
    """The split model's tree torques from the unsplit URDF: the link sees J + deflection, the gear output
    also carries its rotor, Ia (qdd_J) (a massless gear body on the same axis)."""
    idx = {j: k for k, j in enumerate(model.joint_names)}
    Q, QD, QDD = (np.array([x[idx[j]] + x[idx[deflection_name(j)]] if deflection_name(j) in idx else x[idx[j]]
                            for j in urdf.joint_names]) for x in (q, qd, qdd))
    t = rc.inverse_dynamics(urdf, Q, QD, QDD, friction=False)
    out = np.zeros(model.n)
    for k, j in enumerate(urdf.joint_names):
        out[idx[j]] = t[k] + Ia.get(j, 0.0) * qdd[idx[j]]
        if deflection_name(j) in idx:
            out[idx[deflection_name(j)]] = t[k]
    return out


@pytest.mark.parametrize("path,joints,series", [
    ("pr2_description/urdf/pr2.urdf", ["torso_lift_joint", "r_shoulder_pan_joint", "r_shoulder_lift_joint",
                                       "r_elbow_flex_joint", "l_shoulder_lift_joint", "head_pan_joint"],
     {"torso_lift_joint": 12.0, "r_shoulder_lift_joint": 0.4, "head_pan_joint": 0.0}),
    ("ur_description/urdf/ur5_robot.urdf", None, {"shoulder_lift_joint": 0.3, "wrist_3_joint": 0.02}),
], ids=["pr2 (prismatic torso, branches)", "ur5"])
def test_the_split_moves_the_link_by_gear_plus_deflection(path, joints, series):
    """A prismatic and revolute drives in published descriptions: the split's rigid-tree torques equal the
    unsplit URDF's at the link-side coordinates (J + deflection), the rotor's Ia qdd_J on the gear output."""
    el = {j: {"stiffness": 1e3, "damping": 1.0, "rotor_inertia": Ia} for j, Ia in series.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # pr2's inertias set right
        m = rc.load_urdf(erd(path), joints=joints, elastic=el, friction=False)
        urdf = rc.load_urdf(erd(path), joints=joints, friction=False)
    types = {j: ("prismatic" if j == "torso_lift_joint" else "revolute") for j in series}
    for j in series:
        k = m.joint_names.index(j)
        assert m.joint_names[k + 1] == deflection_name(j)
        body = int(np.flatnonzero(np.asarray(m.tree)[:, 17].astype(int) == k + 1)[0])
        assert np.asarray(m.tree)[body, 16] == (PRISMATIC if types[j] == "prismatic" else REVOLUTE)
    rng = np.random.default_rng(4)
    for _ in range(4):
        q, qd, qdd = rng.uniform(-0.5, 0.5, m.n), rng.normal(size=m.n), rng.normal(size=m.n)
        want = link_side(m, urdf, q, qd, qdd, series)
        got = rc.inverse_dynamics(m, q, qd, qdd, friction=False)
        assert np.abs(got - want).max() <= TOL * max(1.0, np.abs(want).max()), np.abs(got - want).max()


def test_reloading_from_source_gives_the_same_model():
    m = split(True, joints=["arm7_joint2", "arm7_joint5"], locked={"arm7_joint3": 0.2})
    kind, src, opts = m.source
    again = rc.load_urdf(src, **opts)
    assert kind == "urdf" and again.joint_names == m.joint_names and again.link_names == m.link_names
    np.testing.assert_array_equal(np.asarray(again.tree), np.asarray(m.tree))
    np.testing.assert_array_equal(again.kernel_array(), m.kernel_array())


def test_ignore_elasticity_keeps_the_rotor():
    """The rigid model of the drives is the URDF joint with its rotor inertia (= arm7.yaml plus the rotor,
    by hand), a passive spring beside them is locked at its rest position as before."""
    doc = yaml.safe_load(open(ARM7_ELASTIC))
    el = drives(doc)
    el["arm7_joint6"] = {"stiffness": 800.0, "rest_position": 0.4}         # a passive spring
    rigid = model_params.load(str(ARM7_URDF), el, True)
    assert rigid.joint_names == ("arm7_joint1", "arm7_joint2", "arm7_joint3", "arm7_joint4", "arm7_joint5",
                                 "arm7_joint7") and rigid.elastic_joint_names == ()
    assert not any(ln.endswith("_gear") for ln in rigid.link_names)
    arm7 = yaml.safe_load(open(ROOT / "config/arm7.yaml"))
    for e in arm7["links"]:
        if e["joint_name"] in el and "rotor_inertia" in el[e["joint_name"]]:
            e["rotor_inertia"] = el[e["joint_name"]]["rotor_inertia"]
    truth = rc.load_dh(arm7, joints=list(rigid.joint_names), locked={"arm7_joint6": 0.4})
    rng = np.random.default_rng(2)
    for _ in range(4):
        q, qd, qdd = (rng.normal(size=6) for _ in range(3))
        np.testing.assert_allclose(rc.inverse_dynamics(rigid, q, qd, qdd), rc.inverse_dynamics(truth, q, qd, qdd),
                                   rtol=0, atol=TOL)
    # a drive's rest position has no place in the rigid model: said, not hidden
    el["arm7_joint2"]["rest_position"] = 0.01
    said = []
    model_params.load(str(ARM7_URDF), el, True, warn=said.append)
    assert len(said) == 1 and "arm7_joint2" in said[0] and "rest position" in said[0], said


def urdf_text():
    return ARM7_URDF.read_text()


@pytest.mark.parametrize("elastic,edit,words", [
    ({"arm7_joint2": {"stiffness": 1e3, "rotor_inertia": -0.1}}, None, ["arm7_joint2", "rotor_inertia", ">= 0"]),
    ({"arm7_joint2": {"stiffness": 1e3, "rotor_inertia": float("nan")}}, None, ["arm7_joint2", "rotor_inertia",
                                                                                "finite"]),
    ({"arm7_joint2": {"stiffness": 1e3, "rotor_inertia": "heavy"}}, None, ["arm7_joint2", "rotor_inertia", "number"]),
    ({"arm7_joint2": {"stiffness": 1e3, "rotor_inertia": None}}, None, ["arm7_joint2", "rotor_inertia", "number"]),
    ({"arm7_joint2": {"rotor_inertia": 0.3}}, None, ["arm7_joint2", "stiffness"]),
    ({"arm7_joint2": {"stiffness": -1.0, "rotor_inertia": 0.3}}, None, ["arm7_joint2", "stiffness", ">= 0"]),
    ({"arm7_joint2": {"stiffness": 1e3, "rotor_inertia": 0.3, "gear_ratio": 100}}, None,
     ["arm7_joint2", "gear_ratio", "rotor_inertia"]),
    ({"arm7_joint9": {"stiffness": 1e3, "rotor_inertia": 0.3}}, None, ["arm7_joint9", "does not exist or is fixed"]),
    ({"arm7_flange_joint": {"stiffness": 1e3, "rotor_inertia": 0.3}}, None, ["arm7_flange_joint", "fixed"]),
    ({"arm7_joint2": {"stiffness": 1e3, "rotor_inertia": 0.3}, "arm7_joint2_deflection": {"stiffness": 5.0}}, None,
     ["arm7_joint2_deflection", "spring of the series-elastic drive 'arm7_joint2'"]),
    ({"arm7_joint2": {"stiffness": 1e3, "rotor_inertia": 0.3}}, ('name="arm7_link7"', 'name="arm7_joint2_gear"'),
     ["link named 'arm7_joint2_gear'", "already has"]),
    ({"arm7_joint2": {"stiffness": 1e3, "rotor_inertia": 0.3}},
     ('joint name="arm7_flange_joint"', 'joint name="arm7_joint2_deflection"'),
     ["joint named 'arm7_joint2_deflection'", "already has"]),
])
def test_bad_series_drives(elastic, edit, words):
    xml = urdf_text()
    if edit:
        assert edit[0] in xml
        xml = xml.replace(*edit)
        if "arm7_link7" in edit[0]:
            xml = xml.replace('link="arm7_link7"', 'link="arm7_joint2_gear"')
    with pytest.raises(rc.ModelError) as exc:
        rc.load_urdf(xml, elastic=elastic)
    for w in words:
        assert w in str(exc.value), (w, str(exc.value))


def test_a_mimic_joint_is_no_drive():
    with pytest.raises(rc.ModelError, match="'panda_finger_joint2' is a <mimic> joint: it cannot be a series-elastic"):
        rc.load_urdf(erd("panda_description/urdf/panda.urdf"),
                     elastic={"panda_finger_joint2": {"stiffness": 1e3, "rotor_inertia": 0.1}})


def test_dh_files_write_the_drive_as_two_links():
    doc = yaml.safe_load(open(ROOT / "config/arm7.yaml"))
    doc["links"][1]["elastic"] = {"stiffness": 1e3, "rotor_inertia": 0.3}
    with pytest.raises(rc.ModelError) as exc:
        rc.load_dh(copy.deepcopy(doc))
    for w in ("links[1]", "'rotor_inertia' in 'elastic'", "two links", "config/arm7_elastic.yaml"):
        assert w in str(exc.value), (w, str(exc.value))
    with pytest.raises(ValueError, match="elastic.<joint>.* parameters apply to URDF models"):
        model_params.load(str(ROOT / "config/arm7.yaml"), {"arm7_joint2": {"stiffness": 1e3, "rotor_inertia": 0.3}},
                          False)
