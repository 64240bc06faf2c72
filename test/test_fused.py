"""The fused computed-torque step (rne_control/control/_fused.py): one compiled call per cycle that must
give what the composed path (set_state, the law's acceleration, inverse_dynamics) gives, take that path
for whatever it does not handle, and leave the state as it was when it rejects one."""
from pathlib import Path

import numpy as np

from rne_control.dynamics.calls import Prepared
import pytest

import rne_control as rc
from rne_control.control import ControlLaw, StateError
from rne_control.control.plant import Plant
from rne_control.control.plants import ClosedLoopPlant, ParallelPlant, TreePlant

ROOT = Path(__file__).parents[1]


@pytest.fixture()
def platform():
    return ParallelPlant(rc.load_parallel(ROOT / "config" / "gough_stewart.yaml"))


@pytest.fixture()
def palletiser():
    return ClosedLoopPlant(rc.load_dh(ROOT / "config" / "palletizer.yaml"))


def counting(plant):
    """Count the plant's calls of its fused kernel (and keep calling it; made ready first where the plant
    prepares it at its first call)."""
    kernel, calls = plant._fused, []
    kernel = kernel.make() if isinstance(kernel, Prepared) else kernel

    def wrapper(*args):
        st = kernel(*args)
        calls.append(st)
        return st
    plant._fused = wrapper
    return calls


def desired(n, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=n) * 0.3, rng.normal(size=n), rng.normal(size=n) * 2.0


def test_tree_fused_step_is_the_rne_at_the_law_acceleration():
    m = rc.load_model(str(ROOT / "urdf" / "arm7.urdf"))
    law = ControlLaw(m)
    law.set_mode("computed_torque")
    calls = counting(law.plant)
    rng = np.random.default_rng(1)
    for k, friction in enumerate((True, False)):
        law.friction = friction
        q, qd = rng.normal(size=m.n), rng.normal(size=m.n)
        q_d, qd_d, qdd_d = desired(m.n, k)
        tau = law.compute(q, qd, q_d, qd_d, qdd_d, 0.7).copy()
        qdd = qdd_d + 0.7 * (law.kd * (qd_d - qd) + law.kp * (q_d - q))
        np.testing.assert_allclose(tau, rc.inverse_dynamics(m, q, qd, qdd, friction=friction), rtol=1e-12, atol=1e-9)
        np.testing.assert_array_equal(law.plant.q, q)
        np.testing.assert_array_equal(law.plant.qd, qd)
    assert calls == [0, 0]                           # both went through the fused kernel
    m.set_gravity([0.0, 0.0, -3.7])                  # swapped into the model: the kernel reads it
    tau = law.compute(q, qd, q_d, qd_d, qdd_d).copy()
    qdd = qdd_d + law.kd * (qd_d - qd) + law.kp * (q_d - q)
    np.testing.assert_allclose(tau, rc.inverse_dynamics(m, q, qd, qdd, friction=False), rtol=1e-12, atol=1e-9)
    assert not np.allclose(tau, rc.inverse_dynamics(m, q, qd, qdd, friction=False, gravity=[0, 0, -9.81]))


def test_tree_rejected_state_is_named_and_changes_nothing():
    m = rc.load_model(str(ROOT / "urdf" / "arm7.urdf"))
    law = ControlLaw(m)
    q, qd = np.full(m.n, 0.2), np.full(m.n, -0.1)
    q_d, qd_d, qdd_d = desired(m.n, 3)
    law.compute(q, qd, q_d, qd_d, qdd_d)
    calls = counting(law.plant)
    for i in (0, 4):
        bad = q.copy()
        bad[i] = np.nan
        with pytest.raises(StateError, match="'%s' is missing" % m.joint_names[i]):
            law.compute(bad, qd, q_d, qd_d, qdd_d)
        np.testing.assert_array_equal(law.plant.q, q)
    assert calls == [-1, -5]                         # the kernel saw them first and wrote nothing
    with pytest.raises(StateError, match="state must have 7 positions"):
        law.compute(q[:5], qd[:5], q_d, qd_d, qdd_d)
    with pytest.raises(ValueError, match="one entry per controlled joint"):   # qdd_d of another length
        law.compute(q, qd, q_d, qd_d, qdd_d[:3])
    np.testing.assert_array_equal(law.plant.q, q)


@pytest.mark.parametrize("form", ["float32", "strided"])
def test_tree_other_input_forms_take_the_composed_path(form):
    from rne_control.control._fused import tree_computed_torque
    m = rc.load_model(str(ROOT / "urdf" / "arm7.urdf"))
    law = ControlLaw(m)
    rng = np.random.default_rng(5)
    q, qd = rng.normal(size=m.n), rng.normal(size=m.n)
    if form == "float32":
        q_form = q.astype(np.float32)
        q = q_form.astype(np.float64)
    else:
        wide = np.zeros((m.n, 2))
        wide[:, 0] = q
        q_form = wide[:, 0]
    q_d, qd_d, qdd_d = desired(m.n, 6)
    expected = law.compute(q, qd, q_d, qd_d, qdd_d).copy()
    with pytest.raises(TypeError):   # the premise: the kernel does not take this form
        tree_computed_torque(m._K, q_form, qd, q_d, qd_d, qdd_d, law.kp, law.kd, 1.0, 1, law.plant._plan,
                             law.plant._work, law.tau)
    calls = counting(law.plant)
    np.testing.assert_allclose(law.compute(q_form, qd, q_d, qd_d, qdd_d), expected, rtol=1e-12, atol=1e-9)
    assert calls == []               # the TypeError was the kernel's: the composed path gave the torque


def test_tree_with_a_subset_of_joints_takes_the_fused_step():
    """The uncontrolled joints (the last two, held at the measured state) take zero acceleration."""
    m = rc.load_model(str(ROOT / "urdf" / "arm7.urdf"))
    plant = TreePlant(m, joints=list(m.joint_names[:5]))
    law = ControlLaw(plant)
    calls = counting(plant)
    q, qd = np.linspace(-0.5, 0.5, m.n), np.linspace(0.3, -0.3, m.n)
    q_d, qd_d, qdd_d = desired(5, 7)
    tau = law.compute(q, qd, q_d, qd_d, qdd_d)
    qdd = np.zeros(m.n)
    qdd[:5] = qdd_d + law.kd * (qd_d - qd[:5]) + law.kp * (q_d - q[:5])
    np.testing.assert_allclose(tau, rc.inverse_dynamics(m, q, qd, qdd)[:5], rtol=1e-12, atol=1e-9)
    assert calls == [0]


def test_parallel_fused_step_equals_the_composed_path(platform):
    m = platform.model
    law = ControlLaw(platform)
    calls = counting(platform)
    pose = np.r_[0.03, -0.02, 2.04, 0.0, 0.0, np.sin(0.05), np.cos(0.05)]
    q, qd = rc.platform_inverse_kinematics(m, pose), np.linspace(-0.05, 0.05, 6)
    q_d, qd_d, qdd_d = q + 0.01, qd * 0.5, np.linspace(0.2, -0.2, 6)
    tau = law.compute(q, qd, q_d, qd_d, qdd_d, 0.5).copy()
    assert calls == [0]
    qdd = qdd_d + 0.5 * (law.kd * (qd_d - qd) + law.kp * (q_d - q))
    np.testing.assert_allclose(tau, rc.parallel_joint_inverse_dynamics(m, q, qd, qdd), rtol=1e-10, atol=1e-8)
    np.testing.assert_allclose(platform.pose, pose, atol=1e-10)
    np.testing.assert_array_equal(platform.q, q)
    np.testing.assert_array_equal(platform.qd, qd)
    composed = Plant.computed_torque(platform, q, qd, q_d, qd_d, qdd_d, law.kp, law.kd, 0.5, True, np.empty(6),
                                     np.empty(6))
    np.testing.assert_allclose(tau, composed, rtol=1e-12, atol=1e-9)


def test_parallel_rejected_state_changes_nothing(platform):
    m = platform.model
    law = ControlLaw(platform)
    q = rc.platform_inverse_kinematics(m, m.home_pose)
    q_d, qd_d, qdd_d = desired(6, 9)
    law.compute(q, np.zeros(6), q_d, qd_d, qdd_d)
    before = [np.array(x) for x in (platform.q, platform.qd, platform.pose)]
    calls = counting(platform)
    for _ in range(3):   # more than once: the spare buffers must not take the state's place
        with pytest.raises(StateError, match="no platform pose fits"):
            law.compute([3.0, 3.0, 3.0, 8.0, 8.0, 8.0] * np.ones(6), np.zeros(6), q_d, qd_d, qdd_d)
    bad = q.copy()
    bad[3] = np.inf
    with pytest.raises(StateError, match="leg 'leg4' is missing"):
        law.compute(bad, np.zeros(6), q_d, qd_d, qdd_d)
    assert len(calls) == 4 and all(c != 0 for c in calls)
    for b, a in zip(before, (platform.q, platform.qd, platform.pose)):
        np.testing.assert_array_equal(a, b)


def test_closed_loop_fused_step_equals_the_library(palletiser):
    m = palletiser.model
    law = ControlLaw(palletiser)
    calls = counting(palletiser)
    qa, qda = np.array([0.2, 0.25, -0.4]), np.array([0.3, -0.2, 0.5])
    q_tr = rc.solve_loops(m, qa)
    passive = [m.joint_names.index(j) for j in m.passive_joint_names]
    q_d, qd_d, qdd_d = qa + 0.02, qda * 0.5, np.array([1.0, -0.5, 0.3])
    for measured in (False, True):   # passive joints not measured (NaN), then measured on the loop
        pq = q_tr[passive] + (0.004 if measured else np.nan)
        tau = law.compute(np.r_[qa, pq], np.r_[qda, np.full(2, np.nan)], q_d, qd_d, qdd_d, 0.6).copy()
        qdd = qdd_d + 0.6 * (law.kd * (qd_d - qda) + law.kp * (q_d - qa))
        np.testing.assert_allclose(tau, rc.closed_loop_inverse_dynamics(m, qa, qda, qdd), rtol=1e-10, atol=1e-8)
        np.testing.assert_allclose(palletiser.q_tree, q_tr, atol=1e-12)
        np.testing.assert_array_equal(palletiser.q, qa)
        np.testing.assert_array_equal(palletiser.qd, qda)
    assert calls == [0, 0]


def test_closed_loop_rejected_state_changes_nothing(palletiser):
    m = palletiser.model
    law = ControlLaw(palletiser)
    qa = np.array([0.1, 0.3, -0.5])
    nan2 = np.full(2, np.nan)
    q_d, qd_d, qdd_d = desired(3, 11)
    law.compute(np.r_[qa, nan2], np.r_[np.zeros(3), nan2], q_d, qd_d, qdd_d)
    before = [np.array(x) for x in (palletiser.q_tree, palletiser.q, palletiser.qd)]
    calls = counting(palletiser)
    elbow = palletiser.q_tree[m.joint_names.index("elbow")]
    for k in range(3):   # more than once: the spare buffer must not take the state's place
        with pytest.raises(StateError, match="passive joint 'elbow'"):
            law.compute(np.r_[qa + 0.01 * k, elbow + 0.5, np.nan], np.r_[np.zeros(3), nan2], q_d, qd_d, qdd_d)
    with pytest.raises(StateError, match="active joint 'joint2' is missing"):
        law.compute(np.r_[0.1, np.nan, -0.5, nan2], np.r_[np.zeros(3), nan2], q_d, qd_d, qdd_d)
    assert len(calls) == 4 and all(c != 0 for c in calls)
    for b, a in zip(before, (palletiser.q_tree, palletiser.q, palletiser.qd)):
        np.testing.assert_array_equal(a, b)
