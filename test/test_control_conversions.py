"""JointState mapping and model_file resolution (pure Python: no ROS node involved)."""
import array
import math

import numpy as np
import pytest

from rne_control.control.joint_states import JointStateError, JointStateMapper
from rne_control.ros.conversions import STATE_FIELDS
from rne_control.ros.paths import resolve_model_file

MODEL_J = ("j1", "j2", "j3", "j4")


def test_mapping_by_name_any_order_extra_ignored_locked_kept():
    m = JointStateMapper(MODEL_J, ("j3", "j1"), initial_q=[0.0, 0.5, 0.0, -0.25])
    m.update(["x", "j3", "j1"], array.array("d", [9.0, 3.0, 1.0]), array.array("d", [9.0, 0.3, 0.1]), 1.0)
    np.testing.assert_array_equal(m.q, [1.0, 0.5, 3.0, -0.25])    # j2, j4: locked values
    np.testing.assert_array_equal(m.qd, [0.1, 0.0, 0.3, 0.0])
    m.update(["j2", "j1", "j3"], [2.0, 1.5, 3.5], [0.2, 0.15, 0.35], 1.1)   # uncontrolled j2 measured
    np.testing.assert_array_equal(m.q, [1.5, 2.0, 3.5, -0.25])


def test_an_optional_joint_takes_a_received_value_only_while_it_is_fresh():
    """j4 is solved (NaN initially: a passive or mimic joint the plant computes): its received value expires
    after the timeout, received time being the node's clock; j2, an uncontrolled joint, keeps its last
    position, at rest."""
    m = JointStateMapper(MODEL_J, ("j1", "j3"), initial_q=[0.0, 0.5, 0.0, math.nan])
    m.update(["j1", "j3", "j4", "j2"], [1.0, 3.0, 4.0, 2.0], [0.1, 0.3, 0.4, 0.2], 100.0, received=10.0)
    m.expire(10.04, 0.05)
    np.testing.assert_array_equal(m.q, [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(m.qd, [0.1, 0.2, 0.3, 0.4])
    m.update(["j1", "j3"], [1.1, 3.1], [0.1, 0.3], 100.05, received=10.05)   # the arm only
    m.expire(10.06, 0.05)
    assert math.isnan(m.q[3]) and m.qd[3] == 0.0 and m.q[1] == 2.0 and m.qd[1] == 0.0
    m.update(["j4"], [4.5], [0.0], 100.1, received=10.1)                     # published again
    m.expire(10.12, 0.05)
    assert m.q[3] == 4.5


@pytest.mark.parametrize("names, pos, vel, why", [
    (["j1", "j3"], [0.0, math.nan], [0.0, 0.0], "non-finite position"),
    (["j1", "j3"], [0.0, 0.0], [math.inf, 0.0], "non-finite velocity"),
    (["j1", "j3"], [0.0], [], "position has"),
    (["j1", "j3"], [0.0, 0.0], [0.0], "velocity has"),
    (["j1", "j3", "j1"], [0.0, 0.0, 0.0], [], "twice"),
    (["j1", "j2"], [0.0, 0.0], [0.0, 0.0], "effort has"),
    (["j2", "j1"], [0.5, math.inf], [], "position of joint 'j1'"),     # optional j2 is not applied either
])
def test_rejections_leave_the_state_untouched(names, pos, vel, why):
    m = JointStateMapper(MODEL_J, ("j1", "j3"))
    m.update(["j1", "j3"], [1.0, 3.0], [0.1, 0.3], 0.0)
    with pytest.raises(JointStateError, match=why):
        m.update(names, pos, vel, 0.1, effort=[0.0] if "effort" in why else [])
    np.testing.assert_array_equal(m.q, [1.0, 0.0, 3.0, 0.0])
    np.testing.assert_array_equal(m.qd, [0.1, 0.0, 0.3, 0.0])
    np.testing.assert_array_equal(m.last_update, [0.0, -math.inf, 0.0, -math.inf])


def test_merge_by_name_per_joint_freshness_and_what_is_not_an_error():
    m = JointStateMapper(MODEL_J, ("j1", "j3"), initial_q=[0.0, 0.5, 0.0, -0.25])
    assert m.update(["j1"], [1.0], [0.1], 1.0) == 1                     # one joint per message
    assert m.oldest_update() == -math.inf and m.stale_joints(1.0, 0.05) == ["j3"]
    assert m.update(["j3", "x"], [3.0, 7.0], [0.3, 7.0], 1.02) == 1
    np.testing.assert_array_equal(m.q, [1.0, 0.5, 3.0, -0.25])
    np.testing.assert_array_equal(m.qd, [0.1, 0.0, 0.3, 0.0])
    assert m.oldest_update() == 1.0
    # none of the needed joints: ignored (0), not an error; an optional model joint is still taken
    assert m.update(["a", "b"], [0.0, 0.0], [], 1.03) == 0
    assert m.update(["j2"], [0.7], [0.07], 1.03) == 0
    assert m.q[1] == 0.7 and m.qd[1] == 0.07
    # a NaN of an optional joint is skipped, a NaN effort does not reject
    assert m.update(["j2", "j1"], [math.nan, 1.5], [0.0, 0.2], 1.04, effort=[math.nan, math.nan]) == 1
    assert m.q[1] == 0.7 and m.q[0] == 1.5
    np.testing.assert_array_equal(m.last_update, [1.04, -math.inf, 1.02, -math.inf])
    assert m.stale_joints(1.08, 0.05) == ["j3"] and m.stale_joints(1.06, 0.05) == []


def test_velocity_estimated_per_joint_at_its_own_rate():
    """j1 at 1 kHz without velocities, j3 at 100 Hz without velocities, j2 with velocities: each joint's
    estimate converges to its own slope."""
    m = JointStateMapper(("j1", "j2", "j3"), ("j1", "j2", "j3"), velocity_cutoff_hz=20.0)
    for k in range(1000):
        t = 1e-3 * k
        m.update(["j1"], [2.0 * t], [], t)
        if k % 10 == 0:
            m.update(["j3"], [-1.0 * t], [], t)
            m.update(["j2"], [0.0], [5.0], t)
    assert m.estimating_velocity and m.estimated_joints() == ["j1", "j3"]
    np.testing.assert_allclose(m.qd, [2.0, 5.0, -1.0], rtol=1e-6)


def test_velocity_estimate_converges_to_slope():
    m = JointStateMapper(("a",), ("a",), velocity_cutoff_hz=50.0)
    dt = 0.001
    for k in range(200):
        m.update(["a"], [2.0 * k * dt], [], k * dt)
    assert m.estimating_velocity
    assert m.qd[0] == pytest.approx(2.0, rel=1e-6)


def test_measured_velocity_replaces_the_estimate():
    """A driver that starts publishing velocities: they are taken as they are, the joint is no longer
    estimated, and a joint still without velocities stays estimated."""
    m = JointStateMapper(("a", "b"), ("a", "b"), velocity_cutoff_hz=50.0)
    for k in range(50):
        m.update(["a", "b"], [1e-3 * k, 2e-3 * k], [], 1e-3 * k)
    assert m.estimated_joints() == ["a", "b"]
    m.update(["a"], [0.06], [0.7], 0.06)
    assert m.estimated_joints() == ["b"] and m.qd[0] == 0.7 and m.last_update[0] == 0.06
    m.update(["b"], [0.12], [-0.3], 0.06)
    assert not m.estimating_velocity and m.estimated_joints() == []
    np.testing.assert_array_equal(m.qd, [0.7, -0.3])


def test_state_fields_layout():
    assert len(STATE_FIELDS) == 15
    assert STATE_FIELDS[7] == "effort_command" and STATE_FIELDS[8] == "effort_law"
    assert STATE_FIELDS[9:] == ("effort_inertial", "effort_coriolis", "effort_gravity", "effort_feedback",
                                "effort_friction", "effort_base")


def test_resolve_model_file(tmp_path, monkeypatch):
    p = resolve_model_file("config/puma560.yaml")
    assert p.is_file() and p.name == "puma560.yaml"
    assert resolve_model_file(str(p)) == p                               # absolute
    assert resolve_model_file("package://rne_control/config/puma560.yaml").name == "puma560.yaml"
    monkeypatch.chdir(tmp_path)                                          # not relative to the cwd
    assert resolve_model_file("urdf/puma560.urdf").is_file()
    with pytest.raises(FileNotFoundError, match="looked in"):
        resolve_model_file("config/nope.yaml")
    with pytest.raises(FileNotFoundError):
        resolve_model_file(str(tmp_path / "missing.urdf"))
